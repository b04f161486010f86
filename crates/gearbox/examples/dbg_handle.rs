use gearbox::iterative::*;
use gearbox::{Array, DType};
fn main() {
    let n = 64;
    let m = Array::randn([n, n], 31).unwrap();
    let a = ((&m + &m.t().unwrap()).unwrap() * 0.05).unwrap();
    a.eval().unwrap();
    let start = Array::ones([n, 1], DType::F64).unwrap();
    for steps in [1, 2, 3, 10] {
        let (l1, v1) = power_iteration(&a, &start, steps).unwrap();
        let (l2, v2) = power_iteration_resident(&a, &start, steps, "cpu").unwrap();
        println!("{steps}: {l1} {l2} {:?} {:?}", &v1.to_vec::<f64>().unwrap()[..2], &v2.to_vec::<f64>().unwrap()[..2]);
    }
}
