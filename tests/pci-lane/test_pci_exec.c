// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Jobs on a modelled Trainium2 part through trn_pci's command processor,
 * over libtrnhal: run by tests/pci-lane/test_pci_binding once the part is
 * bound (pci lane). What the part executes (NOP, WRITE, FILL, COPY, CALL)
 * must give the bytes the ISA says, across the part's memory layout (host
 * pages, HBM stacks and their boundary); what it does not execute must
 * fail with UNSUPPORTED at that command, and an address outside the
 * context must fault without writing anything.
 */
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "trn_accel.h"
#include "trnhal.h"

/* Generous: the debug kernel under emulation (hangs wait 5 s each). */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	300

#define WAIT_NS		(30LL * 1000 * 1000 * 1000)
#define MIB		(1024 * 1024ULL)
/* The model's HBM: 4 stacks of 64 MiB, 16 MiB of each the firmware's. */
#define STACKS		4
#define CARVEOUT	(16 * MIB)
#define STACK_USABLE	(48 * MIB)
/* A real Trn3's stack: 36 GiB, the same carve-out. */
#define REAL_TRN3_USABLE	(36ULL * 1024 * MIB - CARVEOUT)

/*
 * One QMP command to the guest's QEMU (tests/pci-lane/qmp, from the
 * repository root): the model's fault knobs and hot unplug. The model's
 * parts are /machine/peripheral/trnN, in TRN_PCI_DEVICES's order.
 */
static int qmp_v(char *out, size_t size, const char *fmt, va_list ap)
{
	char json[512], cmd[700];
	size_t n;
	FILE *f;

	vsnprintf(json, sizeof(json), fmt, ap);
	snprintf(cmd, sizeof(cmd), "tests/pci-lane/qmp '%s'", json);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, size - 1, f);
	out[n] = '\0';
	return pclose(f) ? -1 : 0;
}

static int qmp(const char *fmt, ...)
{
	char out[1024];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = qmp_v(out, sizeof(out), fmt, ap);
	va_end(ap);
	return ret;
}

static int knob(const char *part, const char *name, const char *value)
{
	return qmp("{\"execute\": \"qom-set\", \"arguments\": "
		   "{\"path\": \"/machine/peripheral/%s\", \"property\": "
		   "\"%s\", \"value\": %s}}", part, name, value);
}

/* As qmp(), with QEMU's answer in @out; 0 or -1. */
static int qmp_answer(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = qmp_v(out, size, fmt, ap);
	va_end(ap);
	return ret;
}

/* A number the model shows through QMP qom-get, or -1. */
static long long knob_get(const char *part, const char *name)
{
	long long v = -1;
	char out[256];
	char *r;

	if (qmp_answer(out, sizeof(out),
		       "{\"execute\": \"qom-get\", \"arguments\": "
		       "{\"path\": \"/machine/peripheral/%s\", \"property\": \"%s\"}}",
		       part, name))
		return -1;
	r = strstr(out, "\"return\":");
	if (!r || sscanf(r + 9, " %lld", &v) != 1)
		return -1;
	return v;
}

/*
 * Eight bytes of the guest's physical memory as QEMU itself reads them
 * (the monitor's xp), past the guest's CPU and trn_pci: 0 or -1.
 */
static int phys_read_u64(uint64_t addr, uint64_t *val)
{
	unsigned long long v;
	char out[256];
	char *r;

	if (qmp_answer(out, sizeof(out),
		       "{\"execute\": \"human-monitor-command\", \"arguments\": "
		       "{\"command-line\": \"xp /1gx 0x%llx\"}}",
		       (unsigned long long)addr))
		return -1;
	r = strstr(out, ": 0x");
	if (!r || sscanf(r + 4, "%llx", &v) != 1)
		return -1;
	*val = v;
	return 0;
}

/* The first trn device of this generation and PCI device id, or -1. */
static int find_part(uint32_t generation, uint32_t device_id)
{
	unsigned int minors[16];
	size_t count = 0, i;

	if (trn_device_list(minors, 16, &count))
		return -1;
	for (i = 0; i < count && i < 16; i++) {
		struct trn_device_info info;
		trn_device_t *dev;
		int gen = -1;

		if (trn_device_open(minors[i], &dev))
			continue;
		if (!trn_device_info(dev, &info) &&
		    info.device_id == device_id)
			gen = info.generation;
		trn_device_close(dev);
		if (gen == (int)generation)
			return minors[i];
	}
	return -1;
}

static int find_trn2(void)
{
	return find_part(TRN_GEN_TRN2, 0x7364);
}

FIXTURE(part)
{
	trn_device_t *dev;
	struct trn_device_info info;
	trn_queue_t *q;
	trn_cmdbuf_t *cb;
	trn_bo_t *host_a, *host_b;	/* 2 MiB each, CPU-mapped */
	uint8_t *a, *b;
};

/*
 * The part tests run on two parts: the Trn2 in AWS's QEMU mode (revision
 * 255) and the Trn3 that looks real to a driver (revision 1: firmware
 * reset, stacks 64 GiB apart in BAR4). @qom is the model's QMP name.
 */
FIXTURE_VARIANT(part)
{
	uint32_t generation;
	uint32_t device_id;
	const char *qom;
	bool real;
};

FIXTURE_VARIANT_ADD(part, qemu_mode)
{
	.generation = TRN_GEN_TRN2,
	.device_id = 0x7364,
	.qom = "trn0",
	.real = false,
};

FIXTURE_VARIANT_ADD(part, real)
{
	.generation = TRN_GEN_TRN3,
	.device_id = 0x7565,
	.qom = "trn2",
	.real = true,
};

/* Whether the guest has a PCI device 1d0f:@device_id, bound or not. */
static bool pci_has_device(uint32_t device_id)
{
	char path[300], buf[16];
	struct dirent *de;
	bool found = false;
	DIR *dir;
	FILE *f;

	dir = opendir("/sys/bus/pci/devices");
	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		found = fgets(buf, sizeof(buf), f) &&
			strtoul(buf, NULL, 16) == device_id;
		fclose(f);
	}
	closedir(dir);
	return found;
}

/* The part of @v, or -1. */
static int find_variant(const FIXTURE_VARIANT(part) *v)
{
	return find_part(v->generation, v->device_id);
}

FIXTURE_SETUP(part)
{
	int minor = find_variant(variant);
	void *p;

	self->dev = NULL;
	if (minor < 0 && variant->real && !pci_has_device(variant->device_id))
		SKIP(return, "no part that looks real in this guest (the pci-debug lane has none: KASAN would shadow its 144 GiB of mapped HBM)");
	ASSERT_LE(0, minor) TH_LOG("no part %04x is bound to trn_pci",
				   variant->device_id);
	ASSERT_EQ(0, trn_device_open(minor, &self->dev));
	ASSERT_EQ(0, trn_device_info(self->dev, &self->info));
	ASSERT_EQ(0, trn_queue_create(self->dev, 0, TRN_PRIORITY_NORMAL,
				      &self->q));
	ASSERT_EQ(0, trn_cmdbuf_create(self->dev, 1 << 20, &self->cb));
	ASSERT_EQ(0, trn_bo_create(self->dev, 2 * MIB, TRN_PLACEMENT_HOST, 0,
				   0, &self->host_a));
	ASSERT_EQ(0, trn_bo_create(self->dev, 2 * MIB, TRN_PLACEMENT_HOST, 0,
				   0, &self->host_b));
	ASSERT_EQ(0, trn_bo_map(self->host_a, &p));
	self->a = p;
	ASSERT_EQ(0, trn_bo_map(self->host_b, &p));
	self->b = p;
}

FIXTURE_TEARDOWN(part)
{
	if (!self->dev)
		return;
	trn_bo_free(self->host_a);
	trn_bo_free(self->host_b);
	trn_cmdbuf_destroy(self->cb);
	trn_queue_destroy(self->q);
	trn_device_close(self->dev);
}

/* Run what the command buffer holds on @q; the fence's status. */
static int run_on(FIXTURE_DATA(part) *self, trn_queue_t *q, trn_bo_t **bos,
		  uint32_t nbos)
{
	trn_bo_t *all[8];
	struct trn_job job = {
		.cmd_va = trn_cmdbuf_va(self->cb),
		.cmd_size = (uint32_t)trn_cmdbuf_size(self->cb),
		.bos = all,
		.bo_count = nbos + 1,
	};
	struct trn_fence f;
	uint32_t i;
	int ret;

	all[0] = trn_cmdbuf_bo(self->cb);
	for (i = 0; i < nbos; i++)
		all[i + 1] = bos[i];
	ret = trn_submit(q, &job, &f);
	if (ret)
		return ret;
	ret = trn_fence_wait(&f, trn_now_ns() + WAIT_NS);
	if (ret)
		return ret;
	return trn_fence_status(&f);
}

