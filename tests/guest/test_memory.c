// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Buffer objects on the device under test, idle: simulated device 0 (256
 * MiB of HBM), or with TRN_TEST_DEVICE=part a part bound to trn_pci (its
 * HBM minus firmware carve-outs). Sizes, alignment, exhaustion, CPU
 * mappings, zeroing, data moved by the device (COPY jobs, dev_copy(),
 * which sync user and imported buffers as a real job does), the MMU or,
 * on a part, the kernel's resolution of addresses in the context (through
 * dut_copy(): the simulator's debugfs dma_copy hook, which runs outside
 * jobs, or a COPY job on a part), accounting in fdinfo, sysfs and
 * DRM_TRN_QUERY_MEMORY, per-context limits, cleanup when a process dies,
 * and every invalid field of BO_CREATE, BO_INFO and BO_USERPTR (a failed
 * call must leave its structure and every counter as they were).
 */
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include <linux/dma-heap.h>

#include "kselftest_harness.h"
#include "trn_test.h"
#include "trnhal.h"

#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)
#define DEV	0

FIXTURE(mem)
{
	int fd;
	unsigned int ctx;
	struct drm_trn_device_info info;
	struct sim_counters base;
};

FIXTURE_SETUP(mem)
{
	self->fd = -1;
	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, or no part)");
	if (!dut_is_part())
		ASSERT_EQ(0, debugfs_ready());
	self->fd = dut_open();
	ASSERT_LE(0, self->fd) TH_LOG("open the device under test: %s",
				      strerror(-self->fd));
	ASSERT_EQ(0, query_info(self->fd, &self->info));
	self->ctx = fd_context(self->fd);
	ASSERT_NE(0, self->ctx);
	ASSERT_EQ(0, sim_counters(DUT_ID, &self->base));
	/*
	 * The tests need an idle device; simulated device 0 of the default
	 * shape, a part of whole 64 MiB chunks (the model's: 4 stacks of 64
	 * MiB less 16 MiB each).
	 */
	if (!dut_is_part())
		ASSERT_EQ((uint64_t)SIM_DEFAULT_HBM_MIB * MiB,
			  self->info.hbm_size);
	ASSERT_EQ(0, self->info.hbm_size % (64 * MiB));
	ASSERT_EQ(0, self->base.hbm_used) TH_LOG("the device is not idle");
}

FIXTURE_TEARDOWN(mem)
{
	if (self->fd >= 0)
		close(self->fd);
}

static bool counters_are(unsigned int id, uint64_t hbm, uint64_t host)
{
	struct sim_counters c;

	if (sim_counters(id, &c))
		return false;
	if (c.hbm_used != hbm || c.host_pinned != host) {
		fprintf(stderr, "# hbm_used %llu (want %llu), host_pinned %llu (want %llu)\n",
			(unsigned long long)c.hbm_used, (unsigned long long)hbm,
			(unsigned long long)c.host_pinned,
			(unsigned long long)host);
		return false;
	}
	return true;
}

/* ---- sizes, alignment, exhaustion ---- */

TEST_F(mem, sizes)
{
	static const uint64_t sizes[] = {
		1, TEST_PAGE - 1, TEST_PAGE, TEST_PAGE + 1, 2 * MiB,
		2 * MiB + 1, 3 * MiB - 1,
	};
	static const uint32_t placements[] = {
		DRM_TRN_PLACEMENT_HBM, DRM_TRN_PLACEMENT_HOST,
	};
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (j = 0; j < ARRAY_SIZE(placements); j++) {
			bool hbm = placements[j] == DRM_TRN_PLACEMENT_HBM;
			uint64_t want = page_up(sizes[i]);
			struct drm_trn_memory_info mi;
			struct drm_trn_bo_info bi;
			uint32_t h;
			uint64_t va;

			ASSERT_EQ(0, bo_create(self->fd, sizes[i], placements[j],
					       0, 0, &h, &va))
				TH_LOG("size %llu", (unsigned long long)sizes[i]);
			EXPECT_NE(0, h);
			EXPECT_LE(self->info.va_start, va);
			ASSERT_EQ(0, bo_info(self->fd, h, &bi));
			EXPECT_EQ(want, bi.size);
			EXPECT_EQ(va, bi.va);
			EXPECT_EQ(placements[j], bi.placement);
			EXPECT_EQ(0, bi.bo_flags);
			EXPECT_NE(0, bi.mmap_offset);
			/* Default alignment: 2 MiB from 2 MiB up, else a page. */
			EXPECT_EQ(0, va % (want >= 2 * MiB ? 2 * MiB : TEST_PAGE));
			EXPECT_TRUE(counters_are(DUT_ID, hbm ? want : 0,
						 self->base.host_pinned +
						 (hbm ? 0 : want)));
			ASSERT_EQ(0, query_memory(self->fd, &mi));
			EXPECT_EQ(hbm ? want : 0, mi.ctx_hbm);
			EXPECT_EQ(hbm ? 0 : want, mi.ctx_pinned);
			EXPECT_EQ(1, mi.ctx_bos);
			ASSERT_EQ(0, gem_close(self->fd, h));
			EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
		}
	}
}

TEST_F(mem, whole_hbm_and_e2big)
{
	uint64_t hbm = self->info.hbm_size;
	struct drm_trn_bo_create c = {
		.size = hbm + 1, .placement = DRM_TRN_PLACEMENT_HBM,
	}, before;
	uint32_t h;

	/* All of it, on an idle device. */
	ASSERT_EQ(0, bo_create(self->fd, hbm, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &h, NULL));
	EXPECT_TRUE(counters_are(DUT_ID, hbm, self->base.host_pinned));
	/* Now full: even one page is ENOMEM, not E2BIG. */
	EXPECT_EQ(-ENOMEM, bo_create(self->fd, 1, DRM_TRN_PLACEMENT_HBM, 0, 0,
				     NULL, NULL));
	ASSERT_EQ(0, gem_close(self->fd, h));
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));

	/* One byte more than the device has: never possible. */
	before = c;
	EXPECT_EQ(-E2BIG, raw_ioctl(self->fd, DRM_IOCTL_TRN_BO_CREATE, &c));
	EXPECT_EQ(0, memcmp(&before, &c, sizeof(c)));
	c.size = 4 * hbm;
	EXPECT_EQ(-E2BIG, raw_ioctl(self->fd, DRM_IOCTL_TRN_BO_CREATE, &c));
	c.size = UINT64_MAX;
	EXPECT_EQ(-E2BIG, raw_ioctl(self->fd, DRM_IOCTL_TRN_BO_CREATE, &c));
	c.placement = DRM_TRN_PLACEMENT_HOST;
	EXPECT_EQ(-E2BIG, raw_ioctl(self->fd, DRM_IOCTL_TRN_BO_CREATE, &c));
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
}

TEST_F(mem, alignment)
{
	/* Powers of two below a page mean a page. */
	static const uint64_t aligns[] = {
		0, 1, 2048, TEST_PAGE, 64 * 1024, 2 * MiB, GiB,
	};
	static const uint64_t bad[] = {
		3, 4097, 3 * TEST_PAGE, GiB + TEST_PAGE, 2 * GiB,
		1ULL << 63, UINT64_MAX,
	};
	uint32_t h[8], extra;
	uint64_t va, n64;
	size_t i, p;

	for (p = DRM_TRN_PLACEMENT_HBM; p <= DRM_TRN_PLACEMENT_HOST; p++) {
		for (i = 0; i < ARRAY_SIZE(aligns); i++) {
			uint64_t a = aligns[i] > TEST_PAGE ? aligns[i] :
				     TEST_PAGE;

			/*
			 * A small buffer first, so alignment is not free;
			 * except for 1 GiB in 256 MiB of device memory, where
			 * offset 0 is the only such place (tested below).
			 */
			bool alone = p == DRM_TRN_PLACEMENT_HBM &&
				     a > self->info.hbm_size / 2;

			extra = 0;
			if (!alone)
				ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE,
						       (uint32_t)p, 0, 0, &extra,
						       NULL));
			ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE, (uint32_t)p,
					       0, aligns[i], &h[0], &va))
				TH_LOG("alignment %llu", (unsigned long long)aligns[i]);
			EXPECT_EQ(0, va % a) TH_LOG("va 0x%llx alignment %llu",
						    (unsigned long long)va,
						    (unsigned long long)a);
			/* Only the size is charged, not the padding. */
			if (p == DRM_TRN_PLACEMENT_HBM)
				EXPECT_TRUE(counters_are(DUT_ID, (alone ? 1 : 2) *
							 TEST_PAGE,
							 self->base.host_pinned));
			EXPECT_EQ(0, gem_close(self->fd, h[0]));
			if (!alone)
				EXPECT_EQ(0, gem_close(self->fd, extra));
		}
	}

	/*
	 * Device memory honours the alignment in its own offsets: 256 MiB
	 * (192 on the modelled part) hold only one 1 GiB-aligned range
	 * (offset 0) and four (three) 64 MiB-aligned ones.
	 */
	ASSERT_GT(GiB, self->info.hbm_size);
	n64 = self->info.hbm_size / (64 * MiB);
	ASSERT_GE(ARRAY_SIZE(h), n64);
	ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0,
			       GiB, &h[0], NULL));
	EXPECT_EQ(-ENOMEM, bo_create(self->fd, TEST_PAGE, DRM_TRN_PLACEMENT_HBM,
				     0, GiB, NULL, NULL));
	EXPECT_EQ(0, gem_close(self->fd, h[0]));
	for (i = 0; i < n64; i++)
		ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE,
				       DRM_TRN_PLACEMENT_HBM, 0, 64 * MiB,
				       &h[i], NULL));
	EXPECT_TRUE(counters_are(DUT_ID, n64 * TEST_PAGE,
				 self->base.host_pinned));
	EXPECT_EQ(-ENOMEM, bo_create(self->fd, TEST_PAGE, DRM_TRN_PLACEMENT_HBM,
				     0, 64 * MiB, NULL, NULL));
	EXPECT_TRUE(counters_are(DUT_ID, n64 * TEST_PAGE,
				 self->base.host_pinned));
	/* ... but unaligned memory is plentiful. */
	ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0,
			       0, &extra, NULL));
	EXPECT_EQ(0, gem_close(self->fd, extra));
	for (i = 0; i < n64; i++)
		EXPECT_EQ(0, gem_close(self->fd, h[i]));

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		for (p = DRM_TRN_PLACEMENT_HBM; p <= DRM_TRN_PLACEMENT_HOST; p++)
			EXPECT_EQ(-EINVAL, bo_create(self->fd, TEST_PAGE,
						     (uint32_t)p, 0, bad[i],
						     NULL, NULL))
				TH_LOG("alignment 0x%llx",
				       (unsigned long long)bad[i]);
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
}

