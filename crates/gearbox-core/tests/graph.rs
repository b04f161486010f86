//! Lazy-graph behaviour: laziness, evaluate-once, long chains, value semantics.

use gearbox_core::{Array, DType};

#[test]
fn long_chain_evaluates_without_stack_overflow() {
    let x = Array::from_vec([3], vec![0.5, -1.25, 2.0]).unwrap();
    let mut y = x.clone();
    for i in 0..10_000 {
        y = if i % 2 == 0 {
            y.add_scalar(1.0).unwrap()
        } else {
            y.sub_scalar(0.5).unwrap()
        };
    }
    assert!(!y.is_evaluated());
    let got = y.to_vec::<f64>().unwrap();
    let want: Vec<f64> = [0.5, -1.25, 2.0].iter().map(|v| v + 5000.0 * 0.5).collect();
    assert_eq!(got, want);
}

#[test]
fn long_unevaluated_chain_drops_without_stack_overflow() {
    let mut y = Array::from_vec([2], vec![1.0, 2.0]).unwrap();
    for _ in 0..200_000 {
        y = y.neg().unwrap();
    }
    drop(y);
}

#[test]
fn operations_are_lazy_and_evaluate_once() {
    let x = Array::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let y = x.exp().unwrap();
    assert!(!y.is_evaluated());
    y.eval().unwrap();
    assert!(y.is_evaluated());
    assert!(
        y.op().is_none(),
        "an evaluated node forgets its op and inputs"
    );
    assert!(y.inputs().is_empty());
    let a = y.to_vec::<f64>().unwrap();
    let b = y.to_vec::<f64>().unwrap();
    assert_eq!(a, b);
}

#[test]
fn set_on_a_clone_leaves_the_original() {
    let x = Array::from_vec([2, 2], vec![0.418, 2.0, 3.0, 4.0]).unwrap();
    let mut y = x.clone();
    y.set(&[0, 0], 999.0).unwrap();
    assert_eq!(x.get(&[0, 0]).unwrap(), 0.418);
    assert_eq!(y.get(&[0, 0]).unwrap(), 999.0);
    assert_eq!(y.dtype(), DType::F64);
}

#[test]
fn arrays_cross_threads() {
    let x = Array::from_vec([4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let y = x.mul_scalar(3.0).unwrap();
    let h = std::thread::spawn(move || y.to_vec::<f32>().unwrap());
    assert_eq!(h.join().unwrap(), vec![3.0, 6.0, 9.0, 12.0]);
}