static int run(FIXTURE_DATA(part) *self, trn_bo_t **bos, uint32_t nbos)
{
	return run_on(self, self->q, bos, nbos);
}

static void pattern(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 9));
}

/* 0 if @p holds pattern(@seed), else the offset of the first difference + 1. */
static size_t check_pattern(const uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (uint8_t)(seed + i * 7 + (i >> 9)))
			return i + 1;
	return 0;
}

static int write_str(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

TEST_F(part, identity)
{
	EXPECT_EQ(variant->generation, self->info.generation);
	EXPECT_EQ(variant->device_id, self->info.device_id);
	EXPECT_EQ(8, self->info.num_cores);
	EXPECT_EQ(4, self->info.queues_per_core);
	EXPECT_EQ(variant->real ? 4 * REAL_TRN3_USABLE : 4 * STACK_USABLE,
		  self->info.hbm_size);
	/* Not simulated, and none of the NeuronCore engines' opcodes. */
	EXPECT_EQ(TRN_CAP_HBM_CPU_VISIBLE | TRN_CAP_SEMAPHORES,
		  self->info.capabilities);
	EXPECT_EQ(DRM_TRN_UAPI_MINOR, self->info.uapi_minor);
}

/* Host to HBM to host, 1 MiB: many descriptors, page-split host side. */
TEST_F(part, copy_host_hbm_host)
{
	trn_bo_t *hbm, *bos[3];

	ASSERT_EQ(0, trn_bo_create(self->dev, 2 * MIB, TRN_PLACEMENT_HBM, 0, 0,
				   &hbm));
	pattern(self->a, MIB, 3);
	memset(self->b, 0, MIB);
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(hbm) + 4096 + 12,
				  trn_bo_va(self->host_a), MIB));
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_b),
				  trn_bo_va(hbm) + 4096 + 12, MIB));
	bos[0] = hbm;
	bos[1] = self->host_a;
	bos[2] = self->host_b;
	EXPECT_EQ(0, run(self, bos, 3));
	EXPECT_EQ(0, memcmp(self->a, self->b, MIB));
	trn_bo_free(hbm);
}

/* 2D: rows of 300 bytes at different pitches on both sides. */
TEST_F(part, copy_2d)
{
	trn_bo_t *bos[2] = { self->host_a, self->host_b };
	size_t r, c, errors = 0;

	pattern(self->a, 64 * 1024, 9);
	memset(self->b, 0xee, 64 * 1024);
	ASSERT_EQ(0, trn_cmd_copy2d(self->cb, trn_bo_va(self->host_b) + 8, 512,
				    trn_bo_va(self->host_a) + 4, 1000, 300,
				    40));
	EXPECT_EQ(0, run(self, bos, 2));
	for (r = 0; r < 40; r++)
		for (c = 0; c < 512; c++) {
			uint8_t want = c < 300 ? self->a[4 + r * 1000 + c] :
						 0xee;

			errors += self->b[8 + r * 512 + c] != want;
		}
	EXPECT_EQ(0, errors);
	EXPECT_EQ(0xee, self->b[0]);
}

/* FILL with two patterns in one job (the staged pattern changes). */
TEST_F(part, fill_two_patterns)
{
	trn_bo_t *bos[1] = { self->host_a };
	uint32_t *w = (uint32_t *)self->a;
	size_t i, errors = 0;

	memset(self->a, 0, MIB);
	ASSERT_EQ(0, trn_cmd_fill(self->cb, trn_bo_va(self->host_a),
				  0x11223344, 300 * 1024));
	ASSERT_EQ(0, trn_cmd_fill(self->cb, trn_bo_va(self->host_a) + 4096,
				  0xa5a5f00d, 8));
	EXPECT_EQ(0, run(self, bos, 1));
	for (i = 0; i < 300 * 256; i++) {
		uint32_t want = i == 1024 || i == 1025 ? 0xa5a5f00d :
							 0x11223344;

		errors += w[i] != want;
	}
	EXPECT_EQ(0, errors);
	EXPECT_EQ(0, w[300 * 256]);
}

/* More WRITEs in one job than the processor stages at once. */
TEST_F(part, many_writes)
{
	trn_bo_t *bos[1] = { self->host_a };
	uint64_t *w64 = (uint64_t *)self->a;
	uint32_t *w32 = (uint32_t *)(self->a + 8192);
	unsigned int i, errors = 0;

	memset(self->a, 0, 16384);
	for (i = 0; i < 700; i++) {
		ASSERT_EQ(0, trn_cmd_write64(self->cb,
					     trn_bo_va(self->host_a) + i * 8,
					     0x0123456700000000ULL + i));
		ASSERT_EQ(0, trn_cmd_write32(self->cb,
					     trn_bo_va(self->host_a) + 8192 +
					     i * 4, 0xc0de0000 + i));
	}
	EXPECT_EQ(0, run(self, bos, 1));
	for (i = 0; i < 700; i++)
		errors += w64[i] != 0x0123456700000000ULL + i ||
			  w32[i] != 0xc0de0000 + i;
	EXPECT_EQ(0, errors);
}

/* CALL runs a second-level buffer, then returns. */
TEST_F(part, call)
{
	trn_bo_t *bos[2] = { self->host_a, NULL };
	trn_cmdbuf_t *sub;
	uint32_t *w = (uint32_t *)self->a;

	ASSERT_EQ(0, trn_cmdbuf_create(self->dev, 0, &sub));
	bos[1] = trn_cmdbuf_bo(sub);
	memset(self->a, 0, 64);
	ASSERT_EQ(0, trn_cmd_write32(sub, trn_bo_va(self->host_a) + 4, 2));
	ASSERT_EQ(0, trn_cmd_write32(self->cb, trn_bo_va(self->host_a), 1));
	ASSERT_EQ(0, trn_cmd_call(self->cb, trn_cmdbuf_va(sub),
				  trn_cmdbuf_size(sub)));
	ASSERT_EQ(0, trn_cmd_write32(self->cb, trn_bo_va(self->host_a) + 8, 3));
	EXPECT_EQ(0, run(self, bos, 2));
	EXPECT_EQ(1, w[0]);
	EXPECT_EQ(2, w[1]);
	EXPECT_EQ(3, w[2]);
	trn_cmdbuf_destroy(sub);
}

/*
 * Each opcode without its capability bit fails the job at that command
 * with UNSUPPORTED (-EOPNOTSUPP); what ran before it stays done.
 */
TEST_F(part, unsupported_opcodes)
{
	trn_bo_t *bos[1] = { self->host_a };
	uint64_t va = trn_bo_va(self->host_a);
	struct trn_matmul mm = { .m = 1, .n = 1, .k = 1, .a = va, .lda = 4,
				 .b = va, .ldb = 4, .c = va + 64, .ldc = 4 };
	struct trn_queue_status st;
	uint32_t *w = (uint32_t *)self->a;
	unsigned int op;

	for (op = 0; op < 5; op++) {
		trn_cmdbuf_reset(self->cb);
		memset(self->a, 0, 128);
		ASSERT_EQ(0, trn_cmd_write32(self->cb, va + 32, 7));
		switch (op) {
		case 0: ASSERT_EQ(0, trn_cmd_timestamp(self->cb, va)); break;
		case 1: ASSERT_EQ(0, trn_cmd_matmul(self->cb, &mm)); break;
		case 2:
			ASSERT_EQ(0, trn_cmd_unary(self->cb, TRN_UNARY_RELU, 0,
						   1, 1, va, 4, va + 16, 4));
			break;
		case 3:
			ASSERT_EQ(0, trn_cmd_binary(self->cb, TRN_BINARY_ADD,
						    0, 1, 1, va, 4, va, 4, va,
						    4));
			break;
		case 4:
			ASSERT_EQ(0, trn_cmd_reduce(self->cb, TRN_REDUCE_SUM,
						    1, 1, va, va + 16, 4));
			break;
		}
		ASSERT_EQ(0, trn_cmd_write32(self->cb, va + 36, 8));
		EXPECT_EQ(-EOPNOTSUPP, run(self, bos, 1)) TH_LOG("op %u", op);
		ASSERT_EQ(0, trn_queue_status(self->q, &st));
		EXPECT_EQ(TRN_STATUS_UNSUPPORTED, st.status);
		/* After the 24-byte WRITE. */
		EXPECT_EQ(24, st.error_offset);
		EXPECT_EQ(trn_cmdbuf_va(self->cb) + 24, st.error_cmd_va);
		EXPECT_EQ(7, w[8]);
		EXPECT_EQ(0, w[9]);
		EXPECT_EQ(0, w[0]);
	}
}

/*
 * An address outside the context faults, with its address reported, and
 * the faulting command writes nothing; a copy running past the end of a
 * buffer faults at the first byte after it.
 */
