// prelude.cuh: constants and macros shared by every nmath device function.
// Assembled first into every kernel that calls an nmath function. Compiles
// under NVRTC (no system headers) and, for the host tests, under g++.
#ifndef __CUDACC__
#include <math.h>
#define __device__
#endif

#define GB_DBL_EPSILON 2.220446049250313080847e-16
#define GB_DBL_MIN 2.2250738585072014e-308
#define GB_DBL_MAX 1.7976931348623157e+308
#define GB_POSINF (1.0 / 0.0)
#define GB_NEGINF (-1.0 / 0.0)
#define GB_NAN (0.0 / 0.0)
