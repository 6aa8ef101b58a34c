// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Device information through libtrnhal and the raw ioctl: every field
 * equals what the simulator was told, for several shapes; enumeration,
 * handle sharing, unplug and fork behaviour of the library.
 * Devices used here have ids 20..29. With TRN_TEST_DEVICE=part the tests
 * that need no simulated device of their own run on a part bound to
 * trn_pci (its identity is tests/pci-lane/test_pci_binding's), the others
 * skip.
 */
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "trn_test.h"
#include "trnhal.h"

#define SIM_VA_SIZE	((1ULL << 48) - SIM_VA_START)

static void remove_ids(unsigned int first, unsigned int last)
{
	unsigned int id;

	for (id = first; id <= last; id++)
		if (sim_exists(id))
			sim_del(id);
}

FIXTURE(shape)
{
	unsigned int minor;
};

FIXTURE_VARIANT(shape)
{
	unsigned int id;
	unsigned int cores;
	unsigned int hbm_mib;
	unsigned int queues;
};

FIXTURE_VARIANT_ADD(shape, smallest)
{
	.id = 20, .cores = 1, .hbm_mib = 1, .queues = 1,
};

FIXTURE_VARIANT_ADD(shape, default_shape)
{
	.id = 21, .cores = SIM_DEFAULT_CORES, .hbm_mib = SIM_DEFAULT_HBM_MIB,
	.queues = SIM_DEFAULT_QUEUES,
};

FIXTURE_VARIANT_ADD(shape, widest)
{
	.id = 22, .cores = 64, .hbm_mib = 64, .queues = 16,
};

FIXTURE_VARIANT_ADD(shape, odd)
{
	.id = 23, .cores = 3, .hbm_mib = 100, .queues = 7,
};

FIXTURE_VARIANT_ADD(shape, large_id)
{
	.id = 1000, .cores = 5, .hbm_mib = 3, .queues = 9,
};

#define SIM_ONLY "simulator only: it makes simulated devices of its own"

FIXTURE_SETUP(shape)
{
	if (dut_is_part())
		SKIP(return, SIM_ONLY);
	if (!sim_available())
		SKIP(return, "trn_sim is not loaded");
	if (sim_exists(variant->id))
		sim_del(variant->id);
	ASSERT_EQ(0, sim_new(variant->id, variant->cores, variant->hbm_mib,
			     variant->queues));
	ASSERT_EQ(0, sim_minor(variant->id, &self->minor));
}

FIXTURE_TEARDOWN(shape)
{
	if (sim_available() && sim_exists(variant->id))
		EXPECT_EQ(0, sim_del(variant->id));
}

TEST_F(shape, library_fields)
{
	struct trn_device_info info;
	trn_device_t *dev;
	char node[64];
	size_t i;

	ASSERT_EQ(0, trn_device_open(self->minor, &dev));
	memset(&info, 0xaa, sizeof(info));
	ASSERT_EQ(0, trn_device_info(dev, &info));
	accel_node(self->minor, node, sizeof(node));

	EXPECT_EQ(self->minor, info.minor);
	EXPECT_STREQ(node, info.node);
	EXPECT_STREQ("trn", info.driver_name);
	EXPECT_EQ(1, info.driver_major);
	EXPECT_EQ(0, info.driver_minor);
	EXPECT_EQ(0, info.driver_patchlevel);
	EXPECT_EQ(DRM_TRN_UAPI_MAJOR, info.uapi_major);
	EXPECT_EQ(DRM_TRN_UAPI_MINOR, info.uapi_minor);
	EXPECT_EQ(TRN_GEN_SIM, info.generation);
	EXPECT_STREQ("sim", trn_generation_name(info.generation));
	EXPECT_EQ(variant->id, info.device_id);
	EXPECT_EQ(variant->cores, info.num_cores);
	EXPECT_EQ(variant->queues, info.queues_per_core);
	EXPECT_EQ((uint64_t)variant->hbm_mib << 20, info.hbm_size);
	EXPECT_EQ(SIM_VA_START, info.va_start);
	EXPECT_EQ(SIM_VA_SIZE, info.va_size);
	EXPECT_EQ(TRN_CAP_SIMULATED | TRN_CAP_HBM_CPU_VISIBLE |
		  TRN_CAP_EXEC_ALL | TRN_CAP_LOG_ERF | TRN_CAP_USER_QUEUES |
		  TRN_CAP_SRC_U8,
		  info.capabilities);
	EXPECT_EQ(256, info.user_queues);
	for (i = 0; i < ARRAY_SIZE(info.reserved); i++)
		EXPECT_EQ(0, info.reserved[i]);
	trn_device_close(dev);
}

TEST_F(shape, raw_ioctl_fields)
{
	struct drm_trn_device_info di;
	int fd;

	fd = open_minor(self->minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, query_info(fd, &di));
	close(fd);
	EXPECT_EQ(DRM_TRN_UAPI_MAJOR, di.uapi_major);
	EXPECT_EQ(DRM_TRN_UAPI_MINOR, di.uapi_minor);
	EXPECT_EQ(DRM_TRN_GEN_SIM, di.generation);
	EXPECT_EQ(variant->id, di.device_id);
	EXPECT_EQ(variant->cores, di.num_cores);
	EXPECT_EQ(variant->queues, di.queues_per_core);
	EXPECT_EQ((uint64_t)variant->hbm_mib << 20, di.hbm_size);
	EXPECT_EQ(SIM_VA_START, di.va_start);
	EXPECT_EQ(SIM_VA_SIZE, di.va_size);
	EXPECT_EQ(DRM_TRN_CAP_SIMULATED | DRM_TRN_CAP_HBM_CPU_VISIBLE |
		  DRM_TRN_CAP_TIMESTAMP | DRM_TRN_CAP_SEMAPHORES |
		  DRM_TRN_CAP_COMPUTE | DRM_TRN_CAP_LOG_ERF |
		  DRM_TRN_CAP_USER_QUEUES | DRM_TRN_CAP_SRC_U8, di.capabilities);
	EXPECT_EQ(256, di.user_queues);
}

TEST_F(shape, enumerated)
{
	unsigned int minors[64];
	size_t count, i;
	bool found = false;

	ASSERT_EQ(0, trn_device_list(minors, ARRAY_SIZE(minors), &count));
	ASSERT_LE(2, count);	/* device 0 and this one */
	ASSERT_GE(ARRAY_SIZE(minors), count);
	for (i = 0; i < count; i++) {
		if (minors[i] == self->minor)
			found = true;
		if (i)
			EXPECT_LT(minors[i - 1], minors[i]);
	}
	EXPECT_TRUE(found);
}

/* Plain tests on the runner's device 0 and on devices made here. */

TEST(version_ioctl)
{
	char name[32];
	drmVersionPtr v;
	int fd, major, minor, patch;

	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, or no part)");
	fd = dut_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, drm_driver_name(fd, name, sizeof(name), &major, &minor,
				     &patch));
	EXPECT_STREQ("trn", name);
	EXPECT_EQ(1, major);
	EXPECT_EQ(0, minor);
	EXPECT_EQ(0, patch);
	/* libdrm agrees. */
	v = drmGetVersion(fd);
	ASSERT_NE(NULL, v);
	EXPECT_STREQ("trn", v->name);
	drmFreeVersion(v);
	close(fd);
}