TEST_F(part, mmu_fault)
{
	trn_bo_t *bos[1] = { self->host_a };
	uint64_t va = trn_bo_va(self->host_a);
	struct trn_queue_status st;
	uint32_t *w = (uint32_t *)self->a;

	uint64_t top = self->info.va_start + self->info.va_size - 4096;

	memset(self->a, 0, 2 * MIB);
	/* Never mapped: the top page of the range. */
	ASSERT_EQ(0, trn_cmd_write32(self->cb, va, 5));
	ASSERT_EQ(0, trn_cmd_copy(self->cb, va + 64, top, 64));
	EXPECT_EQ(-EFAULT, run(self, bos, 1));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(TRN_STATUS_MMU_FAULT, st.status);
	EXPECT_EQ(top, st.fault_va);
	EXPECT_EQ(24, st.error_offset);
	EXPECT_EQ(5, w[0]);

	/* Past the end: a fill of the last 4 KiB plus 4 bytes writes nothing. */
	trn_cmdbuf_reset(self->cb);
	ASSERT_EQ(0, trn_cmd_fill(self->cb, va + 2 * MIB - 4096, 0x55555555,
				  4096 + 4));
	EXPECT_EQ(-EFAULT, run(self, bos, 1));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(va + 2 * MIB, st.fault_va);
	EXPECT_EQ(0, w[(2 * MIB - 4096) / 4]);
	EXPECT_EQ(0, w[(2 * MIB - 4) / 4]);
}

/*
 * Isolation without a device MMU: an address that is a buffer in another
 * context (another open of the device) is unmapped in this one; a job of
 * this context that names it faults and the other context's memory keeps
 * its bytes.
 */
TEST_F(part, other_context_unreachable)
{
	struct drm_trn_bo_create bc[3];
	struct drm_trn_bo_info bi = { 0 };
	trn_bo_t *bos[1] = { self->host_a };
	struct trn_queue_status st;
	uint8_t *other;
	char node[64];
	int fd, i;

	snprintf(node, sizeof(node), "/dev/accel/accel%u", self->info.minor);
	fd = open(node, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	/* Its third buffer lies beyond everything this context has mapped. */
	for (i = 0; i < 3; i++) {
		memset(&bc[i], 0, sizeof(bc[i]));
		bc[i].size = 16 * MIB;
		bc[i].placement = DRM_TRN_PLACEMENT_HOST;
		ASSERT_EQ(0, drmIoctl(fd, DRM_IOCTL_TRN_BO_CREATE, &bc[i]));
	}
	ASSERT_LT(trn_bo_va(self->host_b) + 2 * MIB, bc[2].va);
	bi.handle = bc[2].handle;
	ASSERT_EQ(0, drmIoctl(fd, DRM_IOCTL_TRN_BO_INFO, &bi));
	other = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		     (off_t)bi.mmap_offset);
	ASSERT_NE(MAP_FAILED, other);
	memset(other, 0x77, 4096);

	ASSERT_EQ(0, trn_cmd_write32(self->cb, bc[2].va, 0));
	EXPECT_EQ(-EFAULT, run(self, bos, 1));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(bc[2].va, st.fault_va);
	trn_cmdbuf_reset(self->cb);
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_a), bc[2].va,
				  64));
	EXPECT_EQ(-EFAULT, run(self, bos, 1));
	EXPECT_EQ(0x77, other[0]);
	EXPECT_EQ(0x77, other[4095]);
	munmap(other, 4096);
	close(fd);
}

/* A read-only buffer can be read, not written. */
TEST_F(part, read_only_buffer)
{
	trn_bo_t *ro, *bos[2];
	struct trn_queue_status st;
	void *p;

	ASSERT_EQ(0, trn_bo_create(self->dev, 4096, TRN_PLACEMENT_HOST,
				   TRN_BO_DEVICE_READ_ONLY, 0, &ro));
	ASSERT_EQ(0, trn_bo_map(ro, &p));
	memset(p, 0x3c, 4096);
	memset(self->a, 0, 4096);
	bos[0] = ro;
	bos[1] = self->host_a;
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_a),
				  trn_bo_va(ro), 4096));
	EXPECT_EQ(0, run(self, bos, 2));
	EXPECT_EQ(0x3c, self->a[4095]);
	trn_cmdbuf_reset(self->cb);
	ASSERT_EQ(0, trn_cmd_write32(self->cb, trn_bo_va(ro), 1));
	EXPECT_EQ(-EFAULT, run(self, bos, 2));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(trn_bo_va(ro), st.fault_va);
	EXPECT_EQ(0x3c, ((uint8_t *)p)[0]);
	trn_bo_free(ro);
}

/*
 * Device memory across the boundary of two HBM stacks: what the CPU
 * writes through its BAR4 mapping, the engines read, and the other way
 * round, on both sides of the boundary.
 */
TEST_F(part, hbm_across_stacks)
{
	trn_bo_t *first, *span, *bos[3];
	uint8_t *cpu;
	uint64_t off;
	void *p;
	size_t i, errors = 0;

	if (variant->real)
		SKIP(return, "a real part's first stack is 36 GiB: trn_pci would clear all of it, and the model backs every byte it touches with the host's memory");

	/* 40 MiB, then 16 MiB: the second crosses 48 MiB into stack 1. */
	ASSERT_EQ(0, trn_bo_create(self->dev, 40 * MIB, TRN_PLACEMENT_HBM, 0,
				   0, &first));
	ASSERT_EQ(0, trn_bo_create(self->dev, 16 * MIB, TRN_PLACEMENT_HBM, 0,
				   0, &span));
	ASSERT_EQ(0, trn_bo_map(span, &p));
	cpu = p;
	/* 1 MiB around the boundary, wherever the allocator put it. */
	off = 8 * MIB - MIB / 2;
	pattern(self->a, MIB, 77);
	bos[0] = span;
	bos[1] = self->host_a;
	bos[2] = self->host_b;
	for (i = 0; i < MIB; i++)
		cpu[off + i] = self->a[i];
	memset(self->b, 0, MIB);
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_b),
				  trn_bo_va(span) + off, MIB));
	EXPECT_EQ(0, run(self, bos, 3));
	EXPECT_EQ(0, memcmp(self->a, self->b, MIB));

	pattern(self->a, MIB, 5);
	trn_cmdbuf_reset(self->cb);
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(span) + off,
				  trn_bo_va(self->host_a), MIB));
	EXPECT_EQ(0, run(self, bos, 3));
	for (i = 0; i < MIB; i++)
		errors += cpu[off + i] != self->a[i];
	EXPECT_EQ(0, errors);
	trn_bo_free(span);
	trn_bo_free(first);
}

static int part_bdf(int minor, char *bdf, size_t size);
static uint64_t accel_u64(int minor, const char *attr);

/* Where BAR4 of the part behind accel @minor starts in guest memory, or 0. */
static uint64_t bar4_base(int minor)
{
	unsigned long long start = 0, end, flags;
	char bdf[64], path[160], line[128];
	FILE *f;
	int i;

	if (part_bdf(minor, bdf, sizeof(bdf)))
		return 0;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", bdf);
	f = fopen(path, "r");
	if (!f)
		return 0;
	for (i = 0; i <= 4; i++)
		if (!fgets(line, sizeof(line), f) ||
		    sscanf(line, "%llx %llx %llx", &start, &end, &flags) != 3)
			start = 0;
	fclose(f);
	return start;
}

/*
 * A buffer placed on each HBM stack (TRN_BO_STACK) lies in that stack of
 * BAR4: QEMU itself reads what the CPU wrote through the buffer's mapping
 * at the stack's first usable byte (stack n × the stride, past the
 * carve-out: on an idle part the first buffer of an empty stack starts
 * there), and the engines move its bytes both ways. On the real layout,
 * stacks 1 to 3 are where a stride of 64 GiB and a stack of 36 GiB differ.
 */
