"""The CUDA permute kernels (crates/gearbox-cuda/src/permute.rs, SOURCE)
on a real GPU through CuPy, with no Rust build: each entry point run on
the plan gearbox-core makes (runtime::copies::permute_launch, re-derived
here) for transposes, 3-D and 4-D permutations and flips of random data,
compared bit for bit with NumPy's transpose and flip of the column-major
array; then a 6000 x 6000 float32 transpose timed against PyTorch's
x.t().contiguous(). Prints a line per check and one JSON object of
timings (ms, median of 20 after 3 warm-ups). Run from the repository root
on a machine with CuPy and a GPU: python3 scripts/check_permute_cuda.py"""
import itertools
import json
import re
import statistics
import sys

import numpy as np

TILE, TILE_MIN, AXES = 32, 8, 8


def source():
    text = open("crates/gearbox-cuda/src/permute.rs").read()
    return re.search(r'pub const SOURCE: &str = r#"(.*?)"#;', text, re.S).group(1)


def plan(shape, perm, flips, size):
    """permute_launch: merged axes, tiled or strided, the parameter block."""
    strides = list(itertools.accumulate([1] + list(shape[:-1]), lambda a, b: a * b))
    numel = int(np.prod(shape)) if shape else 1
    dims, ist, base = [], [], 0
    if numel > 0:
        for p, f in zip(perm, flips):
            d, s = shape[p], strides[p]
            if d == 1:
                continue
            if f:
                base += (d - 1) * s
                s = -s
            if dims and ist[-1] * dims[-1] == s:
                dims[-1] *= d
            else:
                dims.append(d)
                ist.append(s)
    ost = list(itertools.accumulate([1] + dims[:-1], lambda a, b: a * b))
    axes = list(range(len(dims)))
    unit = next((k for k, s in enumerate(ist) if abs(s) == 1), None)
    tiled = unit is not None and unit > 0 and dims[0] >= TILE_MIN and dims[unit] >= TILE_MIN
    if tiled:
        axes.remove(unit)
        axes.insert(1, unit)
    d8 = [dims[a] for a in axes] + [1] * (AXES - len(dims))
    i8 = [ist[a] for a in axes] + [0] * (AXES - len(dims))
    o8 = [ost[a] for a in axes] + [0] * (AXES - len(dims))
    tiles = 0
    if tiled:
        tiles = -(-d8[0] // TILE) * -(-d8[1] // TILE) * int(np.prod(d8[2:]))
    width = "32" if numel <= 1 << 30 else ""
    entry = f"gb_{'transpose' if tiled else 'permute'}{width}_{size}"
    params = np.array([numel, base, len(dims), tiles] + d8 + i8 + o8, dtype=np.int64)
    # permute.rs's grid_blocks: the strided copy moves 4 elements per
    # thread (2 of 8 bytes).
    blocks = tiles if tiled else -(-numel // (256 * (2 if size == 8 else 4)))
    return entry, params, max(1, min(blocks, 1 << 20)), numel


def struct(params):
    dt = np.dtype([(f"f{i}", np.int64) for i in range(len(params))], align=True)
    return np.frombuffer(params.tobytes(), dtype=dt)[0]


def run(cp, module, entry, params, blocks, x, n, wide):
    if wide:
        entry = entry.replace("32_", "_")
    y = cp.empty(max(n, 1), dtype=x.dtype)
    module.get_function(entry)((blocks,), (256,), (x, y, struct(params)))
    return y[:n]


def main():
    import cupy as cp

    module = cp.RawModule(code=source(), options=("-std=c++17",))
    rng = np.random.default_rng(5)
    kinds = {1: np.uint8, 4: np.uint32, 8: np.uint64}
    cases = []
    for n in (1, 31, 32, 33, 127, 129):
        cases.append(((n, n), (1, 0), (False, False)))
    cases += [((1000, 3), (1, 0), (False, False)), ((3, 1000), (1, 0), (False, False))]
    cases += [((6000, 600), (1, 0), (False, True)), ((0, 5), (1, 0), (False, False))]
    for perm in itertools.permutations(range(3)):
        cases.append(((40, 9, 35), perm, (False, False, False)))
        cases.append(((40, 9, 35), perm, (True, False, True)))
    for perm in [(3, 1, 0, 2), (1, 0, 2, 3), (0, 3, 1, 2), (3, 2, 1, 0)]:
        cases.append(((17, 33, 3, 12), perm, (False, True, False, False)))
    for axis in range(3):
        cases.append(((64, 50, 7), (0, 1, 2), tuple(i == axis for i in range(3))))
    failed = 0
    for c, (shape, perm, flips) in enumerate(cases):
        for size, wide in [(1, False), (4, c % 2 == 0), (8, c % 2 == 1)]:
            t = kinds[size]
            numel = int(np.prod(shape))
            host = rng.integers(1, np.iinfo(t).max, numel, dtype=t, endpoint=True)
            a = host.reshape(shape, order="F")
            want = np.transpose(a, perm)
            for i, f in enumerate(flips):
                if f:
                    want = np.flip(want, i)
            want = want.ravel(order="F")
            entry, params, blocks, n = plan(shape, perm, flips, size)
            got = run(cp, module, entry, params, blocks, cp.asarray(host), n, wide).get()
            ok = np.array_equal(got, want)
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {entry}{' (64-bit)' if wide else ''} "
                  f"{shape} perm {perm} flips {flips}")
    # Timing: the 6000 x 6000 float32 transpose.
    out = {}
    x = cp.asarray(rng.standard_normal(6000 * 6000, dtype=np.float32))
    entry, params, blocks, n = plan((6000, 6000), (1, 0), (False, False), 4)
    out["permute_cuda/check_failures"] = failed

    def timed(f):
        for _ in range(3):
            f()
        ms = []
        for _ in range(20):
            s, e = cp.cuda.Event(), cp.cuda.Event()
            s.record()
            f()
            e.record()
            e.synchronize()
            ms.append(cp.cuda.get_elapsed_time(s, e))
        return statistics.median(ms)

    out["transpose_6000x6000_f32/gearbox_kernel_ms"] = timed(
        lambda: run(cp, module, entry, params, blocks, x, n, False))
    flip = plan((6000, 6000), (0, 1), (False, True), 4)
    out["flip1_6000x6000_f32/gearbox_kernel_ms"] = timed(
        lambda: run(cp, module, flip[0], flip[1], flip[2], x, flip[3], False))
    try:
        import torch

        tx = torch.as_tensor(x.reshape(6000, 6000), device="cuda")
        out["transpose_6000x6000_f32/torch_ms"] = timed(lambda: tx.t().contiguous())
        out["flip1_6000x6000_f32/torch_ms"] = timed(lambda: torch.flip(tx, [0]))
    except Exception as e:  # noqa: BLE001 - timing the peer is optional
        out["torch"] = str(e)
    out["device"] = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(json.dumps(out))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
