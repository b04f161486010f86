# cuSOLVER dpotrf on one Gram matrix, upper against lower fill mode (column-major),
# and cuBLAS trsm on the identity by fill mode: run on the GPU machine with CuPy
# (python3 scripts/cusolver_uplo_probe.py); docs/perf/stats.md, session 8.
import time, cupy
from cupy_backends.cuda.libs import cusolver
from cupy.cuda import device
def timeit(f, reps=20):
    for _ in range(3): f()
    cupy.cuda.Device().synchronize(); s = time.perf_counter()
    for _ in range(reps): f()
    cupy.cuda.Device().synchronize(); return (time.perf_counter() - s) / reps * 1e3
h = device.get_cusolver_handle()
for n, p in [(4096, 1024), (4096, 512), (20000, 50)]:
    X = cupy.random.standard_normal((n, p))
    G = cupy.asfortranarray(X.T @ X)
    info = cupy.zeros(1, dtype=cupy.int32)
    out = {"p": p}
    for name, uplo in [("upper", 1), ("lower", 0)]:  # CUBLAS_FILL_MODE_UPPER = 1
        lwork = cusolver.dpotrf_bufferSize(h, uplo, p, G.data.ptr, p)
        work = cupy.empty(lwork, dtype=cupy.float64)
        A = G.copy(order="F")
        def run():
            A[...] = G
            cusolver.dpotrf(h, uplo, p, A.data.ptr, p, work.data.ptr, lwork, info.data.ptr)
        out[name] = round(timeit(run), 3)
    out["copy_only"] = round(timeit(lambda: A.__setitem__(Ellipsis, G)), 3)
    print(out, flush=True)
import cupyx.scipy.linalg as csl
for p in [1024, 512]:
    X = cupy.random.standard_normal((4096, p))
    G = X.T @ X
    L = cupy.linalg.cholesky(G)
    R = cupy.asfortranarray(L.T)
    Lf = cupy.asfortranarray(L)
    I = cupy.asfortranarray(cupy.eye(p))
    print({"p": p,
           "trsm_upper_identity": round(timeit(lambda: csl.solve_triangular(R, I, lower=False)), 3),
           "trsm_lower_identity": round(timeit(lambda: csl.solve_triangular(Lf, I, lower=True)), 3),
           "trsm_upper_trans_identity": round(timeit(lambda: csl.solve_triangular(Lf, I, trans=1, lower=True)), 3)}, flush=True)