TEST_F(part, every_stack)
{
	static const uint64_t offs[] = { 0, 8, MIB / 2, MIB - 8 };
	uint64_t bar4, v, stride;
	unsigned int n;
	size_t i;

	/* A real part's stacks are 64 GiB apart, in QEMU mode one stack's size. */
	stride = variant->real ? 64ULL << 30 :
		 accel_u64((int)self->info.minor, "device/trn/hbm_stack_bytes");
	ASSERT_NE(~0ULL, stride);
	ASSERT_EQ(STACKS, self->info.hbm_stacks);
	bar4 = bar4_base((int)self->info.minor);
	ASSERT_NE(0, bar4);
	for (n = 0; n < STACKS; n++) {
		trn_bo_t *hbm, *bos[3];
		volatile uint8_t *cpu;
		size_t errors = 0;
		void *p;

		ASSERT_EQ(0, trn_bo_create(self->dev, MIB, TRN_PLACEMENT_HBM,
					   TRN_BO_STACK(n), 0, &hbm));
		ASSERT_EQ(0, trn_bo_map(hbm, &p));
		cpu = p;
		pattern(self->a, MIB, 40 + n);
		for (i = 0; i < MIB; i++)
			cpu[i] = self->a[i];
		__sync_synchronize();
		for (i = 0; i < ARRAY_SIZE(offs); i++) {
			ASSERT_EQ(0, phys_read_u64(bar4 + n * stride + CARVEOUT +
						   offs[i], &v));
			EXPECT_EQ(0, memcmp(&v, self->a + offs[i], 8))
				TH_LOG("stack %u, byte %llu: QEMU reads %#llx",
				       n, (unsigned long long)offs[i],
				       (unsigned long long)v);
		}

		bos[0] = hbm;
		bos[1] = self->host_a;
		bos[2] = self->host_b;
		memset(self->b, 0, MIB);
		trn_cmdbuf_reset(self->cb);
		ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_b),
					  trn_bo_va(hbm), MIB));
		EXPECT_EQ(0, run(self, bos, 3));
		EXPECT_EQ(0, memcmp(self->a, self->b, MIB)) TH_LOG("stack %u", n);

		pattern(self->a, MIB, 90 + n);
		trn_cmdbuf_reset(self->cb);
		ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(hbm),
					  trn_bo_va(self->host_a), MIB));
		EXPECT_EQ(0, run(self, bos, 3));
		for (i = 0; i < MIB; i++)
			errors += cpu[i] != self->a[i];
		EXPECT_EQ(0, errors) TH_LOG("stack %u", n);
		ASSERT_EQ(0, phys_read_u64(bar4 + n * stride + CARVEOUT +
					   MIB / 2, &v));
		EXPECT_EQ(0, memcmp(&v, self->a + MIB / 2, 8));
		trn_bo_free(hbm);
	}
}

/* Freed device memory is zero when it is handed out again. */
TEST_F(part, hbm_cleared)
{
	trn_bo_t *hbm, *bos[2];
	size_t i, nonzero = 0;

	ASSERT_EQ(0, trn_bo_create(self->dev, MIB, TRN_PLACEMENT_HBM, 0, 0,
				   &hbm));
	ASSERT_EQ(0, trn_cmd_fill(self->cb, trn_bo_va(hbm), 0xffffffff, MIB));
	bos[0] = hbm;
	EXPECT_EQ(0, run(self, bos, 1));
	trn_bo_free(hbm);

	ASSERT_EQ(0, trn_bo_create(self->dev, MIB, TRN_PLACEMENT_HBM, 0, 0,
				   &hbm));
	memset(self->a, 0xaa, MIB);
	trn_cmdbuf_reset(self->cb);
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_a),
				  trn_bo_va(hbm), MIB));
	bos[0] = hbm;
	bos[1] = self->host_a;
	EXPECT_EQ(0, run(self, bos, 2));
	for (i = 0; i < MIB; i++)
		nonzero += self->a[i] != 0;
	EXPECT_EQ(0, nonzero);
	trn_bo_free(hbm);
}

/* Rings of different cores run at once, each on its own UDMA queue. */
TEST_F(part, queues_in_parallel)
{
	trn_queue_t *qs[4];
	trn_cmdbuf_t *cbs[4];
	struct trn_fence f[4];
	trn_bo_t *bos[3];
	unsigned int i;

	pattern(self->a, 2 * MIB, 1);
	memset(self->b, 0, 2 * MIB);
	for (i = 0; i < 4; i++) {
		struct trn_job job = { 0 };

		ASSERT_EQ(0, trn_queue_create(self->dev, i * 2 + 1,
					      TRN_PRIORITY_NORMAL, &qs[i]));
		ASSERT_EQ(0, trn_cmdbuf_create(self->dev, 0, &cbs[i]));
		ASSERT_EQ(0, trn_cmd_copy(cbs[i],
					  trn_bo_va(self->host_b) + i * MIB / 2,
					  trn_bo_va(self->host_a) + i * MIB / 2,
					  MIB / 2));
		bos[0] = self->host_a;
		bos[1] = self->host_b;
		bos[2] = trn_cmdbuf_bo(cbs[i]);
		job.cmd_va = trn_cmdbuf_va(cbs[i]);
		job.cmd_size = (uint32_t)trn_cmdbuf_size(cbs[i]);
		job.bos = bos;
		job.bo_count = 3;
		ASSERT_EQ(0, trn_submit(qs[i], &job, &f[i]));
	}
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, trn_fence_wait(&f[i], trn_now_ns() + WAIT_NS));
		EXPECT_EQ(0, trn_fence_status(&f[i]));
	}
	EXPECT_EQ(0, memcmp(self->a, self->b, 2 * MIB));
	for (i = 0; i < 4; i++) {
		trn_cmdbuf_destroy(cbs[i]);
		trn_queue_destroy(qs[i]);
	}
}

/*
 * A job that runs past the timeout (a copy of 2^40 rows) is stopped by the
 * ring reset: -ETIMEDOUT, its context banned; a queue created afterwards
 * runs, on the same ring's UDMA queue.
 */
TEST_F(part, hang_is_reset)
{
	trn_bo_t *bos[1] = { self->host_a };
	struct trn_queue_status st;
	trn_queue_t *q2;
	uint32_t *w = (uint32_t *)self->a;
	int64_t start;

	ASSERT_EQ(0, trn_cmd_copy2d(self->cb, trn_bo_va(self->host_a), 0,
				    trn_bo_va(self->host_a) + 64, 0, 4,
				    1ULL << 40));
	start = trn_now_ns();
	EXPECT_EQ(-ETIMEDOUT, run(self, bos, 1));
	/* Stopped by the timeout, not before it. */
	EXPECT_LE((int64_t)self->info.job_timeout_ms * 1000000,
		  trn_now_ns() - start);
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(TRN_STATUS_TIMEOUT, st.status);
	EXPECT_TRUE(st.state & TRN_QUEUE_GUILTY);
	EXPECT_TRUE(st.state & TRN_QUEUE_BANNED);

	ASSERT_EQ(0, trn_queue_create(self->dev, 0, TRN_PRIORITY_NORMAL, &q2));
	trn_cmdbuf_reset(self->cb);
	w[0] = 0;
	ASSERT_EQ(0, trn_cmd_write32(self->cb, trn_bo_va(self->host_a), 99));
	EXPECT_EQ(0, run_on(self, q2, bos, 1));
	EXPECT_EQ(99, w[0]);
	trn_queue_destroy(q2);
}

/*
 * Semaphores order two queues of one core (the rings' work items run in
 * parallel): a job that waits for semaphore 7 to reach 2 does not run its
 * WRITE before a job on the other queue signalled it twice, after a COPY
 * whose data the waiter then copies on. A wait nobody satisfies is ended
 * by the timeout, like any hang, and the ring works afterwards.
 */
