/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * eager_mlp.h - the demo's model on the eager runtime: an MLP
 * in-hidden-hidden-out with relu and softmax, N forward passes and one
 * SGD training step with a hand-written backward (softmax cross-entropy),
 * every result checked against the CPU reference (eager_ref.h).
 * mlp-demo, test_eager and eager_bench_mlp() run it.
 */
#ifndef EAGER_MLP_H
#define EAGER_MLP_H

#include <stdio.h>

#include "eager.h"
#include "eager_ref.h"

struct eager_mlp_config {
	struct eager_device device;
	int64_t batch, in, hidden, out;
	unsigned int passes;		/* forward passes, one batch each */
	uint64_t seed;
	float lr;
	bool bf16;			/* forward matmuls on bf16 operands */
	bool train;			/* one training step (f32) */
	bool check;			/* compare with the CPU reference */
	FILE *log;			/* what it does, or NULL */
};

struct eager_mlp_result {
	uint64_t ops;			/* operations of the forward passes */
	double wall_s;			/* host clock, forward passes */
	double device_s;		/* device timestamps, forward passes */
	double train_wall_s, train_device_s;
	uint64_t train_ops;
	double loss_device, loss_ref;	/* cross-entropy of batch 0 */
	struct eref_check forward;	/* h1, h2, logits, probs of all passes */
	struct eref_check backward;	/* gradients and updated parameters */
	int64_t mismatches;		/* values outside their bound */
	struct eager_memory_stats mem;	/* at the end, before freeing */
	struct eager_stream_stats stream;
};

/* 784-512-512-10, batch 64, 4 passes, seed 1, lr 0.05, f32, train, check. */
void eager_mlp_defaults(struct eager_mlp_config *cfg);

/*
 * Run the model. 0 when everything ran (mismatches are counted in
 * @res, not an error), else a negative errno.
 */
int eager_mlp_run(const struct eager_mlp_config *cfg,
		  struct eager_mlp_result *res);

#endif /* EAGER_MLP_H */
