// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Operations: each checks its operands, records its device commands on
 * the current stream of the operands' device (Documentation/isa.md) and
 * lets the stream's flush policy decide when they are submitted.
 */
#include <errno.h>
#include <float.h>
#include <string.h>

#include "eager_internal.h"

#define MAX_DIM		((int64_t)TRN_ISA_MAX_DIM)
#define FLAT_COLS	4096	/* row length when a tensor is seen flat */
#define MATMUL_B_MAX	(64ULL << 20)	/* ISA: k * n * 4 bytes */

/* All @n tensors on one trn device; its current stream. */
static int op_stream(eager_stream_t **s, unsigned int n,
		     const eager_tensor_t *const *ts)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!ts[i] || ts[i]->device.type != EAGER_TRN ||
		    ts[i]->device.index != ts[0]->device.index)
			return -EINVAL;
	*s = eager_current_stream(ts[0]->device);
	return *s ? 0 : -ENODEV;
}

/*
 * Begin recording an op on @ts and on @tmp, a temporary of the op's (NULL:
 * none): list their buffers for the job.
 */
static int use_all(eager_stream_t *s, unsigned int n,
		   const eager_tensor_t *const *ts, const eager_tensor_t *tmp)
{
	unsigned int i;
	int ret = 0;

	eager_op_begin(s);
	for (i = 0; !ret && i < n; i++)
		ret = eager_op_use(s, ts[i]->block);
	if (!ret && tmp)
		ret = eager_op_use(s, tmp->block);
	return ret;
}

/* After recording an op: its error, or else the stream's flush policy's. */
static int op_end(eager_stream_t *s, int ret)
{
	return ret ? ret : eager_op_end(s);
}

static uint32_t dst_flags(const eager_tensor_t *out)
{
	return out->dtype == EAGER_BF16 ? TRN_ELEM_DST_BF16 : 0;
}

static bool same_storage(const eager_tensor_t *a, const eager_tensor_t *b)
{
	return a->block == b->block;
}

/* ---- emitters: split rows into commands of at most MAX_DIM rows ---- */

/* Rows of the next command when @left rows remain. */
static int64_t chunk(int64_t left)
{
	return left < MAX_DIM ? left : MAX_DIM;
}

static int unary_rows(eager_stream_t *s, uint32_t op, uint32_t flags,
		      int64_t rows, int64_t cols, uint64_t dst,
		      uint64_t dst_pitch, uint64_t src, uint64_t src_pitch)
{
	int64_t r0, nr;
	int ret = 0;

	for (r0 = 0; !ret && r0 < rows; r0 += nr) {
		nr = chunk(rows - r0);
		EAGER_EMIT(ret, s, trn_cmd_unary(eager_cmdbuf(s), op, flags,
				(uint32_t)nr, (uint32_t)cols,
				dst + r0 * dst_pitch, dst_pitch,
				src + r0 * src_pitch, src_pitch));
	}
	return ret;
}

static int binary_rows(eager_stream_t *s, uint32_t op, uint32_t flags,
		       int64_t rows, int64_t cols, uint64_t dst,
		       uint64_t dst_pitch, uint64_t a, uint64_t a_pitch,
		       uint64_t b, uint64_t b_pitch)
{
	int64_t r0, nr;
	int ret = 0;

	for (r0 = 0; !ret && r0 < rows; r0 += nr) {
		nr = chunk(rows - r0);
		EAGER_EMIT(ret, s, trn_cmd_binary(eager_cmdbuf(s), op, flags,
				(uint32_t)nr, (uint32_t)cols,
				dst + r0 * dst_pitch, dst_pitch,
				a + r0 * a_pitch, a_pitch,
				b + r0 * b_pitch, b_pitch));
	}
	return ret;
}

static int reduce_rows(eager_stream_t *s, uint32_t op, int64_t rows,
		       int64_t cols, uint64_t dst, uint64_t src)
{
	int64_t r0, nr;
	int ret = 0;

	for (r0 = 0; !ret && r0 < rows; r0 += nr) {
		nr = chunk(rows - r0);
		EAGER_EMIT(ret, s, trn_cmd_reduce(eager_cmdbuf(s), op,
				(uint32_t)nr, (uint32_t)cols, dst + r0 * 4,
				src + r0 * cols * 4, (uint64_t)cols * 4));
	}
	return ret;
}

