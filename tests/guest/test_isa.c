// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * The command-stream ISA v1 on simulated device 0, through libtrnhal:
 * every operation against a CPU reference over random shapes, offsets and
 * pitches, then malformed streams, which must fail their job with the
 * documented fence error and status, name the offending command, leave
 * later jobs of the queue and other contexts unaffected.
 *
 * With TRN_TEST_DEVICE=part (the pci lane) the same on a part: what its
 * capability bits exclude is skipped, and a malformed command of an
 * opcode it does not execute fails with UNSUPPORTED (isa.md, step 5a).
 *
 * Random cases come from one seed per run, printed by every test
 * (TRN_TEST_SEED=S reruns with seed S). Tolerances (Documentation/isa.md):
 * IEEE basic operations are exact (add, sub, mul, div, neg, abs, relu,
 * max, min, copy, recip, sqrt); matmul and sum within 1e-5 relative to the
 * sum of the magnitudes of their terms; exp, tanh and gelu within 2e-6
 * relative or 4 ulp of the double-precision result.
 */
#include <math.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "trn_test.h"
#include "trnhal.h"

#define DATA_SIZE	(4u << 20)
#define WAIT_NS		(30LL * 1000000000)
#define CASES		6	/* random shapes per operation */

static uint64_t base_seed;

static void __attribute__((constructor)) pick_seed(void)
{
	const char *s = getenv("TRN_TEST_SEED");
	struct timespec ts;

	if (s && *s) {
		base_seed = strtoull(s, NULL, 0);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	base_seed = ((uint64_t)ts.tv_sec * 1000003u + (uint64_t)ts.tv_nsec /
		     1000) % 1000000000u;
}

/* ---- PRNG: splitmix64, one stream per test ---- */

static uint64_t rnd64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static uint32_t rnd_range(uint64_t *s, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rnd64(s) % ((uint64_t)hi - lo + 1));
}

/* Uniform float in [lo, hi], never within 1e-3 of zero. */
static float rnd_float(uint64_t *s, double lo, double hi)
{
	double u = (double)(rnd64(s) >> 11) * 0x1p-53;
	float f = (float)(lo + (hi - lo) * u);

	if (fabsf(f) < 1e-3f)
		f = f < 0 ? -0.5f : 0.5f;
	return f;
}

static uint64_t test_seed(const char *name)
{
	uint64_t h = base_seed;

	while (*name)
		h = h * 131 + (unsigned char)*name++;
	return h;
}

/* ---- numerics ---- */

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* f32 -> bf16, round to nearest, ties to even; NaN stays NaN. */
static uint16_t bf16_rne(float f)
{
	uint32_t u = f2u(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

static float bf16_to_f32(uint16_t h)
{
	return u2f((uint32_t)h << 16);
}

static double ulp_of(double want)
{
	float w = (float)want;

	return fabs((double)nextafterf(w, INFINITY) - (double)w);
}

/* got within 2e-6 relative or 4 ulp of want. */
static bool close_transcendental(float got, double want)
{
	double err = fabs((double)got - want);

	return err <= 2e-6 * fabs(want) || err <= 4 * ulp_of(want);
}

/* got within 1e-5 of the sum of the magnitudes of the terms. */
static bool close_sum(float got, double want, double magnitude)
{
	return fabs((double)got - want) <= 1e-5 * magnitude + 1e-30;
}

/* GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static double gelu_ref(double x)
{
	double z = sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);

	/* The same value as x / (1 + e^(-2z)), which does not cancel. */
	return x / (1.0 + exp(-2.0 * z));
}

/* ---- the fixture: a device, a queue, a data buffer with an allocator ---- */

struct stream {
	trn_bo_t *bo;
	struct cmds c;
};

FIXTURE(isa)
{
	trn_device_t *dev;
	unsigned int minor;
	struct trn_device_info info;
	trn_queue_t *q;
	trn_cmdbuf_t *cb;
	trn_bo_t *data;
	unsigned char *map;
	uint64_t va;
	uint64_t used;
	uint64_t seed;
	struct stream raw[8];	/* raw command streams (host buffers) */
};

FIXTURE_SETUP(isa)
{
	int ret;

	self->dev = NULL;
	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, no part)");
	ASSERT_EQ(0, dut_minor(&self->minor));
	ASSERT_EQ(0, trn_device_open(self->minor, &self->dev));
	ASSERT_EQ(0, trn_device_info(self->dev, &self->info));
	ASSERT_EQ(0, trn_queue_create(self->dev, 0, TRN_PRIORITY_NORMAL,
				      &self->q));
	ASSERT_EQ(0, trn_cmdbuf_create(self->dev, 256 * 1024, &self->cb));
	ASSERT_EQ(0, trn_bo_create(self->dev, DATA_SIZE, TRN_PLACEMENT_HBM, 0,
				   0, &self->data));
	ret = trn_bo_map(self->data, (void **)&self->map);
	ASSERT_EQ(0, ret);
	self->va = trn_bo_va(self->data);
	self->used = 0;
	self->seed = test_seed(_metadata->name);
	TH_LOG("seed %llu (TRN_TEST_SEED=%llu reruns it)",
	       (unsigned long long)base_seed, (unsigned long long)base_seed);
}

FIXTURE_TEARDOWN(isa)
{
	unsigned int i;

	if (!self->dev)
		return;
	trn_queue_wait_idle(self->q, trn_now_ns() + WAIT_NS);
	for (i = 0; i < ARRAY_SIZE(self->raw); i++) {
		if (!self->raw[i].bo)
			continue;
		trn_bo_unmap(self->raw[i].bo);
		trn_bo_free(self->raw[i].bo);
	}
	trn_bo_unmap(self->data);
	trn_bo_free(self->data);
	trn_cmdbuf_destroy(self->cb);
	trn_queue_destroy(self->q);
	trn_device_close(self->dev);
}

/* @size bytes of the data buffer at @align plus @skew bytes; its offset. */
static uint64_t alloc_at(FIXTURE_DATA(isa) *self, uint64_t size,
			 uint64_t align, uint64_t skew)
{
	uint64_t off = (self->used + align - 1) / align * align + skew;

	self->used = off + size + 64;
	if (self->used > DATA_SIZE)
		abort();	/* a test asks for too much: fix the test */
	return off;
}

static uint64_t alloc(FIXTURE_DATA(isa) *self, uint64_t size)
{
	return alloc_at(self, size, 64, 0);
}

static void *ptr(FIXTURE_DATA(isa) *self, uint64_t off)
{
	return self->map + off;
}

static uint64_t dva(FIXTURE_DATA(isa) *self, uint64_t off)
{
	return self->va + off;
}

static void fill_random_bytes(FIXTURE_DATA(isa) *self, uint64_t off,
			      uint64_t len)
{
	unsigned char *p = ptr(self, off);
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)rnd64(&self->seed);
}

/* Run what the command buffer holds as one job; the fence's status. */
static int run_cb(FIXTURE_DATA(isa) *self)
{
	trn_bo_t *bos[2] = { trn_cmdbuf_bo(self->cb), self->data };
	struct trn_job job;
	struct trn_fence f;
	int ret;

	memset(&job, 0, sizeof(job));
	job.cmd_va = trn_cmdbuf_va(self->cb);
	job.cmd_size = (uint32_t)trn_cmdbuf_size(self->cb);
	job.bos = bos;
	job.bo_count = 2;
	ret = trn_submit(self->q, &job, &f);
	if (ret)
		return ret;
	ret = trn_fence_wait(&f, trn_now_ns() + WAIT_NS);
	trn_cmdbuf_reset(self->cb);
	return ret;
}

/* Raw stream @i (a 64 KiB host buffer), empty. */
static struct cmds *raw_stream(FIXTURE_DATA(isa) *self, unsigned int i)
{
	struct stream *st = &self->raw[i];
	void *m;

	if (!st->bo) {
		if (trn_bo_create(self->dev, 64 * 1024, TRN_PLACEMENT_HOST, 0,
				  0, &st->bo) ||
		    trn_bo_map(st->bo, &m))
			abort();
		cmds_init(&st->c, m, trn_bo_va(st->bo), 64 * 1024);
	}
	st->c.len = 0;
	return &st->c;
}