TEST_F(part, semaphores)
{
	trn_bo_t *bos[1] = { self->host_a };
	uint64_t va = trn_bo_va(self->host_a);
	uint32_t *w = (uint32_t *)self->a;
	struct trn_queue_status st;
	trn_cmdbuf_t *cb2;
	trn_queue_t *q1, *q2;
	trn_bo_t *all[2];
	struct trn_fence fw, fs;
	int64_t start;

	ASSERT_EQ(0, trn_queue_create(self->dev, 3, TRN_PRIORITY_NORMAL, &q1));
	ASSERT_EQ(0, trn_queue_create(self->dev, 3, TRN_PRIORITY_NORMAL, &q2));
	ASSERT_EQ(0, trn_cmdbuf_create(self->dev, 0, &cb2));
	memset(self->a, 0, 256);
	w[0] = 0x5eed;
	/* The waiter: wait for 2, copy what the signaller copied, mark. */
	ASSERT_EQ(0, trn_cmd_sem_wait(self->cb, 7, 2));
	ASSERT_EQ(0, trn_cmd_copy(self->cb, va + 64, va + 32, 4));
	ASSERT_EQ(0, trn_cmd_write32(self->cb, va + 68, 1));
	all[0] = trn_cmdbuf_bo(self->cb);
	all[1] = self->host_a;
	{
		struct trn_job job = {
			.cmd_va = trn_cmdbuf_va(self->cb),
			.cmd_size = (uint32_t)trn_cmdbuf_size(self->cb),
			.bos = all, .bo_count = 2,
		};

		ASSERT_EQ(0, trn_submit(q1, &job, &fw));
	}
	/* Looked at after the waiter had every chance to run. */
	usleep(200 * 1000);
	EXPECT_EQ(0, w[17]);
	EXPECT_EQ(0, w[16]);
	/* The signaller: copy, then signal by 1 twice. */
	ASSERT_EQ(0, trn_cmd_copy(cb2, va + 32, va, 4));
	ASSERT_EQ(0, trn_cmd_sem_signal(cb2, 7, 1));
	ASSERT_EQ(0, trn_cmd_sem_signal(cb2, 7, 1));
	all[0] = trn_cmdbuf_bo(cb2);
	{
		struct trn_job job = {
			.cmd_va = trn_cmdbuf_va(cb2),
			.cmd_size = (uint32_t)trn_cmdbuf_size(cb2),
			.bos = all, .bo_count = 2,
		};

		ASSERT_EQ(0, trn_submit(q2, &job, &fs));
	}
	EXPECT_EQ(0, trn_fence_wait(&fs, trn_now_ns() + WAIT_NS));
	EXPECT_EQ(0, trn_fence_wait(&fw, trn_now_ns() + WAIT_NS));
	EXPECT_EQ(0x5eed, w[16]);
	EXPECT_EQ(1, w[17]);

	/* Semaphore 8 never reaches 1: the timeout ends the wait. */
	trn_cmdbuf_reset(self->cb);
	ASSERT_EQ(0, trn_cmd_sem_wait(self->cb, 8, 1));
	start = trn_now_ns();
	EXPECT_EQ(-ETIMEDOUT, run_on(self, q1, bos, 1));
	EXPECT_LE((int64_t)self->info.job_timeout_ms * 1000000,
		  trn_now_ns() - start);
	ASSERT_EQ(0, trn_queue_status(q1, &st));
	EXPECT_EQ(TRN_STATUS_TIMEOUT, st.status);
	EXPECT_TRUE(st.state & TRN_QUEUE_GUILTY);
	trn_queue_destroy(q1);
	trn_queue_destroy(q2);
	/* The ring works again, through a queue made after the ban. */
	ASSERT_EQ(0, trn_queue_create(self->dev, 3, TRN_PRIORITY_NORMAL, &q1));
	trn_cmdbuf_reset(self->cb);
	ASSERT_EQ(0, trn_cmd_write32(self->cb, va + 72, 99));
	EXPECT_EQ(0, run_on(self, q1, bos, 1));
	EXPECT_EQ(99, w[18]);
	trn_queue_destroy(q1);
	trn_cmdbuf_destroy(cb2);
}

/* The first line of sysfs attribute @attr of accel node @minor, or "". */
static const char *accel_line(int minor, const char *attr, char *buf,
			      size_t size)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/%s", minor,
		 attr);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return buf;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/*
 * A DMA error (the model's one-shot knob) fails the job with
 * DEVICE_ERROR, -EIO; the ring's UDMA queue is reset and the next job on
 * the same queue runs.
 */
TEST_F(part, dma_error)
{
	trn_bo_t *bos[2] = { self->host_a, self->host_b };
	struct trn_queue_status st;

	pattern(self->a, 8192, 11);
	memset(self->b, 0, 8192);
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_b),
				  trn_bo_va(self->host_a), 8192));
	ASSERT_EQ(0, knob(variant->qom, "dma-error", "true"));
	EXPECT_EQ(-EIO, run(self, bos, 2));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(TRN_STATUS_DEVICE_ERROR, st.status);
	EXPECT_EQ(0, st.error_offset);
	EXPECT_EQ(0, run(self, bos, 2));
	EXPECT_EQ(0, memcmp(self->a, self->b, 8192));
	/* The device's own failure: it is degraded for a while. */
	{
		int minor = find_variant(variant);
		char line[128];

		ASSERT_LE(0, minor);
		EXPECT_STREQ("degraded", accel_line(minor, "health", line,
						    sizeof(line)));
		accel_line(minor, "health_reason", line, sizeof(line));
		EXPECT_EQ(0, strncmp(line, "device error ", 13))
			TH_LOG("health_reason: %s", line);
		accel_line(minor, "jobs_failed_by_status/device_error", line,
			   sizeof(line));
		EXPECT_STREQ("1", line);
	}
}

/*
 * An engine that stops making progress (the model's stuck-engine knob,
 * the engine of NeuronCore 7: SENG group 3, engine 1) is recovered by the
 * timeout: -ETIMEDOUT, and once the engine moves again a new queue of the
 * core runs.
 */
TEST_F(part, stuck_engine)
{
	trn_bo_t *bos[2] = { self->host_a, self->host_b };
	struct trn_queue_status st;
	trn_queue_t *q7, *again;

	pattern(self->a, 4096, 2);
	memset(self->b, 0, 4096);
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_b),
				  trn_bo_va(self->host_a), 4096));
	ASSERT_EQ(0, trn_queue_create(self->dev, 7, TRN_PRIORITY_NORMAL, &q7));
	ASSERT_EQ(0, knob(variant->qom, "stuck-engine", "97"));
	EXPECT_EQ(-ETIMEDOUT, run_on(self, q7, bos, 2));
	ASSERT_EQ(0, knob(variant->qom, "stuck-engine", "4294967295"));
	ASSERT_EQ(0, trn_queue_status(q7, &st));
	EXPECT_EQ(TRN_STATUS_TIMEOUT, st.status);
	EXPECT_EQ(0, self->b[0]);
	ASSERT_EQ(0, trn_queue_create(self->dev, 7, TRN_PRIORITY_NORMAL,
				      &again));
	EXPECT_EQ(0, run_on(self, again, bos, 2));
	EXPECT_EQ(0, memcmp(self->a, self->b, 4096));
	trn_queue_destroy(again);
	trn_queue_destroy(q7);
}

/*
 * The other context of wedged_engine_device_reset, in a child process (a
 * process has one DRM file per device: libtrnhal shares it): a copy on
 * NeuronCore 5 once @go says so, which must be abandoned by the device
 * reset without blame, then, once @go says again, a copy that works. The
 * exit status says which step failed (0: none).
 */
static int other_context(int minor, int go)
{
	trn_bo_t *src, *dst, *bos[3];
	struct trn_queue_status st;
	trn_device_t *dev;
	trn_cmdbuf_t *cb;
	struct trn_fence f;
	trn_queue_t *q;
	char c;
	void *p;

	if (trn_device_open((unsigned int)minor, &dev) ||
	    trn_queue_create(dev, 5, TRN_PRIORITY_NORMAL, &q) ||
	    trn_cmdbuf_create(dev, 0, &cb) ||
	    trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &src) ||
	    trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &dst) ||
	    trn_bo_map(src, &p) ||
	    trn_cmd_copy(cb, trn_bo_va(dst), trn_bo_va(src), 4096))
		return 10;
	pattern(p, 4096, 5);
	bos[0] = trn_cmdbuf_bo(cb);
	bos[1] = src;
	bos[2] = dst;
	{
		struct trn_job job = {
			.cmd_va = trn_cmdbuf_va(cb),
			.cmd_size = (uint32_t)trn_cmdbuf_size(cb),
			.bos = bos,
			.bo_count = 3,
		};

		if (read(go, &c, 1) != 1)
			return 11;
		/* The wait returns the job's status once it ended. */
		if (trn_submit(q, &job, &f))
			return 12;
		if (trn_fence_wait(&f, trn_now_ns() + WAIT_NS) != -ECANCELED)
			return 13;
		if (trn_queue_status(q, &st) || st.status != TRN_STATUS_ABORTED ||
		    st.state & (TRN_QUEUE_GUILTY | TRN_QUEUE_BANNED))
			return 14;
		if (read(go, &c, 1) != 1)
			return 15;
		if (trn_submit(q, &job, &f))
			return 16;
		if (trn_fence_wait(&f, trn_now_ns() + WAIT_NS))
			return 17;
	}
	if (trn_bo_map(dst, &p) || check_pattern(p, 4096, 5))
		return 18;
	return 0;
}

/* A number in the sysfs directory of accel node @minor; ~0 on error. */
static uint64_t accel_u64(int minor, const char *attr)
{
	char path[128];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/%s", minor,
		 attr);
	f = fopen(path, "r");
	if (!f)
		return ~0ULL;
	if (fscanf(f, "%llu", &v) != 1)
		v = ~0ULL;
	fclose(f);
	return v;
}

/*
 * A ring whose UDMA queue does not reset (the model's wedged-engine knob
 * on the engine of NeuronCore 6: SENG group 2, engine 1) takes the part
 * with it: the core resets the device, which clears the knob. The job that
 * timed out fails -ETIMEDOUT; a job of another context that was on the
 * engine of NeuronCore 5 at the time (stuck, but its queue resets) is
 * abandoned without blame, -ECANCELED; device_resets counts one; and then
 * the rings work again, NeuronCore 6's included.
 *
 * The other job starts 1.5 s after the hung one, more than the kernel
 * timer's slack at the job timeout, so the hung job's timeout fires first,
 * always, while the other job is on its engine.
 */
