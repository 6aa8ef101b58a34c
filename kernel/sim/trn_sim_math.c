// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The arithmetic of the simulated NeuronCore: the only floating point in
 * trn, built with CC_FLAGS_FPU and -ffp-contract=off (no fused
 * multiply-add, so every product and sum is rounded on its own, as
 * Documentation/isa.md promises). Callers hold kernel_fpu_begin() around
 * each call; nothing here sleeps or touches device memory.
 *
 * The kernel has no libm: exp and tanh are computed here in double
 * precision (range reduction by ln 2, then a Taylor polynomial) and
 * rounded once to f32, which makes EXP, TANH and GELU correctly rounded
 * but for rare inputs within 1e-15 of a rounding boundary (at most 1 ulp).
 * Values travel as u32 bit patterns; NaN handling is done on the bits, so
 * it does not depend on the CPU's NaN propagation rules.
 */

#include <linux/bits.h>
#include <linux/export.h>
#include <linux/types.h>

#include <uapi/drm/trn_accel.h>

#include <kunit/visibility.h>

#include "trn_sim_isa.h"

#define F32_SIGN	0x80000000U
#define F32_ABS		0x7fffffffU
#define F32_INF		0x7f800000U
#define F32_QUIET	0x00400000U
#define F32_ONE		0x3f800000U

union trn_sim_f32 {
	u32 u;
	float f;
};

union trn_sim_f64 {
	u64 u;
	double d;
};

static inline float f32_of(u32 u)
{
	union trn_sim_f32 v = { .u = u };

	return v.f;
}

static inline u32 bits_of(float f)
{
	union trn_sim_f32 v = { .f = f };

	return v.u;
}

static inline bool f32_is_nan(u32 u)
{
	return (u & F32_ABS) > F32_INF;
}

static inline double f64_of(u64 u)
{
	union trn_sim_f64 v = { .u = u };

	return v.d;
}

/* 2^k for -1022 <= k <= 1023. */
static inline double pow2(int k)
{
	union trn_sim_f64 v = { .u = (u64)(k + 1023) << 52 };

	return v.d;
}

/*
 * e^x in double, relative error below 1e-15; x is not NaN. Cody-Waite
 * reduction x = k ln2 + r, |r| <= ln2 / 2 (ln2_hi has 32 trailing zero
 * bits, so k * ln2_hi is exact), then Taylor to degree 13, whose truncation
 * error is below 5e-18.
 */
static double exp_d(double x)
{
	const double ln2_hi = f64_of(0x3fe62e42fee00000ULL);
	const double ln2_lo = f64_of(0x3dea39ef35793c76ULL);
	const double inv_ln2 = f64_of(0x3ff71547652b82feULL);
	double kd, r, p;
	int k, k1;

	if (x > 709.8)
		return pow2(1023) * 2.0;	/* +inf */
	if (x < -745.2)
		return 0.0;
	kd = x * inv_ln2;
	k = (int)(kd < 0 ? kd - 0.5 : kd + 0.5);
	r = (x - k * ln2_hi) - k * ln2_lo;

	p = 1.0 / 6227020800.0;			/* 1/13! */
	p = p * r + 1.0 / 479001600.0;
	p = p * r + 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	p = p * r + 1.0;

	/* Scale in two steps so that 2^k never leaves the normal range. */
	k1 = k / 2;
	return p * pow2(k1) * pow2(k - k1);
}

/* tanh in double, relative error below 1e-15; x is not NaN. */
static double tanh_d(double x)
{
	double ax = x < 0 ? -x : x;
	double t, x2;

	if (x == 0)
		return x;		/* keeps the sign of zero */
	if (ax < 0.125) {
		/* Taylor; the first omitted term is below 3e-17 relative. */
		x2 = x * x;
		t = -929569.0 / 638512875.0;
		t = t * x2 + 21844.0 / 6081075.0;
		t = t * x2 - 1382.0 / 155925.0;
		t = t * x2 + 62.0 / 2835.0;
		t = t * x2 - 17.0 / 315.0;
		t = t * x2 + 2.0 / 15.0;
		t = t * x2 - 1.0 / 3.0;
		return x + x * x2 * t;
	}
	if (ax > 20.0)
		t = 1.0;
	else
		t = 1.0 - 2.0 / (exp_d(2.0 * ax) + 1.0);
	return x < 0 ? -t : t;
}

static u32 exp_f32(u32 u)
{
	return bits_of((float)exp_d((double)f32_of(u)));
}

static u32 tanh_f32(u32 u)
{
	return bits_of((float)tanh_d((double)f32_of(u)));
}

