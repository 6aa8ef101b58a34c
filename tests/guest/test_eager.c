// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * The eager runtime of examples/eager on simulated device 0 (trn:0):
 * every operation against the CPU reference (eager_ref.h: each value
 * within its rigorous error bound; the IEEE-exact ones bit for bit), the
 * caching allocator (reuse, stream safety, empty_cache, release and retry
 * on exhaustion), events (device timing, cross-stream waits), the flush
 * policy, and the MLP demo itself (its model in-process, and the binary).
 */
#include <libgen.h>
#include <math.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "trn_test.h"
#include "eager.h"
#include "eager_mlp.h"
#include "eager_ref.h"

#define TRN0	EAGER_DEVICE_TRN(0)

static uint64_t rnd64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rnd_fill(uint64_t *s, float *p, int64_t n, float lo, float hi)
{
	int64_t i;

	for (i = 0; i < n; i++)
		p[i] = lo + (hi - lo) * (float)((double)(rnd64(s) >> 40) *
						 0x1p-24);
}

/* A trn:0 f32 tensor of @rows x @cols with random values; host copy too. */
static eager_tensor_t *rand_tensor(uint64_t *s, int64_t rows, int64_t cols,
				   float lo, float hi, float **host)
{
	const int64_t shape[2] = { rows, cols };
	eager_tensor_t *t = NULL;
	float *h = malloc(sizeof(float) * rows * cols);

	if (!h)
		return NULL;
	rnd_fill(s, h, rows * cols, lo, hi);
	if (eager_from_host(TRN0, EAGER_F32, 2, shape, h, &t))
		t = NULL;
	*host = h;
	return t;
}

static eager_tensor_t *empty2(int64_t rows, int64_t cols, enum eager_dtype dt)
{
	const int64_t shape[2] = { rows, cols };
	eager_tensor_t *t = NULL;

	return eager_empty(TRN0, dt, 2, shape, &t) ? NULL : t;
}

/* Values of @t outside the reference's bounds (-1 if it cannot read). */
static int64_t bad_values(const eager_tensor_t *t, const struct eref *ref)
{
	struct eref_check ck;
	float *got = malloc(sizeof(float) * t->numel);
	int64_t bad = -1;

	eref_check_init(&ck);
	if (got && !eager_read_f32(t, got)) {
		eref_compare(ref, got, &ck);
		bad = ck.bad;
	}
	free(got);
	return bad;
}

FIXTURE(rt)
{
	uint64_t seed;
	bool ready;
};

FIXTURE_SETUP(rt)
{
	size_t n = 0;

	self->ready = false;
	if (!sim_available())
		SKIP(return, "trn_sim is not loaded");
	ASSERT_EQ(0, eager_device_count(&n));
	ASSERT_LE(1, n);
	self->seed = 0x5eed0000ull + (uint64_t)strlen(_metadata->name);
	self->ready = true;
}

FIXTURE_TEARDOWN(rt)
{
	if (self->ready)
		eager_shutdown();
}

/* ---- operations ---- */

TEST_F(rt, elementwise)
{
	const int64_t R = 37, C = 301;
	float *ha, *hb, *hrow, *hcol, *hs;
	eager_tensor_t *a = rand_tensor(&self->seed, R, C, -3, 3, &ha);
	eager_tensor_t *b = rand_tensor(&self->seed, R, C, 0.5f, 2, &hb);
	eager_tensor_t *row = rand_tensor(&self->seed, 1, C, 0.25f, 1, &hrow);
	eager_tensor_t *col = rand_tensor(&self->seed, R, 1, 0.5f, 1, &hcol);
	eager_tensor_t *sc = rand_tensor(&self->seed, 1, 1, 1, 2, &hs);
	eager_tensor_t *out = empty2(R, C, EAGER_F32);
	struct eref ra, rb, rrow, rcol, rs, ro;
	const eager_tensor_t *bs[4] = { b, row, col, sc };
	struct eref *rbs[4] = { &rb, &rrow, &rcol, &rs };
	unsigned int i, op;

	ASSERT_TRUE(a && b && row && col && sc && out);
	ASSERT_EQ(0, eref_from_f32(&ra, R, C, ha));
	ASSERT_EQ(0, eref_from_f32(&rb, R, C, hb));
	ASSERT_EQ(0, eref_from_f32(&rrow, 1, C, hrow));
	ASSERT_EQ(0, eref_from_f32(&rcol, R, 1, hcol));
	ASSERT_EQ(0, eref_from_f32(&rs, 1, 1, hs));
	ASSERT_EQ(0, eref_init(&ro, R, C));
	/* Every binary op against every broadcast form of b. */
	for (op = 0; op < 4; op++)
		for (i = 0; i < 4; i++) {
			int (*fn[4])(eager_tensor_t *, const eager_tensor_t *,
				     const eager_tensor_t *) = {
				eager_add, eager_sub, eager_mul, eager_div };

			ASSERT_EQ(0, fn[op](out, a, bs[i]));
			eref_binary(&ro, &ra, rbs[i], (enum eref_op)op);
			EXPECT_EQ(0, bad_values(out, &ro)) {
				TH_LOG("op %u, b form %u", op, i);
			}
		}
	/* Exact operations are exact: a + b bit for bit. */
	{
		float *got = malloc(sizeof(float) * R * C);
		int64_t k;

		ASSERT_EQ(0, eager_add(out, a, b));
		ASSERT_EQ(0, eager_read_f32(out, got));
		for (k = 0; k < R * C; k++)
			if (got[k] != ha[k] + hb[k])
				break;
		EXPECT_EQ(R * C, k);
		free(got);
	}
	ASSERT_EQ(0, eager_scale(out, a, 0.37f));
	eref_scale(&ro, &ra, 0.37f);
	EXPECT_EQ(0, bad_values(out, &ro));
	ASSERT_EQ(0, eager_relu(out, a));
	eref_relu(&ro, &ra);
	EXPECT_EQ(0, bad_values(out, &ro));
	ASSERT_EQ(0, eager_gelu(out, a));
	eref_gelu(&ro, &ra);
	EXPECT_EQ(0, bad_values(out, &ro));
	ASSERT_EQ(0, eager_exp(out, a));
	eref_exp(&ro, &ra);
	EXPECT_EQ(0, bad_values(out, &ro));
	/* In place. */
	ASSERT_EQ(0, eager_copy(out, a));
	ASSERT_EQ(0, eager_relu(out, out));
	eref_relu(&ro, &ra);
	EXPECT_EQ(0, bad_values(out, &ro));
	/* Shapes that do not fit. */
	EXPECT_EQ(-EINVAL, eager_add(out, a, empty2(2, 3, EAGER_F32)));
	eref_free(&ra);
	eref_free(&rb);
	eref_free(&rrow);
	eref_free(&rcol);
	eref_free(&rs);
	eref_free(&ro);
	free(ha);
	free(hb);
	free(hrow);
	free(hcol);
	free(hs);
}

