//! Shape operations against index-by-index references on random data.

mod common;

use common::TestRng;
use gearbox_core::{Array, DType};

#[test]
fn transpose_matches_index_reference() {
    let mut rng = TestRng::new(20);
    let dims = [3, 4, 5];
    let v = rng.vec(60, -1.0, 1.0);
    let x = Array::from_vec(dims.to_vec(), v.clone()).unwrap();
    let perm = [2, 0, 1];
    let y = x.transpose(&perm).unwrap();
    assert_eq!(y.dims(), &[5, 3, 4]);
    for i in 0..3 {
        for j in 0..4 {
            for k in 0..5 {
                assert_eq!(y.get(&[k, i, j]).unwrap(), x.get(&[i, j, k]).unwrap());
            }
        }
    }
    let m = Array::from_vec([129, 3], rng.vec(387, -1.0, 1.0)).unwrap();
    let mt = m.t().unwrap();
    assert_eq!(mt.dims(), &[3, 129]);
    assert_eq!(mt.get(&[2, 100]).unwrap(), m.get(&[100, 2]).unwrap());
    assert_eq!(
        mt.t().unwrap().to_vec::<f64>().unwrap(),
        m.to_vec::<f64>().unwrap()
    );
}

#[test]
fn slicing_rows_and_columns() {
    let mut rng = TestRng::new(21);
    let v = rng.vec(7 * 6, -1.0, 1.0);
    let x = Array::from_vec([7, 6], v.clone()).unwrap();
    let r = x.rows(2..5).unwrap();
    let c = x.cols(1..3).unwrap();
    assert_eq!((r.dims(), c.dims()), (&[3, 6][..], &[7, 2][..]));
    for i in 0..3 {
        for j in 0..6 {
            assert_eq!(r.get(&[i, j]).unwrap(), v[(i + 2) + 7 * j]);
        }
    }
    for i in 0..7 {
        for j in 0..2 {
            assert_eq!(c.get(&[i, j]).unwrap(), v[i + 7 * (j + 1)]);
        }
    }
    assert_eq!(x.rows(3..3).unwrap().dims(), &[0, 6]);
}

#[test]
fn cbind_rbind_concat() {
    let a = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]]).unwrap();
    let b = Array::from_rows(&[vec![5.0], vec![6.0]]).unwrap();
    let cb = Array::cbind(&[&a, &b]).unwrap();
    assert_eq!(cb.dims(), &[2, 3]);
    assert_eq!(
        cb.to_vec::<f64>().unwrap(),
        vec![1.0, 3.0, 2.0, 4.0, 5.0, 6.0]
    );
    let row = Array::from_vec([2], vec![7.0, 8.0]).unwrap();
    let rb = Array::rbind(&[&a, &row]).unwrap();
    assert_eq!(rb.dims(), &[3, 2]);
    assert_eq!(
        rb.to_vec::<f64>().unwrap(),
        vec![1.0, 3.0, 7.0, 2.0, 4.0, 8.0]
    );
    let i = Array::from_rows(&[vec![9i64], vec![10]]).unwrap();
    let mixed = Array::cbind(&[&a, &i]).unwrap();
    assert_eq!(mixed.dtype(), DType::F64);
    assert_eq!(mixed.get(&[1, 2]).unwrap(), 10.0);
    let three = Array::concat(&[&a, &a], 2).unwrap();
    assert_eq!(three.dims(), &[2, 2, 2]);
}

#[test]
fn reshape_squeeze_astype() {
    let x = Array::from_vec([2, 1, 3], vec![1.5, -2.5, 3.7, 4.0, 0.5, -0.5]).unwrap();
    assert_eq!(x.squeeze().unwrap().dims(), &[2, 3]);
    assert_eq!(x.reshape([3, 2]).unwrap().get(&[0, 1]).unwrap(), 4.0);
    assert_eq!(
        x.astype(DType::I64).unwrap().to_vec::<i64>().unwrap(),
        vec![1, -2, 3, 4, 0, 0]
    );
    assert_eq!(
        x.astype(DType::Bool).unwrap().to_vec::<bool>().unwrap(),
        vec![true; 6]
    );
    let f = x.astype(DType::F32).unwrap();
    assert_eq!(f.to_vec::<f32>().unwrap()[2], 3.7f32);
}