/* Submit raw stream 0 (with every raw buffer listed); its fence. */
static int submit_raw(FIXTURE_DATA(isa) *self, trn_queue_t *q,
		      uint64_t cmd_va, uint32_t cmd_size, struct trn_fence *f)
{
	trn_bo_t *bos[ARRAY_SIZE(self->raw) + 1];
	struct trn_job job;
	unsigned int i, n = 0;

	bos[n++] = self->data;
	for (i = 0; i < ARRAY_SIZE(self->raw); i++)
		if (self->raw[i].bo)
			bos[n++] = self->raw[i].bo;
	memset(&job, 0, sizeof(job));
	job.cmd_va = cmd_va;
	job.cmd_size = cmd_size;
	job.bos = bos;
	job.bo_count = n;
	return trn_submit(q, &job, f);
}

static int run_raw(FIXTURE_DATA(isa) *self, const struct cmds *c)
{
	struct trn_fence f;
	int ret = submit_raw(self, self->q, c->va, (uint32_t)c->len, &f);

	return ret ? ret : trn_fence_wait(&f, trn_now_ns() + WAIT_NS);
}

/* ---- data movement ---- */

TEST_F(isa, nop)
{
	struct cmds *c = raw_stream(self, 0);
	uint64_t out = alloc(self, 8);
	uint32_t hdr[6];
	unsigned int words;

	/* NOPs of 1..5 words with garbage inside, then a WRITE. */
	for (words = 1; words <= 5; words++) {
		memset(hdr, 0xee, sizeof(hdr));
		hdr[0] = TRN_CMD_HEADER(TRN_OP_NOP, 0, words);
		ASSERT_EQ(0, cmds_raw(c, hdr, 8));
		if (words > 1) {
			unsigned char junk[32];

			memset(junk, 0xa5, sizeof(junk));
			ASSERT_EQ(0, cmds_raw(c, junk, 8 * (words - 1)));
		}
	}
	ASSERT_EQ(0, cmds_write32(c, dva(self, out), 0x1234));
	ASSERT_EQ(0, run_raw(self, c));
	EXPECT_EQ(0x1234, *(uint32_t *)ptr(self, out));

	/* Through the library, and a job of NOPs only. */
	ASSERT_EQ(0, trn_cmd_nop(self->cb));
	ASSERT_EQ(0, trn_cmd_nop(self->cb));
	EXPECT_EQ(16, trn_cmdbuf_size(self->cb));
	ASSERT_EQ(0, run_cb(self));
}

TEST_F(isa, write32_write64)
{
	uint64_t base = alloc(self, 4096);
	uint64_t want[512];
	unsigned int i, n = 100;
	uint32_t *w32 = ptr(self, base);

	fill_random_bytes(self, base, 4096);
	memcpy(want, ptr(self, base), 4096);
	for (i = 0; i < n; i++) {
		uint64_t v = rnd64(&self->seed);
		unsigned int slot = rnd_range(&self->seed, 0, 511);

		if (i % 2) {
			/* 32 bits into either half of the 64-bit slot. */
			unsigned int half = rnd_range(&self->seed, 0, 1);

			ASSERT_EQ(0, trn_cmd_write32(self->cb,
						     dva(self, base + 8 * slot +
							 4 * half),
						     (uint32_t)v));
			memcpy((unsigned char *)&want[slot] + 4 * half, &v, 4);
		} else {
			ASSERT_EQ(0, trn_cmd_write64(self->cb,
						     dva(self, base + 8 * slot),
						     v));
			want[slot] = v;
		}
	}
	ASSERT_EQ(0, run_cb(self));
	EXPECT_EQ(0, memcmp(want, ptr(self, base), 4096));

	/*
	 * A 32-bit WRITE stores the low half of value; the high half is
	 * reserved (zero), as is pad: anything else is BAD_ARG and nothing
	 * is stored.
	 */
	{
		struct cmds *c = raw_stream(self, 0);
		struct trn_cmd_write cw = {
			.header = TRN_CMD_HEADER(TRN_OP_WRITE, 0, 3),
			.dst = dva(self, base),
			.value = 0x12345678ull,
		};
		struct trn_queue_status st;

		w32[0] = 0;
		w32[1] = 0xabcdabcd;
		ASSERT_EQ(0, cmds_raw(c, &cw, sizeof(cw)));
		ASSERT_EQ(0, run_raw(self, c));
		EXPECT_EQ(0x12345678u, w32[0]);
		EXPECT_EQ(0xabcdabcdu, w32[1]);
		cw.value = 0xfeedface00000001ull;
		c = raw_stream(self, 0);
		ASSERT_EQ(0, cmds_raw(c, &cw, sizeof(cw)));
		EXPECT_EQ(-EILSEQ, run_raw(self, c));
		ASSERT_EQ(0, trn_queue_status(self->q, &st));
		EXPECT_EQ(TRN_STATUS_BAD_ARG, st.status);
		cw.value = 2;
		cw.pad = 1;
		c = raw_stream(self, 0);
		ASSERT_EQ(0, cmds_raw(c, &cw, sizeof(cw)));
		EXPECT_EQ(-EILSEQ, run_raw(self, c));
		EXPECT_EQ(0x12345678u, w32[0]);
	}
}

TEST_F(isa, fill)
{
	unsigned int i;

	for (i = 0; i < CASES * 2; i++) {
		uint64_t len = 4 * rnd_range(&self->seed, 1, 4096);
		uint64_t skew = 4 * rnd_range(&self->seed, 0, 15);
		uint64_t off = alloc_at(self, len + 128, 64, 0);
		uint32_t pat = (uint32_t)rnd64(&self->seed);
		unsigned char *p = ptr(self, off);
		uint64_t j;

		memset(p, 0x77, len + 128);
		ASSERT_EQ(0, trn_cmd_fill(self->cb, dva(self, off + 64 + skew),
					  pat, len));
		ASSERT_EQ(0, run_cb(self));
		EXPECT_TRUE(all_bytes(p, 0x77, 64 + skew));
		for (j = 0; j < len / 4; j++) {
			uint32_t v;

			memcpy(&v, p + 64 + skew + 4 * j, 4);
			if (v != pat) {
				EXPECT_EQ(pat, v) TH_LOG("case %u word %llu", i,
							 (unsigned long long)j);
				break;
			}
		}
		EXPECT_TRUE(all_bytes(p + 64 + skew + len, 0x77, 64 - skew));
	}
}

TEST_F(isa, copy_1d)
{
	unsigned int i;

	for (i = 0; i < CASES * 2; i++) {
		uint64_t len = rnd_range(&self->seed, 1, 20000);
		uint64_t src = alloc_at(self, len, 64,
					rnd_range(&self->seed, 0, 63));
		uint64_t dst = alloc_at(self, len + 128, 64, 0);
		uint64_t skew = rnd_range(&self->seed, 0, 63);
		unsigned char *d = ptr(self, dst);

		fill_random_bytes(self, src, len);
		memset(d, 0x33, len + 128);
		ASSERT_EQ(0, trn_cmd_copy(self->cb, dva(self, dst + 64 + skew),
					  dva(self, src), len));
		ASSERT_EQ(0, run_cb(self));
		EXPECT_TRUE(all_bytes(d, 0x33, 64 + skew));
		EXPECT_EQ(0, memcmp(d + 64 + skew, ptr(self, src), len))
			TH_LOG("case %u: %llu bytes", i, (unsigned long long)len);
		EXPECT_TRUE(all_bytes(d + 64 + skew + len, 0x33, 64 - skew));
	}
}

TEST_F(isa, copy_2d)
{
	unsigned int i;

	for (i = 0; i < CASES * 2; i++) {
		uint64_t w = rnd_range(&self->seed, 1, 300);
		uint64_t h = rnd_range(&self->seed, 1, 40);
		uint64_t sp = w + rnd_range(&self->seed, 0, 64);
		uint64_t dp = w + rnd_range(&self->seed, 0, 64);
		uint64_t src = alloc(self, sp * h);
		uint64_t dst = alloc(self, dp * h);
		unsigned char *d = ptr(self, dst), *s = ptr(self, src);
		uint64_t r;

		fill_random_bytes(self, src, sp * h);
		memset(d, 0x44, dp * h);
		ASSERT_EQ(0, trn_cmd_copy2d(self->cb, dva(self, dst), dp,
					    dva(self, src), sp, w, h));
		ASSERT_EQ(0, run_cb(self));
		for (r = 0; r < h; r++) {
			EXPECT_EQ(0, memcmp(d + r * dp, s + r * sp, w))
				TH_LOG("case %u row %llu (w %llu h %llu sp %llu dp %llu)",
				       i, (unsigned long long)r,
				       (unsigned long long)w,
				       (unsigned long long)h,
				       (unsigned long long)sp,
				       (unsigned long long)dp);
			/* The gap between rows is not written. */
			EXPECT_TRUE(all_bytes(d + r * dp + w, 0x44, dp - w));
		}
	}
}