TEST_F(rt, matmul)
{
	const int64_t M = 19, K = 70, N = 33;
	float *ha, *hat, *hb, *hbt, *hc;
	eager_tensor_t *a = rand_tensor(&self->seed, M, K, -1, 1, &ha);
	eager_tensor_t *at = rand_tensor(&self->seed, K, M, -1, 1, &hat);
	eager_tensor_t *b = rand_tensor(&self->seed, K, N, -1, 1, &hb);
	eager_tensor_t *bt = rand_tensor(&self->seed, N, K, -1, 1, &hbt);
	eager_tensor_t *c = rand_tensor(&self->seed, M, N, -1, 1, &hc);
	eager_tensor_t *ab = empty2(M, K, EAGER_BF16);
	eager_tensor_t *bb = empty2(K, N, EAGER_BF16);
	struct eref ra, rat, rb, rbt, rc;
	unsigned int f;

	ASSERT_TRUE(a && at && b && bt && c && ab && bb);
	ASSERT_EQ(0, eref_from_f32(&ra, M, K, ha));
	ASSERT_EQ(0, eref_from_f32(&rat, K, M, hat));
	ASSERT_EQ(0, eref_from_f32(&rb, K, N, hb));
	ASSERT_EQ(0, eref_from_f32(&rbt, N, K, hbt));
	ASSERT_EQ(0, eref_init(&rc, M, N));
	TH_LOG("transpose flags: %d", eager_device_has_transpose(TRN0));
	for (f = 0; f < 4; f++) {
		uint32_t flags = (f & 1 ? EAGER_TRANS_A : 0) |
				 (f & 2 ? EAGER_TRANS_B : 0);

		ASSERT_EQ(0, eager_matmul(c, f & 1 ? at : a, f & 2 ? bt : b,
					  flags));
		eref_matmul(&rc, f & 1 ? &rat : &ra, f & 2 ? &rbt : &rb,
			    f & 1, f & 2, false);
		EXPECT_EQ(0, bad_values(c, &rc)) {
			TH_LOG("flags %#x", flags);
		}
	}
	/* Accumulate onto the last result. */
	ASSERT_EQ(0, eager_matmul(c, a, b, EAGER_ACCUMULATE));
	eref_matmul(&rc, &ra, &rb, false, false, true);
	EXPECT_EQ(0, bad_values(c, &rc));
	/* bf16 operands (device casts, modelled as bf16 roundings). */
	ASSERT_EQ(0, eager_cast(ab, a));
	ASSERT_EQ(0, eager_cast(bb, b));
	ASSERT_EQ(0, eager_matmul(c, ab, bb, 0));
	eref_round_bf16(&ra);
	eref_round_bf16(&rb);
	eref_matmul(&rc, &ra, &rb, false, false, false);
	EXPECT_EQ(0, bad_values(c, &rc));
	/* Mismatched shapes, mixed dtypes, out aliasing an input. */
	EXPECT_EQ(-EINVAL, eager_matmul(c, a, a, 0));
	EXPECT_EQ(-EINVAL, eager_matmul(c, ab, b, 0));
	EXPECT_EQ(-EINVAL, eager_matmul(a, a, b, 0));
	eref_free(&ra);
	eref_free(&rat);
	eref_free(&rb);
	eref_free(&rbt);
	eref_free(&rc);
	free(ha);
	free(hat);
	free(hb);
	free(hbt);
	free(hc);
}

/* Without MATMUL's transpose flags: the 2-D copy path gives the same. */
TEST_F(rt, matmul_transpose_by_copies)
{
	const int64_t M = 9, K = 40, N = 12;
	float *hat, *hbt;
	eager_tensor_t *at, *bt, *c;
	struct eref rat, rbt, rc;

	setenv("EAGER_NO_TRANSPOSE", "1", 1);
	ASSERT_EQ(0, eager_device_has_transpose(TRN0));
	at = rand_tensor(&self->seed, K, M, -1, 1, &hat);
	bt = rand_tensor(&self->seed, N, K, -1, 1, &hbt);
	c = empty2(M, N, EAGER_F32);
	ASSERT_TRUE(at && bt && c);
	ASSERT_EQ(0, eref_from_f32(&rat, K, M, hat));
	ASSERT_EQ(0, eref_from_f32(&rbt, N, K, hbt));
	ASSERT_EQ(0, eref_init(&rc, M, N));
	ASSERT_EQ(0, eager_matmul(c, at, bt, EAGER_TRANS_A | EAGER_TRANS_B));
	eref_matmul(&rc, &rat, &rbt, true, true, false);
	EXPECT_EQ(0, bad_values(c, &rc));
	eref_free(&rat);
	eref_free(&rbt);
	eref_free(&rc);
	free(hat);
	free(hbt);
}

TEST_F(rt, reductions_softmax_backward_sgd)
{
	const int64_t R = 23, C = 57;
	float *hx, *hg, *hw;
	eager_tensor_t *x = rand_tensor(&self->seed, R, C, -4, 4, &hx);
	eager_tensor_t *g = rand_tensor(&self->seed, R, C, -1, 1, &hg);
	eager_tensor_t *w = rand_tensor(&self->seed, R, C, -1, 1, &hw);
	eager_tensor_t *out = empty2(R, C, EAGER_F32);
	eager_tensor_t *rows = empty2(R, 1, EAGER_F32);
	eager_tensor_t *cols = empty2(1, C, EAGER_F32);
	struct eref rx, rg, rw, ro, rr, rcl;

	ASSERT_TRUE(x && g && w && out && rows && cols);
	ASSERT_EQ(0, eref_from_f32(&rx, R, C, hx));
	ASSERT_EQ(0, eref_from_f32(&rg, R, C, hg));
	ASSERT_EQ(0, eref_from_f32(&rw, R, C, hw));
	ASSERT_EQ(0, eref_init(&ro, R, C));
	ASSERT_EQ(0, eref_init(&rr, R, 1));
	ASSERT_EQ(0, eref_init(&rcl, 1, C));

	ASSERT_EQ(0, eager_sum(rows, x, -1));
	eref_sum(&rr, &rx, -1);
	EXPECT_EQ(0, bad_values(rows, &rr));
	ASSERT_EQ(0, eager_sum(cols, x, 0));
	eref_sum(&rcl, &rx, 0);
	EXPECT_EQ(0, bad_values(cols, &rcl));

	/* A missing tensor is refused, not dereferenced. */
	EXPECT_EQ(-EINVAL, eager_sum(rows, NULL, -1));
	EXPECT_EQ(-EINVAL, eager_sum(NULL, x, -1));
	EXPECT_EQ(-EINVAL, eager_softmax(out, NULL));
	EXPECT_EQ(-EINVAL, eager_softmax(NULL, x));

	ASSERT_EQ(0, eager_softmax(out, x));
	ASSERT_EQ(0, eref_softmax(&ro, &rx));
	EXPECT_EQ(0, bad_values(out, &ro));

	ASSERT_EQ(0, eager_relu_backward(out, g, x));
	eref_relu_backward(&ro, &rg, &rx);
	EXPECT_EQ(0, bad_values(out, &ro));
	/* out == grad: the mask goes through a temporary. */
	ASSERT_EQ(0, eager_copy(out, g));
	ASSERT_EQ(0, eager_relu_backward(out, out, x));
	EXPECT_EQ(0, bad_values(out, &ro));

	ASSERT_EQ(0, eager_sgd(w, g, 0.125f));
	eref_sgd(&rw, &rg, 0.125f);
	EXPECT_EQ(0, bad_values(w, &rw));

	eref_free(&rx);
	eref_free(&rg);
	eref_free(&rw);
	eref_free(&ro);
	eref_free(&rr);
	eref_free(&rcl);
	free(hx);
	free(hg);
	free(hw);
}

