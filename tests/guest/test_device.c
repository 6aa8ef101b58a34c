// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn_sim device life cycle through /sys/bus/trn_sim/{new,del}_device:
 * creation with various shapes, every parse and range error, removal while
 * a file is open, several devices at once, debugfs and sysfs views.
 * Devices used here have ids 10..19 and 1023 and are always removed
 * afterwards.
 */
#include "kselftest_harness.h"
#include "trn_test.h"

#define FIRST_ID	10
#define LAST_ID		19

static void remove_test_devices(void)
{
	unsigned int id;

	for (id = FIRST_ID; id <= LAST_ID; id++)
		if (sim_exists(id))
			sim_del(id);
	if (sim_exists(1023))
		sim_del(1023);
}

/* Check that simulated device @id answers with the given shape. */
static int check_shape(unsigned int id, unsigned int cores,
		       unsigned int hbm_mib, unsigned int queues)
{
	struct drm_trn_device_info info;
	int fd, ret;

	fd = sim_open(id);
	if (fd < 0)
		return fd;
	ret = query_info(fd, &info);
	close(fd);
	if (ret)
		return ret;
	if (info.device_id != id || info.num_cores != cores ||
	    info.queues_per_core != queues ||
	    info.hbm_size != (uint64_t)hbm_mib << 20 ||
	    info.generation != DRM_TRN_GEN_SIM) {
		fprintf(stderr,
			"# device %u: id %u cores %u queues %u hbm %llu, expected %u/%u/%u/%llu\n",
			id, info.device_id, info.num_cores,
			info.queues_per_core,
			(unsigned long long)info.hbm_size, id, cores, queues,
			(unsigned long long)hbm_mib << 20);
		return -EDOM;
	}
	return 0;
}

FIXTURE(sim)
{
	long trn_refs;
};

FIXTURE_SETUP(sim)
{
	if (!sim_available())
		SKIP(return, "trn_sim is not loaded");
	remove_test_devices();
	self->trn_refs = module_refcnt("trn");
}

FIXTURE_TEARDOWN(sim)
{
	remove_test_devices();
	/* The state the suite runner set up is still there. */
	EXPECT_TRUE(sim_exists(0));
	EXPECT_EQ(0, check_shape(0, SIM_DEFAULT_CORES, SIM_DEFAULT_HBM_MIB,
				 SIM_DEFAULT_QUEUES));
	/* Nothing left holding a module reference. */
	EXPECT_EQ(self->trn_refs, module_refcnt("trn"));
}

TEST_F(sim, create_and_delete)
{
	unsigned int minor;
	char name[32], node[64];
	int fd;

	ASSERT_FALSE(sim_exists(10));
	ASSERT_EQ(0, sim_new(10, 2, 64, 2));
	ASSERT_TRUE(sim_exists(10));
	ASSERT_EQ(0, sim_minor(10, &minor));
	fd = open_minor(minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, drm_driver_name(fd, name, sizeof(name), NULL, NULL, NULL));
	EXPECT_STREQ("trn", name);
	close(fd);
	EXPECT_EQ(0, check_shape(10, 2, 64, 2));

	ASSERT_EQ(0, sim_del(10));
	EXPECT_FALSE(sim_exists(10));
	/* Its node goes with it (no other device is created meanwhile). */
	accel_node(minor, node, sizeof(node));
	EXPECT_NE(0, access(node, F_OK));
	EXPECT_FALSE(minor_is_trn(minor));
	EXPECT_EQ(-ENOENT, sim_open(10));
}

TEST_F(sim, default_shape)
{
	ASSERT_EQ(0, sim_new(11, 0, 0, 0));
	EXPECT_EQ(0, check_shape(11, SIM_DEFAULT_CORES, SIM_DEFAULT_HBM_MIB,
				 SIM_DEFAULT_QUEUES));
	/* Partial shapes take defaults for the rest. */
	ASSERT_EQ(0, sim_new_raw("12 3"));
	EXPECT_EQ(0, check_shape(12, 3, SIM_DEFAULT_HBM_MIB,
				 SIM_DEFAULT_QUEUES));
	ASSERT_EQ(0, sim_new_raw("13 5 32"));
	EXPECT_EQ(0, check_shape(13, 5, 32, SIM_DEFAULT_QUEUES));
	/* A trailing newline, as echo writes, is fine. */
	ASSERT_EQ(0, sim_new_raw("14 1 1 1\n"));
	EXPECT_EQ(0, check_shape(14, 1, 1, 1));
}

TEST_F(sim, range_limits_accepted)
{
	ASSERT_EQ(0, sim_new(15, 64, 1, 16));
	EXPECT_EQ(0, check_shape(15, 64, 1, 16));
	ASSERT_EQ(0, sim_new(16, 1, 1, 1));
	EXPECT_EQ(0, check_shape(16, 1, 1, 1));
}

