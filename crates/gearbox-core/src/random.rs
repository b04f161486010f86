//! Counter-based random numbers: the Philox4x32-10 generator and the exact
//! definition of the streams behind [`Array::rand`](crate::Array::rand) and
//! [`Array::randn`](crate::Array::randn).
//!
//! Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as
//! easy as 1, 2, 3", SC'11; the Random123 library) is a keyed bijection of a
//! 128-bit counter: the same `(counter, key)` always gives the same four 32-bit
//! words, and different counters give independent-looking words. So element
//! `i` of a random array is a pure function of `(seed, i)`: generation is
//! embarrassingly parallel, gives the same values whatever the number of
//! threads, and a prefix of a longer array equals the shorter array.
//!
//! # The generator
//!
//! One round maps `(x0, x1, x2, x3)` with key `(k0, k1)` to
//!
//! ```text
//! (hi0, lo0) = 0xD2511F53 * x0     (64-bit product split in high and low 32 bits)
//! (hi1, lo1) = 0xCD9E8D57 * x2
//! (x0, x1, x2, x3) <- (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0)
//! ```
//!
//! Ten rounds are applied; before each round after the first the key is
//! bumped: `k0 += 0x9E3779B9`, `k1 += 0xBB67AE85` (wrapping). This is
//! Random123's `philox4x32_R(10, ctr, key)` and reproduces its published
//! known-answer vectors (see the unit tests).
//!
//! # The stream of an array
//!
//! For an array made with a `u64` seed, the element at column-major linear
//! index `i` (a `u64`) is computed from one Philox block
//!
//! ```text
//! counter = [lo32(i), hi32(i), stream, 0]
//! key     = [lo32(seed), hi32(seed)]
//! [x0, x1, x2, x3] = philox4x32_10(counter, key)
//! ```
//!
//! where `lo32(v) = v & 0xFFFFFFFF`, `hi32(v) = v >> 32` and `stream` is
//! [`STREAM_UNIFORM`] (0) for `rand` and [`STREAM_NORMAL`] (1) for `randn`, so
//! the two distributions drawn with one seed are independent of each other.
//! With `bits53(a, b) = ((a as u64) << 21) ^ ((b as u64) >> 11)`, an integer in
//! `0 .. 2^53`:
//!
//! - **uniform** (`rand`): `u = bits53(x0, x1) * 2^-53`, in `[0, 1)` and exact
//!   (a multiple of `2^-53`);
//! - **normal** (`randn`), Box–Muller with both uniforms from the same block:
//!   `u1 = (bits53(x0, x1) + 1) * 2^-53` in `(0, 1]` (so the logarithm never
//!   sees 0), `u2 = bits53(x2, x3) * 2^-53` in `[0, 1)`, and
//!   `z = sqrt(-2 ln u1) * cos(2π u2)`, computed in f64 as
//!   `(-2.0 * u1.ln()).sqrt() * (TAU * u2).cos()` with `TAU` the f64 nearest
//!   2π. The sine branch is not used, so each element is one block.
//!
//! The uniform values are bit-exact on any platform. The normal values follow
//! the platform's `ln` and `cos`, so another implementation (a CUDA kernel)
//! agrees to within a few units in the last place, not necessarily bit for bit.
//! Largest normal magnitude: `sqrt(-2 ln 2^-53) ≈ 8.57`.
//!
//! ```
//! use gearbox_core::random::{philox4x32_10, uniform_at};
//! let x = philox4x32_10([7, 0, 0, 0], [42, 0]);
//! let bits = ((x[0] as u64) << 21) ^ ((x[1] as u64) >> 11);
//! assert_eq!(uniform_at(42, 7), bits as f64 * (-53f64).exp2());
//! ```

use std::f64::consts::TAU;

/// Round multipliers of Philox4x32 (Random123's `PHILOX_M4x32_0`, `_1`).
pub const PHILOX_M4X32: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];

/// Key increments of Philox4x32 (the Weyl constants `PHILOX_W32_0`, `_1`).
pub const PHILOX_W32: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];

/// Counter word 2 for the uniform stream (`rand`).
pub const STREAM_UNIFORM: u32 = 0;

/// Counter word 2 for the normal stream (`randn`).
pub const STREAM_NORMAL: u32 = 1;

/// `2^-53`, the spacing of the uniform values.
const INV_2_53: f64 = 1.0 / (1u64 << 53) as f64;