/*
 * Safe softmax: a row of only -inf gives +0s where softmax gives NaN; every
 * other row (also with some -inf, or a NaN) is softmax's, bit for bit.
 */
TEST_F(rt, safe_softmax)
{
	const int64_t R = 9, C = 33, shape[2] = { R, C };
	float *hx, *a = malloc(sizeof(float) * R * C),
		   *b = malloc(sizeof(float) * R * C);
	eager_tensor_t *x0 = rand_tensor(&self->seed, R, C, -30, 30, &hx);
	eager_tensor_t *x = NULL;
	eager_tensor_t *out = empty2(R, C, EAGER_F32);
	eager_tensor_t *ref = empty2(R, C, EAGER_F32);
	int64_t c, r;

	ASSERT_TRUE(a && b && x0 && out && ref);
	for (c = 0; c < C; c++) {
		hx[2 * C + c] = -INFINITY;
		hx[7 * C + c] = -INFINITY;
	}
	for (c = 0; c < C; c += 2)
		hx[4 * C + c] = -INFINITY;
	hx[5 * C + 3] = NAN;
	ASSERT_EQ(0, eager_from_host(TRN0, EAGER_F32, 2, shape, hx, &x));

	EXPECT_EQ(-EINVAL, eager_safe_softmax(out, NULL));
	EXPECT_EQ(-EINVAL, eager_safe_softmax(NULL, x));
	ASSERT_EQ(0, eager_safe_softmax(out, x));
	ASSERT_EQ(0, eager_softmax(ref, x));
	ASSERT_EQ(0, eager_read_f32(out, a));
	ASSERT_EQ(0, eager_read_f32(ref, b));
	for (r = 0; r < R; r++)
		for (c = 0; c < C; c++) {
			float v = a[r * C + c], w = b[r * C + c];

			if (r == 2 || r == 7) {
				EXPECT_TRUE(v == 0 && !signbit(v));
				EXPECT_TRUE(isnan(w));
			} else if (r == 5) {
				EXPECT_TRUE(isnan(v) && isnan(w));
			} else {
				EXPECT_EQ(0, memcmp(&v, &w, sizeof(v)));
			}
		}
	/* In place gives the same. */
	ASSERT_EQ(0, eager_safe_softmax(x, x));
	ASSERT_EQ(0, eager_read_f32(x, b));
	EXPECT_EQ(0, memcmp(a, b, sizeof(float) * R * C));

	eager_free(x0);
	eager_free(x);
	eager_free(out);
	eager_free(ref);
	free(hx);
	free(a);
	free(b);
}

/* How many of @n values are further than @rel relative + @abs from @want. */
static int64_t far_values(const float *got, const double *want, int64_t n,
			  double rel, double abs)
{
	int64_t i, bad = 0;

	for (i = 0; i < n; i++)
		if (!(fabs(got[i] - want[i]) <= rel * fabs(want[i]) + abs))
			bad++;
	return bad;
}

/*
 * LOG, ERF and the erf GELU (uAPI 1.5), forward and backward, and
 * log_softmax, against double-precision references: the ISA rounds those
 * unary ops correctly, so they are within an ulp.
 */
