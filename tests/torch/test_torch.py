# SPDX-License-Identifier: MIT
"""torch_trn's tests (Documentation/pytorch.md), run in a guest with two
simulated devices inside the torch chroot (tests/torch/chroot-run).

Every test compares trn against PyTorch's own CPU kernels and says where
the operators ran.  Prints TAP; with TRN_VM_OUT set, also writes it to
$TRN_VM_OUT/test_torch.tap.  TRN_TORCH_TESTS=a,b runs only those tests.
"""
import glob
import os
import sys
import time
import traceback

import torch
import torch_trn  # noqa: F401  (registers the trn device)
from torch.testing import assert_close

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def trn_ops():
    return torch.trn.device_op_counts()


def on_device_only(before, after, *names):
    """The operators @names ran as trn kernels between the two readings."""
    for n in names:
        assert after.get(n, 0) > before.get(n, 0), f"{n} did not run on trn: {after}"


@test
def devices():
    assert torch.trn.is_available()
    assert torch.trn.device_count() == 2, torch.trn.device_count()
    a = torch.ones(3, device="trn")
    b = torch.ones(3, device="trn:1")
    assert str(a.device) == "trn:0" and str(b.device) == "trn:1"
    assert a.is_trn and not a.is_cpu
    try:
        torch.empty(2, device="trn:7")
    except RuntimeError as e:
        assert "trn:7" in str(e), e
    else:
        raise AssertionError("trn:7 does not exist, yet empty() worked")


@test
def copies_round_trip():
    for dtype in (torch.float32, torch.bfloat16, torch.int64, torch.uint8,
                  torch.float16, torch.bool):
        x = (torch.randn(5, 7) * 10).to(dtype)
        assert torch.equal(x.to("trn").cpu(), x), dtype
    # Non-contiguous sources and destinations, both directions.
    x = torch.randn(6, 4)
    assert torch.equal(x.t().to("trn").cpu(), x.t())
    d = x.to("trn")
    assert torch.equal(d.t().cpu(), x.t())
    assert torch.equal(d[:, 1:3].cpu(), x[:, 1:3])
    assert torch.equal(d[::2].contiguous().cpu(), x[::2])
    e = torch.zeros(6, 4, device="trn")
    e[:, 2] = torch.arange(6.0)
    ref = torch.zeros(6, 4)
    ref[:, 2] = torch.arange(6.0)
    assert torch.equal(e.cpu(), ref)
    # Device to device, across devices, dtype conversion, empty tensors.
    assert torch.equal(d.clone().cpu(), x)
    assert torch.equal(d.to("trn:1").cpu(), x)
    assert torch.equal(d.to(torch.bfloat16).cpu(), x.to(torch.bfloat16))
    # copy_ broadcasts its source, from the host and on the device.
    e = torch.zeros(3, 4, device="trn")
    e.copy_(torch.arange(4.0))
    assert torch.equal(e.cpu(), torch.arange(4.0).expand(3, 4))
    e.copy_(torch.tensor(5.0))
    assert torch.equal(e.cpu(), torch.full((3, 4), 5.0))
    f = torch.zeros(2, 4, device="trn")
    f.copy_(d[0])
    assert torch.equal(f.cpu(), x[0].expand(2, 4))
    z = torch.empty(0, 3).to("trn")
    assert z.shape == (0, 3) and z.cpu().shape == (0, 3)


@test
def bytes_to_float_on_device():
    """bool and uint8 tensors become f32 or bf16 on the device (one UNARY
    from bytes, TRN_CAP_SRC_U8), exactly, from any layout into any layout,
    with no read to the host; other integer types still go through it."""
    torch.manual_seed(3)
    u = torch.randint(0, 256, (7, 9), dtype=torch.uint8)
    m = torch.rand(7, 9) > 0.5
    du, dm = u.to("trn"), m.to("trn")
    torch.trn.reset_counts()
    for src, ref in ((du, u), (dm, m), (du.t(), u.t()), (dm[:, 2:7], m[:, 2:7]),
                     (du[::2], u[::2])):
        for dt in (torch.float32, torch.bfloat16):
            got = src.to(dt)
            assert got.device.type == "trn" and got.dtype == dt
            assert torch.equal(got.cpu(), ref.to(dt)), (dt, ref.shape)
    e = torch.full((9, 7), -1.0, device="trn")
    e.t().copy_(du)                                 # into a strided view
    assert torch.equal(e.cpu(), u.t().float())
    ops = trn_ops()
    assert ops.get("copy_d2d_cast", 0) == 11, ops
    assert ops.get("copy_d2h", 0) == 11, ops    # the checks' own reads
    torch.trn.reset_counts()
    i = torch.arange(-5, 5, dtype=torch.int32)
    assert torch.equal(i.to("trn").to(torch.float32).cpu(), i.float())
    assert trn_ops().get("copy_d2d_cast", 0) == 0


@test
def strided_copies_on_device():
    """Copies between layouts on one device are the device's 2-D COPYs, not
    a host round trip; what they cannot lay out still copies exactly."""
    x = torch.randn(6, 5)
    d = x.to("trn")
    torch.trn.reset_counts()
    assert torch.equal(d.t().contiguous().cpu(), x.t().contiguous())
    assert torch.equal(d[:, 1:4].contiguous().cpu(), x[:, 1:4])
    assert torch.equal(d[::2, ::3].contiguous().cpu(), x[::2, ::3])
    t = torch.randn(3, 4, 5, 2)
    assert torch.equal(t.to("trn").permute(3, 1, 0, 2).contiguous().cpu(),
                       t.permute(3, 1, 0, 2).contiguous())
    i = torch.arange(20).view(4, 5)                 # any dtype: bytes
    assert torch.equal(i.to("trn").t().contiguous().cpu(), i.t())
    e = torch.zeros(5, 6, device="trn")
    e.t().copy_(d)                                  # into a strided view
    assert torch.equal(e.cpu(), x.t())
    f = torch.zeros(4, 5, device="trn")
    f.copy_(d[2])                                   # a broadcast source
    assert torch.equal(f.cpu(), x[2].expand(4, 5))
    b = d.t().to(torch.bfloat16)                    # converted and laid out
    assert torch.equal(b.cpu(), x.t().to(torch.bfloat16))
    g = torch.zeros(5, 6, dtype=torch.bfloat16, device="trn")
    g.t().copy_(d)
    assert torch.equal(g.cpu(), x.t().to(torch.bfloat16))
    ops = trn_ops()
    assert ops.get("copy_d2d_strided", 0) >= 7, ops
    assert ops.get("copy_d2d_cast", 0) >= 2, ops
    # Strided host copies: staged dense, laid out by the device.
    h = torch.zeros(6, 5, device="trn")
    h[:, 2] = torch.arange(6.0)
    ref = torch.zeros(6, 5)
    ref[:, 2] = torch.arange(6.0)
    assert torch.equal(h.cpu(), ref)
    assert torch.equal(d[:, 3].cpu(), x[:, 3])
    assert trn_ops().get("copy_d2d_strided", 0) == ops["copy_d2d_strided"]
    assert trn_ops().get("copy_h2d_strided", 0) >= 1
    # Too scattered for the device (40 x 40 commands): through the host.
    c = torch.randn(40, 40, 40)
    before = trn_ops().get("copy_d2d_strided", 0)
    assert torch.equal(c.to("trn").permute(2, 1, 0).contiguous().cpu(),
                       c.permute(2, 1, 0).contiguous())
    assert trn_ops().get("copy_d2d_strided", 0) == before
    # Two views of one storage, disjoint but interleaved: through scratch.
    k = d.clone()
    k[:, 0] = k[:, 1]
    ref = x.clone()
    ref[:, 0] = ref[:, 1]
    assert torch.equal(k.cpu(), ref)
    assert trn_ops().get("copy_d2d_strided", 0) == before + 1
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()


@test
def cat_and_stack_on_device():
    """cat and stack lay their inputs out with the device's COPYs, any
    dim and dtype; what PyTorch promotes or refuses goes through the
    fallback, with PyTorch's result or error."""
    a, b = torch.randn(3, 4, 5), torch.randn(3, 2, 5)
    da, db = a.to("trn"), b.to("trn")
    torch.trn.reset_counts()
    assert torch.equal(torch.cat([da, db], 1).cpu(), torch.cat([a, b], 1))
    assert torch.equal(torch.cat([da, da], -1).cpu(), torch.cat([a, a], -1))
    assert torch.equal(torch.cat([da, da, da], 0).cpu(), torch.cat([a, a, a], 0))
    assert torch.equal(torch.cat([da.transpose(0, 2), db.transpose(0, 2)], 1).cpu(),
                       torch.cat([a.transpose(0, 2), b.transpose(0, 2)], 1))
    e = torch.empty(0).to("trn")                    # legacy empty: skipped
    assert torch.equal(torch.cat([e, da, e], 2).cpu(), a)
    z = torch.empty(3, 0, 5).to("trn")              # empty along the dim
    assert torch.equal(torch.cat([z, db], 1).cpu(), b)
    for dt in (torch.bfloat16, torch.int64, torch.bool):
        x = (torch.randn(4, 3) * 4).to(dt)
        assert torch.equal(torch.cat([x.to("trn"), x.to("trn")], 1).cpu(),
                           torch.cat([x, x], 1)), dt
    assert torch.equal(torch.stack([da, da], 1).cpu(), torch.stack([a, a], 1))
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    assert trn_ops().get("cat", 0) >= 10, trn_ops()
    # Promotion (f32 with bf16): PyTorch's result, through the fallback.
    mixed = torch.cat([da, da.bfloat16()], 0)
    assert mixed.dtype == torch.float32 and mixed.is_trn
    assert torch.equal(mixed.cpu(), torch.cat([a, a.bfloat16()], 0))
    assert torch.trn.fallback_counts().get("aten::cat", 0) >= 1, \
        torch.trn.fallback_counts()
    try:
        torch.cat([da, db], 0)
    except RuntimeError as err:
        assert "Sizes of tensors must match" in str(err), err
    else:
        raise AssertionError("cat of mismatched shapes was not refused")


