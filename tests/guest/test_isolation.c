// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * One process cannot reach another's buffers on the device under test
 * (simulated device 0, or with TRN_TEST_DEVICE=part a part bound to
 * trn_pci, where the kernel resolves every address of a job in the
 * submitting context and the part has no MMU): its GEM handles are
 * unknown to the other's file, its mmap offsets do not map there, its
 * device addresses are not mapped in the other's context, and the other's
 * faults are not charged to it. Copies go through dut_copy().
 *
 * The second process is a forked child with a fresh open of the device;
 * a failed check in the child exits with the line number of the check.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "trn_test.h"

#define DEV	0
#define MiB	(1ULL << 20)
#define SIZE	(4 * TEST_PAGE)

/* In a child: exit with the failing line. */
#define CHILD_CHECK(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "# child: %s:%d: %s\n",		\
				__FILE__, __LINE__, #cond);		\
			_exit(__LINE__ & 0xff ? __LINE__ & 0xff : 1);	\
		}							\
	} while (0)

FIXTURE(iso)
{
	int fd;
	unsigned int ctx;
	uint32_t filler, target;	/* the first process's buffers */
	uint64_t filler_va, target_va, target_off;
	unsigned char *filler_map, *target_map;
};

FIXTURE_SETUP(iso)
{
	struct drm_trn_bo_info bi;

	self->fd = -1;
	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, or no part)");
	if (!dut_is_part())
		ASSERT_EQ(0, debugfs_ready());
	self->fd = dut_open();
	ASSERT_LE(0, self->fd);
	self->ctx = fd_context(self->fd);
	ASSERT_NE(0, self->ctx);
	/*
	 * A 2 MiB buffer at the start of the window, then the target above
	 * it: a fresh context with one small buffer has the filler's address
	 * mapped (to its own buffer) and the target's unmapped.
	 */
	ASSERT_EQ(0, bo_create(self->fd, 2 * MiB, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &self->filler, &self->filler_va));
	ASSERT_EQ(0, bo_create(self->fd, SIZE, DRM_TRN_PLACEMENT_HOST, 0, 0,
			       &self->target, &self->target_va));
	ASSERT_LT(self->filler_va + 2 * MiB, self->target_va + 1);
	ASSERT_EQ(0, bo_info(self->fd, self->target, &bi));
	self->target_off = bi.mmap_offset;
	self->filler_map = bo_mmap(self->fd, self->filler, 2 * MiB);
	self->target_map = bo_mmap(self->fd, self->target, SIZE);
	ASSERT_NE(MAP_FAILED, self->filler_map);
	ASSERT_NE(MAP_FAILED, self->target_map);
	memset(self->filler_map, 0xf1, 2 * MiB);
	memset(self->target_map, 0x7a, SIZE);
	fflush(NULL);
}

FIXTURE_TEARDOWN(iso)
{
	if (self->fd < 0)
		return;
	munmap(self->filler_map, 2 * MiB);
	munmap(self->target_map, SIZE);
	close(self->fd);
}

static int wait_child(pid_t pid)
{
	int status = -1;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status))
		return 1000 + status;
	return WEXITSTATUS(status);
}