/*
 * @n f32 elements seen as rows of FLAT_COLS plus a last shorter row.
 * dst elements are @des bytes.
 */
static int unary_flat(eager_stream_t *s, uint32_t op, uint32_t flags,
		      int64_t n, uint64_t dst, unsigned int des, uint64_t src)
{
	int64_t full = n / FLAT_COLS, rest = n % FLAT_COLS;
	int ret = 0;

	if (full)
		ret = unary_rows(s, op, flags, full, FLAT_COLS, dst,
				 FLAT_COLS * des, src, FLAT_COLS * 4);
	if (!ret && rest)
		ret = unary_rows(s, op, flags, 1, rest,
				 dst + full * FLAT_COLS * des, 0,
				 src + full * FLAT_COLS * 4, 0);
	return ret;
}

/* As unary_flat; @b is a full operand, or one scalar with @b_scalar. */
static int binary_flat(eager_stream_t *s, uint32_t op, uint32_t flags,
		       int64_t n, uint64_t dst, unsigned int des, uint64_t a,
		       uint64_t b, bool b_scalar)
{
	int64_t full = n / FLAT_COLS, rest = n % FLAT_COLS;
	uint64_t bp = b_scalar ? 0 : FLAT_COLS * 4;
	uint64_t b_rest = b_scalar ? b : b + full * FLAT_COLS * 4;
	int ret = 0;

	if (b_scalar)
		flags |= TRN_BINARY_B_PER_ROW;
	if (full)
		ret = binary_rows(s, op, flags, full, FLAT_COLS, dst,
				  FLAT_COLS * des, a, FLAT_COLS * 4, b, bp);
	if (!ret && rest)
		ret = binary_rows(s, op, flags, 1, rest,
				  dst + full * FLAT_COLS * des, 0,
				  a + full * FLAT_COLS * 4, 0, b_rest, 0);
	return ret;
}

/* ---- element-wise ---- */

static int binary(eager_tensor_t *out, const eager_tensor_t *a,
		  const eager_tensor_t *b, uint32_t op)
{
	enum { B_FULL, B_SCALAR, B_ROW, B_PER_ROW } mode;
	const eager_tensor_t *ts[3] = { out, a, b };
	unsigned int des;
	int64_t rows, cols;
	eager_stream_t *s;
	uint32_t flags;
	int ret = op_stream(&s, 3, ts);

	if (ret)
		return ret;
	if (a->dtype != EAGER_F32 || b->dtype != EAGER_F32 ||
	    out->numel != a->numel || eager_cols(out) != eager_cols(a))
		return -EINVAL;
	rows = eager_rows(a);
	cols = eager_cols(a);
	des = (unsigned int)eager_dtype_size(out->dtype);
	flags = dst_flags(out);
	/* b may not be overwritten before it is read: only in place. */
	if (same_storage(out, b) && out->va != b->va)
		return -EINVAL;
	if (b->numel == a->numel && eager_cols(b) == cols)
		mode = B_FULL;
	else if (b->numel == 1)
		mode = B_SCALAR;
	else if (cols <= MAX_DIM && b->numel == cols && eager_cols(b) == cols)
		mode = B_ROW;
	else if (cols <= MAX_DIM && b->numel == rows && eager_cols(b) == 1)
		mode = B_PER_ROW;
	else
		return -EINVAL;
	ret = use_all(s, 3, ts, NULL);
	if (ret)
		return ret;
	if (mode == B_FULL || mode == B_SCALAR)
		ret = binary_flat(s, op, flags, a->numel, out->va, des, a->va,
				  b->va, mode == B_SCALAR);
	else if (mode == B_ROW)
		/* [cols]: the same row for every row (pitch 0). */
		ret = binary_rows(s, op, flags, rows, cols, out->va,
				  (uint64_t)cols * des, a->va,
				  (uint64_t)cols * 4, b->va, 0);
	else
		/* [rows][1]: one value per row. */
		ret = binary_rows(s, op, flags | TRN_BINARY_B_PER_ROW, rows,
				  cols, out->va, (uint64_t)cols * des, a->va,
				  (uint64_t)cols * 4, b->va, 4);
	return op_end(s, ret);
}

int eager_add(eager_tensor_t *out, const eager_tensor_t *a,
	      const eager_tensor_t *b)
{
	return binary(out, a, b, TRN_BINARY_ADD);
}

