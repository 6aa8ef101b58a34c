// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * dma-buf sharing on the device under test (simulated device 0, or with
 * TRN_TEST_DEVICE=part a part bound to trn_pci): host buffers exported and
 * imported within one file and between files, refused exports, and round
 * trips with other exporters and importers (vgem, udmabuf, the system
 * dma-heap). Data is checked through CPU mappings on one side and COPY jobs
 * (dev_copy()) on the other: an imported buffer's mapping may bounce (the
 * 6.12-swiotlb lane), and only a job that lists it is synced. Whether a
 * buffer stays mapped (or not) in a context is checked with dut_copy()
 * (the simulator's debugfs dma_copy hook, which reaches the MMU outside
 * jobs, or a job on a part). Modules or heaps missing on a lane make their
 * test SKIP with the reason.
 */
#include <glob.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

#include "kselftest_harness.h"
#include "trn_test.h"

#define SIZE	(4 * TEST_PAGE)

FIXTURE(prime)
{
	int fd;
	unsigned int ctx;
	struct sim_counters base;
	uint64_t bufs0;
};

FIXTURE_SETUP(prime)
{
	self->fd = -1;
	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, or no part)");
	if (!dut_is_part())
		ASSERT_EQ(0, debugfs_ready());
	self->fd = dut_open();
	ASSERT_LE(0, self->fd);
	self->ctx = fd_context(self->fd);
	ASSERT_NE(0, self->ctx);
	ASSERT_EQ(0, sim_counters(DUT_ID, &self->base));
}

FIXTURE_TEARDOWN(prime)
{
	if (self->fd >= 0)
		close(self->fd);
}

static int export_fd(int fd, uint32_t handle, int *dmabuf)
{
	struct drm_prime_handle p = {
		.handle = handle,
		.flags = DRM_CLOEXEC | DRM_RDWR,
		.fd = -1,
	};
	int ret = raw_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	*dmabuf = ret ? -1 : p.fd;
	return ret;
}

static int import_fd(int fd, int dmabuf, uint32_t *handle)
{
	struct drm_prime_handle p = { .fd = dmabuf };
	int ret = raw_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	if (!ret)
		*handle = p.handle;
	return ret;
}

static bool back_to_base(const struct sim_counters *base)
{
	struct sim_counters now;

	return sim_counters_wait(DUT_ID, base, &now) == 0;
}

/*
 * Check data flows both ways between a buffer the CPU sees at @cpu and
 * the device sees at @va in the context of @fd, where its handle is
 * @handle, using a scratch host buffer of @fd and COPY jobs that list both
 * (dev_copy()). Returns 0 or the step that failed.
 */
static int check_both_ways(int fd, uint32_t handle, unsigned char *cpu,
			   uint64_t va, size_t size, int sync_fd)
{
	struct dma_buf_sync s = { 0 };
	unsigned char *scratch;
	uint32_t h;
	uint64_t sva;
	size_t i;
	int ret = 0, err;

	if (bo_create(fd, size, DRM_TRN_PLACEMENT_HOST, 0, 0, &h, &sva))
		return 1;
	scratch = bo_mmap(fd, h, size);
	if (scratch == MAP_FAILED) {
		gem_close(fd, h);
		return 2;
	}

	/*
	 * CPU writes the shared buffer, the device copies it out. Every
	 * sync says READ|WRITE: 6.12's udmabuf maps its pages once, in the
	 * direction of the first sync, and trips DMA-API debugging when a
	 * later sync names another.
	 */
	if (sync_fd >= 0) {
		s.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW;
		ioctl(sync_fd, DMA_BUF_IOCTL_SYNC, &s);
	}
	for (i = 0; i < size; i++)
		cpu[i] = (unsigned char)(i * 13 + 5);
	if (sync_fd >= 0) {
		s.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
		ioctl(sync_fd, DMA_BUF_IOCTL_SYNC, &s);
	}
	err = dev_copy(fd, sva, va, size, (uint32_t[]){ h, handle }, 2);
	if (err) {
		fprintf(stderr, "# copy out of the shared buffer: %s\n",
			strerror(-err));
		ret = 3;
		goto out;
	}
	for (i = 0; i < size; i++)
		if (scratch[i] != (unsigned char)(i * 13 + 5)) {
			ret = 4;
			goto out;
		}

	/* The device writes the shared buffer, the CPU reads it. */
	memset(scratch, 0xc3, size);
	err = dev_copy(fd, va + 1, sva, size - 1, (uint32_t[]){ handle, h }, 2);
	if (err) {
		fprintf(stderr, "# copy into the shared buffer: %s\n",
			strerror(-err));
		ret = 5;
		goto out;
	}
	if (sync_fd >= 0) {
		s.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW;
		ioctl(sync_fd, DMA_BUF_IOCTL_SYNC, &s);
	}
	if (cpu[0] != 5 || !all_bytes(cpu + 1, 0xc3, size - 1))
		ret = 6;
	if (sync_fd >= 0) {
		s.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
		ioctl(sync_fd, DMA_BUF_IOCTL_SYNC, &s);
	}
out:
	munmap(scratch, size);
	gem_close(fd, h);
	return ret;
}