TEST_F(rt, log_erf_gelu_log_softmax)
{
	enum { R = 19, C = 41, N = R * C };
	float *hx, *hp, *hg, got[N];
	double want[N], mx, sum;
	eager_tensor_t *x = rand_tensor(&self->seed, R, C, -6, 6, &hx);
	eager_tensor_t *p = rand_tensor(&self->seed, R, C, 1e-3f, 50, &hp);
	eager_tensor_t *g = rand_tensor(&self->seed, R, C, -1, 1, &hg);
	eager_tensor_t *out = empty2(R, C, EAGER_F32);
	int64_t i, r, c;
	int ret;

	ASSERT_TRUE(x && p && g && out);
	ret = eager_log(out, p);
	if (ret == -EOPNOTSUPP)
		SKIP(return, "the device has no LOG (TRN_CAP_LOG_ERF clear)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, eager_read_f32(out, got));
	for (i = 0; i < N; i++)
		want[i] = log(hp[i]);
	EXPECT_EQ(0, far_values(got, want, N, 0x1p-23, 0));

	ASSERT_EQ(0, eager_erf(out, x));
	ASSERT_EQ(0, eager_read_f32(out, got));
	for (i = 0; i < N; i++)
		want[i] = erf(hx[i]);
	EXPECT_EQ(0, far_values(got, want, N, 0x1p-23, 0));

	ASSERT_EQ(0, eager_gelu_erf(out, x));
	ASSERT_EQ(0, eager_read_f32(out, got));
	for (i = 0; i < N; i++)
		want[i] = hx[i] * 0.5 * erfc(-hx[i] * M_SQRT1_2);
	EXPECT_EQ(0, far_values(got, want, N, 0x1p-23, 1e-37));

	/* The derivative is one rounding, the product with grad another. */
	ASSERT_EQ(0, eager_gelu_erf_backward(out, g, x));
	ASSERT_EQ(0, eager_read_f32(out, got));
	for (i = 0; i < N; i++)
		want[i] = hg[i] * (0.5 * erfc(-hx[i] * M_SQRT1_2) + hx[i] *
				   exp(-0.5 * hx[i] * hx[i]) / sqrt(2 * M_PI));
	EXPECT_EQ(0, far_values(got, want, N, 0x1p-22, 1e-37));
	/* out == grad: the derivative goes through a temporary. */
	ASSERT_EQ(0, eager_copy(out, g));
	ASSERT_EQ(0, eager_gelu_erf_backward(out, out, x));
	ASSERT_EQ(0, eager_read_f32(out, got));
	EXPECT_EQ(0, far_values(got, want, N, 0x1p-22, 1e-37));

	/* log_softmax in place, rows of values up to 6 apart. */
	ASSERT_EQ(0, eager_copy(out, x));
	ASSERT_EQ(0, eager_log_softmax(out, out));
	ASSERT_EQ(0, eager_read_f32(out, got));
	for (r = 0; r < R; r++) {
		mx = hx[r * C];
		for (c = 1; c < C; c++)
			mx = fmax(mx, hx[r * C + c]);
		sum = 0;
		for (c = 0; c < C; c++)
			sum += exp(hx[r * C + c] - mx);
		for (c = 0; c < C; c++)
			want[r * C + c] = hx[r * C + c] - mx - log(sum);
	}
	EXPECT_EQ(0, far_values(got, want, N, 1e-6, 1e-5));
	EXPECT_EQ(-EINVAL, eager_log_softmax(out, NULL));
	EXPECT_EQ(-EINVAL, eager_log(NULL, x));

	free(hx);
	free(hp);
	free(hg);
}

TEST_F(rt, data_movement)
{
	const int64_t shape3[3] = { 3, 5, 7 }, shape4[4] = { 2, 3, 4, 5 };
	float *hx, got[4096];
	uint16_t hb[4096], gb[4096];
	eager_tensor_t *x = rand_tensor(&self->seed, 13, 29, -100, 100, &hx);
	eager_tensor_t *xt = empty2(29, 13, EAGER_F32);
	eager_tensor_t *b = empty2(13, 29, EAGER_BF16);
	eager_tensor_t *bt = empty2(29, 13, EAGER_BF16);
	eager_tensor_t *back = empty2(13, 29, EAGER_F32);
	eager_tensor_t *t3 = NULL, *t4 = NULL, *cpu = NULL, *dev = NULL;
	int64_t i, j, n = 13 * 29;

	ASSERT_TRUE(x && xt && b && bt && back);
	/* fill and zeros, f32 and bf16. */
	ASSERT_EQ(0, eager_fill(x, 2.5f));
	ASSERT_EQ(0, eager_read_f32(x, got));
	for (i = 0; i < n; i++)
		ASSERT_EQ(2.5f, got[i]);
	ASSERT_EQ(0, eager_fill(b, 1.0f / 3));
	ASSERT_EQ(0, eager_read_f32(b, got));
	EXPECT_EQ(eager_bf16_to_f32(eager_f32_to_bf16(1.0f / 3)), got[n - 1]);
	ASSERT_EQ(0, eager_zeros(TRN0, EAGER_F32, 3, shape3, &t3));
	ASSERT_EQ(0, eager_read_f32(t3, got));
	for (i = 0; i < 105; i++)
		ASSERT_EQ(0.0f, got[i]);
	EXPECT_EQ(35, t3->strides[0]);
	EXPECT_EQ(7, t3->strides[1]);
	EXPECT_EQ(1, t3->strides[2]);
	EXPECT_EQ(15, eager_rows(t3));
	/* Upload again, then cast both ways: RNE like the host, exact back. */
	eager_free(x);
	x = rand_tensor(&self->seed, 13, 29, -100, 100, &hx);
	ASSERT_EQ(0, eager_cast(b, x));
	ASSERT_EQ(0, eager_read(b, gb));
	for (i = 0; i < n; i++) {
		hb[i] = eager_f32_to_bf16(hx[i]);
		ASSERT_EQ(hb[i], gb[i]);
	}
	ASSERT_EQ(0, eager_cast(back, b));
	ASSERT_EQ(0, eager_read_f32(back, got));
	for (i = 0; i < n; i++)
		ASSERT_EQ(eager_bf16_to_f32(hb[i]), got[i]);
	/* Transposes: f32 (rows < cols) and bf16 (rows > cols after). */
	ASSERT_EQ(0, eager_transpose(xt, x));
	ASSERT_EQ(0, eager_read_f32(xt, got));
	for (i = 0; i < 13; i++)
		for (j = 0; j < 29; j++)
			ASSERT_EQ(hx[i * 29 + j], got[j * 13 + i]);
	ASSERT_EQ(0, eager_transpose(bt, b));
	ASSERT_EQ(0, eager_transpose(b, bt));
	ASSERT_EQ(0, eager_read(b, gb));
	EXPECT_EQ(0, memcmp(hb, gb, n * 2));
	/* to(): cpu -> trn -> trn -> cpu of a 4-D tensor. */
	for (i = 0; i < 120; i++)
		got[i] = (float)i * 0.5f;
	ASSERT_EQ(0, eager_from_host(EAGER_DEVICE_CPU, EAGER_F32, 4, shape4,
				     got, &cpu));
	ASSERT_EQ(0, eager_to(cpu, TRN0, &t4));
	ASSERT_EQ(0, eager_to(t4, TRN0, &dev));
	eager_free(cpu);
	ASSERT_EQ(0, eager_to(dev, EAGER_DEVICE_CPU, &cpu));
	EXPECT_EQ(EAGER_CPU, cpu->device.type);
	EXPECT_EQ(4, cpu->ndim);
	EXPECT_EQ(0, memcmp(cpu->host, got, 120 * 4));
	eager_free(t3);
	eager_free(t4);
	eager_free(dev);
	eager_free(cpu);
	free(hx);
}

/*
 * eager_raw_copy_strided(), the framework glue's layout copy: a 3-D
 * permute, a broadcast source, a strided destination, elements of 2 and 8
 * bytes; every refusal leaves the destination as it was.
 */
TEST_F(rt, raw_copy_strided)
{
	const int64_t shape[3] = { 5, 4, 3 };		/* x.permute(2, 1, 0) */
	const int64_t dense[3] = { 12, 3, 1 }, perm[3] = { 1, 5, 20 };
	const int64_t row[2] = { 3, 4 }, bcast[2] = { 0, 1 }, d2[2] = { 4, 1 };
	const int64_t col[2] = { 4, 3 }, cstr[2] = { 1, 4 }, zero[2] = { 0, 1 };
	const int64_t neg[2] = { -4, 1 }, huge[1] = { 1LL << 40 };
	struct eager_block *a = NULL, *b = NULL;
	float h[60], got[60], keep[60];
	int64_t i, j, k;
	uint64_t w[12], gw[12];
	uint16_t hu[12], gu[12];

	/* Blocks of exactly the smallest class: the bounds below are theirs. */
	ASSERT_EQ(0, eager_raw_alloc(TRN0, EAGER_MIN_BLOCK, &a));
	ASSERT_EQ(0, eager_raw_alloc(TRN0, EAGER_MIN_BLOCK, &b));
	for (i = 0; i < 60; i++)
		h[i] = (float)i + 0.25f;
	ASSERT_EQ(0, eager_raw_write(a, 0, h, sizeof(h)));
	/* out[k][j][i] = x[i][j][k] of x [3][4][5]: 12 commands of 5 rows. */
	ASSERT_EQ(0, eager_raw_copy_strided(b, 0, dense, a, 0, perm, 3, shape,
					    4, 12));
	ASSERT_EQ(0, eager_raw_read(b, 0, got, sizeof(got)));
	for (i = 0; i < 3; i++)
		for (j = 0; j < 4; j++)
			for (k = 0; k < 5; k++)
				ASSERT_EQ(h[i * 20 + j * 5 + k],
					  got[k * 12 + j * 3 + i]);
	/* The same with one command fewer than it takes: -E2BIG. */
	EXPECT_EQ(-E2BIG, eager_raw_copy_strided(b, 0, dense, a, 0, perm, 3,
						 shape, 4, 11));
	/* One row of a broadcast to 3 x 4 (source stride 0), at an offset. */
	ASSERT_EQ(0, eager_raw_copy_strided(b, 16, d2, a, 8, bcast, 2, row, 4,
					    1));
	ASSERT_EQ(0, eager_raw_read(b, 0, got, sizeof(got)));
	for (i = 0; i < 3; i++)
		for (j = 0; j < 4; j++)
			ASSERT_EQ(h[2 + j], got[4 + i * 4 + j]);
	/* Into a strided destination (a column-major 4 x 3), bf16-sized. */
	ASSERT_EQ(0, eager_raw_copy_strided(b, 0, cstr, a, 0,
					    (int64_t[2]){ 3, 1 }, 2, col, 2,
					    12));
	ASSERT_EQ(0, eager_raw_read(b, 0, got, sizeof(got)));
	memcpy(hu, h, sizeof(hu));
	memcpy(gu, got, sizeof(gu));
	for (i = 0; i < 4; i++)
		for (j = 0; j < 3; j++)
			ASSERT_EQ(hu[i * 3 + j], gu[i + 4 * j]);
	/* 8-byte elements, transposed 3 x 4 -> 4 x 3. */
	for (i = 0; i < 12; i++)
		w[i] = 0x0102030405060708ull * (uint64_t)(i + 1);
	ASSERT_EQ(0, eager_raw_write(a, 0, w, sizeof(w)));
	ASSERT_EQ(0, eager_raw_copy_strided(b, 0, (int64_t[2]){ 3, 1 }, a, 0,
					    (int64_t[2]){ 1, 4 }, 2, col, 8,
					    4));
	ASSERT_EQ(0, eager_raw_read(b, 0, gw, sizeof(gw)));
	for (i = 0; i < 3; i++)
		for (j = 0; j < 4; j++)
			ASSERT_EQ(w[i * 4 + j], gw[j * 3 + i]);
	/* Refusals: nothing recorded, the destination as it was. */
	ASSERT_EQ(0, eager_raw_read(b, 0, keep, sizeof(keep)));
	EXPECT_EQ(-EINVAL, eager_raw_copy_strided(NULL, 0, d2, a, 0, d2, 2,
						  row, 4, 64));
	EXPECT_EQ(-EINVAL, eager_raw_copy_strided(b, 0, neg, a, 0, d2, 2, row,
						  4, 64));
	EXPECT_EQ(-EINVAL, eager_raw_copy_strided(b, 0, zero, a, 0, d2, 2, row,
						  4, 64));
	EXPECT_EQ(-EINVAL, eager_raw_copy_strided(b, 0, d2, a, 0, d2, 2, row,
						  0, 64));
	/* 3 x 4 floats take 48 bytes: one past the end of b, then of a. */
	EXPECT_EQ(-EINVAL, eager_raw_copy_strided(b, EAGER_MIN_BLOCK - 47, d2,
						  a, 0, d2, 2, row, 4, 64));
	EXPECT_EQ(-EINVAL, eager_raw_copy_strided(b, 0, d2, a,
						  EAGER_MIN_BLOCK - 47, d2, 2,
						  row, 4, 64));
	EXPECT_EQ(0, eager_raw_copy_strided(b, EAGER_MIN_BLOCK - 48, d2, a,
					    EAGER_MIN_BLOCK - 48, d2, 2, row,
					    4, 64));	/* just fits */
	EXPECT_EQ(-EINVAL, eager_raw_copy_strided(b, 0, d2, b, 4, d2, 2, row,
						  4, 64));	/* overlap */
	EXPECT_EQ(-EINVAL, eager_raw_copy_strided(b, 0, d2, a, 0,
						  (int64_t[1]){ 1 }, 1, huge,
						  4, 64));	/* far past */
	EXPECT_EQ(-EINVAL, eager_raw_copy_strided(b, 0, d2, a, 0, d2,
						  EAGER_COPY_MAX_DIMS + 1, row,
						  4, 64));
	/* 0 elements: nothing to do. */
	EXPECT_EQ(0, eager_raw_copy_strided(b, 0, d2, a, 0, d2, 2,
					    (int64_t[2]){ 0, 4 }, 4, 0));
	ASSERT_EQ(0, eager_raw_read(b, 0, got, sizeof(got)));
	EXPECT_EQ(0, memcmp(keep, got, sizeof(got)));
	/* bf16 fills of views that start or end mid-word: neighbours kept. */
	{
		static const int64_t at[][2] = { { 1, 3 }, { 4, 2 }, { 7, 1 },
						 { 9, 1 }, { 10, 5 } };
		uint16_t cur[16], dev[16], one = eager_f32_to_bf16(1.0f);
		eager_tensor_t v;

		for (i = 0; i < 16; i++)
			cur[i] = one;
		ASSERT_EQ(0, eager_raw_write(a, 0, cur, sizeof(cur)));
		for (k = 0; k < 5; k++) {
			float val = (float)k - 2.5f;

			ASSERT_EQ(0, eager_view(a, at[k][0] * 2, EAGER_BF16, 1,
						&at[k][1], &v));
			ASSERT_EQ(0, eager_fill(&v, val));
			for (j = 0; j < at[k][1]; j++)
				cur[at[k][0] + j] = eager_f32_to_bf16(val);
		}
		ASSERT_EQ(0, eager_raw_read(a, 0, dev, sizeof(dev)));
		for (i = 0; i < 16; i++)
			ASSERT_EQ(cur[i], dev[i]);
	}
	/* Disjoint parts of one block are not an overlap. */
	ASSERT_EQ(0, eager_raw_copy_strided(b, 120, d2, b, 0, d2, 2,
					    (int64_t[2]){ 2, 4 }, 4, 64));
	ASSERT_EQ(0, eager_raw_read(b, 0, got, sizeof(got)));
	EXPECT_EQ(0, memcmp(keep, got + 30, 8 * sizeof(float)));
	eager_raw_free(a);
	eager_raw_free(b);
}

/*
 * eager_raw_bytes_to_f32(): every byte value, over rows of 2^16 bytes and
 * a shorter last one, from an odd offset, nothing written around the
 * result; every refusal leaves the destination as it was.
 */
TEST_F(rt, raw_bytes_to_f32)
{
	const uint64_t count = 2 * 65536 + 1003, dsize = 4 * count + 16;
	struct eager_block *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	uint8_t *h = malloc(count + 3), small[16];
	float *got = malloc(dsize), keep[8], now[8];
	uint64_t caps, i, bad = 0;
	uint32_t sentinel;

	ASSERT_TRUE(h && got);
	ASSERT_EQ(0, eager_device_capabilities(TRN0, &caps));
	if (!(caps & TRN_CAP_SRC_U8))
		SKIP(return, "the device has no byte operands (TRN_CAP_SRC_U8 clear)");
	ASSERT_EQ(0, eager_raw_alloc(TRN0, count + 3, &a));
	ASSERT_EQ(0, eager_raw_alloc(TRN0, dsize, &b));
	for (i = 0; i < count + 3; i++)
		h[i] = (uint8_t)(i * 7 + i / 256);
	ASSERT_EQ(0, eager_raw_write(a, 0, h, count + 3));
	memset(got, 0xab, dsize);
	memcpy(&sentinel, got, 4);
	ASSERT_EQ(0, eager_raw_write(b, 0, got, dsize));
	ASSERT_EQ(0, eager_raw_bytes_to_f32(b, 8, a, 3, count));
	ASSERT_EQ(0, eager_raw_read(b, 0, got, dsize));
	for (i = 0; i < count; i++)
		if (got[2 + i] != (float)h[3 + i] && bad++ < 3)
			TH_LOG("byte %llu: %g, want %u", (unsigned long long)i,
			       got[2 + i], h[3 + i]);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, memcmp(&got[0], &sentinel, 4));
	EXPECT_EQ(0, memcmp(&got[1], &sentinel, 4));
	EXPECT_EQ(0, memcmp(&got[2 + count], &sentinel, 4));

	/* Refusals, on blocks of exactly the smallest class. */
	ASSERT_EQ(0, eager_raw_alloc(TRN0, EAGER_MIN_BLOCK, &c));
	ASSERT_EQ(0, eager_raw_alloc(TRN0, EAGER_MIN_BLOCK, &d));
	for (i = 0; i < 16; i++)
		small[i] = (uint8_t)(200 + i);
	for (i = 0; i < 8; i++)
		keep[i] = -1.0f - (float)i;
	ASSERT_EQ(0, eager_raw_write(c, 0, small, sizeof(small)));
	ASSERT_EQ(0, eager_raw_write(d, 0, keep, sizeof(keep)));
	EXPECT_EQ(-EINVAL, eager_raw_bytes_to_f32(NULL, 0, c, 0, 4));
	EXPECT_EQ(-EINVAL, eager_raw_bytes_to_f32(d, 0, NULL, 0, 4));
	EXPECT_EQ(-EINVAL, eager_raw_bytes_to_f32(d, 2, c, 0, 4));
	EXPECT_EQ(-EINVAL, eager_raw_bytes_to_f32(d, 0, c, EAGER_MIN_BLOCK - 3,
						  4));
	EXPECT_EQ(-EINVAL, eager_raw_bytes_to_f32(d, EAGER_MIN_BLOCK - 12, c,
						  0, 4));
	EXPECT_EQ(-EINVAL, eager_raw_bytes_to_f32(d, 0, c, 0, UINT64_MAX));
	EXPECT_EQ(-EINVAL, eager_raw_bytes_to_f32(d, 0, d, 12, 4));
	EXPECT_EQ(0, eager_raw_bytes_to_f32(d, 0, c, 0, 0));
	ASSERT_EQ(0, eager_raw_read(d, 0, now, sizeof(now)));
	EXPECT_EQ(0, memcmp(keep, now, sizeof(now)));
	/* The very ends of both blocks, and disjoint parts of one block. */
	EXPECT_EQ(0, eager_raw_bytes_to_f32(d, EAGER_MIN_BLOCK - 16, c,
					    EAGER_MIN_BLOCK - 4, 4));
	EXPECT_EQ(0, eager_raw_bytes_to_f32(d, 0, d, 16, 4));
	ASSERT_EQ(0, eager_raw_read(d, 0, now, sizeof(now)));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(now[i], (float)((const uint8_t *)&keep[4])[i]);
	eager_raw_free(a);
	eager_raw_free(b);
	eager_raw_free(c);
	eager_raw_free(d);
	free(h);
	free(got);
}