TEST_F(iso, handles_are_unknown)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd2 = dut_open();
		struct drm_trn_bo_info bi;
		struct drm_prime_handle p;
		uint32_t h;
		void *m;

		CHILD_CHECK(fd2 >= 0);
		CHILD_CHECK(fd_context(fd2) != self->ctx);
		CHILD_CHECK(bo_info(fd2, self->target, &bi) == -ENOENT);
		CHILD_CHECK(bo_info(fd2, self->filler, &bi) == -ENOENT);
		memset(&p, 0, sizeof(p));
		p.handle = self->target;
		p.flags = DRM_CLOEXEC;
		CHILD_CHECK(raw_ioctl(fd2, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) ==
			    -ENOENT);
		CHILD_CHECK(gem_close(fd2, self->target) == -EINVAL);
		CHILD_CHECK(gem_close(fd2, self->filler) == -EINVAL);
		/* A handle of its own, likely the same number: its own bo. */
		CHILD_CHECK(bo_create(fd2, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0,
				      0, &h, NULL) == 0);
		CHILD_CHECK(bo_info(fd2, h, &bi) == 0 && bi.size == TEST_PAGE);
		/* The first process's mmap offset is not ours. */
		m = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd2,
			 (off_t)self->target_off);
		CHILD_CHECK(m == MAP_FAILED &&
			    (errno == EACCES || errno == EINVAL));
		m = mmap(NULL, TEST_PAGE, PROT_READ, MAP_SHARED, fd2,
			 (off_t)self->target_off);
		CHILD_CHECK(m == MAP_FAILED &&
			    (errno == EACCES || errno == EINVAL));
		close(fd2);
		_exit(0);
	}
	EXPECT_EQ(0, wait_child(pid));
	/* Still ours, untouched. */
	{
		struct drm_trn_bo_info bi;

		ASSERT_EQ(0, bo_info(self->fd, self->target, &bi));
		EXPECT_EQ(SIZE, bi.size);
		ASSERT_EQ(0, bo_info(self->fd, self->filler, &bi));
		EXPECT_TRUE(all_bytes(self->target_map, 0x7a, SIZE));
	}
}

TEST_F(iso, second_file_of_same_process)
{
	int fd2 = dut_open();
	struct drm_trn_bo_info bi;
	void *m;

	/* Contexts are per file, not per process. */
	ASSERT_LE(0, fd2);
	EXPECT_NE(self->ctx, fd_context(fd2));
	EXPECT_EQ(-ENOENT, bo_info(fd2, self->target, &bi));
	EXPECT_EQ(-EINVAL, gem_close(fd2, self->target));
	m = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd2,
		 (off_t)self->target_off);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(-EFAULT, dut_copy(fd2, self->target_va, self->target_va, 16));
	close(fd2);
	ASSERT_EQ(0, bo_info(self->fd, self->target, &bi));
}

TEST_F(iso, addresses_are_unmapped)
{
	uint64_t faults0, faults, last0, last;
	pid_t pid;

	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults0));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-last-fault-va", &last0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd2 = dut_open();
		unsigned int ctx2;
		uint64_t va, f0, f, lva;
		unsigned char *m;
		uint32_t h;

		CHILD_CHECK(fd2 >= 0);
		ctx2 = fd_context(fd2);
		CHILD_CHECK(ctx2 && ctx2 != self->ctx);
		CHILD_CHECK(bo_create(fd2, TEST_PAGE, DRM_TRN_PLACEMENT_HOST, 0,
				      0, &h, &va) == 0);
		m = bo_mmap(fd2, h, TEST_PAGE);
		CHILD_CHECK(m != MAP_FAILED);
		memset(m, 0x33, TEST_PAGE);
		CHILD_CHECK(fdinfo_u64(fd2, "trn-mmu-faults", &f0) == 0);

		/* Reading the first process's buffer from our context. */
		CHILD_CHECK(dut_copy(fd2, va, self->target_va, 16) == -EFAULT);
		CHILD_CHECK(all_bytes(m, 0x33, TEST_PAGE));
		/* Writing it. */
		CHILD_CHECK(dut_copy(fd2, self->target_va, va, 16) == -EFAULT);
		CHILD_CHECK(dut_copy(fd2, self->target_va + SIZE - 16, va,
				     16) == -EFAULT);
		CHILD_CHECK(fdinfo_u64(fd2, "trn-mmu-faults", &f) == 0);
		CHILD_CHECK(f == f0 + 3);
		CHILD_CHECK(fdinfo_u64(fd2, "trn-last-fault-va", &lva) == 0);
		CHILD_CHECK(lva == self->target_va + SIZE - 16);
		/*
		 * The filler's address is our own buffer here (both start at
		 * the bottom of the window): a copy there reaches ours only.
		 */
		if (va == self->filler_va) {
			memset(m, 0x44, TEST_PAGE);
			CHILD_CHECK(dut_copy(fd2, self->filler_va,
					     self->filler_va + 8, 8) == 0);
			CHILD_CHECK(all_bytes(m, 0x44, TEST_PAGE));
		}
		/* Our own copies work. */
		CHILD_CHECK(dut_copy(fd2, va, va + 2048, 2048) == 0);
		munmap(m, TEST_PAGE);
		close(fd2);
		_exit(0);
	}
	EXPECT_EQ(0, wait_child(pid));

	/* Our data, our fault counters: untouched. */
	EXPECT_TRUE(all_bytes(self->target_map, 0x7a, SIZE));
	EXPECT_TRUE(all_bytes(self->filler_map, 0xf1, 2 * MiB));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults));
	EXPECT_EQ(faults0, faults);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-last-fault-va", &last));
	EXPECT_EQ(last0, last);
	/* And in our own context, the address works. */
	EXPECT_EQ(0, dut_copy(self->fd, self->target_va, self->filler_va, 16));
	EXPECT_TRUE(all_bytes(self->target_map, 0xf1, 16));
}