TEST_F(part, wedged_engine_device_reset)
{
	trn_bo_t *bos[2] = { self->host_a, self->host_b };
	trn_bo_t *all[3] = { trn_cmdbuf_bo(self->cb), self->host_a,
			     self->host_b };
	struct trn_job job = { .bos = all, .bo_count = 3 };
	struct trn_queue_status st;
	struct trn_fence f_hung;
	trn_queue_t *q6, *again;
	int minor = find_variant(variant), go[2], status, i;
	long long fw_resets0 = -1;
	uint64_t resets0;
	int64_t t0;
	pid_t pid;

	ASSERT_LE(0, minor);
	resets0 = accel_u64(minor, "device_resets");
	ASSERT_NE(~0ULL, resets0);
	if (variant->real) {
		fw_resets0 = knob_get(variant->qom, "fw-resets");
		ASSERT_LE(1, fw_resets0) TH_LOG("the probe reset the part through its firmware");
	}
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(go[1]);
		_exit(other_context(minor, go[0]));
	}
	close(go[0]);

	pattern(self->a, 4096, 3);
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_b),
				  trn_bo_va(self->host_a), 4096));
	job.cmd_va = trn_cmdbuf_va(self->cb);
	job.cmd_size = (uint32_t)trn_cmdbuf_size(self->cb);
	ASSERT_EQ(0, trn_queue_create(self->dev, 6, TRN_PRIORITY_NORMAL, &q6));
	ASSERT_EQ(0, knob(variant->qom, "wedged-engine", "65"));
	ASSERT_EQ(0, knob(variant->qom, "stuck-engine", "33"));
	t0 = trn_now_ns();
	ASSERT_EQ(0, trn_submit(q6, &job, &f_hung));
	while (trn_now_ns() - t0 < 1500LL * 1000 * 1000)
		usleep(10000);
	ASSERT_EQ(1, write(go[1], "g", 1));

	EXPECT_EQ(-ETIMEDOUT, trn_fence_wait(&f_hung, trn_now_ns() + WAIT_NS));
	ASSERT_EQ(0, knob(variant->qom, "stuck-engine", "4294967295"));
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the other context's step %d failed",
						 WEXITSTATUS(status));

	ASSERT_EQ(0, trn_queue_status(q6, &st));
	EXPECT_EQ(TRN_STATUS_TIMEOUT, st.status);
	EXPECT_TRUE(st.state & TRN_QUEUE_GUILTY);
	EXPECT_EQ(resets0 + 1, accel_u64(minor, "device_resets"));
	/* A real part's reset went through its firmware. */
	if (variant->real)
		EXPECT_EQ(fw_resets0 + 1, knob_get(variant->qom, "fw-resets"));
	EXPECT_EQ(0, accel_u64(minor, "wedged"));

	/*
	 * NeuronCores 6 and 0 work again, through new queues: the ban took
	 * every queue the context had (the fixture's, on NeuronCore 0, too).
	 */
	EXPECT_EQ(-ECANCELED, run(self, bos, 2));
	for (i = 0; i < 2; i++) {
		memset(self->b, 0, 4096);
		ASSERT_EQ(0, trn_queue_create(self->dev, i ? 0 : 6,
					      TRN_PRIORITY_NORMAL, &again));
		EXPECT_EQ(0, run_on(self, again, bos, 2));
		EXPECT_EQ(0, memcmp(self->a, self->b, 4096));
		trn_queue_destroy(again);
	}
	trn_queue_destroy(q6);
}

/* The PCI function (0000:bb:dd.f) behind accel node @minor. */
static int part_bdf(int minor, char *bdf, size_t size)
{
	char path[128], real[PATH_MAX];
	const char *base;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device", minor);
	if (!realpath(path, real))
		return -errno;
	base = strrchr(real, '/');
	if (!base)
		return -EINVAL;
	snprintf(bdf, size, "%s", base + 1);
	return 0;
}

/* Whether PCI function @bdf has bus mastering on (1, 0), or -errno. */
static int bus_master(const char *bdf)
{
	char path[128];
	uint16_t cmd;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", bdf);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, &cmd, sizeof(cmd), 4);	/* PCI_COMMAND */
	close(fd);
	if (n != sizeof(cmd))
		return -EIO;
	return cmd & 0x4 ? 1 : 0;		/* PCI_COMMAND_MASTER */
}

static bool all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* A copy on NeuronCore @core of the part at @minor: 0, or the failed step. */
static int copy_works(int minor, uint32_t core)
{
	trn_bo_t *src = NULL, *dst = NULL, *bos[3];
	trn_cmdbuf_t *cb = NULL;
	trn_queue_t *q = NULL;
	trn_device_t *dev;
	struct trn_fence f;
	void *ps, *pd;
	int step = 0;

	if (trn_device_open((unsigned int)minor, &dev))
		return 1;
	if (trn_queue_create(dev, core, TRN_PRIORITY_NORMAL, &q))
		step = 2;
	else if (trn_cmdbuf_create(dev, 0, &cb))
		step = 3;
	else if (trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &src) ||
		 trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &dst) ||
		 trn_bo_map(src, &ps) || trn_bo_map(dst, &pd))
		step = 4;
	else if (trn_cmd_copy(cb, trn_bo_va(dst), trn_bo_va(src), 4096))
		step = 5;
	if (!step) {
		struct trn_job job = {
			.cmd_va = trn_cmdbuf_va(cb),
			.cmd_size = (uint32_t)trn_cmdbuf_size(cb),
			.bos = bos,
			.bo_count = 3,
		};

		bos[0] = trn_cmdbuf_bo(cb);
		bos[1] = src;
		bos[2] = dst;
		pattern(ps, 4096, 11);
		if (trn_submit(q, &job, &f))
			step = 6;
		else if (trn_fence_wait(&f, trn_now_ns() + WAIT_NS))
			step = 7;
		else if (check_pattern(pd, 4096, 11))
			step = 8;
	}
	trn_bo_free(src);
	trn_bo_free(dst);
	trn_cmdbuf_destroy(cb);
	trn_queue_destroy(q);
	trn_device_close(dev);
	return step;
}

/*
 * A device reset that does not finish (the model's reset-stuck knob, the
 * engine of NeuronCore 6 wedged as above) leaves the part wedged: the hung
 * job and every later one fail -EIO, sysfs wedged reads 1, device_resets
 * does not count it, and the function's bus mastering is off, so that the
 * engine cannot reach the host memory trn_pci let go of when it released
 * the wedged ring. Unbinding and binding the part again, the knob cleared,
 * brings it back. The minor may change; the later tests find the part by
 * its identity. A real part's firmware is given 30 s by trn_pci to take
 * the request (QEMU mode's register, 10 s to finish): the real variant
 * takes that long.
 */
TEST_F(part, failed_device_reset_wedges)
{
	trn_bo_t *bos[2] = { self->host_a, self->host_b };
	trn_bo_t *all[3] = { trn_cmdbuf_bo(self->cb), self->host_a,
			     self->host_b };
	struct trn_job job = { .bos = all, .bo_count = 3 };
	int minor = find_variant(variant), step;
	trn_queue_t *q6, *other;
	struct trn_fence f_hung;
	uint64_t resets0;
	char bdf[64];

	ASSERT_LE(0, minor);
	ASSERT_EQ(0, part_bdf(minor, bdf, sizeof(bdf)));
	ASSERT_EQ(1, bus_master(bdf));
	resets0 = accel_u64(minor, "device_resets");
	ASSERT_NE(~0ULL, resets0);
	pattern(self->a, 4096, 4);
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_b),
				  trn_bo_va(self->host_a), 4096));
	job.cmd_va = trn_cmdbuf_va(self->cb);
	job.cmd_size = (uint32_t)trn_cmdbuf_size(self->cb);
	ASSERT_EQ(0, trn_queue_create(self->dev, 6, TRN_PRIORITY_NORMAL, &q6));
	ASSERT_EQ(0, knob(variant->qom, "reset-stuck", "true"));
	ASSERT_EQ(0, knob(variant->qom, "wedged-engine", "65"));
	ASSERT_EQ(0, trn_submit(q6, &job, &f_hung));
	/* The job timeout, then the reset's own 10 s or 30 s. */
	EXPECT_EQ(-EIO, trn_fence_wait(&f_hung, trn_now_ns() + WAIT_NS +
				       (variant->real ? 60LL * 1000 * 1000 * 1000 : 0)));
	EXPECT_EQ(1, accel_u64(minor, "wedged"));
	EXPECT_EQ(resets0, accel_u64(minor, "device_resets"));
	EXPECT_EQ(0, bus_master(bdf));
	{
		char line[128];

		EXPECT_STREQ("failed", accel_line(minor, "health", line,
						  sizeof(line)));
	}
	/* Later jobs fail too, on any ring, and nothing runs them. */
	ASSERT_EQ(0, trn_queue_create(self->dev, 1, TRN_PRIORITY_NORMAL,
				      &other));
	memset(self->b, 0, 4096);
	EXPECT_EQ(-EIO, run_on(self, other, bos, 2));
	EXPECT_TRUE(all_zero(self->b, 4096));
	trn_queue_destroy(other);
	trn_queue_destroy(q6);

	ASSERT_EQ(0, knob(variant->qom, "reset-stuck", "false"));
	ASSERT_EQ(0, write_str("/sys/bus/pci/drivers/trn_pci/unbind", bdf));
	ASSERT_EQ(0, write_str("/sys/bus/pci/drivers/trn_pci/bind", bdf));
	EXPECT_EQ(1, bus_master(bdf));
	minor = find_variant(variant);
	ASSERT_LE(0, minor);
	EXPECT_EQ(0, accel_u64(minor, "wedged"));
	step = copy_works(minor, 6);
	EXPECT_EQ(0, step) TH_LOG("step %d of the copy on the rebound part failed",
				  step);
}

