// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * The ioctl fuzzer (tests/fuzz/trn_fuzz.c) on simulated device 0, one test
 * per family of actions, then all of them mixed, then all of them while
 * devices 900..909 come and go. Every call must return success or an
 * expected errno (and, where the engine has a model, the right answer);
 * the device must still answer correctly at the end and nothing may stay
 * open or created.
 *
 * With TRN_TEST_DEVICE=part (the pci lanes) the same tests run on the
 * part that dut_minor() finds, trn_pci's device, but for device_churn:
 * the devices that come and go are simulated ones.
 *
 * TRN_FUZZ_ITERATIONS (default 2000) sets the iterations of each test,
 * TRN_FUZZ_SEED the seed (default: time-based, the same for every test of
 * one run), TRN_FUZZ_THREADS the threads (default 4). A failure prints the
 * trn-fuzz command that replays it; see Documentation/fuzzing.md.
 */
#include "kselftest_harness.h"
#include "trn_test.h"
#include "trn_fuzz.h"

static struct trn_fuzz_opts base_opts;

/* One seed for the whole binary, chosen before the tests fork. */
static void __attribute__((constructor)) pick_seed(void)
{
	trn_fuzz_default_opts(&base_opts);
}

/*
 * A module's reference count once it is back at @want, waiting up to
 * @ms: closing a file no longer waits for its jobs, which are cancelled;
 * the file's context, and the reference to its backend (trn_sim, trn_pci)
 * it holds, goes with the last of them, moments later (uapi.md,
 * DRM_IOCTL_TRN_QUEUE_DESTROY).
 */
static long refcnt_settled(const char *name, long want, unsigned int ms,
			   unsigned int *waited)
{
	long n = module_refcnt(name);

	for (*waited = 0; n != want && *waited < ms; *waited += 10) {
		usleep(10000);
		n = module_refcnt(name);
	}
	return n;
}

static bool churned_left(void)
{
	unsigned int id;

	for (id = TRN_FUZZ_CHURN_FIRST; id <= TRN_FUZZ_CHURN_LAST; id++)
		if (sim_exists(id))
			return true;
	return false;
}

/* The module whose device is fuzzed: its contexts hold references on it. */
static const char *backend(void)
{
	return dut_is_part() ? "trn_pci" : "trn_sim";
}

FIXTURE(fuzz)
{
	long trn_refs;
	long backend_refs;
	int devices;
	struct trn_fuzz_stats stats;
};

FIXTURE_SETUP(fuzz)
{
	SKIP_UNLESS_DUT();
	if (!dut_is_part())
		ASSERT_TRUE(sim_exists(0));
	self->trn_refs = module_refcnt("trn");
	self->backend_refs = module_refcnt(backend());
	self->devices = count_trn_devices();
}

FIXTURE_TEARDOWN(fuzz)
{
	unsigned int waited;

	/* Every file the fuzzer opened is closed, every device it made gone. */
	EXPECT_EQ(self->trn_refs, module_refcnt("trn"));
	/* Contexts of closed files go when their cancelled jobs are freed. */
	EXPECT_EQ(self->backend_refs,
		  refcnt_settled(backend(), self->backend_refs, 5000, &waited));
	if (waited)
		TH_LOG("%s's references took %u ms to come back", backend(),
		       waited);
	EXPECT_FALSE(churned_left());
	EXPECT_EQ(self->devices, count_trn_devices());
}

static int fuzz(struct __test_metadata *_metadata,
		struct trn_fuzz_stats *stats, unsigned int actions,
		bool churn)
{
	struct trn_fuzz_opts opts = base_opts;
	char acts[64];
	int ret;

	opts.actions = actions;
	opts.device_churn = churn;
	if (dut_is_part())
		opts.part = 0;
	opts.out = stderr;
	TH_LOG("seed %llu, %llu iterations, %u threads; replay: build/tests/fuzz/trn-fuzz --seed %llu --actions %s --iterations %llu --threads %u%s%s",
	       (unsigned long long)opts.seed,
	       (unsigned long long)opts.iterations, opts.threads,
	       (unsigned long long)opts.seed,
	       trn_fuzz_actions_str(actions, acts, sizeof(acts)),
	       (unsigned long long)opts.iterations, opts.threads,
	       churn ? " --device-churn" : "",
	       opts.part >= 0 ? " --part 0" : "");
	ret = trn_fuzz_run(&opts, stats);
	if (stats->setup_error)
		TH_LOG("setup: %s", stats->setup_msg);
	return ret;
}

TEST_F_TIMEOUT(fuzz, trn_ioctls, 900)
{
	ASSERT_EQ(0, fuzz(_metadata, &self->stats, 1u << TRN_FUZZ_TRN, false));
	EXPECT_LT(0, self->stats.calls);
}

TEST_F_TIMEOUT(fuzz, driver_range, 900)
{
	ASSERT_EQ(0, fuzz(_metadata, &self->stats, 1u << TRN_FUZZ_DRIVER,
			  false));
	EXPECT_LT(0, self->stats.calls);
}

TEST_F_TIMEOUT(fuzz, core_ioctls, 900)
{
	ASSERT_EQ(0, fuzz(_metadata, &self->stats, 1u << TRN_FUZZ_CORE,
			  false));
	EXPECT_LT(0, self->stats.calls);
}

TEST_F_TIMEOUT(fuzz, files, 900)
{
	ASSERT_EQ(0, fuzz(_metadata, &self->stats, 1u << TRN_FUZZ_FILES,
			  false));
	EXPECT_LT(0, self->stats.opens);
}

TEST_F_TIMEOUT(fuzz, mixed, 900)
{
	ASSERT_EQ(0, fuzz(_metadata, &self->stats, TRN_FUZZ_ALL_ACTIONS,
			  false));
	EXPECT_LT(0, self->stats.calls);
}

TEST_F_TIMEOUT(fuzz, device_churn, 900)
{
	SIMULATOR_ONLY("the devices that come and go are trn_sim's");
	ASSERT_EQ(0, fuzz(_metadata, &self->stats, TRN_FUZZ_ALL_ACTIONS,
			  true));
	EXPECT_LT(0, self->stats.churn_cycles);
}

TEST_HARNESS_MAIN
