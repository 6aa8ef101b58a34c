// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn-bench - microbenchmarks of the trn stack, each next to a baseline
 * measured in the same run on the same machine (Documentation/
 * benchmarks.md): what a figure costs matters less than its ratio to what
 * the machine can do at best (a bare ioctl, a thread wake-up, memcpy, a
 * vgem buffer).
 *
 * Output: a human table on stdout, then one line per figure,
 * "name value unit" (lines starting with '#' are comments); with
 * --machine only the figure lines. Exit status 0 when every benchmark ran,
 * 1 when one failed (its figures are missing), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "trn_accel.h"
#include "trn_isa.h"
#include "trnhal.h"

#ifdef TRN_BENCH_EAGER
/*
 * ---- HOOK: examples/eager ----
 * tools/meson.build defines TRN_BENCH_EAGER when examples/eager provides
 * the function below (eager_dep); eager_mlp_ops_per_s then comes from the
 * eager library itself instead of the libtrnhal-equivalent sequence.
 */
#include TRN_BENCH_EAGER_HEADER
#endif

#define MIB		(1024ull * 1024)
#define COPY_SIZE	(64 * MIB)
#define WAIT_NS		(120ll * 1000000000)	/* any single wait */

static bool quick;
static bool machine;
static const char *only;	/* --only: comma-separated benchmark names */
static int failures;

/* ------------------------------------------------------------ figures */

struct figure {
	char name[64];
	double value;
	char unit[16];
	double target;		/* 0: none */
	bool target_max;	/* target is an upper bound */
	char note[96];
};

static struct figure figs[96];
static size_t nfigs;

static struct figure *fig(const char *name, double value, const char *unit)
{
	struct figure *f;

	if (nfigs == sizeof(figs) / sizeof(figs[0]))
		abort();
	f = &figs[nfigs++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->value = value;
	snprintf(f->unit, sizeof(f->unit), "%s", unit);
	return f;
}

static void fig_target(struct figure *f, double target, bool is_max)
{
	f->target = target;
	f->target_max = is_max;
}

static void fig_note(struct figure *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->note, sizeof(f->note), fmt, ap);
	va_end(ap);
}

static double fig_value(const char *name)
{
	size_t i;

	for (i = 0; i < nfigs; i++)
		if (!strcmp(figs[i].name, name))
			return figs[i].value;
	return NAN;
}

static void fail(const char *what, int err)
{
	fprintf(stderr, "trn-bench: %s: %s\n", what, trn_strerror(err));
	failures++;
}

static void progress(const char *fmt, ...)
{
	va_list ap;

	if (machine)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "trn-bench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* -------------------------------------------------------------- timing */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of @n samples (sorts them). */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Whether benchmark @name runs (--only). */
static bool want(const char *name)
{
	size_t len = strlen(name);
	const char *p = only;

	if (!p)
		return true;
	while ((p = strstr(p, name))) {
		if ((p == only || p[-1] == ',') && (!p[len] || p[len] == ','))
			return true;
		p += len;
	}
	return false;
}

static size_t iters(size_t full, size_t fast)
{
	return quick ? fast : full;
}

/* Voluntary context switches of the calling thread so far. */
static long nvcsw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

/* Sum of the drm-engine-core* times of @fd's context (fdinfo), in ns. */
static int64_t engine_ns(int fd)
{
	char path[64], line[256];
	long long v, sum = 0;
	unsigned int core;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "drm-engine-core%u: %lld", &core, &v) == 2)
			sum += v;
	fclose(f);
	return sum;
}

/* ------------------------------------------------------------ baselines */

/* A bare DRM_IOCTL_VERSION (no strings asked for). */
static int drm_version(int fd)
{
	struct drm_version v;

	memset(&v, 0, sizeof(v));
	return ioctl(fd, DRM_IOCTL_VERSION, &v) ? -errno : 0;
}

/*
 * ioctl_roundtrip_ns: DRM_IOCTL_VERSION on the device's fd, timed in
 * batches of 32 calls (so that the clock is read rarely); the figure is
 * the median over the batches of the time per call.
 */
static void bench_ioctl(int fd)
{
	const size_t batch = 32, n = iters(1000, 100);
	double *s = calloc(n, sizeof(*s));
	size_t i, j;
	int ret;

	progress("ioctl round trip");
	for (i = 0; i < 200; i++)	/* warm up */
		drm_version(fd);
	for (i = 0; i < n; i++) {
		int64_t t0 = now_ns();

		for (j = 0; j < batch; j++) {
			ret = drm_version(fd);
			if (ret) {
				fail("DRM_IOCTL_VERSION", ret);
				free(s);
				return;
			}
		}
		s[i] = (double)(now_ns() - t0) / batch;
	}
	fig("ioctl_roundtrip_ns", median(s, n), "ns");
	free(s);
}

struct pingpong {
	int ping, pong;		/* eventfds: main -> peer, peer -> main */
	size_t rounds;
};

static void *pingpong_peer(void *arg)
{
	struct pingpong *p = arg;
	uint64_t v;
	size_t i;

	for (i = 0; i < p->rounds; i++) {
		if (read(p->ping, &v, sizeof(v)) != sizeof(v))
			break;
		v = 1;
		if (write(p->pong, &v, sizeof(v)) != sizeof(v))
			break;
	}
	return NULL;
}

/*
 * wakeup_pingpong_ns: two threads, two eventfds; the main thread writes
 * the peer's eventfd and blocks reading its own, the peer (blocked in its
 * read) wakes and answers. One figure is one ROUND TRIP: two wake-ups of a
 * blocked thread by another, as in a submit (the submitter wakes the
 * device side) and its completion (the device side wakes the waiter).
 * Median of per-round-trip times. Measured in rounds interleaved with
 * the NOP latency samples (bench_wakeup_latency()), so that both see the
 * same load of the (shared, emulated) machine.
 */
static int pingpong(double *s, size_t n)
{
	struct pingpong p;
	const size_t warm = 20;
	pthread_t th;
	uint64_t v = 1;
	size_t i;
	int ret = 0;

	p.ping = eventfd(0, EFD_CLOEXEC);
	p.pong = eventfd(0, EFD_CLOEXEC);
	p.rounds = warm + n;
	if (p.ping < 0 || p.pong < 0 ||
	    pthread_create(&th, NULL, pingpong_peer, &p)) {
		ret = -errno;
		if (p.ping >= 0)
			close(p.ping);
		if (p.pong >= 0)
			close(p.pong);
		return ret ? ret : -EAGAIN;
	}
	for (i = 0; i < warm + n; i++) {
		int64_t t0 = now_ns();

		v = 1;
		if (write(p.ping, &v, sizeof(v)) != sizeof(v) ||
		    read(p.pong, &v, sizeof(v)) != sizeof(v)) {
			/* The peer is stuck in read(): cannot join it. */
			fail("eventfd ping-pong", -errno);
			exit(1);
		}
		if (i >= warm)
			s[i - warm] = (double)(now_ns() - t0);
	}
	pthread_join(th, NULL);
	close(p.ping);
	close(p.pong);
	return 0;
}

