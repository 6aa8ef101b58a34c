# SPDX-License-Identifier: MIT
"""The PyTorch tour (tools/trn-vm demo --torch): a small model trained with
model.to('trn'), eager, every op dispatched at once; each step's loss
printed beside the same model's on the CPU, then ops/s and where the
operators ran.  Exits 1 if the two runs disagree.
"""
import sys
import time

import torch
import torch_trn  # noqa: F401  (registers the trn device)

STEPS = 20


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(16, 64)
        self.l2 = torch.nn.Linear(64, 64)
        self.l3 = torch.nn.Linear(64, 4)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.l1(x), approximate="tanh")
        h = torch.tanh(self.l2(h))
        return self.l3(h)


def train(model, x, y, device):
    model = model.to(device)
    x, y = x.to(device), y.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9,
                          foreach=False)
    losses = []
    t0 = time.perf_counter()
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())   # waits for the step, as users do
    return losses, time.perf_counter() - t0


def main():
    torch.manual_seed(0)
    ref = Net()
    dev = Net()
    dev.load_state_dict(ref.state_dict())
    x = torch.randn(128, 16)
    y = torch.sin(x[:, :4] * 2)
    print(f"torch {torch.__version__}, trn devices: {torch.trn.device_count()}")
    cpu_losses, cpu_s = train(ref, x, y, "cpu")
    torch.trn.reset_counts()
    trn_losses, trn_s = train(dev, x, y, "trn")
    print(f"{'step':>4}  {'loss on trn':>12}  {'loss on cpu':>12}")
    worst = 0.0
    for i, (a, b) in enumerate(zip(trn_losses, cpu_losses)):
        print(f"{i:>4}  {a:12.6f}  {b:12.6f}")
        worst = max(worst, abs(a - b) / max(abs(b), 1e-12))
    ops = sum(torch.trn.device_op_counts().values())
    fallbacks = torch.trn.fallback_counts()
    print(f"trn: {ops} device ops in {trn_s:.2f} s: {ops / trn_s:.0f} ops/s "
          f"(software-emulated guest); cpu run {cpu_s:.2f} s")
    print(f"fallbacks to the CPU: {sum(fallbacks.values())} {dict(fallbacks)}")
    print(f"largest relative loss difference: {worst:.2e}")
    if worst > 1e-4:
        print("FAILED: trn and cpu disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