/* ---- the allocator ---- */

TEST_F(rt, allocator_reuse_and_release)
{
	struct eager_memory_stats m0, m1;
	eager_tensor_t *a, *b, *c;
	uint64_t va;

	ASSERT_NE(NULL, eager_current_stream(TRN0));
	ASSERT_EQ(0, eager_memory_stats(TRN0, &m0));
	a = empty2(100, 100, EAGER_F32);	/* 40000 B: class 64 KiB */
	ASSERT_NE(NULL, a);
	va = a->va;
	ASSERT_EQ(0, eager_memory_stats(TRN0, &m1));
	EXPECT_EQ(m0.allocated + 65536, m1.allocated);
	EXPECT_EQ(m0.requested + 40000, m1.requested);
	EXPECT_EQ(m0.cache_misses + 1, m1.cache_misses);
	EXPECT_LE(m1.allocated, m1.peak_allocated);
	eager_free(a);
	ASSERT_EQ(0, eager_memory_stats(TRN0, &m1));
	EXPECT_EQ(m0.allocated, m1.allocated);
	EXPECT_EQ(m0.reserved + 65536, m1.reserved);
	EXPECT_EQ(65536 + m0.cached, m1.cached);
	/* Same class on the same stream: the cached block comes back. */
	b = empty2(128, 128, EAGER_F32);	/* 64 KiB exactly */
	ASSERT_NE(NULL, b);
	EXPECT_EQ(va, b->va);
	ASSERT_EQ(0, eager_memory_stats(TRN0, &m1));
	EXPECT_EQ(m0.cache_hits + 1, m1.cache_hits);
	/* Another class: a new buffer. */
	c = empty2(1, 10, EAGER_F32);
	ASSERT_NE(NULL, c);
	EXPECT_NE(va, c->va);
	eager_free(b);
	eager_free(c);
	/* empty_cache gives every cached buffer back. */
	ASSERT_EQ(0, eager_empty_cache(TRN0));
	ASSERT_EQ(0, eager_memory_stats(TRN0, &m1));
	EXPECT_EQ(0, m1.blocks_cached);
	EXPECT_EQ(m1.allocated, m1.reserved);
	EXPECT_LE(2, m1.buffers_released);
	EXPECT_EQ(0, eager_memory_reset_peak(TRN0));
	ASSERT_EQ(0, eager_memory_stats(TRN0, &m1));
	EXPECT_EQ(m1.allocated, m1.peak_allocated);
}

