// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Many threads open, query and close accel nodes (directly and through
 * libtrnhal) while one thread keeps creating and deleting a device. The
 * stable devices (0 and 30) must never fail; the churned one (31) may only
 * fail with the errors of a device that is gone: ENOENT, ENODEV, ENXIO.
 * Iteration counts, not time, bound every loop.
 */
#include <pthread.h>

#include "kselftest_harness.h"
#include "trn_test.h"
#include "trnhal.h"

#define STABLE_ID	30
#define CHURN_ID	31
#define RAW_THREADS	8
#define LIB_THREADS	4
#define ITERATIONS	400
#define CHURN_CYCLES	60

struct counters {
	unsigned long ok;
	unsigned long gone;		/* expected failures on the churned id */
	unsigned long unexpected;
	int first_error;
	unsigned int first_error_id;
};

struct shared {
	unsigned int stable_minor[2];	/* minors of ids 0 and STABLE_ID */
	unsigned int expect_cores[2];
	volatile int churn_done;
	int churn_error;
};

struct worker {
	struct shared *sh;
	struct counters c;
	unsigned int seed;
};

static bool gone_error(int err)
{
	return err == -ENOENT || err == -ENODEV || err == -ENXIO;
}

static void count(struct counters *c, int err, bool churned, unsigned int id)
{
	if (!err) {
		c->ok++;
	} else if (churned && gone_error(err)) {
		c->gone++;
	} else {
		if (!c->unexpected) {
			c->first_error = err;
			c->first_error_id = id;
		}
		c->unexpected++;
	}
}

/* One raw open/query/close on @id. */
static int raw_round(struct shared *sh, unsigned int which, bool churned,
		     unsigned int expect_cores)
{
	struct drm_trn_device_info info;
	unsigned int minor;
	int fd, ret;

	if (churned) {
		ret = sim_minor(CHURN_ID, &minor);
		if (ret)
			return ret;
	} else {
		minor = sh->stable_minor[which];
	}
	fd = open_minor(minor);
	if (fd < 0)
		return fd;
	ret = query_info(fd, &info);
	if (!ret && !churned && info.num_cores != expect_cores)
		ret = -EDOM;
	/* A node reused by the churned device must still be that device. */
	if (!ret && churned && info.device_id != CHURN_ID)
		ret = -EDOM;
	close(fd);
	return ret;
}

static void *raw_worker(void *p)
{
	struct worker *w = p;
	int i;

	for (i = 0; i < ITERATIONS; i++) {
		unsigned int r = (unsigned int)rand_r(&w->seed) % 3;
		bool churned = r == 2;

		count(&w->c, raw_round(w->sh, r & 1, churned,
				       w->sh->expect_cores[r & 1]),
		      churned, churned ? CHURN_ID : r);
	}
	return NULL;
}

static int lib_round(struct shared *sh, unsigned int which, bool churned)
{
	struct trn_device_info info;
	trn_device_t *dev;
	unsigned int minor;
	int ret;

	if (churned) {
		ret = sim_minor(CHURN_ID, &minor);
		if (ret)
			return ret;
	} else {
		minor = sh->stable_minor[which];
	}
	ret = trn_device_open(minor, &dev);
	if (ret)
		return ret;
	ret = trn_device_info(dev, &info);
	if (!ret && !churned && info.num_cores != sh->expect_cores[which])
		ret = -EDOM;
	if (!ret && trn_device_fd(dev) < 0)
		ret = -EBADF;
	trn_device_close(dev);
	return ret;
}

static void *lib_worker(void *p)
{
	struct worker *w = p;
	size_t count_seen;
	int i;

	for (i = 0; i < ITERATIONS; i++) {
		unsigned int r = (unsigned int)rand_r(&w->seed) % 4;
		bool churned = r >= 2;

		count(&w->c, lib_round(w->sh, r & 1, churned), churned,
		      churned ? CHURN_ID : r);
		/* Enumeration races with removal but must never fail. */
		if (i % 16 == 0)
			count(&w->c, trn_device_list(NULL, 0, &count_seen),
			      false, 0);
	}
	return NULL;
}

static void *churn_worker(void *p)
{
	struct shared *sh = p;
	int i, ret;

	for (i = 0; i < CHURN_CYCLES && !sh->churn_error; i++) {
		ret = sim_new(CHURN_ID, 1 + i % 4, 1 + i % 8, 1 + i % 3);
		if (!ret)
			ret = sim_del(CHURN_ID);
		if (ret)
			sh->churn_error = ret;
	}
	sh->churn_done = 1;
	return NULL;
}

FIXTURE(churn)
{
	struct shared sh;
	long trn_refs;
};

FIXTURE_SETUP(churn)
{
	if (!sim_available())
		SKIP(return, "trn_sim is not loaded");
	if (sim_exists(STABLE_ID))
		sim_del(STABLE_ID);
	if (sim_exists(CHURN_ID))
		sim_del(CHURN_ID);
	self->trn_refs = module_refcnt("trn");
	ASSERT_EQ(0, sim_new(STABLE_ID, 2, 16, 2));
	ASSERT_EQ(0, sim_minor(0, &self->sh.stable_minor[0]));
	ASSERT_EQ(0, sim_minor(STABLE_ID, &self->sh.stable_minor[1]));
	self->sh.expect_cores[0] = SIM_DEFAULT_CORES;
	self->sh.expect_cores[1] = 2;
}

