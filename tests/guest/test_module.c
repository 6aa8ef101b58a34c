// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Loading and unloading trn.ko and trn_sim.ko. Needs TRN_MODULE_DIR (the
 * directory holding both modules) and root. Every test puts back the state
 * the suite runner made: both modules loaded, trn_sim with num_devices=1.
 */
#include "kselftest_harness.h"
#include "trn_test.h"

#define CYCLES	10

/* Make the runner's state again, whatever a failed test left behind. */
static int restore_modules(const char *dir)
{
	int ret;

	if (module_loaded("trn_sim") && sim_exists(0) && !sim_exists(1) &&
	    !sim_exists(2) && count_trn_devices() == 1)
		return 0;
	if (module_loaded("trn_sim")) {
		ret = module_unload("trn_sim");
		if (ret)
			return ret;
	}
	if (!module_loaded("trn")) {
		ret = module_load(dir, "trn", "");
		if (ret)
			return ret;
	}
	return module_load(dir, "trn_sim", "num_devices=1");
}

/* The device of a freshly loaded trn_sim is there and answers. */
static int check_device0(void)
{
	struct drm_trn_device_info info;
	char name[32];
	int fd, ret;

	fd = sim_open(0);
	if (fd < 0)
		return fd;
	ret = drm_driver_name(fd, name, sizeof(name), NULL, NULL, NULL);
	if (!ret && strcmp(name, "trn"))
		ret = -ENODEV;
	if (!ret)
		ret = query_info(fd, &info);
	if (!ret && (info.device_id != 0 ||
		     info.num_cores != SIM_DEFAULT_CORES))
		ret = -EDOM;
	close(fd);
	return ret;
}

FIXTURE(modules)
{
	const char *dir;
};

FIXTURE_SETUP(modules)
{
	char path[PATH_MAX];

	self->dir = getenv("TRN_MODULE_DIR");
	if (!self->dir)
		SKIP(return, "TRN_MODULE_DIR is not set");
	if (geteuid())
		SKIP(return, "loading modules needs root");
	snprintf(path, sizeof(path), "%s/trn_sim.ko", self->dir);
	ASSERT_EQ(0, access(path, R_OK)) TH_LOG("%s missing", path);
	ASSERT_TRUE(module_loaded("trn"));
	ASSERT_TRUE(module_loaded("trn_sim"));
}

FIXTURE_TEARDOWN(modules)
{
	if (!self->dir || geteuid())
		return;
	EXPECT_EQ(0, restore_modules(self->dir));
	EXPECT_EQ(0, check_device0());
}

TEST_F_TIMEOUT(modules, reload_cycles, 600)
{
	int i;

	for (i = 0; i < CYCLES; i++) {
		ASSERT_EQ(0, module_unload("trn_sim")) TH_LOG("cycle %d", i);
		EXPECT_FALSE(module_loaded("trn_sim"));
		EXPECT_NE(0, access(SIM_BUS, F_OK));
		/* trn alone drives nothing. */
		ASSERT_EQ(0, count_trn_devices()) TH_LOG("cycle %d", i);

		ASSERT_EQ(0, module_unload("trn")) TH_LOG("cycle %d", i);
		EXPECT_FALSE(module_loaded("trn"));
		ASSERT_EQ(0, count_trn_devices());

		ASSERT_EQ(0, module_load(self->dir, "trn", ""));
		ASSERT_TRUE(module_loaded("trn"));
		ASSERT_EQ(0, count_trn_devices());

		ASSERT_EQ(0, module_load(self->dir, "trn_sim", "num_devices=1"));
		ASSERT_TRUE(sim_exists(0)) TH_LOG("cycle %d", i);
		ASSERT_EQ(1, count_trn_devices()) TH_LOG("cycle %d", i);
		ASSERT_EQ(0, check_device0()) TH_LOG("cycle %d", i);
	}
}

TEST_F(modules, trn_pinned_by_trn_sim)
{
	/* trn_sim uses trn's symbols, so trn cannot go first. */
	EXPECT_EQ(-EWOULDBLOCK, module_unload("trn"));
	EXPECT_TRUE(module_loaded("trn"));
	EXPECT_EQ(0, check_device0());
	/* Loading twice is refused and changes nothing. */
	EXPECT_EQ(-EEXIST, module_load(self->dir, "trn", ""));
	EXPECT_EQ(-EEXIST, module_load(self->dir, "trn_sim", "num_devices=1"));
	EXPECT_EQ(1, count_trn_devices());
}

TEST_F_TIMEOUT(modules, unload_with_open_file, 120)
{
	struct drm_trn_device_info info;
	long sim_refs;
	int fd;

	sim_refs = module_refcnt("trn_sim");
	fd = sim_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, query_info(fd, &info));

	/*
	 * An open file pins the backend implementing its device (trn_hw.h:
	 * ops->owner) as well as the core, so neither module can go, and the
	 * refused unloads leave the device working.
	 */
	EXPECT_EQ(sim_refs + 1, module_refcnt("trn_sim"));
	EXPECT_EQ(-EWOULDBLOCK, module_unload("trn_sim"));
	EXPECT_EQ(-EWOULDBLOCK, module_unload("trn"));
	EXPECT_EQ(0, query_info(fd, &info));
	EXPECT_EQ(0, info.device_id);

	/* Once the file is closed, both can be unloaded. */
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(sim_refs, module_refcnt("trn_sim"));
	EXPECT_EQ(0, module_unload("trn_sim"));
	EXPECT_EQ(0, module_unload("trn"));
	EXPECT_FALSE(module_loaded("trn"));
}

TEST_F_TIMEOUT(modules, unload_after_device_removed, 120)
{
	struct drm_trn_device_info info;
	long sim_refs;
	int fd;

	/* A file on a deleted device still pins the modules until closed. */
	sim_refs = module_refcnt("trn_sim");
	ASSERT_EQ(0, sim_new(41, 1, 1, 1));
	fd = sim_open(41);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sim_del(41));
	EXPECT_EQ(-ENODEV, query_info(fd, &info));
	EXPECT_EQ(-EWOULDBLOCK, module_unload("trn_sim"));
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(sim_refs, module_refcnt("trn_sim"));
	EXPECT_EQ(0, module_unload("trn_sim"));
}

TEST_F_TIMEOUT(modules, num_devices_param, 120)
{
	unsigned int id;
	int fd;

	ASSERT_EQ(0, module_unload("trn_sim"));
	ASSERT_EQ(0, module_load(self->dir, "trn_sim", "num_devices=3"));
	EXPECT_EQ(3, count_trn_devices());
	for (id = 0; id < 3; id++) {
		struct drm_trn_device_info info;

		fd = sim_open(id);
		ASSERT_LE(0, fd) TH_LOG("device %u", id);
		EXPECT_EQ(0, query_info(fd, &info));
		EXPECT_EQ(id, info.device_id);
		close(fd);
	}
	EXPECT_FALSE(sim_exists(3));
	/* Devices made at run time go away with the module too. */
	ASSERT_EQ(0, sim_new(40, 1, 1, 1));
	ASSERT_EQ(0, module_unload("trn_sim"));
	EXPECT_EQ(0, count_trn_devices());
	ASSERT_EQ(0, module_load(self->dir, "trn_sim", "num_devices=1"));
	EXPECT_EQ(1, count_trn_devices());
	EXPECT_FALSE(sim_exists(40));
}

TEST_HARNESS_MAIN