TEST_F(isa, timestamp)
{
	uint64_t ts = alloc(self, 64), big = alloc(self, 256 * 1024);
	uint64_t *t = ptr(self, ts);

	if (!(self->info.capabilities & TRN_CAP_TIMESTAMP))
		SKIP(return, "the device has no clock (TRN_CAP_TIMESTAMP clear)");

	memset(t, 0, 32);
	ASSERT_EQ(0, trn_cmd_timestamp(self->cb, dva(self, ts)));
	ASSERT_EQ(0, trn_cmd_fill(self->cb, dva(self, big), 1, 256 * 1024));
	ASSERT_EQ(0, trn_cmd_timestamp(self->cb, dva(self, ts + 8)));
	ASSERT_EQ(0, run_cb(self));
	ASSERT_EQ(0, trn_cmd_timestamp(self->cb, dva(self, ts + 16)));
	ASSERT_EQ(0, run_cb(self));
	EXPECT_NE(0, t[0]);
	EXPECT_LE(t[0], t[1]);
	EXPECT_LE(t[1], t[2]);
	/* A FILL of 256 KiB does not take no time at all across two jobs. */
	EXPECT_LT(t[0], t[2]);
}

/*
 * A chain of @depth nested CALLs: level L (0 = the job's own stream) writes
 * data[L], calls level L + 1, then writes data[8 + L]. Returns the job's
 * status.
 */
static int call_chain(FIXTURE_DATA(isa) *self, unsigned int depth,
		      uint64_t out, struct trn_fence *f)
{
	struct cmds *lv[8];
	unsigned int l;
	int ret;

	for (l = 0; l <= depth; l++)
		lv[l] = raw_stream(self, l);
	/* Innermost first: each level needs the next one's size. */
	for (l = depth + 1; l-- > 0;) {
		cmds_write32(lv[l], dva(self, out + 4 * l), 100 + l);
		if (l < depth)
			cmds_call(lv[l], lv[l + 1]->va, lv[l + 1]->len);
		cmds_write32(lv[l], dva(self, out + 32 + 4 * l), 200 + l);
	}
	ret = submit_raw(self, self->q, lv[0]->va, (uint32_t)lv[0]->len, f);
	return ret ? ret : trn_fence_wait(f, trn_now_ns() + WAIT_NS);
}

TEST_F(isa, call)
{
	uint64_t out = alloc(self, 64);
	uint32_t *o = ptr(self, out);
	struct trn_queue_status st;
	struct trn_fence f;
	unsigned int depth, l;
	uint64_t call_va;

	/* Through the library: one CALL of a raw stream. */
	{
		struct cmds *sub = raw_stream(self, 1);

		cmds_write32(sub, dva(self, out), 5);
		ASSERT_EQ(0, trn_cmd_call(self->cb, sub->va, sub->len));
		ASSERT_EQ(0, trn_cmd_write32(self->cb, dva(self, out + 4), 6));
		/* The called buffer must be listed: run it raw instead. */
		{
			trn_bo_t *bos[3] = { trn_cmdbuf_bo(self->cb), self->data,
					     self->raw[1].bo };
			struct trn_job job;

			memset(&job, 0, sizeof(job));
			job.cmd_va = trn_cmdbuf_va(self->cb);
			job.cmd_size = (uint32_t)trn_cmdbuf_size(self->cb);
			job.bos = bos;
			job.bo_count = 3;
			ASSERT_EQ(0, trn_submit(self->q, &job, &f));
			ASSERT_EQ(0, trn_fence_wait(&f, trn_now_ns() + WAIT_NS));
			trn_cmdbuf_reset(self->cb);
		}
		EXPECT_EQ(5, o[0]);
		EXPECT_EQ(6, o[1]);
	}

	for (depth = 1; depth <= TRN_ISA_MAX_CALL_DEPTH; depth++) {
		memset(o, 0, 64);
		ASSERT_EQ(0, call_chain(self, depth, out, &f))
			TH_LOG("depth %u", depth);
		for (l = 0; l <= depth; l++) {
			EXPECT_EQ(100 + l, o[l]) TH_LOG("depth %u", depth);
			EXPECT_EQ(200 + l, o[8 + l]) TH_LOG("depth %u", depth);
		}
	}

	/* One deeper: the CALL in the deepest allowed level fails. */
	memset(o, 0, 64);
	depth = TRN_ISA_MAX_CALL_DEPTH + 1;
	EXPECT_EQ(-EILSEQ, call_chain(self, depth, out, &f));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(f.seqno, st.failed_seqno);
	EXPECT_EQ(TRN_STATUS_CALL_DEPTH, st.status);
	EXPECT_EQ(-EILSEQ, st.error);
	/* The CALL follows the level's first WRITE (24 bytes). */
	call_va = self->raw[TRN_ISA_MAX_CALL_DEPTH].c.va + 24;
	EXPECT_EQ(24, st.error_offset);
	EXPECT_EQ(call_va, st.error_cmd_va);
	EXPECT_EQ(0, o[8 + TRN_ISA_MAX_CALL_DEPTH]);
	EXPECT_EQ(0, o[depth]);

	/* The queue still runs jobs. */
	ASSERT_EQ(0, call_chain(self, 2, out, &f));
}

/* ---- compute ---- */

struct mm_case {
	uint32_t m, n, k;
	bool bf16, acc;
	bool ta, tb;		/* TRN_MATMUL_TRANSPOSE_A, _B */
};

/*
 * One MATMUL against a double reference. Operands are written as the
 * device reads them (bf16 rounded from f32 with RNE), in the layout the
 * transpose flags name (A as k rows of m, B as n rows of k), the reference
 * uses exactly those values.
 */
static void matmul_case(struct __test_metadata *_metadata,
			FIXTURE_DATA(isa) *self, const struct mm_case *mc)
{
	uint32_t es = mc->bf16 ? 2 : 4, i, j, l;
	uint32_t arows = mc->ta ? mc->k : mc->m, acols = mc->ta ? mc->m : mc->k;
	uint32_t brows = mc->tb ? mc->n : mc->k, bcols = mc->tb ? mc->k : mc->n;
	uint64_t lda = (uint64_t)acols * es + es * rnd_range(&self->seed, 0, 5);
	uint64_t ldb = (uint64_t)bcols * es + es * rnd_range(&self->seed, 0, 5);
	uint64_t ldc = (uint64_t)mc->n * 4 + 4 * rnd_range(&self->seed, 0, 5);
	uint64_t a = alloc(self, lda * arows), b = alloc(self, ldb * brows);
	uint64_t c = alloc(self, ldc * mc->m);
	struct trn_matmul mm = {
		.m = mc->m, .n = mc->n, .k = mc->k,
		.flags = (mc->bf16 ? TRN_MATMUL_BF16 : 0) |
			 (mc->acc ? TRN_MATMUL_ACCUMULATE : 0) |
			 (mc->ta ? TRN_MATMUL_TRANSPOSE_A : 0) |
			 (mc->tb ? TRN_MATMUL_TRANSPOSE_B : 0),
		.a = dva(self, a), .lda = lda,
		.b = dva(self, b), .ldb = ldb,
		.c = dva(self, c), .ldc = ldc,
	};
	float *av = calloc((size_t)mc->m * mc->k, 4);
	float *bv = calloc((size_t)mc->k * mc->n, 4);
	float *c0 = calloc((size_t)mc->m * mc->n, 4);
	unsigned int bad = 0;

	ASSERT_TRUE(av && bv && c0);
	for (i = 0; i < mc->m; i++)
		for (l = 0; l < mc->k; l++) {
			float v = rnd_float(&self->seed, -2, 2);
			unsigned char *p = ptr(self, mc->ta ?
					       a + l * lda + i * es :
					       a + i * lda + l * es);

			if (mc->bf16) {
				uint16_t h = bf16_rne(v);

				memcpy(p, &h, 2);
				v = bf16_to_f32(h);
			} else {
				memcpy(p, &v, 4);
			}
			av[i * mc->k + l] = v;
		}
	for (l = 0; l < mc->k; l++)
		for (j = 0; j < mc->n; j++) {
			float v = rnd_float(&self->seed, -2, 2);
			unsigned char *p = ptr(self, mc->tb ?
					       b + j * ldb + l * es :
					       b + l * ldb + j * es);

			if (mc->bf16) {
				uint16_t h = bf16_rne(v);

				memcpy(p, &h, 2);
				v = bf16_to_f32(h);
			} else {
				memcpy(p, &v, 4);
			}
			bv[l * mc->n + j] = v;
		}
	for (i = 0; i < mc->m; i++)
		for (j = 0; j < mc->n; j++) {
			float v = rnd_float(&self->seed, -4, 4);

			memcpy(ptr(self, c + i * ldc + j * 4), &v, 4);
			c0[i * mc->n + j] = v;
		}
	ASSERT_EQ(0, trn_cmd_matmul(self->cb, &mm));
	ASSERT_EQ(0, run_cb(self));
	for (i = 0; i < mc->m; i++)
		for (j = 0; j < mc->n; j++) {
			double want = mc->acc ? c0[i * mc->n + j] : 0;
			double mag = fabs(want);
			float got;

			for (l = 0; l < mc->k; l++) {
				double t = (double)av[i * mc->k + l] *
					   bv[l * mc->n + j];

				want += t;
				mag += fabs(t);
			}
			memcpy(&got, ptr(self, c + i * ldc + j * 4), 4);
			if (!close_sum(got, want, mag) && bad++ < 3)
				TH_LOG("m %u n %u k %u%s%s%s%s: C[%u][%u] = %.9g, want %.9g",
				       mc->m, mc->n, mc->k,
				       mc->bf16 ? " bf16" : "",
				       mc->acc ? " acc" : "",
				       mc->ta ? " A^T" : "", mc->tb ? " B^T" : "",
				       i, j, got, want);
		}
	EXPECT_EQ(0, bad);
	free(av);
	free(bv);
	free(c0);
}