/* memcpy of 64 MiB between two prefaulted heap buffers; best of runs. */
static void bench_memcpy(void)
{
	const size_t runs = iters(5, 3);
	unsigned char *a = malloc(COPY_SIZE), *b = malloc(COPY_SIZE);
	double best = 0;
	size_t i;

	progress("memcpy 64 MiB");
	if (!a || !b) {
		fail("memcpy buffers", -ENOMEM);
		goto out;
	}
	memset(a, 1, COPY_SIZE);
	memset(b, 2, COPY_SIZE);
	for (i = 0; i < runs; i++) {
		int64_t t0 = now_ns();
		double gbps;

		memcpy(i % 2 ? a : b, i % 2 ? b : a, COPY_SIZE);
		__asm__ __volatile__("" ::: "memory");
		gbps = (double)COPY_SIZE / (double)(now_ns() - t0);
		if (gbps > best)
			best = gbps;
	}
	fig("memcpy_gbps", best, "GB/s");
out:
	free(a);
	free(b);
}

/* vgem's card node, loading vgem if needed; fd or -errno. */
static int open_vgem(void)
{
	bool loaded = false;
	size_t i;
	glob_t g;

	for (;;) {
		if (!glob("/dev/dri/card*", 0, NULL, &g)) {
			for (i = 0; i < g.gl_pathc; i++) {
				char name[16] = "";
				struct drm_version v;
				int fd = open(g.gl_pathv[i], O_RDWR | O_CLOEXEC);

				if (fd < 0)
					continue;
				memset(&v, 0, sizeof(v));
				v.name = name;
				v.name_len = sizeof(name) - 1;
				if (!ioctl(fd, DRM_IOCTL_VERSION, &v) &&
				    !strcmp(name, "vgem")) {
					globfree(&g);
					return fd;
				}
				close(fd);
			}
			globfree(&g);
		}
		if (loaded)
			return -ENODEV;
		if (system("modprobe -q vgem 2>/dev/null") != 0)
			return -ENODEV;
		loaded = true;
	}
}

/*
 * vgem_create_destroy_ns: DRM_IOCTL_MODE_CREATE_DUMB of a 4 KiB buffer
 * (32 x 32 pixels of 32 bits) and DRM_IOCTL_MODE_DESTROY_DUMB, median of
 * per-pair times.
 */
static void bench_vgem(void)
{
	const size_t n = iters(4000, 400);
	double *s = calloc(n, sizeof(*s));
	size_t i;
	int fd;

	progress("vgem dumb buffers");
	fd = open_vgem();
	if (fd < 0) {
		fail("vgem (modprobe vgem)", fd);
		free(s);
		return;
	}
	for (i = 0; i < n + 100; i++) {
		struct drm_mode_create_dumb c = {
			.width = 32, .height = 32, .bpp = 32,
		};
		struct drm_mode_destroy_dumb d;
		int64_t t0 = now_ns();

		if (ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c)) {
			fail("vgem CREATE_DUMB", -errno);
			break;
		}
		d.handle = c.handle;
		if (ioctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d)) {
			fail("vgem DESTROY_DUMB", -errno);
			break;
		}
		if (i >= 100)
			s[i - 100] = (double)(now_ns() - t0);
	}
	close(fd);
	if (i == n + 100)
		fig("vgem_create_destroy_ns", median(s, n), "ns");
	free(s);
}

/* ----------------------------------------------------- trn: buffers */

/*
 * bo_create_free_ns: trn_bo_create() of a 4 KiB HBM buffer and
 * trn_bo_free(), median of per-pair times (bo_create_free_host_ns: the
 * same with pinned host memory). Profile: the same pair as raw ioctls
 * (BO_CREATE, GEM_CLOSE), and create and free timed apart.
 */
static void bench_bo(trn_device_t *dev)
{
	const size_t n = iters(4000, 400);
	double *s = calloc(n, sizeof(*s)), *c = calloc(n, sizeof(*c));
	double *r = calloc(n, sizeof(*r));
	int fd = trn_device_fd(dev), ret = 0;
	unsigned int pl;
	size_t i;

	progress("buffer create/free");
	for (pl = 0; pl < 2; pl++) {
		uint32_t placement = pl ? TRN_PLACEMENT_HOST : TRN_PLACEMENT_HBM;

		for (i = 0; i < n + 100; i++) {
			int64_t t0, t1, t2;
			trn_bo_t *bo;

			t0 = now_ns();
			ret = trn_bo_create(dev, 4096, placement, 0, 0, &bo);
			if (ret)
				break;
			t1 = now_ns();
			trn_bo_free(bo);
			t2 = now_ns();
			if (i >= 100) {
				s[i - 100] = (double)(t2 - t0);
				c[i - 100] = (double)(t1 - t0);
			}
		}
		for (i = 0; !ret && i < n + 100; i++) {
			struct drm_trn_bo_create bc = {
				.size = 4096, .placement = placement,
			};
			struct drm_gem_close gc = { 0 };
			int64_t t0 = now_ns();

			if (ioctl(fd, DRM_IOCTL_TRN_BO_CREATE, &bc) ||
			    ((gc.handle = bc.handle),
			     ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc))) {
				ret = -errno;
				break;
			}
			if (i >= 100)
				r[i - 100] = (double)(now_ns() - t0);
		}
		if (ret) {
			fail(pl ? "host buffer create/free" :
				  "HBM buffer create/free", ret);
			break;
		}
		fig(pl ? "bo_create_free_host_ns" : "bo_create_free_ns",
		    median(s, n), "ns");
		fig(pl ? "prof_bo_create_host_ns" : "prof_bo_create_hbm_ns",
		    median(c, n), "ns");
		fig(pl ? "prof_bo_raw_host_ns" : "prof_bo_raw_hbm_ns",
		    median(r, n), "ns");
	}
	free(s);
	free(c);
	free(r);
}

/* ------------------------------------------------ trn: submission */

/* A NOP-only command buffer and the job that runs it. */
struct noop {
	trn_cmdbuf_t *cb;
	trn_bo_t *bo;
	struct trn_job job;
};

static int noop_init(trn_device_t *dev, struct noop *n)
{
	int ret;

	memset(n, 0, sizeof(*n));
	ret = trn_cmdbuf_create(dev, 4096, &n->cb);
	if (ret)
		return ret;
	ret = trn_cmd_nop(n->cb);
	if (ret) {
		trn_cmdbuf_destroy(n->cb);
		return ret;
	}
	n->bo = trn_cmdbuf_bo(n->cb);
	n->job.cmd_va = trn_cmdbuf_va(n->cb);
	n->job.cmd_size = (uint32_t)trn_cmdbuf_size(n->cb);
	n->job.bos = &n->bo;
	n->job.bo_count = 1;
	return 0;
}

/*
 * submit_noop_latency_ns: trn_submit() of one NOP job (listing its command
 * buffer) and trn_fence_wait() for it, median of per-job times. Profile,
 * each a median: the submit call alone (prof_noop_submit_ns); submit then
 * spinning on the status page without ever sleeping
 * (prof_noop_poll_latency_ns); device time per job from fdinfo
 * (prof_noop_device_ns); voluntary context switches per job in the
 * submit+wait loop (prof_noop_sleeps_per_job).
 *
 * The samples are taken in ROUNDS rounds, each round a block of ping-pong
 * round trips, then a block of NOP jobs waited for, then a block of NOP
 * jobs polled for; the medians are over all rounds.
 */
