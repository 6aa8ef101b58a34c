// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * The CPU reference with running error bounds (see eager_ref.h). Each
 * rule bounds |device - exact| given that every device input x̂ satisfies
 * |x̂ - x| <= e_x: the propagated input error plus the rounding of the
 * device's own f32 arithmetic (unit roundoff u = 2^-24 per operation; a
 * length-k sum or dot product in any order: gamma_k = k u / (1 - k u)
 * times the sum of the magnitudes of its terms).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eager_ref.h"

static double gamma_k(int64_t k)
{
	double ku = (double)k * EREF_U;

	return ku / (1.0 - ku);
}

int eref_init(struct eref *r, int64_t rows, int64_t cols)
{
	size_t n = (size_t)(rows * cols);

	r->rows = rows;
	r->cols = cols;
	r->v = calloc(n, sizeof(double));
	r->e = calloc(n, sizeof(double));
	if (!r->v || !r->e) {
		eref_free(r);
		return -ENOMEM;
	}
	return 0;
}

void eref_free(struct eref *r)
{
	free(r->v);
	free(r->e);
	r->v = r->e = NULL;
}

int eref_from_f32(struct eref *r, int64_t rows, int64_t cols, const float *x)
{
	int64_t i;
	int ret = eref_init(r, rows, cols);

	if (ret)
		return ret;
	for (i = 0; i < rows * cols; i++)
		r->v[i] = x[i];
	return 0;
}

void eref_round_bf16(struct eref *r)
{
	int64_t i;

	for (i = 0; i < r->rows * r->cols; i++)
		r->e[i] += EREF_U_BF16 * (fabs(r->v[i]) + r->e[i]);
}

void eref_matmul(struct eref *c, const struct eref *a, const struct eref *b,
		 bool trans_a, bool trans_b, bool acc)
{
	int64_t m = c->rows, n = c->cols, k = trans_a ? a->rows : a->cols;
	double g = gamma_k(k + (acc ? 1 : 0));
	double *mag = calloc((size_t)n, sizeof(double));
	int64_t i, j, kk;

	if (!mag)
		abort();
	/* i, kk, j order: rows of b and c are walked contiguously. */
	for (i = 0; i < m; i++) {
		double *cv = &c->v[i * n], *ce = &c->e[i * n];

		for (j = 0; j < n; j++) {
			mag[j] = acc ? fabs(cv[j]) + ce[j] : 0;
			if (!acc)
				cv[j] = ce[j] = 0;
		}
		for (kk = 0; kk < k; kk++) {
			int64_t ia = trans_a ? kk * a->cols + i :
					       i * a->cols + kk;
			double av = a->v[ia], ae = a->e[ia], aa = fabs(av);

			for (j = 0; j < n; j++) {
				int64_t ib = trans_b ? j * b->cols + kk :
						       kk * b->cols + j;
				double bv = b->v[ib], be = b->e[ib];
				double ab = fabs(bv);

				cv[j] += av * bv;
				ce[j] += aa * be + ae * ab + ae * be;
				mag[j] += (aa + ae) * (ab + be);
			}
		}
		for (j = 0; j < n; j++)
			ce[j] += g * mag[j];
	}
	free(mag);
}

/* One rounded f32 operation on (av, ae) and (bv, be). */
static void binop(enum eref_op op, double av, double ae, double bv,
		  double be, double *v, double *e)
{
	double prop;

	switch (op) {
	case EREF_ADD:
	case EREF_SUB:
		*v = op == EREF_ADD ? av + bv : av - bv;
		prop = ae + be;
		break;
	case EREF_MUL:
		*v = av * bv;
		prop = fabs(av) * be + ae * fabs(bv) + ae * be;
		break;
	default:
		*v = av / bv;
		if (fabs(bv) > be)
			prop = (fabs(av) * be + fabs(bv) * ae) /
			       (fabs(bv) * (fabs(bv) - be));
		else
			prop = INFINITY;
		break;
	}
	*e = prop + EREF_U * (fabs(*v) + prop);
}

void eref_binary(struct eref *c, const struct eref *a, const struct eref *b,
		 enum eref_op op)
{
	int64_t i, j, ib;

	for (i = 0; i < a->rows; i++)
		for (j = 0; j < a->cols; j++) {
			int64_t ia = i * a->cols + j;

			if (b->rows == a->rows && b->cols == a->cols)
				ib = ia;
			else if (b->rows == 1 && b->cols == a->cols)
				ib = j;
			else if (b->rows == a->rows && b->cols == 1)
				ib = i;
			else
				ib = 0;
			binop(op, a->v[ia], a->e[ia], b->v[ib], b->e[ib],
			      &c->v[ia], &c->e[ia]);
		}
}

void eref_scale(struct eref *c, const struct eref *a, float alpha)
{
	int64_t i;

	for (i = 0; i < a->rows * a->cols; i++)
		binop(EREF_MUL, a->v[i], a->e[i], alpha, 0, &c->v[i], &c->e[i]);
}