int eager_sub(eager_tensor_t *out, const eager_tensor_t *a,
	      const eager_tensor_t *b)
{
	return binary(out, a, b, TRN_BINARY_SUB);
}

int eager_mul(eager_tensor_t *out, const eager_tensor_t *a,
	      const eager_tensor_t *b)
{
	return binary(out, a, b, TRN_BINARY_MUL);
}

int eager_div(eager_tensor_t *out, const eager_tensor_t *a,
	      const eager_tensor_t *b)
{
	return binary(out, a, b, TRN_BINARY_DIV);
}

int eager_maximum(eager_tensor_t *out, const eager_tensor_t *a,
		  const eager_tensor_t *b)
{
	return binary(out, a, b, TRN_BINARY_MAX);
}

int eager_minimum(eager_tensor_t *out, const eager_tensor_t *a,
		  const eager_tensor_t *b)
{
	return binary(out, a, b, TRN_BINARY_MIN);
}

/* out = x op value, the value written once into a per-stream slot. */
static int binary_scalar(eager_tensor_t *out, const eager_tensor_t *x,
			 uint32_t op, float value)
{
	const eager_tensor_t *ts[2] = { out, x };
	eager_stream_t *s;
	uint64_t k;
	int ret = op_stream(&s, 2, ts);

	if (ret)
		return ret;
	if (x->dtype != EAGER_F32 || out->numel != x->numel ||
	    (same_storage(out, x) && out->va != x->va))
		return -EINVAL;
	ret = use_all(s, 2, ts, NULL);
	if (!ret)
		ret = eager_scalar(s, value, &k);
	if (!ret)
		ret = binary_flat(s, op, dst_flags(out), x->numel, out->va,
				  (unsigned int)eager_dtype_size(out->dtype),
				  x->va, k, true);
	return op_end(s, ret);
}

int eager_scale(eager_tensor_t *out, const eager_tensor_t *x, float alpha)
{
	return binary_scalar(out, x, TRN_BINARY_MUL, alpha);
}

int eager_add_scalar(eager_tensor_t *out, const eager_tensor_t *x,
		     float value)
{
	return binary_scalar(out, x, TRN_BINARY_ADD, value);
}

int eager_div_scalar(eager_tensor_t *out, const eager_tensor_t *x,
		     float value)
{
	return binary_scalar(out, x, TRN_BINARY_DIV, value);
}

int eager_max_scalar(eager_tensor_t *out, const eager_tensor_t *x,
		     float value)
{
	return binary_scalar(out, x, TRN_BINARY_MAX, value);
}

int eager_min_scalar(eager_tensor_t *out, const eager_tensor_t *x,
		     float value)
{
	return binary_scalar(out, x, TRN_BINARY_MIN, value);
}

/* LOG, ERF and the erf GELUs are uAPI 1.5's; older devices say no. */
static bool has_log_erf(const eager_stream_t *s)
{
	return s->be->info.capabilities & TRN_CAP_LOG_ERF;
}

static int unary(eager_tensor_t *out, const eager_tensor_t *x, uint32_t op)
{
	const eager_tensor_t *ts[2] = { out, x };
	eager_stream_t *s;
	int ret = op_stream(&s, 2, ts);

	if (ret)
		return ret;
	if (op >= TRN_UNARY_LOG && !has_log_erf(s))
		return -EOPNOTSUPP;
	if (x->dtype != EAGER_F32 || out->numel != x->numel ||
	    (same_storage(out, x) && out->va != x->va))
		return -EINVAL;
	/* In place with a narrower destination would overrun the source. */
	if (same_storage(out, x) && out->dtype != x->dtype)
		return -EINVAL;
	ret = use_all(s, 2, ts, NULL);
	if (!ret)
		ret = unary_flat(s, op, dst_flags(out), x->numel, out->va,
				 (unsigned int)eager_dtype_size(out->dtype),
				 x->va);
	return op_end(s, ret);
}

int eager_relu(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_RELU);
}

int eager_gelu(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_GELU);
}

int eager_exp(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_EXP);
}

int eager_neg(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_NEG);
}

int eager_abs(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_ABS);
}

int eager_sqrt(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_SQRT);
}

int eager_recip(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_RECIP);
}

int eager_tanh(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_TANH);
}