#define ROUNDS	5

struct latency {
	double *pp, *lat, *sub, *poll;
	size_t n;		/* samples of each kind so far */
	int64_t engine;		/* device time of the waited-for jobs */
	long sleeps;
};

static int latency_round(trn_device_t *dev, trn_queue_t *q, struct noop *nj,
			 struct latency *l, size_t n)
{
	int fd = trn_device_fd(dev);
	const size_t warm = 10;
	struct trn_fence f;
	int64_t e0 = 0;
	long cs0 = 0;
	size_t i;
	int ret = 0;

	ret = pingpong(l->pp + l->n, n);
	for (i = 0; i < warm + n && !ret; i++) {
		int64_t t0, t1;

		if (i == warm) {
			e0 = engine_ns(fd);
			cs0 = nvcsw();
		}
		t0 = now_ns();
		ret = trn_submit(q, &nj->job, &f);
		t1 = now_ns();
		if (!ret)
			ret = trn_fence_wait(&f, now_ns() + WAIT_NS);
		if (i >= warm) {
			l->lat[l->n + i - warm] = (double)(now_ns() - t0);
			l->sub[l->n + i - warm] = (double)(t1 - t0);
		}
	}
	if (ret)
		return ret;
	l->sleeps += nvcsw() - cs0;
	l->engine += engine_ns(fd) - e0;
	for (i = 0; i < n && !ret; i++) {
		int64_t t0 = now_ns();

		ret = trn_submit(q, &nj->job, &f);
		while (!ret && (ret = trn_fence_status(&f)) == 1)
			ret = 0;	/* pending: spin, never sleep */
		l->poll[l->n + i] = (double)(now_ns() - t0);
	}
	if (!ret)
		l->n += n;
	return ret;
}

static void bench_wakeup_latency(trn_device_t *dev, trn_queue_t *q,
				 struct noop *nj)
{
	const size_t per = iters(600, 60), total = ROUNDS * per;
	struct latency l = {
		.pp = calloc(total, sizeof(double)),
		.lat = calloc(total, sizeof(double)),
		.sub = calloc(total, sizeof(double)),
		.poll = calloc(total, sizeof(double)),
	};
	unsigned int r;
	int ret = 0;

	progress("eventfd ping-pong and NOP latency, %d rounds", ROUNDS);
	if (!l.pp || !l.lat || !l.sub || !l.poll)
		ret = -ENOMEM;
	for (r = 0; r < ROUNDS && !ret; r++)
		ret = latency_round(dev, q, nj, &l, per);
	if (ret) {
		fail("ping-pong / NOP submit and wait", ret);
	} else {
		fig("wakeup_pingpong_ns", median(l.pp, l.n), "ns");
		fig("submit_noop_latency_ns", median(l.lat, l.n), "ns");
		fig("prof_noop_submit_ns", median(l.sub, l.n), "ns");
		fig("prof_noop_poll_latency_ns", median(l.poll, l.n), "ns");
		if (l.engine > 0)
			fig("prof_noop_device_ns", (double)l.engine / l.n,
			    "ns");
		fig("prof_noop_sleeps_per_job", (double)l.sleeps / l.n,
		    "switches");
	}
	free(l.pp);
	free(l.lat);
	free(l.sub);
	free(l.poll);
}

/*
 * submit_pipelined_ns_per_job: 10,000 NOP jobs submitted back to back
 * with trn_submit() on one queue, then one wait for the last: total time
 * divided by the number of jobs (prof_pipelined_submit_ns_per_job: the
 * submitting part alone). With @batch > 1, trn_submit_batch() of @batch
 * jobs at a time.
 */
static int pipelined(trn_queue_t *q, struct noop *nj, size_t total,
		     size_t batch, double *per_job, double *submit_per_job)
{
	struct trn_job *jobs = calloc(batch, sizeof(*jobs));
	struct trn_fence f = { 0 }, *fences = calloc(batch, sizeof(*fences));
	int64_t t0, t1;
	size_t done, k, i;
	int ret = 0;

	if (!jobs || !fences) {
		free(jobs);
		free(fences);
		return -ENOMEM;
	}
	for (i = 0; i < batch; i++)
		jobs[i] = nj->job;
	t0 = now_ns();
	for (done = 0; done < total && !ret; done += k) {
		k = total - done < batch ? total - done : batch;
		if (batch == 1)
			ret = trn_submit(q, jobs, &f);
		else
			ret = trn_submit_batch(q, jobs, k, fences);
		if (!ret && batch > 1)
			f = fences[k - 1];
	}
	t1 = now_ns();
	if (!ret)
		ret = trn_fence_wait(&f, now_ns() + WAIT_NS);
	if (!ret) {
		*per_job = (double)(now_ns() - t0) / (double)total;
		*submit_per_job = (double)(t1 - t0) / (double)total;
	}
	free(jobs);
	free(fences);
	return ret;
}

static void bench_pipelined(trn_queue_t *q, struct noop *nj)
{
	static const size_t batches[] = { 1, 64, 256 };
	const size_t total = iters(10000, 1000);
	double per, sub;
	size_t b;
	int ret;

	/* Warm up: the scheduler's and the allocator's caches. */
	ret = pipelined(q, nj, 300, 1, &per, &sub);
	for (b = 0; !ret && b < sizeof(batches) / sizeof(batches[0]); b++) {
		char name[64];

		progress("%zu NOP jobs back to back, %zu per call", total,
			 batches[b]);
		ret = pipelined(q, nj, total, batches[b], &per, &sub);
		if (ret)
			break;
		if (batches[b] == 1) {
			fig("submit_pipelined_ns_per_job", per, "ns");
			fig("prof_pipelined_submit_ns_per_job", sub, "ns");
		} else {
			snprintf(name, sizeof(name),
				 "submit_batch%zu_ns_per_job", batches[b]);
			fig(name, per, "ns");
			snprintf(name, sizeof(name),
				 "prof_batch%zu_submit_ns_per_job", batches[b]);
			fig(name, sub, "ns");
		}
	}
	if (ret)
		fail("pipelined NOP jobs", ret);
}

/*
 * submit_Nqueues_ns_per_job (N = 1, 2, 4, 8): N threads, each with its own
 * queue (queue i on NeuronCore i modulo the cores), each submitting its
 * share of the 10,000 NOP jobs back to back with trn_submit() and waiting
 * for its last; wall time from the common start to the last thread's end,
 * divided by all jobs. submit_queue_scaling is the throughput of 8 queues
 * over that of 1, measured one after the other in the same call.
 */
#define NQ	8

struct qthread {
	trn_queue_t *q;
	struct noop *nj;
	size_t jobs;
	pthread_barrier_t *start;
	int ret;
};

static void *qthread_main(void *arg)
{
	struct qthread *t = arg;
	struct trn_fence f = { 0 };
	size_t i;

	pthread_barrier_wait(t->start);
	for (i = 0; i < t->jobs && !t->ret; i++)
		t->ret = trn_submit(t->q, &t->nj->job, &f);
	if (!t->ret)
		t->ret = trn_fence_wait(&f, now_ns() + WAIT_NS);
	return NULL;
}

