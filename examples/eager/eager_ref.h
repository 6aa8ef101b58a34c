/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * eager_ref.h - the CPU reference of the eager operations: each value is
 * computed in double precision together with a rigorous bound on how far
 * the device's f32 result may be from it (running error analysis; the
 * rules are in Documentation/eager.md). A device value d matches the
 * reference (v, e) when |d - v| <= e (1 + 1e-6) + 1e-40.
 */
#ifndef EAGER_REF_H
#define EAGER_REF_H

#include <stdbool.h>
#include <stdint.h>

#define EREF_U		0x1p-24		/* f32 unit roundoff */
#define EREF_U_BF16	0x1p-8		/* bf16 unit roundoff */

/* A rows x cols matrix of reference values and error bounds. */
struct eref {
	int64_t rows, cols;
	double *v;
	double *e;
};

int eref_init(struct eref *r, int64_t rows, int64_t cols);
void eref_free(struct eref *r);
/* Exact f32 inputs (error 0). */
int eref_from_f32(struct eref *r, int64_t rows, int64_t cols, const float *x);

/* The device rounds r to bf16 (a cast): the bound grows by U_BF16. */
void eref_round_bf16(struct eref *r);

/* c = op(a) @ op(b) (+ c with acc); c must be initialised to [m][n]. */
void eref_matmul(struct eref *c, const struct eref *a, const struct eref *b,
		 bool trans_a, bool trans_b, bool acc);

enum eref_op { EREF_ADD, EREF_SUB, EREF_MUL, EREF_DIV };

/*
 * c = a op b with b of a's shape, [1][cols] (every row), [rows][1] (per
 * row) or [1][1]; c may be a.
 */
void eref_binary(struct eref *c, const struct eref *a, const struct eref *b,
		 enum eref_op op);
void eref_scale(struct eref *c, const struct eref *a, float alpha);
void eref_relu(struct eref *c, const struct eref *a);
void eref_exp(struct eref *c, const struct eref *a);
void eref_gelu(struct eref *c, const struct eref *a);
/* c = grad * (x > 0); c may be grad. */
void eref_relu_backward(struct eref *c, const struct eref *grad,
			const struct eref *x);
/* Row softmax; c may be a. */
int eref_softmax(struct eref *c, const struct eref *a);
/* dim -1: c[rows][1] row sums; dim 0: c[1][cols] column sums. */
void eref_sum(struct eref *c, const struct eref *a, int dim);
/* w -= lr * g */
void eref_sgd(struct eref *w, const struct eref *g, float lr);

/* Comparison of device values with a reference. */
struct eref_check {
	int64_t n, bad;
	double max_abs;		/* largest |d - v| */
	double max_value;	/* largest |v| (for a normwise error) */
	double max_ratio;	/* largest |d - v| / tolerance */
	int64_t first_bad;	/* index of the first bad value, or -1 */
};

void eref_check_init(struct eref_check *ck);
void eref_compare(const struct eref *r, const float *got,
		  struct eref_check *ck);

#endif /* EAGER_REF_H */
