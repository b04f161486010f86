//! Hand-written helper kernels for the library calls: the identity, zeroing
//! the strict lower triangle (Cholesky's upper factor), the largest
//! asymmetry (Cholesky's symmetry check) and the smallest and largest pivot
//! magnitude (the singularity check after LU). Compiled once through the
//! kernel cache.

/// CUDA C source of the helpers, for f32 (`_s`) and f64 (`_d`).
pub const SOURCE: &str = r#"
template <typename T> __device__ void eye(T* a, long long n) {
    long long total = n * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        a[i] = (i % n == i / n) ? T(1) : T(0);
}
template <typename T> __device__ void zero_lower(T* a, long long n) {
    long long total = n * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        if (i % n > i / n) a[i] = T(0);
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
    atomicMax(&out[0], worst);
    atomicMax(&out[1], big);
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
extern "C" __global__ void gb_eye_s(float* a, long long n) { eye(a, n); }
extern "C" __global__ void gb_eye_d(double* a, long long n) { eye(a, n); }
extern "C" __global__ void gb_zero_lower_s(float* a, long long n) { zero_lower(a, n); }
extern "C" __global__ void gb_zero_lower_d(double* a, long long n) { zero_lower(a, n); }
extern "C" __global__ void gb_asym_s(const float* a, long long n, unsigned int* out) { asym(a, n, out); }
extern "C" __global__ void gb_asym_d(const double* a, long long n, unsigned long long* out) { asym(a, n, out); }
extern "C" __global__ void gb_diag_range_s(const float* a, long long n, unsigned int* out) { diag_range(a, n, out); }
extern "C" __global__ void gb_diag_range_d(const double* a, long long n, unsigned long long* out) { diag_range(a, n, out); }
"#;

/// Every entry point in [`SOURCE`].
pub const ENTRIES: &[&str] = &[
    "gb_eye_s",
    "gb_eye_d",
    "gb_zero_lower_s",
    "gb_zero_lower_d",
    "gb_asym_s",
    "gb_asym_d",
    "gb_diag_range_s",
    "gb_diag_range_d",
];
