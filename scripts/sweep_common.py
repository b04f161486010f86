"""What the PyTorch sides of the shape sweeps share: the shape lists from
the environment (the variables the Gearbox sides read) and timing with the
device synchronized."""
import os
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
    """Median milliseconds of `reps` runs of `fn` after a warm-up."""
    fn()
    sync(cpu)
    times = []
    for _ in range(reps):
        s = time.perf_counter()
        fn()
        sync(cpu)
        times.append((time.perf_counter() - s) * 1e3)
    times.sort()
    return times[len(times) // 2]