void eref_relu(struct eref *c, const struct eref *a)
{
	int64_t i;

	/* Exact and 1-Lipschitz: the input's error carries over. */
	for (i = 0; i < a->rows * a->cols; i++) {
		c->v[i] = a->v[i] > 0 ? a->v[i] : 0;
		c->e[i] = a->e[i];
	}
}

void eref_exp(struct eref *c, const struct eref *a)
{
	int64_t i;

	/* e^(x+d) = e^x e^d; the device rounds within 1 ulp (2^-23 rel). */
	for (i = 0; i < a->rows * a->cols; i++) {
		double v = exp(a->v[i]), up = v * exp(a->e[i]);

		c->v[i] = v;
		c->e[i] = (up - v) + 0x1p-23 * up + 0x1p-149;
	}
}

void eref_gelu(struct eref *c, const struct eref *a)
{
	int64_t i;

	/* |gelu'| <= 1.13 (tanh form); device: 1 ulp or 1e-30 absolute. */
	for (i = 0; i < a->rows * a->cols; i++) {
		double x = a->v[i];
		double z = sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
		double v = x / (1.0 + exp(-2.0 * z)), prop = 1.13 * a->e[i];

		c->v[i] = v;
		c->e[i] = prop + 0x1p-23 * (fabs(v) + prop) + 1e-30;
	}
}

void eref_relu_backward(struct eref *c, const struct eref *grad,
			const struct eref *x)
{
	int64_t i;

	for (i = 0; i < x->rows * x->cols; i++) {
		double xv = x->v[i], xe = x->e[i];
		double gv = grad->v[i], ge = grad->e[i];

		if (xv - xe > 0) {		/* device mask surely 1 */
			c->v[i] = gv;
			c->e[i] = ge;
		} else if (xv + xe <= 0) {	/* surely 0 */
			c->v[i] = 0;
			c->e[i] = 0;
		} else {			/* either: off by all of it */
			c->v[i] = xv > 0 ? gv : 0;
			c->e[i] = fabs(gv) + ge;
		}
	}
}

/* Row-wise sum rule: c[r] from a's row r (dim -1) or column (dim 0). */
void eref_sum(struct eref *c, const struct eref *a, int dim)
{
	int64_t outer = dim == 0 ? a->cols : a->rows;
	int64_t inner = dim == 0 ? a->rows : a->cols;
	double g = gamma_k(inner);
	int64_t o, i;

	for (o = 0; o < outer; o++) {
		double v = 0, prop = 0, mag = 0;

		for (i = 0; i < inner; i++) {
			int64_t idx = dim == 0 ? i * a->cols + o :
						 o * a->cols + i;

			v += a->v[idx];
			prop += a->e[idx];
			mag += fabs(a->v[idx]) + a->e[idx];
		}
		c->v[o] = v;
		c->e[o] = prop + g * mag;
	}
}

int eref_softmax(struct eref *c, const struct eref *a)
{
	struct eref t;
	int64_t r, j;
	int ret = eref_init(&t, a->rows, 1);

	if (ret)
		return ret;
	/* max is exact and 1-Lipschitz: its error is the largest input's. */
	for (r = 0; r < a->rows; r++) {
		double m = -INFINITY, me = 0;

		for (j = 0; j < a->cols; j++) {
			if (a->v[r * a->cols + j] > m)
				m = a->v[r * a->cols + j];
			if (a->e[r * a->cols + j] > me)
				me = a->e[r * a->cols + j];
		}
		t.v[r] = m;
		t.e[r] = me;
	}
	eref_binary(c, a, &t, EREF_SUB);
	eref_exp(c, c);
	eref_sum(&t, c, -1);
	eref_binary(c, c, &t, EREF_DIV);
	eref_free(&t);
	return 0;
}

void eref_sgd(struct eref *w, const struct eref *g, float lr)
{
	int64_t i;
	double sv, se;

	for (i = 0; i < w->rows * w->cols; i++) {
		binop(EREF_MUL, g->v[i], g->e[i], lr, 0, &sv, &se);
		binop(EREF_SUB, w->v[i], w->e[i], sv, se, &w->v[i], &w->e[i]);
	}
}

void eref_check_init(struct eref_check *ck)
{
	memset(ck, 0, sizeof(*ck));
	ck->first_bad = -1;
}

void eref_compare(const struct eref *r, const float *got,
		  struct eref_check *ck)
{
	int64_t i;

	for (i = 0; i < r->rows * r->cols; i++) {
		double v = r->v[i], d = got[i], err = fabs(d - v);
		double tol = r->e[i] * (1 + 1e-6) + 1e-40;

		ck->n++;
		if (!(err <= tol)) {		/* NaN counts as bad */
			if (ck->first_bad < 0)
				ck->first_bad = ck->n - 1;
			ck->bad++;
		}
		if (err > ck->max_abs || isnan(err))
			ck->max_abs = err;
		if (fabs(v) > ck->max_value)
			ck->max_value = fabs(v);
		if (err / tol > ck->max_ratio)
			ck->max_ratio = err / tol;
	}
}
