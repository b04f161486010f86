//! Property tests: broadcasting, reductions and reshapes on random shapes.

use gearbox_core::{Array, Shape};
use proptest::prelude::*;

fn dims() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..5, 0..4)
}

fn data(n: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-100.0f64..100.0, n)
}

fn array() -> impl Strategy<Value = (Vec<usize>, Vec<f64>)> {
    dims().prop_flat_map(|d| {
        let n = d.iter().product();
        (Just(d), data(n))
    })
}

proptest! {
    /// Broadcasting a shape against a copy of itself with some axes set to 1
    /// gives the original shape, in either order, and `a + b - b == a` there.
    #[test]
    fn broadcast_against_collapsed_axes((d, v) in array(), mask in prop::collection::vec(any::<bool>(), 4)) {
        let collapsed: Vec<usize> = d.iter().enumerate().map(|(i, &n)| if mask[i] { 1 } else { n }).collect();
        let sa = Shape::new(d.clone());
        let sb = Shape::new(collapsed.clone());
        prop_assert_eq!(Shape::broadcast(&sa, &sb).unwrap(), sa.clone());
        prop_assert_eq!(Shape::broadcast(&sb, &sa).unwrap(), sa.clone());
        let a = Array::from_vec(d.clone(), v.clone()).unwrap();
        let nb: usize = collapsed.iter().product();
        let b = Array::from_vec(collapsed, (0..nb).map(|i| i as f64 * 0.25 + 1.0).collect::<Vec<_>>()).unwrap();
        let back = a.add(&b).unwrap().sub(&b).unwrap().to_vec::<f64>().unwrap();
        for (x, y) in back.iter().zip(&v) {
            prop_assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0));
        }
    }

    /// Summing along every axis in turn equals the full sum.
    #[test]
    fn axis_sums_compose_to_full_sum((d, v) in array()) {
        let a = Array::from_vec(d.clone(), v.clone()).unwrap();
        let mut r = a.clone();
        for axis in 0..d.len() {
            r = r.sum_axis(axis).unwrap();
        }
        let full = a.sum().unwrap().item().unwrap();
        let want: f64 = v.iter().sum();
        prop_assert!((r.reshape(Vec::<usize>::new()).unwrap().item().unwrap() - want).abs() <= 1e-9);
        prop_assert!((full - want).abs() <= 1e-9);
    }

    /// Reshape keeps column-major order; reshaping back is the identity.
    #[test]
    fn reshape_round_trips((d, v) in array()) {
        let a = Array::from_vec(d.clone(), v.clone()).unwrap();
        let flat = a.reshape([v.len()]).unwrap();
        prop_assert_eq!(flat.to_vec::<f64>().unwrap(), v.clone());
        let back = flat.reshape(d.clone()).unwrap();
        prop_assert_eq!(back.dims(), &d[..]);
        prop_assert_eq!(back.to_vec::<f64>().unwrap(), v);
    }

    /// Transposing twice with a permutation and its inverse is the identity.
    #[test]
    fn transpose_inverse((d, v) in array(), seed in any::<u64>()) {
        let n = d.len();
        let mut perm: Vec<usize> = (0..n).collect();
        let mut s = seed;
        for i in (1..n).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            perm.swap(i, (s >> 33) as usize % (i + 1));
        }
        let mut inv = vec![0; n];
        for (i, &p) in perm.iter().enumerate() {
            inv[p] = i;
        }
        let a = Array::from_vec(d, v.clone()).unwrap();
        let back = a.transpose(&perm).unwrap().transpose(&inv).unwrap();
        prop_assert_eq!(back.to_vec::<f64>().unwrap(), v);
    }
}