TEST_F(mem, exhaustion_and_recovery)
{
	uint64_t chunk = 64 * MiB, n = self->info.hbm_size / chunk, i;
	struct drm_trn_memory_info mi;
	uint32_t h[8], small;

	ASSERT_LE(n, 8);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, bo_create(self->fd, chunk, DRM_TRN_PLACEMENT_HBM, 0,
				       0, &h[i], NULL));
	EXPECT_EQ(-ENOMEM, bo_create(self->fd, chunk, DRM_TRN_PLACEMENT_HBM, 0,
				     0, NULL, NULL));
	EXPECT_EQ(-ENOMEM, bo_create(self->fd, 1, DRM_TRN_PLACEMENT_HBM, 0, 0,
				     NULL, NULL));
	/* Nothing half-allocated. */
	EXPECT_TRUE(counters_are(DUT_ID, n * chunk, self->base.host_pinned));
	ASSERT_EQ(0, query_memory(self->fd, &mi));
	EXPECT_EQ(n, mi.ctx_bos);
	EXPECT_EQ(n * chunk, mi.ctx_hbm);
	EXPECT_EQ(n * chunk, mi.hbm_used);

	/* Free one: its memory can be had again, in pieces or whole. */
	ASSERT_EQ(0, gem_close(self->fd, h[1]));
	ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0,
			       0, &small, NULL));
	EXPECT_EQ(-ENOMEM, bo_create(self->fd, chunk, DRM_TRN_PLACEMENT_HBM, 0,
				     0, NULL, NULL));
	ASSERT_EQ(0, gem_close(self->fd, small));
	ASSERT_EQ(0, bo_create(self->fd, chunk, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &h[1], NULL));
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, gem_close(self->fd, h[i]));
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * 100,000 buffers, held 10,000 at a time, with counters back at the end.
 * All of them, on every lane: the debug kernel needs about 2 minutes.
 */
TEST_F_TIMEOUT(mem, hundred_thousand, 900)
{
	enum { BATCH = 10000, TOTAL = 100000 };
	static uint32_t h[BATCH];
	struct drm_trn_memory_info mi;
	double start = now_s();
	int r, i;

	for (r = 0; r < TOTAL / BATCH; r++) {
		uint32_t placement = r & 1 ? DRM_TRN_PLACEMENT_HOST :
				     DRM_TRN_PLACEMENT_HBM;

		for (i = 0; i < BATCH; i++)
			ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE, placement,
					       0, 0, &h[i], NULL))
				TH_LOG("round %d buffer %d", r, i);
		ASSERT_EQ(0, query_memory(self->fd, &mi));
		EXPECT_EQ(BATCH, mi.ctx_bos);
		for (i = 0; i < BATCH; i++)
			ASSERT_EQ(0, gem_close(self->fd, h[i]));
	}
	ASSERT_EQ(0, query_memory(self->fd, &mi));
	EXPECT_EQ(0, mi.ctx_bos);
	EXPECT_EQ(0, mi.ctx_hbm);
	EXPECT_EQ(0, mi.ctx_pinned);
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
	TH_LOG("%d buffers created and freed in %.1f s", TOTAL,
	       now_s() - start);
}

/* ---- CPU mappings and zeroing ---- */

TEST_F(mem, mmap_round_trip)
{
	static const struct { uint32_t placement, flags; } kinds[] = {
		{ DRM_TRN_PLACEMENT_HBM, 0 },
		{ DRM_TRN_PLACEMENT_HOST, 0 },
		{ DRM_TRN_PLACEMENT_HOST, DRM_TRN_BO_HOST_WC },
	};
	uint64_t size = 3 * TEST_PAGE + 2 * MiB;
	size_t k, i;

	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		unsigned char *m, *m2;
		uint32_t h, h2;
		uint64_t va, va2;

		ASSERT_EQ(0, bo_create(self->fd, size, kinds[k].placement,
				       kinds[k].flags, 0, &h, &va));
		m = bo_mmap(self->fd, h, size);
		ASSERT_NE(MAP_FAILED, m);
		EXPECT_TRUE(all_bytes(m, 0, size));
		for (i = 0; i < size; i++)
			m[i] = (unsigned char)(i * 7 + k);
		ASSERT_EQ(0, munmap(m, size));
		/* A second mapping sees what the first wrote. */
		m = bo_mmap(self->fd, h, size);
		ASSERT_NE(MAP_FAILED, m);
		for (i = 0; i < size; i++)
			if (m[i] != (unsigned char)(i * 7 + k))
				break;
		EXPECT_EQ(size, i) TH_LOG("kind %zu: byte %zu differs", k, i);
		/* The device sees it too: a job copies it into a second buffer. */
		ASSERT_EQ(0, bo_create(self->fd, size, DRM_TRN_PLACEMENT_HOST, 0,
				       0, &h2, &va2));
		ASSERT_EQ(0, dev_copy(self->fd, va2, va, size,
				      (uint32_t[]){ h, h2 }, 2));
		m2 = bo_mmap(self->fd, h2, size);
		ASSERT_NE(MAP_FAILED, m2);
		EXPECT_EQ(0, memcmp(m, m2, size));
		/* MAP_PRIVATE cannot work on device memory: refused. */
		{
			struct drm_trn_bo_info bi;

			ASSERT_EQ(0, bo_info(self->fd, h, &bi));
			EXPECT_EQ(MAP_FAILED, mmap(NULL, size, PROT_READ,
						   MAP_PRIVATE, self->fd,
						   (off_t)bi.mmap_offset));
			EXPECT_EQ(bi.bo_flags, kinds[k].flags);
		}
		munmap(m, size);
		munmap(m2, size);
		EXPECT_EQ(0, gem_close(self->fd, h));
		EXPECT_EQ(0, gem_close(self->fd, h2));
	}
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
}

/* The device's HBM stacks (DRM_TRN_QUERY_HBM_STACKS): how many, or 0. */
static unsigned int query_stacks(int fd, struct drm_trn_hbm_stack st[64])
{
	struct drm_trn_query q = {
		.query = DRM_TRN_QUERY_HBM_STACKS,
		.size = 64 * sizeof(st[0]),
		.data = (uintptr_t)st,
	};

	return raw_ioctl(fd, DRM_IOCTL_TRN_QUERY, &q) ? 0 :
	       q.size / sizeof(st[0]);
}

/* Stack @n's largest free range, or ~0. */
static uint64_t stack_largest_free(int fd, unsigned int n)
{
	struct drm_trn_hbm_stack st[64];

	return n < query_stacks(fd, st) ? st[n].largest_free : ~0ULL;
}

/*
 * Bytes allocated in HBM stack @n (DRM_TRN_QUERY_HBM_STACKS), or ~0; sysfs's
 * hbm_stack_used must say the same of every stack (else ~0 too).
 */
static uint64_t stack_used(int fd, unsigned int n)
{
	char path[128], line[64 * 21 + 2], *p = line, *end;
	struct drm_trn_hbm_stack st[64];
	unsigned int minor, i, count;

	count = query_stacks(fd, st);
	if (n >= count || dut_minor(&minor))
		return ~0ULL;
	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u/hbm_stack_used",
		 minor);
	if (read_file(path, line, sizeof(line)) < 0)
		return ~0ULL;
	for (i = 0; i < count; i++, p = end) {
		unsigned long long v = strtoull(p, &end, 10);

		if (end == p || v != st[i].used) {
			fprintf(stderr, "# stack %u: sysfs \"%s\", query %llu\n",
				i, line, (unsigned long long)st[i].used);
			return ~0ULL;
		}
	}
	if (strcmp(p, "\n"))
		return ~0ULL;	/* more numbers than stacks, or no newline */
	return st[n].used;
}

/*
 * uAPI 1.8: a buffer placed on an HBM stack lies wholly in it. With a page
 * on stack n, a whole stack's worth no longer fits there (a placement that
 * ignored the stack would find it room elsewhere) but does on the next
 * stack, and without placement; each empty stack takes its whole size, and
 * with all of them full the device is. DRM_TRN_QUERY_HBM_STACKS counts
 * each buffer in its stack, and one across two in both. The data of a
 * buffer on each stack goes through the CPU's mapping and the device's
 * copies unchanged.
 */
