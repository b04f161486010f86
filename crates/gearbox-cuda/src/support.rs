//! Hand-written helper kernels for the library calls: the identity, the
//! strict lower triangle moved to the upper one (Cholesky's upper factor
//! from cuSOLVER's lower one, which it computes in half the time), the largest
//! asymmetry (Cholesky's symmetry check), the largest magnitude (the
//! factorizations' check for NaN and Inf), the smallest and largest pivot
//! magnitude (the singularity check after LU), and the Philox random
//! streams of `rand` and `randn`. Compiled once through the
//! kernel cache.

/// CUDA C source of the helpers, for f32 (`_s`) and f64 (`_d`).
pub const SOURCE: &str = r#"
template <typename T> __device__ void eye(T* a, long long n) {
    long long total = n * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        a[i] = (i % n == i / n) ? T(1) : T(0);
}
// a <- the transpose of its lower triangle: entry (r, c) below the diagonal
// moves to (c, r) and becomes 0 (each thread writes only its own pair).
template <typename T> __device__ void lower_to_upper(T* a, long long n) {
    long long total = n * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        long long r = i % n, c = i / n;
        if (r > c) { a[c + r * n] = a[i]; a[i] = T(0); }
    }
}
// The largest of the warp's 32 values, in every lane. The reductions below
// take it before their atomics: one atomic per warp rather than per thread,
// since atomics on one address serialize.
template <typename U> __device__ U warp_max(U v) {
    for (int o = 16; o > 0; o >>= 1) {
        U w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w > v ? w : v;
    }
    return v;
}
// out[0] = max |a_ij - a_ji|, out[1] = max |a_ij| as order-preserving bit
// patterns of non-negative values (NaN sorts above infinity).
template <typename T, typename U> __device__ void asym(const T* a, long long n, U* out) {
    long long total = n * n;
    U worst = 0, big = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        long long r = i % n, c = i / n;
        T d = fabs(a[i] - a[r * n + c]);
        T v = fabs(a[i]);
        U db = *reinterpret_cast<U*>(&d), vb = *reinterpret_cast<U*>(&v);
        if (db > worst) worst = db;
        if (vb > big) big = vb;
    }
    worst = warp_max(worst);
    big = warp_max(big);
    if ((threadIdx.x & 31) == 0) {
        atomicMax(&out[0], worst);
        atomicMax(&out[1], big);
    }
}
// out[0] = max |a_i| over the len entries, as the order-preserving bit
// pattern of a non-negative value (NaN sorts above infinity): finite exactly
// when every entry is.
template <typename T, typename U> __device__ void max_abs(const T* a, long long len, U* out) {
    U big = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < len; i += (long long)gridDim.x * blockDim.x) {
        T v = fabs(a[i]);
        U b = *reinterpret_cast<U*>(&v);
        if (b > big) big = b;
    }
    big = warp_max(big);
    if ((threadIdx.x & 31) == 0) atomicMax(&out[0], big);
}
// out[0] = min |u_ii|, out[1] = max |u_ii|.
template <typename T, typename U> __device__ void diag_range(const T* a, long long n, U* out) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        T v = fabs(a[i * n + i]);
        U b = *reinterpret_cast<U*>(&v);
        atomicMin(&out[0], b);
        atomicMax(&out[1], b);
    }
}
// Philox4x32-10 exactly as gearbox_core::random defines the streams: element
// i of seed s is one block with counter [lo32(i), hi32(i), stream, 0] and key
// [lo32(s), hi32(s)]; uniform = bits53(x0, x1) * 2^-53; normal = Box-Muller
// with u1 = (bits53(x0, x1) + 1) * 2^-53 and u2 = bits53(x2, x3) * 2^-53.
__device__ __forceinline__ unsigned long long bits53(unsigned int a, unsigned int b) {
    return ((unsigned long long)a << 21) ^ ((unsigned long long)b >> 11);
}
extern "C" __global__ void gb_philox_d(double* out, long long n, unsigned long long seed, unsigned long long normal) {
    const double inv_2_53 = 1.1102230246251565e-16;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned long long idx = (unsigned long long)i;
        unsigned int x0 = (unsigned int)idx, x1 = (unsigned int)(idx >> 32), x2 = normal ? 1u : 0u, x3 = 0u;
        unsigned int k0 = (unsigned int)seed, k1 = (unsigned int)(seed >> 32);
        for (int r = 0; r < 10; ++r) {
            if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
            unsigned long long p0 = 0xD2511F53ull * x0, p1 = 0xCD9E8D57ull * x2;
            unsigned int hi0 = (unsigned int)(p0 >> 32), lo0 = (unsigned int)p0;
            unsigned int hi1 = (unsigned int)(p1 >> 32), lo1 = (unsigned int)p1;
            x0 = hi1 ^ x1 ^ k0; x1 = lo1; x2 = hi0 ^ x3 ^ k1; x3 = lo0;
        }
        if (!normal) {
            out[i] = (double)bits53(x0, x1) * inv_2_53;
        } else {
            double u1 = (double)(bits53(x0, x1) + 1ull) * inv_2_53;
            double u2 = (double)bits53(x2, x3) * inv_2_53;
            out[i] = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        }
    }
}
// R (p x n, column-major) from the upper triangle of geqrf's m x n result.
template <typename T> __device__ void extract_r(const T* a, long long m, T* r, long long n, long long p) {
    long long total = p * n;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total; t += (long long)gridDim.x * blockDim.x) {
        long long i = t % p, j = t / p;
        r[t] = i <= j ? a[i + m * j] : T(0);
    }
}
extern "C" __global__ void gb_extract_r_s(const float* a, long long m, unsigned long long r, unsigned long long n, unsigned long long p) {
    extract_r(a, m, reinterpret_cast<float*>(r), (long long)n, (long long)p);
}
extern "C" __global__ void gb_extract_r_d(const double* a, long long m, unsigned long long r, unsigned long long n, unsigned long long p) {
    extract_r(a, m, reinterpret_cast<double*>(r), (long long)n, (long long)p);
}
extern "C" __global__ void gb_eye_s(float* a, long long n) { eye(a, n); }
extern "C" __global__ void gb_eye_d(double* a, long long n) { eye(a, n); }
extern "C" __global__ void gb_lower_to_upper_s(float* a, long long n) { lower_to_upper(a, n); }
extern "C" __global__ void gb_lower_to_upper_d(double* a, long long n) { lower_to_upper(a, n); }
extern "C" __global__ void gb_asym_s(const float* a, long long n, unsigned int* out) { asym(a, n, out); }
extern "C" __global__ void gb_asym_d(const double* a, long long n, unsigned long long* out) { asym(a, n, out); }
extern "C" __global__ void gb_max_abs_s(const float* a, long long len, unsigned int* out) { max_abs(a, len, out); }
extern "C" __global__ void gb_max_abs_d(const double* a, long long len, unsigned long long* out) { max_abs(a, len, out); }
extern "C" __global__ void gb_diag_range_s(const float* a, long long n, unsigned int* out) { diag_range(a, n, out); }
extern "C" __global__ void gb_diag_range_d(const double* a, long long n, unsigned long long* out) { diag_range(a, n, out); }
"#;

/// Every entry point in [`SOURCE`].
pub const ENTRIES: &[&str] = &[
    "gb_eye_s",
    "gb_eye_d",
    "gb_lower_to_upper_s",
    "gb_lower_to_upper_d",
    "gb_asym_s",
    "gb_asym_d",
    "gb_max_abs_s",
    "gb_max_abs_d",
    "gb_diag_range_s",
    "gb_diag_range_d",
    "gb_philox_d",
    "gb_extract_r_s",
    "gb_extract_r_d",
];