/*
 * Exhaustion: fill device memory with blocks, free them (all cached),
 * then ask for a bigger class: the allocator must give cached buffers
 * back and retry instead of failing.
 */
TEST_F(rt, allocator_release_on_exhaustion)
{
	struct eager_memory_stats m;
	struct trn_device_info info;
	eager_tensor_t *t[16] = { NULL }, *big = NULL;
	trn_device_t *dev;
	int64_t shape[1];
	unsigned int i, n = 0;

	ASSERT_EQ(0, eager_device_handle(TRN0, &dev));
	ASSERT_EQ(0, trn_device_info(dev, &info));
	shape[0] = (int64_t)(info.hbm_size / 8 / 4);	/* f32 elements */
	for (i = 0; i < 16; i++) {
		if (eager_empty(TRN0, EAGER_F32, 1, shape, &t[i]))
			break;
		n++;
	}
	TH_LOG("%u blocks of %llu MiB before exhaustion", n,
	       (unsigned long long)(info.hbm_size / 8) >> 20);
	ASSERT_LE(4, n);
	ASSERT_GT(16, n);	/* it did run out */
	for (i = 0; i < n; i++)
		eager_free(t[i]);
	ASSERT_EQ(0, eager_memory_stats(TRN0, &m));
	EXPECT_EQ(n, m.blocks_cached);
	shape[0] = (int64_t)(info.hbm_size / 2 / 4);
	ASSERT_EQ(0, eager_empty(TRN0, EAGER_F32, 1, shape, &big));
	ASSERT_EQ(0, eager_memory_stats(TRN0, &m));
	EXPECT_LE(1, m.oom_retries);
	EXPECT_LE(4, m.buffers_released);
	ASSERT_EQ(0, eager_fill(big, 1.0f));
	ASSERT_EQ(0, eager_synchronize(TRN0));
	eager_free(big);
}

