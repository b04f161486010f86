"""Peer of crates/gearbox/examples/ops_bench.rs: the cells of
scripts/ops_cases.json in PyTorch on CUDA (eager, and torch.compile of the
same functions) and in NumPy on the CPU, the inputs resident. Where there
is a choice of formulation (x.var vs torch.var_mean, softmax vs its
formula, t().contiguous() vs T.clone(...), ...) each is timed, eager and
compiled, and a cell keeps the fastest, naming it (`form`); every form's
median is kept too (`forms`).

Gearbox is column-major: its R x C matrix is a row-major C x R array here,
so its shape is reversed and its axis k of an n-d array is dim n-1-k
(its rows are our last dim). Its `take` sends the positions from host
memory in each call, so the PyTorch forms do too.

Timing: CUDA events around each run, median of `reps` (the list's, or
GEARBOX_OPS_REPS) after a warm run (which compiles); NumPy: wall time,
median of GEARBOX_OPS_NUMPY_REPS (default 5). The copy bandwidth of each
peer is measured in the same run (x + 0 and clone/copy of `copy_bytes`).

Usage: python3 scripts/bench_ops_torch.py [--quick] [--only SUB,SUB]
[--scale S] [--peers torch,numpy] [--deadline SECONDS] [--no-compile]
(or GEARBOX_OPS_QUICK, _ONLY, _SCALE, _PEERS, _DEADLINE_S,
GEARBOX_OPS_COMPILE=0; GEARBOX_OPS_COMPILE_MODE picks torch.compile's mode,
default "default"). Without torch or CUDA only NumPy runs. Prints one JSON
object: {"peers", "copy": {peer: {...}}, "cells": {peer: {key: {ms, form,
forms, eager_ms, compile_ms} or {error} or {skipped}}}}."""
import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ops_cases  # noqa: E402


def env(name, default=None):
    v = os.environ.get(name)
    return v if v not in (None, "") else default


def settings():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", default=env("GEARBOX_OPS_QUICK", "0") != "0")
    p.add_argument("--only", default=env("GEARBOX_OPS_ONLY", ""))
    p.add_argument("--scale", type=float, default=float(env("GEARBOX_OPS_SCALE", "1")))
    p.add_argument("--peers", default=env("GEARBOX_OPS_PEERS", "torch,numpy"))
    p.add_argument("--deadline", type=float, default=float(env("GEARBOX_OPS_DEADLINE_S", "0")) or None)
    p.add_argument("--reps", type=int, default=int(env("GEARBOX_OPS_REPS", "0")) or None)
    p.add_argument("--no-compile", dest="compile", action="store_false",
                   default=env("GEARBOX_OPS_COMPILE", "1") != "0")
    a = p.parse_args()
    a.only = [s for s in a.only.replace(" ", ",").split(",") if s]
    a.peers = [s for s in a.peers.replace(" ", ",").split(",") if s]
    a.scale = min(max(a.scale, 1e-12), 1.0)
    return a


def positions(length, n, seed=9):
    """`n` positions below `length` drawn with replacement (int64, for
    sending as Gearbox's take sends its positions)."""
    return np.random.default_rng(seed).integers(0, max(length, 1), n, dtype=np.int64)


class Lib:
    """The array library's names that the forms need (torch or numpy)."""

    def __init__(self, name):
        self.name = name
        if name == "torch":
            import torch
            import torch.nn.functional as F
            self.t, self.F = torch, F
        else:
            self.t = None