@test
def fill_and_zero():
    before = trn_ops()
    a = torch.empty(33, device="trn").fill_(2.5)
    assert torch.equal(a.cpu(), torch.full((33,), 2.5))
    b = torch.full((4, 6), 1.5, dtype=torch.bfloat16, device="trn")
    assert torch.equal(b.cpu(), torch.full((4, 6), 1.5, dtype=torch.bfloat16))
    on_device_only(before, trn_ops(), "fill_")
    # bf16 slices starting or ending mid-word must not touch their
    # neighbours (FILL writes aligned words), and run on the device.
    c = torch.ones(10, dtype=torch.bfloat16, device="trn")
    torch.trn.reset_counts()
    c[1:4].fill_(3.0)
    c[4:7].zero_()
    c[7:9].fill_(-2.0)
    assert c.cpu().tolist() == [1, 3, 3, 3, 0, 0, 0, -2, -2, 1], c.cpu()
    c[1:2].fill_(5.0)
    c[8:9].zero_()
    assert c.cpu().tolist() == [1, 5, 3, 3, 0, 0, 0, -2, 0, 1], c.cpu()
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    assert trn_ops().get("fill_", 0) >= 3 and trn_ops().get("zero_", 0) >= 2, trn_ops()
    # A strided view.
    d = torch.ones(4, 4, device="trn")
    d[:, 1].zero_()
    ref = torch.ones(4, 4)
    ref[:, 1] = 0
    assert torch.equal(d.cpu(), ref)


def binary_cases():
    a = torch.randn(6, 5)
    yield a, torch.randn(6, 5)          # same shape
    yield a, torch.randn(5)             # a row over every row (bias)
    yield a, torch.randn(6, 1)          # one value per row
    yield a, torch.tensor(1.75)         # a single element
    yield torch.randn(2, 3, 4), torch.randn(2, 3, 4)   # 3-D
    yield torch.randn(5, 6).t(), torch.randn(6, 5)     # non-contiguous
    yield torch.randn(3, 1), torch.randn(1, 4)         # broadcast both ways


@test
def elementwise_binary():
    before = trn_ops()
    for op in (torch.add, torch.sub, torch.mul, torch.div, torch.maximum,
               torch.minimum):
        for a, b in binary_cases():
            if op is torch.div:
                b = b.abs() + 0.5
            got = op(a.to("trn"), b.to("trn")).cpu()
            assert_close(got, op(a, b), msg=f"{op.__name__} {a.shape} {b.shape}")
            # The small operand first: the same broadcast, swapped.
            assert_close(op(b.to("trn"), a.to("trn")).cpu(), op(b, a),
                         msg=f"{op.__name__} {b.shape} {a.shape}")
    on_device_only(before, trn_ops(), "add", "sub", "mul", "div", "maximum",
                   "minimum")


@test
def scalars_alpha_and_in_place():
    """Python numbers and 0-dim CPU tensors on either side, alpha, and the
    in-place forms an optimizer uses, all without the fallback."""
    a = torch.randn(4, 5)
    d = a.to("trn")
    torch.trn.reset_counts()
    cases = [
        (lambda t: t * 3.0), (lambda t: t + 2), (lambda t: t - 0.5),
        (lambda t: t / 4.0), (lambda t: 3.0 * t), (lambda t: 1 - t),
        (lambda t: 2.0 / (t.abs() + 1)), (lambda t: t + torch.tensor(1.5)),
        (lambda t: torch.add(t, t, alpha=2)), (lambda t: torch.sub(t, 1.0, alpha=3)),
        (lambda t: torch.rsub(t, 2.0)), (lambda t: torch.clamp_min(t, 0.1)),
        (lambda t: torch.maximum(t, torch.tensor(0.0))),
    ]
    for i, f in enumerate(cases):
        assert_close(f(d).cpu(), f(a), msg=f"case {i}")
    for name, f in [("add_", lambda t: t.add_(t)), ("mul_", lambda t: t.mul_(0.9)),
                    ("sub_", lambda t: t.sub_(torch.ones(5, device=t.device), alpha=2)),
                    ("div_", lambda t: t.div_(2.0))]:
        c = d.clone()
        f(c)
        r = a.clone()
        f(r) if name != "sub_" else r.sub_(torch.ones(5), alpha=2)
        assert_close(c.cpu(), r, msg=name)
    assert_close(torch.clamp(d, -0.5, 0.5).cpu(), torch.clamp(a, -0.5, 0.5))
    assert_close(torch.clamp_max(d, 0.2).cpu(), torch.clamp_max(a, 0.2))
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    # In place from another view of the same storage: right, through the
    # fallback (the ISA writes a only where b is a itself).
    e = torch.arange(8.0).to("trn")
    e[:4].add_(e[4:])
    r = torch.arange(8.0)
    r[:4].add_(r[4:])
    assert torch.equal(e.cpu(), r), e


@test
def bf16_elementwise():
    before = trn_ops()
    a, b = torch.randn(6, 5).bfloat16(), torch.randn(6, 5).bfloat16()
    da, db = a.to("trn"), b.to("trn")
    for op in (torch.add, torch.mul, torch.sub, torch.div):
        got = op(da, db).cpu()
        assert got.dtype == torch.bfloat16
        # Computed in f32 and rounded once, as PyTorch's CPU kernels do.
        assert torch.equal(got, op(a, b)), op.__name__
    assert torch.equal((da * 0.5).cpu(), a * 0.5)
    assert torch.equal(torch.relu(da).cpu(), torch.relu(a))
    assert_close(torch.exp(da).cpu(), torch.exp(a))
    assert_close(torch.sigmoid(da).cpu(), torch.sigmoid(a))
    mixed = (da + b.float().to("trn")).cpu()
    assert mixed.dtype == torch.float32
    assert_close(mixed, a.float() + b.float())
    c = da.clone()
    c.add_(db)
    assert torch.equal(c.cpu(), a + b)
    assert_close(da.sum(-1).cpu(), a.sum(-1))
    assert da.sum(-1).dtype == torch.bfloat16
    on_device_only(before, trn_ops(), "add", "mul", "relu", "sigmoid", "add_", "sum")