TEST_F(isa, matmul)
{
	unsigned int i, v;

	if (!(self->info.capabilities & TRN_CAP_COMPUTE))
		SKIP(return, "the device has no compute (TRN_CAP_COMPUTE clear)");

	/* Every combination of BF16, ACCUMULATE, TRANSPOSE_A, TRANSPOSE_B. */
	for (v = 0; v < 16; v++) {
		for (i = 0; i < CASES; i++) {
			struct mm_case mc = {
				.m = rnd_range(&self->seed, 1, 24),
				.n = rnd_range(&self->seed, 1, 24),
				.k = rnd_range(&self->seed, 1, 48),
				.bf16 = v & 1,
				.acc = v & 2,
				.ta = v & 4,
				.tb = v & 8,
			};

			matmul_case(_metadata, self, &mc);
		}
		self->used = 0;
	}
	/* Degenerate shapes: vectors. */
	{
		const struct mm_case edge[] = {
			{ 1, 1, 1, false, false, false, false },
			{ 1, 1, 64, false, true, false, false },
			{ 64, 1, 1, true, false, false, false },
			{ 1, 64, 3, true, true, false, false },
			{ 1, 1, 64, false, false, true, true },
			{ 64, 1, 3, true, true, true, false },
			{ 3, 64, 1, false, true, false, true },
			{ 64, 33, 40, true, false, true, true },
		};

		for (i = 0; i < ARRAY_SIZE(edge); i++)
			matmul_case(_metadata, self, &edge[i]);
	}
}

/*
 * The bf16 rounding rule itself: UNARY COPY and BINARY ADD storing bf16,
 * on values exactly at, just below and just above a tie.
 */
TEST_F(isa, bf16_round_to_nearest_even)
{
	static const struct { uint32_t in; uint16_t out; } cases[] = {
		{ 0x3f800000, 0x3f80 },	/* 1.0: exact */
		{ 0x3f808000, 0x3f80 },	/* tie, even below */
		{ 0x3f818000, 0x3f82 },	/* tie, even above */
		{ 0x3f807fff, 0x3f80 },	/* just below a tie */
		{ 0x3f808001, 0x3f81 },	/* just above a tie */
		{ 0xbf808000, 0xbf80 },	/* negative tie, even below */
		{ 0xbf818000, 0xbf82 },	/* negative tie, even above */
		{ 0x3fff8000, 0x4000 },	/* tie carrying into the exponent */
		{ 0x7f7f8000, 0x7f80 },	/* tie above the largest bf16: inf */
		{ 0x7f7f7fff, 0x7f7f },	/* just below: the largest bf16 */
		{ 0x00018000, 0x0002 },	/* subnormal tie, even above */
		{ 0x00008000, 0x0000 },	/* subnormal tie, even below: 0 */
		{ 0x7f800000, 0x7f80 },	/* inf */
		{ 0xff800000, 0xff80 },	/* -inf */
	};
	const unsigned int n = ARRAY_SIZE(cases);
	uint64_t src = alloc(self, 4 * n), dst = alloc(self, 2 * n + 64);
	uint64_t a = alloc(self, 16), b = alloc(self, 16);
	uint64_t dst2 = alloc(self, 16);
	uint16_t *d = ptr(self, dst), *d2 = ptr(self, dst2);
	float *fa = ptr(self, a), *fb = ptr(self, b);
	unsigned int i;

	if (!(self->info.capabilities & TRN_CAP_COMPUTE))
		SKIP(return, "the device has no compute (TRN_CAP_COMPUTE clear)");

	for (i = 0; i < n; i++) {
		memcpy(ptr(self, src + 4 * i), &cases[i].in, 4);
		/* The reference agrees with itself. */
		ASSERT_EQ(cases[i].out, bf16_rne(u2f(cases[i].in)))
			TH_LOG("case %u", i);
	}
	memset(d, 0xab, 2 * n + 64);
	/* One row of n values, stored as bf16. */
	ASSERT_EQ(0, trn_cmd_unary(self->cb, TRN_UNARY_COPY, TRN_ELEM_DST_BF16,
				   1, n, dva(self, dst), 2 * n, dva(self, src),
				   4 * n));
	/* 1 + 2^-8 and 1 + 3 * 2^-8, each a tie in bf16; 1 + 2^-8 + 2^-20. */
	fa[0] = 1.0f;
	fb[0] = 0x1p-8f;
	fa[1] = 1.0f;
	fb[1] = 0x3p-8f;
	fa[2] = 1.0f;
	fb[2] = 0x1p-8f + 0x1p-20f;
	ASSERT_EQ(0, trn_cmd_binary(self->cb, TRN_BINARY_ADD, TRN_ELEM_DST_BF16,
				    1, 3, dva(self, dst2), 6, dva(self, a), 12,
				    dva(self, b), 12));
	ASSERT_EQ(0, run_cb(self));
	for (i = 0; i < n; i++)
		EXPECT_EQ(cases[i].out, d[i])
			TH_LOG("f32 %#010x: bf16 %#06x, want %#06x", cases[i].in,
			       d[i], cases[i].out);
	/* bf16 results are 2 bytes each: nothing after the row is written. */
	EXPECT_TRUE(all_bytes(d + n, 0xab, 64));
	EXPECT_EQ(0x3f80, d2[0]);
	EXPECT_EQ(0x3f82, d2[1]);
	EXPECT_EQ(0x3f81, d2[2]);
}

struct unary_desc {
	uint32_t op;
	const char *name;
	double lo, hi;
	bool exact;
	uint64_t cap;		/* capability bit beyond TRN_CAP_COMPUTE */
};

static const struct unary_desc unary_ops[] = {
	{ TRN_UNARY_COPY, "copy", -100, 100, true, 0 },
	{ TRN_UNARY_NEG, "neg", -100, 100, true, 0 },
	{ TRN_UNARY_ABS, "abs", -100, 100, true, 0 },
	{ TRN_UNARY_RELU, "relu", -100, 100, true, 0 },
	{ TRN_UNARY_GELU, "gelu", -6, 6, false, 0 },
	{ TRN_UNARY_EXP, "exp", -20, 20, false, 0 },
	{ TRN_UNARY_RECIP, "recip", -100, 100, true, 0 },
	{ TRN_UNARY_SQRT, "sqrt", 0.001, 1000, true, 0 },
	{ TRN_UNARY_TANH, "tanh", -6, 6, false, 0 },
	{ TRN_UNARY_RELU_GRAD, "relu_grad", -10, 10, true, 0 },
	{ TRN_UNARY_LOG, "log", 1e-3, 1e3, false, TRN_CAP_LOG_ERF },
	{ TRN_UNARY_ERF, "erf", -4, 4, false, TRN_CAP_LOG_ERF },
	{ TRN_UNARY_GELU_ERF, "gelu_erf", -8, 8, false, TRN_CAP_LOG_ERF },
	{ TRN_UNARY_GELU_ERF_GRAD, "gelu_erf_grad", -8, 8, false,
	  TRN_CAP_LOG_ERF },
};

