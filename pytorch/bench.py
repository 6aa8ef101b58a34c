# SPDX-License-Identifier: MIT
"""torch_trn's figures (Documentation/pytorch.md, "Figures"); not a test.

In a guest:  tools/trn-vm --lane newest -- sh tests/torch/chroot-run \\
                 python3 pytorch/bench.py [--quick]

- torch_add_issue_ns_per_op: host time to issue one torch.add of two f32
  [8][8] trn tensors into a new tensor (N in a row, before the final
  synchronize): the dispatch overhead; torch_add_ns_per_op with the
  synchronize, what the device allows;
- eager_add_issue_ns_per_op, eager_add_ns_per_op: the same through the
  eager runtime's C API in the same process (torch_trn._C.bench_eager_add),
  the baseline;
- cpu_add_ns_per_op: torch.add of CPU tensors of that shape, what
  PyTorch's Python binding, dispatcher and kernel cost without trn;
- torch_dispatch_ratio: torch over eager, issue times (issue 12's target:
  <= 2);
- aten_add_issue_ns_per_op, aten_cpu_add_ns_per_op, aten_dispatch_ratio:
  the same loop from C++ through at::add (torch_trn._C.bench_aten_add), on
  trn and on CPU tensors: the dispatcher and the backend without Python's
  interpreter; the ratio is trn's issue time over eager's;
- mlp_ops_per_s: device operators per second of the 16-32-4 MLP's
  training steps (forward, backward, SGD), and its fallbacks (should be 0);
- classifier_step_us: one training step of a 16-32-10 classifier (batch
  64, cross_entropy, SGD), 20 steps per synchronisation, and its
  fallbacks (0 since nll_loss runs on the device);
- transformer_step_us: one training step of an nn.TransformerEncoderLayer
  (d_model 32, 4 heads, dropout 0.1) with a 10-class head over 8 x 16
  tokens (cross_entropy, SGD), and its fallbacks.
Each figure is the median of five runs.
"""
import statistics
import sys
import time

import torch
import torch_trn  # noqa: F401


def torch_add(n, rows, cols, device="trn"):
    a = torch.zeros(rows, cols, device=device)
    b = torch.zeros(rows, cols, device=device)
    torch.trn.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        torch.add(a, b)
    t1 = time.perf_counter_ns()
    torch.trn.synchronize()
    return (t1 - t0) / n, (time.perf_counter_ns() - t0) / n


def mlp_ops_per_s(steps):
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4)).to("trn")
    x, y = torch.randn(64, 16).to("trn"), torch.randn(64, 4).to("trn")
    opt = torch.optim.SGD(model.parameters(), lr=0.05, foreach=False)

    def step():
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()

    step()
    torch.trn.synchronize()
    torch.trn.reset_counts()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.trn.synchronize()
    dt = time.perf_counter() - t0
    ops = sum(v for k, v in torch.trn.device_op_counts().items()
              if not k.startswith("copy_"))
    return ops / dt, sum(torch.trn.fallback_counts().values())


def step_us(step, steps):
    """Median of five: microseconds per @step() over @steps steps and one
    synchronize, after a warm-up step; and the fallbacks the runs took."""
    step()
    torch.trn.synchronize()
    torch.trn.reset_counts()
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        torch.trn.synchronize()
        runs.append((time.perf_counter() - t0) / steps * 1e6)
    return statistics.median(runs), sum(torch.trn.fallback_counts().values())


def classifier_step_us(steps):
    F = torch.nn.functional
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 10)).to("trn")
    x, y = torch.randn(64, 16).to("trn"), torch.randint(0, 10, (64,)).to("trn")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, foreach=False)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    return step_us(step, steps)


def transformer_step_us(steps):
    F = torch.nn.functional
    layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1,
                                             batch_first=True)
    model = torch.nn.ModuleDict({"layer": layer,
                                 "head": torch.nn.Linear(32, 10)}).to("trn")
    x = torch.randn(8, 16, 32).to("trn")
    y = torch.randint(0, 10, (8 * 16,)).to("trn")
    opt = torch.optim.SGD(model.parameters(), lr=0.05, foreach=False)

    def step():
        opt.zero_grad()
        h = model["head"](model["layer"](x)).view(-1, 10)
        F.cross_entropy(h, y).backward()
        opt.step()

    return step_us(step, steps)


def main():
    quick = "--quick" in sys.argv
    n, steps = (200, 5) if quick else (2000, 20)
    rows, cols = 8, 8
    torch_add(50, rows, cols)          # warm the allocator and the stream
    runs = [torch_add(n, rows, cols) for _ in range(5)]
    ti, tt = (statistics.median(r[i] for r in runs) for i in (0, 1))
    runs = [torch_trn._C.bench_eager_add(0, n, rows, cols) for _ in range(5)]
    ei, et = (statistics.median(r[i] for r in runs) for i in (0, 1))
    cpu = statistics.median(torch_add(n, rows, cols, "cpu")[0] for _ in range(5))
    runs = [torch_trn._C.bench_aten_add("trn:0", n, rows, cols) for _ in range(5)]
    ai = statistics.median(r[0] for r in runs)
    acpu = statistics.median(torch_trn._C.bench_aten_add("cpu", n, rows, cols)[0]
                             for _ in range(5))
    ops, fallbacks = mlp_ops_per_s(steps)
    cls, cls_fallbacks = classifier_step_us(steps)
    tf, tf_fallbacks = transformer_step_us(max(steps // 4, 2))
    print(f"torch_add_issue_ns_per_op {ti:.0f} ns  # torch.add, f32 [{rows}][{cols}], {n} per sync")
    print(f"torch_add_ns_per_op {tt:.0f} ns  # with the synchronize")
    print(f"eager_add_issue_ns_per_op {ei:.0f} ns  # eager_add through the C API, same shapes")
    print(f"eager_add_ns_per_op {et:.0f} ns  # with the synchronize")
    print(f"cpu_add_ns_per_op {cpu:.0f} ns  # torch.add of CPU tensors: PyTorch's own floor")
    print(f"torch_dispatch_ratio {ti / ei:.2f}  # issue times; target <= 2")
    print(f"aten_add_issue_ns_per_op {ai:.0f} ns  # at::add from C++, trn tensors")
    print(f"aten_cpu_add_ns_per_op {acpu:.0f} ns  # at::add from C++, CPU tensors")
    print(f"aten_dispatch_ratio {ai / ei:.2f}  # C++ issue time over eager's")
    print(f"mlp_ops_per_s {ops:.0f} ops/s  # 16-32-4 MLP training steps, {fallbacks} fallbacks")
    print(f"classifier_step_us {cls:.0f} us  # 16-32-10, cross_entropy, SGD; "
          f"{cls_fallbacks} fallbacks")
    print(f"transformer_step_us {tf:.0f} us  # encoder layer 32/4/64, dropout 0.1, "
          f"8x16 tokens; {tf_fallbacks} fallbacks")


if __name__ == "__main__":
    main()
