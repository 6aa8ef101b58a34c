// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Negative and boundary tests of DRM_IOCTL_TRN_QUERY on simulated device 0.
 * A failed call must change nothing: neither the answer buffer (filled
 * with 0xaa first) nor the query structure itself, which the DRM core
 * copies back to userspace even on failure.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "trn_test.h"

#define PATTERN		0xaa
#define INFO_V1_SIZE	56	/* uAPI 1.0 */
#define INFO_V3_SIZE	72	/* uAPI 1.3: queue_depth, job_timeout_ms, ban_faults */
#define INFO_SIZE	80	/* uAPI 1.8: hbm_stacks */

_Static_assert(offsetof(struct drm_trn_device_info, queue_depth) ==
	       INFO_V1_SIZE, "device info v1 is 56 bytes");
_Static_assert(offsetof(struct drm_trn_device_info, hbm_stacks) ==
	       INFO_V3_SIZE, "device info of uAPI 1.3 to 1.7 is 72 bytes");
_Static_assert(sizeof(struct drm_trn_device_info) == INFO_SIZE,
	       "device info is 80 bytes");

FIXTURE(uapi)
{
	int fd;
	unsigned char buf[4096];
};

FIXTURE_SETUP(uapi)
{
	self->fd = -1;
	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, no part)");
	self->fd = dut_open();
	ASSERT_LE(0, self->fd) TH_LOG("open the device: %s", strerror(-self->fd));
	memset(self->buf, PATTERN, sizeof(self->buf));
}

FIXTURE_TEARDOWN(uapi)
{
	if (self->fd >= 0)
		close(self->fd);
}

static bool all_pattern(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != PATTERN)
			return false;
	return true;
}

static struct drm_trn_query query_of(void *data, uint32_t size)
{
	struct drm_trn_query q = {
		.query = DRM_TRN_QUERY_DEVICE_INFO,
		.size = size,
		.data = (uintptr_t)data,
	};

	return q;
}

/* Expect @q to fail with @err and to leave @q and the buffer untouched. */
static int fails_cleanly(int fd, struct drm_trn_query *q, int err,
			 const unsigned char *buf, size_t len)
{
	struct drm_trn_query before = *q;
	int ret = raw_ioctl(fd, DRM_IOCTL_TRN_QUERY, q);

	if (ret != -err) {
		fprintf(stderr, "# expected %d (%s), got %d (%s)\n", -err,
			strerror(err), ret, strerror(-ret));
		return 1;
	}
	if (memcmp(&before, q, sizeof(*q))) {
		fprintf(stderr, "# the query structure was modified\n");
		return 2;
	}
	if (buf && !all_pattern(buf, len)) {
		fprintf(stderr, "# the answer buffer was modified\n");
		return 3;
	}
	return 0;
}

TEST_F(uapi, valid_query)
{
	struct drm_trn_query q = query_of(self->buf, INFO_V1_SIZE);
	struct drm_trn_device_info info;

	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, &q));
	EXPECT_EQ(INFO_V1_SIZE, q.size);
	EXPECT_EQ(DRM_TRN_QUERY_DEVICE_INFO, q.query);
	EXPECT_EQ(0, q.flags);
	EXPECT_EQ(0, q.pad);
	memcpy(&info, self->buf, sizeof(info));
	EXPECT_EQ(DRM_TRN_UAPI_MAJOR, info.uapi_major);
	EXPECT_EQ(DRM_TRN_UAPI_MINOR, info.uapi_minor);
	if (dut_is_part()) {
		/* A Trn2 or Trn3: its PCI device id, 8 NeuronCores. */
		EXPECT_TRUE(info.generation == DRM_TRN_GEN_TRN2 ||
			    info.generation == DRM_TRN_GEN_TRN3);
		EXPECT_NE(0, info.device_id);
		EXPECT_EQ(8, info.num_cores);
	} else {
		EXPECT_EQ(DRM_TRN_GEN_SIM, info.generation);
		EXPECT_EQ(0, info.device_id);
		EXPECT_EQ(SIM_DEFAULT_CORES, info.num_cores);
	}
	/* Nothing past the answer is touched. */
	EXPECT_TRUE(all_pattern(self->buf + INFO_V1_SIZE,
				sizeof(self->buf) - INFO_V1_SIZE));
}