/* The exact ones in f32, the others in double. */
static double unary_ref(uint32_t op, float x)
{
	volatile float r;

	switch (op) {
	case TRN_UNARY_COPY:
		return x;
	case TRN_UNARY_NEG:
		return -x;
	case TRN_UNARY_ABS:
		return fabsf(x);
	case TRN_UNARY_RELU:
		return x > 0 ? x : 0.0f;
	case TRN_UNARY_GELU:
		return gelu_ref(x);
	case TRN_UNARY_EXP:
		return exp((double)x);
	case TRN_UNARY_RECIP:
		r = 1.0f / x;
		return r;
	case TRN_UNARY_SQRT:
		return sqrtf(x);
	case TRN_UNARY_TANH:
		return tanh((double)x);
	case TRN_UNARY_LOG:
		return log((double)x);
	case TRN_UNARY_ERF:
		return erf((double)x);
	case TRN_UNARY_GELU_ERF:
		return x * 0.5 * erfc(-x * M_SQRT1_2);
	case TRN_UNARY_GELU_ERF_GRAD:
		return 0.5 * erfc(-x * M_SQRT1_2) +
		       x * exp(-0.5 * x * x) / sqrt(2 * M_PI);
	default:
		return x > 0 ? 1.0f : 0.0f;
	}
}

TEST_F(isa, unary)
{
	unsigned int o, i;

	if (!(self->info.capabilities & TRN_CAP_COMPUTE))
		SKIP(return, "the device has no compute (TRN_CAP_COMPUTE clear)");

	for (o = 0; o < ARRAY_SIZE(unary_ops); o++) {
		const struct unary_desc *u = &unary_ops[o];

		if (u->cap && !(self->info.capabilities & u->cap)) {
			TH_LOG("%s: not on this device (capability bit clear)",
			       u->name);
			continue;
		}
		self->used = 0;
		for (i = 0; i < CASES; i++) {
			uint32_t rows = rnd_range(&self->seed, 1, 16);
			uint32_t cols = rnd_range(&self->seed, 1, 64);
			uint64_t sp = 4 * (cols + rnd_range(&self->seed, 0, 3));
			uint64_t dp = 4 * (cols + rnd_range(&self->seed, 0, 3));
			uint64_t src = alloc(self, sp * rows);
			uint64_t dst = alloc(self, dp * rows);
			unsigned int r, c, bad = 0;

			for (r = 0; r < rows; r++)
				for (c = 0; c < cols; c++) {
					float x = rnd_float(&self->seed, u->lo,
							    u->hi);

					memcpy(ptr(self, src + r * sp + 4 * c),
					       &x, 4);
				}
			memset(ptr(self, dst), 0x5c, dp * rows);
			ASSERT_EQ(0, trn_cmd_unary(self->cb, u->op, 0, rows,
						   cols, dva(self, dst), dp,
						   dva(self, src), sp));
			ASSERT_EQ(0, run_cb(self)) TH_LOG("%s", u->name);
			for (r = 0; r < rows; r++) {
				for (c = 0; c < cols; c++) {
					float x, got;
					double want;
					bool ok;

					memcpy(&x, ptr(self, src + r * sp + 4 * c), 4);
					memcpy(&got, ptr(self, dst + r * dp + 4 * c), 4);
					want = unary_ref(u->op, x);
					ok = u->exact ?
					     f2u(got) == f2u((float)want) :
					     close_transcendental(got, want);
					if (!ok && bad++ < 3)
						TH_LOG("%s(%.9g) = %.9g (%#x), want %.9g",
						       u->name, x, got, f2u(got),
						       want);
				}
				EXPECT_TRUE(all_bytes(ptr(self, dst + r * dp +
							  4 * cols), 0x5c,
						      dp - 4 * cols));
			}
			EXPECT_EQ(0, bad) TH_LOG("%s, %ux%u", u->name, rows,
						 cols);
		}
	}
}

/*
 * TRN_ELEM_SRC_U8: bytes at any address and pitch, each taken as the f32
 * of its value, through the exact operations, to f32 and to bf16 (exact:
 * every result is an integer below 256, a reciprocal, or a square root
 * rounded once); a source pitch of 0 repeats row 0.
 */
TEST_F(isa, unary_from_bytes)
{
	static const uint32_t ops[] = {
		TRN_UNARY_COPY, TRN_UNARY_NEG, TRN_UNARY_RELU_GRAD,
		TRN_UNARY_RECIP, TRN_UNARY_SQRT,
	};
	unsigned int i;

	if (!(self->info.capabilities & TRN_CAP_SRC_U8))
		SKIP(return, "the device has no byte operands (TRN_CAP_SRC_U8 clear)");

	for (i = 0; i < CASES; i++) {
		uint32_t op = ops[i % ARRAY_SIZE(ops)];
		bool bf16 = i & 1, repeat = i % 7 == 3;
		uint32_t rows = rnd_range(&self->seed, 1, 16);
		uint32_t cols = rnd_range(&self->seed, 1, 300);
		uint64_t sp = cols + rnd_range(&self->seed, 0, 5);
		uint64_t es = bf16 ? 2 : 4;
		uint64_t dp = es * (cols + rnd_range(&self->seed, 0, 3));
		uint64_t src, dst;
		unsigned int r, c, bad = 0;

		self->used = 0;
		src = alloc(self, sp * rows + 8) + rnd_range(&self->seed, 0, 7);
		dst = alloc(self, dp * rows);
		for (r = 0; r < rows; r++)
			for (c = 0; c < cols; c++)
				*(uint8_t *)ptr(self, src + r * sp + c) =
					rnd_range(&self->seed, 0, 255);
		memset(ptr(self, dst), 0x5c, dp * rows);
		ASSERT_EQ(0, trn_cmd_unary(self->cb, op,
					   TRN_ELEM_SRC_U8 |
					   (bf16 ? TRN_ELEM_DST_BF16 : 0),
					   rows, cols, dva(self, dst), dp,
					   dva(self, src), repeat ? 0 : sp));
		ASSERT_EQ(0, run_cb(self)) TH_LOG("op %u", op);
		for (r = 0; r < rows; r++) {
			for (c = 0; c < cols; c++) {
				uint8_t v = *(uint8_t *)ptr(self, src +
							     (repeat ? 0 : r) *
							     sp + c);
				float want = unary_ref(op, (float)v);
				uint32_t got32 = 0;
				uint16_t got16 = 0;
				bool ok;

				if (bf16) {
					memcpy(&got16, ptr(self, dst + r * dp +
							   2 * c), 2);
					ok = got16 == bf16_rne(want);
				} else {
					memcpy(&got32, ptr(self, dst + r * dp +
							   4 * c), 4);
					ok = got32 == f2u(want);
				}
				if (!ok && bad++ < 3)
					TH_LOG("op %u of byte %u: %#x, want %.9g",
					       op, v, bf16 ? got16 : got32,
					       want);
			}
			EXPECT_TRUE(all_bytes(ptr(self, dst + r * dp +
						  es * cols), 0x5c,
					      dp - es * cols));
		}
		EXPECT_EQ(0, bad) TH_LOG("op %u, %ux%u, bf16 %d, repeat %d",
					 op, rows, cols, bf16, repeat);
	}
	/* libtrnhal refuses it where the ISA never takes it. */
	EXPECT_EQ(-EINVAL, trn_cmd_binary(self->cb, TRN_BINARY_ADD,
					  TRN_ELEM_SRC_U8, 1, 1, self->va, 4,
					  self->va, 4, self->va, 4));
	EXPECT_EQ(-EINVAL, trn_cmd_unary(self->cb, TRN_UNARY_COPY, 0x08, 1, 1,
					 self->va, 4, self->va, 4));
}

static float binary_ref(uint32_t op, float a, float b)
{
	volatile float r;

	switch (op) {
	case TRN_BINARY_ADD:
		r = a + b;
		break;
	case TRN_BINARY_SUB:
		r = a - b;
		break;
	case TRN_BINARY_MUL:
		r = a * b;
		break;
	case TRN_BINARY_DIV:
		r = a / b;
		break;
	case TRN_BINARY_MAX:
		r = fmaxf(a, b);
		break;
	default:
		r = fminf(a, b);
		break;
	}
	return r;
}