/* fdinfo carries the standard drm-usage-stats keys, distinct per file. */
TEST(fdinfo_keys)
{
	char path[64], buf[2][4096];
	const char *id[2];
	int fd[2], i;

	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, or no part)");
	for (i = 0; i < 2; i++) {
		fd[i] = dut_open();
		ASSERT_LE(0, fd[i]);
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd[i]);
		ASSERT_LT(0, read_file(path, buf[i], sizeof(buf[i])));
		EXPECT_NE(NULL, strstr(buf[i], "drm-driver:\ttrn\n"))
			TH_LOG("fdinfo: %s", buf[i]);
		id[i] = strstr(buf[i], "drm-client-id:");
		ASSERT_NE(NULL, id[i]);
		*strchrnul(id[i], '\n') = '\0';
	}
	/* Two opens are two contexts. */
	EXPECT_STRNE(id[0], id[1]);
	close(fd[0]);
	close(fd[1]);
}

TEST(list_matches_sysfs)
{
	unsigned int minors[64], m;
	size_t count, small;
	int expected;

	if (dut_is_part())
		SKIP(return, SIM_ONLY);
	if (!sim_available())
		SKIP(return, "trn_sim is not loaded");
	remove_ids(24, 26);
	ASSERT_EQ(0, sim_new(24, 1, 1, 1));
	ASSERT_EQ(0, sim_new(25, 2, 2, 2));
	expected = count_trn_devices();
	ASSERT_LE(3, expected);

	ASSERT_EQ(0, trn_device_list(minors, ARRAY_SIZE(minors), &count));
	EXPECT_EQ((size_t)expected, count);
	/* A size query and a short array report the same total. */
	ASSERT_EQ(0, trn_device_list(NULL, 0, &small));
	EXPECT_EQ(count, small);
	m = minors[0];
	minors[1] = UINT_MAX;
	ASSERT_EQ(0, trn_device_list(minors, 1, &small));
	EXPECT_EQ(count, small);
	EXPECT_EQ(m, minors[0]);
	EXPECT_EQ(UINT_MAX, minors[1]);

	/* A removed device drops out of the list. */
	ASSERT_EQ(0, sim_minor(25, &m));
	ASSERT_EQ(0, sim_del(25));
	ASSERT_EQ(0, trn_device_list(minors, ARRAY_SIZE(minors), &small));
	EXPECT_EQ(count - 1, small);
	for (size_t i = 0; i < small; i++)
		EXPECT_NE(m, minors[i]);
	remove_ids(24, 26);
}