/*
 * @nq threads on @nq new queues share @total jobs; *@per_job gets the wall
 * time per job. Returns 0 or -errno; exits if threads started but could
 * not all start, since the barrier then never opens.
 */
static int run_queues(trn_device_t *dev, uint32_t cores, struct noop *nj,
		      size_t nq, size_t total, uint32_t flags,
		      double *per_job)
{
	struct qthread t[NQ];
	pthread_t th[NQ];
	pthread_barrier_t start;
	int64_t t0;
	size_t i, created = 0, started = 0;
	int ret = 0;

	memset(t, 0, sizeof(t));
	pthread_barrier_init(&start, NULL, (unsigned int)nq + 1);
	for (i = 0; i < nq; i++) {
		ret = trn_queue_create_flags(dev, (uint32_t)(i % cores),
					     TRN_PRIORITY_NORMAL, flags,
					     &t[i].q);
		if (ret)
			break;
		created++;
		t[i].nj = nj;
		t[i].jobs = total / nq;
		t[i].start = &start;
	}
	for (i = 0; !ret && i < nq; i++) {
		if (pthread_create(&th[i], NULL, qthread_main, &t[i])) {
			ret = -EAGAIN;
			break;
		}
		started++;
	}
	if (started == nq) {
		pthread_barrier_wait(&start);
		t0 = now_ns();
		for (i = 0; i < nq; i++) {
			pthread_join(th[i], NULL);
			if (t[i].ret)
				ret = t[i].ret;
		}
		*per_job = (double)(now_ns() - t0) / (double)(total / nq * nq);
	} else if (started) {
		/* The barrier never opens: nothing can be joined safely. */
		fail("queue threads", -EAGAIN);
		exit(1);
	}
	for (i = 0; i < created; i++) {
		trn_queue_wait_idle(t[i].q, now_ns() + WAIT_NS);
		trn_queue_destroy(t[i].q);
	}
	pthread_barrier_destroy(&start);
	return ret;
}

static void bench_queues(trn_device_t *dev, struct noop *nj)
{
	static const size_t counts[] = { 1, 2, 4, NQ };
	const size_t total = iters(10000, 1000);
	struct trn_device_info info;
	double per_job = NAN, one = NAN;
	struct figure *f;
	char name[64];
	size_t i;
	int ret;

	ret = trn_device_info(dev, &info);
	if (ret) {
		fail("device info", ret);
		return;
	}
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		progress("%zu NOP jobs from %zu threads on %zu queues", total,
			 counts[i], counts[i]);
		ret = run_queues(dev, info.num_cores, nj, counts[i], total,
				 TRN_QUEUE_CREATE_KERNEL, &per_job);
		if (ret) {
			fail("multi-queue submission", ret);
			return;
		}
		snprintf(name, sizeof(name), "submit_%zuqueue%s_ns_per_job",
			 counts[i], counts[i] == 1 ? "" : "s");
		fig(name, per_job, "ns");
		if (counts[i] == 1)
			one = per_job;
	}
	f = fig("submit_queue_scaling", one / per_job, "x");
	fig_note(f, "submit_1queue / submit_%dqueues, %ld CPUs online", NQ,
		 sysconf(_SC_NPROCESSORS_ONLN));
}

/*
 * User-mode queues (issue 14; execution.md): the same NOP jobs through a
 * queue whose ring and doorbell are mapped, where trn_submit() makes no
 * system call while the device watches the doorbell.
 *
 * submit_usermode_ns_per_job: 10,000 NOP jobs back to back, then one wait
 * (as submit_pipelined_ns_per_job; prof_usermode_submit_ns_per_job the
 * submitting part). submit_usermode_latency_ns: one NOP job submitted and
 * waited for, median of 600. submit_usermode_8queues_ns_per_job and
 * submit_usermode_queue_scaling: as the kernel queues' figures.
 * prof_usermode_wakes_per_job: QUEUE_WAKE calls per job of the pipelined
 * run (the device had stopped watching), from trn_queue_status()'s
 * submitted count and the wake-ups the run made... counted as the ioctls
 * the process made, from the rusage of the submitting thread is not
 * exact, so the figure is the system calls per job seen by strace-free
 * means: voluntary context switches per job.
 */
static void bench_usermode(trn_device_t *dev, struct noop *nj)
{
	const size_t total = iters(10000, 1000), lat_n = iters(600, 60);
	struct trn_device_info info;
	double per, sub, one = NAN, eight = NAN, *lat;
	struct trn_fence f;
	struct figure *fg;
	trn_queue_t *q;
	size_t i;
	int ret;

	ret = trn_device_info(dev, &info);
	if (ret) {
		fail("device info", ret);
		return;
	}
	if (!(info.capabilities & TRN_CAP_USER_QUEUES)) {
		progress("the device has no user-mode queues: skipped");
		return;
	}
	ret = trn_queue_create_flags(dev, 0, TRN_PRIORITY_NORMAL,
				     TRN_QUEUE_CREATE_USER, &q);
	if (ret) {
		fail("user-mode queue", ret);
		return;
	}
	progress("%zu NOP jobs back to back on a user-mode queue", total);
	/* Warm up, as for the kernel queue. */
	ret = pipelined(q, nj, 300, 1, &per, &sub);
	if (!ret)
		ret = pipelined(q, nj, total, 1, &per, &sub);
	if (!ret) {
		fig("submit_usermode_ns_per_job", per, "ns");
		fig("prof_usermode_submit_ns_per_job", sub, "ns");
	}

	lat = calloc(lat_n, sizeof(*lat));
	if (!ret && !lat)
		ret = -ENOMEM;
	progress("%zu NOP jobs submitted and waited for, user-mode queue",
		 lat_n);
	for (i = 0; i < lat_n && !ret; i++) {
		int64_t t0 = now_ns();

		ret = trn_submit(q, &nj->job, &f);
		if (!ret)
			ret = trn_fence_wait(&f, now_ns() + WAIT_NS);
		lat[i] = (double)(now_ns() - t0);
	}
	if (!ret)
		fig("submit_usermode_latency_ns", median(lat, lat_n), "ns");
	free(lat);
	trn_queue_wait_idle(q, now_ns() + WAIT_NS);
	trn_queue_destroy(q);

	if (!ret) {
		progress("%zu NOP jobs from 1 and %d threads, user-mode queues",
			 total, NQ);
		ret = run_queues(dev, info.num_cores, nj, 1, total,
				 TRN_QUEUE_CREATE_USER, &one);
	}
	if (!ret)
		ret = run_queues(dev, info.num_cores, nj, NQ, total,
				 TRN_QUEUE_CREATE_USER, &eight);
	if (!ret) {
		fig("submit_usermode_8queues_ns_per_job", eight, "ns");
		fg = fig("submit_usermode_queue_scaling", one / eight, "x");
		fig_note(fg, "1 queue / %d queues, %ld CPUs online", NQ,
			 sysconf(_SC_NPROCESSORS_ONLN));
	}
	if (ret)
		fail("user-mode queue submission", ret);
}

/* -------------------------------------------------------- trn: copies */

