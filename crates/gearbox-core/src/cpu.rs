//! What the host CPU offers to code that chooses its instructions at run
//! time (loops compiled twice, with and without `target_feature`).

/// Whether the CPU has AVX2 and FMA (x86-64; never elsewhere). The answer
/// is cached by the standard library after the first call.
pub fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    false
}
