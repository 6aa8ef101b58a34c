// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * The MLP of the demo (see eager_mlp.h): parameters and data from a
 * seeded generator, forward passes recorded back to back between two
 * timing events, a training step, then every device result read back and
 * compared with the CPU reference computed from the same inputs.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eager_mlp.h"

#define LAYERS	3

/* Stop at the first failing call; the caller's cleanup runs at `out`. */
#define TRY(call)				\
	do {					\
		ret = (call);			\
		if (ret)			\
			goto out;		\
	} while (0)

static uint64_t rnd64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static float rnd_uniform(uint64_t *s, float lo, float hi)
{
	return lo + (hi - lo) * (float)((double)(rnd64(s) >> 40) * 0x1p-24);
}

void eager_mlp_defaults(struct eager_mlp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->device = EAGER_DEVICE_TRN(0);
	cfg->batch = 64;
	cfg->in = 784;
	cfg->hidden = 512;
	cfg->out = 10;
	cfg->passes = 4;
	cfg->seed = 1;
	cfg->lr = 0.05f;
	cfg->train = true;
	cfg->check = true;
}

struct layer {
	int64_t fin, fout;
	float *hw, *hb;			/* host copies of the parameters */
	eager_tensor_t *w, *b, *wb;	/* wb: bf16 copy of w */
	eager_tensor_t *dw, *db;
};

struct pass {
	float *hx;			/* input batch on the host */
	int *labels;
	eager_tensor_t *x, *h[LAYERS];	/* h[LAYERS - 1]: logits */
	eager_tensor_t *probs;
};

static int tensor2(struct eager_device dev, int64_t r, int64_t c,
		   eager_tensor_t **t)
{
	const int64_t shape[2] = { r, c };

	return eager_empty(dev, EAGER_F32, 2, shape, t);
}

/* A bf16 copy of @x (a temporary of the stream). */
static int to_bf16(const eager_tensor_t *x, eager_tensor_t **out)
{
	int ret = eager_empty(x->device, EAGER_BF16, x->ndim, x->shape, out);

	if (!ret)
		ret = eager_cast(*out, x);
	return ret;
}

/* Record one forward pass of @p's input. */
static int forward(const struct eager_mlp_config *cfg, struct layer *ly,
		   struct pass *p)
{
	const eager_tensor_t *in = p->x;
	eager_tensor_t *tmp = NULL;
	int i, ret = 0;

	for (i = 0; i < LAYERS; i++) {
		TRY(tensor2(cfg->device, cfg->batch, ly[i].fout, &p->h[i]));
		if (cfg->bf16) {
			TRY(to_bf16(in, &tmp));
			TRY(eager_matmul(p->h[i], tmp, ly[i].wb, 0));
			eager_free(tmp);	/* reused in stream order */
			tmp = NULL;
		} else {
			TRY(eager_matmul(p->h[i], in, ly[i].w, 0));
		}
		TRY(eager_add(p->h[i], p->h[i], ly[i].b));
		if (i < LAYERS - 1)
			TRY(eager_relu(p->h[i], p->h[i]));
		in = p->h[i];
	}
	TRY(tensor2(cfg->device, cfg->batch, cfg->out, &p->probs));
	TRY(eager_softmax(p->probs, p->h[LAYERS - 1]));
out:
	eager_free(tmp);
	return ret;
}

/* The reference forward: act[i] as the device computes h[i]. */
static int ref_forward(const struct eager_mlp_config *cfg,
		       const struct layer *ly, const struct pass *p,
		       struct eref *act, struct eref *probs)
{
	struct eref x = { 0 }, w = { 0 }, b = { 0 };
	const struct eref *in = &x;
	int i, ret;