/*
 * out = op(x) * grad, all f32 of one shape, for the UNARY derivatives
 * (RELU_GRAD: the 0/1 mask, exact; GELU_ERF_GRAD). op(x) goes to out,
 * unless that would overwrite grad first: then to a temporary.
 */
static int derivative_times_grad(eager_tensor_t *out,
				 const eager_tensor_t *grad,
				 const eager_tensor_t *x, uint32_t op)
{
	const eager_tensor_t *ts[3] = { out, grad, x };
	eager_tensor_t *d = NULL;
	eager_stream_t *s;
	uint64_t dva;
	int ret = op_stream(&s, 3, ts);

	if (ret)
		return ret;
	if (op == TRN_UNARY_GELU_ERF_GRAD && !has_log_erf(s))
		return -EOPNOTSUPP;
	if (out->dtype != EAGER_F32 || grad->dtype != EAGER_F32 ||
	    x->dtype != EAGER_F32 || out->numel != grad->numel ||
	    x->numel != grad->numel)
		return -EINVAL;
	if (same_storage(out, grad)) {
		ret = eager_tensor_new(out->device, EAGER_F32, out->ndim,
				       out->shape, &d);
		if (ret)
			return ret;
		dva = d->va;
	} else {
		dva = out->va;
	}
	ret = use_all(s, 3, ts, d);
	if (!ret)
		ret = unary_flat(s, op, 0, x->numel, dva, 4, x->va);
	if (!ret)
		ret = binary_flat(s, TRN_BINARY_MUL, 0, x->numel, out->va, 4,
				  dva, grad->va, false);
	ret = op_end(s, ret);
	eager_free(d);	/* same stream reuses it in order */
	return ret;
}

int eager_log(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_LOG);
}

int eager_erf(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_ERF);
}

int eager_gelu_erf(eager_tensor_t *out, const eager_tensor_t *x)
{
	return unary(out, x, TRN_UNARY_GELU_ERF);
}

int eager_gelu_erf_backward(eager_tensor_t *out, const eager_tensor_t *grad,
			    const eager_tensor_t *x)
{
	return derivative_times_grad(out, grad, x, TRN_UNARY_GELU_ERF_GRAD);
}

int eager_sigmoid(eager_tensor_t *out, const eager_tensor_t *x)
{
	const eager_tensor_t *ts[2] = { out, x };
	eager_stream_t *s;
	int64_t n;
	uint64_t one;
	int ret = op_stream(&s, 2, ts);

	if (ret)
		return ret;
	n = x->numel;
	if (x->dtype != EAGER_F32 || out->dtype != EAGER_F32 ||
	    out->numel != n || (same_storage(out, x) && out->va != x->va))
		return -EINVAL;
	ret = use_all(s, 2, ts, NULL);
	if (!ret)
		ret = eager_scalar(s, 1.0f, &one);
	/* out = -x; out = e^out; out += 1; out = 1 / out, all in place. */
	if (!ret)
		ret = unary_flat(s, TRN_UNARY_NEG, 0, n, out->va, 4, x->va);
	if (!ret)
		ret = unary_flat(s, TRN_UNARY_EXP, 0, n, out->va, 4, out->va);
	if (!ret)
		ret = binary_flat(s, TRN_BINARY_ADD, 0, n, out->va, 4, out->va,
				  one, true);
	if (!ret)
		ret = unary_flat(s, TRN_UNARY_RECIP, 0, n, out->va, 4,
				 out->va);
	return op_end(s, ret);
}

int eager_relu_backward(eager_tensor_t *out, const eager_tensor_t *grad,
			const eager_tensor_t *x)
{
	return derivative_times_grad(out, grad, x, TRN_UNARY_RELU_GRAD);
}

enum softmax_kind { SOFTMAX, LOG_SOFTMAX, SAFE_SOFTMAX };

/*
 * Per row of @x: t = max_c x; out = x - t; e = exp(out); t = sum_c e;
 * softmax: out = e / t with e in out itself; log_softmax: out -= ln t, e
 * a temporary of x's size (PyTorch's order, finite where e underflows).
 * Safe softmax: softmax with t kept at least -FLT_MAX after the max and
 * at least the smallest subnormal after the sum, which changes no row
 * with a finite value (its max is finite, its sum at least 1) and makes
 * a row of only -inf exp(-inf) / tiny = 0 instead of NaN.
 */