/*
 * Submit what @cb holds as one job listing @bos (the command buffer's own
 * first) and wait for it. Returns 0 or -errno.
 */
static int run_cmdbuf(trn_queue_t *q, trn_cmdbuf_t *cb, trn_bo_t **bos,
		      uint32_t nbos)
{
	struct trn_job job;
	struct trn_fence f;
	int ret;

	memset(&job, 0, sizeof(job));
	job.cmd_va = trn_cmdbuf_va(cb);
	job.cmd_size = (uint32_t)trn_cmdbuf_size(cb);
	job.bos = bos;
	job.bo_count = nbos;
	ret = trn_submit(q, &job, &f);
	return ret ? ret : trn_fence_wait(&f, now_ns() + WAIT_NS);
}

/* One COPY job of @size bytes; returns its wall time in ns, or -errno. */
static int64_t copy_job(trn_queue_t *q, trn_cmdbuf_t *cb, trn_bo_t *dst,
			trn_bo_t *src, uint64_t size)
{
	trn_bo_t *bos[3] = { trn_cmdbuf_bo(cb), dst, src };
	int64_t t0;
	int ret;

	trn_cmdbuf_reset(cb);
	ret = trn_cmd_copy(cb, trn_bo_va(dst), trn_bo_va(src), size);
	if (ret)
		return ret;
	t0 = now_ns();
	ret = run_cmdbuf(q, cb, bos, 3);
	return ret ? ret : now_ns() - t0;
}

/*
 * copy_{h2d,d2h,d2d}_gbps: one COPY command of 64 MiB between a host
 * buffer and an HBM buffer, or between two HBM buffers, submitted and
 * waited for; best of the runs (after one warm-up run each), in GB/s
 * (10^9 bytes/s). Profile: the device time of that run from fdinfo
 * (prof_copy_*_device_gbps).
 */
static void bench_copy(trn_device_t *dev, trn_queue_t *q)
{
	static const char *const names[] = { "h2d", "d2h", "d2d" };
	const size_t runs = iters(3, 1);
	trn_bo_t *host = NULL, *hbm = NULL, *hbm2 = NULL;
	int fd = trn_device_fd(dev);
	trn_cmdbuf_t *cb = NULL;
	unsigned int k;
	size_t r;
	int ret;
	void *p;

	progress("64 MiB copies");
	ret = trn_cmdbuf_create(dev, 4096, &cb);
	if (!ret)
		ret = trn_bo_create(dev, COPY_SIZE, TRN_PLACEMENT_HOST, 0, 0,
				    &host);
	if (!ret)
		ret = trn_bo_create(dev, COPY_SIZE, TRN_PLACEMENT_HBM, 0, 0,
				    &hbm);
	if (!ret)
		ret = trn_bo_create(dev, COPY_SIZE, TRN_PLACEMENT_HBM, 0, 0,
				    &hbm2);
	if (!ret && !(ret = trn_bo_map(host, &p))) {
		memset(p, 0x5a, COPY_SIZE);
		trn_bo_unmap(host);
	}
	for (k = 0; !ret && k < 3; k++) {
		trn_bo_t *dst = k == 1 ? host : k == 2 ? hbm2 : hbm;
		trn_bo_t *src = k == 0 ? host : hbm;
		double best = 0, dev_gbps = 0;
		char name[64];
		int64_t t;

		t = copy_job(q, cb, dst, src, COPY_SIZE);	/* warm up */
		for (r = 0; t >= 0 && r < runs; r++) {
			int64_t e0 = engine_ns(fd), e1;

			t = copy_job(q, cb, dst, src, COPY_SIZE);
			e1 = engine_ns(fd);
			if (t > 0 && (double)COPY_SIZE / (double)t > best) {
				best = (double)COPY_SIZE / (double)t;
				if (e1 > e0)
					dev_gbps = (double)COPY_SIZE /
						   (double)(e1 - e0);
			}
		}
		if (t < 0) {
			ret = (int)t;
			break;
		}
		snprintf(name, sizeof(name), "copy_%s_gbps", names[k]);
		fig(name, best, "GB/s");
		snprintf(name, sizeof(name), "prof_copy_%s_device_gbps",
			 names[k]);
		if (dev_gbps > 0)
			fig(name, dev_gbps, "GB/s");
	}
	if (ret)
		fail("64 MiB copies", ret);
	trn_bo_free(host);
	trn_bo_free(hbm);
	trn_bo_free(hbm2);
	trn_cmdbuf_destroy(cb);
}

/* ------------------------------------------------------- eager MLP */

/*
 * eager_mlp_ops_per_s without examples/eager: the libtrnhal sequence an
 * eager backend issues for a 784-512-512-10 MLP forward pass of a batch of
 * 64 samples (as examples/eager's demo), each operation recorded into its own command buffer and
 * submitted as its own job when it is "called" (MATMUL, BINARY ADD of the
 * bias, UNARY RELU per layer, no RELU after the last: 8 operations per
 * pass), all on one queue (in order), the caller waiting for the logits
 * at the end of every pass. Weights and activations are in HBM.
 */
#define MLP_LAYERS	3
#define MLP_BATCH	64
#define MLP_OPS		(3 * MLP_LAYERS - 1)

static const uint32_t mlp_dims[MLP_LAYERS + 1] = { 784, 512, 512, 10 };

struct mlp {
	trn_bo_t *w[MLP_LAYERS], *b[MLP_LAYERS], *act[MLP_LAYERS + 1];
	trn_cmdbuf_t *cb[MLP_OPS];
};

static void mlp_free(struct mlp *m)
{
	unsigned int i;

	for (i = 0; i < MLP_LAYERS; i++) {
		trn_bo_free(m->w[i]);
		trn_bo_free(m->b[i]);
	}
	for (i = 0; i <= MLP_LAYERS; i++)
		trn_bo_free(m->act[i]);
	for (i = 0; i < MLP_OPS; i++)
		trn_cmdbuf_destroy(m->cb[i]);
}

/* Record one op into the next command buffer and submit it. */
static int mlp_op_submit(trn_queue_t *q, trn_cmdbuf_t *cb, trn_bo_t **bos,
			 uint32_t nbos, struct trn_fence *f)
{
	trn_bo_t *all[4];
	struct trn_job job;
	uint32_t i;

	all[0] = trn_cmdbuf_bo(cb);
	for (i = 0; i < nbos; i++)
		all[i + 1] = bos[i];
	memset(&job, 0, sizeof(job));
	job.cmd_va = trn_cmdbuf_va(cb);
	job.cmd_size = (uint32_t)trn_cmdbuf_size(cb);
	job.bos = all;
	job.bo_count = nbos + 1;
	return trn_submit(q, &job, f);
}

