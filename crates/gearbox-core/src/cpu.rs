//! What the host CPU offers to code that chooses its instructions at run
//! time (loops compiled more than once, with and without `target_feature`).

/// Whether the CPU has AVX2 and FMA (x86-64; never elsewhere). The answer
/// is cached by the standard library after the first call.
pub fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether the CPU also has 512-bit vectors for float64 work (AVX-512 F,
/// VL and DQ, beside AVX2 and FMA; x86-64 only), for loops that run
/// twice as many lanes where they exist.
pub fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    return has_avx2_fma()
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512dq");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Defines a function whose body runs compiled for the widest vector unit
/// the CPU has (AVX-512, else AVX2 with FMA, else the build's baseline),
/// chosen at run time: for loops meant to vectorize. The body is compiled
/// three times, each copy with its `target_feature`s, so closures and
/// `#[inline(always)]` functions it calls vectorize with them (a closure
/// passed in from outside would keep the baseline's instructions). Results
/// do not depend on the copy taken where the body avoids `mul_add` (Rust
/// never contracts `a * b + c`). Generics go in brackets:
/// `vectorized_fn!(fn name[T: Real](x: &[T]) -> T { ... })`.
macro_rules! vectorized_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident [$($generics:tt)*]
        ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$attr])*
        $vis fn $name<$($generics)*>($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx2,fma")]
                unsafe fn avx512<$($generics)*>($($arg: $ty),*) $(-> $ret)? $body
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2<$($generics)*>($($arg: $ty),*) $(-> $ret)? $body
                if $crate::cpu::has_avx512() {
                    // SAFETY: the CPU has these features.
                    return unsafe { avx512($($arg),*) };
                }
                if $crate::cpu::has_avx2_fma() {
                    // SAFETY: the CPU has AVX2 and FMA.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body
        }
    };
}
pub(crate) use vectorized_fn;