@test
def matmul():
    before = trn_ops()
    a, b = torch.randn(7, 5), torch.randn(5, 3)
    assert_close((a.to("trn") @ b.to("trn")).cpu(), a @ b)
    # Transposed operands, without copies (the MATMUL flags).
    at, bt = torch.randn(5, 7), torch.randn(3, 5)
    assert_close((at.to("trn").t() @ bt.to("trn").t()).cpu(), at.t() @ bt.t())
    # bf16 inputs, rounded result.
    a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
    got = (a16.to("trn") @ b16.to("trn")).cpu()
    assert got.dtype == torch.bfloat16
    assert_close(got.float(), a16.float() @ b16.float(), rtol=2e-2, atol=2e-2)
    # addmm with a bias, as nn.Linear does, also with alpha and beta.
    bias = torch.randn(3)
    assert_close(torch.addmm(bias.to("trn"), a.to("trn"), b.to("trn")).cpu(),
                 torch.addmm(bias, a, b))
    assert_close(torch.addmm(bias.to("trn"), a.to("trn"), b.to("trn"), beta=0.5,
                             alpha=2).cpu(),
                 torch.addmm(bias, a, b, beta=0.5, alpha=2))
    nan_bias = torch.full((3,), float("nan"))
    assert_close(torch.addmm(nan_bias.to("trn"), a.to("trn"), b.to("trn"), beta=0).cpu(),
                 torch.addmm(nan_bias, a, b, beta=0))
    # bmm: one matmul per batch, transposed batches read in place.
    x, y = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
    assert_close(torch.bmm(x.to("trn"), y.to("trn")).cpu(), torch.bmm(x, y))
    yt = torch.randn(2, 5, 4)
    assert_close(torch.bmm(x.to("trn"), yt.to("trn").transpose(1, 2)).cpu(),
                 torch.bmm(x, yt.transpose(1, 2)))
    assert_close((x.to("trn") @ y.to("trn")).cpu(), x @ y)
    got = torch.bmm(x.bfloat16().to("trn"), y.bfloat16().to("trn")).cpu()
    assert got.dtype == torch.bfloat16
    assert_close(got.float(), torch.bmm(x.bfloat16().float(), y.bfloat16().float()),
                 rtol=2e-2, atol=2e-2)
    # nn.Linear on a 3-D input (a batch of sequences), with and without bias.
    lin = torch.nn.Linear(4, 6)
    xs = torch.randn(2, 3, 4)
    with torch.no_grad():
        assert_close(lin.to("trn")(xs.to("trn")).cpu(), lin.cpu()(xs))
        lin_nb = torch.nn.Linear(4, 6, bias=False)
        assert_close(lin_nb.to("trn")(xs.to("trn")).cpu(), lin_nb.cpu()(xs))
    on_device_only(before, trn_ops(), "mm", "addmm", "bmm")
    # Layouts MATMUL cannot read in place (attention's head splits): laid
    # out dense on the device first, no fallback.
    torch.trn.reset_counts()
    q = torch.randn(4, 6, 16)                         # [batch][seq][2 heads x 8]
    qh = q.view(4, 6, 2, 8).transpose(1, 2).reshape(8, 6, 8)
    kd = q.to("trn").view(4, 6, 2, 8).permute(0, 2, 1, 3).flatten(0, 1)
    assert_close(torch.bmm(kd, kd.transpose(1, 2)).cpu(), qh @ qh.transpose(1, 2))
    assert_close(torch.bmm(q.to("trn")[:, :, 8:], q.to("trn")[:, :, :8].transpose(1, 2)).cpu(),
                 torch.bmm(q[:, :, 8:], q[:, :, :8].transpose(1, 2)))
    m = torch.randn(6, 10)
    assert_close((m.to("trn")[:, 2:7] @ m.to("trn")[:, :5].t()).cpu(), m[:, 2:7] @ m[:, :5].t())
    # An operand of the same shape in another layout (a permute).
    p3 = torch.randn(4, 6, 16)
    p3t = torch.randn(6, 4, 16)
    assert_close((p3.to("trn") + p3t.to("trn").transpose(0, 1)).cpu(), p3 + p3t.transpose(0, 1))
    assert_close((p3.to("trn").transpose(0, 1) * p3t.to("trn")).cpu(), p3.transpose(0, 1) * p3t)
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    assert trn_ops().get("copy_d2d_strided", 0) >= 5, trn_ops()


@test
def unary_and_reductions():
    before = trn_ops()
    x = torch.randn(9, 6)
    d = x.to("trn")
    pos = x.abs() + 0.1
    dp = pos.to("trn")
    for f in (torch.relu, torch.exp, torch.neg, torch.abs, torch.tanh,
              torch.sigmoid, torch.nn.functional.silu):
        assert_close(f(d).cpu(), f(x), msg=f.__name__)
    for f in (torch.sqrt, torch.rsqrt, torch.reciprocal):
        assert_close(f(dp).cpu(), f(pos), msg=f.__name__)
    g = torch.randn(9, 6)
    assert_close(torch.ops.aten.threshold_backward(g.to("trn"), d, 0).cpu(),
                 torch.ops.aten.threshold_backward(g, x, 0))
    for dims in (0, 1, -1, (0, 1), ()):
        assert_close(d.sum(dims).cpu(), x.sum(dims), msg=f"sum {dims}")
        assert_close(d.mean(dims).cpu(), x.mean(dims), msg=f"mean {dims}")
    assert_close(d.sum(-1, keepdim=True).cpu(), x.sum(-1, keepdim=True))
    assert_close(d.mean(0, keepdim=True).cpu(), x.mean(0, keepdim=True))
    assert_close(d.sum().cpu(), x.sum())
    assert_close(d.mean().cpu(), x.mean())
    assert torch.equal(d.amax(-1).cpu(), x.amax(-1))
    assert torch.equal(d.amax().cpu(), x.amax())
    assert torch.equal(d.max().cpu(), x.max())
    t3 = torch.randn(3, 4, 5)
    assert_close(t3.to("trn").sum((1, 2)).cpu(), t3.sum((1, 2)))
    assert_close(t3.to("trn").mean((0, 1)).cpu(), t3.mean((0, 1)))
    assert_close(t3.to("trn").sum(1).cpu(), t3.sum(1))          # middle dims
    assert_close(t3.to("trn").mean(1, keepdim=True).cpu(), t3.mean(1, keepdim=True))
    # Dims in two runs: each run in turn, on the device.
    ops0 = trn_ops().get("sum", 0), trn_ops().get("mean", 0)
    assert_close(t3.to("trn").sum((0, 2)).cpu(), t3.sum((0, 2)))
    assert_close(t3.to("trn").mean((2, 0), keepdim=True).cpu(),
                 t3.mean((2, 0), keepdim=True))
    t4 = torch.randn(2, 3, 4, 5)
    assert_close(t4.to("trn").sum((0, 1, 3)).cpu(), t4.sum((0, 1, 3)))
    assert_close(t4.to("trn").mean((0, 2)).cpu(), t4.mean((0, 2)))
    assert_close(t4.to("trn").bfloat16().sum((1, 3)).cpu(),
                 t4.bfloat16().sum((1, 3)))
    assert trn_ops().get("sum", 0) >= ops0[0] + 3, trn_ops()
    assert trn_ops().get("mean", 0) >= ops0[1] + 2, trn_ops()
    # Max over leading or middle dims: moved last on the device, then rows.
    assert torch.equal(t3.to("trn").amax((0, 2)).cpu(), t3.amax((0, 2)))
    assert torch.equal(t3.to("trn").amax(0).cpu(), t3.amax(0))
    assert torch.equal(t3.to("trn").amax(1, keepdim=True).cpu(),
                       t3.amax(1, keepdim=True))
    assert torch.equal(t4.to("trn").bfloat16().amax((0, 2)).cpu(),
                       t4.bfloat16().amax((0, 2)))
    assert torch.equal(t3.to("trn").amax((-2, -1), keepdim=True).cpu(),
                       t3.amax((-2, -1), keepdim=True))
    nan = torch.tensor([[1.0, float("nan"), 3.0]])
    assert torch.isnan(nan.to("trn").amax(-1).cpu()).all()
    F = torch.nn.functional
    assert_close(F.gelu(d, approximate="tanh").cpu(), F.gelu(x, approximate="tanh"))
    assert_close(F.gelu(d).cpu(), F.gelu(x))           # erf: GELU_ERF
    assert_close(F.gelu(d.bfloat16()).cpu(), F.gelu(x.bfloat16()))
    assert_close(torch.erf(d).cpu(), torch.erf(x))
    assert_close(torch.log(dp).cpu(), torch.log(pos))
    # log's edges as the CPU has them: -inf at 0, NaN below.
    edge = torch.tensor([0.0, -0.0, -1.0, float("inf"), 1.0, 1e-45])
    assert_close(torch.log(edge.to("trn")).cpu(), torch.log(edge), equal_nan=True)
    assert_close(torch.softmax(d, -1).cpu(), torch.softmax(x, -1))
    assert_close(torch.softmax(d, 0).cpu(), torch.softmax(x, 0))   # moved last
    assert_close(torch.softmax(t3.to("trn"), 1).cpu(), torch.softmax(t3, 1))
    assert_close(F.log_softmax(d, -1).cpu(), F.log_softmax(x, -1))
    # bf16: within one bf16 step of the f32 result of the same values (the
    # CPU's bf16 kernel was seen three steps off it, where x - max and the
    # log of the sum cancel).
    assert_close(F.log_softmax(d.bfloat16(), -1).cpu().float(),
                 F.log_softmax(x.bfloat16().float(), -1).bfloat16().float(),
                 rtol=2 ** -7, atol=1e-5)
    # Rows far apart: finite where exp underflows (no log(softmax)).
    wide = torch.tensor([[0.0, -200.0, 100.0], [-1e4, 1e4, 0.0]])
    assert_close(F.log_softmax(wide.to("trn"), -1).cpu(), F.log_softmax(wide, -1))
    assert_close(F.log_softmax(d, 0).cpu(), F.log_softmax(x, 0))   # moved last
    assert_close(F.log_softmax(t3.to("trn").bfloat16(), 0).cpu(),
                 F.log_softmax(t3.bfloat16(), 0))
    # Non-contiguous inputs: laid out on the device first.
    assert_close(torch.exp(d.t()).cpu(), torch.exp(x.t()))
    assert_close(d.t().sum(-1).cpu(), x.t().sum(-1))
    y = torch.randn(9, 6)
    assert_close(F.mse_loss(d, y.to("trn")).cpu(), F.mse_loss(x, y))
    # bf16, forward and backward, as the CPU's bf16 kernels.
    xb, yb = x.bfloat16().requires_grad_(), y.bfloat16()
    F.mse_loss(xb, yb).backward()
    db = x.bfloat16().to("trn").requires_grad_()
    lb = F.mse_loss(db, yb.to("trn"))
    lb.backward()
    assert lb.dtype == torch.bfloat16
    assert_close(lb.cpu(), F.mse_loss(xb, yb))
    assert_close(db.grad.cpu(), xb.grad)
    v = torch.randn(100000)
    assert_close(v.to("trn").sum().cpu(), v.sum(), rtol=1e-5, atol=1e-3)
    assert_close(v.to("trn").amax().cpu(), v.amax())
    assert_close(d.sum(dim=(0, 1), keepdim=True).cpu(), x.sum(dim=(0, 1), keepdim=True))
    try:
        d.sum((0, 0))
    except RuntimeError as e:
        assert "multiple times" in str(e), e
    else:
        raise AssertionError("sum over dim 0 twice was not refused")
    z = torch.randn(4).to("trn")
    s = z.sum(dim=(), keepdim=True)
    assert s.shape == (1,), s.shape
    on_device_only(before, trn_ops(), "relu", "exp", "neg", "abs", "sqrt", "rsqrt",
                   "reciprocal", "tanh", "sigmoid", "silu", "threshold_backward",
                   "sum", "mean", "amax", "max", "gelu", "softmax", "mse_loss",
                   "log", "erf", "log_softmax")
    fb = torch.trn.fallback_counts()
    assert not any(k.startswith("aten::gelu") for k in fb), fb
    assert not any(k.startswith("aten::mse_loss") for k in fb), fb   # bf16 too
    assert any(k.startswith("aten::sum") for k in fb), fb
    for op in ("aten::_softmax", "aten::_log_softmax", "aten::amax", "aten::exp"):
        assert not any(k.startswith(op) for k in fb), (op, fb)