static int mlp_forward(trn_queue_t *q, struct mlp *m)
{
	struct trn_fence f = { 0 };
	unsigned int l, op = 0;
	int ret = 0;

	for (l = 0; l < MLP_LAYERS && !ret; l++) {
		uint32_t k = mlp_dims[l], n = mlp_dims[l + 1];
		trn_bo_t *in = m->act[l], *out = m->act[l + 1];
		struct trn_matmul mm = {
			.m = MLP_BATCH, .n = n, .k = k,
			.a = trn_bo_va(in), .lda = k * 4,
			.b = trn_bo_va(m->w[l]), .ldb = n * 4,
			.c = trn_bo_va(out), .ldc = n * 4,
		};
		trn_bo_t *bos[3];
		trn_cmdbuf_t *cb;

		/* out = in x W */
		cb = m->cb[op++];
		trn_cmdbuf_reset(cb);
		ret = trn_cmd_matmul(cb, &mm);
		bos[0] = in, bos[1] = m->w[l], bos[2] = out;
		if (!ret)
			ret = mlp_op_submit(q, cb, bos, 3, &f);
		/* out += bias */
		cb = m->cb[op++];
		trn_cmdbuf_reset(cb);
		if (!ret)
			ret = trn_cmd_binary(cb, TRN_BINARY_ADD, 0, MLP_BATCH,
					     n, trn_bo_va(out), n * 4,
					     trn_bo_va(out), n * 4,
					     trn_bo_va(m->b[l]), 0);
		bos[0] = out, bos[1] = m->b[l];
		if (!ret)
			ret = mlp_op_submit(q, cb, bos, 2, &f);
		if (l == MLP_LAYERS - 1)
			break;
		/* out = relu(out) */
		cb = m->cb[op++];
		trn_cmdbuf_reset(cb);
		if (!ret)
			ret = trn_cmd_unary(cb, TRN_UNARY_RELU, 0, MLP_BATCH, n,
					    trn_bo_va(out), n * 4,
					    trn_bo_va(out), n * 4);
		if (!ret)
			ret = mlp_op_submit(q, cb, &out, 1, &f);
	}
	/* The caller reads the logits: wait for the last op. */
	if (!ret)
		ret = trn_fence_wait(&f, now_ns() + WAIT_NS);
	return ret;
}

static int mlp_fill(trn_queue_t *q, trn_cmdbuf_t *cb, trn_bo_t *bo,
		    float value)
{
	trn_bo_t *bos[2] = { trn_cmdbuf_bo(cb), bo };
	uint32_t bits;
	int ret;

	memcpy(&bits, &value, 4);
	trn_cmdbuf_reset(cb);
	ret = trn_cmd_fill(cb, trn_bo_va(bo), bits, trn_bo_size(bo));
	return ret ? ret : run_cmdbuf(q, cb, bos, 2);
}

static int bench_mlp_hal(trn_device_t *dev, trn_queue_t *q, size_t passes,
			 double *ops_per_s)
{
	struct mlp m;
	unsigned int i;
	int64_t t0;
	size_t p;
	int ret = 0;

	memset(&m, 0, sizeof(m));
	for (i = 0; i < MLP_LAYERS && !ret; i++) {
		uint64_t k = mlp_dims[i], n = mlp_dims[i + 1];

		ret = trn_bo_create(dev, k * n * 4, TRN_PLACEMENT_HBM, 0, 0,
				    &m.w[i]);
		if (!ret)
			ret = trn_bo_create(dev, n * 4, TRN_PLACEMENT_HBM, 0,
					    0, &m.b[i]);
	}
	for (i = 0; i <= MLP_LAYERS && !ret; i++)
		ret = trn_bo_create(dev, MLP_BATCH * mlp_dims[i] * 4ull,
				    TRN_PLACEMENT_HBM, 0, 0, &m.act[i]);
	for (i = 0; i < MLP_OPS && !ret; i++)
		ret = trn_cmdbuf_create(dev, 4096, &m.cb[i]);
	for (i = 0; i < MLP_LAYERS && !ret; i++) {
		ret = mlp_fill(q, m.cb[0], m.w[i], 0.01f);
		if (!ret)
			ret = mlp_fill(q, m.cb[0], m.b[i], 0.1f);
	}
	if (!ret)
		ret = mlp_fill(q, m.cb[0], m.act[0], 0.5f);
	if (!ret)
		ret = mlp_forward(q, &m);	/* warm up */
	t0 = now_ns();
	for (p = 0; p < passes && !ret; p++)
		ret = mlp_forward(q, &m);
	if (!ret)
		*ops_per_s = (double)(passes * MLP_OPS) * 1e9 /
			     (double)(now_ns() - t0);
	mlp_free(&m);
	return ret;
}

static void bench_mlp(trn_device_t *dev, trn_queue_t *q)
{
	const size_t passes = iters(10, 2);
	double ops = 0;
	int ret;

	progress("MLP 784-512-512-10 forward passes");
#ifdef TRN_BENCH_EAGER
	/* ---- HOOK: examples/eager ---- */
	(void)dev;
	(void)q;
	(void)bench_mlp_hal;
	ret = TRN_BENCH_EAGER_CALL(passes, &ops);
	if (!ret) {
		fig_note(fig("eager_mlp_ops_per_s", ops, "ops/s"),
			 "examples/eager (eager_bench_mlp), batch 64");
		return;
	}
	fail("examples/eager MLP", ret);
#else
	ret = bench_mlp_hal(dev, q, passes, &ops);
	if (ret) {
		fail("MLP (libtrnhal ops)", ret);
		return;
	}
	fig_note(fig("eager_mlp_ops_per_s", ops, "ops/s"),
		 "libtrnhal ops (no examples/eager), %d per pass, batch %d",
		 MLP_OPS, MLP_BATCH);
	fig("prof_mlp_pass_us", 1e6 * MLP_OPS / ops, "us");
#endif
}

/* ------------------------------------------------- tenant isolation */

/*
 * Another tenant of the device: a raw file of its own (a context of its
 * own; libtrnhal shares one file per process), with a host buffer of
 * command streams.
 */
struct tenant {
	int fd;
	uint32_t cmd_handle;
	uint64_t cmd_va;
	uint32_t *cmd;
	size_t cmd_size;
};

static int raw_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

static void tenant_close(struct tenant *t)
{
	if (t->cmd)
		munmap(t->cmd, t->cmd_size);
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->cmd = NULL;
}

/* Open @node as a new context with a command buffer of @words + 2. */
static int tenant_open(struct tenant *t, const char *node, size_t size)
{
	struct drm_trn_bo_create c = {
		.size = size,
		.placement = DRM_TRN_PLACEMENT_HOST,
	};
	struct drm_trn_bo_info bi = { 0 };
	void *m;
	int ret;

	memset(t, 0, sizeof(*t));
	t->fd = open(node, O_RDWR | O_CLOEXEC);
	if (t->fd < 0)
		return -errno;
	ret = raw_ioctl(t->fd, DRM_IOCTL_TRN_BO_CREATE, &c);
	if (!ret) {
		bi.handle = c.handle;
		ret = raw_ioctl(t->fd, DRM_IOCTL_TRN_BO_INFO, &bi);
	}
	if (ret) {
		tenant_close(t);
		return ret;
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd,
		 (off_t)bi.mmap_offset);
	if (m == MAP_FAILED) {
		ret = -errno;
		tenant_close(t);
		return ret;
	}
	t->cmd = m;
	t->cmd_size = size;
	t->cmd_handle = c.handle;
	t->cmd_va = c.va;
	return 0;
}