static const char *const binary_names[] = {
	"add", "sub", "mul", "div", "max", "min",
};

/* Broadcast modes of BINARY. */
enum bcast { B_NONE, B_A_ROW, B_B_ROW, B_PER_ROW, B_SCALAR, B_NR };

static const char *const bcast_names[] = {
	"full", "a-pitch-0", "b-pitch-0", "b-per-row", "b-per-row-pitch-0",
};

TEST_F(isa, binary)
{
	unsigned int op, mode, i;

	if (!(self->info.capabilities & TRN_CAP_COMPUTE))
		SKIP(return, "the device has no compute (TRN_CAP_COMPUTE clear)");

	for (op = TRN_BINARY_ADD; op <= TRN_BINARY_MIN; op++) {
		for (mode = 0; mode < B_NR; mode++) {
			self->used = 0;
			for (i = 0; i < CASES / 2; i++) {
				uint32_t rows = rnd_range(&self->seed, 1, 12);
				uint32_t cols = rnd_range(&self->seed, 1, 48);
				uint64_t ap = 4 * (cols + rnd_range(&self->seed, 0, 3));
				uint64_t bp = 4 * (cols + rnd_range(&self->seed, 0, 3));
				uint64_t dp = 4 * (cols + rnd_range(&self->seed, 0, 3));
				uint32_t flags = 0;
				uint64_t a, b, dst;
				unsigned int r, c, bad = 0;

				if (mode == B_PER_ROW || mode == B_SCALAR) {
					flags = TRN_BINARY_B_PER_ROW;
					bp = 4 * rnd_range(&self->seed, 1, 3);
				}
				a = alloc(self, ap * rows);
				b = alloc(self, (bp ? bp : 4) * rows);
				dst = alloc(self, dp * rows);
				for (r = 0; r < rows * ap / 4; r++) {
					float v = rnd_float(&self->seed, -50, 50);

					memcpy(ptr(self, a + 4 * r), &v, 4);
				}
				for (r = 0; r < rows * (bp ? bp : 4) / 4; r++) {
					float v = rnd_float(&self->seed, -50, 50);

					memcpy(ptr(self, b + 4 * r), &v, 4);
				}
				if (mode == B_A_ROW)
					ap = 0;
				if (mode == B_B_ROW || mode == B_SCALAR)
					bp = 0;
				memset(ptr(self, dst), 0x6d, dp * rows);
				ASSERT_EQ(0, trn_cmd_binary(self->cb, op, flags,
							    rows, cols,
							    dva(self, dst), dp,
							    dva(self, a), ap,
							    dva(self, b), bp));
				ASSERT_EQ(0, run_cb(self));
				for (r = 0; r < rows; r++)
					for (c = 0; c < cols; c++) {
						float x, y, got, want;

						memcpy(&x, ptr(self, a + r * ap + 4 * c), 4);
						if (flags)
							memcpy(&y, ptr(self, b + r * bp), 4);
						else
							memcpy(&y, ptr(self, b + r * bp + 4 * c), 4);
						memcpy(&got, ptr(self, dst + r * dp + 4 * c), 4);
						want = binary_ref(op, x, y);
						if (f2u(got) != f2u(want) && bad++ < 3)
							TH_LOG("%s %s [%u][%u]: %.9g op %.9g = %.9g, want %.9g",
							       binary_names[op],
							       bcast_names[mode],
							       r, c, x, y, got,
							       want);
					}
				EXPECT_EQ(0, bad)
					TH_LOG("%s %s %ux%u", binary_names[op],
					       bcast_names[mode], rows, cols);
				for (r = 0; r < rows; r++)
					EXPECT_TRUE(all_bytes(ptr(self, dst + r * dp + 4 * cols),
							      0x6d, dp - 4 * cols));
			}
		}
	}
}

TEST_F(isa, reduce)
{
	unsigned int op, i;

	if (!(self->info.capabilities & TRN_CAP_COMPUTE))
		SKIP(return, "the device has no compute (TRN_CAP_COMPUTE clear)");

	for (op = TRN_REDUCE_SUM; op <= TRN_REDUCE_MAX; op++) {
		self->used = 0;
		for (i = 0; i < CASES; i++) {
			uint32_t rows = rnd_range(&self->seed, 1, 32);
			uint32_t cols = rnd_range(&self->seed, 1, 300);
			uint64_t sp = 4 * (cols + rnd_range(&self->seed, 0, 5));
			uint64_t src = alloc(self, sp * rows);
			uint64_t dst = alloc(self, 4 * rows + 64);
			unsigned int r, c, bad = 0;

			for (r = 0; r < rows; r++)
				for (c = 0; c < cols; c++) {
					float v = rnd_float(&self->seed, -1000,
							    1000);

					memcpy(ptr(self, src + r * sp + 4 * c),
					       &v, 4);
				}
			memset(ptr(self, dst), 0x3e, 4 * rows + 64);
			ASSERT_EQ(0, trn_cmd_reduce(self->cb, op, rows, cols,
						    dva(self, dst),
						    dva(self, src), sp));
			ASSERT_EQ(0, run_cb(self));
			for (r = 0; r < rows; r++) {
				double sum = 0, mag = 0;
				float mx = -INFINITY, got, v;

				for (c = 0; c < cols; c++) {
					memcpy(&v, ptr(self, src + r * sp + 4 * c), 4);
					sum += v;
					mag += fabs(v);
					mx = fmaxf(mx, v);
				}
				memcpy(&got, ptr(self, dst + 4 * r), 4);
				if (op == TRN_REDUCE_SUM ?
				    !close_sum(got, sum, mag) :
				    f2u(got) != f2u(mx)) {
					if (bad++ < 3)
						TH_LOG("%s row %u of %ux%u: %.9g, want %.9g",
						       op ? "max" : "sum", r,
						       rows, cols, got,
						       op ? mx : sum);
				}
			}
			EXPECT_EQ(0, bad);
			EXPECT_TRUE(all_bytes(ptr(self, dst + 4 * rows), 0x3e,
					      64));
		}
	}
}

/* ---- malformed streams ---- */

struct bad_case {
	const char *name;
	uint32_t status;
	int error;
	bool fault;		/* fault_va is checked against @fault */
};

/* A prefix of valid commands, so the bad one sits at offset 32. */
#define BAD_OFF	32

static void prefix(FIXTURE_DATA(isa) *self, struct cmds *c, uint64_t out)
{
	cmds_nop(c);
	cmds_write32(c, dva(self, out), 0xaaaa);
}

/*
 * Record malformed case @i into @c after the prefix; its expectations go
 * to @bc, the length of the job to @len, the faulting address to @fault.
 * Returns false past the last case.
 */