@test
def backward_ops_match_cpu():
    """Autograd through every activation and softmax on trn: the gradients
    match the CPU's, and none of the backward ops falls back."""
    F = torch.nn.functional
    acts = [
        ("tanh_backward", torch.tanh),
        ("sigmoid_backward", torch.sigmoid),
        ("gelu_backward", lambda t: F.gelu(t, approximate="tanh")),
        ("gelu_backward", F.gelu),
        ("softmax_backward", lambda t: torch.softmax(t, -1)),
        ("log_softmax_backward", lambda t: F.log_softmax(t, -1)),
        ("softmax_backward", lambda t: torch.softmax(t, 0)),
        ("log_softmax_backward", lambda t: F.log_softmax(t, 0)),
        ("threshold_backward", torch.relu),
    ]
    x0 = torch.randn(7, 5) * 3
    w = torch.randn(7, 5)
    for name, f in acts:
        xc = x0.clone().requires_grad_()
        (f(xc) * w).sum().backward()
        xt = x0.to("trn").requires_grad_()
        torch.trn.reset_counts()
        (f(xt) * w.to("trn")).sum().backward()
        assert_close(xt.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5, msg=name)
        assert torch.trn.device_op_counts().get(name, 0) >= 1, name
        assert not torch.trn.fallback_counts(), (name, torch.trn.fallback_counts())


@test
def pow_by_the_exponents_cpu_special_cases():
    """x ** e for e in 2, 3, 0.5, -0.5, -1, -2, 1, 0: the operations the
    CPU uses for them, on the device, also bf16, views, edge values and
    the backward of x ** 2; other exponents fall back, counted."""
    x = torch.randn(5, 6) * 3
    x[0, :4] = torch.tensor([0.0, -0.0, float("inf"), float("nan")])
    d = x.to("trn")
    torch.trn.reset_counts()
    for e in (2, 3, 0.5, -0.5, -1, -2, 1, 0, 2.0):
        assert_close((d ** e).cpu(), x ** e, equal_nan=True, msg=str(e))
        assert_close((d.t() ** e).cpu(), x.t() ** e, equal_nan=True, msg=str(e))
        assert_close((d.bfloat16() ** e).cpu(), x.bfloat16() ** e,
                     equal_nan=True, msg=f"bf16 {e}")
    w = torch.randn(4, 3)
    wt = w.to("trn").requires_grad_()
    wc = w.clone().requires_grad_()
    (wt ** 2).sum().backward()
    (wc ** 2).sum().backward()
    assert_close(wt.grad.cpu(), wc.grad)
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    assert trn_ops().get("pow", 0) >= 27, trn_ops()
    assert_close((d.abs() ** 2.5).cpu(), x.abs() ** 2.5, equal_nan=True)
    assert torch.trn.fallback_counts(), "x ** 2.5 has no device form"


@test
def layer_norm_matches_cpu():
    """native_layer_norm and its backward on the device: affine or not,
    one or two normalised dims, bf16, a non-contiguous input; mean and
    rstd as the CPU returns them; a wrong shape still raises PyTorch's
    error (through the fallback)."""
    F = torch.nn.functional
    torch.trn.reset_counts()
    cases = [((4, 6, 16), (16,), True), ((3, 5, 4), (5, 4), True),
             ((7, 9), (9,), False)]
    for shape, norm, affine in cases:
        for dt in (torch.float32, torch.bfloat16):
            x0 = (torch.randn(shape) * 3 + 1).to(dt)
            w0 = torch.randn(norm).to(dt) if affine else None
            b0 = torch.randn(norm).to(dt) if affine else None
            g0 = torch.randn(shape).to(dt)
            res = {}
            # bf16 against the CPU in f32 from the same values: at least
            # as close as the CPU's own bf16 kernel (which sums in bf16).
            for key, dev, ct in (("ref", "cpu", torch.float32),
                                 ("cpu", "cpu", dt), ("trn", "trn", dt)):
                x = x0.detach().to(dev, ct).requires_grad_()
                w = w0.detach().to(dev, ct).requires_grad_() if affine else None
                b = b0.detach().to(dev, ct).requires_grad_() if affine else None
                y = F.layer_norm(x, norm, w, b, eps=1e-5)
                (y * g0.to(dev, ct)).sum().backward()
                out = [y, x.grad] + ([w.grad, b.grad] if affine else [])
                res[key] = [t.detach().cpu() for t in out]
            for i, (t, c, r) in enumerate(zip(res["trn"], res["cpu"], res["ref"])):
                assert t.dtype == dt and t.shape == r.shape, (shape, dt, i)
                if dt == torch.float32:
                    assert_close(t, r, msg=f"{shape} {norm} output {i}")
                    continue
                e_trn = (t.float() - r).abs().max().item()
                e_cpu = (c.float() - r).abs().max().item()
                assert e_trn <= max(2 * e_cpu, 8e-3 * r.abs().max().item()), \
                    (shape, norm, i, e_trn, e_cpu)
    x = torch.randn(6, 8)
    out_t = torch.ops.aten.native_layer_norm(x.to("trn"), [8], None, None, 1e-5)
    out_c = torch.ops.aten.native_layer_norm(x, [8], None, None, 1e-5)
    for t, c in zip(out_t, out_c):
        assert t.shape == c.shape, (t.shape, c.shape)
        assert_close(t.cpu(), c)
    assert_close(F.layer_norm(x.to("trn").t(), [6]).cpu(), F.layer_norm(x.t(), [6]))
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    ops = trn_ops()
    assert ops.get("layer_norm", 0) >= 7 and ops.get("layer_norm_backward", 0) >= 6, ops
    try:
        F.layer_norm(x.to("trn"), [5])
    except RuntimeError as e:
        assert "normalized_shape" in str(e) or "shape" in str(e), e
    else:
        raise AssertionError("layer_norm over a wrong shape was not refused")