/*
 * A real part's firmware that misses a reset request (the model's fw-deaf
 * knob: it ignores the next doorbell, the request stays untaken) gets it
 * again: trn_pci sends it anew after 10 s, and the bind whose probe resets
 * the part succeeds, with one firmware reset done and the knob used up.
 * QEMU mode resets through a register, with no firmware to miss it.
 */
TEST_F(part, firmware_request_sent_again)
{
	int minor = find_variant(variant), step;
	long long fw_resets0;
	char bdf[64];

	if (!variant->real)
		SKIP(return, "QEMU mode resets through a register: no firmware request to miss");
	ASSERT_LE(0, minor);
	ASSERT_EQ(0, part_bdf(minor, bdf, sizeof(bdf)));
	fw_resets0 = knob_get(variant->qom, "fw-resets");
	ASSERT_LE(1, fw_resets0);
	ASSERT_EQ(0, write_str("/sys/bus/pci/drivers/trn_pci/unbind", bdf));
	ASSERT_EQ(0, knob(variant->qom, "fw-deaf", "1"));
	EXPECT_EQ(0, write_str("/sys/bus/pci/drivers/trn_pci/bind", bdf));
	EXPECT_EQ(0, knob_get(variant->qom, "fw-deaf"));
	EXPECT_EQ(fw_resets0 + 1, knob_get(variant->qom, "fw-resets"));
	ASSERT_EQ(0, knob(variant->qom, "fw-deaf", "0"));
	minor = find_variant(variant);
	ASSERT_LE(0, minor);
	step = copy_works(minor, 0);
	EXPECT_EQ(0, step) TH_LOG("step %d of the copy on the rebound part failed",
				  step);
}

/*
 * A part that stops answering while nothing runs on it (the model's
 * "removed" knob: every read returns all ones, as after a surprise
 * removal) is found by trn_pci's heartbeat, not by a tenant's job: within
 * a few heartbeats (three silent ones, 1 s apart) the device's health is
 * "failed", reason "the device stopped answering", and a job fails at once
 * with DEVICE_ERROR, writing nothing. The knob cleared and the part bound
 * again (the probe resets it), it is "ok" and works.
 */
TEST_F(part, idle_part_that_stops_answering_fails)
{
	trn_bo_t *bos[2] = { self->host_a, self->host_b };
	int minor = find_variant(variant), i, step;
	struct trn_queue_status st;
	char bdf[64], line[128];

	ASSERT_LE(0, minor);
	ASSERT_EQ(0, part_bdf(minor, bdf, sizeof(bdf)));
	EXPECT_STRNE("failed", accel_line(minor, "health", line,
					  sizeof(line)));
	pattern(self->a, 4096, 5);
	ASSERT_EQ(0, trn_cmd_copy(self->cb, trn_bo_va(self->host_b),
				  trn_bo_va(self->host_a), 4096));
	ASSERT_EQ(0, knob(variant->qom, "removed", "true"));
	for (i = 0; i < 200; i++) {
		if (!strcmp(accel_line(minor, "health", line, sizeof(line)),
			    "failed"))
			break;
		usleep(100000);
	}
	EXPECT_STREQ("failed", line) TH_LOG("health after %d ms", i * 100);
	EXPECT_STREQ("the device stopped answering",
		     accel_line(minor, "health_reason", line, sizeof(line)));
	memset(self->b, 0, 4096);
	EXPECT_EQ(-EIO, run(self, bos, 2));
	ASSERT_EQ(0, trn_queue_status(self->q, &st));
	EXPECT_EQ(TRN_STATUS_DEVICE_ERROR, st.status);
	EXPECT_TRUE(all_zero(self->b, 4096));

	ASSERT_EQ(0, knob(variant->qom, "removed", "false"));
	ASSERT_EQ(0, write_str("/sys/bus/pci/drivers/trn_pci/unbind", bdf));
	ASSERT_EQ(0, write_str("/sys/bus/pci/drivers/trn_pci/bind", bdf));
	minor = find_variant(variant);
	ASSERT_LE(0, minor);
	EXPECT_STREQ("ok", accel_line(minor, "health", line, sizeof(line)));
	step = copy_works(minor, 0);
	EXPECT_EQ(0, step) TH_LOG("step %d of the copy on the rebound part failed",
				  step);
}

/*
 * What another driver would leave in the part: with it unbound (@bdf),
 * memory decoding on through sysfs, 0x5a in every byte trn may allocate
 * (each stack after its carve-out), written through sysfs resource4 and
 * read back there. Sets *@stack_len; 0, or the step that failed.
 */
static int fill_unbound_hbm(const char *bdf, size_t *stack_len)
{
	char path[128], enable[128];
	int fd, step = 0;
	struct stat st;
	uint8_t *bar;
	size_t i;

	snprintf(enable, sizeof(enable), "/sys/bus/pci/devices/%s/enable", bdf);
	if (write_str(enable, "1"))
		return 1;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource4", bdf);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		step = 2;
		goto out;
	}
	*stack_len = (size_t)st.st_size / STACKS;
	if (*stack_len <= CARVEOUT) {
		step = 3;
		goto out;
	}
	bar = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	if (bar == MAP_FAILED) {
		step = 4;
		goto out;
	}
	for (i = 0; i < STACKS; i++)
		memset(bar + i * *stack_len + CARVEOUT, 0x5a,
		       *stack_len - CARVEOUT);
	/* It landed: the first and last byte of every stack's part. */
	for (i = 0; i < STACKS && !step; i++)
		if (bar[i * *stack_len + CARVEOUT] != 0x5a ||
		    bar[(i + 1) * *stack_len - 1] != 0x5a)
			step = 5;
	munmap(bar, (size_t)st.st_size);
out:
	if (fd >= 0)
		close(fd);
	if (write_str(enable, "0") && !step)
		step = 6;
	return step;
}

/*
 * Device memory reads as zero when it is first handed out, whatever the
 * part held before trn_pci bound it: another driver's tenants' data (here
 * fill_unbound_hbm()'s pattern) and the probe's own UDMA self-test page.
 * One buffer of all the device memory, read through its mapping. The part
 * is bound again whatever failed, for the tests after this one.
 */
TEST(hbm_left_by_another_driver_reads_zero)
{
	size_t stack_len = 0, i, nonzero = 0, first = SIZE_MAX;
	struct trn_device_info info;
	int minor = find_trn2(), step;
	trn_device_t *dev;
	trn_bo_t *all;
	char bdf[64];
	void *p;

	ASSERT_LE(0, minor) TH_LOG("no Trn2 part is bound to trn_pci");
	ASSERT_EQ(0, part_bdf(minor, bdf, sizeof(bdf)));
	ASSERT_EQ(0, write_str("/sys/bus/pci/drivers/trn_pci/unbind", bdf));
	step = fill_unbound_hbm(bdf, &stack_len);
	ASSERT_EQ(0, write_str("/sys/bus/pci/drivers/trn_pci/bind", bdf));
	ASSERT_EQ(0, step) TH_LOG("step %d of filling the unbound part failed",
				  step);

	minor = find_trn2();
	ASSERT_LE(0, minor);
	ASSERT_EQ(0, trn_device_open((unsigned int)minor, &dev));
	ASSERT_EQ(0, trn_device_info(dev, &info));
	ASSERT_EQ(STACKS * (stack_len - CARVEOUT), info.hbm_size);
	ASSERT_EQ(0, trn_bo_create(dev, info.hbm_size, TRN_PLACEMENT_HBM, 0, 0,
				   &all));
	ASSERT_EQ(0, trn_bo_map(all, &p));
	for (i = 0; i < info.hbm_size; i++) {
		if (!((const uint8_t *)p)[i])
			continue;
		if (first == SIZE_MAX)
			first = i;
		nonzero++;
	}
	EXPECT_EQ(0, nonzero) TH_LOG("%zu bytes of %llu are not zero, the first at %zu",
				     nonzero, (unsigned long long)info.hbm_size,
				     first);
	trn_bo_free(all);
	trn_device_close(dev);
}

