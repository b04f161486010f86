// prelude.h: constants and macros shared by every nmath device function.
// Assembled first into every kernel that calls an nmath function. One
// source for three compilers: CUDA C++ under NVRTC (__CUDACC__, no system
// headers), OpenCL C 1.2 with cl_khr_fp64 (__OPENCL_VERSION__), and C++
// under g++ for the host tests (neither). The function files use only the
// portable subset: no overloading, references, templates, `bool`,
// `long long` or `static` locals, and these qualifiers in place of CUDA's:
//   GB_FN        a device function: CUDA __device__; OpenCL and host nothing
//   GB_NOINLINE  compile once and call, not inline: CUDA __noinline__,
//                OpenCL __attribute__((noinline)), host nothing
//   GB_TABLE     a read-only table at file scope (OpenCL allows neither
//                `static` locals nor __constant variables in functions):
//                CUDA static __device__ const, OpenCL __constant, host
//                static const. Index it where it is declared; passing it
//                through a plain `const double *` fails in OpenCL (the
//                pointer would be private, the table constant).
#if defined(__OPENCL_VERSION__)
// Results must round as on the CPU: no contraction to fused multiply-adds
// (CUDA: NVRTC's --fmad=false; host: -ffp-contract=off).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF
#define GB_FN
#define GB_NOINLINE __attribute__((noinline))
#define GB_TABLE __constant
// OpenCL C has no nearbyint; rint rounds the same way (to nearest, ties to
// even) and OpenCL raises no floating-point exceptions.
#define nearbyint(x) rint(x)
#elif defined(__CUDACC__)
#define GB_FN __device__
#define GB_NOINLINE __noinline__
#define GB_TABLE static __device__ const
#else
#include <math.h>
#define GB_FN
#define GB_NOINLINE
#define GB_TABLE static const
#endif

#define GB_DBL_EPSILON 2.220446049250313080847e-16
#define GB_DBL_MIN 2.2250738585072014e-308
#define GB_DBL_MAX 1.7976931348623157e+308
// On the device, from their bits: NVRTC does not fold 0.0 / 0.0 or
// 1.0 / 0.0, so each use would call the full division routine (OpenCL C's
// 64-bit integer is `long`).
#if defined(__OPENCL_VERSION__)
#define GB_POSINF as_double(0x7ff0000000000000L)
#define GB_NEGINF as_double((long)0xfff0000000000000UL)
#define GB_NAN as_double(0x7ff8000000000000L)
#elif defined(__CUDACC__)
#define GB_POSINF __longlong_as_double(0x7ff0000000000000LL)
#define GB_NEGINF __longlong_as_double((long long)0xfff0000000000000ULL)
#define GB_NAN __longlong_as_double(0x7ff8000000000000LL)
#else
#define GB_POSINF (1.0 / 0.0)
#define GB_NEGINF (-1.0 / 0.0)
#define GB_NAN (0.0 / 0.0)
#endif

// R constants (Rmath.h) used by the distribution functions. math.h (host)
// and OpenCL C define some M_* names, hence the guards.
#ifndef M_LN2
#define M_LN2 0.693147180559945309417232121458
#endif
#ifndef M_PI
#define M_PI 3.141592653589793238462643383280
#endif
#ifndef M_SQRT2
#define M_SQRT2 1.414213562373095048801688724210
#endif
#ifndef M_SQRT_PI
#define M_SQRT_PI 1.772453850905516027298167483341
#endif
#ifndef M_SQRT_32
#define M_SQRT_32 5.656854249492380195206754896838
#endif
#ifndef M_2PI
#define M_2PI 6.283185307179586476925286766559
#endif
#ifndef M_LN_2PI
#define M_LN_2PI 1.837877066409345483560659472811
#endif
#ifndef M_SQRT_2PI
#define M_SQRT_2PI 2.506628274631000502415765284811
#endif
#ifndef M_1_SQRT_2PI
#define M_1_SQRT_2PI 0.398942280401432677939946059934
#endif
#ifndef M_LN_SQRT_2PI
#define M_LN_SQRT_2PI 0.918938533204672741780329736406
#endif

// R's dpq.h for distribution functions: they read the caller's `int log_p`
// and `int lower_tail` (GB_PD_*: the log_p versions of R_D_*).
#define GB_PD__0 (log_p ? GB_NEGINF : 0.)
#define GB_PD__1 (log_p ? 0. : 1.)
#define GB_DT_0 (lower_tail ? GB_PD__0 : GB_PD__1)
#define GB_DT_1 (lower_tail ? GB_PD__1 : GB_PD__0)
#define GB_D_Lval(p) (lower_tail ? (p) : (0.5 - (p) + 0.5))
#define GB_D_Cval(p) (lower_tail ? (0.5 - (p) + 0.5) : (p))
#define GB_PD_exp(x) (log_p ? (x) : exp(x))
#define GB_DT_qIv(p) (log_p ? (lower_tail ? exp(p) : - expm1(p)) : GB_D_Lval(p))
#define GB_DT_CIv(p) (log_p ? (lower_tail ? -expm1(p) : exp(p)) : GB_D_Cval(p))

#ifndef M_LN_SQRT_PId2
#define M_LN_SQRT_PId2 0.225791352644727432363097614947
#endif

// R's dpq.h density values; they read the caller's `int give_log`.
#define GB_D__0 (give_log ? GB_NEGINF : 0.)           /* R_D__0 */
#define GB_D__1 (give_log ? 0. : 1.)                  /* R_D__1 */
#define GB_D_exp(x) (give_log ? (x) : exp(x))         /* R_D_exp */
#define GB_D_val(x) (give_log ? log(x) : (x))         /* R_D_val */
// R_nonint: x farther than 1e-7 max(1, |x|) from the nearest integer
// (ties to even, R_forceint); false for infinite x.
#define GB_NONINT(x) (fabs((x) - nearbyint(x)) > 1e-7 * fmax(1., fabs(x)))

// The GLM terms' certified closed forms (glm::hoisted): the unit roundoff
// 2^-53, and 2^-47, the largest error bound, relative to the closed form's
// magnitude, that certifies it within 2^-46 of the exact value.
#define GB_UNIT_ROUNDOFF 1.1102230246251565404236316680908203125e-16
#define GB_GLM_CERTIFIED 7.105427357601001858711242675781e-15
