"""PyTorch's side of crates/gearbox/examples/train_bench.rs: one Adam step of
an MLP 784-1024-1024-10 (relu, cross-entropy, batch 4096, float32) eager and
under torch.compile, medians over 200 steps after warm-up (CUDA events), and
the gradient of sum(exp(sin(x) * 2 + x) / 3) over 2^26 float32 elements
(autograd and torch.func.grad, the faster kept). Prints one JSON object."""
import json
import sys

import torch

from bench_torch import median_ms  # also turns TF32 off

DEV = "cuda"


def main():
    torch.manual_seed(0)
    batch = 4096
    x = torch.randn(batch, 784, device=DEV)
    y = torch.tensor([(i * 7919) % 10 for i in range(batch)], device=DEV)
    out = {}

    def make():
        model = torch.nn.Sequential(
            torch.nn.Linear(784, 1024), torch.nn.ReLU(),
            torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
            torch.nn.Linear(1024, 10)).to(DEV)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        return model, opt

    for name, wrap in [("eager", lambda f: f), ("compile", torch.compile)]:
        model, opt = make()

        def step():
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        fn = wrap(step)
        for _ in range(5):
            fn()
        out[f"torch/mlp_step_ms/{name}"] = median_ms(fn, 200)
        print(f"mlp step {name}: {out[f'torch/mlp_step_ms/{name}']:.4f} ms", file=sys.stderr)

    n = 1 << 26
    xs = torch.randn(n, device=DEV)

    def chain(t):
        return (torch.exp(torch.sin(t) * 2 + t) / 3).sum()

    def autograd():
        t = xs.detach().requires_grad_(True)
        chain(t).backward()
        return t.grad

    func_grad = torch.func.grad(chain)
    timed = [(median_ms(autograd, 20), "autograd"), (median_ms(lambda: func_grad(xs), 20), "torch.func.grad")]
    ms, peer = min(timed)
    out["torch/grad_chain_2^26_ms"] = ms
    out["_peer/grad_chain"] = peer
    print(json.dumps(out))


if __name__ == "__main__":
    main()