/*
 * 0.5 x (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3), evaluated as the
 * equal x / (1 + e^(-2z)), which does not cancel for negative x.
 */
static u32 gelu_f32(u32 u)
{
	const double sqrt_2_over_pi = 0.79788456080286535588;
	double x = f32_of(u);
	double z;

	if (u == (F32_SIGN | F32_INF))
		return F32_SIGN;		/* -inf -> -0 */
	z = sqrt_2_over_pi * (x + 0.044715 * x * x * x);
	return bits_of((float)(x / (1.0 + exp_d(-2.0 * z))));
}

/*
 * ln x in double for a positive normal x, relative error below 1e-15:
 * x = m 2^e with sqrt(1/2) <= m < sqrt(2), ln m = 2 atanh(s) with
 * s = (m - 1) / (m + 1), |s| < 0.172, by its odd series to s^21 (the
 * first omitted term is below 1e-18 relative). m - 1 is exact.
 */
static double log_d(double x)
{
	const double ln2_hi = f64_of(0x3fe62e42fee00000ULL);
	const double ln2_lo = f64_of(0x3dea39ef35793c76ULL);
	const double sqrt2 = f64_of(0x3ff6a09e667f3bcdULL);
	union trn_sim_f64 v = { .d = x };
	int e = (int)(v.u >> 52) - 1023;
	double m, s, s2, p;

	v.u = (v.u & (BIT_ULL(52) - 1)) | (1023ULL << 52);
	m = v.d;
	if (m > sqrt2) {
		m *= 0.5;
		e++;
	}
	s = (m - 1.0) / (m + 1.0);
	s2 = s * s;
	p = 1.0 / 21;
	p = p * s2 + 1.0 / 19;
	p = p * s2 + 1.0 / 17;
	p = p * s2 + 1.0 / 15;
	p = p * s2 + 1.0 / 13;
	p = p * s2 + 1.0 / 11;
	p = p * s2 + 1.0 / 9;
	p = p * s2 + 1.0 / 7;
	p = p * s2 + 1.0 / 5;
	p = p * s2 + 1.0 / 3;
	return e * ln2_hi + (e * ln2_lo + (2.0 * s + 2.0 * s * s2 * p));
}

static u32 log_f32(u32 u)
{
	if (!(u & F32_ABS))
		return F32_SIGN | F32_INF;	/* +-0 -> -inf */
	if (u & F32_SIGN)
		return F32_INF | F32_QUIET;	/* negative: NaN */
	if (u == F32_INF)
		return u;
	return bits_of((float)log_d(f32_of(u)));
}

/*
 * erf and erfc of t >= 0, given t2 = t * t (exact where the caller can):
 * the series erf t = 2/sqrt(pi) e^(-t^2) sum (2t^2)^n t / (1 3 5 ...
 * (2n + 1)), whose terms are all positive (no cancellation; 38 terms at
 * t = 2.5), and the continued fraction erfc t = e^(-t^2) / sqrt(pi) /
 * (t + (1/2) / (t + 1 / (t + (3/2) / (t + ...)))), evaluated backwards
 * from ERFC_TERMS, which converges faster the larger t is (1e-16 from
 * t = 1.5 on). erf uses the series below ERF_SPLIT, erfc the fraction from
 * ERFC_SPLIT on, and each is 1 - the other elsewhere, which costs erfc at
 * most 1.5 digits (erfc 1.5 = 0.034). Measured relative error: erf below
 * 2e-15, erfc below 5e-14.
 */
#define ERF_SPLIT	2.5
#define ERFC_SPLIT	1.5
#define ERF_TERMS	60
#define ERFC_TERMS	100

static double erf_series(double t, double t2)
{
	const double two_over_sqrt_pi = f64_of(0x3ff20dd750429b6dULL);
	double term = t, sum = t;
	int n;

	if (t == 0)
		return t;
	for (n = 1; n < ERF_TERMS; n++) {
		term *= 2.0 * t2 / (2 * n + 1);
		sum += term;
		if (term * 1e17 < sum)
			break;
	}
	return two_over_sqrt_pi * sum * exp_d(-t2);
}

static double erfc_fraction(double t, double t2)
{
	const double sqrt_pi = f64_of(0x3ffc5bf891b4ef6bULL);
	double d = t;
	int k;

	for (k = ERFC_TERMS; k >= 1; k--)
		d = t + (0.5 * k) / d;
	return exp_d(-t2) / (sqrt_pi * d);
}

static double erf_pos(double t, double t2)
{
	return t < ERF_SPLIT ? erf_series(t, t2) : 1.0 - erfc_fraction(t, t2);
}

static double erfc_pos(double t, double t2)
{
	return t < ERFC_SPLIT ? 1.0 - erf_series(t, t2) : erfc_fraction(t, t2);
}

