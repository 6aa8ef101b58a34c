// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * math.cpp - device kernels for what the ISA executes (the operator table
 * in Documentation/pytorch.md): element-wise ops with host scalars and the
 * ISA's broadcasts, matmuls, reductions, softmax, losses, and the backward
 * ops of an MLP's autograd. f32 runs as it is; bf16 is widened to f32
 * (exact), computed, and rounded once at the end, as PyTorch's CPU kernels
 * compute it. Whatever a kernel here does not take goes through the
 * counted CPU fallback.
 */
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include <ATen/Operators.h>
#include <ATen/core/Reduction.h>

#include "ops.h"

namespace trn_torch {

static constexpr int64_t kMaxDim = 65536;	/* ISA rows/cols/m/n/k */
static constexpr int64_t kMatmulBMax = 64LL << 20; /* ISA: k * n * 4 */
static constexpr int64_t kMaxLoops = 1024;	/* per-slice commands per op */

typedef int (*unary_fn)(eager_tensor_t *, const eager_tensor_t *);
typedef int (*binary_fn)(eager_tensor_t *, const eager_tensor_t *,
			 const eager_tensor_t *);

/* A device call's error, thrown as a RuntimeError naming the operator. */
static void run(int ret)
{
	check(ret, OpName::current());
}

/* ---- operands ---- */

/* f32 or bf16, contiguous, non-empty, on trn. */
static bool on_trn(const at::Tensor &t)
{
	eager_tensor_t e;

	return as_eager(t, &e);
}

/*
 * @x dense: itself, or, a non-contiguous trn view of f32 or bf16, laid out
 * by the device's strided COPYs (copy_ in ops.cpp), no host round trip.
 */
static at::Tensor dense(const at::Tensor &x)
{
	if (x.is_privateuseone() && !x.is_contiguous() && x.numel() &&
	    (x.scalar_type() == at::kFloat ||
	     x.scalar_type() == at::kBFloat16))
		return x.contiguous();
	return x;
}

/* A host scalar: a wrapped Python number or a real 0-dim CPU tensor. */
static bool host_scalar(const at::Tensor &t, double *v)
{
	if (!t.defined() || !t.is_cpu() || t.dim() || t.is_complex())
		return false;
	*v = t.item<double>();
	return true;
}

/* The eager view of a tensor already known to fit (see as_eager). */
static eager_tensor_t view_of(const at::Tensor &t, int64_t rows = -1,
			      int64_t cols = -1)
{
	eager_tensor_t e;

	TORCH_INTERNAL_ASSERT(as_eager(t, &e, rows, cols));
	return e;
}

/* @t widened to f32: itself, or a new f32 copy (bf16 -> f32 is exact). */
static at::Tensor widened(const at::Tensor &t)
{
	if (t.scalar_type() == at::kFloat)
		return t;
	at::Tensor w = new_tensor(t.sizes(), t, at::kFloat);
	eager_tensor_t tw = view_of(w), tt = view_of(t);

	run(eager_cast(&tw, &tt));
	return w;
}

/* The f32 result @r as @dt (rounded once); into @dst if given. */
static at::Tensor narrowed(const at::Tensor &r, at::ScalarType dt,
			   const at::Tensor *dst = nullptr)
{
	if (!dst && dt == at::kFloat)
		return r;
	at::Tensor o = dst ? *dst : new_tensor(r.sizes(), r, dt);
	eager_tensor_t to = view_of(o), tr = view_of(r);

	run(eager_cast(&to, &tr));
	return o;
}

/* New f32 tensors of @like's shape, and eager calls on f32 tensors. */
static at::Tensor f32_like(const at::Tensor &like)
{
	return new_tensor(like.sizes(), like, at::kFloat);
}

static void un(unary_fn fn, const at::Tensor &out, const at::Tensor &x)
{
	eager_tensor_t to = view_of(out), tx = view_of(x);

	run(fn(&to, &tx));
}

static void bin(binary_fn fn, const at::Tensor &out, const at::Tensor &a,
		const at::Tensor &b)
{
	eager_tensor_t to = view_of(out), ta = view_of(a), tb = view_of(b);

	run(fn(&to, &ta, &tb));
}

static void sc(int (*fn)(eager_tensor_t *, const eager_tensor_t *, float),
	       const at::Tensor &out, const at::Tensor &x, double v)
{
	eager_tensor_t to = view_of(out), tx = view_of(x);

	run(fn(&to, &tx, static_cast<float>(v)));
}

/* ---- element-wise: binary ---- */

enum class Bin { Add, Sub, Mul, Div, Max, Min };

static binary_fn tensor_fn(Bin op)
{
	switch (op) {
	case Bin::Add: return eager_add;
	case Bin::Sub: return eager_sub;
	case Bin::Mul: return eager_mul;
	case Bin::Div: return eager_div;
	case Bin::Max: return eager_maximum;
	default: return eager_minimum;
	}
}

static bool commutes(Bin op)
{
	return op == Bin::Add || op == Bin::Mul || op == Bin::Max ||
	       op == Bin::Min;
}

/* out = x op v, f32 (out may be x). */
static void scalar_op(Bin op, const at::Tensor &out, const at::Tensor &x,
		      double v)
{
	switch (op) {
	case Bin::Add: sc(eager_add_scalar, out, x, v); break;
	case Bin::Sub: sc(eager_add_scalar, out, x, -v); break;
	case Bin::Mul: sc(eager_scale, out, x, v); break;
	case Bin::Div: sc(eager_div_scalar, out, x, v); break;
	case Bin::Max: sc(eager_max_scalar, out, x, v); break;
	case Bin::Min: sc(eager_min_scalar, out, x, v); break;
	}
}

/*
 * The sizes of b's distinct elements, aligned to @as (1 where b is
 * broadcast or expanded): false unless b is a non-empty f32/bf16 trn
 * tensor whose distinct elements lie densely in row-major order.
 */
static bool distinct_sizes(at::IntArrayRef as, const at::Tensor &b,
			   std::vector<int64_t> *bs)
{
	const int64_t n = static_cast<int64_t>(as.size()), m = b.dim();
	int64_t expect = 1;

	if (!b.is_privateuseone() || m > n || !b.numel() ||
	    (b.scalar_type() != at::kFloat && b.scalar_type() != at::kBFloat16))
		return false;
	bs->assign(n, 1);
	for (int64_t d = m - 1; d >= 0; d--) {
		if (b.size(d) == 1 || b.stride(d) == 0)
			continue;
		if (b.stride(d) != expect)
			return false;	/* not dense */
		expect *= b.size(d);
		(*bs)[n - m + d] = b.size(d);
	}
	return true;
}

/*
 * b's view against a (a's sizes @as seen as rows x cols, cols the last
 * dimension), for the broadcasts the ISA has: a's shape; one row for every
 * row; one value per row; one element. b may be an expanded view (stride-0
 * dims): what counts are its distinct elements, which must lie densely in
 * row-major order. The result of a op b then has a's shape.
 */
static bool broadcast_view(at::IntArrayRef as, const at::Tensor &b,
			   eager_tensor_t *tb)
{
	const int64_t n = static_cast<int64_t>(as.size());
	int64_t cols = n ? as[n - 1] : 1, rows, distinct;
	std::vector<int64_t> bs;
	enum eager_dtype dt;
	int64_t shape[2];

	if (!distinct_sizes(as, b, &bs) || !cols)
		return false;
	dt = b.scalar_type() == at::kFloat ? EAGER_F32 : EAGER_BF16;
	rows = c10::multiply_integers(as) / cols;
	distinct = c10::multiply_integers(bs);
	if (distinct == 1) {
		shape[0] = shape[1] = 1;
	} else if (at::IntArrayRef(bs) == as) {
		shape[0] = rows;
		shape[1] = cols;
	} else if (cols <= kMaxDim && bs[n - 1] == cols && distinct == cols) {
		shape[0] = 1;
		shape[1] = cols;
	} else if (cols <= kMaxDim && bs[n - 1] == 1 && distinct == rows &&
		   std::equal(bs.begin(), bs.end() - 1, as.begin())) {
		shape[0] = rows;
		shape[1] = 1;
	} else {
		return false;
	}
	return !eager_view(block_of(b), byte_offset(b), dt, 2, shape, tb);
}

/* A new f32 tensor of @n elements and its view as @v's shape. */
static at::Tensor f32_for(const eager_tensor_t &v, const at::Tensor &like,
			  eager_tensor_t *out)
{
	at::Tensor t = new_tensor({ v.shape[0] * v.shape[1] }, like,
				  at::kFloat);

	*out = view_of(t, v.shape[0], v.shape[1]);
	return t;
}

/*
 * Expanded @t whose distinct sizes are its sizes on [0, p), 1 on [p, q)
 * and its sizes again on [q, n) (e.g. a mean's gradient, expanded over
 * the reduced dims): per outer index, one BINARY ADD broadcasts a row of
 * inner values over the middle.
 */
static std::optional<at::Tensor> expand_middle(const at::Tensor &t)
{
	at::IntArrayRef as = t.sizes();
	const int64_t n = t.dim();
	std::vector<int64_t> bs;
	int64_t p = 0, q, outer = 1, mid = 1, inner = 1;
	eager_tensor_t tv, tw;

	if (!distinct_sizes(as, t, &bs))
		return std::nullopt;
	while (p < n && bs[p] == as[p])
		p++;
	for (q = p; q < n && bs[q] == 1; q++)
		;
	for (int64_t d = 0; d < n; d++) {
		if (d >= q && bs[d] != as[d])
			return std::nullopt;
		(d < p ? outer : d < q ? mid : inner) *= as[d];
	}
	if (inner > kMaxDim || outer > kMaxLoops)
		return std::nullopt;
	at::Tensor out = f32_like(t);
	at::Tensor w = new_tensor({ outer * inner }, t, at::kFloat);
	int64_t vs[2] = { outer, inner };

	run(eager_view(block_of(t), byte_offset(t),
		       t.scalar_type() == at::kFloat ? EAGER_F32 : EAGER_BF16,
		       2, vs, &tv));
	tw = view_of(w, outer, inner);
	run(eager_cast(&tw, &tv));	/* the distinct values, as f32 */
	for (int64_t o = 0; o < outer; o++) {
		int64_t os[2] = { mid, inner }, rs[2] = { 1, inner };
		eager_tensor_t to, tr;

		run(eager_view(block_of(out),
			       byte_offset(out) + o * mid * inner * 4,
			       EAGER_F32, 2, os, &to));
		run(eager_view(block_of(w), byte_offset(w) + o * inner * 4,
			       EAGER_F32, 2, rs, &tr));
		run(eager_fill(&to, 0.0f));
		run(eager_add(&to, &to, &tr));
	}
	return out;
}

/*
 * @t as a contiguous f32 tensor of its own shape: itself, widened, or
 * (an expanded view) broadcast into a new one on the device.
 */
static std::optional<at::Tensor> dense_f32(const at::Tensor &t)
{
	eager_tensor_t tv, tw, to;

	if (on_trn(t))
		return widened(t);
	if (!broadcast_view(t.sizes(), t, &tv)) {
		if (auto r = expand_middle(t))
			return r;
		/* Any other view (a permute): laid out by the device. */
		at::Tensor d = dense(t);

		if (!on_trn(d))
			return std::nullopt;
		return widened(d);
	}
	at::Tensor out = f32_like(t);
	at::Tensor w;

	if (tv.dtype != EAGER_F32) {
		w = f32_for(tv, t, &tw);
		run(eager_cast(&tw, &tv));
		tv = tw;
	}
	/* out = 0 + t's distinct values, broadcast by BINARY ADD. */
	to = view_of(out);
	run(eager_fill(&to, 0.0f));
	run(eager_add(&to, &to, &tv));
	return out;
}

/*
 * a op (alpha * b) on trn: a f32/bf16, b a tensor of a's device in one of
 * the ISA's broadcasts or a host scalar. @in_place: the result goes to a.
 * Empty optional: not ours (the caller falls back).
 */
static std::optional<at::Tensor> binary_on_device(const at::Tensor &a,
						  const at::Tensor &b, Bin op,
						  const char *name,
						  double alpha = 1.0,
						  bool in_place = false)
{
	eager_tensor_t tb;
	double v;
	bool scalar = host_scalar(b, &v);

	if (in_place ? !on_trn(a) : !a.is_privateuseone())
		return std::nullopt;
	at::Tensor bd = b;	/* b, or b laid out dense (keeps tb's block) */

	if (!scalar && b.device() != a.device())
		return std::nullopt;
	if (!scalar && !broadcast_view(a.sizes(), b, &tb)) {
		/* A view of a's shape no broadcast form reads: made dense. */
		if (b.sizes() != a.sizes() || b.is_contiguous())
			return std::nullopt;
		bd = dense(b);
		if (!broadcast_view(a.sizes(), bd, &tb))
			return std::nullopt;
	}
	/* In place, b may be a itself but no other view of its storage. */
	if (in_place && !scalar && block_of(a) == block_of(b) &&
	    (byte_offset(a) != byte_offset(b) || a.sizes() != b.sizes() ||
	     a.strides() != b.strides() || a.scalar_type() != b.scalar_type()))
		return std::nullopt;
	at::ScalarType dt = in_place || scalar ||
					    b.scalar_type() == a.scalar_type() ?
				    a.scalar_type() :
				    at::kFloat;
	const c10::DeviceGuard guard(a.device());
	auto a32 = dense_f32(a);

	if (!a32)
		return std::nullopt;
	at::Tensor out = in_place && a.scalar_type() == at::kFloat ?
				 a : f32_like(a);
	eager_tensor_t to = view_of(out), ta = view_of(*a32);

	if (scalar) {
		scalar_op(op, out, *a32, op == Bin::Add || op == Bin::Sub ?
						 alpha * v : v);
	} else {
		eager_tensor_t tw;
		at::Tensor w, scaled;

		if (tb.dtype != EAGER_F32) {
			w = f32_for(tb, a, &tw);
			run(eager_cast(&tw, &tb));
			tb = tw;
		}
		if (alpha != 1.0) {
			scaled = f32_for(tb, a, &tw);
			run(eager_scale(&tw, &tb, static_cast<float>(alpha)));
			tb = tw;
		}
		run(tensor_fn(op)(&to, &ta, &tb));
	}
	count_device_op(name);
	if (!in_place)
		return narrowed(out, dt);
	if (!out.is_same(a))
		narrowed(out, dt, &a);
	return a;
}

/* v op (alpha * b), v a host scalar: b's shape and dtype. */
static std::optional<at::Tensor> scalar_first(double v, const at::Tensor &b,
					      Bin op, const char *name,
					      double alpha)
{
	if (!on_trn(b))
		return std::nullopt;
	const c10::DeviceGuard guard(b.device());
	at::Tensor b32 = widened(b);
	at::Tensor out = f32_like(b);

	switch (op) {
	case Bin::Add:
	case Bin::Sub:
		sc(eager_scale, out, b32, op == Bin::Add ? alpha : -alpha);
		sc(eager_add_scalar, out, out, v);
		break;
	case Bin::Div:
		un(eager_recip, out, b32);
		if (v != 1.0)
			sc(eager_scale, out, out, v);
		break;
	default:
		scalar_op(op, out, b32, v);
		break;
	}
	count_device_op(name);
	return narrowed(out, b.scalar_type());
}

/* a op b as the dispatcher hands it over: either side may be the small one. */
static std::optional<at::Tensor> binary(const at::Tensor &a,
					const at::Tensor &b, Bin op,
					const char *name, double alpha = 1.0)
{
	double v;

	if (auto r = binary_on_device(a, b, op, name, alpha))
		return r;
	if (host_scalar(a, &v) && b.is_privateuseone())
		return scalar_first(v, b, op, name, alpha);
	if (commutes(op) && alpha == 1.0)
		return binary_on_device(b, a, op, name);
	return std::nullopt;
}

static at::Tensor trn_add(const at::Tensor &a, const at::Tensor &b,
			  const at::Scalar &alpha)
{
	KernelScope k("add");

	if (auto r = binary(a, b, Bin::Add, "add", alpha.toDouble()))
		return *r;
	return fall_back<ATEN_OP2(add, Tensor)>(a, b, alpha);
}

static at::Tensor trn_sub(const at::Tensor &a, const at::Tensor &b,
			  const at::Scalar &alpha)
{
	KernelScope k("sub");

	if (auto r = binary(a, b, Bin::Sub, "sub", alpha.toDouble()))
		return *r;
	return fall_back<ATEN_OP2(sub, Tensor)>(a, b, alpha);
}

static at::Tensor trn_mul(const at::Tensor &a, const at::Tensor &b)
{
	KernelScope k("mul");

	if (auto r = binary(a, b, Bin::Mul, "mul"))
		return *r;
	return fall_back<ATEN_OP2(mul, Tensor)>(a, b);
}

static at::Tensor trn_div(const at::Tensor &a, const at::Tensor &b)
{
	KernelScope k("div");

	if (auto r = binary(a, b, Bin::Div, "div"))
		return *r;
	return fall_back<ATEN_OP2(div, Tensor)>(a, b);
}

static at::Tensor trn_maximum(const at::Tensor &a, const at::Tensor &b)
{
	KernelScope k("maximum");

	if (auto r = binary(a, b, Bin::Max, "maximum"))
		return *r;
	return fall_back<ATEN_OP(maximum)>(a, b);
}

static at::Tensor trn_minimum(const at::Tensor &a, const at::Tensor &b)
{
	KernelScope k("minimum");

	if (auto r = binary(a, b, Bin::Min, "minimum"))
		return *r;
	return fall_back<ATEN_OP(minimum)>(a, b);
}

/* clamp with host bounds: IEEE max/min, so a NaN stays NaN as on the CPU. */
static std::optional<at::Tensor> clamp_on_device(
	const at::Tensor &x, const std::optional<at::Scalar> &lo,
	const std::optional<at::Scalar> &hi, const char *name)
{
	if (!on_trn(x) || (!lo && !hi) || (lo && lo->isComplex()) ||
	    (hi && hi->isComplex()))
		return std::nullopt;
	const c10::DeviceGuard guard(x.device());
	at::Tensor x32 = widened(x);
	at::Tensor out = f32_like(x);

	/* min(max(x, lo), hi): with lo > hi, everything is hi, as on the CPU. */
	if (lo)
		sc(eager_max_scalar, out, x32, lo->toDouble());
	if (hi)
		sc(eager_min_scalar, out, lo ? out : x32, hi->toDouble());
	count_device_op(name);
	return narrowed(out, x.scalar_type());
}

static at::Tensor trn_clamp(const at::Tensor &x,
			    const std::optional<at::Scalar> &lo,
			    const std::optional<at::Scalar> &hi)
{
	KernelScope k("clamp");

	if (auto r = clamp_on_device(x, lo, hi, "clamp"))
		return *r;
	return fall_back<ATEN_OP(clamp)>(x, lo, hi);
}

static at::Tensor trn_clamp_min(const at::Tensor &x, const at::Scalar &lo)
{
	KernelScope k("clamp_min");

	if (auto r = clamp_on_device(x, lo, std::nullopt, "clamp_min"))
		return *r;
	return fall_back<ATEN_OP(clamp_min)>(x, lo);
}

static at::Tensor trn_clamp_max(const at::Tensor &x, const at::Scalar &hi)
{
	KernelScope k("clamp_max");

	if (auto r = clamp_on_device(x, std::nullopt, hi, "clamp_max"))
		return *r;
	return fall_back<ATEN_OP(clamp_max)>(x, hi);
}

/* In place (an optimizer's p.add_(g, alpha=-lr), buf.mul_(momentum)). */
static at::Tensor &trn_add_(at::Tensor &a, const at::Tensor &b,
			    const at::Scalar &alpha)
{
	KernelScope k("add_");

	if (binary_on_device(a, b, Bin::Add, "add_", alpha.toDouble(), true))
		return a;
	return fall_back<ATEN_OP2(add_, Tensor)>(a, b, alpha);
}

static at::Tensor &trn_sub_(at::Tensor &a, const at::Tensor &b,
			    const at::Scalar &alpha)
{
	KernelScope k("sub_");

	if (binary_on_device(a, b, Bin::Sub, "sub_", alpha.toDouble(), true))
		return a;
	return fall_back<ATEN_OP2(sub_, Tensor)>(a, b, alpha);
}

static at::Tensor &trn_mul_(at::Tensor &a, const at::Tensor &b)
{
	KernelScope k("mul_");

	if (binary_on_device(a, b, Bin::Mul, "mul_", 1.0, true))
		return a;
	return fall_back<ATEN_OP2(mul_, Tensor)>(a, b);
}

static at::Tensor &trn_div_(at::Tensor &a, const at::Tensor &b)
{
	KernelScope k("div_");

	if (binary_on_device(a, b, Bin::Div, "div_", 1.0, true))
		return a;
	return fall_back<ATEN_OP2(div_, Tensor)>(a, b);
}

static at::Tensor &trn_mul_scalar_(at::Tensor &a, const at::Scalar &b)
{
	KernelScope k("mul_");

	if (binary_on_device(a, at::scalar_to_tensor(b), Bin::Mul, "mul_", 1.0,
			     true))
		return a;
	return fall_back<ATEN_OP2(mul_, Scalar)>(a, b);
}

/* ---- element-wise: the optimizers' updates ---- */

/* @t of @self's shape, dtype and device, dense (a view laid out first). */
static std::optional<at::Tensor> operand_like(const at::Tensor &self,
					      const at::Tensor &t)
{
	if (!t.is_privateuseone() || t.device() != self.device() ||
	    t.sizes() != self.sizes() || t.scalar_type() != self.scalar_type())
		return std::nullopt;
	/* self itself, or no other view of its storage (as binary_on_device). */
	if (block_of(t) == block_of(self) &&
	    (byte_offset(t) != byte_offset(self) ||
	     t.strides() != self.strides()))
		return std::nullopt;
	at::Tensor d = dense(t);

	if (!on_trn(d))
		return std::nullopt;
	return widened(d);
}

/* The f32 result @out of an update, into @self (rounded once if bf16). */
static void update_into(at::Tensor &self, const at::Tensor &out)
{
	if (!out.is_same(self))
		narrowed(out, self.scalar_type(), &self);
}

/*
 * self += value * t1 * t2 (addcmul_) or value * t1 / t2 (addcdiv_), in
 * PyTorch's CPU order ((value * t1) op t2, then the sum) in f32; t1 and t2
 * of self's shape and dtype (Adam's, RMSprop's, Adagrad's moments).
 */
static bool addc_on_device(at::Tensor &self, const at::Tensor &t1,
			   const at::Tensor &t2, double value, bool div,
			   const char *name)
{
	if (!on_trn(self))
		return false;
	auto a = operand_like(self, t1), b = operand_like(self, t2);

	if (!a || !b)
		return false;
	const c10::DeviceGuard guard(self.device());
	at::Tensor s32 = widened(self), tmp = f32_like(self);
	at::Tensor out = self.scalar_type() == at::kFloat ? self : tmp;

	sc(eager_scale, tmp, *a, value);
	bin(div ? eager_div : eager_mul, tmp, tmp, *b);
	bin(eager_add, out, s32, tmp);
	update_into(self, out);
	count_device_op(name);
	return true;
}

/*
 * self = lerp(self, end, w) as PyTorch computes it: self + w (end - self)
 * for |w| < 0.5, else end - (end - self)(1 - w), in f32 (Adam's first
 * moment).
 */
static bool lerp_on_device(at::Tensor &self, const at::Tensor &end, double w)
{
	if (!on_trn(self))
		return false;
	auto e = operand_like(self, end);

	if (!e)
		return false;
	const c10::DeviceGuard guard(self.device());
	const float wf = static_cast<float>(w);
	at::Tensor s32 = widened(self), d = f32_like(self);
	at::Tensor out = self.scalar_type() == at::kFloat ? self : d;

	bin(eager_sub, d, *e, s32);
	if (std::abs(wf) < 0.5f) {
		sc(eager_scale, d, d, wf);
		bin(eager_add, out, s32, d);
	} else {
		sc(eager_scale, d, d, 1.0f - wf);
		bin(eager_sub, out, *e, d);
	}
	update_into(self, out);
	count_device_op("lerp");
	return true;
}

static at::Tensor &trn_addcmul_(at::Tensor &self, const at::Tensor &t1,
				const at::Tensor &t2, const at::Scalar &value)
{
	KernelScope k("addcmul");

	if (addc_on_device(self, t1, t2, value.toDouble(), false, "addcmul"))
		return self;
	return fall_back<ATEN_OP(addcmul_)>(self, t1, t2, value);
}

static at::Tensor &trn_addcdiv_(at::Tensor &self, const at::Tensor &t1,
				const at::Tensor &t2, const at::Scalar &value)
{
	KernelScope k("addcdiv");

	if (addc_on_device(self, t1, t2, value.toDouble(), true, "addcdiv"))
		return self;
	return fall_back<ATEN_OP(addcdiv_)>(self, t1, t2, value);
}

static at::Tensor &trn_lerp_(at::Tensor &self, const at::Tensor &end,
			     const at::Scalar &weight)
{
	KernelScope k("lerp");

	if (lerp_on_device(self, end, weight.toDouble()))
		return self;
	return fall_back<ATEN_OP2(lerp_, Scalar)>(self, end, weight);
}

/* The out-of-place forms: a copy of self on the device, updated. */
static at::Tensor trn_addcmul(const at::Tensor &self, const at::Tensor &t1,
			      const at::Tensor &t2, const at::Scalar &value)
{
	KernelScope k("addcmul");
	at::Tensor r = self.clone(at::MemoryFormat::Contiguous);

	if (addc_on_device(r, t1, t2, value.toDouble(), false, "addcmul"))
		return r;
	return fall_back<ATEN_OP(addcmul)>(self, t1, t2, value);
}

static at::Tensor trn_addcdiv(const at::Tensor &self, const at::Tensor &t1,
			      const at::Tensor &t2, const at::Scalar &value)
{
	KernelScope k("addcdiv");
	at::Tensor r = self.clone(at::MemoryFormat::Contiguous);

	if (addc_on_device(r, t1, t2, value.toDouble(), true, "addcdiv"))
		return r;
	return fall_back<ATEN_OP(addcdiv)>(self, t1, t2, value);
}

static at::Tensor trn_lerp(const at::Tensor &self, const at::Tensor &end,
			   const at::Scalar &weight)
{
	KernelScope k("lerp");
	at::Tensor r = self.clone(at::MemoryFormat::Contiguous);

	if (lerp_on_device(r, end, weight.toDouble()))
		return r;
	return fall_back<ATEN_OP2(lerp, Scalar)>(self, end, weight);
}

/* ---- element-wise: unary ---- */

static int rsqrt_fn(eager_tensor_t *out, const eager_tensor_t *x)
{
	int ret = eager_sqrt(out, x);

	return ret ? ret : eager_recip(out, out);
}

/* silu(x) = x * sigmoid(x). */
static int silu_fn(eager_tensor_t *out, const eager_tensor_t *x)
{
	int ret = eager_sigmoid(out, x);

	return ret ? ret : eager_mul(out, out, x);
}

static std::optional<at::Tensor> unary_on_device(const at::Tensor &xv,
						 unary_fn fn, const char *name)
{
	const at::Tensor x = dense(xv);

	if (!on_trn(x))
		return std::nullopt;
	const c10::DeviceGuard guard(x.device());
	at::Tensor x32 = widened(x);
	at::Tensor out = f32_like(x);

	un(fn, out, x32);
	count_device_op(name);
	return narrowed(out, x.scalar_type());
}

#define TRN_UNARY(op, fn)                                            \
	static at::Tensor trn_##op(const at::Tensor &x)              \
	{                                                            \
		KernelScope k(#op);                                  \
		if (auto r = unary_on_device(x, fn, #op))            \
			return *r;                                   \
		return fall_back<ATEN_OP(op)>(x);                    \
	}

/* LOG, ERF and erf's GELU: devices with TRN_CAP_LOG_ERF (uAPI 1.5). */
static bool has_log_erf(const at::Tensor &x)
{
	return has_cap(x, TRN_CAP_LOG_ERF);
}

#define TRN_UNARY_LOG_ERF(op, fn)                                    \
	static at::Tensor trn_##op(const at::Tensor &x)              \
	{                                                            \
		KernelScope k(#op);                                  \
		if (has_log_erf(x))                                  \
			if (auto r = unary_on_device(x, fn, #op))    \
				return *r;                           \
		return fall_back<ATEN_OP(op)>(x);                    \
	}

TRN_UNARY(relu, eager_relu)
TRN_UNARY(exp, eager_exp)
TRN_UNARY(neg, eager_neg)
TRN_UNARY(abs, eager_abs)
TRN_UNARY(sqrt, eager_sqrt)
TRN_UNARY(rsqrt, rsqrt_fn)
TRN_UNARY(reciprocal, eager_recip)
TRN_UNARY(tanh, eager_tanh)
TRN_UNARY(sigmoid, eager_sigmoid)
TRN_UNARY(silu, silu_fn)
TRN_UNARY_LOG_ERF(log, eager_log)
TRN_UNARY_LOG_ERF(erf, eager_erf)

/*
 * x ** e for the exponents PyTorch's CPU kernel computes without pow()
 * (x * x, x * x * x, sqrt, 1 / x, 1 / sqrt, 1 / (x * x), x, 1): the same
 * operations on the device, in f32, rounded once. Other exponents: not
 * ours (the device has no pow).
 */
static std::optional<at::Tensor> pow_on_device(const at::Tensor &xv, double e)
{
	if (e != 2 && e != 3 && e != 0.5 && e != -0.5 && e != -1 && e != -2 &&
	    e != 1 && e != 0)
		return std::nullopt;
	const at::Tensor x = dense(xv);

	if (!on_trn(x))
		return std::nullopt;
	const c10::DeviceGuard guard(x.device());
	at::Tensor x32 = widened(x), out = f32_like(x);
	eager_tensor_t to = view_of(out);

	if (e == 0) {
		run(eager_fill(&to, 1.0f));
	} else if (e == 1) {
		eager_tensor_t tx = view_of(x32);

		run(eager_copy(&to, &tx));
	} else if (e == -1) {
		un(eager_recip, out, x32);
	} else if (e == 0.5 || e == -0.5) {
		un(eager_sqrt, out, x32);
		if (e < 0)
			un(eager_recip, out, out);
	} else {
		bin(eager_mul, out, x32, x32);
		if (e == 3)
			bin(eager_mul, out, out, x32);
		if (e < 0)
			un(eager_recip, out, out);
	}
	count_device_op("pow");
	return narrowed(out, x.scalar_type());
}

static at::Tensor trn_pow(const at::Tensor &x, const at::Scalar &e)
{
	KernelScope k("pow");

	if (!e.isComplex())
		if (auto r = pow_on_device(x, e.toDouble()))
			return *r;
	return fall_back<ATEN_OP2(pow, Tensor_Scalar)>(x, e);
}

static at::Tensor trn_gelu(const at::Tensor &x, c10::string_view approximate)
{
	KernelScope k("gelu");

	/* GELU is the ISA's tanh form, GELU_ERF PyTorch's default. */
	if (approximate == "tanh") {
		if (auto r = unary_on_device(x, eager_gelu, "gelu"))
			return *r;
	} else if (approximate == "none" && has_log_erf(x)) {
		if (auto r = unary_on_device(x, eager_gelu_erf, "gelu"))
			return *r;
	}
	return fall_back<ATEN_OP(gelu)>(x, approximate);
}

/* ---- backward of element-wise ops: f(grad, x) of one shape ---- */

typedef void (*grad_fn)(const at::Tensor &out, const at::Tensor &g,
			const at::Tensor &x);

static std::optional<at::Tensor> grad_on_device(const at::Tensor &g,
						const at::Tensor &xv,
						grad_fn fn, const char *name)
{
	const at::Tensor x = dense(xv);

	if (!g.is_privateuseone() || !on_trn(x) || g.sizes() != x.sizes() ||
	    g.device() != x.device() || g.scalar_type() != x.scalar_type())
		return std::nullopt;
	const c10::DeviceGuard guard(g.device());
	auto g32 = dense_f32(g);	/* grads are often expanded views */

	if (!g32)
		return std::nullopt;
	at::Tensor x32 = widened(x);
	at::Tensor out = f32_like(g);

	fn(out, *g32, x32);
	count_device_op(name);
	return narrowed(out, g.scalar_type());
}

/* g * (x > 0): x relu's input or output. */
static void relu_grad(const at::Tensor &out, const at::Tensor &g,
		      const at::Tensor &x)
{
	bin(eager_relu_backward, out, g, x);
}

/* g * (1 - y^2), y = tanh(x). */
static void tanh_grad(const at::Tensor &out, const at::Tensor &g,
		      const at::Tensor &y)
{
	bin(eager_mul, out, y, y);
	sc(eager_add_scalar, out, out, -1.0);
	bin(eager_mul, out, out, g);
	un(eager_neg, out, out);
}

/* g * y * (1 - y), y = sigmoid(x). */
static void sigmoid_grad(const at::Tensor &out, const at::Tensor &g,
			 const at::Tensor &y)
{
	sc(eager_scale, out, y, -1.0);
	sc(eager_add_scalar, out, out, 1.0);
	bin(eager_mul, out, out, y);
	bin(eager_mul, out, out, g);
}

/*
 * g * d/dx [0.5 x (1 + tanh(u))], u = k (x + c x^3):
 * 0.5 (1 + t) + 0.5 k x (1 - t^2) (1 + 3 c x^2), t = tanh(u).
 */
static void gelu_tanh_grad(const at::Tensor &out, const at::Tensor &g,
			   const at::Tensor &x)
{
	const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
	at::Tensor x2 = f32_like(x), t = f32_like(x);

	bin(eager_mul, x2, x, x);
	sc(eager_scale, t, x2, c);		/* t = k x (1 + c x^2) */
	sc(eager_add_scalar, t, t, 1.0);
	bin(eager_mul, t, t, x);
	sc(eager_scale, t, t, k);
	un(eager_tanh, t, t);
	sc(eager_scale, x2, x2, 3.0 * c);	/* x2 = 1 + 3 c x^2 */
	sc(eager_add_scalar, x2, x2, 1.0);
	bin(eager_mul, out, t, t);		/* out = -0.5 k x (t^2 - 1) x2 */
	sc(eager_add_scalar, out, out, -1.0);
	bin(eager_mul, out, out, x);
	bin(eager_mul, out, out, x2);
	sc(eager_scale, out, out, -0.5 * k);
	sc(eager_add_scalar, t, t, 1.0);	/* + 0.5 (1 + t) */
	sc(eager_scale, t, t, 0.5);
	bin(eager_add, out, out, t);
	bin(eager_mul, out, out, g);
}

/* g * d/dx x Phi(x): UNARY GELU_ERF_GRAD, then a product. */
static void gelu_erf_grad(const at::Tensor &out, const at::Tensor &g,
			  const at::Tensor &x)
{
	bin(eager_gelu_erf_backward, out, g, x);
}

static at::Tensor trn_threshold_backward(const at::Tensor &grad,
					 const at::Tensor &self,
					 const at::Scalar &threshold)
{
	KernelScope k("threshold_backward");

	if (threshold.toDouble() == 0.0)
		if (auto r = grad_on_device(grad, self, relu_grad,
					    "threshold_backward"))
			return *r;
	return fall_back<ATEN_OP(threshold_backward)>(grad, self, threshold);
}

static at::Tensor trn_tanh_backward(const at::Tensor &grad,
				    const at::Tensor &output)
{
	KernelScope k("tanh_backward");

	if (auto r = grad_on_device(grad, output, tanh_grad, "tanh_backward"))
		return *r;
	return fall_back<ATEN_OP(tanh_backward)>(grad, output);
}

static at::Tensor trn_sigmoid_backward(const at::Tensor &grad,
				       const at::Tensor &output)
{
	KernelScope k("sigmoid_backward");

	if (auto r = grad_on_device(grad, output, sigmoid_grad,
				    "sigmoid_backward"))
		return *r;
	return fall_back<ATEN_OP(sigmoid_backward)>(grad, output);
}

static at::Tensor trn_gelu_backward(const at::Tensor &grad,
				    const at::Tensor &self,
				    c10::string_view approximate)
{
	KernelScope k("gelu_backward");

	if (approximate == "tanh") {
		if (auto r = grad_on_device(grad, self, gelu_tanh_grad,
					    "gelu_backward"))
			return *r;
	} else if (approximate == "none" && has_log_erf(self)) {
		if (auto r = grad_on_device(grad, self, gelu_erf_grad,
					    "gelu_backward"))
			return *r;
	}
	return fall_back<ATEN_OP(gelu_backward)>(grad, self, approximate);
}

/* ---- matmul ---- */

/*
 * @t seen as a matmul operand of rows x cols at byte @offset, with
 * strides (@s0, @s1): stored, or the transpose of a stored one.
 */
static bool matmul_view(const at::Tensor &t, uint64_t offset, int64_t rows,
			int64_t cols, int64_t s0, int64_t s1,
			eager_tensor_t *out, bool *trans)
{
	enum eager_dtype dt = t.scalar_type() == at::kFloat ? EAGER_F32 :
							       EAGER_BF16;
	int64_t shape[2];

	if (t.scalar_type() != at::kFloat && t.scalar_type() != at::kBFloat16)
		return false;
	if (s1 == 1 && s0 == cols) {
		*trans = false;
		shape[0] = rows;
		shape[1] = cols;
	} else if (s0 == 1 && s1 == rows) {
		*trans = true;
		shape[0] = cols;
		shape[1] = rows;
	} else {
		return false;
	}
	return !eager_view(block_of(t), offset, dt, 2, shape, out);
}

static bool matmul_operand(const at::Tensor &t, eager_tensor_t *out,
			   bool *trans)
{
	return t.dim() == 2 && t.is_privateuseone() && t.numel() &&
	       matmul_view(t, byte_offset(t), t.size(0), t.size(1),
			   t.stride(0), t.stride(1), out, trans);
}

/* Whether the ISA takes a [m][k] @ [k][n] matmul. */
static bool matmul_fits(int64_t m, int64_t k, int64_t n)
{
	return m <= kMaxDim && k <= kMaxDim && n <= kMaxDim &&
	       k * n * 4 <= kMatmulBMax;
}

static void record_matmul(eager_tensor_t *out, const eager_tensor_t *a,
			  bool trans_a, const eager_tensor_t *b, bool trans_b)
{
	run(eager_matmul(out, a, b, (trans_a ? EAGER_TRANS_A : 0) |
					    (trans_b ? EAGER_TRANS_B : 0)));
}

/*
 * @t (2-D, or batches of 3-D) as the ISA reads a matmul operand: itself
 * when stored or transposed, else laid out dense by the device.
 */
static at::Tensor matmul_readable(const at::Tensor &t)
{
	const int64_t r = t.dim() - 2;
	eager_tensor_t e;
	bool tr;

	if (r < 0 || !t.is_privateuseone() || !t.numel() ||
	    matmul_view(t, byte_offset(t), t.size(r), t.size(r + 1),
			t.stride(r), t.stride(r + 1), &e, &tr))
		return t;
	return dense(t);
}

/* a @ b, accumulated and returned in f32; empty optional: not ours. */
static std::optional<at::Tensor> mm_f32(const at::Tensor &av,
					const at::Tensor &bv)
{
	eager_tensor_t ta, tb, to;
	bool trans_a, trans_b;
	const at::Tensor a = matmul_readable(av), b = matmul_readable(bv);

	if (a.scalar_type() != b.scalar_type() || a.device() != b.device() ||
	    !matmul_operand(a, &ta, &trans_a) ||
	    !matmul_operand(b, &tb, &trans_b) || a.size(1) != b.size(0) ||
	    !matmul_fits(a.size(0), a.size(1), b.size(1)))
		return std::nullopt;
	const c10::DeviceGuard guard(a.device());
	at::Tensor out = new_tensor({ a.size(0), b.size(1) }, a, at::kFloat);

	to = view_of(out);
	record_matmul(&to, &ta, trans_a, &tb, trans_b);
	count_device_op("mm");
	return out;
}

static at::Tensor trn_mm(const at::Tensor &a, const at::Tensor &b)
{
	KernelScope k("mm");

	if (auto r = mm_f32(a, b))
		return narrowed(*r, a.scalar_type());
	return fall_back<ATEN_OP(mm)>(a, b);
}

/* beta * bias + alpha * (a @ b), the sum in f32 and rounded once. */
static at::Tensor trn_addmm(const at::Tensor &bias, const at::Tensor &a,
			    const at::Tensor &b, const at::Scalar &beta,
			    const at::Scalar &alpha)
{
	KernelScope k("addmm");
	eager_tensor_t tb;

	if (bias.is_privateuseone() && bias.device() == a.device() &&
	    bias.scalar_type() == a.scalar_type() && a.dim() == 2 &&
	    b.dim() == 2 &&
	    broadcast_view({ a.size(0), b.size(1) }, bias, &tb)) {
		if (auto r = mm_f32(a, b)) {
			at::Tensor out = *r;

			if (alpha.toDouble() != 1.0)
				sc(eager_scale, out, out, alpha.toDouble());
			/* beta 0: bias ignored, even its NaNs (as the CPU). */
			if (beta.toDouble() != 0.0)
				TORCH_INTERNAL_ASSERT(binary_on_device(out,
					bias, Bin::Add, "addmm",
					beta.toDouble(), true));
			return narrowed(out, a.scalar_type());
		}
	}
	return fall_back<ATEN_OP(addmm)>(bias, a, b, beta, alpha);
}

/* One matmul per batch, into a contiguous f32 [B][m][n]. */
static at::Tensor trn_bmm(const at::Tensor &av, const at::Tensor &bv)
{
	KernelScope k("bmm");
	eager_tensor_t ta, tb, to;
	bool trans_a, trans_b;

	if (av.dim() != 3 || bv.dim() != 3 || !av.is_privateuseone() ||
	    !bv.is_privateuseone() || av.device() != bv.device() ||
	    av.scalar_type() != bv.scalar_type() || av.size(0) != bv.size(0) ||
	    av.size(2) != bv.size(1) || !av.numel() || !bv.numel() ||
	    !matmul_fits(av.size(1), av.size(2), bv.size(2)))
		return fall_back<ATEN_OP(bmm)>(av, bv);
	const at::Tensor a = matmul_readable(av), b = matmul_readable(bv);
	const int64_t batches = a.size(0), m = a.size(1), n = b.size(2);
	const int64_t es = a.element_size();
	const c10::DeviceGuard guard(a.device());
	at::Tensor out = new_tensor({ batches, m, n }, a, at::kFloat);

	for (int64_t i = 0; i < batches; i++) {
		int64_t shape[2] = { m, n };

		if (!matmul_view(a, byte_offset(a) + i * a.stride(0) * es, m,
				 a.size(2), a.stride(1), a.stride(2), &ta,
				 &trans_a) ||
		    !matmul_view(b, byte_offset(b) + i * b.stride(0) * es,
				 b.size(1), n, b.stride(1), b.stride(2), &tb,
				 &trans_b)) {
			/* A layout we cannot read in place: nothing recorded yet. */
			TORCH_INTERNAL_ASSERT(i == 0);
			return fall_back<ATEN_OP(bmm)>(av, bv);
		}
		run(eager_view(block_of(out), byte_offset(out) + i * m * n * 4,
			       EAGER_F32, 2, shape, &to));
		record_matmul(&to, &ta, trans_a, &tb, trans_b);
	}
	count_device_op("bmm");
	return narrowed(out, a.scalar_type());
}

/* ---- reductions ---- */

/*
 * Reduced dims as one run of x's dims: x seen as [outer][red][inner]
 * (inner 1: row reductions). Dims not in one run: not ours.
 */
struct Split {
	int64_t outer, red, inner;
	std::vector<int64_t> shape;	/* the result's, per keepdim */
};

static std::optional<Split> split_dims(const at::Tensor &x,
				       at::OptionalIntArrayRef dim,
				       bool keepdim)
{
	const int64_t n = x.dim(), wrap = std::max<int64_t>(n, 1);
	std::vector<bool> red(n, !dim || dim->empty());
	int64_t first = n, last = n - 1, count = 0;
	Split s = { 1, 1, 1, {} };

	if (dim)
		for (int64_t d : *dim) {
			if (d < -wrap || d >= wrap)
				return std::nullopt;
			if (!n)
				continue;
			if (red[(d + n) % n])
				return std::nullopt;	/* PyTorch refuses it */
			red[(d + n) % n] = true;
		}
	for (int64_t d = 0; d < n; d++) {
		if (!red[d]) {
			s.shape.push_back(x.size(d));
			continue;
		}
		if (keepdim)
			s.shape.push_back(1);
		if (!count++)
			first = d;
		last = d;
	}
	if (count && last - first + 1 != count)
		return std::nullopt;	/* not one run of dims */
	for (int64_t d = 0; d < n; d++)
		(d < first ? s.outer : d <= last ? s.red : s.inner) *= x.size(d);
	return s;
}

/* Row reduction of f32 x seen as rows x cols: out[rows]. */
static at::Tensor reduce_rows(const at::Tensor &x, int64_t rows, int64_t cols,
			      bool max)
{
	at::Tensor out = new_tensor({ rows }, x, at::kFloat);
	eager_tensor_t tx = view_of(x, rows, cols), to = view_of(out, 1, rows);

	run(max ? eager_amax(&to, &tx) : eager_sum(&to, &tx, -1));
	return out;
}

/*
 * Sum (or max) of f32 @x over @s's run of dims. Trailing dims: one row
 * reduction where a row fits the ISA, else two (all of a long vector).
 * Leading or middle dims: column sums (a matmul with ones) per outer
 * index. Empty optional: the ISA has no form for it.
 */
static std::optional<at::Tensor> reduce_f32(const at::Tensor &x,
					    const Split &s, bool max)
{
	if (s.red == 1)
		return x.view(s.shape);	/* nothing, or only 1s, reduced */
	if (s.inner == 1 && s.red <= kMaxDim)
		return reduce_rows(x, s.outer, s.red, max).view(s.shape);
	if (s.inner == 1) {
		/*
		 * A row too long for one command: split into the most nearly
		 * square rows x cols that divide it, reduce twice (two sums
		 * of about sqrt(n) values each: also the more accurate).
		 */
		int64_t rows = 1, last;

		if (s.outer != 1)
			return std::nullopt;
		for (int64_t r = 2; r * r <= s.red; r++)
			if (!(s.red % r))
				rows = r;
		last = s.red / rows;
		if (last > kMaxDim)
			return std::nullopt;	/* e.g. a prime length */
		at::Tensor part = reduce_rows(x, s.red / last, last, max);

		return reduce_rows(part, 1, part.numel(), max).view(s.shape);
	}
	if (max || s.red > kMaxDim || s.inner > kMaxDim ||
	    s.red * s.inner * 4 > kMatmulBMax || s.outer > kMaxLoops)
		return std::nullopt;
	at::Tensor out = new_tensor({ s.outer * s.inner }, x, at::kFloat);

	for (int64_t o = 0; o < s.outer; o++) {
		int64_t xs[2] = { s.red, s.inner }, os[2] = { 1, s.inner };
		eager_tensor_t tx, to;

		run(eager_view(block_of(x),
			       byte_offset(x) + o * s.red * s.inner * 4,
			       EAGER_F32, 2, xs, &tx));
		run(eager_view(block_of(out), byte_offset(out) + o * s.inner * 4,
			       EAGER_F32, 2, os, &to));
		run(eager_sum(&to, &tx, 0));
	}
	return out.view(s.shape);
}

/* Runs of adjacent reduced dims reduced one after the other, at most. */
static constexpr size_t kMaxRuns = 4;

/*
 * The reduced dims of @x in runs of adjacent dims, the last run first
 * ((0, 2) of 3-D: {2, 2} then {0, 0}); empty if PyTorch would refuse them.
 */
static std::vector<std::pair<int64_t, int64_t>> dim_runs(const at::Tensor &x,
							 at::IntArrayRef dim)
{
	const int64_t n = x.dim();
	std::vector<std::pair<int64_t, int64_t>> runs;
	std::vector<bool> red(n, false);

	for (int64_t d : dim) {
		if (!n || d < -n || d >= n || red[(d + n) % n])
			return {};
		red[(d + n) % n] = true;
	}
	for (int64_t d = n - 1; d >= 0; d--) {
		if (!red[d])
			continue;
		int64_t last = d;

		while (d > 0 && red[d - 1])
			d--;
		runs.emplace_back(d, last);
	}
	return runs;
}

/*
 * Sum (or max) of f32 @x over dims that are not one run ((0, 2) of 3-D):
 * one run at a time, the last first, each kept as 1s so that the others
 * keep their places, then the shape asked for. @count gets the values
 * each result summarises (for the mean).
 */
static std::optional<at::Tensor> reduce_runs(const at::Tensor &x,
					     at::IntArrayRef dim,
					     bool keepdim, bool max,
					     int64_t *count)
{
	auto runs = dim_runs(x, dim);
	std::vector<int64_t> shape;
	std::vector<bool> red(x.dim(), false);
	at::Tensor cur = x;

	/* A max over all but trailing dims has no form in the ISA. */
	if (max || runs.size() < 2 || runs.size() > kMaxRuns)
		return std::nullopt;
	*count = 1;
	for (auto [first, last] : runs) {
		std::vector<int64_t> d;

		for (int64_t i = first; i <= last; i++) {
			d.push_back(i);
			red[i] = true;
			*count *= x.size(i);
		}
		auto s = split_dims(cur, at::IntArrayRef(d), true);

		if (!s)
			return std::nullopt;
		auto r = reduce_f32(cur, *s, max);

		if (!r)
			return std::nullopt;
		cur = *r;
	}
	for (int64_t i = 0; i < x.dim(); i++)
		if (!red[i] || keepdim)
			shape.push_back(red[i] ? 1 : x.size(i));
	return cur.view(shape);
}

/*
 * Sum (or max) of f32 @x over @dim (valid dims), the reduced dims moved
 * last by a strided copy on the device, then one row reduction: for what
 * the forms above do not take (a max over leading or middle dims, more
 * slices than kMaxLoops). @count gets the values each result summarises.
 */
static std::optional<at::Tensor> reduce_moved(const at::Tensor &x,
					      at::OptionalIntArrayRef dim,
					      bool keepdim, bool max,
					      int64_t *count)
{
	const int64_t n = x.dim();
	std::vector<bool> red(n, !dim || dim->empty());
	std::vector<int64_t> order, shape;

	if (!n)
		return std::nullopt;
	if (dim)
		for (int64_t d : *dim)
			red[(d + n) % n] = true;
	*count = 1;
	for (int64_t d = 0; d < n; d++)
		if (!red[d])
			order.push_back(d);
	for (int64_t d = 0; d < n; d++)
		if (red[d]) {
			order.push_back(d);
			*count *= x.size(d);
		}
	for (int64_t d = 0; d < n; d++)
		if (!red[d] || keepdim)
			shape.push_back(red[d] ? 1 : x.size(d));
	if (*count > kMaxDim)
		return std::nullopt;
	at::Tensor p = x.permute(order).contiguous();

	return reduce_rows(p, p.numel() / *count, *count, max).view(shape);
}

/* sum, mean (@mean) or amax of x over @dim, into @dtype. */
static std::optional<at::Tensor> reduce_on_device(
	const at::Tensor &xv, at::OptionalIntArrayRef dim, bool keepdim,
	std::optional<at::ScalarType> dtype, bool max, bool mean,
	const char *name)
{
	at::ScalarType dt = dtype.value_or(xv.scalar_type());

	if (dt != at::kFloat && dt != at::kBFloat16)
		return std::nullopt;
	const at::Tensor x = dense(xv);

	if (!on_trn(x))
		return std::nullopt;
	auto s = split_dims(x, dim, keepdim);
	int64_t count = s ? s->red : 1;

	/* Dims in more than one run: each run in turn (dim_runs()). */
	if (!s && (!dim || dim_runs(x, *dim).size() < 2))
		return std::nullopt;
	const c10::DeviceGuard guard(x.device());
	at::Tensor x32 = widened(x);
	auto r = s ? reduce_f32(x32, *s, max) :
		     reduce_runs(x32, *dim, keepdim, max, &count);

	if (!r)
		r = reduce_moved(x32, dim, keepdim, max, &count);
	if (!r)
		return std::nullopt;
	at::Tensor out = *r;

	if (mean || block_of(out) == block_of(x)) {
		/* Also a new tensor where nothing was reduced (no alias of x). */
		at::Tensor m = new_tensor(out.sizes(), out, at::kFloat);

		sc(eager_div_scalar, m, out,
		   mean ? static_cast<double>(count) : 1.0);
		out = m;
	}
	count_device_op(name);
	return narrowed(out, dt);
}

static at::Tensor trn_sum_dim(const at::Tensor &x, at::OptionalIntArrayRef dim,
			      bool keepdim, std::optional<at::ScalarType> dtype)
{
	KernelScope k("sum");

	if (auto r = reduce_on_device(x, dim, keepdim, dtype, false, false,
				      "sum"))
		return *r;
	return fall_back<ATEN_OP2(sum, dim_IntList)>(x, dim, keepdim, dtype);
}

static at::Tensor trn_mean_dim(const at::Tensor &x,
			       at::OptionalIntArrayRef dim, bool keepdim,
			       std::optional<at::ScalarType> dtype)
{
	KernelScope k("mean");

	if (auto r = reduce_on_device(x, dim, keepdim, dtype, false, true,
				      "mean"))
		return *r;
	return fall_back<ATEN_OP2(mean, dim)>(x, dim, keepdim, dtype);
}

static at::Tensor trn_amax(const at::Tensor &x, at::IntArrayRef dim,
			   bool keepdim)
{
	KernelScope k("amax");

	if (auto r = reduce_on_device(x, dim, keepdim, std::nullopt, true,
				      false, "amax"))
		return *r;
	return fall_back<ATEN_OP(amax)>(x, dim, keepdim);
}

static at::Tensor trn_max(const at::Tensor &x)
{
	KernelScope k("max");

	if (auto r = reduce_on_device(x, at::IntArrayRef(), false,
				      std::nullopt, true, false, "max"))
		return *r;
	return fall_back<ATEN_OP(max)>(x);
}

/* ---- softmax ---- */

/*
 * Row-wise @fn (softmax, log_softmax) of @x over @dim: rows along the last
 * dim as they are; another dim moved last and back by strided copies on
 * the device.
 */
static std::optional<at::Tensor> rows_along(const at::Tensor &x, int64_t dim,
					    unary_fn fn, const char *name)
{
	const int64_t n = x.dim();

	if (!x.is_privateuseone() || n < 1 || dim < -n || dim >= n ||
	    x.size(dim) > kMaxDim)
		return std::nullopt;
	dim = (dim + n) % n;
	if (dim == n - 1)
		return unary_on_device(x, fn, name);
	auto r = unary_on_device(x.movedim(dim, -1), fn, name);

	if (!r)
		return std::nullopt;
	return r->movedim(-1, dim).contiguous();
}

static at::Tensor trn_softmax(const at::Tensor &x, int64_t dim,
			      bool half_to_float)
{
	KernelScope k("softmax");

	if (!half_to_float)
		if (auto r = rows_along(x, dim, eager_softmax, "softmax"))
			return *r;
	return fall_back<ATEN_OP(_softmax)>(x, dim, half_to_float);
}

/*
 * softmax with a row of only -inf giving zeros (scaled_dot_product_attention
 * on fully masked rows); PyTorch's own composes isneginf, all and where,
 * which the ISA cannot do. The backward is _softmax_backward_data's.
 */
static at::Tensor trn_safe_softmax(const at::Tensor &x, int64_t dim,
				   std::optional<at::ScalarType> dtype)
{
	KernelScope k("safe_softmax");

	if (!dtype || *dtype == x.scalar_type())
		if (auto r = rows_along(x, dim, eager_safe_softmax,
					"safe_softmax"))
			return *r;
	return fall_back<ATEN_OP(_safe_softmax)>(x, dim, dtype);
}

static at::Tensor trn_log_softmax(const at::Tensor &x, int64_t dim,
				  bool half_to_float)
{
	KernelScope k("log_softmax");

	if (!half_to_float && has_log_erf(x))
		if (auto r = rows_along(x, dim, eager_log_softmax,
					"log_softmax"))
			return *r;
	return fall_back<ATEN_OP(_log_softmax)>(x, dim, half_to_float);
}

/* Per row of @t (its last dim), as a [rows][1] f32 view: the row sums. */
static at::Tensor row_sums_of(const at::Tensor &t)
{
	int64_t cols = t.size(-1), rows = t.numel() / cols;

	return reduce_rows(t, rows, cols, false);
}

/* f(g, y) over the last dim, f32 of one shape, rows x cols. */
static at::Tensor per_row(const at::Tensor &t)
{
	std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());

	shape.back() = 1;
	return row_sums_of(t).view(shape);
}

/* d softmax: y * (g - sum(g * y)) per row. */
static void softmax_grad(const at::Tensor &out, const at::Tensor &g,
			 const at::Tensor &y)
{
	bin(eager_mul, out, g, y);
	at::Tensor s = per_row(out);
	eager_tensor_t to = view_of(out), tg = view_of(g);
	eager_tensor_t ts = view_of(s, s.numel(), 1);

	run(eager_sub(&to, &tg, &ts));
	bin(eager_mul, out, out, y);
}

/* d log_softmax: g - exp(y) * sum(g) per row. */
static void log_softmax_grad(const at::Tensor &out, const at::Tensor &g,
			     const at::Tensor &y)
{
	at::Tensor s = per_row(g);
	eager_tensor_t to = view_of(out), tg = view_of(g);
	eager_tensor_t ts = view_of(s, s.numel(), 1);

	un(eager_exp, out, y);
	run(eager_mul(&to, &to, &ts));
	run(eager_sub(&to, &tg, &to));
}

/* The backward of rows_along(): @g and output @y moved as the forward did. */
static std::optional<at::Tensor> grad_rows_along(const at::Tensor &g,
						 const at::Tensor &y,
						 int64_t dim, grad_fn fn,
						 const char *name)
{
	const int64_t n = y.dim();

	if (!y.is_privateuseone() || n < 1 || dim < -n || dim >= n ||
	    y.size(dim) > kMaxDim || g.sizes() != y.sizes())
		return std::nullopt;
	dim = (dim + n) % n;
	if (dim == n - 1)
		return grad_on_device(g, y, fn, name);
	auto r = grad_on_device(dense(g.movedim(dim, -1)), y.movedim(dim, -1),
				fn, name);

	if (!r)
		return std::nullopt;
	return r->movedim(-1, dim).contiguous();
}

static at::Tensor trn_softmax_backward(const at::Tensor &grad,
				       const at::Tensor &output, int64_t dim,
				       at::ScalarType input_dtype)
{
	KernelScope k("softmax_backward");

	if (input_dtype == grad.scalar_type())
		if (auto r = grad_rows_along(grad, output, dim, softmax_grad,
					     "softmax_backward"))
			return *r;
	return fall_back<ATEN_OP(_softmax_backward_data)>(grad, output, dim,
							  input_dtype);
}

static at::Tensor trn_log_softmax_backward(const at::Tensor &grad,
					   const at::Tensor &output,
					   int64_t dim,
					   at::ScalarType input_dtype)
{
	KernelScope k("log_softmax_backward");

	if (input_dtype == grad.scalar_type())
		if (auto r = grad_rows_along(grad, output, dim,
					     log_softmax_grad,
					     "log_softmax_backward"))
			return *r;
	return fall_back<ATEN_OP(_log_softmax_backward_data)>(grad, output, dim,
							      input_dtype);
}

/* ---- layer norm ---- */

/*
 * @x of @shape's trailing dims normalised: rows (the leading dims) and
 * cols (the normalised ones), or nothing where it is not ours (PyTorch's
 * own checks then run in the fallback). @w and @b, if defined, must be of
 * the normalised shape, dtype and device of @x.
 */
struct LnShape {
	int64_t rows, cols;
	std::vector<int64_t> stat;	/* mean's and rstd's shape */
};

static bool ln_param_ok(const at::Tensor &x, at::IntArrayRef shape,
			const std::optional<at::Tensor> &p)
{
	return !p || !p->defined() ||
	       (p->is_privateuseone() && p->device() == x.device() &&
		p->scalar_type() == x.scalar_type() && p->sizes() == shape);
}

static std::optional<LnShape> ln_shape(const at::Tensor &x,
				       at::IntArrayRef shape,
				       const std::optional<at::Tensor> &w,
				       const std::optional<at::Tensor> &b)
{
	const int64_t n = x.dim(), k = static_cast<int64_t>(shape.size());
	LnShape s = { 1, 1, {} };

	if (!x.is_privateuseone() || !k || k > n || !x.numel() ||
	    (x.scalar_type() != at::kFloat && x.scalar_type() != at::kBFloat16) ||
	    !ln_param_ok(x, shape, w) || !ln_param_ok(x, shape, b))
		return std::nullopt;
	for (int64_t d = 0; d < n; d++) {
		if (d >= n - k) {
			if (x.size(d) != shape[d - (n - k)])
				return std::nullopt;
			s.cols *= x.size(d);
			s.stat.push_back(1);
		} else {
			s.rows *= x.size(d);
			s.stat.push_back(x.size(d));
		}
	}
	if (s.cols > kMaxDim)
		return std::nullopt;
	return s;
}

/* An optional parameter as a dense f32 row of @cols, or undefined. */
static at::Tensor ln_param(const std::optional<at::Tensor> &p, int64_t cols)
{
	if (!p || !p->defined())
		return at::Tensor();
	return widened(dense(*p)).view({ cols });
}

/* @out = f32 [rows][cols] @t op a value per row, [rows] @v (B_PER_ROW). */
static void per_row_op(binary_fn fn, const at::Tensor &out,
		       const at::Tensor &t, const at::Tensor &v, int64_t rows,
		       int64_t cols)
{
	eager_tensor_t to = view_of(out, rows, cols);
	eager_tensor_t tt = view_of(t, rows, cols), tv = view_of(v, rows, 1);

	run(fn(&to, &tt, &tv));
}

/* @out = f32 [rows][cols] @t op a row [cols] @r (the same every row). */
static void row_op(binary_fn fn, const at::Tensor &out, const at::Tensor &t,
		   const at::Tensor &r, int64_t rows, int64_t cols)
{
	eager_tensor_t to = view_of(out, rows, cols);
	eager_tensor_t tt = view_of(t, rows, cols), tr = view_of(r, 1, cols);

	run(fn(&to, &tt, &tr));
}

/*
 * y = (x - mean) rstd w + b over the trailing @shape, mean and rstd =
 * 1 / sqrt(var + eps) per row (var biased, two passes: the mean first,
 * then the squares of the centred values), in f32; mean and rstd returned
 * in x's dtype and shape [leading dims][1...], as PyTorch's CPU kernel.
 */
static std::tuple<at::Tensor, at::Tensor, at::Tensor>
trn_native_layer_norm(const at::Tensor &input, at::IntArrayRef shape,
		      const std::optional<at::Tensor> &weight,
		      const std::optional<at::Tensor> &bias, double eps)
{
	KernelScope k("layer_norm");
	auto ls = ln_shape(input, shape, weight, bias);

	if (!ls)
		return fall_back<ATEN_OP(native_layer_norm)>(input, shape,
							     weight, bias, eps);
	const c10::DeviceGuard guard(input.device());
	const int64_t rows = ls->rows, cols = ls->cols;
	at::Tensor x = widened(dense(input));
	at::Tensor w = ln_param(weight, cols), b = ln_param(bias, cols);
	at::Tensor mean = reduce_rows(x, rows, cols, false);
	at::Tensor xc = f32_like(x), sq = f32_like(x);
	const at::ScalarType dt = input.scalar_type();

	sc(eager_div_scalar, mean, mean, static_cast<double>(cols));
	per_row_op(eager_sub, xc, x, mean, rows, cols);
	bin(eager_mul, sq, xc, xc);
	at::Tensor rstd = reduce_rows(sq, rows, cols, false);

	sc(eager_div_scalar, rstd, rstd, static_cast<double>(cols));
	sc(eager_add_scalar, rstd, rstd, eps);
	un(rsqrt_fn, rstd, rstd);
	per_row_op(eager_mul, xc, xc, rstd, rows, cols);
	if (w.defined())
		row_op(eager_mul, xc, xc, w, rows, cols);
	if (b.defined())
		row_op(eager_add, xc, xc, b, rows, cols);
	count_device_op("layer_norm");
	return { narrowed(xc, dt).view(input.sizes()),
		 narrowed(mean, dt).view(ls->stat),
		 narrowed(rstd, dt).view(ls->stat) };
}

/* Column sums of f32 [rows][cols] @t: a matmul with ones, or moved rows. */
static std::optional<at::Tensor> col_sums(const at::Tensor &t, int64_t rows,
					  int64_t cols)
{
	at::Tensor t2 = t.view({ rows, cols });
	Split s = { 1, rows, cols, { cols } };
	int64_t count;

	if (auto r = reduce_f32(t2, s, false))
		return r;
	return reduce_moved(t2, at::IntArrayRef({ 0 }), false, false, &count);
}

/*
 * The gradients of trn_native_layer_norm(), with xh = (x - mean) rstd and
 * gw = g w: dx = rstd (gw - mean(gw) - xh mean(gw xh)) per row, dw = the
 * column sums of g xh, db those of g; each only if @mask asks for it.
 */
static std::tuple<at::Tensor, at::Tensor, at::Tensor>
trn_native_layer_norm_backward(const at::Tensor &grad_out,
			       const at::Tensor &input, at::IntArrayRef shape,
			       const at::Tensor &mean, const at::Tensor &rstd,
			       const std::optional<at::Tensor> &weight,
			       const std::optional<at::Tensor> &bias,
			       std::array<bool, 3> mask)
{
	KernelScope k("layer_norm_backward");
	auto ls = ln_shape(input, shape, weight, bias);
	auto stat_ok = [&](const at::Tensor &t) {
		return t.is_privateuseone() && t.device() == input.device() &&
		       t.numel() == ls->rows &&
		       (t.scalar_type() == at::kFloat ||
			t.scalar_type() == at::kBFloat16);
	};
	const bool has_w = weight && weight->defined();
	const bool has_b = bias && bias->defined();

	if (!ls || !grad_out.is_privateuseone() ||
	    grad_out.device() != input.device() ||
	    grad_out.sizes() != input.sizes() ||
	    grad_out.scalar_type() != input.scalar_type() || !stat_ok(mean) ||
	    !stat_ok(rstd) ||
	    ((mask[1] || mask[2]) && ls->rows > kMaxDim))
		return fall_back<ATEN_OP(native_layer_norm_backward)>(
			grad_out, input, shape, mean, rstd, weight, bias, mask);
	const c10::DeviceGuard guard(input.device());
	const int64_t rows = ls->rows, cols = ls->cols;
	const at::ScalarType dt = input.scalar_type();
	at::Tensor x = widened(dense(input)), g = widened(dense(grad_out));
	at::Tensor mu = widened(dense(mean)).view({ rows });
	at::Tensor rs = widened(dense(rstd)).view({ rows });
	at::Tensor xh = f32_like(x), dx, dw, db;

	per_row_op(eager_sub, xh, x, mu, rows, cols);
	per_row_op(eager_mul, xh, xh, rs, rows, cols);
	if (mask[0]) {
		at::Tensor gw = g, t = f32_like(x), d = f32_like(x);

		if (has_w) {
			gw = f32_like(x);
			row_op(eager_mul, gw, g, ln_param(weight, cols), rows,
			       cols);
		}
		at::Tensor a = reduce_rows(gw, rows, cols, false);

		sc(eager_div_scalar, a, a, static_cast<double>(cols));
		bin(eager_mul, t, gw, xh);
		at::Tensor c = reduce_rows(t, rows, cols, false);

		sc(eager_div_scalar, c, c, static_cast<double>(cols));
		per_row_op(eager_mul, t, xh, c, rows, cols);
		per_row_op(eager_sub, d, gw, a, rows, cols);
		bin(eager_sub, d, d, t);
		per_row_op(eager_mul, d, d, rs, rows, cols);
		dx = narrowed(d, dt).view(input.sizes());
	}
	if (mask[1] && has_w) {
		at::Tensor t = f32_like(x);

		bin(eager_mul, t, g, xh);
		auto r = col_sums(t, rows, cols);

		TORCH_CHECK(r, "trn: layer_norm_backward: no column sums");
		dw = narrowed(*r, dt).view(shape);
	}
	if (mask[2] && has_b) {
		auto r = col_sums(g, rows, cols);

		TORCH_CHECK(r, "trn: layer_norm_backward: no column sums");
		db = narrowed(*r, dt).view(shape);
	}
	count_device_op("layer_norm_backward");
	return { dx, dw, db };
}

/* ---- bytes as numbers ---- */

static constexpr double kTwo23 = 8388608.0;

/*
 * The first @count bytes of trn tensor @t (bools, the bytes of int64s), a
 * new f32 [count] holding each byte's value, 0 to 255. With
 * TRN_CAP_SRC_U8 (uAPI 1.7) one UNARY reads the bytes as numbers.
 * Otherwise each byte is COPYed (one byte-granular 2-D COPY, a row per
 * byte) into the low byte of an f32 holding 2^23, whose low mantissa byte
 * is 0: 2^23 + b exactly, and subtracting 2^23 leaves b.
 */
static at::Tensor bytes_as_f32(const at::Tensor &t, int64_t count)
{
	at::Tensor f = new_tensor({ count }, t, at::kFloat);
	eager_tensor_t tf = view_of(f);
	const int64_t shape[1] = { count }, dst_st[1] = { 4 },
		      src_st[1] = { 1 };

	if (has_cap(t, TRN_CAP_SRC_U8)) {
		run(eager_raw_bytes_to_f32(block_of(f), byte_offset(f),
					   block_of(t), byte_offset(t),
					   static_cast<uint64_t>(count)));
		return f;
	}
	run(eager_fill(&tf, static_cast<float>(kTwo23)));
	run(eager_raw_copy_strided(block_of(f), byte_offset(f), dst_st,
				   block_of(t), byte_offset(t), src_st, 1,
				   shape, 1, 1));
	run(eager_add_scalar(&tf, &tf, static_cast<float>(-kTwo23)));
	return f;
}

/* ---- dropout ---- */

/*
 * Whether dropout runs on the device: widening its bool mask must be one
 * command (TRN_CAP_SRC_U8). With the byte-per-row COPY it was 7 times
 * slower than the fallback (Documentation/pytorch.md), so without the
 * capability dropout falls back.
 */
static bool dropout_on_device(const at::Tensor &x)
{
	return on_trn(x) && has_cap(x, TRN_CAP_SRC_U8);
}

/*
 * native_dropout in training, 0 < p < 1: the mask is drawn by the CPU's
 * own kernel on a CPU tensor of the input's shape, dtype and layout (from
 * the CPU's default generator, as the fallback drew it: the operator takes
 * no generator; the CPU kernel draws in memory order, so a transposed
 * input gets the fallback's mask only from a transposed draw), made
 * dense and uploaded without a wait; out = x * mask * (1 / (1 - p))
 * on the device, the bool mask widened to f32 there. The CPU's kernel
 * scales the mask in the input's dtype before the product, so for bf16
 * the scale is rounded to bf16 first (measured: bit for bit then).
 */
static std::tuple<at::Tensor, at::Tensor>
trn_native_dropout(const at::Tensor &xv, double p, std::optional<bool> train)
{
	KernelScope k("dropout");
	const at::Tensor x = dense(xv);

	if (!train.value_or(true) || !(p > 0 && p < 1) ||
	    !dropout_on_device(x))
		return fall_back<ATEN_OP(native_dropout)>(xv, p, train);
	const c10::DeviceGuard guard(x.device());
	at::Tensor drawn = std::get<1>(at::native_dropout(
		at::zeros_like(xv, xv.options().device(at::kCPU)), p, train));
	at::Tensor mask = new_tensor(x.sizes(), x, at::kBool);
	at::Tensor out = f32_like(x);
	double scale = 1.0 / (1.0 - p);

	if (x.scalar_type() == at::kBFloat16)
		scale = static_cast<float>(
			c10::BFloat16(static_cast<float>(scale)));
	mask.copy_(drawn.contiguous());
	bin(eager_mul, out, widened(x),
	    bytes_as_f32(mask, x.numel()).view(x.sizes()));
	sc(eager_scale, out, out, scale);
	count_device_op("dropout");
	return { narrowed(out, x.scalar_type()), mask };
}

/* grad * mask * scale, the bool mask widened on the device. */
static at::Tensor trn_native_dropout_backward(const at::Tensor &grad,
					      const at::Tensor &mask,
					      double scale)
{
	KernelScope k("dropout_backward");
	const at::Tensor g = dense(grad);

	if (!dropout_on_device(g) || !mask.is_privateuseone() ||
	    mask.scalar_type() != at::kBool || !mask.is_contiguous() ||
	    mask.sizes() != g.sizes() || mask.device() != g.device())
		return fall_back<ATEN_OP(native_dropout_backward)>(grad, mask,
								   scale);
	const c10::DeviceGuard guard(g.device());
	at::Tensor out = f32_like(g);

	bin(eager_mul, out, widened(g),
	    bytes_as_f32(mask, g.numel()).view(g.sizes()));
	sc(eager_scale, out, out, scale);
	count_device_op("dropout_backward");
	return narrowed(out, g.scalar_type());
}

/* ---- losses ---- */

static bool mse_fits(const at::Tensor &self, const at::Tensor &target,
		     int64_t reduction)
{
	return reduction == at::Reduction::Mean && self.dim() >= 1 &&
	       self.sizes() == target.sizes() &&
	       (self.scalar_type() == at::kFloat ||
		self.scalar_type() == at::kBFloat16) &&
	       target.scalar_type() == self.scalar_type() &&
	       self.device() == target.device() && on_trn(self) &&
	       on_trn(target) && self.size(-1) <= kMaxDim &&
	       self.numel() / self.size(-1) <= kMaxDim;
}

/*
 * mean((self - target)^2): sub, mul, two row sums and a division. bf16
 * as PyTorch's CPU kernel: each square computed in f32 and rounded to
 * bf16, then their mean (in f32, rounded once).
 */
static at::Tensor trn_mse_loss(const at::Tensor &self, const at::Tensor &target,
			       int64_t reduction)
{
	KernelScope k("mse_loss");

	if (!mse_fits(self, target, reduction))
		return fall_back<ATEN_OP(mse_loss)>(self, target, reduction);
	const c10::DeviceGuard guard(self.device());
	at::Tensor d = f32_like(self);

	bin(eager_sub, d, widened(self), widened(target));
	bin(eager_mul, d, d, d);
	d = narrowed(d, self.scalar_type());
	at::Tensor loss = *reduce_on_device(d, std::nullopt, false,
					    std::nullopt, false, true, "mean");

	count_device_op("mse_loss");
	return loss;
}

/* d loss / d self = grad * 2 (self - target) / numel; bf16 rounded once. */
static at::Tensor trn_mse_loss_backward(const at::Tensor &grad,
					const at::Tensor &self,
					const at::Tensor &target,
					int64_t reduction)
{
	KernelScope k("mse_loss_backward");

	if (!mse_fits(self, target, reduction) || grad.numel() != 1 ||
	    grad.scalar_type() != self.scalar_type() || !on_trn(grad) ||
	    grad.device() != self.device())
		return fall_back<ATEN_OP(mse_loss_backward)>(grad, self, target,
							     reduction);
	const c10::DeviceGuard guard(self.device());
	at::Tensor out = f32_like(self), g32 = widened(grad);
	eager_tensor_t to = view_of(out), tg = view_of(g32, 1, 1);

	bin(eager_sub, out, widened(self), widened(target));
	run(eager_mul(&to, &to, &tg));
	sc(eager_scale, out, out, 2.0 / self.numel());
	count_device_op("mse_loss_backward");
	return narrowed(out, self.scalar_type());
}

/*
 * nll_loss without a gather. The ISA has no gather, no comparison and no
 * integer arithmetic, so the targets' columns are found by arithmetic on
 * exact small integers:
 *
 * 1. Each byte of the int64 targets as an f32 (bytes_as_f32()); a matmul
 *    with powers of 256 sums them into three exact parts, t0 = bytes 0-2,
 *    t1 = bytes 3-5, t2 = bytes 6-7 (every partial sum is an integer
 *    below 2^24).
 * 2. A row is ignored where all three parts equal ignore_index's (sum of
 *    absolute differences 0), out of range where t1 or t2 is not 0 (or
 *    t0 >= C); the first two move the row's target index to C or beyond,
 *    past every column, as t0 >= C already is.
 * 3. e = c - t for every column c: +0 exactly at the target, |e| >= 1
 *    elsewhere; (1/e - 1.5) * inf is +inf at the target and -inf
 *    elsewhere, so max over c of min(x, that) is x[t] (NaN stays NaN,
 *    -inf stays -inf; no product with the other columns' values).
 * 4. An ignored row then picks max(-inf, 0) = 0 from v = ln(ignored),
 *    which is 0 for ignored rows and -inf for the rest.
 *
 * A target outside [0, C) that is not ignore_index cannot stop the
 * stream: its row picks -inf (the loss becomes inf or NaN), and the
 * forward counts such rows into a device-side check, which the next
 * synchronisation raises (checks.cpp), as CUDA's device-side assertion.
 */
struct NllPick {
	at::Tensor mask;	/* [n][c]: +inf at the target, else -inf */
	at::Tensor zero_if_ignored; /* [n]: 0 ignored, -inf otherwise */
	at::Tensor weight;	/* [n]: weight[t], 0 ignored (1 unweighted) */
};

/*
 * The device path keeps a few [n][c] f32 temporaries alive at once; past
 * 16 Mi elements (64 MiB each) the CPU's way costs less memory.
 */
static constexpr int64_t kMaxNllElems = 1LL << 24;

/*
 * The three parts of each target, [3][n] f32 (step 1 above): a row per
 * part, so that each is a dense vector without a layout copy.
 */
static at::Tensor target_parts(const at::Tensor &target, int64_t n)
{
	static const float powers[3][8] = {
		{ 1, 256, 65536, 0, 0, 0, 0, 0 },
		{ 0, 0, 0, 1, 256, 65536, 0, 0 },
		{ 0, 0, 0, 0, 0, 0, 1, 256 },
	};
	at::Tensor bytes = bytes_as_f32(target, n * 8).view({ n, 8 });
	at::Tensor w = at::from_blob(const_cast<float *>(&powers[0][0]),
				     { 3, 8 }, at::kFloat)
			       .to(target.device());
	return at::mm(w, bytes.t());	/* MATMUL's TRANSPOSE_B: no copy */
}

/*
 * The mask, the ignored rows' zeros and the picked weights for @target;
 * with @bad, also the number of rows whose target is neither in [0, @c)
 * nor @ignore_index (upper parts not 0, or t0 >= c), one f32 on trn.
 */
static NllPick nll_pick(const at::Tensor &target,
			const std::optional<at::Tensor> &weight, int64_t n,
			int64_t c, int64_t ignore_index,
			at::Tensor *bad = nullptr)
{
	const uint64_t u = static_cast<uint64_t>(ignore_index);
	const float ii[3] = { static_cast<float>(u & 0xffffff),
			      static_cast<float>((u >> 24) & 0xffffff),
			      static_cast<float>(u >> 48) };
	at::Tensor parts = target_parts(target.contiguous(), n);
	at::Tensor dist = (parts - at::from_blob(const_cast<float *>(ii),
						 { 3, 1 }, at::kFloat)
					   .to(target.device()))
				  .abs()
				  .sum(0);
	at::Tensor ignored = dist.clamp_max(1).neg().add(1);
	at::Tensor off = (ignored + parts[1] + parts[2]).clamp_max(1);
	at::Tensor t = parts[0] + off * static_cast<double>(c);

	if (bad) {
		at::Tensor outside = parts[1] + parts[2] +
				     (parts[0] - static_cast<double>(c - 1))
					     .clamp_min(0);

		*bad = (ignored.neg().add(1) * outside.clamp_max(1)).sum();
	}
	at::Tensor cols = at::arange(c, at::TensorOptions(at::kFloat))
				  .to(target.device());
	at::Tensor e = cols.expand({ n, c }).contiguous() - t.unsqueeze(1);
	NllPick p;

	p.mask = (e.reciprocal() - 1.5) * INFINITY;
	p.zero_if_ignored = ignored.log();
	if (weight && weight->defined())
		p.weight = at::maximum(at::minimum(p.mask,
						   widened(dense(*weight)))
					       .amax(1),
				       p.zero_if_ignored);
	else
		p.weight = ignored.neg().add(1);
	return p;
}

/*
 * What the device path takes: self f32/bf16 [n][c] with n int64 targets,
 * or [c] with one; weight, if any, [c] of self's dtype; all on one trn
 * device with LOG; c up to the ISA's row length, n at least 1, n * c up to
 * kMaxNllElems; a known reduction (else PyTorch's own error).
 */
static bool nll_fits(const at::Tensor &self, const at::Tensor &target,
		     const std::optional<at::Tensor> &weight, int64_t reduction)
{
	if (reduction < at::Reduction::None || reduction > at::Reduction::Sum ||
	    !self.is_privateuseone() || !target.is_privateuseone() ||
	    self.device() != target.device() ||
	    (self.scalar_type() != at::kFloat &&
	     self.scalar_type() != at::kBFloat16) ||
	    target.scalar_type() != at::kLong || !has_log_erf(self))
		return false;
	if (!(self.dim() == 2 && target.dim() == 1 &&
	      target.size(0) == self.size(0)) &&
	    !(self.dim() == 1 && target.dim() == 0))
		return false;
	if (!self.numel() || self.numel() > kMaxNllElems ||
	    self.size(-1) > kMaxDim || self.numel() / self.size(-1) > kMaxDim)
		return false;
	return !weight || !weight->defined() ||
	       (weight->is_privateuseone() &&
		weight->device() == self.device() &&
		weight->scalar_type() == self.scalar_type() &&
		weight->dim() == 1 && weight->size(0) == self.size(-1));
}

static std::tuple<at::Tensor, at::Tensor>
trn_nll_loss_forward(const at::Tensor &self, const at::Tensor &target,
		     const std::optional<at::Tensor> &weight,
		     int64_t reduction, int64_t ignore_index)
{
	KernelScope k("nll_loss");

	if (!nll_fits(self, target, weight, reduction))
		return fall_back<ATEN_OP(nll_loss_forward)>(
			self, target, weight, reduction, ignore_index);
	const c10::DeviceGuard guard(self.device());
	const int64_t c = self.size(-1), n = self.numel() / c;
	const at::ScalarType dt = self.scalar_type();
	at::Tensor bad;
	NllPick p = nll_pick(target, weight, n, c, ignore_index, &bad);
	at::Tensor x = widened(dense(self)).view({ n, c });
	at::Tensor picked = at::maximum(at::minimum(x, p.mask).amax(1),
					p.zero_if_ignored);
	at::Tensor losses = (p.weight * picked).neg();
	at::Tensor total = p.weight.sum();
	at::Tensor out;

	if (reduction == at::Reduction::None) {
		out = losses.view(target.sizes());
		total.zero_();
	} else if (reduction == at::Reduction::Sum) {
		out = losses.sum();
	} else {
		out = losses.sum() / total;
	}
	defer_check(bad, c10::str("nll_loss: target out of bounds: outside [0, ",
				  c, ") and not ignore_index ", ignore_index));
	count_device_op("nll_loss");
	return { narrowed(out.contiguous(), dt), narrowed(total, dt) };
}

static at::Tensor trn_nll_loss_backward(const at::Tensor &grad,
					const at::Tensor &self,
					const at::Tensor &target,
					const std::optional<at::Tensor> &weight,
					int64_t reduction,
					int64_t ignore_index,
					const at::Tensor &total_weight)
{
	KernelScope k("nll_loss_backward");

	if (!nll_fits(self, target, weight, reduction) ||
	    !grad.is_privateuseone() ||
	    grad.device() != self.device() ||
	    grad.scalar_type() != self.scalar_type() ||
	    !on_trn(total_weight) || total_weight.numel() != 1 ||
	    total_weight.device() != self.device() ||
	    grad.numel() != (reduction == at::Reduction::None ?
					target.numel() : 1))
		return fall_back<ATEN_OP(nll_loss_backward)>(
			grad, self, target, weight, reduction, ignore_index,
			total_weight);
	const c10::DeviceGuard guard(self.device());
	const int64_t c = self.size(-1), n = self.numel() / c;
	NllPick p = nll_pick(target, weight, n, c, ignore_index);
	at::Tensor g = widened(dense(grad)).reshape({ -1 });

	if (reduction == at::Reduction::Mean)
		g = g / widened(total_weight).reshape({ 1 });
	at::Tensor scale = (p.weight * g).neg();
	at::Tensor gi = p.mask.clamp(0, 1) * scale.unsqueeze(1);

	count_device_op("nll_loss_backward");
	return narrowed(gi, self.scalar_type()).view(self.sizes());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("add.Tensor", trn_add);
	m.impl("sub.Tensor", trn_sub);
	m.impl("mul.Tensor", trn_mul);
	m.impl("div.Tensor", trn_div);
	m.impl("maximum", trn_maximum);
	m.impl("minimum", trn_minimum);
	m.impl("clamp", trn_clamp);
	m.impl("clamp_min", trn_clamp_min);
	m.impl("clamp_max", trn_clamp_max);
	m.impl("add_.Tensor", trn_add_);
	m.impl("sub_.Tensor", trn_sub_);
	m.impl("mul_.Tensor", trn_mul_);
	m.impl("div_.Tensor", trn_div_);
	m.impl("mul_.Scalar", trn_mul_scalar_);
	m.impl("addcmul_", trn_addcmul_);
	m.impl("addcdiv_", trn_addcdiv_);
	m.impl("lerp_.Scalar", trn_lerp_);
	m.impl("addcmul", trn_addcmul);
	m.impl("addcdiv", trn_addcdiv);
	m.impl("lerp.Scalar", trn_lerp);
	m.impl("relu", trn_relu);
	m.impl("exp", trn_exp);
	m.impl("neg", trn_neg);
	m.impl("abs", trn_abs);
	m.impl("sqrt", trn_sqrt);
	m.impl("rsqrt", trn_rsqrt);
	m.impl("pow.Tensor_Scalar", trn_pow);
	m.impl("reciprocal", trn_reciprocal);
	m.impl("tanh", trn_tanh);
	m.impl("sigmoid", trn_sigmoid);
	m.impl("silu", trn_silu);
	m.impl("gelu", trn_gelu);
	m.impl("log", trn_log);
	m.impl("erf", trn_erf);
	m.impl("threshold_backward", trn_threshold_backward);
	m.impl("tanh_backward", trn_tanh_backward);
	m.impl("sigmoid_backward", trn_sigmoid_backward);
	m.impl("gelu_backward", trn_gelu_backward);
	m.impl("mm", trn_mm);
	m.impl("addmm", trn_addmm);
	m.impl("bmm", trn_bmm);
	m.impl("sum.dim_IntList", trn_sum_dim);
	m.impl("mean.dim", trn_mean_dim);
	m.impl("amax", trn_amax);
	m.impl("max", trn_max);
	m.impl("_softmax", trn_softmax);
	m.impl("_log_softmax", trn_log_softmax);
	m.impl("_safe_softmax", trn_safe_softmax);
	m.impl("_softmax_backward_data", trn_softmax_backward);
	m.impl("_log_softmax_backward_data", trn_log_softmax_backward);
	m.impl("native_layer_norm", trn_native_layer_norm);
	m.impl("native_layer_norm_backward", trn_native_layer_norm_backward);
	m.impl("native_dropout", trn_native_dropout);
	m.impl("native_dropout_backward", trn_native_dropout_backward);
	m.impl("mse_loss", trn_mse_loss);
	m.impl("mse_loss_backward", trn_mse_loss_backward);
	m.impl("nll_loss_forward", trn_nll_loss_forward);
	m.impl("nll_loss_backward", trn_nll_loss_backward);
}

} // namespace trn_torch