TEST_F(prime, export_import_same_file)
{
	struct drm_trn_bo_info bi;
	uint32_t h, h2, h3;
	int dmabuf, dmabuf2;

	ASSERT_EQ(0, bo_create(self->fd, SIZE, DRM_TRN_PLACEMENT_HOST, 0, 0,
			       &h, NULL));
	ASSERT_EQ(0, export_fd(self->fd, h, &dmabuf));
	ASSERT_LE(0, dmabuf);
	ASSERT_EQ(0, import_fd(self->fd, dmabuf, &h2));
	EXPECT_EQ(h, h2);
	/* Again, and through a second export: still the same handle. */
	ASSERT_EQ(0, import_fd(self->fd, dmabuf, &h2));
	EXPECT_EQ(h, h2);
	ASSERT_EQ(0, export_fd(self->fd, h, &dmabuf2));
	ASSERT_EQ(0, import_fd(self->fd, dmabuf2, &h3));
	EXPECT_EQ(h, h3);
	ASSERT_EQ(0, bo_info(self->fd, h, &bi));
	EXPECT_EQ(DRM_TRN_PLACEMENT_HOST, bi.placement);
	EXPECT_EQ(SIZE, bi.size);

	/* One handle: one close removes it; the dma-buf keeps the memory. */
	ASSERT_EQ(0, gem_close(self->fd, h));
	EXPECT_EQ(-ENOENT, bo_info(self->fd, h, &bi));
	EXPECT_EQ(-EINVAL, gem_close(self->fd, h));
	close(dmabuf2);
	close(dmabuf);
	EXPECT_TRUE(back_to_base(&self->base));
}

TEST_F(prime, import_into_second_file)
{
	uint64_t va, va2, shared, total;
	struct drm_trn_bo_info bi, bi2;
	unsigned char *m, *m2;
	uint32_t h, h2;
	int fd2, dmabuf;

	fd2 = dut_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, bo_create(self->fd, SIZE, DRM_TRN_PLACEMENT_HOST, 0, 0,
			       &h, &va));
	/* Push fd2's allocator so that the addresses differ. */
	{
		uint32_t pad;

		ASSERT_EQ(0, bo_create(fd2, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0,
				       0, &pad, NULL));
	}
	ASSERT_EQ(0, export_fd(self->fd, h, &dmabuf));
	ASSERT_EQ(0, import_fd(fd2, dmabuf, &h2));
	ASSERT_EQ(0, bo_info(fd2, h2, &bi2));
	EXPECT_EQ(DRM_TRN_PLACEMENT_HOST, bi2.placement);	/* our own */
	EXPECT_EQ(SIZE, bi2.size);
	va2 = bi2.va;
	EXPECT_NE(0, va2);
	EXPECT_NE(va, va2);
	/* Importing twice into fd2: the same handle. */
	{
		uint32_t again;

		ASSERT_EQ(0, import_fd(fd2, dmabuf, &again));
		EXPECT_EQ(h2, again);
	}

	/* Written through the first file's mapping, copied in the second. */
	m = bo_mmap(self->fd, h, SIZE);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, check_both_ways(fd2, h2, m, va2, SIZE, -1));
	/* The second file may map it too: the same memory. */
	m2 = bo_mmap(fd2, h2, SIZE);
	ASSERT_NE(MAP_FAILED, m2);
	EXPECT_EQ(0, memcmp(m, m2, SIZE));
	m2[17] = 0x42;
	EXPECT_EQ(0x42, m[17]);
	/* The buffer shows as shared in both files. */
	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-shared-host", &shared));
	EXPECT_EQ(SIZE, shared);
	ASSERT_EQ(0, fdinfo_u64(fd2, "drm-total-host", &total));
	EXPECT_EQ(SIZE, total);

	/* The exporter's handle goes; the importer's keeps working. */
	munmap(m, SIZE);
	ASSERT_EQ(0, gem_close(self->fd, h));
	close(dmabuf);
	ASSERT_EQ(0, bo_info(fd2, h2, &bi));
	EXPECT_EQ(0, dut_copy(fd2, va2, va2 + 8, 8));
	EXPECT_EQ(0x42, m2[17]);
	/* ... and the address is gone in the exporter's context. */
	EXPECT_EQ(-EFAULT, dut_copy(self->fd, va, va + 8, 8));
	munmap(m2, SIZE);
	close(fd2);
	EXPECT_TRUE(back_to_base(&self->base));
}