/* STACKS, the fifth number: what the device reports, and debugfs. */
TEST_F(sim, hbm_stacks)
{
	static const struct { const char *cmd; unsigned int id, stacks; } c[] = {
		{ "16", 16, SIM_DEFAULT_STACKS },
		{ "17 2 6 1 3", 17, 3 },
		{ "18 1 1 1 16", 18, 16 },
		{ "19 8 256 4 1", 19, 1 },
	};
	struct drm_trn_device_info info;
	uint64_t v;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		ASSERT_EQ(0, sim_new_raw(c[i].cmd)) TH_LOG("%s", c[i].cmd);
		fd = sim_open(c[i].id);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, query_info(fd, &info));
		close(fd);
		EXPECT_EQ(c[i].stacks, info.hbm_stacks) TH_LOG("%s", c[i].cmd);
		if (!debugfs_ready()) {
			ASSERT_EQ(0, sim_debugfs_u64(c[i].id, "hbm_stacks", &v));
			EXPECT_EQ(c[i].stacks, v);
		}
	}
}

TEST_F(sim, largest_hbm)
{
	int ret = sim_new(17, 1, 4096, 1);

	if (ret == -ENOMEM)
		SKIP(return, "not enough guest memory for 4 GiB of HBM");
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, check_shape(17, 1, 4096, 1));
}

TEST_F(sim, duplicate_id)
{
	ASSERT_EQ(0, sim_new(10, 2, 64, 2));
	EXPECT_EQ(-EEXIST, sim_new(10, 2, 64, 2));
	EXPECT_EQ(-EEXIST, sim_new(10, 0, 0, 0));
	/* The runner's device 0 is taken too. */
	EXPECT_EQ(-EEXIST, sim_new(0, 0, 0, 0));
	/* The failed attempts left the first device as it was. */
	EXPECT_EQ(0, check_shape(10, 2, 64, 2));
}

TEST_F(sim, malformed_new_device)
{
	static const char *const bad[] = {
		"\n", " ", "x", "10x", "ten", "10 x", "10 8 x", "10 8 256 x",
		"-10", "10 -1", "10 8 -1", "10 8 256 -1", "+-10",
		"10 8 256 4 x", "10 8 256 4 -1",
		"10 8 256 4 4 5",	/* too many fields */
		"10,8", "0x", "99999999999999999999",
		"4294967306",		/* 2^32 + 10: must not wrap to 10 */
		"10 4294967297",	/* 2^32 + 1 cores */
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, sim_new_raw(bad[i]))
			TH_LOG("new_device \"%s\"", bad[i]);
		EXPECT_FALSE(sim_exists(10)) TH_LOG("after \"%s\"", bad[i]);
	}
}

TEST_F(sim, out_of_range_new_device)
{
	static const char *const bad[] = {
		"1024", "4096", "10 0", "10 65", "10 1000", "10 8 0",
		"10 8 4097", "10 8 65536", "10 8 256 0", "10 8 256 17",
		"10 8 256 4 0", "10 8 256 4 17",
		"10 8 1 4 3",		/* 1 MiB is not 3 stacks of pages */
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, sim_new_raw(bad[i]))
			TH_LOG("new_device \"%s\"", bad[i]);
		EXPECT_FALSE(sim_exists(10)) TH_LOG("after \"%s\"", bad[i]);
	}
	EXPECT_FALSE(sim_exists(1024));
	/* The largest id is accepted. */
	ASSERT_EQ(0, sim_new(1023, 1, 1, 1));
	EXPECT_EQ(0, check_shape(1023, 1, 1, 1));
	EXPECT_EQ(0, sim_del(1023));
}

TEST_F(sim, del_errors)
{
	EXPECT_EQ(-ENOENT, sim_del(10));
	EXPECT_EQ(-ENOENT, sim_del(500));
	EXPECT_EQ(-ENOENT, sim_del(1023));
	EXPECT_EQ(-EINVAL, sim_del_raw("abc"));
	EXPECT_EQ(-EINVAL, sim_del_raw("\n"));
	ASSERT_EQ(0, sim_new(10, 1, 1, 1));
	EXPECT_EQ(0, sim_del(10));
	/* Deleting twice fails the second time. */
	EXPECT_EQ(-ENOENT, sim_del(10));
}