	TRY(eref_from_f32(&x, cfg->batch, cfg->in, p->hx));
	for (i = 0; i < LAYERS; i++) {
		struct eref xin = { 0 };

		TRY(eref_from_f32(&w, ly[i].fin, ly[i].fout, ly[i].hw));
		TRY(eref_from_f32(&b, 1, ly[i].fout, ly[i].hb));
		TRY(eref_init(&act[i], cfg->batch, ly[i].fout));
		if (cfg->bf16) {
			/* Both operands rounded to bf16 by device casts. */
			TRY(eref_init(&xin, in->rows, in->cols));
			memcpy(xin.v, in->v, sizeof(double) * in->rows * in->cols);
			memcpy(xin.e, in->e, sizeof(double) * in->rows * in->cols);
			eref_round_bf16(&xin);
			eref_round_bf16(&w);
			eref_matmul(&act[i], &xin, &w, false, false, false);
			eref_free(&xin);
		} else {
			eref_matmul(&act[i], in, &w, false, false, false);
		}
		eref_binary(&act[i], &act[i], &b, EREF_ADD);
		if (i < LAYERS - 1)
			eref_relu(&act[i], &act[i]);
		in = &act[i];
		eref_free(&w);
		eref_free(&b);
	}
	TRY(eref_init(probs, cfg->batch, cfg->out));
	TRY(eref_softmax(probs, &act[LAYERS - 1]));
out:
	eref_free(&x);
	eref_free(&w);
	eref_free(&b);
	return ret;
}

/* Read @t back and compare it with @ref into @ck. */
static int check_tensor(const eager_tensor_t *t, const struct eref *ref,
			struct eref_check *ck, FILE *log, const char *what)
{
	float *got = malloc(sizeof(float) * t->numel);
	int64_t bad0 = ck->bad;
	int ret;

	if (!got)
		return -ENOMEM;
	ret = eager_read_f32(t, got);
	if (!ret)
		eref_compare(ref, got, ck);
	if (!ret && ck->bad != bad0 && log)
		fprintf(log, "  MISMATCH in %s: %lld values outside the bound\n",
			what, (long long)(ck->bad - bad0));
	free(got);
	return ret;
}

static double cross_entropy(const float *probs, const double *ref,
			    const int *labels, int64_t batch, int64_t out,
			    double *ref_loss)
{
	double loss = 0, rloss = 0;
	int64_t i;

	for (i = 0; i < batch; i++) {
		loss -= log((double)probs[i * out + labels[i]]);
		rloss -= log(ref[i * out + labels[i]]);
	}
	*ref_loss = rloss / (double)batch;
	return loss / (double)batch;
}

static double secs(int64_t ns)
{
	return (double)ns * 1e-9;
}

/*
 * The training step on pass 0's batch (f32 forward activations @p):
 * dlogits = (probs - onehot) / batch, then for each layer from the last
 * dW = in^T @ d, db = column sums of d, d_in = relu'(in) * (d @ W^T),
 * then w -= lr * dW and b -= lr * db for all.
 */
static int train(const struct eager_mlp_config *cfg, struct layer *ly,
		 struct pass *p, eager_tensor_t *onehot,
		 eager_tensor_t **d)
{
	const float inv = 1.0f / (float)cfg->batch;
	int i, ret;

	TRY(tensor2(cfg->device, cfg->batch, cfg->out, &d[LAYERS - 1]));
	TRY(eager_sub(d[LAYERS - 1], p->probs, onehot));
	TRY(eager_scale(d[LAYERS - 1], d[LAYERS - 1], inv));
	for (i = LAYERS - 1; i >= 0; i--) {
		const eager_tensor_t *in = i ? p->h[i - 1] : p->x;

		TRY(eager_matmul(ly[i].dw, in, d[i], EAGER_TRANS_A));
		TRY(eager_sum(ly[i].db, d[i], 0));
		if (!i)
			break;
		TRY(tensor2(cfg->device, cfg->batch, ly[i].fin, &d[i - 1]));
		TRY(eager_matmul(d[i - 1], d[i], ly[i].w, EAGER_TRANS_B));
		TRY(eager_relu_backward(d[i - 1], d[i - 1], p->h[i - 1]));
	}
	for (i = 0; i < LAYERS; i++) {
		TRY(eager_sgd(ly[i].w, ly[i].dw, cfg->lr));
		TRY(eager_sgd(ly[i].b, ly[i].db, cfg->lr));
	}
out:
	return ret;
}