@test
def nll_loss_and_cross_entropy_on_device():
    """cross_entropy = log_softmax + nll_loss, forward and backward on the
    device with no fallback: every reduction, class weights, ignore_index
    (the default -100 and one inside [0, C)), bf16, a 1-D input,
    non-contiguous targets and weights, -inf log-probabilities beside the
    target."""
    F = torch.nn.functional
    torch.manual_seed(3)
    torch.trn.reset_counts()
    os.environ["TRN_FALLBACK"] = "error"
    try:
        for n, c, dt in ((12, 7, torch.float32), (1, 3, torch.float32),
                         (33, 130, torch.float32), (9, 5, torch.bfloat16)):
            logits = (torch.randn(n, c) * 2).to(dt)
            w = (torch.rand(c) + 0.5).to(dt)
            for kw in ({}, {"weight": w}, {"ignore_index": 1},
                       {"reduction": "sum"}, {"reduction": "none"},
                       {"weight": w, "reduction": "none", "ignore_index": 2},
                       {"weight": w, "reduction": "sum"}):
                target = torch.randint(0, c, (n,))
                if n > 1:
                    target[n // 2] = kw.get("ignore_index", -100)
                lc = logits.clone().requires_grad_()
                lt = logits.to("trn").requires_grad_()
                kwt = {k: v.to("trn") if torch.is_tensor(v) else v
                       for k, v in kw.items()}
                yc = F.cross_entropy(lc, target, **kw)
                yt = F.cross_entropy(lt, target.to("trn"), **kwt)
                yc.sum().backward()
                yt.sum().backward()
                tol = {} if dt == torch.float32 else {"rtol": 2e-2, "atol": 2e-2}
                msg = f"{n}x{c} {dt} {kw}"
                assert yt.dtype == dt and yt.shape == yc.shape, msg
                assert_close(yt.detach().cpu(), yc.detach(), msg=msg, **tol)
                assert_close(lt.grad.cpu(), lc.grad, msg=msg, **tol)
        # A 1-D input with a 0-dim target; targets as a strided view.
        x = torch.randn(6).log_softmax(0)
        t = torch.tensor(4)
        assert_close(F.nll_loss(x.to("trn"), t.to("trn")).cpu(), F.nll_loss(x, t))
        x = torch.randn(8, 5).log_softmax(1)
        t = torch.randint(0, 5, (16,))
        assert_close(F.nll_loss(x.to("trn"), t.to("trn")[::2]).cpu(),
                     F.nll_loss(x, t[::2]))
        # Class weights as strided views, f32 and bf16 (made dense).
        for dt in (torch.float32, torch.bfloat16):
            xw = x.to(dt)
            w = (torch.rand(10) + 0.5).to(dt)
            assert_close(F.nll_loss(xw.to("trn"), t[:8].to("trn"),
                                    weight=w.to("trn")[::2]).cpu().float(),
                         F.nll_loss(xw, t[:8], weight=w[::2]).float(),
                         rtol=2e-2, atol=2e-2)
        # -inf beside the target (masked logits) does not poison the row.
        x[:, 0] = float("-inf")
        t = torch.randint(1, 5, (8,))
        assert_close(F.nll_loss(x.to("trn"), t.to("trn"), reduction="none").cpu(),
                     F.nll_loss(x, t, reduction="none"))
        # A target outside [0, C): the CPU raises at once; the device
        # raises at the next synchronisation (a device-side check), once.
        x = torch.randn(8, 5).log_softmax(1)
        for bad, sync in ((5, "cpu"), (-3, "synchronize"), (2**32 + 1, "item"),
                          (2**24 + 2, "cpu")):
            t = torch.randint(0, 5, (8,))
            t[3] = bad
            t[5] = -100
            try:
                F.nll_loss(x, t)
            except (IndexError, RuntimeError) as e:
                assert "out of bounds" in str(e), e
            else:
                raise AssertionError(f"the CPU took target {bad}")
            loss = F.nll_loss(x.to("trn"), t.to("trn"))
            try:
                if sync == "cpu":
                    loss.cpu()
                elif sync == "item":
                    loss.item()
                else:
                    torch.trn.synchronize()
            except RuntimeError as e:
                assert "nll_loss" in str(e) and "out of bounds" in str(e) \
                    and "1 row" in str(e), e
            else:
                raise AssertionError(f"target {bad} was not reported at {sync}")
            torch.trn.synchronize()     # reported once, then forgotten
            assert not torch.isfinite(loss.cpu()), (bad, loss)
        # Ignored and valid targets leave nothing to report.
        t = torch.randint(0, 5, (8,))
        t[0] = -100
        F.nll_loss(x.to("trn"), t.to("trn")).cpu()
        torch.trn.synchronize()
        # Documented difference: a NaN row that is ignored poisons trn's
        # loss (no ISA operation drops a NaN); the CPU skips the row.
        x[0] = float("nan")
        assert torch.isfinite(F.nll_loss(x, t))
        assert torch.isnan(F.nll_loss(x.to("trn"), t.to("trn")).cpu())
    finally:
        del os.environ["TRN_FALLBACK"]
    ops = trn_ops()
    assert ops.get("nll_loss", 0) >= 30 and ops.get("nll_loss_backward", 0) >= 28, ops
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()


@test
def views_and_resize():
    x = torch.arange(24.0)
    d = x.to("trn")
    assert torch.equal(d.view(4, 6).cpu(), x.view(4, 6))
    assert torch.equal(d.reshape(2, 3, 4)[1].cpu(), x.reshape(2, 3, 4)[1])
    assert torch.equal(d.as_strided((3, 3), (1, 3), 2).cpu(),
                       x.as_strided((3, 3), (1, 3), 2))
    assert torch.equal(d.view(4, 6).t().contiguous().cpu(), x.view(4, 6).t().contiguous())
    r = d.clone()
    r.resize_(40)
    assert r.shape == (40,)
    assert torch.equal(r[:24].cpu(), x)


def refused(fn, *words):
    try:
        fn()
    except RuntimeError as e:
        assert all(w in str(e) for w in words), e
    else:
        raise AssertionError(f"not refused: {words}")


@test
def set_shares_storage():
    """set_ makes a tensor a view of another's storage (no copy), in every
    form; bad views are refused and change nothing."""
    x = torch.arange(12.0)
    a = x.to("trn")
    b = torch.empty(0, device="trn")
    b.set_(a.untyped_storage(), 2, (2, 3), (3, 1))
    assert torch.equal(b.cpu(), x.as_strided((2, 3), (3, 1), 2))
    b.add_(100)                              # writes through to a
    assert a.cpu()[2] == 102 and a.cpu()[1] == 1, a.cpu()
    c = torch.empty(0, device="trn")
    c.set_(a.untyped_storage(), 4, (2, 2))   # no stride: contiguous
    assert c.stride() == (2, 1) and c.cpu()[0, 0] == a.cpu()[4]
    e = torch.empty(0, device="trn")
    e.set_(a.untyped_storage())              # all of it, one dimension
    assert e.shape == (12,) and torch.equal(e.cpu(), a.cpu())
    f = torch.empty(0, device="trn")
    f.set_(a)                                # another tensor's view
    assert f.data_ptr() == a.data_ptr() and f.shape == a.shape
    g = a.clone()
    g.set_()                                 # empty, still on trn:0
    assert g.numel() == 0 and g.device == a.device, (g.shape, g.device)
    assert torch.trn.device_op_counts().get("set_", 0) >= 4
    before = (b.shape, b.stride(), b.storage_offset())
    refused(lambda: b.set_(a.untyped_storage(), 10, (2, 3)), "out of bounds")
    refused(lambda: b.set_(a.untyped_storage(), 0, (2, 3), (-1, 1)), "Negative strides")
    refused(lambda: b.set_(torch.zeros(4).untyped_storage(), 0, (4,)), "trn storage")
    refused(lambda: torch.empty(0, device="trn:1").set_(a.untyped_storage(), 0, (2,)),
            "devices must match")
    other = torch.zeros(4, device="trn")
    refused(lambda: b.set_(other.untyped_storage(), 3, (2, 3)), "out of bounds")
    assert (b.shape, b.stride(), b.storage_offset()) == before
    assert b.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()


@test
def pinned_memory():
    """pin_memory() gives host buffers of the current trn device; copies
    between them and that device with non_blocking=True are the device's
    COPY alone (no staging), their results there after a sync."""
    x = torch.randn(64, 33)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and torch.equal(p, x)
    back = torch.empty(64, 33, pin_memory=True)
    assert back.is_pinned() and back.device.type == "cpu"
    torch.trn.reset_counts()
    d = p.to("trn", non_blocking=True)
    part = p[3:10].to("trn", non_blocking=True)      # at an offset
    back.copy_(d * 2, non_blocking=True)
    torch.trn.synchronize()
    assert torch.equal(back, x * 2)
    assert torch.equal(part.cpu(), x[3:10])
    ops = torch.trn.device_op_counts()
    assert ops.get("copy_h2d_pinned") == 2 and ops.get("copy_d2h_pinned") == 1, ops
    assert not ops.get("copy_h2d"), ops
    # Blocking: into pinned memory the COPY and a wait; from it, staged
    # (the caller may rewrite it at once).
    back.copy_(d + 1)
    assert torch.equal(back, x + 1)
    q = p.to("trn")
    p.zero_()
    assert torch.equal(q.cpu(), x)
    # Another device, another dtype, a strided view: the ordinary path.
    assert torch.equal(x.pin_memory().to("trn:1", non_blocking=True).cpu(), x)
    assert torch.equal(p.t().to("trn", non_blocking=True).cpu(), p.t())
    h = p.to("trn", torch.bfloat16, non_blocking=True)
    assert h.dtype == torch.bfloat16
    ops = torch.trn.device_op_counts()
    assert ops.get("copy_h2d_pinned") == 2 and ops.get("copy_d2h_pinned") == 2, ops
    del p, back


@test
def no_host_round_trip():
    """A chain of device kernels copies nothing back until .cpu()."""
    x = torch.randn(16, 16).to("trn")
    w = torch.randn(16, 16).to("trn")
    torch.trn.synchronize()
    torch.trn.reset_counts()
    before = trn_ops()
    y = x
    for _ in range(10):
        y = torch.relu(y @ w + x)
    mid = trn_ops()
    assert mid.get("copy_d2h", 0) == before.get("copy_d2h", 0), (before, mid)
    assert mid.get("mm", 0) - before.get("mm", 0) == 10
    # Layouts: a transpose made dense, softmax and max over dim 0.
    z = torch.tanh(y.t()).softmax(0).amax(0) + y[:, ::2].contiguous().sum(1)
    end = trn_ops()
    for k in ("copy_d2h", "copy_d2h_strided", "copy_h2d", "copy_h2d_strided"):
        assert end.get(k, 0) == before.get(k, 0), (k, before, end)
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    assert_close(z.cpu(), torch.tanh(y.cpu().t()).softmax(0).amax(0) +
                 y.cpu()[:, ::2].sum(1))
    y.cpu()
    torch.trn.synchronize()


@test
def fallback_counted_and_refused():
    torch.trn.reset_counts()
    x = torch.randn(5).to("trn")
    torch.sin(x)
    fb = torch.trn.fallback_counts()
    assert sum(n for k, n in fb.items() if k.startswith("aten::sin")) == 1, fb
    os.environ["TRN_FALLBACK"] = "error"
    try:
        torch.sin(x)
    except RuntimeError as e:
        assert "aten::sin" in str(e) and "TRN_FALLBACK=error" in str(e), e
        assert sum(n for k, n in torch.trn.fallback_counts().items()
                   if k.startswith("aten::sin")) == 1
    else:
        raise AssertionError("TRN_FALLBACK=error did not refuse aten::sin")
    finally:
        del os.environ["TRN_FALLBACK"]
    # Device kernels still run with fallbacks refused.
    os.environ["TRN_FALLBACK"] = "error"
    try:
        assert_close((x + x).cpu(), x.cpu() * 2)
    finally:
        del os.environ["TRN_FALLBACK"]


@test
def memory_back_to_baseline():
    torch.trn.synchronize()
    torch.trn.empty_cache()
    base = torch.trn.memory_allocated()
    ts = [torch.randn(256, 256).to("trn") for _ in range(8)]
    assert torch.trn.memory_allocated() >= base + 8 * 256 * 256 * 4
    y = ts[0] @ ts[1]
    del ts, y
    assert torch.trn.memory_allocated() == base, (torch.trn.memory_allocated(), base)
    assert torch.trn.memory_reserved() > 0
    torch.trn.empty_cache()
    assert torch.trn.memory_reserved() == torch.trn.memory_allocated()


@test
def out_of_memory_raises_and_loses_nothing():
    x = torch.randn(64).to("trn")
    before = torch.trn.memory_allocated()
    try:
        torch.empty(1 << 40, dtype=torch.uint8, device="trn")
    except torch.OutOfMemoryError as e:
        assert "trn:0" in str(e), e
    else:
        raise AssertionError("a 1 TiB tensor fitted on a simulated device")
    assert torch.trn.memory_allocated() == before
    assert_close((x * 2).cpu(), x.cpu() * 2)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(16, 32)
        self.l2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


def train(model, x, y, steps, device, loss_fn=torch.nn.functional.mse_loss,
          **sgd):
    model = model.to(device)
    x, y = x.to(device), y.to(device)
    opt = torch.optim.SGD(model.parameters(), **(sgd or {"lr": 0.05}),
                          foreach=False)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


@test
def mlp_trains_like_cpu():
    torch.manual_seed(0)
    ref = MLP()
    dev = MLP()
    dev.load_state_dict(ref.state_dict())
    x, y = torch.randn(64, 16), torch.randn(64, 4)
    cpu_losses, ref = train(ref, x, y, 20, "cpu")
    torch.trn.reset_counts()
    trn_losses, dev = train(dev, x, y, 20, "trn")
    assert_close(torch.tensor(trn_losses), torch.tensor(cpu_losses),
                 rtol=1e-4, atol=1e-5)
    assert trn_losses[-1] < trn_losses[0]
    for (n, p), q in zip(dev.named_parameters(), ref.parameters()):
        assert_close(p.detach().cpu(), q.detach(), rtol=1e-4, atol=1e-5, msg=n)
    ops = torch.trn.device_op_counts()
    for n in ("addmm", "mm", "relu", "threshold_backward", "sum", "mse_loss",
              "mse_loss_backward", "add_"):
        assert ops.get(n, 0) >= 20, (n, ops)
    # Every step on the device: no operator fell back to the CPU.
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    print(f"# mlp: device kernels {sum(ops.values())}, "
          f"fallbacks {sum(torch.trn.fallback_counts().values())} "
          f"{sorted(torch.trn.fallback_counts().items())}")


@test
def classifier_trains_like_cpu():
    """The MLP as a 4-class classifier with cross_entropy (class weights,
    a few ignored labels): every step on the device, like the CPU's."""
    torch.manual_seed(5)
    ref = MLP()
    dev = MLP()
    dev.load_state_dict(ref.state_dict())
    x, y = torch.randn(48, 16), torch.randint(0, 4, (48,))
    y[::7] = -100
    w = torch.tensor([1.0, 2.0, 0.5, 1.5])

    def ce(out, target):
        return torch.nn.functional.cross_entropy(out, target,
                                                 weight=w.to(out.device))
    cpu_losses, ref = train(ref, x, y, 10, "cpu", ce, lr=0.2)
    torch.trn.reset_counts()
    trn_losses, dev = train(dev, x, y, 10, "trn", ce, lr=0.2)
    assert_close(torch.tensor(trn_losses), torch.tensor(cpu_losses),
                 rtol=1e-4, atol=1e-5)
    assert trn_losses[-1] < trn_losses[0], trn_losses
    for (n, p), q in zip(dev.named_parameters(), ref.parameters()):
        assert_close(p.detach().cpu(), q.detach(), rtol=1e-4, atol=1e-5, msg=n)
    ops = torch.trn.device_op_counts()
    for n in ("nll_loss", "nll_loss_backward", "log_softmax",
              "log_softmax_backward"):
        assert ops.get(n, 0) == 10, (n, ops)
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()


class DeepMLP(torch.nn.Module):
    """Every activation the ISA has, a softmax head, a 3-D (sequence) input."""
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(16, 32)
        self.l2 = torch.nn.Linear(32, 32)
        self.l3 = torch.nn.Linear(32, 8)

    def forward(self, x):
        F = torch.nn.functional
        h = F.gelu(self.l1(x))                      # erf's GELU
        h = torch.tanh(self.l2(h)) * torch.sigmoid(F.gelu(h, approximate="tanh"))
        return torch.softmax(self.l3(h), -1).mean(1)


@test
def deep_mlp_with_momentum_trains_like_cpu():
    torch.manual_seed(1)
    ref = DeepMLP()
    dev = DeepMLP()
    dev.load_state_dict(ref.state_dict())
    x, y = torch.randn(4, 6, 16), torch.softmax(torch.randn(4, 8), -1)

    sgd = {"lr": 0.5, "momentum": 0.9, "weight_decay": 1e-3}
    cpu_losses, ref = train(ref, x, y, 10, "cpu", **sgd)
    torch.trn.reset_counts()
    trn_losses, dev = train(dev, x, y, 10, "trn", **sgd)
    assert_close(torch.tensor(trn_losses), torch.tensor(cpu_losses),
                 rtol=1e-4, atol=1e-6)
    for (n, p), q in zip(dev.named_parameters(), ref.parameters()):
        assert_close(p.detach().cpu(), q.detach(), rtol=1e-4, atol=1e-5, msg=n)
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    ops = torch.trn.device_op_counts()
    for n in ("gelu_backward", "tanh_backward", "sigmoid_backward",
              "softmax_backward", "mean", "mul_"):
        assert ops.get(n, 0) >= 10, (n, ops)
    assert ops["gelu"] >= 20 and ops["gelu_backward"] >= 20, ops   # both forms


@test
def optimizer_updates_match_cpu():
    """addcmul_, addcdiv_, lerp_ and mul_ by a number (Adam's, AdamW's,
    RMSprop's and Adagrad's updates) on the device, as the CPU's kernels."""
    s, a, b = torch.randn(5, 7), torch.randn(5, 7), torch.rand(5, 7) + 0.5
    torch.trn.reset_counts()
    for dt in (torch.float32, torch.bfloat16):
        sc, ac, bc = s.to(dt), a.to(dt), b.to(dt)
        st, at_, bt = sc.to("trn"), ac.to("trn"), bc.to("trn")
        assert_close(st.clone().addcmul_(at_, bt, value=-0.3).cpu(),
                     sc.clone().addcmul_(ac, bc, value=-0.3), msg=str(dt))
        assert_close(st.clone().addcdiv_(at_, bt, value=2.5).cpu(),
                     sc.clone().addcdiv_(ac, bc, value=2.5), msg=str(dt))
        for w in (0.1, 0.9, -0.7):      # both of PyTorch's formulas
            assert_close(st.clone().lerp_(at_, w).cpu(),
                         sc.clone().lerp_(ac, w), msg=f"{dt} {w}")
        assert_close(st.clone().mul_(0.999).cpu(), sc.clone().mul_(0.999))
        assert_close(torch.addcmul(st, at_, bt, value=2).cpu(),
                     torch.addcmul(sc, ac, bc, value=2))
        assert_close(torch.lerp(st, at_, 0.25).cpu(), torch.lerp(sc, ac, 0.25))
    # A transposed operand, and self itself as an operand.
    u = s.t().contiguous()
    assert_close(s.to("trn").addcmul_(u.to("trn").t(), b.to("trn")).cpu(),
                 s.clone().addcmul_(u.t(), b))
    v = s.to("trn")
    assert_close(v.addcmul_(v, v, value=0.5).cpu(), s.clone().addcmul_(s, s, value=0.5))
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    ops = trn_ops()
    for n in ("addcmul", "addcdiv", "lerp", "mul_"):
        assert ops.get(n, 0) >= 2, (n, ops)
    # Broadcast operands are not ours: the fallback, counted, still right.
    assert_close(torch.addcmul(s.to("trn"), a[0].to("trn"), b.to("trn")).cpu(),
                 torch.addcmul(s, a[0], b))
    assert torch.trn.fallback_counts(), "a broadcast addcmul ran on the device?"


@test
def adaptive_optimizers_train_like_cpu():
    """Adam, AdamW, RMSprop and Adagrad: ten steps on trn match the CPU's,
    and no operator falls back."""
    for name, kw in (("Adam", {"lr": 1e-2}), ("AdamW", {"lr": 1e-2}),
                     ("RMSprop", {"lr": 1e-3}), ("Adagrad", {"lr": 5e-2})):
        torch.manual_seed(3)
        ref = MLP()
        dev = MLP()
        dev.load_state_dict(ref.state_dict())
        x, y = torch.randn(32, 16), torch.randn(32, 4)
        losses = {}
        for model, device in ((ref, "cpu"), (dev, "trn")):
            model.to(device)
            opt = getattr(torch.optim, name)(model.parameters(), **kw)
            xd, yd = x.to(device), y.to(device)
            torch.trn.reset_counts()
            out = []
            for _ in range(10):
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(xd), yd)
                loss.backward()
                opt.step()
                out.append(loss.item())
            losses[device] = out
        assert_close(torch.tensor(losses["trn"]), torch.tensor(losses["cpu"]),
                     rtol=1e-4, atol=1e-6, msg=name)
        for (n, p), q in zip(dev.named_parameters(), ref.parameters()):
            assert_close(p.detach().cpu(), q.detach(), rtol=1e-4, atol=1e-5,
                         msg=f"{name} {n}")
        assert not torch.trn.fallback_counts(), (name, torch.trn.fallback_counts())


