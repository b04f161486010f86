//! Sizes that do not fit: element counts and byte sizes that overflow, and
//! results larger than the host's memory.
//!
//! Every array obeys the size rule of [`gearbox_core::Shape`]: its element
//! count, byte size and strides fit. A shape that breaks it is an error
//! naming the op, the shape and which count overflows, at the moment the
//! array is built (no count may wrap to a small number). A result that fits
//! the rule but not the host's memory is [`Error::OutOfMemory`] naming the
//! bytes asked for, when it is evaluated; before this rule the process
//! aborted ("memory allocation of N bytes failed"), taking this test binary
//! with it.

use std::sync::{Mutex, MutexGuard};

use gearbox_core::runtime::config::{options, set_options, RuntimeOptions};
use gearbox_core::{Array, DType, Error, Shape};

/// One row: the case's name, the case, words its message must contain and
/// words it must not (a wrapped count).
type Case = (
    &'static str,
    Box<dyn Fn() -> Result<(), Error>>,
    &'static [&'static str],
    &'static [&'static str],
);

/// Runs `f` and keeps only success or the error.
fn run<T>(f: impl Fn() -> Result<T, Error> + 'static) -> Box<dyn Fn() -> Result<(), Error>> {
    Box::new(move || f().map(|_| ()))
}

const HUGE: usize = 1 << 63;

fn zeros(dims: &[usize], dtype: DType) -> Result<Array, Error> {
    Array::zeros(dims.to_vec(), dtype)
}

fn empty() -> Array {
    Array::from_vec([0], Vec::<f64>::new()).unwrap()
}

/// Shapes that break the size rule: rejected when the array is built.
fn overflow_cases() -> Vec<Case> {
    vec![
        (
            "from_vec whose count wraps to 0",
            run(|| Array::from_vec([HUGE, 2], Vec::<f64>::new())),
            &[
                "from_vec",
                "[9223372036854775808 x 2]",
                "element count",
                "overflows",
            ],
            &[],
        ),
        (
            "from_vec of [usize::MAX, 2] names no wrapped count",
            run(|| Array::from_vec([usize::MAX, 2], vec![1.0, 2.0, 3.0])),
            &[
                "from_vec",
                "[18446744073709551615 x 2]",
                "overflows",
                "3.689e19",
            ],
            &["18446744073709551614", "holds"],
        ),
        (
            "from_buffer whose count wraps",
            run(|| Array::from_buffer([HUGE, 4], gearbox_core::HostBuffer::Bool(vec![]))),
            &["from_buffer", "overflows"],
            &[],
        ),
        (
            "from_vec whose bytes overflow",
            run(|| Array::from_vec([1 << 61], Vec::<f64>::new())),
            &["from_vec", "byte size overflows"],
            &[],
        ),
        (
            "reshape of an empty array to a count that wraps to 0",
            run(|| empty().reshape([HUGE, 2])),
            &["reshape", "[9223372036854775808 x 2]", "overflows"],
            &[],
        ),
        (
            "reshape to [usize::MAX, 2]",
            run(|| Array::from_vec([2], vec![1.0, 2.0])?.reshape([usize::MAX, 2])),
            &["reshape", "element count", "overflows"],
            &["18446744073709551614"],
        ),
        (
            "broadcast add whose result count overflows",
            run(|| zeros(&[1 << 32, 1], DType::F64)?.add(&zeros(&[1, 1 << 32], DType::F64)?)),
            &["add", "[4294967296 x 4294967296]", "overflows"],
            &[],
        ),
        (
            "broadcast mul whose result bytes overflow",
            run(|| zeros(&[1 << 31, 1], DType::F64)?.mul(&zeros(&[1, 1 << 31], DType::F64)?)),
            &["mul", "[2147483648 x 2147483648]", "byte size overflows"],
            &[],
        ),
        (
            "where whose broadcast count overflows",
            run(|| {
                let mask = zeros(&[1 << 32, 1], DType::Bool)?;
                Array::where_(
                    &mask,
                    &zeros(&[1, 1 << 32], DType::F64)?,
                    &Array::scalar(0.0),
                )
            }),
            &["where", "overflows"],
            &[],
        ),
        (
            "zeros of [usize::MAX, 2]",
            run(|| zeros(&[usize::MAX, 2], DType::F64)),
            &[
                "zeros",
                "[18446744073709551615 x 2]",
                "element count",
                "overflows",
            ],
            &["18446744073709551614"],
        ),
        (
            "ones whose bytes overflow",
            run(|| Array::ones([1 << 61], DType::F64)),
            &["ones", "byte size overflows"],
            &[],
        ),
        (
            "full of i64 whose bytes overflow",
            run(|| Array::full([1 << 40, 1 << 21], 3.0, DType::I64)),
            &["full", "byte size overflows"],
            &[],
        ),
        (
            "zeros with an empty axis beside dimensions whose product overflows",
            run(|| zeros(&[HUGE, HUGE, 0], DType::F64)),
            &["zeros", "no elements", "strides"],
            &[],
        ),
        (
            "eye of order 2^32",
            run(|| Array::eye(1 << 32)),
            &["eye", "[4294967296 x 4294967296]", "overflows"],
            &[],
        ),
        (
            "rand whose bytes overflow",
            run(|| Array::rand([1 << 40, 1 << 22], 1)),
            &["rand", "byte size overflows"],
            &[],
        ),
        (
            "randn whose count overflows",
            run(|| Array::randn([1 << 40, 1 << 40], 1)),
            &["randn", "overflows"],
            &[],
        ),
        (
            "linspace whose bytes overflow",
            run(|| Array::linspace(0.0, 1.0, 1 << 61)),
            &["linspace", "byte size overflows"],
            &[],
        ),
        (
            "matmul whose result count overflows",
            run(|| zeros(&[1 << 32, 0], DType::F64)?.matmul(&zeros(&[0, 1 << 32], DType::F64)?)),
            &["matmul", "[4294967296 x 4294967296]", "overflows"],
            &[],
        ),
        (
            "tcrossprod whose result bytes overflow",
            run(|| {
                zeros(&[1 << 31, 0], DType::F32)?.tcrossprod(&zeros(&[1 << 31, 0], DType::F32)?)
            }),
            &["tcrossprod", "byte size overflows"],
            &[],
        ),
        (
            "outer whose result count overflows",
            run(|| zeros(&[1 << 32], DType::F64)?.outer(&zeros(&[1 << 32], DType::F64)?)),
            &["outer", "overflows"],
            &[],
        ),
        (
            "concat whose length overflows",
            run(|| {
                let part = zeros(&[1 << 62], DType::Bool)?;
                Array::concat(&[&part, &part, &part, &part], 0)
            }),
            &["concat", "overflows"],
            &[],
        ),
        (
            "concat whose bytes overflow",
            run(|| {
                let part = zeros(&[1 << 59], DType::F64)?;
                Array::concat(&[&part, &part], 0)
            }),
            &["concat", "byte size overflows"],
            &[],
        ),
        (
            "qr whose packed factors overflow",
            run(|| zeros(&[1 << 31, 1 << 31], DType::Bool)?.qr()),
            &["qr", "overflows"],
            &[],
        ),
    ]
}