/* The same on the reference; @act and @probs from ref_forward (f32). */
static int ref_train(const struct eager_mlp_config *cfg,
		     const struct layer *ly, const struct pass *p,
		     struct eref *act, struct eref *probs, struct eref *d,
		     struct eref *dw, struct eref *db, struct eref *w,
		     struct eref *b)
{
	const float inv = 1.0f / (float)cfg->batch;
	struct eref x = { 0 }, y = { 0 };
	float *onehot;
	int i, ret;

	onehot = calloc((size_t)(cfg->batch * cfg->out), sizeof(float));
	if (!onehot)
		return -ENOMEM;
	for (i = 0; i < cfg->batch; i++)
		onehot[i * cfg->out + p->labels[i]] = 1.0f;
	TRY(eref_from_f32(&y, cfg->batch, cfg->out, onehot));
	TRY(eref_from_f32(&x, cfg->batch, cfg->in, p->hx));
	TRY(eref_init(&d[LAYERS - 1], cfg->batch, cfg->out));
	eref_binary(&d[LAYERS - 1], probs, &y, EREF_SUB);
	eref_scale(&d[LAYERS - 1], &d[LAYERS - 1], inv);
	for (i = 0; i < LAYERS; i++) {
		TRY(eref_from_f32(&w[i], ly[i].fin, ly[i].fout, ly[i].hw));
		TRY(eref_from_f32(&b[i], 1, ly[i].fout, ly[i].hb));
	}
	for (i = LAYERS - 1; i >= 0; i--) {
		const struct eref *in = i ? &act[i - 1] : &x;

		TRY(eref_init(&dw[i], ly[i].fin, ly[i].fout));
		TRY(eref_init(&db[i], 1, ly[i].fout));
		eref_matmul(&dw[i], in, &d[i], true, false, false);
		eref_sum(&db[i], &d[i], 0);
		if (!i)
			break;
		TRY(eref_init(&d[i - 1], cfg->batch, ly[i].fin));
		eref_matmul(&d[i - 1], &d[i], &w[i], false, true, false);
		eref_relu_backward(&d[i - 1], &d[i - 1], &act[i - 1]);
	}
	for (i = 0; i < LAYERS; i++) {
		eref_sgd(&w[i], &dw[i], cfg->lr);
		eref_sgd(&b[i], &db[i], cfg->lr);
	}
out:
	eref_free(&x);
	eref_free(&y);
	free(onehot);
	return ret;
}

static void log_check(FILE *log, const char *what,
		      const struct eref_check *ck)
{
	if (!log)
		return;
	fprintf(log, "%-8s %lld values, %lld outside their bound; max abs "
		"error %.3g (%.3g of the largest value), max error/bound "
		"%.3g\n", what, (long long)ck->n, (long long)ck->bad,
		ck->max_abs, ck->max_value > 0 ? ck->max_abs / ck->max_value :
		0.0, ck->max_ratio);
}

int eager_mlp_run(const struct eager_mlp_config *cfg,
		  struct eager_mlp_result *res)
{
	const int64_t sizes[LAYERS + 1] = { cfg->in, cfg->hidden, cfg->hidden,
					    cfg->out };
	struct layer ly[LAYERS];
	struct pass *ps = NULL;
	eager_tensor_t *onehot = NULL, *d[LAYERS] = { NULL };
	eager_event_t *ev[4] = { NULL };
	struct eref act[LAYERS] = { { 0 } }, probs = { 0 };
	struct eref rd[LAYERS] = { { 0 } }, rdw[LAYERS] = { { 0 } };
	struct eref rdb[LAYERS] = { { 0 } }, rw[LAYERS] = { { 0 } };
	struct eref rb[LAYERS] = { { 0 } };
	struct eager_stream_stats st0, st1;
	FILE *log = cfg->log;
	eager_stream_t *s;
	uint64_t seed = cfg->seed, dev_ns;
	unsigned int n, pi;
	int64_t t0, i;
	int l, ret;

