"""Compiles Gearbox's CUDA sources with NVRTC on a machine without a GPU
(NVRTC is a host library): the nmath device library assembled whole
(crates/gearbox-stats/device, callees first, long functions GB_NOINLINE, as
src/device.rs assembles it) and, when given, a folder of catalog kernels
written by crates/gearbox-cuda/tests/nvrtc_bundle.rs. Exits 1 on any
compile error, printing NVRTC's log.

    pip download nvidia-cuda-nvrtc-cu12 --no-deps -d /tmp/nvrtc
    (cd /tmp/nvrtc && unzip -q -o *.whl -d x)
    GEARBOX_CUDA_BUNDLE=/tmp/gbk cargo test -p gearbox-cuda --test nvrtc_bundle -- --ignored
    python3 scripts/nvrtc_compile_check.py /tmp/nvrtc/x/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 [/tmp/gbk]
"""
import ctypes
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEVICE = os.path.join(ROOT, "crates", "gearbox-stats", "device")
NOINLINE_LINES = 25  # src/device.rs NOINLINE_LINES


def compile_source(lib, src, name, opts):
    """NVRTC's result code and log for `src`."""
    prog = ctypes.c_void_p()
    lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None)
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    code = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return code, log.value.decode(errors="replace")


def device_library():
    """The whole device library, callees first, with a kernel that takes
    every function's address (so each is compiled)."""
    files = {os.path.basename(p)[:-2]: open(p).read() for p in glob.glob(os.path.join(DEVICE, "gb_*.c"))}
    deps = {n: (re.search(r"// @depends(.*)", s) or [None, ""])[1].split() for n, s in files.items()}
    order, state = [], {}

    def visit(n):
        if state.get(n) == 2:
            return
        if state.get(n) == 1:
            raise SystemExit(f"dependency cycle through {n}")
        state[n] = 1
        for d in deps[n]:
            visit(d)
        state[n] = 2
        order.append(n)

    for n in sorted(files):
        visit(n)

    def inlining(src, name):
        if len(src.splitlines()) <= NOINLINE_LINES:
            return src
        call = f" {name}("
        return "\n".join(
            l.replace("GB_FN ", "GB_FN GB_NOINLINE ", 1) if l.startswith("GB_FN ") and call in l else l
            for l in src.splitlines()
        ) + "\n"

    src = open(os.path.join(DEVICE, "prelude.h")).read() + "\n"
    src += "\n".join(inlining(files[n], n) for n in order)
    src += '\nextern "C" __global__ void gb_touch(double* out) {\n'
    src += "".join(f"  out[0] += (double)(unsigned long long)(void*)&{n};\n" for n in order)
    return src + "}\n", len(order)


def main():
    lib = ctypes.CDLL(sys.argv[1])
    failed = 0
    src, count = device_library()
    code, log = compile_source(lib, src, "nmath.cu", ["-std=c++17", "--gpu-architecture=compute_90", "--fmad=false"])
    print(f"device library: {count} functions, {'ok' if code == 0 else 'FAILED'}")
    if code or log.strip():
        print(log[:8000])
    failed += code != 0
    if len(sys.argv) > 2:
        kernels = sorted(glob.glob(os.path.join(sys.argv[2], "*.cu")))
        bad = 0
        for f in kernels:
            text = open(f).read()
            opts = ["-std=c++17", "--gpu-architecture=compute_90"] + (["--fmad=false"] if "--fmad=false" in text else [])
            code, log = compile_source(lib, text, os.path.basename(f), opts)
            if code:
                bad += 1
                print(f, log[:2000])
        print(f"catalog kernels: {len(kernels)}, {bad} failed")
        failed += bad
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