TEST_F(mem, stack_placement)
{
	unsigned int stacks = self->info.hbm_stacks, n, m;
	uint64_t stack = self->info.hbm_size / stacks;
	uint64_t size = MiB + 3 * TEST_PAGE;
	uint32_t whole[256];

	ASSERT_LE(1, stacks);
	ASSERT_GE(ARRAY_SIZE(whole), stacks);
	for (n = 0; n < stacks; n++) {
		uint32_t f = DRM_TRN_BO_STACK(n), page, h;
		struct drm_trn_bo_info bi;

		ASSERT_EQ(0, bo_create(self->fd, 1, DRM_TRN_PLACEMENT_HBM, f, 0,
				       &page, NULL));
		ASSERT_EQ(0, bo_info(self->fd, page, &bi));
		EXPECT_EQ(f, bi.bo_flags);
		EXPECT_EQ(DRM_TRN_PLACEMENT_HBM, bi.placement);
		for (m = 0; m < stacks; m++)
			EXPECT_EQ(m == n ? TEST_PAGE : 0,
				  stack_used(self->fd, m)) TH_LOG("stack %u", m);
		/* The page took the empty stack's first bytes (drm_mm's low end). */
		EXPECT_EQ(stack - TEST_PAGE, stack_largest_free(self->fd, n));
		EXPECT_EQ(-ENOMEM, bo_create(self->fd, stack,
					     DRM_TRN_PLACEMENT_HBM, f, 0, NULL,
					     NULL)) TH_LOG("stack %u", n);
		if (stacks > 1) {
			ASSERT_EQ(0, bo_create(self->fd, stack,
					       DRM_TRN_PLACEMENT_HBM,
					       DRM_TRN_BO_STACK((n + 1) % stacks),
					       0, &h, NULL)) TH_LOG("stack %u", n);
			EXPECT_EQ(0, gem_close(self->fd, h));
			ASSERT_EQ(0, bo_create(self->fd, stack,
					       DRM_TRN_PLACEMENT_HBM, 0, 0, &h,
					       NULL));
			EXPECT_EQ(0, gem_close(self->fd, h));
		}
		EXPECT_EQ(0, gem_close(self->fd, page));
	}
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));

	for (n = 0; n < stacks; n++)
		ASSERT_EQ(0, bo_create(self->fd, stack, DRM_TRN_PLACEMENT_HBM,
				       DRM_TRN_BO_STACK(n), 0, &whole[n], NULL))
			TH_LOG("stack %u", n);
	EXPECT_TRUE(counters_are(DUT_ID, self->info.hbm_size,
				 self->base.host_pinned));
	for (n = 0; n < stacks; n++) {
		EXPECT_EQ(stack, stack_used(self->fd, n));
		EXPECT_EQ(0, stack_largest_free(self->fd, n));
	}
	EXPECT_EQ(-ENOMEM, bo_create(self->fd, 1, DRM_TRN_PLACEMENT_HBM, 0, 0,
				     NULL, NULL));
	for (n = 0; n < stacks; n++)
		EXPECT_EQ(0, gem_close(self->fd, whole[n]));

	/*
	 * Stack 0 but its last MiB, then 2 MiB anywhere (page aligned): the
	 * free memory starts at that MiB, so the best fit starts there too
	 * and runs a MiB into stack 1, and counts in both.
	 */
	if (stacks > 1) {
		uint32_t h;

		ASSERT_EQ(0, bo_create(self->fd, stack - MiB,
				       DRM_TRN_PLACEMENT_HBM,
				       DRM_TRN_BO_STACK(0), 0, &whole[0], NULL));
		ASSERT_EQ(0, bo_create(self->fd, 2 * MiB, DRM_TRN_PLACEMENT_HBM,
				       0, TEST_PAGE, &h, NULL));
		EXPECT_EQ(stack, stack_used(self->fd, 0));
		EXPECT_EQ(MiB, stack_used(self->fd, 1));
		EXPECT_EQ(0, stack_largest_free(self->fd, 0));
		EXPECT_EQ(stack - MiB, stack_largest_free(self->fd, 1));
		EXPECT_EQ(0, gem_close(self->fd, h));
		EXPECT_EQ(0, gem_close(self->fd, whole[0]));
	}
	for (n = 0; n < stacks; n++)
		EXPECT_EQ(0, stack_used(self->fd, n));

	/* Through the CPU and the device, on each stack. */
	for (n = 0; n < stacks; n++) {
		uint64_t va, host_va;
		unsigned char *cpu, *host;
		uint32_t h, hh;
		size_t i;

		ASSERT_EQ(0, bo_create(self->fd, size, DRM_TRN_PLACEMENT_HBM,
				       DRM_TRN_BO_STACK(n), 0, &h, &va));
		ASSERT_EQ(0, bo_create(self->fd, size, DRM_TRN_PLACEMENT_HOST, 0,
				       0, &hh, &host_va));
		cpu = bo_mmap(self->fd, h, size);
		host = bo_mmap(self->fd, hh, size);
		ASSERT_NE(MAP_FAILED, cpu);
		ASSERT_NE(MAP_FAILED, host);
		EXPECT_TRUE(all_bytes(cpu, 0, size));
		for (i = 0; i < size; i++)
			cpu[i] = (unsigned char)(i * 13 + n);
		ASSERT_EQ(0, dut_copy(self->fd, host_va, va, size));
		EXPECT_EQ(0, memcmp(cpu, host, size)) TH_LOG("stack %u", n);
		memset(host, 0x5a + n, size);
		ASSERT_EQ(0, dut_copy(self->fd, va + 5, host_va, size - 5));
		EXPECT_TRUE(all_bytes(cpu + 5, 0x5a + n, size - 5));
		EXPECT_EQ((unsigned char)n, cpu[0]);
		munmap(cpu, size);
		munmap(host, size);
		EXPECT_EQ(0, gem_close(self->fd, h));
		EXPECT_EQ(0, gem_close(self->fd, hh));
	}
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
}

/* Fill all of HBM with @c through a fresh fd and free it again. */
static int fill_whole_hbm(uint64_t hbm, int c)
{
	int fd = dut_open(), ret;
	void *m;
	uint32_t h;

	if (fd < 0)
		return fd;
	ret = bo_create(fd, hbm, DRM_TRN_PLACEMENT_HBM, 0, 0, &h, NULL);
	if (!ret) {
		m = bo_mmap(fd, h, hbm);
		if (m == MAP_FAILED) {
			ret = -errno;
		} else {
			memset(m, c, hbm);
			munmap(m, hbm);
		}
		gem_close(fd, h);
	}
	close(fd);
	return ret;
}

/* Allocate all of HBM and check it reads as zero. */
static int whole_hbm_is_zero(int fd, uint64_t hbm)
{
	unsigned char *m;
	uint32_t h;
	int ret;

	ret = bo_create(fd, hbm, DRM_TRN_PLACEMENT_HBM, 0, 0, &h, NULL);
	if (ret)
		return ret;
	m = bo_mmap(fd, h, hbm);
	if (m == MAP_FAILED) {
		ret = -errno;
	} else {
		ret = all_bytes(m, 0, hbm) ? 0 : 1;
		munmap(m, hbm);
	}
	gem_close(fd, h);
	return ret;
}

/* Fills all of device memory through the CPU: minutes on the debug lane. */
TEST_F_TIMEOUT(mem, fresh_buffers_are_zero, 900)
{
	uint64_t hbm = self->info.hbm_size;
	int status = -1;
	pid_t pid;

	/* Ourselves: fill, free, reallocate the very same memory. */
	ASSERT_EQ(0, fill_whole_hbm(hbm, 0xa5));
	EXPECT_EQ(0, whole_hbm_is_zero(self->fd, hbm));

	/* Another process fills and frees (by exiting), we allocate. */
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = dut_open(), ret;
		uint32_t h;
		void *m;

		if (fd < 0)
			_exit(2);
		ret = bo_create(fd, hbm, DRM_TRN_PLACEMENT_HBM, 0, 0, &h, NULL);
		if (ret)
			_exit(3);
		m = bo_mmap(fd, h, hbm);
		if (m == MAP_FAILED)
			_exit(4);
		memset(m, 0x3c, hbm);
		_exit(0);	/* the buffer dies with the process */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status 0x%x", status);
	{
		struct sim_counters want = { 0, self->base.host_pinned }, now;

		ASSERT_EQ(0, sim_counters_wait(DUT_ID, &want, &now));
	}
	EXPECT_EQ(0, whole_hbm_is_zero(self->fd, hbm));

	/* Host memory is fresh too. */
	{
		uint32_t h;
		void *m;

		ASSERT_EQ(0, bo_create(self->fd, 8 * MiB, DRM_TRN_PLACEMENT_HOST,
				       0, 0, &h, NULL));
		m = bo_mmap(self->fd, h, 8 * MiB);
		ASSERT_NE(MAP_FAILED, m);
		EXPECT_TRUE(all_bytes(m, 0, 8 * MiB));
		munmap(m, 8 * MiB);
		gem_close(self->fd, h);
	}
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
}

/* ---- the MMU ---- */

/*
 * The simulator's dma_copy hook itself, which the fault and isolation tests
 * rely on: byte granular, across pages, in both directions. Device and host
 * buffers never bounce (host buffers come from the DMA API), so the CPU sees
 * what the hook moved on every lane.
 */