static bool bad_stream(FIXTURE_DATA(isa) *self, unsigned int i,
		       struct cmds *c, struct bad_case *bc, uint32_t *len,
		       uint64_t *fault, uint64_t *prefix_out)
{
	uint64_t out = alloc(self, 256), hi;
	uint32_t w[16];
	struct trn_cmd_write cw = {
		.header = TRN_CMD_HEADER(TRN_OP_WRITE, 0, 3),
		.dst = dva(self, out + 64),
		.value = 1,
	};
	struct trn_cmd_unary cu = {
		.header = TRN_CMD_HEADER(TRN_OP_UNARY, 0,
					 CMD_WORDS(struct trn_cmd_unary)),
		.op = TRN_UNARY_COPY, .rows = 1, .cols = 4,
		.dst = dva(self, out + 128), .src = dva(self, out + 64),
		.dst_pitch = 16, .src_pitch = 16,
	};
	struct trn_cmd_matmul cm = {
		.header = TRN_CMD_HEADER(TRN_OP_MATMUL, 0,
					 CMD_WORDS(struct trn_cmd_matmul)),
		.m = 2, .n = 2, .k = 2,
		.a = dva(self, out), .b = dva(self, out + 64),
		.c = dva(self, out + 128), .lda = 8, .ldb = 8, .ldc = 8,
	};
	struct trn_cmd_binary cb = {
		.header = TRN_CMD_HEADER(TRN_OP_BINARY, 0,
					 CMD_WORDS(struct trn_cmd_binary)),
		.op = TRN_BINARY_ADD, .rows = 1, .cols = 4,
		.dst = dva(self, out + 128), .a = dva(self, out),
		.b = dva(self, out + 64), .dst_pitch = 16, .a_pitch = 16,
		.b_pitch = 16,
	};
	struct trn_cmd_reduce cr = {
		.header = TRN_CMD_HEADER(TRN_OP_REDUCE, 0,
					 CMD_WORDS(struct trn_cmd_reduce)),
		.op = TRN_REDUCE_SUM, .rows = 1, .cols = 4,
		.dst = dva(self, out + 128), .src = dva(self, out),
		.src_pitch = 16,
	};

	uint64_t cap = 0;	/* what the bad command's opcode needs */

	c->len = 0;
	prefix(self, c, out);
	*prefix_out = out;
	memset(w, 0, sizeof(w));
	*fault = 0;
	bc->error = -EILSEQ;
	bc->fault = false;
	switch (i) {
	case 0: case 1: case 2: case 3:
		/* Opcodes that do not exist. */
		w[0] = TRN_CMD_HEADER(((const uint8_t[]){ 0x08, 0x0f, 0x14,
							  0xff })[i], 0, 2);
		cmds_raw(c, w, 16);
		bc->name = "unknown opcode";
		bc->status = TRN_STATUS_BAD_OPCODE;
		break;
	case 4:
		w[0] = TRN_CMD_HEADER(TRN_OP_NOP, 0, 0);
		cmds_raw(c, w, 16);
		bc->name = "size 0";
		bc->status = TRN_STATUS_BAD_SIZE;
		break;
	case 5:
		cw.header = TRN_CMD_HEADER(TRN_OP_WRITE, 0, 2);
		cmds_raw(c, &cw, sizeof(cw));
		bc->name = "WRITE of 2 words";
		bc->status = TRN_STATUS_BAD_SIZE;
		break;
	case 6:
		cw.header = TRN_CMD_HEADER(TRN_OP_WRITE, 0, 4);
		cmds_raw(c, &cw, sizeof(cw));
		cmds_raw(c, w, 8);
		bc->name = "WRITE of 4 words";
		bc->status = TRN_STATUS_BAD_SIZE;
		break;
	case 7:
		/* A FILL of 3 words of which the job holds 2. */
		w[0] = TRN_CMD_HEADER(TRN_OP_FILL, 0, 3);
		cmds_raw(c, w, 16);
		bc->name = "past the end";
		bc->status = TRN_STATUS_BAD_SIZE;
		break;
	case 8:
		/* A NOP claiming the rest of a 64 KiB stream and more. */
		w[0] = TRN_CMD_HEADER(TRN_OP_NOP, 0, 0xffff);
		cmds_raw(c, w, 8);
		bc->name = "NOP past the end";
		bc->status = TRN_STATUS_BAD_SIZE;
		break;
	case 9:
		cw.header = TRN_CMD_HEADER(TRN_OP_WRITE, 0x02, 3);
		cmds_raw(c, &cw, sizeof(cw));
		bc->name = "WRITE flag 0x02";
		bc->status = TRN_STATUS_BAD_ARG;
		break;
	case 10:
		w[0] = TRN_CMD_HEADER(TRN_OP_NOP, 0x80, 1);
		cmds_raw(c, w, 8);
		bc->name = "NOP flag 0x80";
		bc->status = TRN_STATUS_BAD_ARG;
		break;
	case 11:
		cm.header = TRN_CMD_HEADER(TRN_OP_MATMUL, 0x10,
					   CMD_WORDS(struct trn_cmd_matmul));
		cmds_raw(c, &cm, sizeof(cm));
		bc->name = "MATMUL flag 0x10";
		bc->status = TRN_STATUS_BAD_ARG;
		break;
	case 12:
		cap = TRN_CAP_COMPUTE;
		cu.op = 99;
		cmds_raw(c, &cu, sizeof(cu));
		bc->name = "UNARY op 99";
		bc->status = TRN_STATUS_BAD_ARG;
		break;
	case 13:
		cap = TRN_CAP_COMPUTE;
		cb.op = 6;
		cmds_raw(c, &cb, sizeof(cb));
		bc->name = "BINARY op 6";
		bc->status = TRN_STATUS_BAD_ARG;
		break;
	case 14:
		cap = TRN_CAP_COMPUTE;
		cr.op = 2;
		cmds_raw(c, &cr, sizeof(cr));
		bc->name = "REDUCE op 2";
		bc->status = TRN_STATUS_BAD_ARG;
		break;
	case 15:
		cap = TRN_CAP_SEMAPHORES;
		cmds_sem(c, false, TRN_NUM_SEMAPHORES, 1);
		bc->name = "semaphore 256";
		bc->status = TRN_STATUS_BAD_ARG;
		break;
	case 16:
		cap = TRN_CAP_COMPUTE;
		cm.m = TRN_ISA_MAX_DIM + 1;
		cmds_raw(c, &cm, sizeof(cm));
		bc->name = "MATMUL m beyond TRN_ISA_MAX_DIM";
		bc->status = TRN_STATUS_BAD_ARG;
		break;
	case 17:
		cw.dst += 2;
		cmds_raw(c, &cw, sizeof(cw));
		bc->name = "WRITE32 to a 2-byte aligned address";
		bc->status = TRN_STATUS_BAD_ALIGN;
		break;
	case 18:
		cw.header = TRN_CMD_HEADER(TRN_OP_WRITE, TRN_WRITE_64, 3);
		cw.dst += 4;
		cmds_raw(c, &cw, sizeof(cw));
		bc->name = "WRITE64 to a 4-byte aligned address";
		bc->status = TRN_STATUS_BAD_ALIGN;
		break;
	case 19:
		cap = TRN_CAP_COMPUTE;
		cu.src += 2;
		cmds_raw(c, &cu, sizeof(cu));
		bc->name = "UNARY f32 source misaligned";
		bc->status = TRN_STATUS_BAD_ALIGN;
		break;
	case 20:
		cap = TRN_CAP_COMPUTE;
		cm.a += 1;
		cmds_raw(c, &cm, sizeof(cm));
		bc->name = "MATMUL A misaligned";
		bc->status = TRN_STATUS_BAD_ALIGN;
		break;
	case 21:
		/* Below the VA window: the low 4 GiB are never mapped. */
		cw.dst = 0x1000;
		cmds_raw(c, &cw, sizeof(cw));
		*fault = 0x1000;
		bc->name = "WRITE below the VA window";
		bc->status = TRN_STATUS_MMU_FAULT;
		bc->error = -EFAULT;
		bc->fault = true;
		break;
	case 22:
		/* A COPY from the top of the window, where nothing is. */
		hi = self->info.va_start + self->info.va_size - 4096;
		cmds_copy(c, dva(self, out + 128), hi, 64);
		*fault = hi;
		bc->name = "COPY from the top of the VA window";
		bc->status = TRN_STATUS_MMU_FAULT;
		bc->error = -EFAULT;
		bc->fault = true;
		break;
	case 23:
		/*
		 * A FILL running off the end of the data buffer into the
		 * unmapped guard page behind every buffer (memory.md).
		 */
		cmds_fill(c, self->va + DATA_SIZE - 64, 0, 128);
		*fault = self->va + DATA_SIZE;
		bc->name = "FILL past the end of a buffer";
		bc->status = TRN_STATUS_MMU_FAULT;
		bc->error = -EFAULT;
		bc->fault = true;
		break;
	case 24:
		/* TRN_ELEM_SRC_U8 is UNARY's alone. */
		cb.header = TRN_CMD_HEADER(TRN_OP_BINARY, TRN_ELEM_SRC_U8,
					   CMD_WORDS(struct trn_cmd_binary));
		cmds_raw(c, &cb, sizeof(cb));
		bc->name = "BINARY flag TRN_ELEM_SRC_U8";
		bc->status = TRN_STATUS_BAD_ARG;
		break;
	case 25:
		cu.header = TRN_CMD_HEADER(TRN_OP_UNARY, 0x08,
					   CMD_WORDS(struct trn_cmd_unary));
		cmds_raw(c, &cu, sizeof(cu));
		bc->name = "UNARY flag 0x08";
		bc->status = TRN_STATUS_BAD_ARG;
		break;
	case 26:
		/* A byte source may sit anywhere; the f32 results may not. */
		cap = TRN_CAP_COMPUTE;
		cu.header = TRN_CMD_HEADER(TRN_OP_UNARY, TRN_ELEM_SRC_U8,
					   CMD_WORDS(struct trn_cmd_unary));
		cu.src += 1;
		cu.dst += 2;
		cmds_raw(c, &cu, sizeof(cu));
		bc->name = "UNARY from bytes to a misaligned f32 address";
		bc->status = TRN_STATUS_BAD_ALIGN;
		break;
	default:
		return false;
	}
	/*
	 * Past the header checks, a device without the opcode's engine
	 * stops at it (isa.md, step 5a) before any argument is looked at.
	 */
	if (cap && !(self->info.capabilities & cap)) {
		bc->status = TRN_STATUS_UNSUPPORTED;
		bc->error = -EOPNOTSUPP;
		bc->fault = false;
	}
	*len = (uint32_t)c->len;
	return true;
}

