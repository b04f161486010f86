"""What the PyTorch sides of the shape sweeps share: the shape lists from
the environment (the variables the Gearbox sides read) and timing with the
device synchronized."""
import os
import sys
import time

import torch


def env_list(name, default):
    """The comma-separated numbers in variable `name`, else `default`."""
    v = os.environ.get(name)
    return [int(float(s)) for s in v.split(",")] if v else default


def sync(cpu):
    """Waits for queued GPU work (nothing to wait for on the CPU)."""
    if not cpu:
        torch.cuda.synchronize()


def time_ms(fn, reps, cpu):
    """Median milliseconds of at least `reps` runs of `fn` (more, up to 50,
    until 100 ms have been timed) after warm-up runs lasting at least 50 ms,
    as the Gearbox sides time
    (examples/support/mod.rs's median_ms)."""
    warm = time.perf_counter()
    i = 0
    while i < 1 or time.perf_counter() - warm < 0.05:
        fn()
        sync(cpu)
        i += 1
    times = []
    while len(times) < reps or (sum(times) < 100.0 and len(times) < 50):
        s = time.perf_counter()
        fn()
        sync(cpu)
        times.append((time.perf_counter() - s) * 1e3)
    times.sort()
    return times[len(times) // 2]


def time_forms(row, forms, compiled, run, reps, cpu):
    """Times each formulation eager and, while torch.compile works, compiled:
    `run(fn, name)` evaluates `fn` (the eager function or its compiled form)
    for formulation `name`. Writes `eager_NAME_ms` and `compile_NAME_ms`
    into `row`; a formulation whose compilation fails is dropped from
    `compiled`, with the reason on standard error."""
    for name, fn in forms.items():
        row[f"eager_{name}_ms"] = time_ms(lambda: run(fn, name), reps, cpu)
        if name in compiled:
            try:
                row[f"compile_{name}_ms"] = time_ms(lambda: run(compiled[name], name), reps, cpu)
            except Exception as e:  # noqa: BLE001
                print(f"compile {name} failed: {e}", file=sys.stderr)
                compiled.pop(name)