TEST_F(mem, dma_copy_between_buffers)
{
	uint64_t size = 5 * TEST_PAGE, va_a, va_b;
	unsigned char *a, *b;
	uint32_t ha, hb;
	size_t i;

	ASSERT_EQ(0, bo_create(self->fd, size, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &ha, &va_a));
	ASSERT_EQ(0, bo_create(self->fd, size, DRM_TRN_PLACEMENT_HOST, 0, 0,
			       &hb, &va_b));
	a = bo_mmap(self->fd, ha, size);
	b = bo_mmap(self->fd, hb, size);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_NE(MAP_FAILED, b);
	for (i = 0; i < size; i++)
		a[i] = (unsigned char)(i ^ (i >> 8));

	/* Unaligned, crossing pages, HBM -> host. */
	ASSERT_EQ(0, dut_copy(self->fd, va_b + 100, va_a + 3000,
				  2 * TEST_PAGE + 17));
	EXPECT_TRUE(all_bytes(b, 0, 100));
	EXPECT_EQ(0, memcmp(b + 100, a + 3000, 2 * TEST_PAGE + 17));
	EXPECT_TRUE(all_bytes(b + 100 + 2 * TEST_PAGE + 17, 0,
			      size - 100 - 2 * TEST_PAGE - 17));
	/* Host -> HBM, the whole buffer. */
	memset(b, 0x77, size);
	ASSERT_EQ(0, dut_copy(self->fd, va_a, va_b, size));
	EXPECT_TRUE(all_bytes(a, 0x77, size));
	/* HBM -> HBM within one buffer. */
	a[0] = 0x11;
	ASSERT_EQ(0, dut_copy(self->fd, va_a + size - 1, va_a, 1));
	EXPECT_EQ(0x11, a[size - 1]);

	munmap(a, size);
	munmap(b, size);
	gem_close(self->fd, ha);
	gem_close(self->fd, hb);
}

TEST_F(mem, faults)
{
	uint64_t size = 2 * TEST_PAGE, va, ro_va, faults0, faults, last;
	unsigned char *m;
	uint32_t h, ro;

	ASSERT_EQ(0, bo_create(self->fd, size, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &h, &va));
	ASSERT_EQ(0, bo_create(self->fd, size, DRM_TRN_PLACEMENT_HBM,
			       DRM_TRN_BO_DEVICE_READ_ONLY, 0, &ro, &ro_va));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults0));

	/* Reading past the end: the guard page. */
	EXPECT_EQ(-EFAULT, dut_copy(self->fd, va, va + size, 16));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults));
	EXPECT_EQ(faults0 + 1, faults);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-last-fault-va", &last));
	EXPECT_EQ(va + size, last);

	/* Writing past the end, from a copy that starts inside. */
	EXPECT_EQ(-EFAULT, dut_copy(self->fd, va + size - 8, ro_va, 16));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults));
	EXPECT_EQ(faults0 + 2, faults);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-last-fault-va", &last));
	EXPECT_EQ(va + size, last);

	/* Writing a read-only buffer faults; reading it works. */
	m = bo_mmap(self->fd, ro, size);
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 0x5c, size);	/* the CPU may write it */
	EXPECT_EQ(-EFAULT, dut_copy(self->fd, ro_va + 64, va, 16));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-last-fault-va", &last));
	EXPECT_EQ(ro_va + 64, last);
	EXPECT_TRUE(all_bytes(m, 0x5c, size));
	EXPECT_EQ(0, dut_copy(self->fd, va, ro_va, size));

	/* Unmapped addresses: low memory, the start of the window, freed. */
	EXPECT_EQ(-EFAULT, dut_copy(self->fd, va, 0x1000, 16));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-last-fault-va", &last));
	EXPECT_EQ(0x1000, last);
	EXPECT_EQ(-EFAULT, dut_copy(self->fd, self->info.va_start +
				    self->info.va_size - TEST_PAGE, va, 16));
	munmap(m, size);
	ASSERT_EQ(0, gem_close(self->fd, ro));
	EXPECT_EQ(-EFAULT, dut_copy(self->fd, va, ro_va, 16));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-last-fault-va", &last));
	EXPECT_EQ(ro_va, last);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults));
	EXPECT_EQ(faults0 + 6, faults);
	/*
	 * A context number that does not exist faults too (only the
	 * simulator's hook can name one).
	 */
	if (!dut_is_part()) {
		EXPECT_EQ(-EFAULT, sim_dma_copy(DEV, 65535, va, va, 16));
		ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults));
		EXPECT_EQ(faults0 + 6, faults);
	}
	ASSERT_EQ(0, gem_close(self->fd, h));
}

TEST_F(mem, userptr_round_trip)
{
	uint64_t size = 4 * TEST_PAGE, uva, rova, hva, faults0, faults;
	unsigned char *u, *ro, *hm;
	uint32_t uh, roh, hh;

	u = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, u);
	ro = mmap(NULL, size, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memset(u, 0x21, size);
	memset(ro, 0x43, size);

	ASSERT_EQ(0, bo_userptr(self->fd, u, size, 0, &uh, &uva));
	ASSERT_EQ(0, bo_userptr(self->fd, ro, size, DRM_TRN_USERPTR_READ_ONLY,
				&roh, &rova));
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned + 2 * size));
	ASSERT_EQ(0, bo_create(self->fd, size, DRM_TRN_PLACEMENT_HOST, 0, 0,
			       &hh, &hva));
	hm = bo_mmap(self->fd, hh, size);
	ASSERT_NE(MAP_FAILED, hm);
	memset(hm, 0x65, size);

	/*
	 * Jobs move the data (dev_copy()): user memory may be bounced (the
	 * 6.12-swiotlb lane), and only a job that lists the buffer brings
	 * the CPU's writes to the device and the device's back.
	 */
	/* The device writes the process's own memory... */
	ASSERT_EQ(0, dev_copy(self->fd, uva + 10, hva, TEST_PAGE,
			      (uint32_t[]){ uh, hh }, 2));
	EXPECT_TRUE(all_bytes(u, 0x21, 10));
	EXPECT_TRUE(all_bytes(u + 10, 0x65, TEST_PAGE));
	EXPECT_TRUE(all_bytes(u + 10 + TEST_PAGE, 0x21, size - 10 - TEST_PAGE));
	/* ... and reads what the process writes. */
	memset(u, 0x99, size);
	ASSERT_EQ(0, dev_copy(self->fd, hva, uva, size,
			      (uint32_t[]){ hh, uh }, 2));
	EXPECT_TRUE(all_bytes(hm, 0x99, size));

	/* A read-only userptr: readable, never written. */
	ASSERT_EQ(0, dev_copy(self->fd, hva, rova, size,
			      (uint32_t[]){ hh, roh }, 2));
	EXPECT_TRUE(all_bytes(hm, 0x43, size));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults0));
	EXPECT_EQ(-EFAULT, dev_copy(self->fd, rova, uva, size,
				    (uint32_t[]){ roh, uh }, 2));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults));
	EXPECT_EQ(faults0 + 1, faults);
	EXPECT_TRUE(all_bytes(ro, 0x43, size));

	munmap(hm, size);
	gem_close(self->fd, hh);
	gem_close(self->fd, uh);
	gem_close(self->fd, roh);
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
	munmap(u, size);
	munmap(ro, size);
}

/* ---- accounting ---- */

TEST_F(mem, accounting_matches)
{
	uint64_t hbm = 3 * TEST_PAGE + 2 * MiB, host = 5 * TEST_PAGE,
		 up = 2 * TEST_PAGE, v;
	struct drm_trn_memory_info mi;
	uint32_t h1, h2, h3;
	void *mem;

	mem = mmap(NULL, up, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_EQ(0, bo_create(self->fd, hbm, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &h1, NULL));
	ASSERT_EQ(0, bo_create(self->fd, host, DRM_TRN_PLACEMENT_HOST,
			       DRM_TRN_BO_HOST_WC, 0, &h2, NULL));
	ASSERT_EQ(0, bo_userptr(self->fd, mem, up, 0, &h3, NULL));

	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-total-hbm", &v));
	EXPECT_EQ(hbm, v);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-resident-hbm", &v));
	EXPECT_EQ(hbm, v);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-total-host", &v));
	EXPECT_EQ(host + up, v);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-shared-host", &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-buffers", &v));
	EXPECT_EQ(3, v);
	EXPECT_TRUE(counters_are(DUT_ID, hbm, self->base.host_pinned + host + up));
	ASSERT_EQ(0, sim_accel_u64(DUT_ID, "hbm_total", &v));
	EXPECT_EQ(self->info.hbm_size, v);

	ASSERT_EQ(0, query_memory(self->fd, &mi));
	EXPECT_EQ(self->info.hbm_size, mi.hbm_total);
	EXPECT_EQ(hbm, mi.hbm_used);
	EXPECT_EQ(self->base.host_pinned + host + up, mi.host_pinned);
	EXPECT_EQ(hbm, mi.ctx_hbm);
	EXPECT_EQ(host + up, mi.ctx_pinned);
	EXPECT_EQ(3, mi.ctx_bos);
	EXPECT_NE(0, mi.max_ctx_bos);
	EXPECT_NE(0, mi.max_ctx_pinned);

	gem_close(self->fd, h1);
	gem_close(self->fd, h2);
	gem_close(self->fd, h3);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-total-hbm", &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-total-host", &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, query_memory(self->fd, &mi));
	EXPECT_EQ(0, mi.ctx_bos);
	EXPECT_EQ(0, mi.ctx_hbm);
	EXPECT_EQ(0, mi.ctx_pinned);
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
	munmap(mem, up);
}

