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