TEST_F(prime, dmabuf_outlives_handles)
{
	unsigned char *m;
	uint32_t h, h2;
	int dmabuf, fd2;
	uint64_t va2;

	ASSERT_EQ(0, bo_create(self->fd, SIZE, DRM_TRN_PLACEMENT_HOST, 0, 0,
			       &h, NULL));
	m = bo_mmap(self->fd, h, SIZE);
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 0x6d, SIZE);
	munmap(m, SIZE);
	ASSERT_EQ(0, export_fd(self->fd, h, &dmabuf));
	ASSERT_EQ(0, gem_close(self->fd, h));
	close(self->fd);
	self->fd = -1;
	/* Only the dma-buf holds it now; it is still pinned. */
	{
		struct sim_counters now;

		ASSERT_EQ(0, sim_counters(DUT_ID, &now));
		EXPECT_EQ(self->base.host_pinned + SIZE, now.host_pinned);
	}
	/* The dma-buf maps, and imports into a new file with the data. */
	m = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_TRUE(all_bytes(m, 0x6d, SIZE));
	fd2 = dut_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, import_fd(fd2, dmabuf, &h2));
	{
		struct drm_trn_bo_info bi;

		ASSERT_EQ(0, bo_info(fd2, h2, &bi));
		va2 = bi.va;
	}
	EXPECT_EQ(0, check_both_ways(fd2, h2, m, va2, SIZE, dmabuf));
	ASSERT_EQ(0, gem_close(fd2, h2));
	close(fd2);
	/* The mapping of the dma-buf alone keeps it alive. */
	close(dmabuf);
	m[0] = 1;
	munmap(m, SIZE);
	EXPECT_TRUE(back_to_base(&self->base));
}

TEST_F(prime, export_refused)
{
	uint32_t h, imp;
	void *mem;
	int dmabuf = 1234;

	ASSERT_EQ(0, bo_create(self->fd, SIZE, DRM_TRN_PLACEMENT_HBM, 0, 0,
			       &h, NULL));
	EXPECT_EQ(-EOPNOTSUPP, export_fd(self->fd, h, &dmabuf));
	EXPECT_EQ(-1, dmabuf);
	gem_close(self->fd, h);

	mem = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_EQ(0, bo_userptr(self->fd, mem, SIZE, 0, &h, NULL));
	EXPECT_EQ(-EOPNOTSUPP, export_fd(self->fd, h, &dmabuf));
	gem_close(self->fd, h);
	munmap(mem, SIZE);

	/* Unknown handles and non-dma-buf fds. */
	EXPECT_EQ(-ENOENT, export_fd(self->fd, 12345, &dmabuf));
	EXPECT_NE(0, import_fd(self->fd, self->fd, &imp));
	EXPECT_NE(0, import_fd(self->fd, -1, &imp));
	EXPECT_TRUE(back_to_base(&self->base));
}

/* ---- other drivers ---- */

static bool load_module(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "modprobe %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* The card node of vgem, or -errno. */
static int open_vgem(void)
{
	glob_t g;
	size_t i;
	int fd = -ENOENT;

	if (glob("/dev/dri/card*", 0, NULL, &g))
		return -ENOENT;
	for (i = 0; i < g.gl_pathc; i++) {
		char name[32];
		int f = open(g.gl_pathv[i], O_RDWR | O_CLOEXEC);

		if (f < 0)
			continue;
		if (!drm_driver_name(f, name, sizeof(name), NULL, NULL, NULL) &&
		    !strcmp(name, "vgem")) {
			fd = f;
			break;
		}
		close(f);
	}
	globfree(&g);
	return fd;
}

static void *vgem_map(int vfd, uint32_t handle, size_t size)
{
	struct drm_mode_map_dumb md = { .handle = handle };

	if (raw_ioctl(vfd, DRM_IOCTL_MODE_MAP_DUMB, &md))
		return MAP_FAILED;
	return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vfd,
		    (off_t)md.offset);
}