TEST_F(mem, limits)
{
	uint64_t old_bos, old_pinned;
	struct drm_trn_memory_info mi;
	uint32_t h[6], big;
	void *mem;
	int i;

	ASSERT_EQ(0, trn_param_get("max_bos_per_file", &old_bos));
	ASSERT_EQ(0, trn_param_get("max_pinned_mib_per_file", &old_pinned));

	ASSERT_EQ(0, trn_param_set("max_bos_per_file", 5));
	ASSERT_EQ(0, query_memory(self->fd, &mi));
	EXPECT_EQ(5, mi.max_ctx_bos);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, bo_create(self->fd, TEST_PAGE,
				       i & 1 ? DRM_TRN_PLACEMENT_HOST :
				       DRM_TRN_PLACEMENT_HBM, 0, 0, &h[i], NULL));
	EXPECT_EQ(-EDQUOT, bo_create(self->fd, TEST_PAGE, DRM_TRN_PLACEMENT_HBM,
				     0, 0, NULL, NULL));
	EXPECT_EQ(-EDQUOT, bo_create(self->fd, TEST_PAGE,
				     DRM_TRN_PLACEMENT_HOST, 0, 0, NULL, NULL));
	EXPECT_TRUE(counters_are(DUT_ID, 3 * TEST_PAGE,
				 self->base.host_pinned + 2 * TEST_PAGE));
	ASSERT_EQ(0, query_memory(self->fd, &mi));
	EXPECT_EQ(5, mi.ctx_bos);
	/* Another context has its own count. */
	{
		int fd2 = dut_open();
		uint32_t h2;

		ASSERT_LE(0, fd2);
		EXPECT_EQ(0, bo_create(fd2, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0,
				       0, &h2, NULL));
		close(fd2);
	}
	ASSERT_EQ(0, gem_close(self->fd, h[0]));
	EXPECT_EQ(0, bo_create(self->fd, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &h[0], NULL));
	for (i = 0; i < 5; i++)
		gem_close(self->fd, h[i]);
	ASSERT_EQ(0, trn_param_set("max_bos_per_file", old_bos));

	/* Pinned memory: 1 MiB per context. */
	ASSERT_EQ(0, trn_param_set("max_pinned_mib_per_file", 1));
	ASSERT_EQ(0, query_memory(self->fd, &mi));
	EXPECT_EQ(MiB, mi.max_ctx_pinned);
	EXPECT_EQ(-EDQUOT, bo_create(self->fd, MiB + 1, DRM_TRN_PLACEMENT_HOST,
				     0, 0, NULL, NULL));
	ASSERT_EQ(0, bo_create(self->fd, MiB - TEST_PAGE,
			       DRM_TRN_PLACEMENT_HOST, 0, 0, &big, NULL));
	mem = mmap(NULL, 2 * TEST_PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	EXPECT_EQ(-EDQUOT, bo_userptr(self->fd, mem, 2 * TEST_PAGE, 0, NULL,
				      NULL));
	ASSERT_EQ(0, bo_userptr(self->fd, mem, TEST_PAGE, 0, &h[0], NULL));
	EXPECT_EQ(-EDQUOT, bo_create(self->fd, 1, DRM_TRN_PLACEMENT_HOST, 0, 0,
				     NULL, NULL));
	/* Device memory is not pinned host memory. */
	ASSERT_EQ(0, bo_create(self->fd, 4 * MiB, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &h[1], NULL));
	EXPECT_TRUE(counters_are(DUT_ID, 4 * MiB, self->base.host_pinned + MiB));
	ASSERT_EQ(0, query_memory(self->fd, &mi));
	EXPECT_EQ(MiB, mi.ctx_pinned);
	EXPECT_EQ(3, mi.ctx_bos);
	gem_close(self->fd, h[0]);
	gem_close(self->fd, h[1]);
	gem_close(self->fd, big);
	ASSERT_EQ(0, trn_param_set("max_pinned_mib_per_file", old_pinned));
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
	munmap(mem, 2 * TEST_PAGE);
}

/*
 * A child allocates every kind of buffer and maps them, then dies: exits
 * normally (@kill false) or is killed with SIGKILL while holding them.
 */
static int child_dies_holding(bool kill_it)
{
	int pipefd[2], status = -1;
	char c = 0;
	pid_t pid;

	if (pipe(pipefd))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = dut_open(), fd2 = dut_open();
		uint32_t h1, h2, h3, h4;
		void *mem, *m1, *m2;

		mem = mmap(NULL, MiB, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fd < 0 || fd2 < 0 || mem == MAP_FAILED ||
		    bo_create(fd, 16 * MiB, DRM_TRN_PLACEMENT_HBM, 0, 0, &h1, NULL) ||
		    bo_create(fd, 2 * MiB, DRM_TRN_PLACEMENT_HOST, 0, 0, &h2, NULL) ||
		    bo_create(fd2, 3 * TEST_PAGE, DRM_TRN_PLACEMENT_HOST,
			      DRM_TRN_BO_HOST_WC, 0, &h3, NULL) ||
		    bo_userptr(fd2, mem, MiB, 0, &h4, NULL))
			_exit(2);
		m1 = bo_mmap(fd, h1, 16 * MiB);
		m2 = bo_mmap(fd, h2, 2 * MiB);
		if (m1 == MAP_FAILED || m2 == MAP_FAILED)
			_exit(3);
		memset(m1, 1, 16 * MiB);
		memset(m2, 2, 2 * MiB);
		/* Handles closed, mappings kept: they hold the buffers. */
		gem_close(fd, h1);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(4);
		if (kill_it)
			pause();
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &c, 1) != 1)
		c = 0;
	close(pipefd[0]);
	if (kill_it)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		return -ECHILD;
	if (c != 'r')
		return -EIO;
	if (kill_it ? !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) :
		      !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		return -EPROTO;
	return 0;
}

TEST_F(mem, child_exit_releases_everything)
{
	struct sim_counters now;

	ASSERT_EQ(0, child_dies_holding(false));
	EXPECT_EQ(0, sim_counters_wait(DUT_ID, &self->base, &now))
		TH_LOG("hbm_used %llu host_pinned %llu after exit",
		       (unsigned long long)now.hbm_used,
		       (unsigned long long)now.host_pinned);
	ASSERT_EQ(0, child_dies_holding(true));
	EXPECT_EQ(0, sim_counters_wait(DUT_ID, &self->base, &now))
		TH_LOG("hbm_used %llu host_pinned %llu after SIGKILL",
		       (unsigned long long)now.hbm_used,
		       (unsigned long long)now.host_pinned);
	/* And all of HBM can be had again. */
	EXPECT_EQ(0, whole_hbm_is_zero(self->fd, self->info.hbm_size));
}

/* ---- invalid arguments: nothing changes ---- */

/* The counters a failed call must not touch. */
struct snapshot {
	struct sim_counters c;
	struct drm_trn_memory_info mi;
	uint64_t fd_bufs;
};

static int snap(int fd, struct snapshot *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = sim_counters(DUT_ID, &s->c);
	if (!ret)
		ret = query_memory(fd, &s->mi);
	if (!ret)
		ret = fdinfo_u64(fd, "trn-buffers", &s->fd_bufs);
	return ret;
}

static bool snap_same(int fd, const struct snapshot *a)
{
	struct snapshot b;

	return !snap(fd, &b) && !memcmp(a, &b, sizeof(b));
}

/* Expect @request on @arg to fail with @err and leave @arg as it was. */
static int fails_cleanly(int fd, unsigned long request, void *arg,
			 size_t size, int err)
{
	unsigned char before[128];
	struct snapshot s;
	int ret;

	memcpy(before, arg, size);
	if (snap(fd, &s))
		return 10;
	ret = raw_ioctl(fd, request, arg);
	if (ret != -err) {
		fprintf(stderr, "# expected %d (%s), got %d (%s)\n", -err,
			strerror(err), ret, strerror(-ret));
		if (!ret && request == DRM_IOCTL_TRN_BO_CREATE)
			gem_close(fd, ((struct drm_trn_bo_create *)arg)->handle);
		if (!ret && request == DRM_IOCTL_TRN_BO_USERPTR)
			gem_close(fd, ((struct drm_trn_bo_userptr *)arg)->handle);
		return 1;
	}
	if (memcmp(before, arg, size)) {
		fprintf(stderr, "# the argument structure was modified\n");
		return 2;
	}
	if (!snap_same(fd, &s)) {
		fprintf(stderr, "# a counter changed\n");
		return 3;
	}
	return 0;
}

static struct drm_trn_bo_create good_create(void)
{
	struct drm_trn_bo_create c = {
		.size = TEST_PAGE,
		.placement = DRM_TRN_PLACEMENT_HOST,
		/* outputs filled with junk: ignored, and must stay */
		.handle = 0xdead,
		.va = 0xbeef,
	};

	return c;
}

#define CREATE_FAILS(c, err) \
	EXPECT_EQ(0, fails_cleanly(self->fd, DRM_IOCTL_TRN_BO_CREATE, &(c), \
				   sizeof(c), err))