static u32 erf_f32(u32 u)
{
	double x = f32_of(u & F32_ABS);

	if ((u & F32_ABS) == F32_INF)
		return (u & F32_SIGN) | F32_ONE;
	/* erf is odd; +-0 keeps its sign. */
	return (u & F32_SIGN) | bits_of((float)erf_pos(x, x * x));
}

/*
 * Phi(x), the standard normal distribution function, for finite x with
 * x2 = x * x exact (x is an f32): 0.5 erfc(-x / sqrt 2), taken as 0.5 (1 +
 * erf) for x >= 0 and 0.5 erfc for x < 0, so that the tail keeps its
 * relative precision. t^2 = x^2 / 2 is exact too.
 */
static double phi_d(double x, double x2)
{
	const double sqrt_half = f64_of(0x3fe6a09e667f3bcdULL);
	double t = x * sqrt_half;

	if (x >= 0)
		return 0.5 + 0.5 * erf_pos(t, 0.5 * x2);
	return 0.5 * erfc_pos(-t, 0.5 * x2);
}

/* GELU_ERF: x Phi(x); -inf -> -0, +inf -> +inf. */
static u32 gelu_erf_f32(u32 u)
{
	double x = f32_of(u);

	if ((u & F32_ABS) == F32_INF)
		return (u & F32_SIGN) ? F32_SIGN : u;
	return bits_of((float)(x * phi_d(x, x * x)));
}

/*
 * GELU_ERF_GRAD: d/dx x Phi(x) = Phi(x) + x e^(-x^2 / 2) / sqrt(2 pi); the
 * limits at -inf and +inf are -0 and 1.
 */
static u32 gelu_erf_grad_f32(u32 u)
{
	const double inv_sqrt_2pi = f64_of(0x3fd9884533d43651ULL);
	double x = f32_of(u), x2 = x * x, g;

	if ((u & F32_ABS) == F32_INF)
		return (u & F32_SIGN) ? F32_SIGN : F32_ONE;
	g = phi_d(x, x2) + x * inv_sqrt_2pi * exp_d(-0.5 * x2);
	/* Below x = -38 both terms underflow; the value is negative. */
	if (g == 0 && x < 0)
		return F32_SIGN;
	return bits_of((float)g);
}

/*
 * Correctly rounded square root of a positive finite f32. A double Newton
 * iteration gets within an ulp; the candidate is then corrected exactly:
 * a midpoint between two neighbouring f32 values has 25 significant bits,
 * so its square is exact in double and compares exactly with x (and never
 * equals it, so there are no ties).
 */
static u32 sqrt_pos_f32(u32 u)
{
	union trn_sim_f64 g;
	double x = f32_of(u), y;
	u32 c;
	int i;

	g.d = x;
	g.u = (g.u >> 1) + 0x1ff8000000000000ULL;	/* within 4% */
	y = g.d;
	for (i = 0; i < 5; i++)
		y = 0.5 * (y + x / y);
	c = bits_of((float)y);
	while ((((double)f32_of(c) + f32_of(c + 1)) * 0.5) *
	       (((double)f32_of(c) + f32_of(c + 1)) * 0.5) <= x)
		c++;
	while (c > 1 && (((double)f32_of(c - 1) + f32_of(c)) * 0.5) *
			(((double)f32_of(c - 1) + f32_of(c)) * 0.5) > x)
		c--;
	return c;
}

static u32 sqrt_f32(u32 u)
{
	if (!(u & F32_ABS) || u == F32_INF)
		return u;			/* +-0, +inf */
	if (u & F32_SIGN)
		return F32_INF | F32_QUIET;	/* negative: NaN */
	return sqrt_pos_f32(u);
}

static u32 unary_one(u32 op, u32 u)
{
	switch (op) {
	case TRN_UNARY_COPY:
		return u;
	case TRN_UNARY_NEG:
		return u ^ F32_SIGN;
	case TRN_UNARY_ABS:
		return u & F32_ABS;
	case TRN_UNARY_RELU_GRAD:
		return (!(u & F32_SIGN) && u && !f32_is_nan(u)) ? F32_ONE : 0;
	}
	if (f32_is_nan(u))
		return u | F32_QUIET;
	switch (op) {
	case TRN_UNARY_RELU:
		return (u & F32_SIGN) ? 0 : u;
	case TRN_UNARY_GELU:
		return gelu_f32(u);
	case TRN_UNARY_EXP:
		return exp_f32(u);
	case TRN_UNARY_RECIP:
		return bits_of(1.0f / f32_of(u));
	case TRN_UNARY_SQRT:
		return sqrt_f32(u);
	case TRN_UNARY_TANH:
		return tanh_f32(u);
	case TRN_UNARY_LOG:
		return log_f32(u);
	case TRN_UNARY_ERF:
		return erf_f32(u);
	case TRN_UNARY_GELU_ERF:
		return gelu_erf_f32(u);
	case TRN_UNARY_GELU_ERF_GRAD:
		return gelu_erf_grad_f32(u);
	}
	return u;
}