static int row_softmax(eager_tensor_t *out, const eager_tensor_t *x,
		       enum softmax_kind kind)
{
	const eager_tensor_t *ts[2] = { out, x };
	const bool log = kind == LOG_SOFTMAX;
	eager_tensor_t *t = NULL, *e = NULL;
	eager_stream_t *s;
	int64_t rows, cols, r0, nr;
	uint64_t pitch, o, i, ev, lowest = 0, tiny = 0;
	int ret = op_stream(&s, 2, ts);

	if (ret)
		return ret;
	if (log && !has_log_erf(s))
		return -EOPNOTSUPP;
	/* Only now is @x known to be a tensor. */
	rows = eager_rows(x);
	cols = eager_cols(x);
	pitch = (uint64_t)cols * 4;
	if (x->dtype != EAGER_F32 || out->dtype != EAGER_F32 ||
	    out->numel != x->numel || eager_cols(out) != cols ||
	    cols > MAX_DIM || (same_storage(out, x) && out->va != x->va))
		return -EINVAL;
	ret = eager_tensor_new(x->device, EAGER_F32, 1, &rows, &t);
	if (!ret && log)
		ret = eager_tensor_new(x->device, EAGER_F32, x->ndim, x->shape,
				       &e);
	if (ret)
		goto out;
	ret = use_all(s, 2, ts, t);
	if (!ret && e)
		ret = eager_op_use(s, e->block);
	if (!ret && kind == SAFE_SOFTMAX)
		ret = eager_scalar(s, -FLT_MAX, &lowest);
	if (!ret && kind == SAFE_SOFTMAX)
		ret = eager_scalar_bits(s, 1, &tiny);	/* 2^-149 */
	for (r0 = 0; !ret && r0 < rows; r0 += nr) {
		nr = chunk(rows - r0);
		o = out->va + r0 * pitch;
		i = x->va + r0 * pitch;
		ev = e ? e->va + r0 * pitch : o;
		ret = reduce_rows(s, TRN_REDUCE_MAX, nr, cols, t->va, i);
		if (!ret && kind == SAFE_SOFTMAX)
			ret = binary_flat(s, TRN_BINARY_MAX, 0, nr, t->va, 4,
					  t->va, lowest, true);
		if (!ret)
			ret = binary_rows(s, TRN_BINARY_SUB,
					  TRN_BINARY_B_PER_ROW, nr, cols, o,
					  pitch, i, pitch, t->va, 4);
		if (!ret)
			ret = unary_rows(s, TRN_UNARY_EXP, 0, nr, cols, ev,
					 pitch, o, pitch);
		if (!ret)
			ret = reduce_rows(s, TRN_REDUCE_SUM, nr, cols, t->va,
					  ev);
		if (!ret && kind == SAFE_SOFTMAX)
			ret = binary_flat(s, TRN_BINARY_MAX, 0, nr, t->va, 4,
					  t->va, tiny, true);
		if (!ret && log)
			ret = unary_flat(s, TRN_UNARY_LOG, 0, nr, t->va, 4,
					 t->va);
		if (!ret)
			ret = binary_rows(s, log ? TRN_BINARY_SUB :
					  TRN_BINARY_DIV, TRN_BINARY_B_PER_ROW,
					  nr, cols, o, pitch, o, pitch, t->va,
					  4);
	}
	ret = op_end(s, ret);
out:
	eager_free(e);
	eager_free(t);
	return ret;
}

int eager_softmax(eager_tensor_t *out, const eager_tensor_t *x)
{
	return row_softmax(out, x, SOFTMAX);
}

int eager_log_softmax(eager_tensor_t *out, const eager_tensor_t *x)
{
	return row_softmax(out, x, LOG_SOFTMAX);
}

int eager_safe_softmax(eager_tensor_t *out, const eager_tensor_t *x)
{
	return row_softmax(out, x, SAFE_SOFTMAX);
}

/* ---- matmul, sums, transposes ---- */