TEST_F(uapi, size_zero_reports_size)
{
	struct drm_trn_query q = query_of(self->buf, 0);

	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, &q));
	EXPECT_EQ(INFO_SIZE, q.size);
	EXPECT_TRUE(all_pattern(self->buf, sizeof(self->buf)));

	/* The size query never dereferences data. */
	q = query_of(NULL, 0);
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, &q));
	EXPECT_EQ(INFO_SIZE, q.size);
}

TEST_F(uapi, huge_size_gets_kernel_size)
{
	struct drm_trn_query q = query_of(self->buf, sizeof(self->buf));
	struct drm_trn_device_info info;

	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, &q));
	EXPECT_EQ(INFO_SIZE, q.size);
	EXPECT_TRUE(all_pattern(self->buf + INFO_SIZE,
				sizeof(self->buf) - INFO_SIZE));
	ASSERT_EQ(0, query_info(self->fd, &info));
	EXPECT_EQ(0, memcmp(&info, self->buf, sizeof(info)));

	/* Far more than the buffer: the kernel must still write only 80. */
	q = query_of(self->buf, UINT32_MAX);
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, &q));
	EXPECT_EQ(INFO_SIZE, q.size);
}

/* The uAPI 1.3 fields: the policy the ban and bound tests rely on. */
TEST_F(uapi, policy_fields)
{
	struct drm_trn_device_info info;
	uint64_t depth, timeout;

	ASSERT_EQ(0, query_info(self->fd, &info));
	EXPECT_LE(DRM_TRN_SUBMIT_MAX_JOBS, info.queue_depth);
	EXPECT_GE(65536, info.queue_depth);
	EXPECT_LT(0, info.job_timeout_ms);
	EXPECT_EQ(16, info.ban_faults);
	/* uAPI 1.6: how many user-mode queues, if the device has them. */
	if (info.capabilities & DRM_TRN_CAP_USER_QUEUES) {
		EXPECT_LT(0, info.user_queues);
	} else {
		EXPECT_EQ(0, info.user_queues);
	}
	/* sysfs says the same. */
	ASSERT_EQ(0, dut_accel_u64("queue_depth", &depth));
	ASSERT_EQ(0, dut_accel_u64("job_timeout_ms", &timeout));
	EXPECT_EQ(depth, info.queue_depth);
	EXPECT_EQ(timeout, info.job_timeout_ms);
}

/*
 * uAPI 1.8: the HBM stacks, equal parts of hbm_size; a caller that knows
 * only the 72 bytes of uAPI 1.3 gets those and nothing more.
 */
TEST_F(uapi, hbm_stacks_field)
{
	struct drm_trn_query q = query_of(self->buf, INFO_V3_SIZE);
	struct drm_trn_device_info info;

	ASSERT_EQ(0, query_info(self->fd, &info));
	EXPECT_LE(1, info.hbm_stacks);
	EXPECT_GE(64, info.hbm_stacks);
	EXPECT_EQ(0, info.hbm_size % info.hbm_stacks);
	EXPECT_EQ(0, (info.hbm_size / info.hbm_stacks) % TEST_PAGE);
	EXPECT_EQ(0, info.reserved);
	/* Trainium2 and 3, and the simulator's default shape: four. */
	EXPECT_EQ(4, info.hbm_stacks);

	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, &q));
	EXPECT_EQ(INFO_V3_SIZE, q.size);
	EXPECT_EQ(0, memcmp(&info, self->buf, INFO_V3_SIZE));
	EXPECT_TRUE(all_pattern(self->buf + INFO_V3_SIZE,
				sizeof(self->buf) - INFO_V3_SIZE));
}