def layer_pair(**kw):
    """A TransformerEncoderLayer (16, 2 heads, 32) on the CPU and its copy
    on trn."""
    ref = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, **kw)
    dev = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, **kw)
    dev.load_state_dict(ref.state_dict())
    return ref, dev.to("trn")


def layers_match(ref, dev, xc, xt, yc, yt):
    """Backward of sum(y^2) through both layers: outputs, input gradients
    and every parameter's gradient match, and trn took no fallback."""
    (yc * yc).sum().backward()
    (yt * yt).sum().backward()
    assert_close(yt.detach().cpu(), yc.detach(), rtol=1e-4, atol=1e-5)
    assert_close(xt.grad.cpu(), xc.grad, rtol=1e-4, atol=1e-4)
    for (n, p), q in zip(dev.named_parameters(), ref.parameters()):
        assert_close(p.grad.cpu(), q.grad, rtol=1e-4, atol=1e-4, msg=n)
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()


@test
def transformer_layer_matches_cpu():
    """nn.TransformerEncoderLayer forward and backward: attention's head
    splits, layer norms, (safe) softmax and GELU on the device, matching
    the CPU, with no fallback."""
    torch.manual_seed(7)
    ref, dev = layer_pair(dropout=0.0, activation="gelu")
    x = torch.randn(3, 5, 16)
    xc, xt = x.clone().requires_grad_(), x.to("trn").requires_grad_()
    torch.trn.reset_counts()
    layers_match(ref, dev, xc, xt, ref(xc), dev(xt))
    ops = trn_ops()
    for n in ("layer_norm", "layer_norm_backward", "bmm", "safe_softmax",
              "softmax_backward", "gelu", "gelu_backward"):
        assert ops.get(n, 0) >= 1, (n, ops)