/* A command stream that hangs: SEM_WAIT on a semaphore nobody signals. */
static void tenant_hang_stream(struct tenant *t)
{
	struct trn_cmd_sem w = {
		.header = TRN_CMD_HEADER(TRN_OP_SEM_WAIT, 0,
					 sizeof(struct trn_cmd_sem) / 8),
		.sem = TRN_NUM_SEMAPHORES - 1,
		.value = 1,
	};

	memcpy(t->cmd, &w, sizeof(w));
}

/* Submit @n jobs of the hanging stream to @queue, 256 per call. */
static int tenant_submit_hangs(struct tenant *t, uint32_t queue, size_t n,
			       uint32_t flags)
{
	struct drm_trn_job jobs[DRM_TRN_SUBMIT_MAX_JOBS];
	size_t i, k, done;
	int ret = 0;

	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < DRM_TRN_SUBMIT_MAX_JOBS; i++) {
		jobs[i].cmd_va = t->cmd_va;
		jobs[i].cmd_size = sizeof(struct trn_cmd_sem);
		jobs[i].bo_handles = (uintptr_t)&t->cmd_handle;
		jobs[i].bo_count = 1;
	}
	for (done = 0; done < n && !ret; done += k) {
		struct drm_trn_submit s = {
			.queue_id = queue,
			.flags = flags,
			.jobs = (uintptr_t)jobs,
			.job_size = sizeof(jobs[0]),
		};

		k = n - done < DRM_TRN_SUBMIT_MAX_JOBS ? n - done :
							 DRM_TRN_SUBMIT_MAX_JOBS;
		s.job_count = (uint32_t)k;
		ret = raw_ioctl(t->fd, DRM_IOCTL_TRN_SUBMIT, &s);
	}
	return ret;
}

static int tenant_queue(struct tenant *t, uint32_t core, uint32_t *id)
{
	struct drm_trn_queue_create c = { .core = core,
					  .priority = DRM_TRN_PRIORITY_NORMAL };
	int ret = raw_ioctl(t->fd, DRM_IOCTL_TRN_QUEUE_CREATE, &c);

	if (!ret)
		*id = c.queue_id;
	return ret;
}

static int device_policy(trn_device_t *dev, struct drm_trn_device_info *di)
{
	struct drm_trn_query q = {
		.query = DRM_TRN_QUERY_DEVICE_INFO,
		.size = sizeof(*di),
		.data = (uintptr_t)di,
	};
	int ret;

	memset(di, 0, sizeof(*di));
	ret = raw_ioctl(trn_device_fd(dev), DRM_IOCTL_TRN_QUERY, &q);
	if (!ret && (q.size < sizeof(*di) || !di->queue_depth))
		ret = -EOPNOTSUPP;	/* a driver before uAPI 1.3 */
	return ret;
}

/*
 * queue_full_eagain_ns: a non-blocking submit of one job to a queue held
 * at its depth by jobs that wait on a semaphore, refused with -EAGAIN:
 * the median time of the refusal (it must be about as cheap as a bare
 * ioctl, for event loops that poll). The queue is then destroyed, which
 * cancels its jobs.
 */
static void bench_queue_full(trn_device_t *dev)
{
	const size_t n = iters(2000, 200);
	struct drm_trn_device_info di;
	struct trn_device_info info;
	struct tenant t = { .fd = -1 };
	struct drm_trn_queue_destroy d = { 0 };
	double *s = calloc(n, sizeof(*s));
	uint32_t queue = 0;
	size_t i;
	int ret;

	progress("refused submits on a full queue");
	ret = s ? device_policy(dev, &di) : -ENOMEM;
	if (!ret)
		ret = trn_device_info(dev, &info);
	if (!ret)
		ret = tenant_open(&t, info.node, 4096);
	if (!ret)
		ret = tenant_queue(&t, 0, &queue);
	if (!ret) {
		tenant_hang_stream(&t);
		ret = tenant_submit_hangs(&t, queue, di.queue_depth,
					  DRM_TRN_SUBMIT_NONBLOCK);
	}
	for (i = 0; i < n && !ret; i++) {
		struct drm_trn_job j = {
			.cmd_va = t.cmd_va,
			.cmd_size = sizeof(struct trn_cmd_sem),
			.bo_handles = (uintptr_t)&t.cmd_handle,
			.bo_count = 1,
		};
		struct drm_trn_submit sub = {
			.queue_id = queue,
			.flags = DRM_TRN_SUBMIT_NONBLOCK,
			.jobs = (uintptr_t)&j,
			.job_count = 1,
			.job_size = sizeof(j),
		};
		int64_t t0 = now_ns();

		ret = raw_ioctl(t.fd, DRM_IOCTL_TRN_SUBMIT, &sub);
		s[i] = (double)(now_ns() - t0);
		ret = ret == -EAGAIN ? 0 : ret ? ret : -EPROTO;
	}
	if (ret) {
		fail("refused submits on a full queue", ret);
	} else {
		fig("queue_full_eagain_ns", median(s, n), "ns");
		fig("queue_depth", di.queue_depth, "jobs");
	}
	if (t.fd >= 0) {
		d.queue_id = queue;
		raw_ioctl(t.fd, DRM_IOCTL_TRN_QUEUE_DESTROY, &d);
	}
	tenant_close(&t);
	free(s);
}

/*
 * hang_innocent_latency_ms: another tenant fills a ring of NeuronCore 0
 * with 256 jobs that hang (one such queue per hardware queue of the core,
 * so that ours shares a ring with one), then one NOP job of ours on that
 * core is timed from submit to completion. The first timeout bans the
 * hanging tenant and the device skips the rest of its jobs: the figure is
 * about one job timeout (hang_innocent_ratio: latency / job_timeout_ms;
 * 256 timeouts before the ban). It takes a job timeout to measure, so
 * --quick skips it.
 */
static void bench_hang(trn_device_t *dev, struct noop *nj)
{
	struct drm_trn_device_info di;
	struct trn_device_info info;
	struct tenant t = { .fd = -1 };
	trn_queue_t *q = NULL;
	struct trn_fence f;
	uint32_t queue, i;
	int64_t t0, lat = 0;
	int ret;

	ret = device_policy(dev, &di);
	if (!ret)
		ret = trn_device_info(dev, &info);
	if (!ret)
		progress("an innocent job behind %u x 256 hanging ones (about %u ms)",
			 info.queues_per_core, di.job_timeout_ms);
	if (!ret)
		ret = tenant_open(&t, info.node, 4096);
	for (i = 0; !ret && i < info.queues_per_core; i++) {
		tenant_hang_stream(&t);
		ret = tenant_queue(&t, 0, &queue);
		if (!ret)
			ret = tenant_submit_hangs(&t, queue, 256, 0);
	}
	if (!ret)
		ret = trn_queue_create_flags(dev, 0, TRN_PRIORITY_NORMAL,
					     TRN_QUEUE_CREATE_KERNEL, &q);
	if (!ret) {
		t0 = now_ns();
		ret = trn_submit(q, &nj->job, &f);
		if (!ret)
			ret = trn_fence_wait(&f, now_ns() + WAIT_NS);
		lat = now_ns() - t0;
	}
	if (ret) {
		fail("an innocent job behind hanging ones", ret);
	} else {
		struct figure *fr;

		fig("hang_innocent_latency_ms", (double)lat / 1e6, "ms");
		fig("job_timeout_ms", di.job_timeout_ms, "ms");
		fr = fig("hang_innocent_ratio",
			 (double)lat / 1e6 / di.job_timeout_ms, "x");
		fig_target(fr, 1.2, true);
		fig_note(fr, "hang_innocent_latency_ms / job_timeout_ms");
	}
	trn_queue_destroy(q);
	tenant_close(&t);
}