/*
 * uAPI 1.8: DRM_TRN_QUERY_HBM_STACKS, one 32-byte entry per stack, whole
 * entries only; its figures agree with the device's (an idle one: every
 * stack wholly free).
 */
TEST_F(uapi, hbm_stacks_query)
{
	static const uint32_t partial[] = { 1, 8, 16, 24, 31, 33, 48, 4095 };
	struct drm_trn_hbm_stack *st = (void *)self->buf;
	struct drm_trn_device_info info;
	struct drm_trn_memory_info mi;
	struct drm_trn_query q;
	uint64_t used = 0;
	uint32_t full, n;
	size_t i;

	_Static_assert(sizeof(*st) == 32, "an HBM stack entry is 32 bytes");
	ASSERT_EQ(0, query_info(self->fd, &info));
	full = info.hbm_stacks * sizeof(*st);

	q = query_of(self->buf, 0);
	q.query = DRM_TRN_QUERY_HBM_STACKS;
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, &q));
	EXPECT_EQ(full, q.size);
	EXPECT_TRUE(all_pattern(self->buf, sizeof(self->buf)));

	/* The first stack only, and nothing past it. */
	q = query_of(self->buf, sizeof(*st));
	q.query = DRM_TRN_QUERY_HBM_STACKS;
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, &q));
	EXPECT_EQ(sizeof(*st), q.size);
	EXPECT_EQ(info.hbm_size / info.hbm_stacks, st[0].size);
	EXPECT_TRUE(all_pattern(self->buf + sizeof(*st),
				sizeof(self->buf) - sizeof(*st)));

	/* All of them, with room to spare. */
	memset(self->buf, PATTERN, sizeof(self->buf));
	q = query_of(self->buf, sizeof(self->buf));
	q.query = DRM_TRN_QUERY_HBM_STACKS;
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, &q));
	EXPECT_EQ(full, q.size);
	for (n = 0; n < info.hbm_stacks; n++) {
		EXPECT_EQ(info.hbm_size / info.hbm_stacks, st[n].size);
		EXPECT_GE(st[n].size, st[n].used);
		EXPECT_EQ(st[n].size - st[n].used, st[n].largest_free);
		EXPECT_EQ(0, st[n].reserved);
		used += st[n].used;
	}
	EXPECT_TRUE(all_pattern(self->buf + full, sizeof(self->buf) - full));
	/* An idle device: the stacks' sum is the device's. */
	ASSERT_EQ(0, query_memory(self->fd, &mi));
	EXPECT_EQ(mi.hbm_used, used);

	/* Part of an entry is refused, and changes nothing. */
	memset(self->buf, PATTERN, sizeof(self->buf));
	for (i = 0; i < ARRAY_SIZE(partial); i++) {
		q = query_of(self->buf, partial[i]);
		q.query = DRM_TRN_QUERY_HBM_STACKS;
		EXPECT_EQ(0, fails_cleanly(self->fd, &q, EINVAL, self->buf,
					   sizeof(self->buf)))
			TH_LOG("size %u", partial[i]);
	}
}

TEST_F(uapi, nonzero_pad)
{
	struct drm_trn_query q = query_of(self->buf, INFO_V1_SIZE);

	q.pad = 1;
	EXPECT_EQ(0, fails_cleanly(self->fd, &q, EINVAL, self->buf,
				   sizeof(self->buf)));
	q.pad = 0x80000000u;
	EXPECT_EQ(0, fails_cleanly(self->fd, &q, EINVAL, self->buf,
				   sizeof(self->buf)));
}

TEST_F(uapi, nonzero_flags)
{
	struct drm_trn_query q = query_of(self->buf, INFO_V1_SIZE);
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		q.flags = 1u << bit;
		EXPECT_EQ(0, fails_cleanly(self->fd, &q, EINVAL, self->buf,
					   sizeof(self->buf)))
			TH_LOG("flags 0x%x", q.flags);
	}
}