/*
 * While a child faults in its own context over and over, ours stays clean
 * and keeps working.
 */
TEST_F(iso, faults_are_charged_to_their_context)
{
	uint64_t faults0, faults, child_faults = 0;
	int pipefd[2];
	pid_t pid;
	int i;

	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults0));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd2 = dut_open();
		uint64_t f = 0;

		close(pipefd[0]);
		CHILD_CHECK(fd2 >= 0);
		for (i = 0; i < 200; i++)
			CHILD_CHECK(dut_copy(fd2, self->target_va,
					     self->filler_va, 8) == -EFAULT);
		CHILD_CHECK(fdinfo_u64(fd2, "trn-mmu-faults", &f) == 0);
		CHILD_CHECK(write(pipefd[1], &f, sizeof(f)) == sizeof(f));
		close(fd2);
		_exit(0);
	}
	close(pipefd[1]);
	for (i = 0; i < 50; i++)
		EXPECT_EQ(0, dut_copy(self->fd, self->target_va + 8,
				      self->filler_va, 8));
	EXPECT_EQ(sizeof(child_faults), read(pipefd[0], &child_faults,
					     sizeof(child_faults)));
	close(pipefd[0]);
	EXPECT_EQ(0, wait_child(pid));
	EXPECT_EQ(200, child_faults);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults));
	EXPECT_EQ(faults0, faults);
}

/* A context number freed by a closed file is not the next file's data. */
TEST_F(iso, closed_context_leaves_nothing_mapped)
{
	unsigned int ctx2;
	uint64_t va;
	uint32_t h;
	int fd2 = dut_open();

	ASSERT_LE(0, fd2);
	ctx2 = fd_context(fd2);
	/*
	 * Above a 2 MiB buffer: on a part dut_copy() puts its command buffer
	 * at the bottom of the next file's window, which is mapped there.
	 */
	ASSERT_EQ(0, bo_create(fd2, 2 * MiB, DRM_TRN_PLACEMENT_HBM, 0, 0, &h,
			       NULL));
	ASSERT_EQ(0, bo_create(fd2, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0, 0, &h,
			       &va));
	EXPECT_EQ(0, dut_copy(fd2, va, va + 8, 8));
	close(fd2);
	/* The number is gone (or reused by a context without that buffer). */
	fd2 = dut_open();
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-EFAULT, dut_copy(fd2, va, va + 8, 8));
	/* Only the simulator's hook can name a closed file's context. */
	if (!dut_is_part())
		EXPECT_EQ(-EFAULT, sim_dma_copy(DEV, ctx2, va, va + 8, 8));
	close(fd2);
}

TEST_HARNESS_MAIN