TEST_F(mem, bo_create_invalid)
{
	static const uint32_t bad_placements[] = {
		0, DRM_TRN_PLACEMENT_USERPTR, DRM_TRN_PLACEMENT_IMPORTED, 5,
		0x80000000u, UINT32_MAX,
	};
	struct drm_trn_bo_create c;
	unsigned int bit;
	size_t i;

	c = good_create();
	c.size = 0;
	CREATE_FAILS(c, EINVAL);
	c.placement = DRM_TRN_PLACEMENT_HBM;
	CREATE_FAILS(c, EINVAL);

	c = good_create();
	c.pad = 1;
	CREATE_FAILS(c, EINVAL);
	c.pad = 0x80000000u;
	CREATE_FAILS(c, EINVAL);

	/* Bit 2 is DRM_TRN_BO_ON_STACK, valid with HBM (stack 0). */
	for (bit = 2; bit < 32; bit++) {
		c = good_create();
		c.flags = 1U << bit;
		CREATE_FAILS(c, EINVAL);
		c.placement = DRM_TRN_PLACEMENT_HBM;
		if (bit != 2)
			CREATE_FAILS(c, EINVAL);
	}
	/* A stack number needs ON_STACK, ON_STACK needs HBM and a stack. */
	for (bit = 8; bit < 16; bit++) {
		c = good_create();
		c.placement = DRM_TRN_PLACEMENT_HBM;
		c.flags = 1U << bit;
		CREATE_FAILS(c, EINVAL);
		c.flags |= DRM_TRN_BO_DEVICE_READ_ONLY;
		CREATE_FAILS(c, EINVAL);
	}
	c = good_create();
	c.flags = DRM_TRN_BO_STACK(0);
	CREATE_FAILS(c, EINVAL);
	c.flags = DRM_TRN_BO_STACK(0) | DRM_TRN_BO_HOST_WC;
	CREATE_FAILS(c, EINVAL);
	c.placement = DRM_TRN_PLACEMENT_HBM;
	CREATE_FAILS(c, EINVAL);
	c.flags = DRM_TRN_BO_STACK(self->info.hbm_stacks);
	CREATE_FAILS(c, EINVAL);
	c.flags = DRM_TRN_BO_STACK(255);
	CREATE_FAILS(c, EINVAL);
	c.flags = DRM_TRN_BO_STACK(256);
	CREATE_FAILS(c, EINVAL);
	c.flags = DRM_TRN_BO_ON_STACK | DRM_TRN_BO_STACK_MASK;
	CREATE_FAILS(c, EINVAL);
	for (i = 0; i < ARRAY_SIZE(bad_placements); i++) {
		c = good_create();
		c.placement = bad_placements[i];
		CREATE_FAILS(c, EINVAL);
	}
	c = good_create();
	c.placement = DRM_TRN_PLACEMENT_HBM;
	c.flags = DRM_TRN_BO_HOST_WC;
	CREATE_FAILS(c, EINVAL);
	c.flags = DRM_TRN_BO_HOST_WC | DRM_TRN_BO_DEVICE_READ_ONLY;
	CREATE_FAILS(c, EINVAL);

	c = good_create();
	c.alignment = 3;
	CREATE_FAILS(c, EINVAL);
	c.alignment = 2 * GiB;
	CREATE_FAILS(c, EINVAL);
	c.alignment = 1ULL << 63;
	CREATE_FAILS(c, EINVAL);

	/* Errors found later must also leave no trace. */
	c = good_create();
	c.placement = DRM_TRN_PLACEMENT_HBM;
	c.size = self->info.hbm_size + 1;
	CREATE_FAILS(c, E2BIG);
	/* A stack's worth and a byte: never on one stack. */
	c.size = self->info.hbm_size / self->info.hbm_stacks + 1;
	c.flags = DRM_TRN_BO_STACK(self->info.hbm_stacks - 1);
	CREATE_FAILS(c, E2BIG);
	/*
	 * A page on stack 1 aligned to 1 GiB: never, where stack 1 holds no
	 * multiple of 1 GiB (the simulator's, the model's).
	 */
	if (self->info.hbm_stacks > 1) {
		uint64_t stack = self->info.hbm_size / self->info.hbm_stacks;
		uint64_t at = (stack + GiB - 1) & ~(GiB - 1);

		c.size = TEST_PAGE;
		c.flags = DRM_TRN_BO_STACK(1);
		c.alignment = GiB;
		if (at + TEST_PAGE > 2 * stack)
			CREATE_FAILS(c, E2BIG);
		c.alignment = 0;
	}

	/* The valid baseline works, and the flags really are accepted. */
	c = good_create();
	c.flags = DRM_TRN_BO_HOST_WC | DRM_TRN_BO_DEVICE_READ_ONLY;
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_BO_CREATE, &c));
	EXPECT_EQ(0, c.pad);
	{
		struct drm_trn_bo_info bi;

		ASSERT_EQ(0, bo_info(self->fd, c.handle, &bi));
		EXPECT_EQ(DRM_TRN_BO_HOST_WC | DRM_TRN_BO_DEVICE_READ_ONLY,
			  bi.bo_flags);
	}
	EXPECT_EQ(0, gem_close(self->fd, c.handle));
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
}

TEST_F(mem, bo_info_invalid)
{
	struct drm_trn_bo_info bi;
	uint32_t h;

	ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &h, NULL));
	memset(&bi, 0x5a, sizeof(bi));
	bi.handle = h;
	bi.flags = 1;
	EXPECT_EQ(0, fails_cleanly(self->fd, DRM_IOCTL_TRN_BO_INFO, &bi,
				   sizeof(bi), EINVAL));
	bi.flags = 0x80000000u;
	EXPECT_EQ(0, fails_cleanly(self->fd, DRM_IOCTL_TRN_BO_INFO, &bi,
				   sizeof(bi), EINVAL));
	bi.flags = 0;
	bi.handle = 0;
	EXPECT_EQ(0, fails_cleanly(self->fd, DRM_IOCTL_TRN_BO_INFO, &bi,
				   sizeof(bi), ENOENT));
	bi.handle = 12345;
	EXPECT_EQ(0, fails_cleanly(self->fd, DRM_IOCTL_TRN_BO_INFO, &bi,
				   sizeof(bi), ENOENT));
	bi.handle = h + 1;
	EXPECT_EQ(0, fails_cleanly(self->fd, DRM_IOCTL_TRN_BO_INFO, &bi,
				   sizeof(bi), ENOENT));
	/* A closed handle is unknown; closing it again is EINVAL. */
	ASSERT_EQ(0, gem_close(self->fd, h));
	bi.handle = h;
	EXPECT_EQ(0, fails_cleanly(self->fd, DRM_IOCTL_TRN_BO_INFO, &bi,
				   sizeof(bi), ENOENT));
	EXPECT_EQ(-EINVAL, gem_close(self->fd, h));
}

#define USERPTR_FAILS(u, err) \
	EXPECT_EQ(0, fails_cleanly(self->fd, DRM_IOCTL_TRN_BO_USERPTR, &(u), \
				   sizeof(u), err))

TEST_F(mem, bo_userptr_invalid)
{
	struct drm_trn_bo_userptr u;
	unsigned char *mem, *rom;
	unsigned int bit;
	size_t size = 4 * TEST_PAGE;

	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	rom = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rom);
	memset(&u, 0, sizeof(u));
	u.handle = 0xdead;
	u.va = 0xbeef;

	for (bit = 1; bit < 32; bit++) {
		u.addr = (uintptr_t)mem;
		u.size = size;
		u.flags = 1U << bit;
		USERPTR_FAILS(u, EINVAL);
	}
	u.flags = 0;
	u.addr = (uintptr_t)mem + 1;
	USERPTR_FAILS(u, EINVAL);
	u.addr = (uintptr_t)mem + 2048;
	USERPTR_FAILS(u, EINVAL);
	u.addr = (uintptr_t)mem;
	u.size = TEST_PAGE + 1;
	USERPTR_FAILS(u, EINVAL);
	u.size = 100;
	USERPTR_FAILS(u, EINVAL);
	u.size = 0;
	USERPTR_FAILS(u, EINVAL);
	/* A range that wraps around the address space. */
	u.addr = UINT64_MAX & ~(TEST_PAGE - 1);
	u.size = 2 * TEST_PAGE;
	USERPTR_FAILS(u, EINVAL);
	u.addr = TEST_PAGE;
	u.size = UINT64_MAX & ~(TEST_PAGE - 1);
	USERPTR_FAILS(u, EINVAL);

	/* Not mapped: entirely, partly (past the end), kernel addresses. */
	ASSERT_EQ(0, munmap(mem + 2 * TEST_PAGE, 2 * TEST_PAGE));
	u.addr = (uintptr_t)mem + 2 * TEST_PAGE;
	u.size = 2 * TEST_PAGE;
	USERPTR_FAILS(u, EFAULT);
	u.addr = (uintptr_t)mem;
	u.size = 4 * TEST_PAGE;
	USERPTR_FAILS(u, EFAULT);
	u.addr = 0xffff800000000000ULL;
	u.size = TEST_PAGE;
	USERPTR_FAILS(u, EFAULT);
	u.addr = 0;
	USERPTR_FAILS(u, EFAULT);

	/* Read-only memory needs READ_ONLY. */
	u.addr = (uintptr_t)rom;
	u.size = size;
	USERPTR_FAILS(u, EFAULT);
	u.flags = DRM_TRN_USERPTR_READ_ONLY;
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_BO_USERPTR, &u));
	{
		struct drm_trn_bo_info bi;

		ASSERT_EQ(0, bo_info(self->fd, u.handle, &bi));
		EXPECT_EQ(DRM_TRN_PLACEMENT_USERPTR, bi.placement);
		EXPECT_EQ(DRM_TRN_BO_DEVICE_READ_ONLY, bi.bo_flags);
		EXPECT_EQ(size, bi.size);
		EXPECT_EQ(u.va, bi.va);
		EXPECT_EQ(0, bi.mmap_offset);
	}
	EXPECT_EQ(0, gem_close(self->fd, u.handle));
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
	munmap(mem, 2 * TEST_PAGE);
	munmap(rom, size);
}

/* Buffers of 2 MiB and more are 2 MiB-aligned in device memory too. */
TEST_F(mem, default_alignment_is_physical)
{
	uint64_t n = self->info.hbm_size / (2 * MiB), i;
	static uint32_t h[1024];
	uint32_t small, tail;

	ASSERT_LE(n, ARRAY_SIZE(h));
	/* One page at offset 0 spoils the first 2 MiB slot... */
	ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &small, NULL));
	for (i = 0; i < n - 1; i++)
		ASSERT_EQ(0, bo_create(self->fd, 2 * MiB, DRM_TRN_PLACEMENT_HBM,
				       0, 0, &h[i], NULL)) TH_LOG("buffer %llu",
					(unsigned long long)i);
	/* ... so 2 MiB - 4 KiB are free but no 2 MiB buffer fits. */
	EXPECT_EQ(-ENOMEM, bo_create(self->fd, 2 * MiB, DRM_TRN_PLACEMENT_HBM,
				     0, 0, NULL, NULL));
	EXPECT_TRUE(counters_are(DUT_ID, (n - 1) * 2 * MiB + TEST_PAGE,
				 self->base.host_pinned));
	/* Explicit page alignment uses the gap. */
	ASSERT_EQ(0, bo_create(self->fd, 2 * MiB - TEST_PAGE,
			       DRM_TRN_PLACEMENT_HBM, 0, TEST_PAGE, &tail,
			       NULL));
	EXPECT_TRUE(counters_are(DUT_ID, self->info.hbm_size,
				 self->base.host_pinned));
	gem_close(self->fd, tail);
	gem_close(self->fd, small);
	for (i = 0; i < n - 1; i++)
		gem_close(self->fd, h[i]);
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
}