def forms(op, dims, inp, lib, at):
    """{label: (fn, args)} for cell `op` on a Gearbox shape `dims`."""
    n = len(dims)
    parts = op.split(".")
    family, name = parts[0], parts[1] if len(parts) > 1 else ""
    arg = parts[2] if len(parts) > 2 else None
    dim = None if arg in (None, "all") else (n - 1 - int(arg) if arg.isdigit() else None)
    x = inp("x")
    T = lib.name == "torch"
    if T:
        torch, F = lib.t, lib.F
    if family == "unary":
        a = inp("pos") if name in ("sqrt", "log", "log1p") else inp("mask") if name == "not" else x
        if T:
            f = {"not": torch.logical_not, "softplus": F.softplus}.get(name) or getattr(torch, name)
            return {f"torch.{name}": (lambda a: f(a), (a,))}
        f = {"neg": np.negative, "not": np.logical_not, "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
             "softplus": lambda v: np.logaddexp(0, v)}.get(name) or getattr(np, name)
        label = {"not": "np.logical_not", "neg": "np.negative", "sigmoid": "1 / (1 + exp(-x))",
                 "softplus": "np.logaddexp(0, x)"}.get(name, f"np.{name}")
        return {label: (f, (a,))}
    if family in ("binary", "binary_row", "binary_col"):
        if family == "binary":
            a, b = ((inp("mask"), inp("ymask")) if name in ("and", "or")
                    else (inp("pos"), inp("y")) if name == "pow" else (x, inp("y")))
        else:
            a, b = x, inp("row" if family == "binary_row" else "col")
        names = {"and": "logical_and", "or": "logical_or", "sub": "subtract", "mul": "multiply",
                 "div": "divide", "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                 "gt": "greater", "ge": "greater_equal", "pow": "power", "atan2": "arctan2"}
        if T:
            f = getattr(torch, {"and": "logical_and", "or": "logical_or"}.get(name, name))
            return {f"torch.{name}": (lambda a, b: f(a, b), (a, b))}
        return {f"np.{names.get(name, name)}": (getattr(np, names.get(name, name)), (a, b))}
    if family == "reduce":
        a = inp("mask") if name in ("any", "all") else x
        kd = dim is not None
        if name == "logsumexp":
            dims = dim if kd else tuple(range(n))

            def shifted_lse(a):
                m = a.amax(dims, keepdim=kd) if T else a.max(axis=dim, keepdims=kd)
                mb = m if kd else m.reshape((1,) * n)
                s = (a - mb).exp().sum(dims, keepdim=kd) if T else np.exp(a - mb).sum(axis=dim, keepdims=kd)
                return (s.log() if T else np.log(s)) + m
            f = {"max + log(sum(exp(x - max)))": (shifted_lse, (a,))}
            if T:
                f["torch.logsumexp"] = (lambda a: torch.logsumexp(a, dims, keepdim=kd), (a,))
            return f
        if T:
            if name in ("var", "sd"):
                plain = torch.var if name == "var" else torch.std
                joint = torch.var_mean if name == "var" else torch.std_mean
                if kd:
                    return {f"x.{plain.__name__}(d)": (lambda a: plain(a, dim, keepdim=True), (a,)),
                            f"torch.{joint.__name__}": (lambda a: joint(a, dim, keepdim=True)[0], (a,))}
                return {f"x.{plain.__name__}()": (lambda a: plain(a), (a,)),
                        f"torch.{joint.__name__}": (lambda a: joint(a)[0], (a,))}
            if name in ("min", "max"):
                amin = torch.amin if name == "min" else torch.amax
                plain = torch.min if name == "min" else torch.max
                if kd:
                    return {f"torch.a{name}": (lambda a: amin(a, dim, keepdim=True), (a,)),
                            f"torch.{name}(d).values": (lambda a: plain(a, dim, keepdim=True).values, (a,))}
                return {f"torch.{name}": (lambda a: plain(a), (a,)),
                        f"torch.a{name}": (lambda a: amin(a), (a,))}
            f = getattr(torch, {"sd": "std"}.get(name, name))
            if kd:
                return {f"torch.{name}(d)": (lambda a: f(a, dim, keepdim=True), (a,))}
            return {f"torch.{name}": (lambda a: f(a), (a,))}
        f = {"sd": np.std, "var": np.var}.get(name) or getattr(np, name)
        extra = {"ddof": 1} if name in ("var", "sd") else {}
        if name in ("argmin", "argmax"):
            return {f"np.{name}": (lambda a: f(a, axis=dim), (a,))}
        return {f"np.{f.__name__}": (lambda a: f(a, axis=dim, keepdims=True, **extra), (a,))}
    if family == "scan":
        if T:
            f = getattr(torch, name)
            return {f"torch.{name}": (lambda a: f(a, dim), (x,))}
        f = getattr(np, name)
        return {f"np.{name}": (lambda a: f(a, axis=dim), (x,))}
    if family == "take":
        dim = n - 1 - int(name)
        if T:
            def sent():
                return torch.from_numpy(at).to(x.device, non_blocking=False)
            idx = [slice(None)] * n
            def indexing(a):
                i = list(idx)
                i[dim] = sent()
                return a[tuple(i)]
            return {"index_select, positions sent": (lambda a: torch.index_select(a, dim, sent()), (x,)),
                    "indexing, positions sent": (indexing, (x,))}
        idx = [slice(None)] * n
        idx[dim] = at
        return {"np.take": (lambda a: np.take(a, at, axis=dim), (x,)),
                "indexing": (lambda a: a[tuple(idx)], (x,))}
    if family == "copy":
        if name == "clone":
            if T:
                return {"x + 0": (lambda a: a + 0, (x,)), "x.clone()": (lambda a: a.clone(), (x,))}
            return {"x + 0": (lambda a: a + 0, (x,)), "x.copy()": (lambda a: a.copy(), (x,))}
        if name == "t":
            if T:
                return {"x.t().contiguous()": (lambda a: a.t().contiguous(), (x,)),
                        "x.T.clone(contiguous_format)": (
                            lambda a: a.T.clone(memory_format=torch.contiguous_format), (x,))}
            return {"np.ascontiguousarray(x.T)": (lambda a: np.ascontiguousarray(a.T), (x,)),
                    "x.T.copy()": (lambda a: a.T.copy(), (x,))}
        if name == "transpose":
            perm = [int(c) for c in arg]
            p = [n - 1 - perm[n - 1 - j] for j in range(n)]
            if T:
                return {"x.permute(p).contiguous()": (lambda a: a.permute(p).contiguous(), (x,)),
                        "x.permute(p).clone(contiguous_format)": (
                            lambda a: a.permute(p).clone(memory_format=torch.contiguous_format), (x,))}
            return {"np.ascontiguousarray(x.transpose(p))": (
                        lambda a: np.ascontiguousarray(a.transpose(p)), (x,)),
                    "x.transpose(p).copy()": (lambda a: a.transpose(p).copy(), (x,))}
        if name == "flip":
            if T:
                return {"torch.flip": (lambda a: torch.flip(a, [dim]), (x,))}
            return {"np.flip(x).copy()": (lambda a: np.flip(a, dim).copy(), (x,))}
        if name == "broadcast":
            v = inp("row" if arg == "row" else "col")
            full = list(reversed(dims))
            if T:
                reps = [f // s for f, s in zip(full, v.shape)]
                return {"expand().contiguous()": (lambda a: a.expand(*full).contiguous(), (v,)),
                        "repeat": (lambda a: a.repeat(*reps), (v,))}
            return {"np.broadcast_to().copy()": (lambda a: np.broadcast_to(a, full).copy(), (v,))}
        if name == "slice":
            k = 1 if arg == "cols" else 0
            d = n - 1 - k
            idx = [slice(None)] * n
            idx[d] = slice(min(1, dims[k]), max(1, dims[k] - 1))
            idx = tuple(idx)
            if T:
                return {"x[s].clone(contiguous_format)": (
                            lambda a: a[idx].clone(memory_format=torch.contiguous_format), (x,)),
                        "x[s].contiguous() (clone if already)": (
                            lambda a: (lambda s: s.clone() if s.is_contiguous() else s.contiguous())(a[idx]),
                            (x,))}
            return {"x[s].copy()": (lambda a: a[idx].copy(), (x,))}
    if family == "comp":
        if name in ("outer",):
            u, v = inp("u"), inp("v")
            if T:
                return {"torch.outer(v, u)": (lambda u, v: torch.outer(v, u), (u, v)),
                        "v[:, None] * u[None, :]": (lambda u, v: v[:, None] * u[None, :], (u, v))}
            return {"np.outer(v, u)": (lambda u, v: np.outer(v, u), (u, v)),
                    "v[:, None] * u[None, :]": (lambda u, v: v[:, None] * u[None, :], (u, v))}
        if name == "pdist":
            # Gearbox's R x C points (rows) are our C x R: points are columns.
            if T:
                def manual(a):
                    p = a.t()
                    sq = (a * a).sum(0)
                    return sq[:, None] + sq[None, :] - 2 * (p @ a)
                return {"|p|^2 + |q|^2 - 2 p.q": (manual, (x,)),
                        "torch.cdist(P, P)^2": (lambda a: torch.cdist(a.t(), a.t()).square(), (x,))}
            def np_manual(a):
                sq = (a * a).sum(0)
                return sq[:, None] + sq[None, :] - 2 * (a.T @ a)
            return {"|p|^2 + |q|^2 - 2 p.q": (np_manual, (x,))}
        if name == "masked_sum":
            if T:
                return {"torch.where(x > 0, x, 0).sum()": (lambda a: torch.where(a > 0, a, 0).sum(), (x,)),
                        "(x * (x > 0)).sum()": (lambda a: (a * (a > 0)).sum(), (x,))}
            return {"np.where(x > 0, x, 0).sum()": (lambda a: np.where(a > 0, a, 0).sum(), (x,)),
                    "(x * (x > 0)).sum()": (lambda a: (a * (a > 0)).sum(), (x,))}
        d = dim
        if T:
            mean = lambda a: a.mean(d, keepdim=True)  # noqa: E731
            amax = lambda a: a.amax(d, keepdim=True)  # noqa: E731
            lsum = lambda a: a.sum(d, keepdim=True)  # noqa: E731
            log, exp = torch.log, torch.exp
        else:
            mean = lambda a: a.mean(d, keepdims=True)  # noqa: E731
            amax = lambda a: a.max(d, keepdims=True)  # noqa: E731
            lsum = lambda a: a.sum(d, keepdims=True)  # noqa: E731
            log, exp = np.log, np.exp
        if name == "center":
            return {"x - x.mean(d)": (lambda a: a - mean(a), (x,))}
        if name == "standardize":
            if T:
                def joint(a):
                    s, m = torch.std_mean(a, d, keepdim=True)
                    return (a - m) / s
                return {"(x - mean) / std": (lambda a: (a - mean(a)) / a.std(d, keepdim=True), (x,)),
                        "torch.std_mean": (joint, (x,))}
            return {"(x - mean) / std": (lambda a: (a - mean(a)) / a.std(d, ddof=1, keepdims=True), (x,))}

        def manual_softmax(a):
            e = exp(a - amax(a))
            return e / lsum(e)

        def manual_lse(a):
            m = amax(a)
            return log(lsum(exp(a - m))) + m

        def manual_log_softmax(a):
            s = a - amax(a)
            return s - log(lsum(exp(s)))
        if name == "softmax":
            f = {"exp(x - max) / sum": (manual_softmax, (x,))}
            if T:
                f["torch.softmax"] = (lambda a: torch.softmax(a, d), (x,))
            return f
        if name == "log_softmax":
            f = {"x - max - log(sum(exp))": (manual_log_softmax, (x,))}
            if T:
                f["torch.log_softmax"] = (lambda a: torch.log_softmax(a, d), (x,))
            return f
        if name == "logsumexp":
            f = {"max + log(sum(exp(x - max)))": (manual_lse, (x,))}
            if T:
                f["torch.logsumexp"] = (lambda a: torch.logsumexp(a, d, keepdim=True), (x,))
            return f
    raise ValueError(f"no case {op}")


def cuda_ms(fn, args, reps):
    """Median ms by CUDA events of `reps` runs after a warm one."""
    import torch
    fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(*args)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def wall_ms(fn, args, reps, sync=lambda: None):
    """Median wall ms of `reps` runs after a warm one, each ended by
    `sync()` (for PyTorch on CUDA `torch.cuda.synchronize`: what
    ops_bench.rs times for Gearbox, launch, work and synchronization,
    where CUDA events leave the launch out)."""
    fn(*args)
    sync()
    times = []
    for _ in range(reps):
        s = time.perf_counter()
        fn(*args)
        sync()
        times.append((time.perf_counter() - s) * 1e3)
    return statistics.median(times)


def cuda_wall_ms(fn, args, reps):
    """`wall_ms` with a CUDA synchronization ending each run."""
    import torch
    return wall_ms(fn, args, reps, torch.cuda.synchronize)


class Inputs:
    """The inputs of one shape and dtype, made on first use (as ops_bench.rs's)."""

    def __init__(self, lib, dims, dtype, rng_seed=5):
        self.lib, self.dims, self.dtype = lib, list(dims), dtype
        self.made = {}

    def random(self, shape, seed):
        rng = np.random.default_rng(seed)
        dt = np.float32 if self.dtype == "f32" else np.float64
        a = rng.standard_normal(tuple(shape), dtype=dt)
        if self.lib.name == "torch":
            return self.lib.t.from_numpy(a).cuda()
        return a

    def __call__(self, role):
        if role in self.made:
            return self.made[role]
        d = self.dims
        r, c = d[0], (d[1] if len(d) > 1 else 1)
        rev = list(reversed(d))
        a = {
            "x": lambda: self.random(rev, 5),
            "y": lambda: self.random(rev, 6),
            "row": lambda: self.random([c, 1], 7),  # Gearbox's 1 x C
            "col": lambda: self.random([1, r], 8),  # Gearbox's R x 1
            "u": lambda: self.random([r], 7),
            "v": lambda: self.random([c], 8),
            "pos": lambda: abs(self("x")) + 0.5,
            "mask": lambda: self("x") > 0,
            "ymask": lambda: self("y") > 0,
        }[role]()
        self.made[role] = a
        return a


def copy_bandwidth(lib, nbytes, reps):
    n = max(1, nbytes // 4)
    inp = Inputs(lib, [n], "f32")
    x = inp("x")
    ways = {"x + 0": lambda a: a + 0,
            "clone": (lambda a: a.clone()) if lib.name == "torch" else (lambda a: a.copy())}
    timer = cuda_ms if lib.name == "torch" else wall_ms
    ms, way = min((timer(f, (x,), reps), w) for w, f in ways.items())
    out = {"ms": ms, "bytes": 2 * n * 4, "gbs": 2 * n * 4 / ms / 1e6, "form": way}
    if lib.name == "torch":
        # Host-to-device and back from and into ordinary (pageable) host
        # memory, as ops_bench.rs times Gearbox's: synchronized wall time.
        t = lib.t
        host = np.full(n, 1.5, dtype=np.float32)
        up = cuda_wall_ms(lambda a: t.from_numpy(a).to("cuda"), (host,), reps)
        down = cuda_wall_ms(lambda a: a.cpu(), (x,), reps)
        out["upload_gbs"], out["download_gbs"] = n * 4 / up / 1e6, n * 4 / down / 1e6
    return out


def main():
    a = settings()
    spec = ops_cases.load()
    reps = a.reps or spec.get("reps", 10)
    np_reps = int(env("GEARBOX_OPS_NUMPY_REPS", "5"))
    cells = [c for c in ops_cases.expand(spec, a.quick, a.scale)
             if not a.only or any(o in c["key"] for o in a.only)]
    peers = []
    info = {}
    if "torch" in a.peers:
        try:
            import torch
            if torch.cuda.is_available():
                peers.append("torch")
                info["torch"] = torch.__version__
                info["device"] = torch.cuda.get_device_name()
                import torch._dynamo
                dyn = torch._dynamo.config
                for k in ("cache_size_limit", "recompile_limit"):
                    if hasattr(dyn, k):
                        setattr(dyn, k, 4096)
                for k in ("accumulated_cache_size_limit", "accumulated_recompile_limit"):
                    if hasattr(dyn, k):
                        setattr(dyn, k, 65536)
            else:
                print("torch: no CUDA device, skipped", file=sys.stderr)
        except ImportError:
            print("torch: not importable, skipped", file=sys.stderr)
    if "numpy" in a.peers:
        peers.append("numpy")
        info["numpy"] = np.__version__
    mode = env("GEARBOX_OPS_COMPILE_MODE", "default")
    print(f"bench_ops_torch: {len(cells)} cells, peers {peers}, compile {a.compile} ({mode})",
          file=sys.stderr)
    start = time.time()
    copy_bytes = max(1 << 12, int(spec.get("copy_bytes", 1 << 28) * a.scale))
    out = {"suite": "ops", "scale": a.scale, "reps": reps, "quick": a.quick, "peers": peers,
           "info": info, "compile_mode": mode if a.compile else None, "copy": {}, "cells": {}}
    for peer in peers:
        lib = Lib(peer)
        out["copy"][peer] = copy_bandwidth(lib, copy_bytes, reps if peer == "torch" else np_reps)
        print(f"copy/{peer}: {out['copy'][peer]}", file=sys.stderr)
        res = out["cells"][peer] = {}
        inp = None
        for c in cells:
            key = c["key"]
            if a.deadline and time.time() - start > a.deadline:
                res[key] = {"skipped": "deadline"}
                continue
            if inp is None or inp.dims != c["dims"] or inp.dtype != c["dtype"]:
                inp = None
                if peer == "torch":
                    lib.t.cuda.empty_cache()
                inp = Inputs(lib, c["dims"], c["dtype"])
            try:
                k = c["op"].split(".")
                at = (positions(c["dims"][int(k[1])], c["dims"][int(k[1])])
                      if k[0] == "take" else None)
                fs = forms(c["op"], c["dims"], inp, lib, at)
            except Exception as e:  # noqa: BLE001 - the cell records it
                res[key] = {"error": f"{type(e).__name__}: {e}"}
                continue
            times, errors, walls = {}, {}, {}
            for label, (fn, args) in fs.items():
                variants = [(label, fn)]
                if peer == "torch" and a.compile:
                    variants.append((f"compile: {label}",
                                     lib.t.compile(fn, mode=None if mode == "default" else mode)))
                for lab, f in variants:
                    try:
                        t0 = time.time()
                        times[lab] = (cuda_ms(f, args, reps) if peer == "torch"
                                      else wall_ms(f, args, np_reps))
                        if peer == "torch":
                            walls[lab] = cuda_wall_ms(f, args, reps)
                        if lab.startswith("compile"):
                            times[lab + " (s to compile and run)"] = round(time.time() - t0, 2)
                    except Exception as e:  # noqa: BLE001
                        errors[lab] = f"{type(e).__name__}: {str(e)[:300]}"
            ms_only = {k2: v for k2, v in times.items() if not k2.endswith("run)")}
            if not ms_only:
                res[key] = {"error": "; ".join(f"{k2}: {v}" for k2, v in errors.items())}
                print(f"{peer}/{key}: error {res[key]['error']}", file=sys.stderr)
                continue
            best = min(ms_only, key=ms_only.get)
            eager = [v for k2, v in ms_only.items() if not k2.startswith("compile")]
            comp = [v for k2, v in ms_only.items() if k2.startswith("compile")]
            res[key] = {"ms": ms_only[best], "form": best, "forms": times,
                        "eager_ms": min(eager) if eager else None,
                        "compile_ms": min(comp) if comp else None, "dims": c["dims"]}
            if walls:
                wall_best = min(walls, key=walls.get)
                res[key]["wall_ms"], res[key]["wall_form"] = walls[wall_best], wall_best
            if errors:
                res[key]["errors"] = errors
            print(f"{peer}/{key}: {ms_only[best]:.3f} ms ({best})", file=sys.stderr)
        inp = None
    out["seconds"] = time.time() - start
    print(json.dumps(out))


if __name__ == "__main__":
    main()