FIXTURE_TEARDOWN(churn)
{
	if (sim_exists(STABLE_ID))
		EXPECT_EQ(0, sim_del(STABLE_ID));
	if (sim_exists(CHURN_ID))
		EXPECT_EQ(0, sim_del(CHURN_ID));
	/* Every file the threads opened has been released. */
	EXPECT_EQ(self->trn_refs, module_refcnt("trn"));
}

TEST_F_TIMEOUT(churn, open_query_close_with_hotplug, 900)
{
	struct worker workers[RAW_THREADS + LIB_THREADS];
	pthread_t threads[RAW_THREADS + LIB_THREADS], churner;
	unsigned long ok = 0, unexpected = 0;
	int i;

	for (i = 0; i < RAW_THREADS + LIB_THREADS; i++) {
		memset(&workers[i], 0, sizeof(workers[i]));
		workers[i].sh = &self->sh;
		workers[i].seed = 1234u + (unsigned int)i;
	}
	ASSERT_EQ(0, pthread_create(&churner, NULL, churn_worker, &self->sh));
	for (i = 0; i < RAW_THREADS + LIB_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&threads[i], NULL,
					    i < RAW_THREADS ? raw_worker :
							      lib_worker,
					    &workers[i]));
	for (i = 0; i < RAW_THREADS + LIB_THREADS; i++) {
		struct counters *c = &workers[i].c;

		pthread_join(threads[i], NULL);
		ok += c->ok;
		unexpected += c->unexpected;
		EXPECT_EQ(0, c->unexpected)
			TH_LOG("thread %d: %lu unexpected errors, first %d (%s) on id %u",
			       i, c->unexpected, c->first_error,
			       strerror(-c->first_error), c->first_error_id);
	}
	pthread_join(churner, NULL);
	EXPECT_EQ(0, self->sh.churn_error)
		TH_LOG("churn: %s", strerror(-self->sh.churn_error));
	EXPECT_EQ(0, unexpected);
	/* The stable devices alone guarantee successes. */
	EXPECT_LT(0, ok);
	EXPECT_FALSE(sim_exists(CHURN_ID));
}

/* Opens and closes of one node from many threads, no hotplug. */
static void *open_close_worker(void *p)
{
	struct worker *w = p;
	int i;

	for (i = 0; i < ITERATIONS * 2; i++)
		count(&w->c, raw_round(w->sh, 0, false, SIM_DEFAULT_CORES),
		      false, 0);
	return NULL;
}

TEST_F_TIMEOUT(churn, shared_node_storm, 600)
{
	struct worker workers[16];
	pthread_t threads[16];
	int i;

	for (i = 0; i < 16; i++) {
		memset(&workers[i], 0, sizeof(workers[i]));
		workers[i].sh = &self->sh;
		ASSERT_EQ(0, pthread_create(&threads[i], NULL,
					    open_close_worker, &workers[i]));
	}
	for (i = 0; i < 16; i++) {
		pthread_join(threads[i], NULL);
		EXPECT_EQ(0, workers[i].c.unexpected)
			TH_LOG("thread %d: first error %s", i,
			       strerror(-workers[i].c.first_error));
		EXPECT_EQ((unsigned long)ITERATIONS * 2, workers[i].c.ok);
	}
}

/* One shared fd queried from many threads while it is being unplugged. */
struct unplug_arg {
	int fd;
	unsigned long ok, enodev, other;
};

static void *query_until_gone(void *p)
{
	struct unplug_arg *a = p;
	struct drm_trn_device_info info;
	int i, ret;

	for (i = 0; i < ITERATIONS * 4; i++) {
		ret = query_info(a->fd, &info);
		if (!ret)
			__atomic_add_fetch(&a->ok, 1, __ATOMIC_RELAXED);
		else if (ret == -ENODEV)
			__atomic_add_fetch(&a->enodev, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&a->other, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

TEST_F_TIMEOUT(churn, unplug_during_queries, 300)
{
	struct drm_trn_device_info info;
	struct unplug_arg arg = { 0 };
	pthread_t threads[8];
	int i;

	ASSERT_EQ(0, sim_new(CHURN_ID, 1, 1, 1));
	arg.fd = sim_open(CHURN_ID);
	ASSERT_LE(0, arg.fd);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, pthread_create(&threads[i], NULL,
					    query_until_gone, &arg));
	ASSERT_EQ(0, sim_del(CHURN_ID));
	for (i = 0; i < 8; i++)
		pthread_join(threads[i], NULL);
	EXPECT_EQ(0, arg.other);
	EXPECT_EQ((unsigned long)ITERATIONS * 4 * 8, arg.ok + arg.enodev);
	/* Whatever the interleaving, the end state is unplugged. */
	EXPECT_EQ(-ENODEV, query_info(arg.fd, &info));
	EXPECT_EQ(0, close(arg.fd));
}

TEST_HARNESS_MAIN