/*
 * Each malformed stream fails its job with its status and errno, names
 * the offending command, and the next job of the queue runs.
 */
TEST_F(isa, malformed)
{
	struct cmds *c = raw_stream(self, 0);
	struct trn_queue_status st, before;
	struct bad_case bc;
	uint64_t fault, pre, out = alloc(self, 64);
	uint32_t len;
	unsigned int i;

	for (i = 0; bad_stream(self, i, c, &bc, &len, &fault, &pre); i++) {
		struct trn_fence f;
		int ret;

		ASSERT_EQ(0, trn_queue_status(self->q, &before));
		ASSERT_EQ(0, submit_raw(self, self->q, c->va, len, &f));
		ret = trn_fence_wait(&f, trn_now_ns() + WAIT_NS);
		EXPECT_EQ(bc.error, ret) TH_LOG("case %u: %s", i, bc.name);
		EXPECT_EQ(bc.error, trn_fence_status(&f));
		ASSERT_EQ(0, trn_queue_status(self->q, &st));
		EXPECT_EQ(before.jobs_failed + 1, st.jobs_failed)
			TH_LOG("case %u: %s", i, bc.name);
		EXPECT_EQ(f.seqno, st.failed_seqno);
		EXPECT_EQ(f.seqno, st.completed_seqno);
		EXPECT_EQ(bc.status, st.status) TH_LOG("case %u: %s", i, bc.name);
		EXPECT_EQ(bc.error, st.error);
		EXPECT_EQ(BAD_OFF, st.error_offset)
			TH_LOG("case %u: %s", i, bc.name);
		EXPECT_EQ(c->va + BAD_OFF, st.error_cmd_va)
			TH_LOG("case %u: %s", i, bc.name);
		if (bc.fault) {
			EXPECT_EQ(fault, st.fault_va)
				TH_LOG("case %u: %s", i, bc.name);
			EXPECT_TRUE(st.state & TRN_QUEUE_FAULTED);
		}
		EXPECT_FALSE(st.state & TRN_QUEUE_GUILTY);
		/* The prefix ran. */
		EXPECT_EQ(0xaaaa, *(uint32_t *)ptr(self, pre))
			TH_LOG("case %u: %s", i, bc.name);

		/* The next job of the same queue runs. */
		ASSERT_EQ(0, trn_cmd_write32(self->cb, dva(self, out), i + 1));
		ASSERT_EQ(0, run_cb(self)) TH_LOG("after case %u", i);
		EXPECT_EQ(i + 1, *(uint32_t *)ptr(self, out));
	}
	EXPECT_LE(20, i);
}

/* A failure inside a CALLed buffer is located in that buffer. */
TEST_F(isa, malformed_in_call)
{
	struct cmds *top = raw_stream(self, 0), *sub = raw_stream(self, 1);
	uint64_t out = alloc(self, 64);
	struct trn_queue_status st;
	struct trn_fence f;
	uint32_t w[4] = { TRN_CMD_HEADER(0x0e, 0, 2), 0, 0, 0 };

	cmds_write32(sub, dva(self, out), 1);		/* 0 */
	cmds_nop(sub);					/* 24 */
	cmds_raw(sub, w, 16);				/* 32: bad */
	cmds_nop(top);
	cmds_call(top, sub->va, sub->len);		/* 8 */
	cmds_write32(top, dva(self, out + 4), 2);
	ASSERT_EQ(0, submit_raw(self, self->q, top->va, (uint32_t)top->len, &f));
	EXPECT_EQ(-EILSEQ, trn_fence_wait(&f, trn_now_ns() + WAIT_NS));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(TRN_STATUS_BAD_OPCODE, st.status);
	EXPECT_EQ(32, st.error_offset);
	EXPECT_EQ(sub->va + 32, st.error_cmd_va);
	EXPECT_EQ(1, *(uint32_t *)ptr(self, out));
	/* Execution stops at the failure. */
	EXPECT_EQ(0, *(uint32_t *)ptr(self, out + 4));

	/* A CALL of unmapped memory is an MMU fault at the callee. */
	top->len = 0;
	cmds_call(top, 0x2000, 64);
	ASSERT_EQ(0, submit_raw(self, self->q, top->va, (uint32_t)top->len, &f));
	EXPECT_EQ(-EFAULT, trn_fence_wait(&f, trn_now_ns() + WAIT_NS));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(TRN_STATUS_MMU_FAULT, st.status);
	EXPECT_EQ(0x2000, st.fault_va);
	/* A CALL of a misaligned or badly sized buffer is refused. */
	top->len = 0;
	cmds_call(top, sub->va + 4, 16);
	ASSERT_EQ(0, submit_raw(self, self->q, top->va, (uint32_t)top->len, &f));
	EXPECT_EQ(-EILSEQ, trn_fence_wait(&f, trn_now_ns() + WAIT_NS));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(TRN_STATUS_BAD_ALIGN, st.status);
	EXPECT_EQ(0, st.error_offset);
	EXPECT_EQ(top->va, st.error_cmd_va);
	top->len = 0;
	cmds_call(top, sub->va, 12);
	ASSERT_EQ(0, submit_raw(self, self->q, top->va, (uint32_t)top->len, &f));
	EXPECT_EQ(-EILSEQ, trn_fence_wait(&f, trn_now_ns() + WAIT_NS));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_NE(TRN_STATUS_OK, st.status);
}

/*
 * While this context runs every malformed stream, a forked child with its
 * own open of the device runs good jobs on the same core: all of them
 * complete with the right data and its queue has no failure.
 */
TEST_F(isa, other_context_unaffected)
{
	int pipefd[2], status;
	struct cmds *c = raw_stream(self, 0);
	struct bad_case bc;
	uint64_t fault, pre;
	uint32_t len;
	unsigned int i;
	char go;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		trn_device_t *dev;
		trn_queue_t *q;
		trn_cmdbuf_t *cb;
		trn_bo_t *bo;
		struct trn_queue_status st;
		struct trn_fence f[64];
		uint32_t *m;
		unsigned int j;

		close(pipefd[0]);
		if (trn_device_open(self->minor, &dev) || dev == self->dev ||
		    trn_queue_create(dev, 0, TRN_PRIORITY_NORMAL, &q) ||
		    trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &bo) ||
		    trn_bo_map(bo, (void **)&m) ||
		    trn_cmdbuf_create(dev, 64 * 64, &cb))
			_exit(10);
		memset(m, 0, 4096);
		if (write(pipefd[1], "g", 1) != 1)
			_exit(11);
		for (j = 0; j < 64; j++) {
			trn_bo_t *bos[2] = { trn_cmdbuf_bo(cb), bo };
			struct trn_job job;
			uint64_t at = trn_cmdbuf_tail_va(cb);

			if (trn_cmd_write32(cb, trn_bo_va(bo) + 4 * j, j + 1))
				_exit(12);
			memset(&job, 0, sizeof(job));
			job.cmd_va = at;
			job.cmd_size = (uint32_t)(trn_cmdbuf_tail_va(cb) - at);
			job.bos = bos;
			job.bo_count = 2;
			if (trn_submit(q, &job, &f[j]))
				_exit(13);
		}
		if (trn_fence_wait_many(f, 64, 0, trn_now_ns() + WAIT_NS,
					NULL))
			_exit(14);
		for (j = 0; j < 64; j++)
			if (trn_fence_status(&f[j]) != 0 || m[j] != j + 1)
				_exit(15);
		if (trn_queue_status(q, &st) || st.jobs_failed || st.state ||
		    st.completed_seqno != 64)
			_exit(16);
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &go, 1));
	close(pipefd[0]);
	for (i = 0; bad_stream(self, i, c, &bc, &len, &fault, &pre); i++) {
		struct trn_fence f;

		ASSERT_EQ(0, submit_raw(self, self->q, c->va, len, &f));
		EXPECT_EQ(bc.error, trn_fence_wait(&f, trn_now_ns() + WAIT_NS))
			TH_LOG("case %u: %s", i, bc.name);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