/* ------------------------------------------------------------ report */

static void ratio(const char *name, const char *num, const char *den,
		  double target, bool is_max)
{
	double a = fig_value(num), b = fig_value(den);
	struct figure *f;

	if (isnan(a) || isnan(b) || b <= 0)
		return;
	f = fig(name, a / b, "x");
	fig_target(f, target, is_max);
	fig_note(f, "%s / %s", num, den);
}

static void ratios(void)
{
	double h2d = fig_value("copy_h2d_gbps"), d2h = fig_value("copy_d2h_gbps");
	double d2d = fig_value("copy_d2d_gbps"), mc = fig_value("memcpy_gbps");
	struct figure *f;

	ratio("submit_noop_latency_ratio", "submit_noop_latency_ns",
	      "wakeup_pingpong_ns", 1.5, true);
	ratio("submit_pipelined_ratio", "submit_pipelined_ns_per_job",
	      "ioctl_roundtrip_ns", 3, true);
	ratio("submit_batch64_ratio", "submit_batch64_ns_per_job",
	      "ioctl_roundtrip_ns", 0, true);
	ratio("submit_batch256_ratio", "submit_batch256_ns_per_job",
	      "ioctl_roundtrip_ns", 0, true);
	ratio("submit_8queues_ratio", "submit_8queues_ns_per_job",
	      "ioctl_roundtrip_ns", 0, true);
	ratio("submit_usermode_ratio", "submit_usermode_ns_per_job",
	      "ioctl_roundtrip_ns", 1, true);
	ratio("submit_usermode_latency_ratio", "submit_usermode_latency_ns",
	      "wakeup_pingpong_ns", 1.5, true);
	if (!isnan(h2d) && !isnan(d2h) && !isnan(d2d) && mc > 0) {
		f = fig("copy_ratio", fmin(h2d, fmin(d2h, d2d)) / mc, "x");
		fig_target(f, 0.8, false);
		fig_note(f, "min(copy_*_gbps) / memcpy_gbps");
	}
	ratio("bo_create_ratio", "bo_create_free_ns",
	      "vgem_create_destroy_ns", 1.2, true);
	ratio("bo_create_host_ratio", "bo_create_free_host_ns",
	      "vgem_create_destroy_ns", 0, true);
	ratio("queue_full_eagain_ratio", "queue_full_eagain_ns",
	      "ioctl_roundtrip_ns", 2, true);
}

static void print_table(void)
{
	size_t i;

	printf("%-34s %14s %-8s %-14s %s\n", "figure", "value", "unit",
	       "target", "note");
	for (i = 0; i < nfigs; i++) {
		const struct figure *f = &figs[i];
		char target[32] = "";

		if (f->target > 0)
			snprintf(target, sizeof(target), "%s %g %s",
				 f->target_max ? "<=" : ">=", f->target,
				 (f->target_max ? f->value <= f->target :
						  f->value >= f->target) ?
				 "met" : "MISSED");
		printf("%-34s %14.3f %-8s %-14s %s\n", f->name, f->value,
		       f->unit, target, f->note);
	}
	printf("\n");
}

static void print_machine(void)
{
	size_t i;

	for (i = 0; i < nfigs; i++)
		printf("%s %.6g %s\n", figs[i].name, figs[i].value,
		       figs[i].unit);
}

static void usage(FILE *to)
{
	fprintf(to,
		"Usage: trn-bench [--quick] [--machine] [--minor N]\n"
		"Microbenchmarks of trn against baselines of the same machine\n"
		"(Documentation/benchmarks.md). Prints a table, then one line\n"
		"per figure: \"name value unit\".\n"
		"  -q, --quick     fewer iterations (a smoke run)\n"
		"  -m, --machine   only the \"name value unit\" lines\n"
		"  -d, --minor N   use /dev/accel/accelN (default: first trn device)\n"
		"  -o, --only LIST run only these benchmarks (comma-separated):\n"
		"                  ioctl memcpy vgem bo latency (with the ping-pong)\n"
		"                  pipelined queues usermode (user-mode queues)\n"
		"                  copy mlp full hang (not with --quick)\n"
		"  -h, --help      this text\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "machine", no_argument, NULL, 'm' },
		{ "minor", required_argument, NULL, 'd' },
		{ "only", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned int minor = 0;
	bool have_minor = false;
	trn_device_t *dev = NULL;
	trn_queue_t *q = NULL;
	struct noop nj;
	size_t count;
	char *end;
	int c, ret;

	while ((c = getopt_long(argc, argv, "qmd:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			quick = true;
			break;
		case 'm':
			machine = true;
			break;
		case 'd':
			errno = 0;
			minor = (unsigned int)strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg) {
				usage(stderr);
				return 2;
			}
			have_minor = true;
			break;
		case 'o':
			only = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (!have_minor) {
		ret = trn_device_list(&minor, 1, &count);
		if (!ret && !count)
			ret = -ENODEV;
		if (ret) {
			fprintf(stderr, "trn-bench: no trn device: %s\n",
				trn_strerror(ret));
			return 1;
		}
	}
	ret = trn_device_open(minor, &dev);
	if (ret) {
		fprintf(stderr, "trn-bench: /dev/accel/accel%u: %s\n", minor,
			trn_strerror(ret));
		return 1;
	}

	/* Baselines. */
	if (want("ioctl"))
		bench_ioctl(trn_device_fd(dev));
	if (want("memcpy"))
		bench_memcpy();
	if (want("vgem"))
		bench_vgem();

	/* trn. */
	if (want("bo"))
		bench_bo(dev);
	/* The kernel's submission path; user-mode queues have their own. */
	ret = trn_queue_create_flags(dev, 0, TRN_PRIORITY_NORMAL,
				     TRN_QUEUE_CREATE_KERNEL, &q);
	if (!ret)
		ret = noop_init(dev, &nj);
	if (ret) {
		fail("queue and NOP command buffer", ret);
	} else {
		if (want("latency"))
			bench_wakeup_latency(dev, q, &nj);
		if (want("pipelined"))
			bench_pipelined(q, &nj);
		if (want("queues"))
			bench_queues(dev, &nj);
		if (want("usermode"))
			bench_usermode(dev, &nj);
		if (want("copy"))
			bench_copy(dev, q);
		if (want("mlp"))
			bench_mlp(dev, q);
		if (want("full"))
			bench_queue_full(dev);
		if (!quick && want("hang"))
			bench_hang(dev, &nj);
		trn_queue_wait_idle(q, now_ns() + WAIT_NS);
		trn_cmdbuf_destroy(nj.cb);
	}
	trn_queue_destroy(q);
	trn_device_close(dev);

	ratios();
	if (!machine)
		print_table();
	print_machine();
	fflush(stdout);
	return failures ? 1 : 0;
}