@test
def transformer_layer_trains_with_dropout():
    """The same layer in training with dropout 0.1, on the device (one
    UNARY from bytes per mask) and with no fallback: output and gradients
    match the CPU's, whose masks come from the same generator in the same
    order and layout (the attention output dropout1 sees is transposed:
    the CPU draws in memory order, and so must trn)."""
    torch.manual_seed(8)
    ref, dev = layer_pair(dropout=0.1)
    x = torch.randn(3, 5, 16)
    xc, xt = x.clone().requires_grad_(), x.to("trn").requires_grad_()
    torch.trn.reset_counts()
    torch.manual_seed(9)
    yc = ref(xc)
    torch.manual_seed(9)
    yt = dev(xt)
    layers_match(ref, dev, xc, xt, yc, yt)
    with torch.no_grad():                    # something was dropped
        assert (ref.eval()(x) - yc).abs().max() > 1e-3
    ops = trn_ops()
    # Attention's weights, after attention, inside and after the block.
    assert ops.get("dropout", 0) == 4 and ops.get("dropout_backward", 0) == 4, ops


@test
def safe_softmax_zeroes_fully_masked_rows():
    """_safe_softmax (attention over masked rows): rows of only -inf give
    zeros as on the CPU, every other row matches softmax bit for bit (also
    rows with some -inf, +inf or NaN), along any dim; backward too."""
    torch.trn.reset_counts()
    x = torch.randn(6, 5)
    x[1] = float("-inf")
    x[2, :3] = float("-inf")
    x[3, 1] = float("inf")
    x[4, 2] = float("nan")
    for dim in (1, 0):
        c = torch.ops.aten._safe_softmax(x, dim)
        t = torch.ops.aten._safe_softmax(x.to("trn"), dim).cpu()
        assert_close(t, c, equal_nan=True, msg=str(dim))
        assert torch.equal(t.isnan(), c.isnan()), dim
    assert torch.equal(torch.ops.aten._safe_softmax(x.to("trn"), 1).cpu()[1],
                       torch.zeros(5))
    ok = torch.tensor([0, 2, 5])
    assert torch.equal(torch.ops.aten._safe_softmax(x.to("trn"), 1).cpu()[ok],
                       torch.softmax(x.to("trn"), 1).cpu()[ok])
    xb = x.to(torch.bfloat16)
    assert_close(torch.ops.aten._safe_softmax(xb.to("trn"), 1).cpu(),
                 torch.ops.aten._safe_softmax(xb, 1), equal_nan=True)
    xc = x[[0, 1, 2, 5]].clone().requires_grad_()
    xt = x[[0, 1, 2, 5]].to("trn").requires_grad_()
    g = torch.randn(4, 5)
    torch.ops.aten._safe_softmax(xc, 1).backward(g)
    torch.ops.aten._safe_softmax(xt, 1).backward(g.to("trn"))
    assert_close(xt.grad.cpu(), xc.grad)
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    assert trn_ops().get("safe_softmax", 0) >= 5, trn_ops()


@test
def streams_and_events():
    """torch.trn.Stream / Event (torch.Stream, torch.Event): work issued
    to a stream, ordered against another by an event, timing events, the
    stream pool, and the errors of misuse."""
    default = torch.trn.current_stream()
    assert default.stream_id == 0 and default == torch.trn.default_stream()
    s = torch.trn.Stream()
    assert s.device == torch.device("trn:0") and s.stream_id > 0, s
    x = torch.randn(64, 64)
    a = x.to("trn")
    torch.trn.synchronize()
    before = trn_ops()
    done = torch.trn.Event(enable_timing=True)
    assert done.query()                # never recorded: complete
    with torch.trn.stream(s):
        assert torch.trn.current_stream() == s
        b = a @ a + 1.0                # issued to s
        done.record()                  # on the current stream: s
    assert torch.trn.current_stream() == default
    done.wait(default)                 # the device orders, the host goes on
    c = b * 2.0                        # on the default stream, after s
    after = torch.trn.Event(enable_timing=True)
    after.record()
    assert_close(c.cpu(), (x @ x + 1.0) * 2.0, rtol=1e-5, atol=1e-4)
    # The device clock says so: after's TIMESTAMP ran once done's had
    # (elapsed_time raises if the end ran first).
    assert done.elapsed_time(after) >= 0
    on_device_only(before, trn_ops(), "mm", "add", "mul")
    done.synchronize()
    assert done.query() and s.query()
    s.synchronize()
    # wait_stream: the same through an event torch makes.
    with torch.trn.stream(s):
        d = c - 1.0
    default.wait_stream(s)
    assert_close((d + 0.5).cpu(), (x @ x + 1.0) * 2.0 - 0.5, rtol=1e-5,
                 atol=1e-4)
    # Timing events: device TIMESTAMPs, elapsed_time in ms.
    t0 = torch.trn.Event(enable_timing=True)
    t1 = torch.trn.Event(enable_timing=True)
    t0.record()
    for _ in range(4):
        a = a @ a * 0.01
    t1.record()
    t1.synchronize()
    ms = t0.elapsed_time(t1)
    assert 0 <= ms < 60000, ms
    plain = torch.trn.Event()
    plain.record()
    try:
        plain.elapsed_time(t1)
    except RuntimeError as e:
        assert "enable_timing" in str(e), e
    else:
        raise AssertionError("elapsed_time of a non-timing event worked")
    # The pool: eight streams per device, then the same ones again.
    ids = {torch.trn.Stream().stream_id for _ in range(12)}
    assert ids <= set(range(1, 9)) and len(ids) == 8, ids
    # A stream of trn:1 and its work.
    s1 = torch.trn.Stream("trn:1")
    assert s1.device == torch.device("trn:1")
    with torch.trn.stream(s1):
        y = torch.ones(3, device="trn:1") * 3.0
    s1.synchronize()
    assert_close(y.cpu(), torch.full((3,), 3.0))
    try:
        plain.record(s1)               # recorded on trn:0 before
    except RuntimeError as e:
        assert "trn:0" in str(e) and "trn:1" in str(e), e
    else:
        raise AssertionError("an event of trn:0 was recorded on trn:1")
    try:
        torch.trn.set_stream(torch.Stream(device="cpu"))
    except ValueError:
        pass
    else:
        raise AssertionError("set_stream took a CPU stream")