/*
 * A long job on the current stream: C[128][512] = A[128][512] @ B[512][512],
 * about half a second under emulation. Long enough for the host to record
 * a few ops meanwhile, and a tenth of the driver's 5 s job timeout so that
 * a loaded machine (once seen to stretch it fivefold) cannot time it out.
 */
static int long_job(eager_tensor_t **a, eager_tensor_t **b,
		    eager_tensor_t **c)
{
	*a = empty2(128, 512, EAGER_F32);
	*b = empty2(512, 512, EAGER_F32);
	*c = empty2(128, 512, EAGER_F32);
	if (!*a || !*b || !*c || eager_fill(*a, 0.5f) || eager_fill(*b, 0.25f))
		return -ENOMEM;
	return eager_matmul(*c, *a, *b, 0);
}

/*
 * A block freed while another stream's job still uses it is not handed
 * to a different stream until that job finished (record_stream
 * semantics); the stream that used it may have it back at once.
 */
TEST_F(rt, allocator_stream_safety)
{
	eager_stream_t *s1, *s2;
	eager_tensor_t *a, *b, *c, *d, *e;
	struct trn_fence f;
	uint64_t cva;

	ASSERT_EQ(0, eager_stream_create(TRN0, 0, &s1));
	ASSERT_EQ(0, eager_stream_create(TRN0, 1, &s2));
	ASSERT_EQ(0, eager_set_current_stream(TRN0, s1));
	ASSERT_EQ(0, long_job(&a, &b, &c));
	ASSERT_EQ(0, eager_stream_flush(s1));
	f = eager_stream_last_fence(s1);
	cva = c->va;
	eager_free(c);		/* the matmul still writes it */
	ASSERT_EQ(0, eager_set_current_stream(TRN0, s2));
	d = empty2(128, 512, EAGER_F32);
	ASSERT_NE(NULL, d);
	if (trn_fence_status(&f) != 1)
		TH_LOG("the long job finished early: ordering not observed");
	else
		EXPECT_NE(cva, d->va);
	/* On s1 itself the block is safe to reuse at once: stream order. */
	ASSERT_EQ(0, eager_set_current_stream(TRN0, s1));
	e = empty2(128, 512, EAGER_F32);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(cva, e->va);
	ASSERT_EQ(0, eager_stream_synchronize(s1));
	EXPECT_EQ(0, trn_fence_status(&f));
	eager_free(a);
	eager_free(b);
	eager_free(d);
	eager_free(e);
	eager_set_current_stream(TRN0, NULL);
	eager_stream_destroy(s1);
	eager_stream_destroy(s2);
}

/* ---- events and streams ---- */

TEST_F(rt, event_timing)
{
	eager_event_t *e[3];
	eager_tensor_t *x = empty2(64, 512, EAGER_F32);
	eager_tensor_t *w = empty2(512, 512, EAGER_F32);
	eager_tensor_t *y = empty2(64, 512, EAGER_F32);
	eager_stream_t *s = eager_current_stream(TRN0);
	uint64_t ts[3], dt01, dt12;
	int i;

	ASSERT_TRUE(x && w && y && s);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, eager_event_create(TRN0, EAGER_EVENT_TIMING, &e[i]));
	ASSERT_EQ(0, eager_fill(x, 1.0f));
	ASSERT_EQ(0, eager_fill(w, 0.5f));
	ASSERT_EQ(0, eager_event_record(e[0], s));
	ASSERT_EQ(0, eager_matmul(y, x, w, 0));
	ASSERT_EQ(0, eager_event_record(e[1], s));
	ASSERT_EQ(0, eager_matmul(y, x, w, 0));
	ASSERT_EQ(0, eager_matmul(y, x, w, 0));
	ASSERT_EQ(0, eager_event_record(e[2], s));
	ASSERT_EQ(0, eager_event_synchronize(e[2]));
	EXPECT_EQ(0, eager_event_query(e[2]));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, eager_event_timestamp(e[i], &ts[i]));
	EXPECT_LT(ts[0], ts[1]);
	EXPECT_LT(ts[1], ts[2]);
	ASSERT_EQ(0, eager_event_elapsed_ns(e[0], e[1], &dt01));
	ASSERT_EQ(0, eager_event_elapsed_ns(e[1], e[2], &dt12));
	EXPECT_LT(0, dt01);
	EXPECT_LT(0, dt12);
	TH_LOG("one matmul %llu ns, two %llu ns (device clock)",
	       (unsigned long long)dt01, (unsigned long long)dt12);
	EXPECT_EQ(-ERANGE, eager_event_elapsed_ns(e[2], e[0], &dt01));
	/* A plain event has no timestamp. */
	{
		eager_event_t *p;

		ASSERT_EQ(0, eager_event_create(TRN0, 0, &p));
		EXPECT_EQ(0, eager_event_query(p));	/* never recorded */
		ASSERT_EQ(0, eager_event_record(p, s));
		EXPECT_EQ(-EINVAL, eager_event_elapsed_ns(p, e[2], &dt01));
		eager_event_destroy(p);
	}
	for (i = 0; i < 3; i++)
		eager_event_destroy(e[i]);
	eager_free(x);
	eager_free(w);
	eager_free(y);
}

/*
 * Stream 2 waits for an event of stream 1 behind a long matmul, then
 * copies its result: the copy must see the finished result, and stream
 * 2's work must start after stream 1's event (device timestamps), while
 * the host never waited.
 */
