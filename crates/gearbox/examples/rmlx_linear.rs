//! The Rmlx example: learn the weights `(2, -1, 0.5, 0.25)` of a linear
//! model without bias (`mlx_linear(4, 1, bias = FALSE)`) by SGD (learning
//! rate 0.1, 50 steps of mean squared error) on 256 rows of standard
//! normal features, in `fast` (float32) and `strict` (float64) precision.
//! Prints the loss every 10 steps and the learned weights; fails if the
//! loss ever rises or a weight lands more than 1e-2 from the truth.
//!
//! Run: `cargo run -p gearbox --example rmlx_linear --release`
use gearbox::nn::{self, Linear, Module, Sgd};
use gearbox::{Array, DType, Error, Precision, Result};

const TRUTH: [f64; 4] = [2.0, -1.0, 0.5, 0.25];

fn run(dtype: DType, precision: Precision) -> Result<()> {
    let cast = |a: Array| a.astype(dtype)?.with_precision(precision);
    let x = Array::randn([256, 4], 2024)?;
    let y = cast(x.matmul(&Array::from_vec([4, 1], TRUTH.to_vec())?)?)?;
    let x = cast(x)?;
    Array::eval_all(&[&x, &y])?;

    let mut model = Linear::new(4, 1, false, 7)?;
    model.cast(dtype, precision)?;
    let mut opt = Sgd::new(0.1)?;
    let loss_fn = |m: &nn::Bound<'_, Linear>, io: &[Array]| nn::mse(&m.forward(&io[0])?, &io[1]);

    println!("{precision} ({dtype}):");
    let mut previous = f64::INFINITY;
    for step in 1..=50 {
        let loss =
            nn::train_step(&mut model, loss_fn, &mut opt, &[x.clone(), y.clone()])?.item()?;
        if step == 1 || step % 10 == 0 {
            println!("  step {step:2}: loss {loss:.6e}");
        }
        if loss >= previous {
            return Err(fail(format!(
                "the loss rose at step {step}: {previous} -> {loss}"
            )));
        }
        previous = loss;
    }
    let w = model.weight().to_f64_vec()?;
    println!("  learned weights {w:.5?} (truth {TRUTH:?})");
    match w
        .iter()
        .zip(TRUTH)
        .find(|(got, want)| (*got - want).abs() >= 1e-2)
    {
        Some((got, want)) => Err(fail(format!("weight {got} is not within 1e-2 of {want}"))),
        None => Ok(()),
    }
}

fn fail(why: String) -> Error {
    Error::InvalidArgument {
        op: "rmlx_linear",
        name: "result",
        value: "check".into(),
        why,
    }
}

fn main() -> Result<()> {
    gearbox::init();
    run(DType::F32, Precision::Fast)?;
    run(DType::F64, Precision::Strict)?;
    Ok(())
}