#[test]
fn sizes_that_overflow_are_errors_when_the_array_is_built() {
    let table = overflow_cases();
    for (name, case, words, not_words) in table {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(case));
        let result =
            outcome.unwrap_or_else(|_| panic!("{name}: panicked instead of returning an error"));
        let err = match result {
            Ok(()) => panic!("{name}: was accepted, expected an error"),
            Err(e) => e.to_string(),
        };
        for w in words {
            assert!(
                err.contains(w),
                "{name}: message {err:?} does not mention {w:?}"
            );
        }
        for w in not_words {
            assert!(!err.contains(w), "{name}: message {err:?} mentions {w:?}");
        }
    }
}

#[test]
fn shapes_count_exactly_or_say_they_cannot() {
    let wraps = Shape::new(vec![HUGE, 2]);
    assert_eq!(wraps.checked_numel(), None);
    assert_eq!(
        wraps.numel(),
        usize::MAX,
        "saturates instead of wrapping to 0"
    );
    assert_eq!(Shape::new(vec![HUGE, HUGE, 0]).numel(), 0);
    assert_eq!(Shape::new(vec![3, 5, 7]).numel(), 105);
    assert_eq!(Shape::new(vec![3, 5, 7]).strides(), [1, 3, 15]);
    let wide = Shape::broadcast(&Shape::new(vec![1 << 32, 1]), &Shape::new(vec![1, 1 << 32]));
    let wide = wide.expect("broadcasting is a rule about sizes that match");
    assert_eq!(wide.checked_numel(), None);
    let err = wide.check_size("add", DType::Bool).unwrap_err().to_string();
    assert!(err.contains("add") && err.contains("element count") && err.contains("overflows"));
    // The largest arrays the rule allows are accepted (nothing is allocated
    // until evaluation).
    assert_eq!(zeros(&[1 << 59], DType::F64).unwrap().numel(), 1 << 59);
    let big = zeros(&[(1 << 31) - 1, 1 << 31], DType::Bool).unwrap();
    assert_eq!(big.numel(), ((1 << 31) - 1) << 31);
}