TEST_F(uapi, unknown_query)
{
	static const uint32_t ids[] = { 0, 4, 5, 0x100, 0xffffffffu };
	struct drm_trn_query q = query_of(self->buf, INFO_V1_SIZE);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		q.query = ids[i];
		EXPECT_EQ(0, fails_cleanly(self->fd, &q, EINVAL, self->buf,
					   sizeof(self->buf)))
			TH_LOG("query id 0x%x", ids[i]);
	}
}

TEST_F(uapi, short_size)
{
	static const uint32_t sizes[] = { 1, 4, 8, 48, INFO_V1_SIZE - 1 };
	struct drm_trn_query q;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		q = query_of(self->buf, sizes[i]);
		EXPECT_EQ(0, fails_cleanly(self->fd, &q, EINVAL, self->buf,
					   sizeof(self->buf)))
			TH_LOG("size %u", sizes[i]);
	}
}

TEST_F(uapi, bad_pointer)
{
	long page = sysconf(_SC_PAGESIZE);
	struct drm_trn_query q;
	unsigned char *map;

	q = query_of(NULL, INFO_V1_SIZE);
	EXPECT_EQ(0, fails_cleanly(self->fd, &q, EFAULT, NULL, 0));
	q = query_of((void *)(uintptr_t)-4096, INFO_V1_SIZE);
	EXPECT_EQ(0, fails_cleanly(self->fd, &q, EFAULT, NULL, 0));
	q = query_of(NULL, INFO_V1_SIZE);
	q.data = 0xffff800000000000ull;	/* kernel half of the address space */
	EXPECT_EQ(0, fails_cleanly(self->fd, &q, EFAULT, NULL, 0));

	/* Read-only and inaccessible pages. */
	map = mmap(NULL, 2 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	q = query_of(map, INFO_V1_SIZE);
	EXPECT_EQ(0, fails_cleanly(self->fd, &q, EFAULT, NULL, 0));
	ASSERT_EQ(0, mprotect(map, 2 * page, PROT_NONE));
	q = query_of(map, INFO_V1_SIZE);
	EXPECT_EQ(0, fails_cleanly(self->fd, &q, EFAULT, NULL, 0));

	/* An answer that straddles into an inaccessible page. */
	ASSERT_EQ(0, mprotect(map, page, PROT_READ | PROT_WRITE));
	q = query_of(map + page - 8, INFO_V1_SIZE);
	EXPECT_EQ(-EFAULT, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, &q));
	munmap(map, 2 * page);
}

TEST_F(uapi, query_struct_unreadable)
{
	/* The ioctl argument itself points nowhere. */
	EXPECT_EQ(-EFAULT, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUERY, NULL));
}

TEST_F(uapi, unknown_ioctl)
{
	unsigned char arg[64];
	unsigned int nr;

	memset(arg, 0, sizeof(arg));
	EXPECT_EQ(-EINVAL, raw_ioctl(self->fd,
				     DRM_IO(DRM_COMMAND_BASE + 0x3f), NULL));
	EXPECT_EQ(-EINVAL, raw_ioctl(self->fd,
				     DRM_IOWR(DRM_COMMAND_BASE + 0x3f,
					      struct drm_trn_query), arg));
	/* The top of the driver range stays unassigned for a long time. */
	for (nr = 0x38; nr < 0x40; nr++)
		EXPECT_EQ(-EINVAL, raw_ioctl(self->fd,
					     DRM_IOWR(DRM_COMMAND_BASE + nr,
						      struct drm_trn_query),
					     arg))
			TH_LOG("ioctl nr 0x%x", DRM_COMMAND_BASE + nr);
}

TEST_F(uapi, repeated_queries_agree)
{
	struct drm_trn_device_info a, b;
	int i;

	ASSERT_EQ(0, query_info(self->fd, &a));
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, query_info(self->fd, &b));
		ASSERT_EQ(0, memcmp(&a, &b, sizeof(a)));
	}
}

TEST_HARNESS_MAIN