TEST_F(prime, vgem_round_trip)
{
	struct drm_mode_create_dumb cd = { .width = 64, .height = 64,
					   .bpp = 32 };
	struct drm_trn_bo_info bi;
	uint32_t th, th2, vh;
	unsigned char *vm, *tm;
	int vfd, dmabuf;
	uint64_t total;

	if (!load_module("vgem") && access("/sys/module/vgem", F_OK))
		SKIP(return, "vgem is not available on this kernel");
	vfd = open_vgem();
	if (vfd < 0)
		SKIP(return, "vgem loaded but no vgem card node");

	/* vgem -> trn */
	ASSERT_EQ(0, raw_ioctl(vfd, DRM_IOCTL_MODE_CREATE_DUMB, &cd));
	ASSERT_EQ(0, cd.size % TEST_PAGE);
	vm = vgem_map(vfd, cd.handle, cd.size);
	ASSERT_NE(MAP_FAILED, vm);
	ASSERT_EQ(0, export_fd(vfd, cd.handle, &dmabuf));
	ASSERT_EQ(0, import_fd(self->fd, dmabuf, &th));
	ASSERT_EQ(0, import_fd(self->fd, dmabuf, &th2));
	EXPECT_EQ(th, th2);
	ASSERT_EQ(0, bo_info(self->fd, th, &bi));
	EXPECT_EQ(DRM_TRN_PLACEMENT_IMPORTED, bi.placement);
	EXPECT_EQ(cd.size, bi.size);
	EXPECT_EQ(0, bi.mmap_offset);
	EXPECT_NE(0, bi.va);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-total-host", &total));
	EXPECT_EQ(cd.size, total);
	EXPECT_EQ(0, check_both_ways(self->fd, th, vm, bi.va, cd.size,
				     dmabuf));
	/* The exporter lets go first; the import keeps working. */
	munmap(vm, cd.size);
	{
		struct drm_gem_close gc = { .handle = cd.handle };

		EXPECT_EQ(0, raw_ioctl(vfd, DRM_IOCTL_GEM_CLOSE, &gc));
	}
	close(dmabuf);
	EXPECT_EQ(0, dut_copy(self->fd, bi.va, bi.va + 8, 8));
	ASSERT_EQ(0, gem_close(self->fd, th));
	EXPECT_EQ(-EFAULT, dut_copy(self->fd, bi.va, bi.va + 8, 8));

	/* trn -> vgem */
	ASSERT_EQ(0, bo_create(self->fd, SIZE, DRM_TRN_PLACEMENT_HOST, 0, 0,
			       &th, NULL));
	ASSERT_EQ(0, bo_info(self->fd, th, &bi));
	tm = bo_mmap(self->fd, th, SIZE);
	ASSERT_NE(MAP_FAILED, tm);
	ASSERT_EQ(0, export_fd(self->fd, th, &dmabuf));
	ASSERT_EQ(0, import_fd(vfd, dmabuf, &vh));
	/*
	 * The DRM core refuses dumb-map offsets for imported objects
	 * (drm_gem_dumb_map_offset()), so the importer's CPU view is the
	 * dma-buf's own mapping, which is our exporter's mmap.
	 */
	vm = vgem_map(vfd, vh, SIZE);
	if (vm == MAP_FAILED)
		vm = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			  dmabuf, 0);
	ASSERT_NE(MAP_FAILED, vm);
	memset(tm, 0x1e, SIZE);
	EXPECT_TRUE(all_bytes(vm, 0x1e, SIZE));
	EXPECT_EQ(0, check_both_ways(self->fd, th, vm, bi.va, SIZE, dmabuf));
	EXPECT_EQ(0, memcmp(vm, tm, SIZE));
	munmap(vm, SIZE);
	munmap(tm, SIZE);
	ASSERT_EQ(0, gem_close(self->fd, th));
	close(dmabuf);
	/* vgem's import still holds the host buffer. */
	{
		struct drm_gem_close gc = { .handle = vh };

		EXPECT_EQ(0, raw_ioctl(vfd, DRM_IOCTL_GEM_CLOSE, &gc));
	}
	close(vfd);
	EXPECT_TRUE(back_to_base(&self->base));
}