/// Fusion switched on or off for one test at a time (the option is global),
/// restored when dropped.
struct FusionSetting {
    saved: RuntimeOptions,
    _held: MutexGuard<'static, ()>,
}

impl FusionSetting {
    fn new(fusion: bool) -> Self {
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let held = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let saved = options();
        set_options(RuntimeOptions {
            fusion,
            ..saved.clone()
        });
        FusionSetting { saved, _held: held }
    }
}

impl Drop for FusionSetting {
    fn drop(&mut self) {
        set_options(self.saved.clone());
    }
}

/// The [`Error::OutOfMemory`] of evaluating `a`, checked for `op` and `bytes`.
fn out_of_memory(a: Result<Array, Error>, op: &str, bytes: usize) {
    let a = a.expect("the size rule allows it");
    let err = a.eval().expect_err("cannot fit in memory");
    let msg = err.to_string();
    let Error::OutOfMemory { bytes: asked, .. } = &err else {
        panic!("{op}: expected OutOfMemory, got {msg}");
    };
    assert_eq!(*asked, bytes, "{msg}");
    assert!(
        msg.starts_with(&format!("{op}: out of host memory")),
        "{msg}"
    );
    assert!(msg.contains(&format!("{bytes} bytes")), "{msg}");
    assert!(msg.contains("available"), "{msg}");
    assert!(!a.is_evaluated());
}

/// 2^60 bytes: more than any address space, so every allocator refuses it.
const EIB: usize = 1 << 60;

#[test]
fn results_larger_than_memory_are_errors_not_aborts() {
    let n = EIB / 8;
    out_of_memory(zeros(&[n], DType::F64), "zeros", EIB);
    out_of_memory(Array::ones([n / 2, 2], DType::F64), "ones", EIB);
    out_of_memory(Array::full([n], -1.0, DType::I64), "full", EIB);
    out_of_memory(Array::rand([n], 7), "rand", EIB);
    out_of_memory(Array::randn([n], 7), "randn", EIB);
    out_of_memory(Array::linspace(0.0, 1.0, n), "linspace", EIB);
    out_of_memory(Array::eye(1 << 29), "eye", EIB * 2);
    out_of_memory(zeros(&[EIB], DType::Bool), "zeros", EIB);
    // A product of empty operands whose zero result is 2^60 bytes.
    let (a, b) = (
        zeros(&[1 << 29, 0], DType::F64),
        zeros(&[0, 1 << 28], DType::F64),
    );
    out_of_memory(a.unwrap().matmul(&b.unwrap()), "matmul", EIB);
    // Work goes on afterwards.
    let x = Array::from_vec([3], vec![1.0, 2.0, 4.0]).unwrap();
    assert_eq!(
        (&x * 2.0).unwrap().to_vec::<f64>().unwrap(),
        [2.0, 4.0, 8.0]
    );
}

#[test]
fn broadcast_results_larger_than_memory_are_errors_fused_or_not() {
    // 2^26 x 2^26 bools: 2^52 bytes from two 64 MiB operands.
    let (col, row) = (
        Array::ones([1 << 26, 1], DType::Bool).unwrap(),
        Array::ones([1, 1 << 26], DType::Bool).unwrap(),
    );
    for fusion in [true, false] {
        let _fusion = FusionSetting::new(fusion);
        let (and, eq) = if fusion {
            ("fused kernel (and)", "fused kernel (eq)")
        } else {
            ("and", "eq")
        };
        out_of_memory(col.and(&row), and, 1 << 52);
        out_of_memory(col.eq(&row), eq, 1 << 52);
    }
}

#[test]
fn reductions_of_broadcasts_too_large_to_walk_are_errors() {
    // 2^29 x 2^29 positions from two 4 GiB operands (zeros: pages the
    // allocator hands out and nothing here touches), summed: even with no
    // full-size result stored, the fused kernel's table of 2^43 tasks does
    // not fit any address space; unfused, the sum's 2^61-byte operand does not.
    let col = zeros(&[1 << 29, 1], DType::F64).unwrap();
    let row = zeros(&[1, 1 << 29], DType::F64).unwrap();
    for fusion in [true, false] {
        let _fusion = FusionSetting::new(fusion);
        let total = col.add(&row).unwrap().sum().unwrap();
        let err = total.eval().expect_err("too large to walk");
        assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
        let op = if fusion {
            "fused kernel (add, sum)"
        } else {
            "add"
        };
        assert!(err.to_string().starts_with(op), "{err}");
    }
}