/// One Philox4x32 round.
#[inline(always)]
fn round(x: [u32; 4], k: [u32; 2]) -> [u32; 4] {
    let p0 = u64::from(PHILOX_M4X32[0]) * u64::from(x[0]);
    let p1 = u64::from(PHILOX_M4X32[1]) * u64::from(x[2]);
    [
        (p1 >> 32) as u32 ^ x[1] ^ k[0],
        p1 as u32,
        (p0 >> 32) as u32 ^ x[3] ^ k[1],
        p0 as u32,
    ]
}

/// Philox4x32 with `rounds` rounds (Random123's `philox4x32_R`).
#[inline(always)]
fn philox4x32_r(rounds: u32, counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut x = counter;
    let mut k = key;
    for r in 0..rounds {
        if r > 0 {
            k = [
                k[0].wrapping_add(PHILOX_W32[0]),
                k[1].wrapping_add(PHILOX_W32[1]),
            ];
        }
        x = round(x, k);
    }
    x
}

/// Philox4x32-10: four pseudo-random words from a 128-bit counter and a 64-bit
/// key (Random123's `philox4x32(ctr, key)`).
///
/// ```
/// use gearbox_core::random::philox4x32_10;
/// // Random123 known-answer vector: counter 0, key 0.
/// assert_eq!(
///     philox4x32_10([0; 4], [0; 2]),
///     [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
/// );
/// ```
#[inline]
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    philox4x32_r(10, counter, key)
}

/// The Philox block of element `index` of `stream` under `seed` (see the
/// module docs for the layout).
#[inline]
pub fn block(seed: u64, index: u64, stream: u32) -> [u32; 4] {
    philox4x32_10(
        [index as u32, (index >> 32) as u32, stream, 0],
        [seed as u32, (seed >> 32) as u32],
    )
}

/// The 53-bit integer `((a << 21) ^ (b >> 11))`, in `0 .. 2^53`.
#[inline]
fn bits53(a: u32, b: u32) -> u64 {
    (u64::from(a) << 21) ^ (u64::from(b) >> 11)
}

/// A uniform value in `[0, 1)` from two words: `bits53(a, b) * 2^-53`.
///
/// ```
/// use gearbox_core::random::unit_f64;
/// assert_eq!(unit_f64(0, 0), 0.0);
/// assert_eq!(unit_f64(u32::MAX, u32::MAX), 1.0 - (-53f64).exp2());
/// ```
#[inline]
pub fn unit_f64(a: u32, b: u32) -> f64 {
    bits53(a, b) as f64 * INV_2_53
}

/// A uniform value in `(0, 1]` from two words: `(bits53(a, b) + 1) * 2^-53`.
///
/// ```
/// use gearbox_core::random::unit_f64_open0;
/// assert_eq!(unit_f64_open0(0, 0), (-53f64).exp2());
/// assert_eq!(unit_f64_open0(u32::MAX, u32::MAX), 1.0);
/// ```
#[inline]
pub fn unit_f64_open0(a: u32, b: u32) -> f64 {
    (bits53(a, b) + 1) as f64 * INV_2_53
}

/// Element `index` of the uniform stream of `seed`: a value in `[0, 1)`.
///
/// ```
/// use gearbox_core::random::uniform_at;
/// let u = uniform_at(1, 0);
/// assert!((0.0..1.0).contains(&u));
/// assert_eq!(u, uniform_at(1, 0));
/// ```
#[inline]
pub fn uniform_at(seed: u64, index: u64) -> f64 {
    let x = block(seed, index, STREAM_UNIFORM);
    unit_f64(x[0], x[1])
}

/// Element `index` of the standard normal stream of `seed` (Box–Muller, see
/// the module docs).
///
/// ```
/// use gearbox_core::random::normal_at;
/// let z = normal_at(1, 0);
/// assert!(z.is_finite() && z.abs() < 8.6);
/// ```
#[inline]
pub fn normal_at(seed: u64, index: u64) -> f64 {
    let x = block(seed, index, STREAM_NORMAL);
    box_muller(unit_f64_open0(x[0], x[1]), unit_f64(x[2], x[3]))
}

/// `sqrt(-2 ln u1) * cos(2π u2)` for `u1` in `(0, 1]`, `u2` in `[0, 1)`.
#[inline]
fn box_muller(u1: f64, u2: f64) -> f64 {
    (-2.0 * u1.ln()).sqrt() * (TAU * u2).cos()
}