/* out[m][n] = a[m][k] @ b[k][n] into @mm, pitches from the stored shapes. */
static void matmul_of(struct trn_matmul *mm, const eager_tensor_t *out,
		      const eager_tensor_t *a, const eager_tensor_t *b,
		      uint32_t m, uint32_t n, uint32_t k, uint32_t flags)
{
	unsigned int es = (unsigned int)eager_dtype_size(a->dtype);

	memset(mm, 0, sizeof(*mm));
	mm->m = m;
	mm->n = n;
	mm->k = k;
	mm->flags = flags | (a->dtype == EAGER_BF16 ? TRN_MATMUL_BF16 : 0);
	mm->a = a->va;
	mm->lda = (uint64_t)eager_cols(a) * es;
	mm->b = b->va;
	mm->ldb = (uint64_t)eager_cols(b) * es;
	mm->c = out->va;
	mm->ldc = (uint64_t)n * 4;
}

/* The op @mm on @ts and the temporary @tmp (as use_all()). */
static int record_matmul(eager_stream_t *s, const struct trn_matmul *mm,
			 unsigned int n, const eager_tensor_t *const *ts,
			 const eager_tensor_t *tmp)
{
	int ret = use_all(s, n, ts, tmp);

	if (!ret)
		EAGER_EMIT(ret, s, trn_cmd_matmul(eager_cmdbuf(s), mm));
	return op_end(s, ret);
}

/* A new tensor holding x transposed. */
static int transposed(const eager_tensor_t *x, eager_tensor_t **out)
{
	const int64_t shape[2] = { x->shape[1], x->shape[0] };
	int ret = eager_tensor_new(x->device, x->dtype, 2, shape, out);

	if (ret)
		return ret;
	ret = eager_transpose(*out, x);
	if (ret) {
		eager_free(*out);
		*out = NULL;
	}
	return ret;
}

int eager_matmul(eager_tensor_t *out, const eager_tensor_t *a,
		 const eager_tensor_t *b, uint32_t flags)
{
	const eager_tensor_t *ts[3] = { out, a, b };
	eager_tensor_t *at = NULL, *bt = NULL;
	struct trn_matmul mm;
	int64_t m, n, k, kb;
	uint32_t hw = 0;
	eager_stream_t *s;
	int ret = op_stream(&s, 3, ts);

	if (ret)
		return ret;
	if (flags & ~(EAGER_TRANS_A | EAGER_TRANS_B | EAGER_ACCUMULATE) ||
	    a->ndim != 2 || b->ndim != 2 || out->ndim != 2 ||
	    a->dtype != b->dtype || out->dtype != EAGER_F32 ||
	    same_storage(out, a) || same_storage(out, b))
		return -EINVAL;
	m = a->shape[flags & EAGER_TRANS_A ? 1 : 0];
	k = a->shape[flags & EAGER_TRANS_A ? 0 : 1];
	kb = b->shape[flags & EAGER_TRANS_B ? 1 : 0];
	n = b->shape[flags & EAGER_TRANS_B ? 0 : 1];
	if (kb != k || out->shape[0] != m || out->shape[1] != n ||
	    m > MAX_DIM || n > MAX_DIM || k > MAX_DIM ||
	    (uint64_t)k * n * 4 > MATMUL_B_MAX)
		return -EINVAL;
	if (flags & EAGER_ACCUMULATE)
		hw |= TRN_MATMUL_ACCUMULATE;
	if (flags & (EAGER_TRANS_A | EAGER_TRANS_B)) {
		ret = eager_device_has_transpose(a->device);
		if (ret < 0)
			return ret;
		if (ret) {
			if (flags & EAGER_TRANS_A)
				hw |= TRN_MATMUL_TRANSPOSE_A;
			if (flags & EAGER_TRANS_B)
				hw |= TRN_MATMUL_TRANSPOSE_B;
		} else {
			/* Without the flags: transposed copies first. */
			ret = 0;
			if (flags & EAGER_TRANS_A)
				ret = transposed(a, &at);
			if (!ret && (flags & EAGER_TRANS_B))
				ret = transposed(b, &bt);
			if (ret)
				goto out;
			if (at)
				a = at;
			if (bt)
				b = bt;
		}
	}
	matmul_of(&mm, out, a, b, (uint32_t)m, (uint32_t)n, (uint32_t)k, hw);
	ts[1] = a;	/* the transposed copies if any: those are read */
	ts[2] = b;
	ret = record_matmul(s, &mm, 3, ts, NULL);
out:
	eager_free(at);
	eager_free(bt);
	return ret;
}