	memset(res, 0, sizeof(*res));
	memset(ly, 0, sizeof(ly));
	eref_check_init(&res->forward);
	eref_check_init(&res->backward);
	n = cfg->passes ? cfg->passes : 1;
	ps = calloc(n, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	s = eager_current_stream(cfg->device);
	if (!s) {
		ret = -ENODEV;
		goto out;
	}

	/* Parameters: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), uploaded by DMA. */
	for (l = 0; l < LAYERS; l++) {
		const int64_t bshape[1] = { sizes[l + 1] };
		float r = 1.0f / sqrtf((float)sizes[l]);

		ly[l].fin = sizes[l];
		ly[l].fout = sizes[l + 1];
		ly[l].hw = malloc(sizeof(float) * ly[l].fin * ly[l].fout);
		ly[l].hb = malloc(sizeof(float) * ly[l].fout);
		if (!ly[l].hw || !ly[l].hb) {
			ret = -ENOMEM;
			goto out;
		}
		for (i = 0; i < ly[l].fin * ly[l].fout; i++)
			ly[l].hw[i] = rnd_uniform(&seed, -r, r);
		for (i = 0; i < ly[l].fout; i++)
			ly[l].hb[i] = rnd_uniform(&seed, -r, r);
		TRY(eager_from_host(cfg->device, EAGER_F32, 2,
				    (const int64_t[2]){ ly[l].fin, ly[l].fout },
				    ly[l].hw, &ly[l].w));
		TRY(eager_from_host(cfg->device, EAGER_F32, 1, bshape,
				    ly[l].hb, &ly[l].b));
		TRY(tensor2(cfg->device, ly[l].fin, ly[l].fout, &ly[l].dw));
		TRY(eager_empty(cfg->device, EAGER_F32, 1, bshape, &ly[l].db));
		if (cfg->bf16)
			TRY(to_bf16(ly[l].w, &ly[l].wb));
	}
	/* Inputs in [0, 1) like pixel intensities, labels uniform. */
	for (pi = 0; pi < n; pi++) {
		ps[pi].hx = malloc(sizeof(float) * cfg->batch * cfg->in);
		ps[pi].labels = malloc(sizeof(int) * cfg->batch);
		if (!ps[pi].hx || !ps[pi].labels) {
			ret = -ENOMEM;
			goto out;
		}
		for (i = 0; i < cfg->batch * cfg->in; i++)
			ps[pi].hx[i] = rnd_uniform(&seed, 0.0f, 1.0f);
		for (i = 0; i < cfg->batch; i++)
			ps[pi].labels[i] = (int)(rnd64(&seed) %
						 (uint64_t)cfg->out);
	}
	for (l = 0; l < 4; l++)
		TRY(eager_event_create(cfg->device, EAGER_EVENT_TIMING, &ev[l]));
	TRY(eager_stream_synchronize(s));	/* parameters in place */
	if (log)
		fprintf(log, "mlp %lld-%lld-%lld-%lld, batch %lld, %u forward "
			"passes, %s matmuls%s, seed %llu\n",
			(long long)cfg->in, (long long)cfg->hidden,
			(long long)cfg->hidden, (long long)cfg->out,
			(long long)cfg->batch, n, cfg->bf16 ? "bf16" : "f32",
			cfg->train ? ", one training step (f32)" : "",
			(unsigned long long)cfg->seed);

	/* Forward passes: recorded back to back, timed by the device. */
	eager_stream_stats(s, &st0);
	t0 = trn_now_ns();
	TRY(eager_event_record(ev[0], s));
	for (pi = 0; pi < n; pi++) {
		TRY(eager_from_host(cfg->device, EAGER_F32, 2,
				    (const int64_t[2]){ cfg->batch, cfg->in },
				    ps[pi].hx, &ps[pi].x));
		TRY(forward(cfg, ly, &ps[pi]));
	}
	TRY(eager_event_record(ev[1], s));
	TRY(eager_event_synchronize(ev[1]));
	res->wall_s = secs(trn_now_ns() - t0);
	eager_stream_stats(s, &st1);
	res->ops = st1.ops - st0.ops;
	TRY(eager_event_elapsed_ns(ev[0], ev[1], &dev_ns));
	res->device_s = secs((int64_t)dev_ns);
	if (log)
		fprintf(log, "forward: %llu ops in %u jobs, wall %.3f s, device "
			"%.3f s: %.1f ops/s, %.2f passes/s (wall), %.2f "
			"passes/s (device)\n", (unsigned long long)res->ops,
			(unsigned int)(st1.jobs - st0.jobs), res->wall_s,
			res->device_s, (double)res->ops / res->wall_s,
			n / res->wall_s, n / res->device_s);

	if (cfg->train) {
		struct pass tp;
		float *hy;

		/* The step starts from f32 activations of batch 0. */
		memset(&tp, 0, sizeof(tp));
		tp.hx = ps[0].hx;
		tp.labels = ps[0].labels;
		tp.x = ps[0].x;
		if (cfg->bf16) {
			struct eager_mlp_config f32 = *cfg;

			f32.bf16 = false;
			TRY(forward(&f32, ly, &tp));
		} else {
			memcpy(tp.h, ps[0].h, sizeof(tp.h));
			tp.probs = ps[0].probs;
		}
		hy = calloc((size_t)(cfg->batch * cfg->out), sizeof(float));
		if (!hy) {
			ret = -ENOMEM;
			goto out;
		}
		for (i = 0; i < cfg->batch; i++)
			hy[i * cfg->out + tp.labels[i]] = 1.0f;
		ret = eager_from_host(cfg->device, EAGER_F32, 2,
				      (const int64_t[2]){ cfg->batch, cfg->out },
				      hy, &onehot);
		free(hy);
		if (ret)
			goto out;
		eager_stream_stats(s, &st0);
		t0 = trn_now_ns();
		TRY(eager_event_record(ev[2], s));
		ret = train(cfg, ly, &tp, onehot, d);
		if (!ret)
			ret = eager_event_record(ev[3], s);
		if (!ret)
			ret = eager_event_synchronize(ev[3]);
		if (!ret)
			ret = eager_event_elapsed_ns(ev[2], ev[3], &dev_ns);
		res->train_wall_s = secs(trn_now_ns() - t0);
		res->train_device_s = secs((int64_t)dev_ns);
		eager_stream_stats(s, &st1);
		res->train_ops = st1.ops - st0.ops;
		if (!ret && log)
			fprintf(log, "training step: %llu ops, wall %.3f s, "
				"device %.3f s\n",
				(unsigned long long)res->train_ops,
				res->train_wall_s, res->train_device_s);
		if (!ret && cfg->check) {
			float *pr = malloc(sizeof(float) * cfg->batch * cfg->out);
			struct eref tact[LAYERS] = { { 0 } }, tprobs = { 0 };
			struct eager_mlp_config f32 = *cfg;

			f32.bf16 = false;
			ret = pr ? 0 : -ENOMEM;
			if (!ret)
				ret = ref_forward(&f32, ly, &tp, tact, &tprobs);
			if (!ret)
				ret = ref_train(&f32, ly, &tp, tact, &tprobs, rd,
						rdw, rdb, rw, rb);
			if (!ret)
				ret = eager_read_f32(tp.probs, pr);
			if (!ret)
				res->loss_device = cross_entropy(pr, tprobs.v,
						tp.labels, cfg->batch, cfg->out,
						&res->loss_ref);
			for (l = 0; !ret && l < LAYERS; l++) {
				ret = check_tensor(d[l], &rd[l], &res->backward,
						   log, "gradient");
				if (!ret)
					ret = check_tensor(ly[l].dw, &rdw[l],
							   &res->backward, log,
							   "dW");
				if (!ret)
					ret = check_tensor(ly[l].db, &rdb[l],
							   &res->backward, log,
							   "db");
				if (!ret)
					ret = check_tensor(ly[l].w, &rw[l],
							   &res->backward, log,
							   "W");
				if (!ret)
					ret = check_tensor(ly[l].b, &rb[l],
							   &res->backward, log,
							   "b");
			}
			for (l = 0; l < LAYERS; l++)
				eref_free(&tact[l]);
			eref_free(&tprobs);
			free(pr);
			if (!ret && log)
				fprintf(log, "loss (batch 0): device %.6f, "
					"reference %.6f\n", res->loss_device,
					res->loss_ref);
		}
		if (cfg->bf16) {
			for (l = 0; l < LAYERS; l++)
				eager_free(tp.h[l]);
			eager_free(tp.probs);
		}
		if (ret)
			goto out;
	}

	/*
	 * Forward results, checked against the reference forward of the
	 * parameters the passes used (before the step changed them: the
	 * host copies are never updated).
	 */
	if (cfg->check) {
		for (pi = 0; pi < n; pi++) {
			TRY(ref_forward(cfg, ly, &ps[pi], act, &probs));
			for (l = 0; l < LAYERS; l++)
				TRY(check_tensor(ps[pi].h[l], &act[l],
						 &res->forward, log,
						 l < LAYERS - 1 ? "hidden" :
						 "logits"));
			TRY(check_tensor(ps[pi].probs, &probs, &res->forward,
					 log, "probs"));
			for (l = 0; l < LAYERS; l++)
				eref_free(&act[l]);
			eref_free(&probs);
		}
		log_check(log, "forward", &res->forward);
		if (cfg->train)
			log_check(log, "training", &res->backward);
	}
	res->mismatches = res->forward.bad + res->backward.bad;
	eager_memory_stats(cfg->device, &res->mem);
	eager_stream_stats(s, &res->stream);
out:
	for (l = 0; l < LAYERS; l++) {
		eref_free(&act[l]);
		eref_free(&rd[l]);
		eref_free(&rdw[l]);
		eref_free(&rdb[l]);
		eref_free(&rw[l]);
		eref_free(&rb[l]);
		eager_free(d[l]);
	}
	eref_free(&probs);
	eager_free(onehot);
	for (pi = 0; pi < n; pi++) {
		for (l = 0; l < LAYERS; l++)
			eager_free(ps[pi].h[l]);
		eager_free(ps[pi].probs);
		eager_free(ps[pi].x);
		free(ps[pi].hx);
		free(ps[pi].labels);
	}
	free(ps);
	for (l = 0; l < LAYERS; l++) {
		eager_free(ly[l].w);
		eager_free(ly[l].b);
		eager_free(ly[l].wb);
		eager_free(ly[l].dw);
		eager_free(ly[l].db);
		free(ly[l].hw);
		free(ly[l].hb);
	}
	for (l = 0; l < 4; l++)
		eager_event_destroy(ev[l]);
	return ret;
}

int eager_bench_mlp(size_t passes, double *ops_per_s)
{
	struct eager_mlp_config cfg;
	struct eager_mlp_result res;
	int ret;

	eager_mlp_defaults(&cfg);
	cfg.passes = passes ? (unsigned int)passes : 1;
	cfg.train = false;
	cfg.check = false;
	ret = eager_mlp_run(&cfg, &res);
	if (!ret)
		*ops_per_s = (double)res.ops / res.wall_s;
	return ret;
}