@test
def generators():
    """trn's random numbers: drawn by the CPU kernels from trn generators
    that seed, save and restore as the CPU's do, and give the same numbers
    as the CPU for the same seed; fills and dropout upload them without
    reading anything back from the device."""
    torch.trn.reset_counts()
    torch.manual_seed(1234)            # seeds every trn device too
    a = torch.randn(257, device="trn")
    b = torch.randn(257, device="trn")
    assert torch.trn.initial_seed() == 1234
    torch.manual_seed(1234)
    c = torch.randn(257)
    assert_close(a.cpu(), c, rtol=0, atol=0)
    assert_close(b.cpu(), torch.randn(257), rtol=0, atol=0)
    assert not torch.equal(a.cpu(), b.cpu())   # it went on
    assert trn_ops().get("normal_", 0) >= 2, trn_ops()
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()

    # Saved and restored.
    state = torch.trn.get_rng_state()
    assert state.device.type == "cpu" and state.dtype == torch.uint8
    x = torch.rand(64, device="trn")
    torch.trn.set_rng_state(state)
    y = torch.rand(64, device="trn")
    assert_close(x.cpu(), y.cpu(), rtol=0, atol=0)
    torch.trn.set_rng_state_all(torch.trn.get_rng_state_all())

    # A generator of trn:1 of its own, and the same seed on the CPU.
    g = torch.Generator(device="trn:1")
    assert g.device == torch.device("trn:1"), g.device
    g.manual_seed(7)
    assert g.initial_seed() == 7
    u = torch.rand(100, device="trn:1", generator=g)
    assert u.device == torch.device("trn:1")
    gc = torch.Generator()
    gc.manual_seed(7)
    assert_close(u.cpu(), torch.rand(100, generator=gc), rtol=0, atol=0)
    # Its state and the CPU's are one format.
    gc.set_state(g.get_state())
    assert_close(torch.rand(10, device="trn:1", generator=g).cpu(),
                 torch.rand(10, generator=gc), rtol=0, atol=0)

    # Per device: seeding trn:0 leaves trn:1's default alone.
    torch.trn.manual_seed_all(5)
    torch.trn.set_device(0)
    torch.trn.manual_seed(6)
    p = torch.randn(16, device="trn:1")
    torch.manual_seed(5)
    assert_close(p.cpu(), torch.randn(16), rtol=0, atol=0)

    # Dropout and other random operators follow the seed too.
    torch.manual_seed(99)
    d1 = torch.nn.functional.dropout(torch.ones(512, device="trn"), 0.5)
    torch.manual_seed(99)
    d2 = torch.nn.functional.dropout(torch.ones(512, device="trn"), 0.5)
    assert_close(d1.cpu(), d2.cpu(), rtol=0, atol=0)
    assert 0 < d1.cpu().count_nonzero() < 512

    # Dropout on the device: the CPU kernel's mask (native_dropout draws
    # from the CPU's default generator), applied and differentiated on
    # trn, bit for bit as on the CPU, f32 and bf16; nothing read back. A
    # transposed input gets the CPU's mask too (drawn in memory order).
    for dt, tr in ((torch.float32, False), (torch.bfloat16, False),
                   (torch.float32, True)):
        x = (torch.randn(17, 33).t() if tr else torch.randn(33, 17)).to(dt)
        torch.manual_seed(5)
        oc, mc = torch.ops.aten.native_dropout(x, 0.3, True)
        torch.trn.reset_counts()
        torch.manual_seed(5)
        xt = x.to("trn").requires_grad_()
        ot, mt = torch.ops.aten.native_dropout(xt, 0.3, True)
        g = torch.randn(33, 17).to(dt)
        gt = torch.ops.aten.native_dropout_backward(g.to("trn"), mt, 1 / 0.7)
        reads = trn_ops().get("copy_d2h", 0)
        assert reads == 0, trn_ops()
        assert mt.dtype == torch.bool and mt.device.type == "trn"
        assert torch.equal(mt.cpu(), mc), ("mask", dt, tr)
        assert torch.equal(ot.detach().cpu(), oc), \
            ("out", dt, (ot.detach().cpu().float() - oc.float()).abs().max())
        gc = torch.ops.aten.native_dropout_backward(g, mc, 1 / 0.7)
        assert torch.equal(gt.cpu(), gc), \
            ("grad", dt, (gt.cpu().float() - gc.float()).abs().max())
        ops = trn_ops()
        assert ops.get("dropout", 0) == 1 and ops.get("dropout_backward", 0) == 1, ops
    # Through nn.Dropout and autograd: no fallback, gradient = mask * scale.
    torch.trn.reset_counts()
    xt = torch.randn(8, 9).to("trn").requires_grad_()
    y = torch.nn.Dropout(0.25)(xt)
    y.sum().backward()
    kept = y.detach().cpu() != 0
    assert_close(xt.grad.cpu(), kept.float() / 0.75)
    assert not torch.trn.fallback_counts(), torch.trn.fallback_counts()
    torch.manual_seed(-3)              # wraps, as torch.Generator does
    assert torch.trn.initial_seed() == 0xFFFF_FFFF_FFFF_FFFF - 3


def sim_knobs(name):
    return glob.glob(f"/sys/kernel/debug/trn_sim/*/{name}")


@test
def device_error_raises_at_sync():
    """A job that hangs (the simulator's hang_next) fails its stream, here
    not the default one: the next synchronisation of the device raises,
    naming the device, the operator and the status: the first failure of
    the stream's jobs, not the later job the ban cancelled.  Runs last, on
    trn:1: the hang bans this process's context there."""
    knobs = sim_knobs("hang_next")
    assert knobs, "no trn_sim debugfs knobs (is debugfs mounted?)"
    x = torch.randn(8, 8).to("trn:1")
    torch.trn.synchronize("trn:1")
    torch.trn.synchronize("trn:0")
    for k in knobs:
        with open(k, "w") as f:
            f.write("1")
    try:
        s1 = torch.trn.Stream("trn:1")
        with torch.trn.stream(s1):
            y = x @ x                  # enqueued on a pool stream
            assert not s1.query()      # submitted alone: the hanging job
            w = y + y                  # the next job, cancelled by the ban
        try:
            torch.trn.synchronize("trn:1")  # every stream of trn:1
        except RuntimeError as e:
            msg = str(e)
            # The first failure: mm's timeout, named; the queue's latest
            # failure is the add the ban cancelled.
            assert "trn:1" in msg and "timeout" in msg, msg
            assert "aten::mm" in msg or " mm" in msg, msg
            assert "latest failure: status ABORTED" in msg, msg
        else:
            raise AssertionError("a hung job did not fail its stream")
        try:
            (y + y).cpu()
        except RuntimeError:
            pass                       # refused: the stream keeps its error
        else:
            raise AssertionError("a banned context still ran a job")
    finally:
        for k in knobs:
            with open(k, "w") as f:
                f.write("0")
    # trn:0 is another context: unaffected.
    z = torch.randn(4, 4)
    assert_close((z.to("trn:0") + 1.0).cpu(), z + 1.0)


def main():
    only = [t for t in os.environ.get("TRN_TORCH_TESTS", "").split(",") if t]
    tests = [t for t in TESTS if not only or t.__name__ in only]
    lines = [f"1..{len(tests)}"]
    print(lines[0], flush=True)
    failed = 0
    for i, t in enumerate(tests, 1):
        t0 = time.monotonic()
        try:
            t()
            line = f"ok {i} torch.{t.__name__}"
        except Exception:
            failed += 1
            for ln in traceback.format_exc().splitlines():
                print("# " + ln)
            line = f"not ok {i} torch.{t.__name__}"
        line += f"  # {time.monotonic() - t0:.1f} s" if not line.startswith("not") else ""
        lines.append(line)
        print(line, flush=True)
    out = os.environ.get("TRN_VM_OUT")
    if out:
        with open(os.path.join(out, "test_torch.tap"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