TEST(handles_are_shared)
{
	trn_device_t *a, *b;
	unsigned int minor;

	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, or no part)");
	ASSERT_EQ(0, dut_minor(&minor));
	ASSERT_EQ(0, trn_device_open(minor, &a));
	ASSERT_EQ(0, trn_device_open(minor, &b));
	EXPECT_EQ(a, b);
	EXPECT_EQ(trn_device_fd(a), trn_device_fd(b));
	EXPECT_LE(0, trn_device_fd(a));
	trn_device_close(a);
	/* Still usable through the second reference. */
	EXPECT_LE(0, trn_device_fd(b));
	trn_device_close(b);
}

TEST(open_errors)
{
	trn_device_t *dev;

	EXPECT_EQ(-ENOENT, trn_device_open(4000, &dev));
	EXPECT_EQ(-EINVAL, trn_device_open(0, NULL));
	EXPECT_EQ(-EINVAL, trn_device_list(NULL, 1, NULL));
}

TEST(unplug_under_library)
{
	struct trn_device_info info;
	trn_device_t *dev;
	unsigned int minor;

	if (dut_is_part())
		SKIP(return, SIM_ONLY);
	if (!sim_available())
		SKIP(return, "trn_sim is not loaded");
	remove_ids(26, 26);
	ASSERT_EQ(0, sim_new(26, 2, 8, 2));
	ASSERT_EQ(0, sim_minor(26, &minor));
	ASSERT_EQ(0, trn_device_open(minor, &dev));
	ASSERT_EQ(0, trn_device_info(dev, &info));
	ASSERT_EQ(0, sim_del(26));
	EXPECT_EQ(-ENODEV, trn_device_info(dev, &info));
	EXPECT_STREQ("not a trn device, or the device has been removed",
		     trn_strerror(-ENODEV));
	trn_device_close(dev);
	/* The closed handle is gone: opening the minor again fails. */
	EXPECT_EQ(-ENOENT, trn_device_open(minor, &dev));
}

TEST(fork_child_gets_echild)
{
	struct trn_device_info info;
	trn_device_t *dev;
	unsigned int minor;
	int status;
	pid_t pid;

	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, or no part)");
	ASSERT_EQ(0, dut_minor(&minor));
	ASSERT_EQ(0, trn_device_open(minor, &dev));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		trn_device_t *own;
		int bad = 0;

		bad |= trn_device_fd(dev) != -ECHILD;
		bad |= (trn_device_info(dev, &info) != -ECHILD) << 1;
		bad |= (trn_device_open(minor, &own) != 0) << 2;
		if (!(bad & 4)) {
			bad |= (own == dev) << 3;
			bad |= (trn_device_info(own, &info) != 0) << 4;
			trn_device_close(own);
		}
		trn_device_close(dev);
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The parent's handle still works. */
	EXPECT_EQ(0, trn_device_info(dev, &info));
	trn_device_close(dev);
}

TEST_HARNESS_MAIN