/* A CPU mapping keeps the buffer alive after its handle is closed. */
TEST_F(mem, mapping_outlives_handle)
{
	struct drm_trn_bo_info bi;
	unsigned char *m;
	uint32_t h;
	void *big;

	ASSERT_EQ(0, bo_create(self->fd, MiB, DRM_TRN_PLACEMENT_HBM, 0, 0, &h,
			       NULL));
	ASSERT_EQ(0, bo_info(self->fd, h, &bi));
	/* Larger than the buffer, or private: refused. */
	big = mmap(NULL, MiB + TEST_PAGE, PROT_READ, MAP_SHARED, self->fd,
		   (off_t)bi.mmap_offset);
	EXPECT_EQ(MAP_FAILED, big);
	m = bo_mmap(self->fd, h, MiB);
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 0x4b, MiB);
	ASSERT_EQ(0, gem_close(self->fd, h));
	EXPECT_EQ(-ENOENT, bo_info(self->fd, h, &bi));
	EXPECT_TRUE(counters_are(DUT_ID, MiB, self->base.host_pinned));
	EXPECT_TRUE(all_bytes(m, 0x4b, MiB));
	ASSERT_EQ(0, munmap(m, MiB));
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
	/* And what it held was cleared. */
	EXPECT_EQ(0, whole_hbm_is_zero(self->fd, self->info.hbm_size));
}

static sigjmp_buf unplug_jmp;

static void unplug_sigbus(int sig)
{
	siglongjmp(unplug_jmp, 1);
}

/* Whether reading *@p raises SIGBUS; alone, so that setjmp clobbers nothing. */
static __attribute__((noinline)) int read_raises_sigbus(volatile unsigned char *p)
{
	struct sigaction sa = { .sa_handler = unplug_sigbus }, old;
	volatile int faulted = 0;

	if (sigaction(SIGBUS, &sa, &old))
		return -errno;
	if (sigsetjmp(unplug_jmp, 1) == 0)
		(void)*p;
	else
		faulted = 1;
	sigaction(SIGBUS, &old, NULL);
	return faulted;
}

/*
 * A device removed while a context still holds buffers and CPU mappings:
 * ioctls fail with ENODEV, device memory mappings raise SIGBUS, host
 * memory stays readable, and everything goes once the file is closed.
 */
TEST_F(mem, unplug_with_buffers)
{
	enum { ID = 31 };
	volatile unsigned char *hbm, *host;
	struct drm_trn_bo_info bi;
	uint32_t h1, h2;
	int fd;

	SIMULATOR_ONLY("it removes a simulated device (a part's removal: tests/pci-lane/test_pci_exec)");

	ASSERT_EQ(0, sim_new(ID, 2, 16, 1));
	fd = sim_open(ID);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bo_create(fd, 2 * TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &h1, NULL));
	ASSERT_EQ(0, bo_create(fd, 2 * TEST_PAGE, DRM_TRN_PLACEMENT_HOST, 0, 0,
			       &h2, NULL));
	hbm = bo_mmap(fd, h1, 2 * TEST_PAGE);
	ASSERT_NE(MAP_FAILED, hbm);
	host = bo_mmap(fd, h2, 2 * TEST_PAGE);
	ASSERT_NE(MAP_FAILED, host);
	hbm[0] = 1;
	host[0] = 2;

	ASSERT_EQ(0, sim_del(ID));
	EXPECT_EQ(-ENODEV, bo_info(fd, h1, &bi));
	/* A page mapped before the removal, and one never touched. */
	EXPECT_EQ(1, read_raises_sigbus(hbm));
	EXPECT_EQ(1, read_raises_sigbus(hbm + TEST_PAGE));
	EXPECT_EQ(2, host[0]);

	munmap((void *)hbm, 2 * TEST_PAGE);
	munmap((void *)host, 2 * TEST_PAGE);
	close(fd);
	/* The id is free again, and a new device with it starts empty. */
	ASSERT_EQ(0, sim_new(ID, 2, 16, 1));
	fd = sim_open(ID);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, whole_hbm_is_zero(fd, 16 * MiB));
	close(fd);
	ASSERT_EQ(0, sim_del(ID));
}

/*
 * Entries of DMA-API debugging's list of live mappings and allocations
 * that belong to device @name; -ENOENT on a kernel without that list.
 */
static int dma_debug_entries(const char *name)
{
	char line[512], key[64];
	int n = 0;
	FILE *f;

	if (debugfs_ready())
		return -ENOENT;
	f = fopen("/sys/kernel/debug/dma-api/dump", "r");
	if (!f)
		return -ENOENT;
	/* "driver device type idx ...": the device is the second word. */
	snprintf(key, sizeof(key), " %s ", name);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, key) != NULL;
	fclose(f);
	return n;
}

/*
 * A removal takes back every DMA mapping and allocation of the device,
 * also of buffers that files still hold (another driver may get the device,
 * and its IOMMU domain, next), and every CPU view of host memory keeps its
 * data: host buffers cached and write-combined, mapped before or first
 * touched after, user memory a job wrote, and the completion record of a
 * queue whose job finished.
 */
TEST_F(mem, unplug_returns_dma_keeps_data)
{
	/* More pages than the driver moves at a time. */
	enum { ID = 32, PAGES = 40, UNTOUCHED = 5 };
	const volatile struct drm_trn_queue_status_page *status;
	uint32_t host_h, wc_h, user_h, bos[4];
	struct drm_trn_queue_create qc;
	uint64_t host_va, user_va;
	unsigned char *host, *wc, *user;
	struct host_bo cmdbo;
	struct drm_trn_job job;
	struct cmds c;
	int fd, before, i;
	bool ok;

	SIMULATOR_ONLY("it removes a simulated device (a part's removal: tests/pci-lane/test_pci_exec)");

	ASSERT_EQ(0, sim_new(ID, 2, 16, 1));
	fd = sim_open(ID);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bo_create(fd, PAGES * TEST_PAGE, DRM_TRN_PLACEMENT_HOST, 0,
			       0, &host_h, &host_va));
	host = bo_mmap(fd, host_h, PAGES * TEST_PAGE);
	ASSERT_NE(MAP_FAILED, host);
	for (i = 0; i < PAGES; i++)
		if (i != UNTOUCHED)
			memset(host + i * TEST_PAGE, i + 1, TEST_PAGE);
	ASSERT_EQ(0, bo_create(fd, 2 * TEST_PAGE, DRM_TRN_PLACEMENT_HOST,
			       DRM_TRN_BO_HOST_WC, 0, &wc_h, NULL));
	wc = bo_mmap(fd, wc_h, 2 * TEST_PAGE);
	ASSERT_NE(MAP_FAILED, wc);
	memset(wc, 0xa5, 2 * TEST_PAGE);
	user = aligned_alloc(TEST_PAGE, 2 * TEST_PAGE);
	ASSERT_NE(NULL, user);
	memset(user, 0x3c, 2 * TEST_PAGE);
	ASSERT_EQ(0, bo_userptr(fd, user, 2 * TEST_PAGE, 0, &user_h, &user_va));

	/* One job: host page 0 to the user memory's second page. */
	ASSERT_EQ(0, queue_create(fd, 0, DRM_TRN_PRIORITY_NORMAL, &qc));
	status = status_page_map(fd, qc.status_handle);
	ASSERT_NE(NULL, status);
	ASSERT_EQ(0, host_bo_new(fd, TEST_PAGE, &cmdbo));
	cmds_init(&c, cmdbo.map, cmdbo.va, TEST_PAGE);
	ASSERT_EQ(0, cmds_copy(&c, user_va + TEST_PAGE, host_va, TEST_PAGE));
	bos[0] = host_h;
	bos[1] = user_h;
	bos[2] = cmdbo.handle;
	job_init(&job, c.va, (uint32_t)c.len);
	job.bo_handles = (uintptr_t)bos;
	job.bo_count = 3;
	ASSERT_EQ(0, submit_jobs(fd, qc.queue_id, &job, 1));
	ASSERT_EQ(0, syncobj_wait_point(fd, qc.syncobj, job.seqno, 10000));
	ASSERT_EQ(job.seqno, status->completed_seqno);

	before = dma_debug_entries("trn_sim32");
	if (before >= 0) {
		EXPECT_LT(0, before) TH_LOG("the list should name the device");
	}
	ASSERT_EQ(0, sim_del(ID));
	if (before >= 0) {
		EXPECT_EQ(0, dma_debug_entries("trn_sim32"))
			TH_LOG("DMA mappings outlive the device");
	} else {
		TH_LOG("no DMA-API debugging here: mappings not counted");
	}

	for (i = 0, ok = true; i < PAGES; i++)
		ok &= all_bytes(host + i * TEST_PAGE,
				i == UNTOUCHED ? 0 : i + 1, TEST_PAGE);
	EXPECT_TRUE(ok) TH_LOG("a host page changed in the removal");
	EXPECT_TRUE(all_bytes(wc, 0xa5, 2 * TEST_PAGE));
	EXPECT_TRUE(all_bytes(user, 0x3c, TEST_PAGE));
	EXPECT_TRUE(all_bytes(user + TEST_PAGE, 1, TEST_PAGE));
	EXPECT_EQ(job.seqno, status->completed_seqno);
	EXPECT_EQ(0, status->failed_count);
	/* Still memory: writes stick. */
	host[UNTOUCHED * TEST_PAGE] = 0x77;
	EXPECT_EQ(0x77, host[UNTOUCHED * TEST_PAGE]);

	munmap((void *)status, TEST_PAGE);
	munmap(host, PAGES * TEST_PAGE);
	munmap(wc, 2 * TEST_PAGE);
	host_bo_free(fd, &cmdbo);
	close(fd);
	free(user);
}