TEST_F(rt, cross_stream_wait)
{
	eager_stream_t *s1, *s2;
	eager_event_t *done, *after;
	eager_tensor_t *a, *b, *c, *copy;
	uint64_t t_done, t_after;
	float *got;
	int q;

	ASSERT_EQ(0, eager_stream_create(TRN0, 0, &s1));
	ASSERT_EQ(0, eager_stream_create(TRN0, 1, &s2));
	ASSERT_EQ(0, eager_event_create(TRN0, EAGER_EVENT_TIMING, &done));
	ASSERT_EQ(0, eager_event_create(TRN0, EAGER_EVENT_TIMING, &after));
	ASSERT_EQ(0, eager_set_current_stream(TRN0, s1));
	ASSERT_EQ(0, long_job(&a, &b, &c));
	ASSERT_EQ(0, eager_event_record(done, s1));
	ASSERT_EQ(0, eager_set_current_stream(TRN0, s2));
	copy = empty2(128, 512, EAGER_F32);
	ASSERT_NE(NULL, copy);
	ASSERT_EQ(0, eager_stream_wait_event(s2, done));
	ASSERT_EQ(0, eager_copy(copy, c));
	ASSERT_EQ(0, eager_event_record(after, s2));
	q = eager_event_query(after);
	TH_LOG("query right after recording: %d (1: pending)", q);
	EXPECT_LE(0, q);
	ASSERT_EQ(0, eager_stream_synchronize(s2));
	EXPECT_EQ(0, eager_event_query(done));	/* implied by the wait */
	ASSERT_EQ(0, eager_event_timestamp(done, &t_done));
	ASSERT_EQ(0, eager_event_timestamp(after, &t_after));
	EXPECT_LT(t_done, t_after);
	/* 512 * 0.5 * 0.25 = 64, exactly, everywhere. */
	got = malloc(copy->nbytes);
	ASSERT_NE(NULL, got);
	ASSERT_EQ(0, eager_read_f32(copy, got));
	EXPECT_EQ(64.0f, got[0]);
	EXPECT_EQ(64.0f, got[copy->numel - 1]);
	free(got);
	eager_set_current_stream(TRN0, NULL);
	eager_free(a);
	eager_free(b);
	eager_free(c);
	eager_free(copy);
	eager_event_destroy(done);
	eager_event_destroy(after);
	eager_stream_destroy(s1);
	eager_stream_destroy(s2);
}

/*
 * The flush policy: an op on an idle queue is submitted at once (and
 * completes with no synchronisation); ops recorded while a job runs are
 * batched, and go out with the next op once the queue ran dry.
 */
TEST_F(rt, flush_policy)
{
	struct eager_stream_stats st0, st1;
	eager_tensor_t *a, *b, *c, *x;
	eager_stream_t *s;
	struct trn_fence f;
	int i;

	ASSERT_EQ(0, eager_stream_create(TRN0, 2, &s));
	ASSERT_EQ(0, eager_set_current_stream(TRN0, s));
	x = empty2(4, 4, EAGER_F32);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(0, eager_stream_synchronize(s));
	ASSERT_EQ(0, eager_stream_stats(s, &st0));
	ASSERT_EQ(0, eager_fill(x, 3.0f));
	ASSERT_EQ(0, eager_stream_stats(s, &st1));
	EXPECT_EQ(st0.jobs + 1, st1.jobs);
	EXPECT_EQ(st0.flush_dry + 1, st1.flush_dry);
	EXPECT_EQ(0, st1.pending_commands);
	f = eager_stream_last_fence(s);
	EXPECT_EQ(0, trn_fence_wait(&f, trn_now_ns() + 30000000000LL));

	/* Batching behind a running job. */
	ASSERT_EQ(0, long_job(&a, &b, &c));
	f = eager_stream_last_fence(s);
	ASSERT_EQ(0, eager_stream_stats(s, &st0));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, eager_scale(x, x, 2.0f));
	ASSERT_EQ(0, eager_stream_stats(s, &st1));
	if (trn_fence_status(&f) == 1) {
		EXPECT_EQ(st0.jobs, st1.jobs);
		EXPECT_LE(5, st1.pending_commands);
	} else {
		TH_LOG("the long job finished early: batching not observed");
	}
	ASSERT_EQ(0, trn_fence_wait(&f, trn_now_ns() + 60000000000LL));
	/*
	 * If the long job ended while the ops above were recorded, one of
	 * them went out in a job of its own, which may still run: wait for
	 * the last job submitted, not only for the long one.
	 */
	f = eager_stream_last_fence(s);
	ASSERT_EQ(0, trn_fence_wait(&f, trn_now_ns() + 60000000000LL));
	/* The queue is dry now: the next op takes the batch along. */
	ASSERT_EQ(0, eager_scale(x, x, 0.5f));
	ASSERT_EQ(0, eager_stream_stats(s, &st1));
	EXPECT_EQ(0, st1.pending_commands);
	EXPECT_LE(st0.jobs + 1, st1.jobs);
	f = eager_stream_last_fence(s);
	EXPECT_EQ(0, trn_fence_wait(&f, trn_now_ns() + 30000000000LL));
	{
		float got[16];

		ASSERT_EQ(0, eager_read_f32(x, got));
		EXPECT_EQ(48.0f, got[15]);	/* 3 * 2^5 / 2 */
	}
	eager_set_current_stream(TRN0, NULL);
	eager_free(a);
	eager_free(b);
	eager_free(c);
	eager_free(x);
	eager_stream_destroy(s);
}

/* ---- the demo ---- */

TEST_F(rt, mlp_model)
{
	struct eager_mlp_config cfg;
	struct eager_mlp_result res;

	eager_mlp_defaults(&cfg);
	cfg.batch = 8;
	cfg.in = 96;
	cfg.hidden = 48;
	cfg.passes = 2;
	ASSERT_EQ(0, eager_mlp_run(&cfg, &res));
	EXPECT_EQ(0, res.mismatches);
	EXPECT_LT(0, res.forward.n);
	EXPECT_LT(0, res.backward.n);
	EXPECT_LT(0, res.ops);
	EXPECT_LT(0.0, res.device_s);
	TH_LOG("f32: %lld + %lld values, max error/bound %.3g and %.3g, "
	       "loss %.6f (reference %.6f)", (long long)res.forward.n,
	       (long long)res.backward.n, res.forward.max_ratio,
	       res.backward.max_ratio, res.loss_device, res.loss_ref);
	cfg.bf16 = true;
	ASSERT_EQ(0, eager_mlp_run(&cfg, &res));
	EXPECT_EQ(0, res.mismatches);
}

/* Path of build/examples/eager/mlp-demo from build/tests/guest/test_eager. */
static int demo_path(char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -errno;
	exe[n] = '\0';
	snprintf(buf, size, "%s/../../examples/eager/mlp-demo",
		 dirname(exe));
	return access(buf, X_OK) ? -errno : 0;
}

static int run_demo(const char *path, char *const argv[])
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(path, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(rt, mlp_demo_binary)
{
	char path[PATH_MAX];
	char a_batch[] = "--batch", a_4[] = "4", a_in[] = "--in", a_64[] = "64";
	char a_hidden[] = "--hidden", a_32[] = "32", a_passes[] = "--passes";
	char a_2[] = "2", a_0[] = "0";
	char *small[] = { path, a_batch, a_4, a_in, a_64, a_hidden, a_32,
			  a_passes, a_2, NULL };
	char *bad[] = { path, a_batch, a_0, NULL };

	ASSERT_EQ(0, demo_path(path, sizeof(path)));
	/* The child opens its own device file: release ours first. */
	eager_shutdown();
	EXPECT_EQ(0, run_demo(path, small));
	EXPECT_EQ(2, run_demo(path, bad));
}

TEST_HARNESS_MAIN