int eager_sum(eager_tensor_t *out, const eager_tensor_t *x, int dim)
{
	const eager_tensor_t *ts[2] = { out, x };
	eager_tensor_t *ones = NULL;
	struct trn_matmul mm;
	eager_stream_t *s;
	int64_t rows, cols;
	int ret = op_stream(&s, 2, ts);

	if (ret)
		return ret;
	rows = eager_rows(x);
	cols = eager_cols(x);
	if (x->dtype != EAGER_F32 || out->dtype != EAGER_F32 ||
	    same_storage(out, x) || cols > MAX_DIM)
		return -EINVAL;
	if (dim == -1 || dim == x->ndim - 1) {
		if (out->numel != rows)
			return -EINVAL;
		ret = use_all(s, 2, ts, NULL);
		if (!ret)
			ret = reduce_rows(s, TRN_REDUCE_SUM, rows, cols,
					  out->va, x->va);
		return op_end(s, ret);
	}
	if (dim != 0 || out->numel != cols || rows > MAX_DIM ||
	    (uint64_t)rows * cols * 4 > MATMUL_B_MAX)
		return -EINVAL;
	/* out[1][cols] = ones[1][rows] @ x[rows][cols]: in row order. */
	ret = eager_tensor_new(x->device, EAGER_F32, 1, &rows, &ones);
	if (ret)
		return ret;
	ret = eager_fill(ones, 1.0f);
	if (!ret) {
		matmul_of(&mm, out, ones, x, 1, (uint32_t)cols, (uint32_t)rows,
			  0);
		ret = record_matmul(s, &mm, 2, ts, ones);
	}
	eager_free(ones);
	return ret;
}

int eager_amax(eager_tensor_t *out, const eager_tensor_t *x)
{
	const eager_tensor_t *ts[2] = { out, x };
	eager_stream_t *s;
	int ret = op_stream(&s, 2, ts);

	if (ret)
		return ret;
	if (x->dtype != EAGER_F32 || out->dtype != EAGER_F32 ||
	    same_storage(out, x) || eager_cols(x) > MAX_DIM ||
	    out->numel != eager_rows(x))
		return -EINVAL;
	ret = use_all(s, 2, ts, NULL);
	if (!ret)
		ret = reduce_rows(s, TRN_REDUCE_MAX, eager_rows(x),
				  eager_cols(x), out->va, x->va);
	return op_end(s, ret);
}

int eager_transpose(eager_tensor_t *out, const eager_tensor_t *x)
{
	const eager_tensor_t *ts[2] = { out, x };
	int64_t r, c, i;
	uint64_t es;
	eager_stream_t *s;
	int ret = op_stream(&s, 2, ts);

	if (ret)
		return ret;
	if (x->ndim != 2 || out->ndim != 2 || out->dtype != x->dtype ||
	    out->shape[0] != x->shape[1] || out->shape[1] != x->shape[0] ||
	    same_storage(out, x))
		return -EINVAL;
	r = x->shape[0];
	c = x->shape[1];
	es = eager_dtype_size(x->dtype);
	ret = use_all(s, 2, ts, NULL);
	/*
	 * One strided COPY per row or per column, whichever there are fewer
	 * of: element (i, j) goes from x + (i * c + j) * es to
	 * out + (j * r + i) * es.
	 */
	if (r <= c)
		for (i = 0; !ret && i < r; i++)
			EAGER_EMIT(ret, s, trn_cmd_copy2d(eager_cmdbuf(s),
					out->va + i * es, r * es,
					x->va + i * c * es, es, es, c));
	else
		for (i = 0; !ret && i < c; i++)
			EAGER_EMIT(ret, s, trn_cmd_copy2d(eager_cmdbuf(s),
					out->va + i * r * es, es,
					x->va + i * es, c * es, es, r));
	return op_end(s, ret);
}

/* ---- data movement ---- */