/**
 * trn_sim_math_unary() - dst[i] = op(src[i]) for i < @n
 * @op: &enum trn_unary_op, already validated
 * @dst: results, f32 bits; may be @src
 * @src: operands, f32 bits
 * @n: elements
 */
void trn_sim_math_unary(u32 op, u32 *dst, const u32 *src, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		dst[i] = unary_one(op, src[i]);
}

/* IEEE 754-2019 maximum/minimum: NaN wins, and +0 > -0. */
static u32 max_f32(u32 a, u32 b)
{
	if (f32_is_nan(a))
		return a | F32_QUIET;
	if (f32_is_nan(b))
		return b | F32_QUIET;
	if (f32_of(a) > f32_of(b))
		return a;
	if (f32_of(b) > f32_of(a))
		return b;
	return a & b;		/* equal: only zeros differ, in the sign */
}

static u32 min_f32(u32 a, u32 b)
{
	if (f32_is_nan(a))
		return a | F32_QUIET;
	if (f32_is_nan(b))
		return b | F32_QUIET;
	if (f32_of(a) < f32_of(b))
		return a;
	if (f32_of(b) < f32_of(a))
		return b;
	return a | b;
}

static u32 binary_one(u32 op, u32 a, u32 b)
{
	switch (op) {
	case TRN_BINARY_ADD:
		return bits_of(f32_of(a) + f32_of(b));
	case TRN_BINARY_SUB:
		return bits_of(f32_of(a) - f32_of(b));
	case TRN_BINARY_MUL:
		return bits_of(f32_of(a) * f32_of(b));
	case TRN_BINARY_DIV:
		return bits_of(f32_of(a) / f32_of(b));
	case TRN_BINARY_MAX:
		return max_f32(a, b);
	case TRN_BINARY_MIN:
		return min_f32(a, b);
	}
	return a;
}

/**
 * trn_sim_math_binary() - dst[i] = a[i] op b[i] for i < @n
 * @op: &enum trn_binary_op, already validated
 * @dst: results, f32 bits; may be @a or @b
 * @a: first operands
 * @b: second operands, or with @b_scalar one value for every i
 * @n: elements
 * @b_scalar: use b[0] for every element
 */
void trn_sim_math_binary(u32 op, u32 *dst, const u32 *a, const u32 *b,
			 u32 n, bool b_scalar)
{
	u32 i;

	for (i = 0; i < n; i++)
		dst[i] = binary_one(op, a[i], b[b_scalar ? 0 : i]);
}

/**
 * trn_sim_math_reduce() - fold @n more values into a reduction
 * @op: &enum trn_reduce_op, already validated
 * @acc: the reduction so far (SUM: starts at +0; MAX: at -infinity)
 * @src: the values, in order
 * @n: how many
 *
 * Return: the new reduction, f32 bits.
 */
u32 trn_sim_math_reduce(u32 op, u32 acc, const u32 *src, u32 n)
{
	float sum = f32_of(acc);
	u32 i;

	if (op == TRN_REDUCE_MAX) {
		for (i = 0; i < n; i++)
			acc = max_f32(acc, src[i]);
		return acc;
	}
	for (i = 0; i < n; i++)
		sum = sum + f32_of(src[i]);
	return bits_of(sum);
}

/**
 * trn_sim_math_matmul_row() - c[j] += a[kk] * b[kk][j], kk from @k0 to @k1
 * @c: one row of C, n f32 accumulators
 * @a: one row of A, widened to f32
 * @b: all of B, widened to f32, k rows of @n
 * @k0: first kk
 * @k1: end of kk (exclusive)
 * @n: columns
 *
 * Each c[j] sees its products in order of increasing kk, each product and
 * each sum rounded to f32.
 */
void trn_sim_math_matmul_row(u32 *c, const u32 *a, const u32 *b, u32 k0,
			     u32 k1, u32 n)
{
	u32 kk, j;

	for (kk = k0; kk < k1; kk++) {
		const u32 *brow = b + (size_t)kk * n;
		float av = f32_of(a[kk]);

		for (j = 0; j < n; j++)
			c[j] = bits_of(f32_of(c[j]) + av * f32_of(brow[j]));
	}
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_math_matmul_row);