/// Fills `out` with elements `start, start + 1, ...` of the uniform stream of `seed`.
///
/// ```
/// use gearbox_core::random::{fill_uniform, uniform_at};
/// let mut v = [0.0; 3];
/// fill_uniform(9, 5, &mut v);
/// assert_eq!(v[2], uniform_at(9, 7));
/// ```
pub fn fill_uniform(seed: u64, start: u64, out: &mut [f64]) {
    for (o, i) in out.iter_mut().zip(start..) {
        *o = uniform_at(seed, i);
    }
}

/// Fills `out` with elements `start, start + 1, ...` of the normal stream of `seed`.
///
/// ```
/// use gearbox_core::random::{fill_normal, normal_at};
/// let mut v = [0.0; 3];
/// fill_normal(9, 5, &mut v);
/// assert_eq!(v[0], normal_at(9, 5));
/// ```
pub fn fill_normal(seed: u64, start: u64, out: &mut [f64]) {
    for (o, i) in out.iter_mut().zip(start..) {
        *o = normal_at(seed, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (rounds, counter, key, expected output).
    type Kat = (u32, [u32; 4], [u32; 2], [u32; 4]);

    /// Random123 `examples/kat_vectors`, the `philox4x32 7` and `philox4x32 10`
    /// lines.
    const KAT: [Kat; 6] = [
        (
            7,
            [0, 0, 0, 0],
            [0, 0],
            [0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48],
        ),
        (
            7,
            [0xffffffff; 4],
            [0xffffffff; 2],
            [0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662],
        ),
        (
            7,
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0],
            [0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a],
        ),
        (
            10,
            [0, 0, 0, 0],
            [0, 0],
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8],
        ),
        (
            10,
            [0xffffffff; 4],
            [0xffffffff; 2],
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
        ),
        (
            10,
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0],
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
        ),
    ];

    #[test]
    fn random123_known_answers() {
        for (rounds, ctr, key, want) in KAT {
            assert_eq!(
                philox4x32_r(rounds, ctr, key),
                want,
                "philox4x32_{rounds} ctr {ctr:08x?} key {key:08x?}"
            );
            if rounds == 10 {
                assert_eq!(philox4x32_10(ctr, key), want);
            }
        }
    }

    /// More philox4x32-10 vectors with single-bit counters and keys, from the
    /// extended Random123 known-answer list.
    #[test]
    fn extended_known_answers() {
        let cases: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
            (
                [1, 0, 0, 0],
                [1, 0],
                [0xac08141b, 0xdfc5ccbe, 0x79c07a47, 0xa7f66093],
            ),
            (
                [0, 0, 0, 1],
                [0, 1],
                [0x96b27e8c, 0x28826d0f, 0x66d958ef, 0x081509dc],
            ),
            (
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0, 0x80000000],
                [0x63675d2c, 0x422d7c4d, 0x3145d30d, 0x3bce33a4],
            ),
        ];
        for (ctr, key, want) in cases {
            assert_eq!(philox4x32_10(ctr, key), want);
        }
    }

    #[test]
    fn stream_layout_matches_the_docs() {
        let (seed, i) = (0x0123_4567_89ab_cdef_u64, 0x0000_0005_0000_0009_u64);
        let x = philox4x32_10([9, 5, 0, 0], [0x89ab_cdef, 0x0123_4567]);
        assert_eq!(block(seed, i, STREAM_UNIFORM), x);
        assert_eq!(uniform_at(seed, i), unit_f64(x[0], x[1]));
        let y = philox4x32_10([9, 5, 1, 0], [0x89ab_cdef, 0x0123_4567]);
        let u1 = (bits53(y[0], y[1]) + 1) as f64 / 9007199254740992.0;
        let u2 = bits53(y[2], y[3]) as f64 / 9007199254740992.0;
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        assert_eq!(normal_at(seed, i), z);
    }

    #[test]
    fn unit_conversions_cover_their_ranges() {
        assert_eq!(bits53(u32::MAX, u32::MAX), (1u64 << 53) - 1);
        assert_eq!(bits53(0, 1 << 11), 1);
        assert_eq!(bits53(1, 0), 1 << 21);
        assert!(unit_f64(u32::MAX, u32::MAX) < 1.0);
        assert!(unit_f64_open0(0, 0) > 0.0);
        assert_eq!(box_muller(1.0, 0.25), 0.0);
        assert!(box_muller(unit_f64_open0(0, 0), 0.0).is_finite());
    }
}