/* ---- the library over the real driver ---- */

/* The GEM handle of a libtrnhal buffer; 0 if it has none. */
static uint32_t bo_handle(trn_bo_t *bo)
{
	struct trn_bo_info bi;

	return trn_bo_info(bo, &bi) ? 0 : bi.handle;
}

TEST_F(mem, libtrnhal_buffers)
{
	struct trn_memory_stats st;
	struct trn_bo_info bi;
	trn_bo_t *hbm, *host, *up, *again;
	unsigned char *p, *q, *mem;
	trn_device_t *dev;
	unsigned int minor;
	int dmabuf, status = -1;
	pid_t pid;

	ASSERT_EQ(0, dut_minor(&minor));
	ASSERT_EQ(0, trn_device_open(minor, &dev));
	ASSERT_EQ(0, trn_bo_create(dev, 3 * TEST_PAGE + 1, TRN_PLACEMENT_HBM,
				   0, 0, &hbm));
	ASSERT_EQ(0, trn_bo_create(dev, TEST_PAGE, TRN_PLACEMENT_HOST,
				   TRN_BO_HOST_WC, 64 * 1024, &host));
	EXPECT_EQ(4 * TEST_PAGE, trn_bo_size(hbm));
	EXPECT_EQ(0, trn_bo_va(host) % (64 * 1024));
	ASSERT_EQ(0, trn_bo_info(host, &bi));
	EXPECT_EQ(TRN_PLACEMENT_HOST, bi.placement);
	EXPECT_EQ(TRN_BO_HOST_WC, bi.flags);
	EXPECT_EQ(TEST_PAGE, bi.size);
	/* The cached size and address are the kernel's. */
	{
		struct drm_trn_bo_info kbi;

		ASSERT_EQ(0, trn_bo_info(hbm, &bi));
		ASSERT_EQ(0, bo_info(trn_device_fd(dev), bi.handle, &kbi));
		EXPECT_EQ(kbi.size, bi.size);
		EXPECT_EQ(kbi.va, bi.va);
		EXPECT_EQ(kbi.placement, bi.placement);
	}
	ASSERT_EQ(0, trn_device_memory_stats(dev, &st));
	EXPECT_EQ(4 * TEST_PAGE, st.hbm_used);
	EXPECT_EQ(4 * TEST_PAGE, st.ctx_hbm);
	EXPECT_EQ(TEST_PAGE, st.ctx_pinned);
	EXPECT_EQ(2, st.ctx_bos);
	EXPECT_EQ(self->info.hbm_size, st.hbm_total);
	/* The stacks: as many as the device says, their sum the device's. */
	{
		struct trn_hbm_stack stacks[256], one;
		size_t count = 0, n;
		uint64_t sum = 0;

		ASSERT_EQ(0, trn_device_hbm_stacks(dev, NULL, 0, &count));
		EXPECT_EQ(self->info.hbm_stacks, count);
		memset(&one, 0xa5, sizeof(one));
		ASSERT_EQ(0, trn_device_hbm_stacks(dev, &one, 1, &count));
		EXPECT_EQ(self->info.hbm_stacks, count);
		EXPECT_EQ(self->info.hbm_size / count, one.size);
		EXPECT_EQ(one.size - one.used, one.largest_free);
		EXPECT_EQ(0, one.reserved[0] | one.reserved[4]);
		ASSERT_EQ(0, trn_device_hbm_stacks(dev, stacks, 256, &count));
		for (n = 0; n < count; n++) {
			EXPECT_EQ(self->info.hbm_size / count, stacks[n].size);
			sum += stacks[n].used;
		}
		EXPECT_EQ(st.hbm_used, sum);
		EXPECT_EQ(-EINVAL, trn_device_hbm_stacks(dev, NULL, 1, &count));
		EXPECT_EQ(-EINVAL, trn_device_hbm_stacks(dev, stacks, 1, NULL));
		EXPECT_EQ(-EINVAL, trn_device_hbm_stacks(NULL, stacks, 1,
							 &count));
	}

	/* Mappings are refcounted; the device sees what the CPU wrote. */
	ASSERT_EQ(0, trn_bo_map(hbm, (void **)&p));
	ASSERT_EQ(0, trn_bo_map(hbm, (void **)&q));
	EXPECT_EQ(p, q);
	memset(p, 0x2d, 4 * TEST_PAGE);
	EXPECT_EQ(0, trn_bo_unmap(hbm));
	ASSERT_EQ(0, trn_bo_map(host, (void **)&q));
	ASSERT_EQ(0, dev_copy(trn_device_fd(dev), trn_bo_va(host),
			      trn_bo_va(hbm) + 5, 100,
			      (uint32_t[]){ bo_handle(host), bo_handle(hbm) },
			      2));
	EXPECT_TRUE(all_bytes(q, 0x2d, 100));
	EXPECT_TRUE(all_bytes(q + 100, 0, TEST_PAGE - 100));

	/* Export and import: the same trn_bo_t. */
	EXPECT_EQ(-EOPNOTSUPP, trn_bo_export(hbm, &dmabuf));
	ASSERT_EQ(0, trn_bo_export(host, &dmabuf));
	ASSERT_EQ(0, trn_bo_import(dev, dmabuf, &again));
	EXPECT_EQ(host, again);
	trn_bo_free(again);
	EXPECT_EQ(0, trn_bo_info(host, &bi));	/* still alive */
	EXPECT_EQ(0x2d, q[0]);

	/* Userptr. */
	mem = mmap(NULL, 2 * TEST_PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	EXPECT_EQ(-EINVAL, trn_bo_userptr(dev, mem + 1, TEST_PAGE, 0, &up));
	ASSERT_EQ(0, trn_bo_userptr(dev, mem, 2 * TEST_PAGE, 0, &up));
	EXPECT_EQ(-EINVAL, trn_bo_map(up, (void **)&p));
	/* A job, which hands the (maybe bounced) user memory back. */
	ASSERT_EQ(0, dev_copy(trn_device_fd(dev), trn_bo_va(up) + TEST_PAGE,
			      trn_bo_va(host), TEST_PAGE,
			      (uint32_t[]){ bo_handle(up), bo_handle(host) },
			      2));
	EXPECT_EQ(0x2d, mem[TEST_PAGE]);

	/* A forked child cannot use any of it. */
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int bad = trn_bo_info(hbm, &bi) != -ECHILD ||
			  trn_bo_map(host, (void **)&p) != -ECHILD ||
			  trn_bo_export(host, &dmabuf) != -ECHILD ||
			  trn_bo_va(hbm) != 0 ||
			  trn_device_memory_stats(dev, &st) != -ECHILD;

		trn_bo_free(hbm);	/* must not close the parent's handle */
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, trn_bo_info(hbm, &bi));
	EXPECT_EQ(0, bo_info(trn_device_fd(dev), bi.handle,
			     &(struct drm_trn_bo_info){ 0 }));

	/* The device goes away only with the last buffer. */
	trn_device_close(dev);
	trn_bo_free(up);
	trn_bo_free(host);		/* with its mapping */
	trn_bo_free(hbm);
	close(dmabuf);
	EXPECT_TRUE(counters_are(DUT_ID, 0, self->base.host_pinned));
	munmap(mem, 2 * TEST_PAGE);
}

/* Importing one foreign dma-buf twice through the library: one trn_bo_t. */
TEST_F(mem, libtrnhal_import_twice)
{
	struct dma_heap_allocation_data a = {
		.len = 4 * TEST_PAGE,
		.fd_flags = O_RDWR | O_CLOEXEC,
	};
	trn_bo_t *b1, *b2;
	struct trn_bo_info bi;
	trn_device_t *dev;
	unsigned int minor;
	int hfd;

	hfd = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (hfd < 0)
		SKIP(return, "no /dev/dma_heap/system: %s", strerror(errno));
	ASSERT_EQ(0, raw_ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &a));
	close(hfd);
	ASSERT_EQ(0, dut_minor(&minor));
	ASSERT_EQ(0, trn_device_open(minor, &dev));
	ASSERT_EQ(0, trn_bo_import(dev, (int)a.fd, &b1));
	ASSERT_EQ(0, trn_bo_import(dev, (int)a.fd, &b2));
	EXPECT_EQ(b1, b2);
	ASSERT_EQ(0, trn_bo_info(b1, &bi));
	EXPECT_EQ(TRN_PLACEMENT_IMPORTED, bi.placement);
	EXPECT_EQ(a.len, bi.size);
	close((int)a.fd);
	trn_bo_free(b1);
	/* The handle survives the first free... */
	EXPECT_EQ(0, dut_copy(trn_device_fd(dev), bi.va, bi.va + 8, 8));
	trn_bo_free(b2);
	/* ... and goes with the second. */
	EXPECT_EQ(-EFAULT, dut_copy(trn_device_fd(dev), bi.va, bi.va + 8, 8));
	EXPECT_EQ(-ENOENT, bo_info(trn_device_fd(dev), bi.handle,
				   &(struct drm_trn_bo_info){ 0 }));
	trn_device_close(dev);
}

TEST_HARNESS_MAIN