TEST_F(sim, del_while_open)
{
	struct drm_trn_device_info info;
	char name[32];
	int fd, fd2;

	ASSERT_EQ(0, sim_new(18, 2, 16, 3));
	fd = sim_open(18);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, query_info(fd, &info));
	EXPECT_EQ(18, info.device_id);

	ASSERT_EQ(0, sim_del(18));
	EXPECT_FALSE(sim_exists(18));
	/* The file outlives its device; every ioctl now says so. */
	EXPECT_EQ(-ENODEV, query_info(fd, &info));
	EXPECT_EQ(-ENODEV, query_info(fd, &info));
	EXPECT_EQ(-ENODEV, drm_driver_name(fd, name, sizeof(name), NULL, NULL,
					   NULL));

	/* The id is free again while the old file is still open. */
	ASSERT_EQ(0, sim_new(18, 4, 32, 2));
	fd2 = sim_open(18);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, query_info(fd2, &info));
	EXPECT_EQ(4, info.num_cores);
	EXPECT_EQ(2, info.queues_per_core);
	EXPECT_EQ(-ENODEV, query_info(fd, &info));

	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(0, close(fd2));
	ASSERT_EQ(0, sim_del(18));
	ASSERT_EQ(0, sim_new(18, 1, 1, 1));
	EXPECT_EQ(0, check_shape(18, 1, 1, 1));
}

TEST_F(sim, two_shapes)
{
	ASSERT_EQ(0, sim_new(15, 3, 32, 2));
	ASSERT_EQ(0, sim_new(16, 7, 128, 5));
	EXPECT_EQ(0, check_shape(15, 3, 32, 2));
	EXPECT_EQ(0, check_shape(16, 7, 128, 5));
	/* Removing one leaves the other alone. */
	ASSERT_EQ(0, sim_del(15));
	EXPECT_EQ(0, check_shape(16, 7, 128, 5));
	EXPECT_EQ(-ENOENT, sim_open(15));
}

TEST_F(sim, distinct_minors)
{
	unsigned int m0, m1, m2;

	ASSERT_EQ(0, sim_new(10, 1, 1, 1));
	ASSERT_EQ(0, sim_new(11, 1, 1, 1));
	ASSERT_EQ(0, sim_minor(0, &m0));
	ASSERT_EQ(0, sim_minor(10, &m1));
	ASSERT_EQ(0, sim_minor(11, &m2));
	EXPECT_NE(m0, m1);
	EXPECT_NE(m0, m2);
	EXPECT_NE(m1, m2);
	EXPECT_TRUE(minor_is_trn(m1));
	EXPECT_TRUE(minor_is_trn(m2));
}

TEST_F(sim, debugfs_matches)
{
	static const struct { unsigned int id, cores, hbm, queues; } shapes[] = {
		{ 15, 3, 32, 2 }, { 16, 7, 128, 5 }, { 17, 64, 1, 16 },
	};
	uint64_t v;
	size_t i;
	int ret;

	ret = debugfs_ready();
	if (ret)
		SKIP(return, "no debugfs: %s", strerror(-ret));
	for (i = 0; i < ARRAY_SIZE(shapes); i++) {
		ASSERT_EQ(0, sim_new(shapes[i].id, shapes[i].cores,
				     shapes[i].hbm, shapes[i].queues));
		ASSERT_EQ(0, sim_debugfs_u64(shapes[i].id, "cores", &v));
		EXPECT_EQ(shapes[i].cores, v);
		ASSERT_EQ(0, sim_debugfs_u64(shapes[i].id, "hbm_mib", &v));
		EXPECT_EQ(shapes[i].hbm, v);
		ASSERT_EQ(0, sim_debugfs_u64(shapes[i].id, "queues", &v));
		EXPECT_EQ(shapes[i].queues, v);
	}
	ASSERT_EQ(0, sim_debugfs_u64(0, "cores", &v));
	EXPECT_EQ(SIM_DEFAULT_CORES, v);
	/* The directory goes with the device. */
	ASSERT_EQ(0, sim_del(15));
	EXPECT_EQ(-ENOENT, sim_debugfs_u64(15, "cores", &v));
}

TEST_F(sim, sysfs_links)
{
	char class_dev[PATH_MAX], bus_dev[PATH_MAX], path[128];
	unsigned int minor;

	ASSERT_EQ(0, sim_new(10, 1, 1, 1));
	ASSERT_EQ(0, sim_minor(10, &minor));
	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u/device", minor);
	ASSERT_NE(NULL, realpath(path, class_dev));
	snprintf(path, sizeof(path), SIM_BUS "/devices/trn_sim10");
	ASSERT_NE(NULL, realpath(path, bus_dev));
	EXPECT_STREQ(bus_dev, class_dev);
}

TEST_F(sim, many_devices)
{
	unsigned int id;

	for (id = FIRST_ID; id <= LAST_ID; id++)
		ASSERT_EQ(0, sim_new(id, 1 + id % 4, 1 + id, 1 + id % 3));
	for (id = FIRST_ID; id <= LAST_ID; id++)
		EXPECT_EQ(0, check_shape(id, 1 + id % 4, 1 + id, 1 + id % 3));
	for (id = FIRST_ID; id <= LAST_ID; id += 2)
		ASSERT_EQ(0, sim_del(id));
	for (id = FIRST_ID; id <= LAST_ID; id++)
		EXPECT_EQ(id % 2 == 1, sim_exists(id));
}

TEST_HARNESS_MAIN