/*
 * Whether the root port above PCI device @sysdev has pciehp: a pcie004
 * service device in /sys/bus/pci_express (PCIE_PORT_SERVICE_HP).
 */
static int has_hotplug(const char *sysdev)
{
	char link[PATH_MAX], path[PATH_MAX + 64];
	const char *port;
	char *slash;

	/* /sys/devices/pci0000:00/0000:00:02.0/0000:02:00.0 */
	if (!realpath(sysdev, link))
		return -1;
	slash = strrchr(link, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	port = strrchr(link, '/');
	if (!port)
		return -1;
	snprintf(path, sizeof(path), "/sys/bus/pci_express/devices/%s:pcie004",
		 port + 1);
	return access(path, F_OK) ? -1 : 0;
}

/* Copies until the part goes; what each job ended with. */
struct load {
	trn_device_t *dev;
	trn_queue_t *q;
	trn_cmdbuf_t *cb;
	trn_bo_t *src, *dst, *user, *wc;
	uint8_t *s, *d, *u, *w;
	volatile int stop;
	unsigned int ok, gone, wrong, other;
	int last;
};

static void *load_run(void *arg)
{
	struct load *l = arg;
	trn_bo_t *bos[3] = { l->src, l->dst, trn_cmdbuf_bo(l->cb) };
	struct trn_job job = {
		.cmd_va = trn_cmdbuf_va(l->cb),
		.cmd_size = (uint32_t)trn_cmdbuf_size(l->cb),
		.bos = bos,
		.bo_count = 3,
	};
	struct trn_fence f;
	int ret;

	while (!l->stop) {
		memset(l->d, 0, 256 * 1024);
		ret = trn_submit(l->q, &job, &f);
		if (!ret)
			ret = trn_fence_wait(&f, trn_now_ns() + WAIT_NS);
		if (!ret)
			ret = trn_fence_status(&f);
		l->last = ret;
		if (!ret) {
			l->ok++;
			l->wrong += memcmp(l->s, l->d, 256 * 1024) != 0;
			continue;
		}
		/*
		 * Until the OS removes the part (pciehp: 5 s after the
		 * button QEMU presses), a job on the dead part is ended by
		 * the timeout; after, by the removal.
		 */
		if (ret == -ENODEV || ret == -ETIMEDOUT)
			l->gone++;
		else
			l->other++;
		break;
	}
	return NULL;
}

/*
 * Surprise removal of the Trn3 (QEMU's part trn1) under load: the model
 * stops answering (knob "removed"), then QEMU unplugs it (device_del).
 * Every job that finished before has the right bytes, the one running
 * fails (-ETIMEDOUT while the part is dead but not yet removed, else
 * -ENODEV), nothing hangs, and afterwards the device's handle and its
 * queue answer -ENODEV, while the host buffers the files still hold keep
 * their contents (the DMA side is gone: with DMA-API debugging, pci-debug's
 * kernel log says so if not).
 * With TRN_PCI_UNPLUG_BY=sysfs the OS removes the dead part through its
 * sysfs "remove" instead: the driver sees the same vanished part, without
 * pciehp (whose own lockdep report on the debug kernel has no trn frames).
 * The part does not come back; the other tests use the Trn2. A fixture of
 * its own, defined last, so that it runs last.
 */
FIXTURE(unplug)
{
	int unused;
};

FIXTURE_SETUP(unplug)
{
	const char *why = getenv("TRN_PCI_NO_UNPLUG");

	if (why && *why)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(unplug)
{
}

TEST_F(unplug, surprise_removal_under_load)
{
	const char *by = getenv("TRN_PCI_UNPLUG_BY");
	struct trn_device_info info;
	bool by_sysfs;
	char sysdev[128];
	struct load l = { 0 };
	pthread_t t;
	struct stat sb;
	void *p;
	int minor, i;

	minor = find_part(TRN_GEN_TRN3, 0x7564);
	ASSERT_LE(0, minor) TH_LOG("no Trn3 (1d0f:7564) bound to trn_pci");
	snprintf(sysdev, sizeof(sysdev), "/sys/class/accel/accel%d/device",
		 minor);
	by_sysfs = by && !strcmp(by, "sysfs");
	/* pciehp must drive the part's root port, or nothing is unplugged. */
	if (!by_sysfs) {
		ASSERT_EQ(0, has_hotplug(sysdev))
			TH_LOG("the part's root port has no PCIe hot plug service");
	}
	ASSERT_EQ(0, trn_device_open((unsigned int)minor, &l.dev));
	ASSERT_EQ(0, trn_queue_create(l.dev, 2, TRN_PRIORITY_NORMAL, &l.q));
	ASSERT_EQ(0, trn_cmdbuf_create(l.dev, 0, &l.cb));
	ASSERT_EQ(0, trn_bo_create(l.dev, 256 * 1024, TRN_PLACEMENT_HOST, 0, 0,
				   &l.src));
	ASSERT_EQ(0, trn_bo_create(l.dev, 256 * 1024, TRN_PLACEMENT_HOST, 0, 0,
				   &l.dst));
	ASSERT_EQ(0, trn_bo_map(l.src, &p));
	l.s = p;
	ASSERT_EQ(0, trn_bo_map(l.dst, &p));
	l.d = p;
	pattern(l.s, 256 * 1024, 42);
	/* Held across the removal: user memory, write-combined host memory. */
	l.u = aligned_alloc(4096, 64 * 1024);
	ASSERT_NE(NULL, l.u);
	pattern(l.u, 64 * 1024, 7);
	ASSERT_EQ(0, trn_bo_userptr(l.dev, l.u, 64 * 1024, 0, &l.user));
	ASSERT_EQ(0, trn_bo_create(l.dev, 64 * 1024, TRN_PLACEMENT_HOST,
				   TRN_BO_HOST_WC, 0, &l.wc));
	ASSERT_EQ(0, trn_bo_map(l.wc, &p));
	l.w = p;
	pattern(l.w, 64 * 1024, 9);
	ASSERT_EQ(0, trn_cmd_copy(l.cb, trn_bo_va(l.dst), trn_bo_va(l.src),
				  256 * 1024));
	ASSERT_EQ(0, pthread_create(&t, NULL, load_run, &l));
	/* Some jobs first, whatever the machine's speed. */
	for (i = 0; i < 2000 && l.ok < 5; i++)
		usleep(10000);
	EXPECT_LE(5, l.ok);
	ASSERT_EQ(0, knob("trn1", "removed", "true"));
	if (by_sysfs) {
		char rm[160];

		snprintf(rm, sizeof(rm), "%s/remove", sysdev);
		ASSERT_EQ(0, write_str(rm, "1"));
	} else {
		ASSERT_EQ(0, qmp("{\"execute\": \"device_del\", "
				 "\"arguments\": {\"id\": \"trn1\"}}"));
	}
	/* pciehp takes 5 s from the attention button to removing it. */
	for (i = 0; i < 600 && stat(sysdev, &sb) == 0; i++)
		usleep(100000);
	EXPECT_NE(0, stat(sysdev, &sb)) TH_LOG("the part is still there");
	l.stop = 1;
	pthread_join(t, NULL);
	EXPECT_EQ(0, l.wrong);
	EXPECT_EQ(0, l.other) TH_LOG("a job ended with %d", l.last);
	EXPECT_EQ(1, l.gone);
	/* Host memory outlives the part, contents and all. */
	EXPECT_EQ(0, check_pattern(l.s, 256 * 1024, 42));
	EXPECT_EQ(0, check_pattern(l.u, 64 * 1024, 7));
	EXPECT_EQ(0, check_pattern(l.w, 64 * 1024, 9));
	EXPECT_EQ(-ENODEV, trn_device_info(l.dev, &info));
	{
		trn_bo_t *bos[1] = { trn_cmdbuf_bo(l.cb) };
		struct trn_job job = {
			.cmd_va = trn_cmdbuf_va(l.cb),
			.cmd_size = (uint32_t)trn_cmdbuf_size(l.cb),
			.bos = bos,
			.bo_count = 1,
		};
		struct trn_fence f;

		EXPECT_EQ(-ENODEV, trn_submit(l.q, &job, &f));
	}
	trn_bo_free(l.src);
	trn_bo_free(l.dst);
	trn_bo_free(l.user);
	trn_bo_free(l.wc);
	free(l.u);
	trn_cmdbuf_destroy(l.cb);
	trn_queue_destroy(l.q);
	trn_device_close(l.dev);
}

TEST_HARNESS_MAIN