int eager_fill(eager_tensor_t *t, float value)
{
	const eager_tensor_t *ts[1] = { t };
	uint64_t va, n, edge;
	eager_stream_t *s;
	uint32_t pattern;
	uint16_t h;
	int ret = op_stream(&s, 1, ts);

	if (ret)
		return ret;
	va = t->va;
	n = t->nbytes;
	if (t->dtype == EAGER_BF16) {
		h = eager_f32_to_bf16(value);
		pattern = (uint32_t)h << 16 | h;
	} else {
		memcpy(&pattern, &value, 4);
	}
	ret = use_all(s, 1, ts, NULL);
	/*
	 * FILL stores aligned words. A bf16 element alone in its word at
	 * either end (a view starting or ending mid-word) is copied from a
	 * stored constant instead, so that its neighbour keeps its value.
	 */
	if (!ret && ((va | n) & 3)) {
		ret = eager_scalar_bits(s, pattern, &edge);
		if (!ret && (va & 3)) {
			EAGER_EMIT(ret, s, trn_cmd_copy(eager_cmdbuf(s), va,
							 edge, 2));
			va += 2;
			n -= 2;
		}
		if (!ret && (n & 3)) {
			EAGER_EMIT(ret, s, trn_cmd_copy(eager_cmdbuf(s),
							 va + n - 2, edge, 2));
			n -= 2;
		}
	}
	if (!ret && n)
		EAGER_EMIT(ret, s, trn_cmd_fill(eager_cmdbuf(s), va, pattern,
						 n));
	return op_end(s, ret);
}

int eager_copy(eager_tensor_t *out, const eager_tensor_t *x)
{
	const eager_tensor_t *ts[2] = { out, x };
	eager_stream_t *s;
	int ret = op_stream(&s, 2, ts);

	if (ret)
		return ret;
	if (out->dtype != x->dtype || out->numel != x->numel)
		return -EINVAL;
	if (out->va == x->va)
		return 0;
	if (same_storage(out, x))
		return -EINVAL;
	ret = use_all(s, 2, ts, NULL);
	if (!ret)
		EAGER_EMIT(ret, s, trn_cmd_copy(eager_cmdbuf(s), out->va,
						 x->va, x->nbytes));
	return op_end(s, ret);
}

int eager_cast(eager_tensor_t *out, const eager_tensor_t *x)
{
	const eager_tensor_t *ts[2] = { out, x };
	eager_stream_t *s;
	int ret = op_stream(&s, 2, ts);

	if (ret)
		return ret;
	if (out->numel != x->numel || same_storage(out, x))
		return -EINVAL;
	if (out->dtype == x->dtype)
		return eager_copy(out, x);
	ret = use_all(s, 2, ts, NULL);
	if (ret)
		return ret;
	if (x->dtype == EAGER_F32) {
		/* UNARY COPY stores bf16 rounded to nearest even. */
		ret = unary_flat(s, TRN_UNARY_COPY, TRN_ELEM_DST_BF16, x->numel,
				 out->va, 2, x->va);
	} else {
		/*
		 * bf16 -> f32 is exact: zero the f32s, then put each bf16
		 * into the upper half (bytes 2-3, little endian) of its f32.
		 */
		EAGER_EMIT(ret, s, trn_cmd_fill(eager_cmdbuf(s), out->va, 0,
						 out->nbytes));
		if (!ret)
			EAGER_EMIT(ret, s, trn_cmd_copy2d(eager_cmdbuf(s),
					out->va + 2, 4, x->va, 2, 2,
					(uint64_t)x->numel));
	}
	return op_end(s, ret);
}

int eager_sgd(eager_tensor_t *w, const eager_tensor_t *g, float lr)
{
	const eager_tensor_t *ts[2] = { w, g };
	eager_tensor_t *step = NULL;
	eager_stream_t *s;
	uint64_t k;
	int ret = op_stream(&s, 2, ts);

	if (ret)
		return ret;
	if (w->dtype != EAGER_F32 || g->dtype != EAGER_F32 ||
	    w->numel != g->numel || same_storage(w, g))
		return -EINVAL;
	ret = eager_tensor_new(w->device, EAGER_F32, w->ndim, w->shape, &step);
	if (ret)
		return ret;
	ret = use_all(s, 2, ts, step);
	if (!ret)
		ret = eager_scalar(s, lr, &k);
	/* step = g * lr; w = w - step (two roundings, as documented). */
	if (!ret)
		ret = binary_flat(s, TRN_BINARY_MUL, 0, g->numel, step->va, 4,
				  g->va, k, true);
	if (!ret)
		ret = binary_flat(s, TRN_BINARY_SUB, 0, w->numel, w->va, 4,
				  w->va, step->va, false);
	ret = op_end(s, ret);
	eager_free(step);
	return ret;
}