TEST_F(prime, udmabuf_round_trip)
{
	struct udmabuf_create uc = { 0 };
	struct drm_trn_bo_info bi;
	size_t size = 16 * TEST_PAGE;
	int memfd, ufd, dmabuf;
	unsigned char *m;
	uint32_t h, h2;

	if (!load_module("udmabuf") && access("/dev/udmabuf", F_OK))
		SKIP(return, "udmabuf is not available on this kernel");
	ufd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (ufd < 0)
		SKIP(return, "no /dev/udmabuf: %s", strerror(errno));
	memfd = memfd_create("trn-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, (off_t)size));
	ASSERT_EQ(0, fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK));
	uc.memfd = (uint32_t)memfd;
	uc.flags = UDMABUF_FLAGS_CLOEXEC;
	uc.offset = 0;
	uc.size = size;
	dmabuf = ioctl(ufd, UDMABUF_CREATE, &uc);
	ASSERT_LE(0, dmabuf) TH_LOG("UDMABUF_CREATE: %s", strerror(errno));
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	ASSERT_NE(MAP_FAILED, m);

	ASSERT_EQ(0, import_fd(self->fd, dmabuf, &h));
	ASSERT_EQ(0, import_fd(self->fd, dmabuf, &h2));
	EXPECT_EQ(h, h2);
	ASSERT_EQ(0, bo_info(self->fd, h, &bi));
	EXPECT_EQ(DRM_TRN_PLACEMENT_IMPORTED, bi.placement);
	EXPECT_EQ(size, bi.size);
	/*
	 * The CPU side is the memfd's own mapping. 6.12's udmabuf implements
	 * DMA_BUF_IOCTL_SYNC by syncing a DMA mapping of the pages for its
	 * own misc device (begin_cpu_udmabuf(): dma_sync_sgtable_for_cpu()
	 * on ubuf->sg), not the importers' mappings. Under bounce buffering
	 * that mapping is a bounce copy too, taken at the first sync, and
	 * every SYNC_START copies it back over the pages: it would overwrite
	 * what trn's job wrote (and synced back to the pages) with what the
	 * CPU wrote before. So the exporter's syncs bracket the CPU's
	 * accesses only where nothing bounces; the data is checked both
	 * ways on every lane.
	 */
	EXPECT_EQ(0, check_both_ways(self->fd, h, m, bi.va, size,
				     dma_bounces() ? -1 : dmabuf));
	/* Imports are not charged as pinned memory of this device. */
	{
		struct sim_counters now;

		ASSERT_EQ(0, sim_counters(DUT_ID, &now));
		EXPECT_EQ(self->base.host_pinned, now.host_pinned);
		EXPECT_EQ(self->base.hbm_used, now.hbm_used);
	}
	/* Everything but the import goes; the import keeps working. */
	close(dmabuf);
	munmap(m, size);
	close(memfd);
	close(ufd);
	EXPECT_EQ(0, dut_copy(self->fd, bi.va, bi.va + size - 8, 8));
	ASSERT_EQ(0, gem_close(self->fd, h));
	EXPECT_EQ(-EFAULT, dut_copy(self->fd, bi.va, bi.va + 8, 8));
	EXPECT_TRUE(back_to_base(&self->base));
}

TEST_F(prime, dma_heap_round_trip)
{
	struct dma_heap_allocation_data a = {
		.len = 8 * TEST_PAGE,
		.fd_flags = O_RDWR | O_CLOEXEC,
	};
	struct drm_trn_bo_info bi;
	unsigned char *m;
	uint32_t h, h2;
	int hfd, fd2;

	hfd = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (hfd < 0)
		SKIP(return, "no /dev/dma_heap/system: %s", strerror(errno));
	ASSERT_EQ(0, raw_ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &a));
	close(hfd);
	m = mmap(NULL, a.len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)a.fd, 0);
	ASSERT_NE(MAP_FAILED, m);

	ASSERT_EQ(0, import_fd(self->fd, (int)a.fd, &h));
	ASSERT_EQ(0, import_fd(self->fd, (int)a.fd, &h2));
	EXPECT_EQ(h, h2);
	ASSERT_EQ(0, bo_info(self->fd, h, &bi));
	EXPECT_EQ(DRM_TRN_PLACEMENT_IMPORTED, bi.placement);
	EXPECT_EQ(a.len, bi.size);
	EXPECT_EQ(0, check_both_ways(self->fd, h, m, bi.va, a.len,
				     (int)a.fd));
	/* A second context imports the same heap buffer: same data. */
	fd2 = dut_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, import_fd(fd2, (int)a.fd, &h2));
	{
		struct drm_trn_bo_info bi2;

		ASSERT_EQ(0, bo_info(fd2, h2, &bi2));
		EXPECT_EQ(0, check_both_ways(fd2, h2, m, bi2.va, a.len,
					     (int)a.fd));
	}
	close(fd2);
	munmap(m, a.len);
	close((int)a.fd);
	ASSERT_EQ(0, gem_close(self->fd, h));
	EXPECT_TRUE(back_to_base(&self->base));
}

TEST_HARNESS_MAIN
