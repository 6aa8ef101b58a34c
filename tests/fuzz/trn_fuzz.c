// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * The engine of the trn ioctl fuzzer (see trn_fuzz.h and
 * Documentation/fuzzing.md).
 *
 * Every worker thread owns a PRNG stream seeded from (seed, stream index),
 * a small pool of open files and its own argument buffers, so that what a
 * stream does depends only on the seed and on the answers of the kernel:
 * one thread replaying one stream repeats the same calls. Each iteration
 * picks one action:
 *
 *  - trn:    the trn ioctls with a structure-aware generator each, mostly
 *            valid arguments with a few mutations, checked against a model
 *            of the documented answer (uapi.md, memory.md);
 *  - driver: random ioctl numbers in the driver range (and random types),
 *            random direction and size bits, random argument bytes;
 *  - core:   a safe subset of the core DRM ioctls (version, caps, syncobj,
 *            GEM and PRIME handles) with random handles, lengths, pointers;
 *  - files:  open, close, dup, fdinfo, poll and mmap (of buffers, too).
 *
 * The engine remembers every handle a file was given (GEM and syncobj) and
 * what it knows of each buffer, so that the answers about them can be
 * checked exactly; a file for which a handle may have been created behind
 * its back (random bytes that happened to make a buffer) is no longer
 * checked exactly. It also remembers the file's queues, what may still be
 * charged to the file without a handle (buffers freed later than their
 * handle is closed), and enough about its jobs and fdinfo's ban count to
 * tell when a queue may, and when it must, refuse jobs as banned.
 *
 * With device churn one more thread creates and deletes simulated devices
 * 900..909, which the workers open and use while they come and go.
 *
 * The stable device is simulated device &trn_fuzz_opts.device_id, or with
 * &trn_fuzz_opts.part a part bound to trn_pci: the same calls and checks,
 * against what that device's info query answers (its capability bits, its
 * memory), and no churn.
 */
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <time.h>

#include "trn_test.h"
#include "trn_fuzz.h"

#define NR_FILES	8	/* descriptors per thread */
#define NR_SYNCOBJS	16	/* syncobj handles remembered per file */
#define NR_BOS		16	/* buffers remembered per file */
#define NR_QUEUES	8	/* queues remembered per file */
#define CMD_BO_SIZE	(64u << 10)	/* a file's buffer of command streams */
#define CMD_SLOT	4096	/* one stream; the upper half is data */
#define CMD_SLOTS	(CMD_BO_SIZE / 2 / CMD_SLOT)
#define ARG_SIZE	16384	/* _IOC_SIZE() is 14 bits */
#define BIG_SIZE	65536	/* handle and point arrays */
#define UP_PAGES	8	/* writable userptr pages, then none, then ro */
#define MAX_WAIT_NS	2000000	/* syncobj waits end within 2 ms */
#define MAX_HOST_BO	(256u << 10)	/* host buffers stay small */

/* Models: what a call must return. 0 and -errno are exact. */
#define MODEL_ANY	1	/* any expected errno */
#define MODEL_RESOURCE	2	/* 0, or out of memory or quota */

#define INFO_V1_SIZE	56
#define MEMORY_V1_SIZE	64

/* Addresses that must fault: the kernel half, non-canonical. */
#define KERNEL_ADDR	0xffff800000000000ull
#define KERNEL_TEXT	0xffffffff81000000ull
#define NONCANON_ADDR	0x8000000000000000ull

/* What the engine knows about one GEM handle of a file. */
struct fuzz_bo {
	uint32_t handle;
	uint32_t placement;	/* 0: not known (imported) */
	uint32_t flags;		/* DRM_TRN_BO_* it was created with */
	bool created;		/* created by this file: charged to it */
	bool written;		/* the CPU wrote to it */
	bool kernel_owned;	/* a queue's status page: read-only, kernel's */
	bool listed;		/* a job the kernel accepted may list it */
	bool exported;		/* a dma-buf of it was made */
	bool maybe_charged;	/* an import that may be charged to this file */
	bool dmabuf;		/* the thread's newest dma-buf is of it */
	uint64_t size;		/* bytes, 0 if not known */
	uint64_t va;		/* 0 if not known */
	uint64_t mmap_offset;	/* from BO_INFO, 0 if not known or none */
};

/* Buffers, device memory and pinned bytes, as DRM_TRN_QUERY_MEMORY counts. */
struct fuzz_charges {
	uint64_t bos, hbm, pinned;
};

/* One open DRM file, shared by the descriptors dup()ed from it. */
struct fuzz_dfile {
	unsigned int refs;	/* descriptors; 0: free */
	unsigned int id;	/* simulated device it was opened on */
	int mode;		/* O_RDONLY, O_WRONLY or O_RDWR */
	bool stable;		/* on the stable device: answers are checked */
	bool exact;		/* every GEM handle is in @bos */
	unsigned int nr_syncobjs;
	uint32_t syncobjs[NR_SYNCOBJS];
	unsigned int nr_bos;
	struct fuzz_bo bos[NR_BOS];
	/*
	 * Charges that may remain though the file holds no handle any more:
	 * buffers it created (or may have been charged for) that a job, a
	 * dma-buf, a mapping or another file may still hold, and status pages
	 * of destroyed queues whose jobs may not be freed yet. A buffer stays
	 * charged until it is freed, which the engine cannot see: only ever
	 * grows. @charge_unbounded: an import of unknown size may be charged.
	 */
	struct fuzz_charges linger;
	bool charge_unbounded;
	/*
	 * A buffer it created whose handle it closed while the thread's
	 * newest dma-buf (&fuzz_thread.dmabuf_fd) is of it: that holds it,
	 * so it is still charged, for certain, until the dma-buf is closed.
	 */
	struct fuzz_charges held;
	uint64_t gen;		/* which opening of the slot this is */
	/* Execution: the file's queues and its command buffer. */
	unsigned int nr_queues;
	struct fuzz_queue {
		uint32_t id;
		uint32_t syncobj;
		uint32_t status_handle;	/* 0: closed by the file already */
		uint64_t submitted;	/* UINT64_MAX: not known */
		uint64_t completed;	/* highest completed_seqno seen */
		/* Jobs whose MMU fault, if they made one, is counted. */
		uint64_t settled;
		uint64_t seq;		/* creation order within the file */
		/*
		 * The file's settled jobs when the queue was last seen not
		 * banned (created, took jobs, or QUEUE_STATUS said so): any
		 * ban that bans it comes later.
		 */
		uint64_t ok_settled;
		uint64_t ban_base;	/* the file's @ban_base at creation */
		bool banned;		/* seen refusing jobs, or BANNED */
		bool status_listed;	/* a job may hold its status buffer */
		/* fdinfo trn-bans just before and after it was created. */
		bool bans_known;
		uint64_t bans_lo, bans_hi;
	} queues[NR_QUEUES];
	/*
	 * Bans (Documentation/fuzzing.md): jobs the kernel accepted, settled
	 * jobs of queues no longer remembered, creation counter, and the
	 * largest @ok_settled of a queue seen banned (or older than one).
	 */
	uint64_t jobs;
	uint64_t settled_gone;
	uint64_t queue_seq;
	uint64_t ban_base;
	uint64_t bans_read_jobs;	/* @jobs when fdinfo was last read */
	uint32_t cmd_handle;	/* 0: none yet */
	uint64_t cmd_va;
	unsigned char *cmd_map;	/* NULL: not mapped (write-only file) */
};

struct fuzz_file {
	int fd;			/* -1: free slot */
	struct fuzz_dfile *df;
};

enum target_kind {
	T_FILE,		/* one of the thread's device files */
	T_BADF,		/* a descriptor that is not open */
	T_NOTDRM,	/* /dev/null */
};

struct target {
	enum target_kind kind;
	int fd;
	struct fuzz_dfile *df;	/* T_FILE only */
};

/* A user pointer handed to the kernel and how many bytes it may write. */
struct fuzz_ptr {
	uint64_t addr;
	size_t writable;
	const char *name;
};

enum arg_kind {
	A_NORMAL,
	A_NULL,
	A_NONE,		/* PROT_NONE page */
	A_RO,		/* read-only page holding a valid query */
	A_STRADDLE,	/* starts before a PROT_NONE page, ends in it */
};

static const char *const arg_kind_names[] = {
	"arg", "arg=NULL", "arg=prot-none", "arg=read-only", "arg=straddle",
};

struct fuzz_ctx;

struct fuzz_thread {
	struct fuzz_ctx *ctx;
	pthread_t thread;
	unsigned int stream;
	uint64_t rng;
	uint64_t iter;
	uint64_t limit;
	bool started;
	struct fuzz_file files[NR_FILES];
	struct fuzz_dfile dfiles[NR_FILES];
	unsigned char *page;	/* 2 writable pages, then a PROT_NONE page */
	unsigned char *arg;	/* ARG_SIZE bytes, then a PROT_NONE page */
	unsigned char *big;	/* BIG_SIZE bytes */
	unsigned char *up;	/* UP_PAGES writable, one none, one read-only */
	int sync_fd;		/* last exported syncobj, -1 if none */
	int dmabuf_fd;		/* last exported buffer, -1 if none */
	struct fuzz_dfile *dmabuf_df;	/* the file it was exported from */
	uint64_t dmabuf_gen;	/* and which opening of it */
	uint64_t next_gen;
	bool submit_call;	/* the call in flight is a TRN_SUBMIT */
	char call[TRN_FUZZ_CALL_LEN];
	struct trn_fuzz_stats st;
};

struct fuzz_ctx {
	const struct trn_fuzz_opts *opts;
	struct trn_fuzz_stats *st;
	size_t page_size;
	unsigned int stable_minor;
	struct drm_trn_device_info ref;
	size_t ref_name_len, ref_date_len, ref_desc_len;
	int null_fd;
	unsigned char *ro;	/* read-only page holding a valid query */
	unsigned char *none;	/* PROT_NONE page */
	unsigned char *scratch;	/* where the read-only query's answer goes */
	struct timespec deadline;
	bool has_deadline;
	int stop;		/* set once, read with stopping() */
	pthread_mutex_t lock;	/* protects st->failures and the output */
	unsigned int nthreads;
	struct fuzz_thread *threads;
	/* device churn */
	pthread_t churner;
	bool churn_running;
	uint64_t churn_rng;
	bool churn_present[TRN_FUZZ_CHURN_LAST - TRN_FUZZ_CHURN_FIRST + 1];
};

static const char *const action_names[TRN_FUZZ_NR_ACTIONS] = {
	[TRN_FUZZ_TRN] = "trn",
	[TRN_FUZZ_DRIVER] = "driver",
	[TRN_FUZZ_CORE] = "core",
	[TRN_FUZZ_FILES] = "files",
};

/* Relative weight of each action when several are enabled. */
static const unsigned int action_weight[TRN_FUZZ_NR_ACTIONS] = {
	[TRN_FUZZ_TRN] = 5,
	[TRN_FUZZ_DRIVER] = 2,
	[TRN_FUZZ_CORE] = 3,
	[TRN_FUZZ_FILES] = 2,
};

/* ---- PRNG: xorshift64* per stream, seeded through splitmix64 ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t stream_seed(uint64_t seed, uint64_t stream)
{
	uint64_t x = seed, s;

	splitmix64(&x);
	x ^= stream * 0xd1342543de82ef95ull;
	s = splitmix64(&x);
	return s ? s : 1;
}

static uint64_t xorshift64s(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd64(struct fuzz_thread *t)
{
	return xorshift64s(&t->rng);
}

static uint32_t rnd32(struct fuzz_thread *t)
{
	return (uint32_t)(rnd64(t) >> 32);
}

/* Uniform in [0, n). */
static uint32_t below(struct fuzz_thread *t, uint32_t n)
{
	return (uint32_t)(((uint64_t)rnd32(t) * n) >> 32);
}

static bool one_in(struct fuzz_thread *t, uint32_t n)
{
	return below(t, n) == 0;
}

/* A 32-bit value biased towards the edges. */
static uint32_t rnd_u32(struct fuzz_thread *t)
{
	switch (below(t, 7)) {
	case 0:
		return 0;
	case 1:
		return 1u << below(t, 32);
	case 2:
		return below(t, 16);
	case 3:
		return 0xffffffffu - below(t, 4);
	case 4:
		return 0x80000000u;
	case 5:
		return 0x7fffffffu;
	default:
		return rnd32(t);
	}
}

/* Mostly zero: a flags or padding field that a mutation may set. */
static uint32_t rnd_bits(struct fuzz_thread *t)
{
	switch (below(t, 4)) {
	case 0:
		return 1u << below(t, 32);
	case 1:
		return rnd32(t);
	case 2:
		return 0x80000000u;
	default:
		return 1u << below(t, 4);
	}
}

/* ---- output ---- */

static const char *errname(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	return name ? name : "E?";
}

static void trace_call(struct fuzz_thread *t, int ret)
{
	struct fuzz_ctx *ctx = t->ctx;

	if (t->iter < ctx->opts->trace_from)
		return;
	pthread_mutex_lock(&ctx->lock);
	fprintf(ctx->opts->out, "# [%u:%" PRIu64 "] %s = %s\n", t->stream,
		t->iter, t->call, ret < 0 ? errname(-ret) : "0");
	pthread_mutex_unlock(&ctx->lock);
}

/* The option of trn-fuzz that names the stable device, or "". */
static const char *stable_device_arg(const struct trn_fuzz_opts *o,
				     char *buf, size_t size)
{
	if (o->part >= 0)
		snprintf(buf, size, " --part %d", o->part);
	else if (o->device_id)
		snprintf(buf, size, " --device %u", o->device_id);
	else
		buf[0] = '\0';
	return buf;
}

static void print_replay(struct fuzz_ctx *ctx, unsigned int stream,
			 uint64_t iteration)
{
	const struct trn_fuzz_opts *o = ctx->opts;
	char acts[64], dev[32];

	fprintf(o->out,
		"# trn-fuzz: replay: build/tests/fuzz/trn-fuzz --seed %" PRIu64
		" --actions %s --threads 1 --stream %u --iterations %" PRIu64
		" --trace %" PRIu64 "%s%s\n",
		o->seed, trn_fuzz_actions_str(o->actions, acts, sizeof(acts)),
		stream, iteration + 1, iteration > 20 ? iteration - 20 : 0,
		o->device_churn ? " --device-churn" : "",
		stable_device_arg(o, dev, sizeof(dev)));
}

static void __attribute__((format(printf, 3, 4)))
fail(struct fuzz_thread *t, int err, const char *fmt, ...)
{
	struct fuzz_ctx *ctx = t->ctx;
	struct trn_fuzz_stats *st = ctx->st;
	struct trn_fuzz_failure *f;
	char why[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);

	pthread_mutex_lock(&ctx->lock);
	st->unexpected++;
	if (st->nr_failures < TRN_FUZZ_MAX_FAILURES) {
		f = &st->failures[st->nr_failures++];
		f->stream = t->stream;
		f->iteration = t->iter;
		f->err = err;
		snprintf(f->call, sizeof(f->call), "%s", t->call);
		snprintf(f->why, sizeof(f->why), "%s", why);
		fprintf(ctx->opts->out,
			"# trn-fuzz: FAIL seed=%" PRIu64 " stream=%u iteration=%"
			PRIu64 ": %s: %s\n",
			ctx->opts->seed, t->stream, t->iter, t->call, why);
		print_replay(ctx, t->stream, t->iter);
	}
	pthread_mutex_unlock(&ctx->lock);
}

static bool resource_errno(int err)
{
	/* EMFILE: a context's 256 queues. */
	return err == ENOMEM || err == EDQUOT || err == ENOSPC || err == EMFILE;
}

/*
 * Account for the result of one call. @ret is 0 (or a non-negative value)
 * or -errno; @model what the call must return (0, -errno, MODEL_ANY,
 * MODEL_RESOURCE). Whatever the model, a descriptor that is not open gives
 * EBADF, one that is not DRM's ENOTTY, and a file on a churned device may
 * answer ENODEV: its device can be gone.
 */
static bool account(struct fuzz_thread *t, const struct target *tg, int ret,
		    int model)
{
	int got = ret < 0 ? ret : 0;

	t->st.calls++;
	if (ret >= 0)
		t->st.ok++;
	else if (-ret < TRN_FUZZ_MAX_ERRNO)
		t->st.errnos[-ret]++;
	trace_call(t, ret);

	if (ret < 0 && !trn_fuzz_errno_expected(-ret)) {
		fail(t, -ret, "unexpected errno %s (%s)", errname(-ret),
		     strerror(-ret));
		return false;
	}
	/* A banned context's queues refuse jobs: only SUBMIT says so. */
	if (ret == -ECANCELED && !t->submit_call) {
		fail(t, ECANCELED, "ECANCELED from a call that submits nothing");
		return false;
	}
	if (tg && tg->kind == T_BADF)
		model = -EBADF;
	else if (tg && tg->kind == T_NOTDRM)
		model = -ENOTTY;
	else if (tg && tg->df && !tg->df->stable && got == -ENODEV)
		return true;
	if (model == MODEL_ANY)
		return true;
	if (model == MODEL_RESOURCE) {
		if (!got || resource_errno(-got))
			return true;
		fail(t, -got, "returned %s, expected success or a resource errno",
		     errname(-got));
		return false;
	}
	if (got != model) {
		fail(t, -got, "returned %s, expected %s",
		     got ? errname(-got) : "0",
		     model ? errname(-model) : "0");
		return false;
	}
	return true;
}

/* ---- pointers, arguments and targets ---- */

/* The thread's answer buffer, @slot KiB into it (for several answers). */
static struct fuzz_ptr ptr_valid(struct fuzz_thread *t, unsigned int slot)
{
	struct fuzz_ptr p = {
		.addr = (uintptr_t)t->page + slot * 1024,
		.writable = 2 * t->ctx->page_size - slot * 1024,
		.name = "buf",
	};

	return p;
}

/*
 * A pointer for the kernel to write through: mostly the thread's buffer,
 * otherwise misaligned, straddling into a guard page, NULL, inaccessible,
 * read-only, in the kernel half, non-canonical or below mmap_min_addr.
 * Never a random address, which could be some other live memory.
 */
static struct fuzz_ptr pick_ptr(struct fuzz_thread *t, unsigned int slot)
{
	struct fuzz_ctx *ctx = t->ctx;
	size_t ps = ctx->page_size, off;
	struct fuzz_ptr p = ptr_valid(t, slot);

	switch (below(t, 16)) {
	case 6:
		off = 1 + below(t, 7);
		p.addr += off;
		p.writable -= off;
		p.name = "buf+misaligned";
		break;
	case 7:
	case 8:
		off = 1 + below(t, 64);
		p.addr = (uintptr_t)t->page + 2 * ps - off;
		p.writable = off;
		p.name = "guard-straddle";
		break;
	case 9:
		p = (struct fuzz_ptr){ 0, 0, "NULL" };
		break;
	case 10:
		p = (struct fuzz_ptr){ (uintptr_t)ctx->none + below(t, ps), 0,
				       "prot-none" };
		break;
	case 11:
		p = (struct fuzz_ptr){ (uintptr_t)ctx->ro + below(t, 64), 0,
				       "read-only" };
		break;
	case 12:
		p = (struct fuzz_ptr){ one_in(t, 2) ? KERNEL_ADDR : KERNEL_TEXT,
				       0, "kernel" };
		break;
	case 13:
		p = (struct fuzz_ptr){ NONCANON_ADDR, 0, "non-canonical" };
		break;
	case 14:
		p = (struct fuzz_ptr){ 0x1000 + 0x1000 * below(t, 8), 0,
				       "low" };
		break;
	default:
		break;
	}
	return p;
}

static bool ptr_ok(const struct fuzz_ptr *p, size_t len)
{
	return len <= p->writable;
}

/*
 * Where the ioctl argument lives. The caller builds it in @local; for
 * A_NORMAL and A_STRADDLE this copies what fits to the returned address.
 */
static void *place_arg(struct fuzz_thread *t, const void *local, size_t size,
		       enum arg_kind *kind)
{
	struct fuzz_ctx *ctx = t->ctx;
	unsigned char *p;
	size_t fit;

	*kind = A_NORMAL;
	if (one_in(t, 12))
		*kind = (enum arg_kind)(1 + below(t, 4));
	switch (*kind) {
	case A_NULL:
		return NULL;
	case A_NONE:
		return ctx->none;
	case A_RO:
		return ctx->ro;
	case A_STRADDLE:
		fit = size > 1 ? size / 2 : 0;
		p = t->arg + ARG_SIZE - fit;
		memcpy(p, local, fit);
		return p;
	default:
		p = t->arg + (one_in(t, 8) ? below(t, 8) : 0);
		memcpy(p, local, size);
		return p;
	}
}

/*
 * The read-only argument page holds a valid DRM_TRN_QUERY_DEVICE_INFO
 * query; read as another structure, its first word is a handle.
 */
#define RO_HANDLE	DRM_TRN_QUERY_DEVICE_INFO

/*
 * What an argument that cannot be copied in or out does to a call. A
 * read-only one is copied in and the handler runs; if it failed, it left
 * no trace (uapi.md), but with success or EFAULT (the copy back) it may
 * have made something the caller was never told of.
 */
static int arg_model(enum arg_kind kind, int model)
{
	switch (kind) {
	case A_NORMAL:
		return model;
	case A_RO:
		/* Copied in, run, and then not copied back: EFAULT at best. */
		return MODEL_ANY;
	default:
		return -EFAULT;
	}
}

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

/* ---- files and what the engine knows about them ---- */

static struct fuzz_bo *find_bo(struct fuzz_dfile *df, uint32_t handle)
{
	unsigned int i;

	for (i = 0; df && i < df->nr_bos; i++)
		if (df->bos[i].handle == handle)
			return &df->bos[i];
	return NULL;
}

/* Remember a new handle; a full table makes the file inexact. */
static struct fuzz_bo *track_bo(struct fuzz_dfile *df, uint32_t handle)
{
	struct fuzz_bo *bo = find_bo(df, handle);

	if (bo)
		return bo;
	if (df->nr_bos == NR_BOS) {
		df->exact = false;
		return NULL;
	}
	bo = &df->bos[df->nr_bos++];
	memset(bo, 0, sizeof(*bo));
	bo->handle = handle;
	return bo;
}

static void forget_bo(struct fuzz_dfile *df, uint32_t handle)
{
	struct fuzz_bo *bo = find_bo(df, handle);

	if (bo)
		*bo = df->bos[--df->nr_bos];
}

static void charges_add(struct fuzz_charges *c, uint64_t bos, uint64_t hbm,
			uint64_t pinned)
{
	c->bos += bos;
	c->hbm += hbm;
	c->pinned += pinned;
}

/* Whether something besides the file's handle may hold a buffer. */
static bool held_elsewhere(const struct fuzz_dfile *df,
			   const struct fuzz_bo *bo)
{
	return bo->listed || bo->exported ||
	       (bo->handle == df->cmd_handle && df->cmd_map);
}

/*
 * The file's handle @handle was closed: forget it, and keep what the file
 * may still be charged for. A buffer stays charged to its creator until it
 * is freed (memory.md): while a job, a dma-buf or a mapping holds it, that
 * is later. A queue's status page is the queue's: closing its handle
 * changes nothing.
 */
static void bo_closed(struct fuzz_dfile *df, uint32_t handle)
{
	struct fuzz_bo *bo = find_bo(df, handle);
	unsigned int i;

	if (!bo)
		return;
	if (bo->kernel_owned) {
		for (i = 0; i < df->nr_queues; i++)
			if (df->queues[i].status_handle == handle)
				df->queues[i].status_handle = 0;
	} else if (bo->created && bo->dmabuf) {
		/* Host memory: only host buffers are exported. */
		charges_add(&df->held, 1, 0, bo->size);
	} else if (bo->created && held_elsewhere(df, bo)) {
		if (bo->placement == DRM_TRN_PLACEMENT_HBM)
			charges_add(&df->linger, 1, bo->size, 0);
		else
			charges_add(&df->linger, 1, 0, bo->size);
	} else if (bo->maybe_charged) {
		/* Another file of the device may hold the import. */
		charges_add(&df->linger, 1, 0, bo->size);
	}
	forget_bo(df, handle);
}

static void remember_syncobj(struct fuzz_dfile *df, uint32_t handle)
{
	if (df->nr_syncobjs < NR_SYNCOBJS)
		df->syncobjs[df->nr_syncobjs++] = handle;
}

static void forget_syncobj(struct fuzz_dfile *df, uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < df->nr_syncobjs; i++)
		if (df->syncobjs[i] == handle) {
			df->syncobjs[i] = df->syncobjs[--df->nr_syncobjs];
			return;
		}
}

/* Whether a call on @tg can be checked against an exact model. */
static bool exact(const struct target *tg, enum arg_kind kind)
{
	return tg->kind == T_FILE && tg->df->exact && kind == A_NORMAL;
}

static void close_file(struct fuzz_thread *t, struct fuzz_file *f)
{
	if (f->fd >= 0 && close(f->fd))
		fail(t, errno, "close(%d) failed", f->fd);
	if (f->df && !--f->df->refs) {
		if (f->df->cmd_map)
			munmap(f->df->cmd_map, CMD_BO_SIZE);
		memset(f->df, 0, sizeof(*f->df));
	}
	f->fd = -1;
	f->df = NULL;
}

static struct fuzz_file *free_slot(struct fuzz_thread *t)
{
	unsigned int i;

	for (i = 0; i < NR_FILES; i++)
		if (t->files[i].fd < 0)
			return &t->files[i];
	return NULL;
}

static struct fuzz_dfile *free_dfile(struct fuzz_thread *t)
{
	unsigned int i;

	for (i = 0; i < NR_FILES; i++)
		if (!t->dfiles[i].refs)
			return &t->dfiles[i];
	return NULL;
}

static unsigned int churn_id(struct fuzz_thread *t)
{
	return TRN_FUZZ_CHURN_FIRST +
	       below(t, TRN_FUZZ_CHURN_LAST - TRN_FUZZ_CHURN_FIRST + 1);
}

/* Open a device file into @f: the stable device or, with churn, any. */
static int open_file(struct fuzz_thread *t, struct fuzz_file *f,
		     bool allow_churn)
{
	static const int modes[] = { O_RDWR, O_RDWR, O_RDWR, O_RDONLY,
				     O_WRONLY, O_RDWR | O_NONBLOCK };
	struct fuzz_ctx *ctx = t->ctx;
	int mode = modes[below(t, ARRAY_SIZE(modes))];
	unsigned int minor = ctx->stable_minor, id = ctx->opts->device_id;
	struct fuzz_dfile *df = free_dfile(t);
	bool stable = true;
	char node[64];
	int fd, ret;

	if (allow_churn && ctx->opts->device_churn && one_in(t, 2)) {
		id = churn_id(t);
		stable = false;
		snprintf(t->call, sizeof(t->call), "lookup trn_sim%u", id);
		ret = sim_minor(id, &minor);
		if (ret) {
			/* Gone or not there yet. */
			account(t, NULL, ret, MODEL_ANY);
			return ret;
		}
	}
	accel_node(minor, node, sizeof(node));
	if (ctx->opts->part >= 0)
		snprintf(t->call, sizeof(t->call), "open(%s [part %d], 0%o)",
			 node, ctx->opts->part, mode);
	else
		snprintf(t->call, sizeof(t->call), "open(%s [id %u], 0%o)",
			 node, id, mode);
	fd = open(node, mode | O_CLOEXEC);
	ret = fd < 0 ? -errno : 0;
	t->st.opens++;
	account(t, NULL, ret, stable ? 0 : MODEL_ANY);
	if (fd < 0)
		return ret;
	memset(df, 0, sizeof(*df));
	df->refs = 1;
	df->id = id;
	df->mode = mode & O_ACCMODE;
	df->stable = stable;
	df->exact = true;
	df->gen = ++t->next_gen;
	f->fd = fd;
	f->df = df;
	return 0;
}

/* Some open file of the thread; opens one on the stable device if none. */
static struct fuzz_file *any_file(struct fuzz_thread *t)
{
	unsigned int i, n = 0, pick;
	struct fuzz_file *f;

	for (i = 0; i < NR_FILES; i++)
		n += t->files[i].fd >= 0;
	if (!n) {
		f = &t->files[0];
		return open_file(t, f, false) ? NULL : f;
	}
	pick = below(t, n);
	for (i = 0; i < NR_FILES; i++)
		if (t->files[i].fd >= 0 && !pick--)
			return &t->files[i];
	return NULL;
}

/* The descriptor an ioctl goes to: mostly a device file. */
static void pick_target(struct fuzz_thread *t, struct target *tg)
{
	uint32_t r = below(t, 40);
	struct fuzz_file *f;

	memset(tg, 0, sizeof(*tg));
	if (r == 0) {
		tg->kind = T_BADF;
		/* Beyond RLIMIT_NOFILE's usual 1024, so never open. */
		tg->fd = one_in(t, 2) ? -1 : (int)(2048 + below(t, 1024));
		return;
	}
	if (r == 1) {
		tg->kind = T_NOTDRM;
		tg->fd = t->ctx->null_fd;
		return;
	}
	f = any_file(t);
	if (!f) {
		tg->kind = T_BADF;
		tg->fd = -1;
		return;
	}
	tg->kind = T_FILE;
	tg->fd = f->fd;
	tg->df = f->df;
}

/* A GEM handle: mostly one the file has, else anything. */
static uint32_t pick_bo_handle(struct fuzz_thread *t, const struct target *tg)
{
	const struct fuzz_dfile *df = tg->df;

	if (df && df->nr_bos && !one_in(t, 4))
		return df->bos[below(t, df->nr_bos)].handle;
	switch (below(t, 4)) {
	case 0:
		return 0;
	case 1:
		return 1 + below(t, 32);
	default:
		return rnd_u32(t);
	}
}

static uint32_t pick_syncobj(struct fuzz_thread *t, const struct target *tg)
{
	const struct fuzz_dfile *df = tg->df;

	if (df && df->nr_syncobjs && !one_in(t, 4))
		return df->syncobjs[below(t, df->nr_syncobjs)];
	switch (below(t, 4)) {
	case 0:
		return 0;
	case 1:
		return 1 + below(t, 32);
	default:
		return rnd_u32(t);
	}
}

/* Close one remembered buffer so that a new one can be remembered. */
static void make_room(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_gem_close c = { 0 };
	struct fuzz_dfile *df = tg->df;
	int ret;

	if (tg->kind != T_FILE || df->nr_bos < NR_BOS)
		return;
	c.handle = df->bos[below(t, df->nr_bos)].handle;
	snprintf(t->call, sizeof(t->call), "GEM_CLOSE(fd %d, handle %u)",
		 tg->fd, c.handle);
	ret = do_ioctl(tg->fd, DRM_IOCTL_GEM_CLOSE, &c);
	account(t, tg, ret, 0);
	if (!ret)
		bo_closed(df, c.handle);
}

/* ---- trn ioctls: structure-aware, with models ---- */

struct query_desc {
	uint32_t id;
	uint32_t min_size;	/* first version of the answer */
	uint32_t size;		/* this header's version of it */
	uint32_t entry;		/* an array of these: whole entries only */
};

/* HBM_STACKS's size is the stable device's: set up with ctx->ref. */
static struct query_desc queries[] = {
	{ DRM_TRN_QUERY_DEVICE_INFO, INFO_V1_SIZE,
	  sizeof(struct drm_trn_device_info), 0 },
	{ DRM_TRN_QUERY_MEMORY, MEMORY_V1_SIZE,
	  sizeof(struct drm_trn_memory_info), 0 },
	{ DRM_TRN_QUERY_HBM_STACKS, sizeof(struct drm_trn_hbm_stack),
	  4 * sizeof(struct drm_trn_hbm_stack),
	  sizeof(struct drm_trn_hbm_stack) },
};

static struct query_desc *find_query(uint32_t id)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(queries); i++)
		if (queries[i].id == id)
			return &queries[i];
	return NULL;
}

static uint32_t pick_query_id(struct fuzz_thread *t)
{
	static const uint32_t bad[] = { 0, 4, 5, 0x100, 0x7fffffffu,
					0xffffffffu };

	switch (below(t, 8)) {
	case 0:
		return rnd32(t);
	case 1:
	case 2:
		return bad[below(t, ARRAY_SIZE(bad))];
	default:
		return queries[below(t, ARRAY_SIZE(queries))].id;
	}
}

static uint32_t pick_query_size(struct fuzz_thread *t,
				const struct query_desc *qd)
{
	static const uint32_t sizes[] = { 0, 1, 4096, 0xffffffffu };
	uint32_t min = qd ? qd->min_size : INFO_V1_SIZE;
	uint32_t full = qd ? qd->size : sizeof(struct drm_trn_device_info);

	switch (below(t, 8)) {
	case 0:
		return below(t, 128);
	case 1:
		return rnd_u32(t);
	case 2:
		return sizes[below(t, ARRAY_SIZE(sizes))];
	case 3:
	case 4:
		/* Around the first version's size, */
		return min - 1 + below(t, 3);
	case 5:
		/* between it and this header's, */
		return min + below(t, full - min + 1);
	default:
		/* around this header's. */
		return full - 1 + below(t, 3);
	}
}

/* The answer DRM_IOCTL_TRN_QUERY must give (uapi.md). */
static int query_model(const struct drm_trn_query *q,
		       const struct fuzz_ptr *data)
{
	const struct query_desc *qd = find_query(q->query);

	if (q->flags || q->pad || !qd)
		return -EINVAL;
	if (!q->size)
		return 0;
	if (q->size < qd->min_size || (qd->entry && q->size % qd->entry))
		return -EINVAL;
	return ptr_ok(data, q->size < qd->size ? q->size : qd->size) ?
	       0 : -EFAULT;
}

/*
 * What DRM_TRN_QUERY_MEMORY may charge a file with (memory.md): at least
 * the buffers it created and holds and one page for the status buffer of
 * each of its queues; at most that plus what may still be charged without
 * a handle (&fuzz_dfile.linger) and the foreign imports it holds that may
 * be charged to it (the first importer of a dma-buf pays). False if the
 * upper bound of pinned bytes is not known.
 */
static bool file_charges(const struct fuzz_dfile *df, uint64_t ps,
			 struct fuzz_charges *lo, struct fuzz_charges *hi)
{
	struct fuzz_charges maybe = { 0 };
	unsigned int i;

	memset(lo, 0, sizeof(*lo));
	for (i = 0; i < df->nr_bos; i++) {
		const struct fuzz_bo *bo = &df->bos[i];

		if (bo->maybe_charged)
			charges_add(&maybe, 1, 0, bo->size);
		if (!bo->created)
			continue;
		if (bo->placement == DRM_TRN_PLACEMENT_HBM)
			charges_add(lo, 1, bo->size, 0);
		else
			charges_add(lo, 1, 0, bo->size);
	}
	/* Status pages: one host page per live queue, whatever its handle. */
	charges_add(lo, df->nr_queues, 0, df->nr_queues * ps);
	charges_add(lo, df->held.bos, df->held.hbm, df->held.pinned);
	*hi = *lo;
	charges_add(hi, maybe.bos + df->linger.bos, maybe.hbm + df->linger.hbm,
		    maybe.pinned + df->linger.pinned);
	return !df->charge_unbounded;
}

/*
 * The answer of a successful query, @len bytes of it (min(size, its
 * size)): the device info equals the reference (as far as it was
 * written); the memory info is consistent and charges the file what the
 * engine knows it holds.
 */
static void check_answer(struct fuzz_thread *t, const struct target *tg,
			 uint32_t id, const void *answer, uint32_t len)
{
	const struct drm_trn_device_info *ref = &t->ctx->ref;
	struct drm_trn_device_info info;
	struct drm_trn_memory_info mem;
	struct fuzz_dfile *df = tg->df;
	struct fuzz_charges lo, hi, linger = df->linger, maybe = { 0 };
	bool bounded;

	if (id == DRM_TRN_QUERY_DEVICE_INFO) {
		memset(&info, 0, sizeof(info));
		memcpy(&info, answer, len < sizeof(info) ? len : sizeof(info));
		if (df->stable) {
			if (memcmp(&info, ref, len < sizeof(info) ? len :
							 sizeof(info)))
				fail(t, 0, "device info differs from the reference (%u bytes)",
				     len);
		} else if (info.device_id < TRN_FUZZ_CHURN_FIRST ||
			   info.device_id > TRN_FUZZ_CHURN_LAST ||
			   info.generation != DRM_TRN_GEN_SIM) {
			fail(t, 0, "churned device answered id %u gen %u",
			     info.device_id, info.generation);
		}
		return;
	}
	if (id == DRM_TRN_QUERY_HBM_STACKS) {
		struct drm_trn_hbm_stack st;
		uint32_t off;

		for (off = 0; off + sizeof(st) <= len; off += sizeof(st)) {
			memcpy(&st, (const char *)answer + off, sizeof(st));
			if (st.used > st.size ||
			    (df->stable &&
			     st.size != ref->hbm_size / ref->hbm_stacks))
				fail(t, 0, "HBM stack %u: %" PRIu64 " of %" PRIu64
				     " bytes used", off / (uint32_t)sizeof(st),
				     (uint64_t)st.used, (uint64_t)st.size);
		}
		return;
	}
	if (len < sizeof(mem))
		return;

	memcpy(&mem, answer, sizeof(mem));
	if (df->stable && mem.hbm_total != ref->hbm_size)
		fail(t, 0, "hbm_total %" PRIu64 ", device has %" PRIu64,
		     (uint64_t)mem.hbm_total, (uint64_t)ref->hbm_size);
	if (mem.hbm_used > mem.hbm_total || !mem.max_ctx_bos)
		fail(t, 0, "memory info inconsistent: used %" PRIu64 "/%" PRIu64
		     " max bos %" PRIu64, (uint64_t)mem.hbm_used,
		     (uint64_t)mem.hbm_total, (uint64_t)mem.max_ctx_bos);
	if (!df->exact)
		return;	/* buffers it does not know of may linger */
	bounded = file_charges(df, t->ctx->page_size, &lo, &hi);
	maybe.pinned = hi.pinned - lo.pinned - linger.pinned;
	/*
	 * The device totals hold the file's buffers, except foreign imports
	 * (their memory is not pinned for this device) and buffers freed
	 * while the query runs, which leave the totals before their charge
	 * goes: only those that may linger.
	 */
	if (mem.ctx_hbm > mem.hbm_used + linger.hbm ||
	    (bounded && mem.ctx_pinned > mem.host_pinned + linger.pinned +
					 maybe.pinned))
		fail(t, 0, "memory info inconsistent: ctx %" PRIu64 "/%" PRIu64
		     " of %" PRIu64 "/%" PRIu64 " (lingering %" PRIu64 "/%" PRIu64 ")",
		     (uint64_t)mem.ctx_hbm, (uint64_t)mem.ctx_pinned,
		     (uint64_t)mem.hbm_used, (uint64_t)mem.host_pinned,
		     linger.hbm, linger.pinned);
	if (mem.ctx_bos < lo.bos || mem.ctx_hbm < lo.hbm ||
	    mem.ctx_pinned < lo.pinned || mem.ctx_bos > hi.bos ||
	    mem.ctx_hbm > hi.hbm || (bounded && mem.ctx_pinned > hi.pinned))
		fail(t, 0, "context charges %" PRIu64 "/%" PRIu64 "/%" PRIu64
		     ", expected %" PRIu64 "/%" PRIu64 "/%" PRIu64 " to %" PRIu64
		     "/%" PRIu64 "/%" PRIu64,
		     (uint64_t)mem.ctx_bos, (uint64_t)mem.ctx_hbm,
		     (uint64_t)mem.ctx_pinned, lo.bos, lo.hbm, lo.pinned,
		     hi.bos, hi.hbm, hi.pinned);
}

/* What the thread's answer pages hold before a query, to see what it wrote. */
#define QUERY_FILL	0xa5

static void gen_query(struct fuzz_thread *t, const struct target *tg)
{
	const struct query_desc *qd;
	struct drm_trn_query q = { 0 }, before, *uq;
	struct fuzz_ptr data = ptr_valid(t, 0);
	unsigned int i, n = below(t, 4);
	uint32_t written;
	enum arg_kind kind;
	uint64_t page;
	int ret, model;

	q.query = queries[below(t, ARRAY_SIZE(queries))].id;
	qd = find_query(q.query);
	q.size = qd->size;
	for (i = 0; i < n; i++) {
		switch (below(t, 5)) {
		case 0:
			q.query = pick_query_id(t);
			break;
		case 1:
			q.size = pick_query_size(t, find_query(q.query));
			break;
		case 2:
			q.flags = rnd_bits(t);
			break;
		case 3:
			q.pad = rnd_bits(t);
			break;
		default:
			data = pick_ptr(t, 0);
			break;
		}
	}
	q.data = data.addr;
	uq = place_arg(t, &q, sizeof(q), &kind);
	before = q;
	memset(t->page, QUERY_FILL, 2 * t->ctx->page_size);
	/* The read-only argument holds a valid DEVICE_INFO query. */
	model = kind == A_RO ? -EFAULT : arg_model(kind, query_model(&q, &data));
	snprintf(t->call, sizeof(t->call),
		 "TRN_QUERY(fd %d, %s, query %#x size %u flags %#x pad %#x data %s %#" PRIx64 ")",
		 tg->fd, arg_kind_names[kind], q.query, q.size, q.flags,
		 q.pad, data.name, (uint64_t)q.data);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_QUERY, uq);
	if (!account(t, tg, ret, model) || tg->kind != T_FILE ||
	    kind != A_NORMAL)
		return;

	if (ret) {
		/* A failed call leaves the structure alone. */
		if (memcmp(uq, &before, sizeof(before)))
			fail(t, 0, "failed query modified its argument");
		return;
	}
	qd = find_query(before.query);
	if (!qd)
		return;
	/* min(size, its size) bytes are written; size 0 asks for the size. */
	written = before.size < qd->size ? before.size : qd->size;
	if (uq->size != (before.size ? written : qd->size)) {
		fail(t, 0, "query answered size %u", uq->size);
		return;
	}
	/* Not a byte of the answer pages besides the answer changes. */
	page = (uintptr_t)t->page;
	for (i = 0; i < 2 * t->ctx->page_size; i++)
		if (t->page[i] != QUERY_FILL &&
		    (page + i < data.addr || page + i >= data.addr + written)) {
			fail(t, 0, "query of %u bytes wrote at offset %" PRId64,
			     written, (int64_t)(page + i - data.addr));
			return;
		}
	if (written && ptr_ok(&data, written))
		check_answer(t, tg, before.query,
			     (const void *)(uintptr_t)data.addr, written);
}

static uint64_t pick_bo_size(struct fuzz_thread *t, uint32_t placement)
{
	const struct drm_trn_device_info *ref = &t->ctx->ref;
	uint64_t ps = t->ctx->page_size;
	bool hbm = placement != DRM_TRN_PLACEMENT_HOST;

	switch (below(t, 16)) {
	case 0:
		return 0;
	case 1:
		return ref->va_size / 2 + 1 + below(t, 1u << 20);
	case 2:
		return one_in(t, 2) ? UINT64_MAX : 1ull << 63;
	case 3:
		/* More than the device has: E2BIG for device memory. */
		return hbm ? ref->hbm_size + ps * below(t, 4) + 1 : MAX_HOST_BO;
	case 4:
		return hbm ? ref->hbm_size / (1 + below(t, 8)) : MAX_HOST_BO;
	case 5:
		return hbm ? 2u << 20 : ps * (1 + below(t, MAX_HOST_BO / ps));
	case 6:
		return ps * (1 + below(t, 16));
	default:
		return 1 + below(t, 65536);
	}
}

static uint64_t pick_alignment(struct fuzz_thread *t)
{
	switch (below(t, 12)) {
	case 0:
		return 1ull << below(t, 31);	/* valid: up to 1 GiB */
	case 1:
		return 1ull << (31 + below(t, 33));	/* too big */
	case 2:
		return 3ull << below(t, 20);	/* not a power of two */
	case 3:
		return rnd64(t);
	case 4:
		return t->ctx->page_size << below(t, 10);
	default:
		return 0;
	}
}

static uint32_t pick_placement(struct fuzz_thread *t)
{
	switch (below(t, 10)) {
	case 0:
		return rnd_u32(t);
	case 1:
		return below(t, 6);	/* USERPTR and IMPORTED are refused */
	case 2:
	case 3:
	case 4:
	case 5:
		return DRM_TRN_PLACEMENT_HOST;
	default:
		return DRM_TRN_PLACEMENT_HBM;
	}
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* The answer DRM_IOCTL_TRN_BO_CREATE must give (uapi.md, memory.md). */
static int bo_create_model(const struct target *tg,
			   const struct drm_trn_bo_create *c, uint64_t ps,
			   uint32_t stacks)
{
	const uint32_t known = DRM_TRN_BO_HOST_WC | DRM_TRN_BO_DEVICE_READ_ONLY |
			       DRM_TRN_BO_ON_STACK | DRM_TRN_BO_STACK_MASK;
	uint32_t stack = (c->flags & DRM_TRN_BO_STACK_MASK) >>
			 DRM_TRN_BO_STACK_SHIFT;
	bool hbm = c->placement == DRM_TRN_PLACEMENT_HBM;
	bool stable = tg->kind == T_FILE && tg->df->stable;

	if (c->pad || c->flags & ~known)
		return -EINVAL;
	if (!hbm && c->placement != DRM_TRN_PLACEMENT_HOST)
		return -EINVAL;
	if (hbm && c->flags & DRM_TRN_BO_HOST_WC)
		return -EINVAL;
	if (c->flags & DRM_TRN_BO_ON_STACK ? !hbm : stack)
		return -EINVAL;
	/* Only the stable device's stacks are known (ctx->ref). */
	if (c->flags & DRM_TRN_BO_ON_STACK && stable && stack >= stacks)
		return -EINVAL;
	if (c->alignment && (!is_pow2(c->alignment) ||
			     c->alignment > DRM_TRN_BO_MAX_ALIGNMENT))
		return -EINVAL;
	if (!c->size)
		return -EINVAL;
	if (!stable)
		return MODEL_ANY;	/* the rest depends on the device */
	return MODEL_RESOURCE;
}

static uint64_t bo_alignment(uint64_t size, uint64_t align, uint64_t ps)
{
	if (!align)
		align = size >= (2u << 20) ? 2u << 20 : ps;
	return align > ps ? align : ps;
}

/*
 * Whether the handler of creating ioctl @nr refuses @arg, the argument as
 * it sees it, by its own checks, before it makes or changes anything. DRM
 * copies the argument back even when the handler failed, so a call with
 * the read-only argument answers EFAULT whatever the handler did; its
 * contents are a DEVICE_INFO query (RO_HANDLE), which each of these
 * refuses: as BO_CREATE its placement is the low half of a page address,
 * as BO_USERPTR its address is not page aligned, as QUEUE_CREATE its
 * priority (the query's size) is beyond high, as QUEUE_DESTROY and SUBMIT
 * its flags are.
 */
static bool handler_refuses(struct fuzz_thread *t, const struct target *tg,
			    unsigned int nr, const void *arg)
{
	uint64_t ps = t->ctx->page_size;

	switch (nr) {
	case DRM_TRN_BO_CREATE: {
		struct drm_trn_bo_create c;

		memcpy(&c, arg, sizeof(c));
		return bo_create_model(tg, &c, ps,
				       t->ctx->ref.hbm_stacks) == -EINVAL;
	}
	case DRM_TRN_BO_USERPTR: {
		struct drm_trn_bo_userptr c;

		memcpy(&c, arg, sizeof(c));
		return c.flags & ~DRM_TRN_USERPTR_READ_ONLY || !c.size ||
		       c.addr % ps || c.size % ps;
	}
	case DRM_TRN_QUEUE_CREATE: {
		struct drm_trn_queue_create c;

		memcpy(&c, arg, sizeof(c));
		return c.flags & ~DRM_TRN_QUEUE_USER_MODE || c.ring_handle ||
		       c.doorbell_handle || c.pad ||
		       c.priority > DRM_TRN_PRIORITY_HIGH;
	}
	case DRM_TRN_QUEUE_DESTROY: {
		struct drm_trn_queue_destroy c;

		memcpy(&c, arg, sizeof(c));
		return c.flags;
	}
	case DRM_TRN_SUBMIT: {
		struct drm_trn_submit c;

		memcpy(&c, arg, sizeof(c));
		return c.flags & ~DRM_TRN_SUBMIT_NONBLOCK || !c.job_count ||
		       c.job_count > DRM_TRN_SUBMIT_MAX_JOBS ||
		       c.job_size < 64 || c.job_size > 4096;
	}
	default:
		return false;
	}
}

/* A new buffer's handle and address are sane; remember it. */
static void new_bo(struct fuzz_thread *t, const struct target *tg,
		   uint32_t handle, uint64_t va, uint64_t size,
		   uint64_t align, uint32_t placement, uint32_t flags)
{
	const struct drm_trn_device_info *ref = &t->ctx->ref;
	struct fuzz_dfile *df = tg->df;
	struct fuzz_bo *bo;

	if (df->exact && find_bo(df, handle))
		fail(t, 0, "new buffer got handle %u, which is in use", handle);
	if (!handle || va < ref->va_start ||
	    va + size > ref->va_start + ref->va_size || va % align)
		fail(t, 0, "new buffer: handle %u va %#" PRIx64 " (align %#"
		     PRIx64 ")", handle, va, align);
	bo = track_bo(df, handle);
	if (!bo)
		return;
	bo->placement = placement;
	bo->flags = flags;
	bo->created = true;
	bo->size = size;
	bo->va = va;
}

static void gen_bo_create(struct fuzz_thread *t, const struct target *tg)
{
	uint64_t ps = t->ctx->page_size, size;
	struct drm_trn_bo_create c, *uc;
	unsigned int i, n = below(t, 3);
	enum arg_kind kind;
	int ret, model;

	memset(&c, 0, sizeof(c));
	c.placement = one_in(t, 2) ? DRM_TRN_PLACEMENT_HBM :
				     DRM_TRN_PLACEMENT_HOST;
	c.size = pick_bo_size(t, c.placement);
	if (one_in(t, 6))
		c.flags = c.placement == DRM_TRN_PLACEMENT_HOST && one_in(t, 2) ?
			  DRM_TRN_BO_HOST_WC : DRM_TRN_BO_DEVICE_READ_ONLY;
	/* On a stack, sometimes one the device does not have. */
	if (one_in(t, 5))
		c.flags |= DRM_TRN_BO_STACK(below(t, t->ctx->ref.hbm_stacks + 1));
	/* Output fields are ignored on input. */
	c.handle = rnd32(t);
	c.va = rnd64(t);
	for (i = 0; i < n; i++) {
		switch (below(t, 5)) {
		case 0:
			c.placement = pick_placement(t);
			break;
		case 1:
			c.alignment = pick_alignment(t);
			break;
		case 2:
			c.flags = rnd_bits(t);
			break;
		case 3:
			c.pad = rnd_bits(t);
			break;
		default:
			c.size = pick_bo_size(t, c.placement);
			break;
		}
	}
	/* Never a host buffer that could exhaust the guest's memory. */
	if (c.placement == DRM_TRN_PLACEMENT_HOST && c.size > MAX_HOST_BO &&
	    c.size <= t->ctx->ref.va_size / 2)
		c.size = MAX_HOST_BO;

	make_room(t, tg);
	uc = place_arg(t, &c, sizeof(c), &kind);
	model = arg_model(kind, bo_create_model(tg, &c, ps,
						t->ctx->ref.hbm_stacks));
	snprintf(t->call, sizeof(t->call),
		 "TRN_BO_CREATE(fd %d, %s, size %#" PRIx64 " align %#" PRIx64
		 " placement %u flags %#x pad %#x)",
		 tg->fd, arg_kind_names[kind], (uint64_t)c.size,
		 (uint64_t)c.alignment, c.placement, c.flags, c.pad);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_BO_CREATE, uc);
	/* Size beyond what the stable device can hold, whatever else. */
	if (model == MODEL_RESOURCE &&
	    (c.size > t->ctx->ref.va_size / 2 ||
	     (c.placement == DRM_TRN_PLACEMENT_HBM &&
	      ((c.size + ps - 1) & ~(ps - 1)) >
	      (c.flags & DRM_TRN_BO_ON_STACK ?
	       t->ctx->ref.hbm_size / t->ctx->ref.hbm_stacks :
	       t->ctx->ref.hbm_size))))
		model = -E2BIG;
	account(t, tg, ret, model);
	if (tg->kind != T_FILE)
		return;
	if (kind == A_RO && (!ret || ret == -EFAULT) &&
	    !handler_refuses(t, tg, DRM_TRN_BO_CREATE, t->ctx->ro))
		tg->df->exact = false;	/* made, maybe, but not reported */
	if (ret || kind != A_NORMAL)
		return;
	size = (c.size + ps - 1) & ~(ps - 1);
	new_bo(t, tg, uc->handle, uc->va, size,
	       bo_alignment(size, c.alignment, ps), c.placement, c.flags);
}

static void gen_bo_info(struct fuzz_thread *t, const struct target *tg)
{
	const struct drm_trn_device_info *ref = &t->ctx->ref;
	struct drm_trn_bo_info c, *uc;
	enum arg_kind kind;
	struct fuzz_bo *bo;
	bool mappable;
	int ret, model = MODEL_ANY;

	memset(&c, 0, sizeof(c));
	c.handle = pick_bo_handle(t, tg);
	c.flags = one_in(t, 8) ? rnd_bits(t) : 0;
	c.size = rnd64(t);
	c.va = rnd64(t);
	uc = place_arg(t, &c, sizeof(c), &kind);
	if (c.flags)
		model = -EINVAL;
	else if (exact(tg, kind))
		model = find_bo(tg->df, c.handle) ? 0 : -ENOENT;
	model = arg_model(kind, model);
	snprintf(t->call, sizeof(t->call),
		 "TRN_BO_INFO(fd %d, %s, handle %u flags %#x)", tg->fd,
		 arg_kind_names[kind], c.handle, c.flags);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_BO_INFO, uc);
	account(t, tg, ret, model);
	if (ret || kind != A_NORMAL || tg->kind != T_FILE)
		return;
	bo = find_bo(tg->df, c.handle);
	if (!bo)
		return;

	if ((bo->size && uc->size != bo->size) || (bo->va && uc->va != bo->va) ||
	    (bo->placement && uc->placement != bo->placement) ||
	    (bo->created && uc->bo_flags != bo->flags))
		fail(t, 0, "buffer %u: size %" PRIu64 " va %#" PRIx64
		     " placement %u flags %#x, created as %" PRIu64 "/%#" PRIx64
		     "/%u/%#x", c.handle, (uint64_t)uc->size,
		     (uint64_t)uc->va, uc->placement, uc->bo_flags, bo->size,
		     bo->va, bo->placement, bo->flags);
	mappable = uc->placement == DRM_TRN_PLACEMENT_HOST ||
		   (uc->placement == DRM_TRN_PLACEMENT_HBM &&
		    (!tg->df->stable ||
		     ref->capabilities & DRM_TRN_CAP_HBM_CPU_VISIBLE));
	if (mappable != !!uc->mmap_offset &&
	    (tg->df->stable || !mappable))
		fail(t, 0, "buffer %u (placement %u) has mmap offset %#" PRIx64,
		     c.handle, uc->placement, (uint64_t)uc->mmap_offset);
	bo->size = uc->size;
	bo->va = uc->va;
	bo->placement = uc->placement;
	bo->mmap_offset = uc->mmap_offset;
}

/*
 * The userptr range is in the thread's own region: UP_PAGES writable
 * pages, then an inaccessible and a read-only one. Anything else is NULL,
 * kernel or beyond the address space.
 */
static void gen_bo_userptr(struct fuzz_thread *t, const struct target *tg)
{
	uint64_t ps = t->ctx->page_size, up = (uintptr_t)t->up, end;
	struct drm_trn_bo_userptr c, *uc;
	unsigned int i, n = below(t, 3), first;
	enum arg_kind kind;
	int ret, model;

	memset(&c, 0, sizeof(c));
	first = below(t, UP_PAGES + 2);
	c.addr = up + first * ps;
	c.size = ps * (1 + below(t, UP_PAGES + 2 - first));
	c.flags = one_in(t, 3) ? DRM_TRN_USERPTR_READ_ONLY : 0;
	c.handle = rnd32(t);
	c.va = rnd64(t);
	for (i = 0; i < n; i++) {
		switch (below(t, 6)) {
		case 0:
			c.addr += 1 + below(t, (uint32_t)ps - 1);
			break;
		case 1:
			c.size += 1 + below(t, (uint32_t)ps - 1);
			break;
		case 2:
			c.size = one_in(t, 2) ? 0 : -ps;
			break;
		case 3:
			c.flags = rnd_bits(t);
			break;
		case 4:
			c.size = 1ull << (40 + below(t, 10));
			break;
		default:
			c.addr = one_in(t, 3) ? 0 :
				 one_in(t, 2) ? KERNEL_ADDR : 1ull << 47;
			break;
		}
	}

	/*
	 * uapi.md: EINVAL, then EFAULT, then what pins. Huge ranges beyond
	 * the region fail the address check (EFAULT) or, with 5-level page
	 * tables, the pinned-memory limit (EDQUOT).
	 */
	if (c.flags & ~DRM_TRN_USERPTR_READ_ONLY || !c.size || c.addr % ps ||
	    c.size % ps || __builtin_add_overflow(c.addr, c.size, &end))
		model = -EINVAL;
	else if (c.addr < up || end > up + (UP_PAGES + 2) * ps)
		model = c.size >= 1ull << 40 ? MODEL_ANY : -EFAULT;
	else if (end > up + UP_PAGES * ps &&
		 (c.addr < up + (UP_PAGES + 1) * ps ||
		  !(c.flags & DRM_TRN_USERPTR_READ_ONLY)))
		model = -EFAULT;	/* PROT_NONE, or read-only for writing */
	else
		model = MODEL_RESOURCE;

	make_room(t, tg);
	uc = place_arg(t, &c, sizeof(c), &kind);
	model = arg_model(kind, model);
	snprintf(t->call, sizeof(t->call),
		 "TRN_BO_USERPTR(fd %d, %s, addr %#" PRIx64 " size %#" PRIx64
		 " flags %#x)", tg->fd, arg_kind_names[kind],
		 (uint64_t)c.addr, (uint64_t)c.size, c.flags);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_BO_USERPTR, uc);
	account(t, tg, ret, model);
	if (tg->kind != T_FILE)
		return;
	if (kind == A_RO && (!ret || ret == -EFAULT) &&
	    !handler_refuses(t, tg, DRM_TRN_BO_USERPTR, t->ctx->ro))
		tg->df->exact = false;
	if (ret || kind != A_NORMAL)
		return;
	new_bo(t, tg, uc->handle, uc->va, c.size, bo_alignment(c.size, 0, ps),
	       DRM_TRN_PLACEMENT_USERPTR,
	       c.flags & DRM_TRN_USERPTR_READ_ONLY ?
	       DRM_TRN_BO_DEVICE_READ_ONLY : 0);
}

/* ---- execution: queues and submission ---- */

static void fill_random(struct fuzz_thread *t, unsigned char *p, size_t len);
static bool all_zero(const unsigned char *p, size_t len);

static struct fuzz_queue *find_queue(struct fuzz_dfile *df, uint32_t id)
{
	unsigned int i;

	for (i = 0; df && i < df->nr_queues; i++)
		if (df->queues[i].id == id)
			return &df->queues[i];
	return NULL;
}

static void forget_queue(struct fuzz_dfile *df, uint32_t id)
{
	struct fuzz_queue *q = find_queue(df, id);

	if (!q)
		return;
	df->settled_gone += q->settled;
	*q = df->queues[--df->nr_queues];
}

/* Jobs of the file whose MMU fault, if they made one, is counted now. */
static uint64_t settled_jobs(const struct fuzz_dfile *df)
{
	uint64_t n = df->settled_gone;
	unsigned int i;

	for (i = 0; i < df->nr_queues; i++)
		n += df->queues[i].settled;
	return n;
}

/*
 * Queue @id was destroyed (uapi.md): its status buffer handle went with
 * it if it was still the status buffer's, the syncobj handle stays; its
 * unfinished jobs are cancelled, and of those only the one the device is
 * in the middle of (or has just finished) can still make an MMU fault; its
 * status page stays charged to the file while jobs may hold the queue.
 */
static void queue_destroyed(struct fuzz_dfile *df, uint32_t id, uint64_t ps)
{
	struct fuzz_queue *q = find_queue(df, id);
	struct fuzz_bo *bo;

	if (!q)
		return;
	bo = q->status_handle ? find_bo(df, q->status_handle) : NULL;
	if (bo && bo->kernel_owned)
		forget_bo(df, q->status_handle);
	if (q->submitted || q->status_listed)
		charges_add(&df->linger, 1, 0, ps);
	if (q->submitted != UINT64_MAX && q->submitted > q->settled + 1)
		q->settled = q->submitted - 1;
	forget_queue(df, id);
}

/*
 * Whether @q may refuse jobs as banned by now. A context is banned when
 * its jobs made ban_faults MMU faults since its previous ban (or a job
 * timed out, which the defused streams never do), and only queues created
 * before a ban are banned by it. A queue created after the engine saw the
 * file banned can be banned only by a later ban, whose faults must come
 * after the ban that was seen, from jobs that were not settled then; that
 * ban came after the banned queue was last seen not banned: so at most
 * the file's jobs minus those settled at that moment (&fuzz_queue.ban_base).
 * Before any ban was seen the base is 0. Each job faults at most once.
 */
static bool may_be_banned(const struct fuzz_thread *t,
			  const struct fuzz_dfile *df,
			  const struct fuzz_queue *q)
{
	return q->banned || df->jobs - q->ban_base >= t->ctx->ref.ban_faults;
}

/*
 * @q is banned (it refused jobs, reported BANNED, or fdinfo counts a ban
 * since its creation): check that it may be, and remember it. The ban
 * counter only grows, so the queue stays banned, and so does every queue
 * of the file created before it.
 */
static void mark_banned(struct fuzz_thread *t, struct fuzz_dfile *df,
			struct fuzz_queue *q, const char *how)
{
	unsigned int i;

	if (df->exact && !may_be_banned(t, df, q))
		fail(t, 0, "queue %u %s after %" PRIu64 " jobs since its ban base, not %u",
		     q->id, how, df->jobs - q->ban_base,
		     t->ctx->ref.ban_faults);
	/*
	 * The ban that banned it came after every queue as old as it was
	 * last seen not banned.
	 */
	for (i = 0; i < df->nr_queues; i++) {
		struct fuzz_queue *r = &df->queues[i];

		if (r->seq > q->seq)
			continue;
		r->banned = true;
		if (r->ok_settled > df->ban_base)
			df->ban_base = r->ok_settled;
	}
}

/* fdinfo trn-bans and trn-mmu-faults of the file of @fd; 0 or -errno. */
static int read_bans(struct fuzz_thread *t, int fd, uint64_t *bans,
		     uint64_t *faults)
{
	int ret = fdinfo_u64(fd, "trn-bans", bans);

	if (!ret && faults)
		ret = fdinfo_u64(fd, "trn-mmu-faults", faults);
	if (ret)
		fail(t, -ret, "fdinfo trn-bans of fd %d: %s", fd, errname(-ret));
	return ret;
}

/*
 * What fdinfo counts (uapi.md: trn-bans, the times the file's context was
 * banned; trn-mmu-faults) must agree with what the queues do. A ban bans
 * exactly the queues the context has at that moment (execution.md): a
 * queue refused jobs (@refused, "@how") only if trn-bans now is above its
 * value just before the queue was created, and a queue whose file was
 * banned since it was created (trn-bans now above its value just after)
 * must refuse from now on. Each ban took ban_faults jobs that faulted
 * since the previous one, each of which made a faulting access: at least
 * ban_faults faults per ban. Only on exact files of the stable device.
 */
static void check_bans(struct fuzz_thread *t, int fd, struct fuzz_dfile *df,
		       struct fuzz_queue *refused, const char *how)
{
	uint64_t bans, faults;
	unsigned int i;

	if (!df->exact || !df->stable) {
		if (refused)
			mark_banned(t, df, refused, how);
		return;
	}
	df->bans_read_jobs = df->jobs;
	if (read_bans(t, fd, &bans, &faults))
		return;
	if (bans * t->ctx->ref.ban_faults > faults)
		fail(t, 0, "fdinfo: trn-bans %" PRIu64 " with trn-mmu-faults %" PRIu64,
		     bans, faults);
	if (refused && refused->bans_known && bans <= refused->bans_lo)
		fail(t, 0, "queue %u %s, but trn-bans is %" PRIu64
		     " as when it was created", refused->id, how, bans);
	if (refused)
		mark_banned(t, df, refused, how);
	for (i = 0; i < df->nr_queues; i++) {
		struct fuzz_queue *q = &df->queues[i];

		if (!q->banned && q->bans_known && bans > q->bans_hi)
			mark_banned(t, df, q, "was banned by trn-bans");
	}
}

/* @q refused jobs as banned, or reported BANNED. */
static void queue_banned(struct fuzz_thread *t, int fd, struct fuzz_dfile *df,
			 struct fuzz_queue *q, const char *how)
{
	if (!q->banned)
		check_bans(t, fd, df, q, how);
}

/* @q was seen not banned: the next ban that bans it comes later. */
static void queue_ok(struct fuzz_dfile *df, struct fuzz_queue *q)
{
	if (!q->banned)
		q->ok_settled = settled_jobs(df);
}

/* What DRM_IOCTL_TRN_QUEUE_STATUS said about a queue the engine knows. */
static void queue_seen(struct fuzz_thread *t, int fd, struct fuzz_dfile *df,
		       struct fuzz_queue *q,
		       const struct drm_trn_queue_status *st)
{
	/* Jobs retire in order, their fault counted after they complete. */
	if (st->completed_seqno > q->completed)
		q->completed = st->completed_seqno;
	if (q->completed > q->settled + 1)
		q->settled = q->completed - 1;
	if (st->state & DRM_TRN_QUEUE_BANNED)
		queue_banned(t, fd, df, q, "reports BANNED");
	else if (q->banned && df->exact)
		fail(t, 0, "queue %u was banned, now reports state %#x", q->id,
		     st->state);
	else
		queue_ok(df, q);
}

/* A queue id: mostly one the file has, else anything. */
static uint32_t pick_queue_id(struct fuzz_thread *t, const struct target *tg)
{
	const struct fuzz_dfile *df = tg->df;

	if (df && df->nr_queues && !one_in(t, 6))
		return df->queues[below(t, df->nr_queues)].id;
	switch (below(t, 4)) {
	case 0:
		return 0;
	case 1:
		return 1 + below(t, 16);
	default:
		return rnd_u32(t);
	}
}

/* Destroy one remembered queue so that a new one can be remembered. */
static void make_queue_room(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_trn_queue_destroy d = { 0 };
	struct fuzz_dfile *df = tg->df;
	int ret;

	if (tg->kind != T_FILE || df->nr_queues < NR_QUEUES)
		return;
	d.queue_id = df->queues[below(t, df->nr_queues)].id;
	snprintf(t->call, sizeof(t->call), "TRN_QUEUE_DESTROY(fd %d, queue %u)",
		 tg->fd, d.queue_id);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_QUEUE_DESTROY, &d);
	account(t, tg, ret, df->exact ? 0 : MODEL_ANY);
	if (!ret)
		queue_destroyed(df, d.queue_id, t->ctx->page_size);
}

/*
 * A user-mode queue was made: it owns three buffers (ring, doorbell page,
 * completion record) and takes no submissions. The engine does not model
 * one (Documentation/fuzzing.md): it checks what it got and destroys the
 * queue and its syncobj at once, which frees the buffers then and there
 * (no job holds them).
 */
static void user_queue_made(struct fuzz_thread *t, const struct target *tg,
			    const struct drm_trn_queue_create *uc)
{
	struct drm_trn_queue_destroy d = { .queue_id = uc->queue_id };
	struct drm_syncobj_destroy sd = { .handle = uc->syncobj };
	uint32_t entries = uc->ring_entries;
	int ret;

	if (!uc->queue_id || !uc->ring_handle || !uc->doorbell_handle ||
	    !uc->status_handle || entries < DRM_TRN_USER_RING_MIN ||
	    entries > DRM_TRN_USER_RING_MAX || entries & (entries - 1))
		fail(t, 0, "new user-mode queue %u: ring %u (%u entries) doorbell %u status %u",
		     uc->queue_id, uc->ring_handle, entries,
		     uc->doorbell_handle, uc->status_handle);
	if (exact(tg, A_NORMAL) &&
	    (find_queue(tg->df, uc->queue_id) ||
	     find_bo(tg->df, uc->ring_handle) ||
	     find_bo(tg->df, uc->doorbell_handle) ||
	     find_bo(tg->df, uc->status_handle)))
		fail(t, 0, "new user-mode queue %u reuses a handle or number",
		     uc->queue_id);
	snprintf(t->call, sizeof(t->call),
		 "TRN_QUEUE_DESTROY(fd %d, new user-mode queue %u)", tg->fd,
		 uc->queue_id);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_QUEUE_DESTROY, &d);
	account(t, tg, ret, 0);
	snprintf(t->call, sizeof(t->call),
		 "SYNCOBJ_DESTROY(fd %d, new user-mode queue's %u)", tg->fd,
		 uc->syncobj);
	ret = do_ioctl(tg->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &sd);
	account(t, tg, ret, 0);
}

static void gen_queue_create(struct fuzz_thread *t, const struct target *tg)
{
	const struct drm_trn_device_info *ref = &t->ctx->ref;
	struct drm_trn_queue_create c, *uc;
	unsigned int i, n = below(t, 3);
	uint64_t bans_lo = 0, bans_hi = 0;
	bool outputs = false, bans_known, user;
	enum arg_kind kind;
	int ret, model;

	memset(&c, 0, sizeof(c));
	c.core = below(t, ref->num_cores);
	c.priority = below(t, 3);
	/* A user-mode queue, which the engine destroys again at once. */
	if (one_in(t, 4)) {
		c.flags = DRM_TRN_QUEUE_USER_MODE;
		c.ring_entries = one_in(t, 2) ? 0 : 16u << below(t, 4);
	}
	for (i = 0; i < n; i++) {
		switch (below(t, 9)) {
		case 0:
			c.core = one_in(t, 2) ? ref->num_cores + below(t, 4) :
						rnd_u32(t);
			break;
		case 1:
			c.priority = 3 + below(t, 4);
			break;
		case 2:
			c.flags = rnd_bits(t);
			break;
		case 3:
			c.ring_entries = one_in(t, 2) ? rnd_bits(t) :
						       1u << below(t, 20);
			break;
		case 6:
			c.ring_handle = rnd_bits(t);
			break;
		case 7:
			c.doorbell_handle = rnd_bits(t);
			break;
		case 8:
			c.pad = rnd_bits(t);
			break;
		case 4:
			/* Output fields on input (see test_exec). */
			c.queue_id = rnd_u32(t);
			c.status_handle = rnd_u32(t);
			outputs = c.queue_id || c.status_handle;
			break;
		default:
			c.core = below(t, 64);
			break;
		}
	}
	make_queue_room(t, tg);
	make_room(t, tg);	/* for the status buffer's handle */
	uc = place_arg(t, &c, sizeof(c), &kind);
	user = c.flags == DRM_TRN_QUEUE_USER_MODE;
	if (c.flags & ~DRM_TRN_QUEUE_USER_MODE || c.ring_handle ||
	    c.doorbell_handle || c.pad ||
	    c.priority > DRM_TRN_PRIORITY_HIGH ||
	    (!user && c.ring_entries) ||
	    (user && c.ring_entries &&
	     (c.ring_entries & (c.ring_entries - 1) ||
	      c.ring_entries < DRM_TRN_USER_RING_MIN ||
	      c.ring_entries > DRM_TRN_USER_RING_MAX)))
		model = -EINVAL;
	else if (outputs || tg->kind != T_FILE || !tg->df->stable)
		model = MODEL_ANY;
	else if (c.core >= ref->num_cores)
		model = -EINVAL;
	else if (user && !(ref->capabilities & DRM_TRN_CAP_USER_QUEUES))
		model = -EOPNOTSUPP;
	else
		model = MODEL_RESOURCE;
	model = arg_model(kind, model);
	snprintf(t->call, sizeof(t->call),
		 "TRN_QUEUE_CREATE(fd %d, %s, core %u priority %u flags %#x ring_entries %u ring %u doorbell %u pad %#x queue_id %u)",
		 tg->fd, arg_kind_names[kind], c.core, c.priority, c.flags,
		 c.ring_entries, c.ring_handle, c.doorbell_handle, c.pad,
		 c.queue_id);
	/* The file's bans before the call: a ban after it bans the queue. */
	bans_known = exact(tg, kind) && tg->df->stable && model != -EINVAL &&
		     !read_bans(t, tg->fd, &bans_lo, NULL);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_QUEUE_CREATE, uc);
	account(t, tg, ret, model);
	if (tg->kind != T_FILE)
		return;
	if (kind == A_RO && (!ret || ret == -EFAULT) &&
	    !handler_refuses(t, tg, DRM_TRN_QUEUE_CREATE, t->ctx->ro))
		tg->df->exact = false;	/* made, maybe, but not reported */
	if (ret || kind != A_NORMAL)
		return;
	if (uc->flags & DRM_TRN_QUEUE_USER_MODE) {
		user_queue_made(t, tg, uc);
		return;
	}
	{
		struct fuzz_dfile *df = tg->df;
		struct fuzz_bo *bo;

		/*
		 * Syncobj handle 0 is possible on 7.x: destroying the
		 * (nonexistent) handle 0 frees index 0 of the DRM core's
		 * handle table (Documentation/fuzzing.md, known bugs).
		 */
		if (!uc->queue_id || !uc->status_handle ||
		    (exact(tg, kind) &&
		     (find_queue(df, uc->queue_id) ||
		      find_bo(df, uc->status_handle))))
			fail(t, 0, "new queue %u: syncobj %u status %u",
			     uc->queue_id, uc->syncobj, uc->status_handle);
		if (find_queue(df, uc->queue_id)) {
			/* Destroyed behind the engine's back (inexact file). */
			queue_destroyed(df, uc->queue_id, t->ctx->page_size);
			df->exact = false;
		}
		if (df->nr_queues < NR_QUEUES) {
			struct fuzz_queue *q = &df->queues[df->nr_queues];

			memset(q, 0, sizeof(*q));
			q->id = uc->queue_id;
			q->syncobj = uc->syncobj;
			q->status_handle = uc->status_handle;
			q->seq = ++df->queue_seq;
			q->ok_settled = settled_jobs(df);
			q->ban_base = df->ban_base;
			q->bans_known = bans_known &&
					!read_bans(t, tg->fd, &bans_hi, NULL);
			q->bans_lo = bans_lo;
			q->bans_hi = bans_hi;
			df->nr_queues++;
		} else {
			df->exact = false;
		}
		remember_syncobj(df, uc->syncobj);
		bo = track_bo(df, uc->status_handle);
		if (bo) {
			bo->kernel_owned = true;
			bo->placement = DRM_TRN_PLACEMENT_HOST;
			bo->flags = DRM_TRN_BO_DEVICE_READ_ONLY;
			bo->size = t->ctx->page_size;
		}
	}
}

static void gen_queue_destroy(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_trn_queue_destroy c = { 0 }, *uc;
	enum arg_kind kind;
	int ret, model = MODEL_ANY;

	c.queue_id = pick_queue_id(t, tg);
	c.flags = one_in(t, 8) ? rnd_bits(t) : 0;
	uc = place_arg(t, &c, sizeof(c), &kind);
	if (c.flags)
		model = -EINVAL;
	else if (exact(tg, kind))
		model = find_queue(tg->df, c.queue_id) ? 0 : -ENOENT;
	model = arg_model(kind, model);
	snprintf(t->call, sizeof(t->call),
		 "TRN_QUEUE_DESTROY(fd %d, %s, queue %u flags %#x)", tg->fd,
		 arg_kind_names[kind], c.queue_id, c.flags);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_QUEUE_DESTROY, uc);
	account(t, tg, ret, model);
	/* QUEUE_DESTROY only reads: the read-only argument (queue 1) too. */
	if (!ret && tg->kind == T_FILE)
		queue_destroyed(tg->df, kind == A_RO ? RO_HANDLE : c.queue_id,
				t->ctx->page_size);
}

static void gen_queue_status(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_trn_queue_status c, *uc;
	struct fuzz_queue *q;
	enum arg_kind kind;
	int ret, model = MODEL_ANY;

	memset(&c, 0, sizeof(c));
	c.queue_id = pick_queue_id(t, tg);
	c.flags = one_in(t, 8) ? rnd_bits(t) : 0;
	/* Output fields are ignored on input. */
	c.submitted_seqno = rnd64(t);
	c.reserved[0] = rnd64(t);
	uc = place_arg(t, &c, sizeof(c), &kind);
	if (c.flags)
		model = -EINVAL;
	else if (exact(tg, kind))
		model = find_queue(tg->df, c.queue_id) ? 0 : -ENOENT;
	model = arg_model(kind, model);
	snprintf(t->call, sizeof(t->call),
		 "TRN_QUEUE_STATUS(fd %d, %s, queue %u flags %#x)", tg->fd,
		 arg_kind_names[kind], c.queue_id, c.flags);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_QUEUE_STATUS, uc);
	account(t, tg, ret, model);
	if (ret || kind != A_NORMAL || tg->kind != T_FILE)
		return;
	if (uc->completed_seqno > uc->submitted_seqno ||
	    uc->failed_seqno > uc->completed_seqno ||
	    uc->jobs_failed > uc->completed_seqno ||
	    uc->state & ~(DRM_TRN_QUEUE_GUILTY | DRM_TRN_QUEUE_FAULTED |
			  DRM_TRN_QUEUE_BANNED) ||
	    uc->reserved[0] || uc->reserved[1] || uc->queue_id != c.queue_id)
		fail(t, 0, "queue %u status: submitted %" PRIu64 " completed %"
		     PRIu64 " failed %" PRIu64 "/%" PRIu64 " state %#x",
		     c.queue_id, (uint64_t)uc->submitted_seqno,
		     (uint64_t)uc->completed_seqno, (uint64_t)uc->jobs_failed,
		     (uint64_t)uc->failed_seqno, uc->state);
	q = tg->df->exact ? find_queue(tg->df, c.queue_id) : NULL;
	if (q && q->submitted != UINT64_MAX &&
	    uc->submitted_seqno != q->submitted)
		fail(t, 0, "queue %u: submitted_seqno %" PRIu64 ", %" PRIu64
		     " were submitted", c.queue_id,
		     (uint64_t)uc->submitted_seqno, q->submitted);
	if (q)
		queue_seen(t, tg->fd, tg->df, q, uc);
}

/*
 * The file's command buffer: a host buffer of CMD_BO_SIZE whose lower half
 * holds streams (CMD_SLOTS of CMD_SLOT bytes) and whose upper half is what
 * they write. Made (and mapped, where the file allows) on first use and
 * again after a GEM_CLOSE took it. False if there is none.
 */
static bool cmd_bo(struct fuzz_thread *t, const struct target *tg)
{
	struct fuzz_dfile *df = tg->df;
	struct drm_trn_bo_create c = { 0 };
	struct fuzz_bo *bo;
	void *m;
	int ret;

	if (df->cmd_handle && find_bo(df, df->cmd_handle))
		return true;
	if (df->cmd_map)
		munmap(df->cmd_map, CMD_BO_SIZE);
	df->cmd_map = NULL;
	df->cmd_handle = 0;
	if (!df->exact)
		return false;	/* a handle could be anything */
	make_room(t, tg);
	c.size = CMD_BO_SIZE;
	c.placement = DRM_TRN_PLACEMENT_HOST;
	snprintf(t->call, sizeof(t->call),
		 "TRN_BO_CREATE(fd %d, command buffer)", tg->fd);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_BO_CREATE, &c);
	account(t, tg, ret, tg->df->stable ? MODEL_RESOURCE : MODEL_ANY);
	if (ret)
		return false;
	new_bo(t, tg, c.handle, c.va, CMD_BO_SIZE, t->ctx->page_size,
	       DRM_TRN_PLACEMENT_HOST, 0);
	bo = find_bo(df, c.handle);
	if (!bo) {
		/* Not remembered: close it again. */
		struct drm_gem_close g = { .handle = c.handle };

		do_ioctl(tg->fd, DRM_IOCTL_GEM_CLOSE, &g);
		return false;
	}
	bo->written = true;	/* not by the test's rules: it is ours */
	df->cmd_handle = c.handle;
	df->cmd_va = c.va;
	{
		struct drm_trn_bo_info info = { .handle = c.handle };

		if (do_ioctl(tg->fd, DRM_IOCTL_TRN_BO_INFO, &info) ||
		    !info.mmap_offset)
			return true;
		bo->mmap_offset = info.mmap_offset;
		m = mmap(NULL, CMD_BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 tg->fd, (off_t)info.mmap_offset);
		df->cmd_map = m == MAP_FAILED ? NULL : m;
	}
	return true;
}

/*
 * Make a stream safe to run without testing the patience of the fuzzer:
 * walk it as the device does and turn SEM_WAIT and CALL into NOPs (waits
 * nobody ends, calls of arbitrary memory), and clamp the sizes of the
 * commands whose work grows with their arguments. Whatever stays malformed
 * fails the job at once.
 */
static void defuse_stream(uint64_t *w, size_t words)
{
	size_t i = 0;

	while (i < words) {
		uint32_t hdr = (uint32_t)w[i];
		uint32_t op = TRN_CMD_OPCODE(hdr), n = TRN_CMD_WORDS(hdr);

		if (!n)
			return;
		switch (op) {
		case TRN_OP_SEM_WAIT:
		case TRN_OP_CALL:
			w[i] = (w[i] & ~0xffull) | TRN_OP_NOP;
			break;
		case TRN_OP_FILL:
			if (i + 2 < words)
				w[i + 2] &= 0xfffff;		/* size */
			break;
		case TRN_OP_COPY:
			if (i + 4 < words)
				w[i + 3] &= 0xfffff,		/* width */
				w[i + 4] &= 0xfff;		/* height */
			break;
		case TRN_OP_MATMUL:
			/* m in the header word, then n and k. */
			w[i] &= 0x0000003fffffffffull;
			if (i + 1 < words)
				w[i + 1] &= 0x0000003f0000003full;
			break;
		case TRN_OP_UNARY:
		case TRN_OP_BINARY:
		case TRN_OP_REDUCE:
			if (i + 1 < words)
				w[i + 1] &= 0x000000ff000000ffull;
			break;
		default:
			break;
		}
		i += n;
	}
}

/* A valid command of a few kinds, writing the upper half of the buffer. */
static size_t valid_cmd(struct fuzz_thread *t, const struct fuzz_dfile *df,
			unsigned char *p, size_t room)
{
	uint64_t data = df->cmd_va + CMD_BO_SIZE / 2;
	uint64_t off = 8 * below(t, CMD_BO_SIZE / 2 / 8 - 512);
	struct cmds c;

	cmds_init(&c, p, 0, room);
	switch (below(t, 7)) {
	case 0:
		cmds_nop(&c);
		break;
	case 1:
		cmds_write32(&c, data + off, rnd32(t));
		break;
	case 2:
		cmds_write64(&c, data + off, rnd64(t));
		break;
	case 3:
		cmds_fill(&c, data + off, rnd32(t), 4 * below(t, 1024));
		break;
	case 4:
		cmds_copy(&c, data + off, data + 8 * below(t, 512),
			  below(t, 2048));
		break;
	case 5:
		cmds_timestamp(&c, data + off);
		break;
	default:
		cmds_sem(&c, false, below(t, TRN_NUM_SEMAPHORES + 2), 1);
		break;
	}
	return c.len;
}

/*
 * A stream in slot @slot: valid commands, random bytes, or valid commands
 * with a few bytes flipped; its length.
 */
static size_t make_stream(struct fuzz_thread *t, struct fuzz_dfile *df,
			  unsigned int slot)
{
	unsigned char *p = df->cmd_map + slot * CMD_SLOT;
	size_t len = 0, n = 1 + below(t, 6), i;
	unsigned int kind = below(t, 4);

	if (kind == 0) {
		len = 8 * (1 + below(t, 32));
		fill_random(t, p, len);
	} else {
		for (i = 0; i < n; i++)
			len += valid_cmd(t, df, p + len, CMD_SLOT - len);
		if (kind == 1)
			for (i = 1 + below(t, 3); i; i--)
				p[below(t, (uint32_t)len)] ^=
					(unsigned char)(1u << below(t, 8));
	}
	defuse_stream((uint64_t *)p, len / 8);
	return len;
}

/* Bits of the errnos a submit may answer. */
#define S_EINVAL	(1u << 0)
#define S_ENOENT	(1u << 1)
#define S_EFAULT	(1u << 2)

static unsigned int submit_errno_bit(int err)
{
	return err == EINVAL ? S_EINVAL : err == ENOENT ? S_ENOENT :
	       err == EFAULT ? S_EFAULT : 0;
}

/* Whether [@p, @p + @len) lies in the thread's arrays at @lo..@hi. */
static bool within(uint64_t p, uint64_t len, const void *lo, const void *hi)
{
	return p >= (uintptr_t)lo && p <= (uintptr_t)hi &&
	       len <= (uintptr_t)hi - p;
}

/*
 * After a submit the kernel accepted: the queue's status, which must count
 * the jobs, and tells the engine how far the queue's jobs got (for bans).
 */
static void submit_status(struct fuzz_thread *t, const struct target *tg,
			  struct fuzz_queue *q)
{
	struct drm_trn_queue_status st = { .queue_id = q->id };
	int ret;

	snprintf(t->call, sizeof(t->call),
		 "TRN_QUEUE_STATUS(fd %d, queue %u, after a submit)", tg->fd,
		 q->id);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_QUEUE_STATUS, &st);
	if (!account(t, tg, ret, 0) || ret)
		return;
	if (q->submitted != UINT64_MAX && st.submitted_seqno != q->submitted)
		fail(t, 0, "queue %u: submitted_seqno %" PRIu64 ", %" PRIu64
		     " were submitted", q->id, (uint64_t)st.submitted_seqno,
		     q->submitted);
	queue_seen(t, tg->fd, tg->df, q, &st);
	/* Bans fdinfo counts must show: now and then, as jobs could fault. */
	if (tg->df->jobs - tg->df->bans_read_jobs >= t->ctx->ref.ban_faults)
		check_bans(t, tg->fd, tg->df, NULL, NULL);
}

/*
 * The kernel accepted @count jobs of the file: count them (each may make
 * one MMU fault, see may_be_banned()), and mark the buffers they list as
 * held by a job, every buffer of the file if the lists are not ours to read.
 */
static void submitted_jobs(struct fuzz_dfile *df, const unsigned char *arr,
			   size_t stride, unsigned int count,
			   const uint32_t *handles, const void *syncs, bool blind)
{
	unsigned int k, i, m;
	struct fuzz_bo *bo;

	df->jobs += count;
	for (k = 0; k < count && !blind; k++) {
		const struct drm_trn_job *j =
			(const struct drm_trn_job *)(arr + k * stride);
		const uint32_t *h = (const uint32_t *)(uintptr_t)j->bo_handles;

		if (j->bo_count && !within(j->bo_handles, 4ull * j->bo_count,
					   handles, syncs)) {
			blind = true;
			break;
		}
		for (i = 0; i < j->bo_count; i++) {
			bo = find_bo(df, h[i]);
			if (bo)
				bo->listed = true;
			/* A status buffer outlives its queue in the job. */
			for (m = 0; bo && bo->kernel_owned && m < df->nr_queues;
			     m++)
				if (df->queues[m].status_handle == h[i])
					df->queues[m].status_listed = true;
		}
	}
	for (i = 0; blind && i < df->nr_bos; i++)
		df->bos[i].listed = true;
	for (i = 0; blind && i < df->nr_queues; i++)
		df->queues[i].status_listed = true;
}

/*
 * DRM_IOCTL_TRN_SUBMIT: 1-16 jobs (or a count out of range) of the file's
 * queues or none, each a stream in the file's command buffer (valid,
 * mutated or random bytes, defused), its buffers, in- and out-syncs, with
 * a few mutations of any field. The model is a set: every argument error
 * present must make the call fail with one of their errnos (the kernel's
 * order of checks decides which); errors that depend on state the engine
 * does not know (whether a syncobj point has a fence, handles it could not
 * remember) are allowed but not required. A failed call must not move the
 * queue's submitted_seqno; a successful one numbers its jobs on from it.
 */
static void gen_submit(struct fuzz_thread *t, const struct target *tg)
{
	const struct drm_trn_device_info *ref = &t->ctx->ref;
	struct fuzz_dfile *df = tg->df;
	unsigned char *arr = t->big;		/* the jobs */
	uint32_t *handles = (uint32_t *)(t->big + 40960);
	struct drm_trn_sync *syncs = (struct drm_trn_sync *)(t->big + 49152);
	const void *big_end = t->big + BIG_SIZE;
	struct fuzz_ptr jp = { (uintptr_t)arr, BIG_SIZE, "jobs" };
	unsigned int count, gen, i, k, m, nh = 0, ns = 0;
	unsigned int errs = 0, maybe = 0;
	bool have_cmd, unknown = false, blind = false, top_err, state;
	struct drm_trn_submit s, *us;
	struct fuzz_queue *q;
	enum arg_kind kind;
	size_t stride;
	int ret;

	have_cmd = tg->kind == T_FILE && cmd_bo(t, tg);
	memset(&s, 0, sizeof(s));
	s.queue_id = pick_queue_id(t, tg);
	count = 1 + below(t, one_in(t, 4) ? 16 : 3);
	s.job_size = sizeof(struct drm_trn_job);
	switch (below(t, 12)) {
	case 0:
		s.job_size = 72 + 8 * below(t, 8);	/* a newer caller */
		break;
	case 1:
		s.job_size = below(t, 64);
		break;
	case 2:
		s.job_size = one_in(t, 2) ? 4097 + below(t, 100) : rnd_u32(t);
		break;
	default:
		break;
	}
	if (one_in(t, 16))
		count = one_in(t, 2) ? 0 : DRM_TRN_SUBMIT_MAX_JOBS + 1 +
					   below(t, 100);
	/* One call in four does not wait for room in the queue. */
	if (one_in(t, 4))
		s.flags = DRM_TRN_SUBMIT_NONBLOCK;
	if (one_in(t, 16))
		s.flags = rnd_bits(t);
	top_err = s.flags & ~DRM_TRN_SUBMIT_NONBLOCK || !count ||
		  count > DRM_TRN_SUBMIT_MAX_JOBS || s.job_size < 64 ||
		  s.job_size > 4096;
	if (top_err)
		errs |= S_EINVAL;
	stride = s.job_size >= 64 && s.job_size <= 128 ? s.job_size : 64;
	if (stride != s.job_size && !errs)
		unknown = blind = true;	/* the kernel reads what we did not write */
	/* Jobs past the 16th are zero: only counts the kernel refuses. */
	gen = count < 16 ? count : 16;
	memset(arr, 0, stride * (count < 300 ? count : 300));

	for (k = 0; k < gen; k++) {
		struct drm_trn_job *j = (struct drm_trn_job *)(arr + k * stride);
		unsigned int slot = below(t, CMD_SLOTS);
		uint32_t nbo, nin, nout;

		if (have_cmd && df->cmd_map) {
			j->cmd_va = df->cmd_va + slot * CMD_SLOT;
			j->cmd_size = (uint32_t)make_stream(t, df, slot);
		} else if (have_cmd) {
			j->cmd_va = df->cmd_va + slot * CMD_SLOT;
			j->cmd_size = 8 * (1 + below(t, 8));
		} else {
			j->cmd_va = ref->va_start + 8 * below(t, 1u << 20);
			j->cmd_size = 8 * (1 + below(t, 8));
		}
		/* The buffers: the command buffer and others, maybe wrong. */
		j->bo_handles = (uintptr_t)(handles + nh);
		nbo = 0;
		if (have_cmd && !one_in(t, 8))
			handles[nh + nbo++] = df->cmd_handle;
		for (m = below(t, 3); m; m--)
			handles[nh + nbo++] = pick_bo_handle(t, tg);
		j->bo_count = nbo;
		nh += nbo;
		/* In-syncs: queue timelines and the file's syncobjs. */
		nin = below(t, 4) ? 0 : 1 + below(t, 2);
		j->in_syncs = (uintptr_t)(syncs + ns);
		for (m = 0; m < nin; m++, ns++) {
			memset(&syncs[ns], 0, sizeof(syncs[ns]));
			if (df && df->nr_queues && one_in(t, 2)) {
				const struct fuzz_queue *fq =
					&df->queues[below(t, df->nr_queues)];

				syncs[ns].handle = fq->syncobj;
				syncs[ns].point =
					fq->submitted != UINT64_MAX &&
					fq->submitted ?
					1 + below(t, (uint32_t)fq->submitted) :
					below(t, 4);
			} else {
				syncs[ns].handle = pick_syncobj(t, tg);
				syncs[ns].point = one_in(t, 2) ? 0 : below(t, 8);
			}
		}
		j->in_count = nin;
		nout = below(t, 4) ? 0 : 1 + below(t, 2);
		j->out_syncs = (uintptr_t)(syncs + ns);
		for (m = 0; m < nout; m++, ns++) {
			memset(&syncs[ns], 0, sizeof(syncs[ns]));
			syncs[ns].handle = pick_syncobj(t, tg);
			syncs[ns].point = one_in(t, 2) ? 0 : 1 + below(t, 64);
		}
		j->out_count = nout;
		/* Output, ignored on input. */
		j->seqno = one_in(t, 4) ? rnd64(t) : 0;

		/* About one submit in three has a mutated job. */
		for (m = below(t, 3 * gen) ? 0 : 1 + below(t, 2); m; m--) {
			switch (below(t, 12)) {
			case 0:
				j->cmd_va += 1 + below(t, 7);
				break;
			case 1:
				j->cmd_va = one_in(t, 2) ? below(t, 1u << 20) :
					    rnd64(t);
				break;
			case 2:
				j->cmd_size = one_in(t, 2) ? 0 :
					      one_in(t, 2) ? 1 + below(t, 7) :
					      DRM_TRN_JOB_MAX_CMD_SIZE + 8;
				break;
			case 3:
				j->flags = rnd_bits(t);
				break;
			case 4:
				j->pad = rnd_bits(t);
				break;
			case 5:
				j->bo_count = DRM_TRN_JOB_MAX_BOS + 1 +
					      below(t, 10);
				break;
			case 6:
				j->bo_handles = pick_ptr(t, 0).addr;
				break;
			case 7:
				j->in_count = DRM_TRN_JOB_MAX_FENCES + 1;
				break;
			case 8:
				j->out_count = DRM_TRN_JOB_MAX_FENCES + 1;
				break;
			case 9:
				j->in_syncs = pick_ptr(t, 0).addr;
				break;
			case 10:
				j->out_syncs = pick_ptr(t, 0).addr;
				break;
			default:
				/* A bad sync flag, or a duplicate buffer. */
				if (j->in_count && within(j->in_syncs, 16, syncs,
							  big_end))
					((struct drm_trn_sync *)(uintptr_t)
					 j->in_syncs)->flags = rnd_bits(t);
				else if (nbo > 1)	/* this job's own */
					handles[nh - 1] = handles[nh - 2];
				break;
			}
		}
		if (stride > 64 && one_in(t, 4))
			arr[k * stride + 64 + below(t, (uint32_t)stride - 64)] =
				(unsigned char)(1 + below(t, 255));
	}
	s.jobs = (uintptr_t)arr;
	if (one_in(t, 16)) {
		jp = pick_ptr(t, 0);
		s.jobs = jp.addr;
		unknown = blind = true;	/* some memory, or none */
	}

	/* The model of each job the kernel will read. */
	for (k = 0; k < gen && !unknown && !errs; k++) {
		const struct drm_trn_job *j =
			(const struct drm_trn_job *)(arr + k * stride);
		uint64_t va_end = ref->va_start + ref->va_size;

		if (j->flags || j->pad || !j->cmd_size || j->cmd_size % 8 ||
		    j->cmd_size > DRM_TRN_JOB_MAX_CMD_SIZE || j->cmd_va % 8 ||
		    j->cmd_va < ref->va_start ||
		    j->cmd_va > va_end - j->cmd_size ||
		    j->bo_count > DRM_TRN_JOB_MAX_BOS ||
		    j->in_count > DRM_TRN_JOB_MAX_FENCES ||
		    j->out_count > DRM_TRN_JOB_MAX_FENCES ||
		    !all_zero(arr + k * stride + 64, stride - 64)) {
			errs |= S_EINVAL;
			continue;
		}
		/* Arrays at pick_ptr() addresses: contents unknown. */
		if ((j->bo_count && !within(j->bo_handles, 4ull * j->bo_count,
					    handles, syncs)) ||
		    (j->in_count && !within(j->in_syncs, 16ull * j->in_count,
					    syncs, big_end)) ||
		    (j->out_count && !within(j->out_syncs, 16ull * j->out_count,
					     syncs, big_end))) {
			unknown = blind = true;
			break;
		}
		for (i = 0; i < j->bo_count; i++) {
			const uint32_t *h = (const uint32_t *)(uintptr_t)
					    j->bo_handles;

			if (!df || !find_bo(df, h[i]))
				errs |= S_ENOENT;
			for (m = 0; m < i; m++)
				if (h[m] == h[i])
					errs |= S_EINVAL;
		}
		for (i = 0; i < j->in_count + j->out_count; i++) {
			const struct drm_trn_sync *sy = i < j->in_count ?
				(const void *)(uintptr_t)j->in_syncs :
				(const void *)(uintptr_t)j->out_syncs;
			bool known = false;

			sy += i < j->in_count ? i : i - j->in_count;
			if (sy->flags)
				errs |= S_EINVAL;
			for (m = 0; df && m < df->nr_syncobjs; m++)
				known |= df->syncobjs[m] == sy->handle;
			/* Syncobjs made behind the engine's back exist too. */
			if (!known)
				maybe |= S_ENOENT;
			/* A point waited for must have a fence already. */
			if (i < j->in_count)
				maybe |= S_EINVAL;
		}
	}

	s.job_count = count;
	us = place_arg(t, &s, sizeof(s), &kind);
	q = tg->kind == T_FILE ? find_queue(df, s.queue_id) : NULL;
	snprintf(t->call, sizeof(t->call),
		 "TRN_SUBMIT(fd %d, %s, queue %u flags %#x jobs %s count %u size %u; first cmd %#" PRIx64 "+%u bos %u in %u out %u)",
		 tg->fd, arg_kind_names[kind], s.queue_id, s.flags, jp.name,
		 s.job_count, s.job_size,
		 (uint64_t)((struct drm_trn_job *)arr)->cmd_va,
		 ((struct drm_trn_job *)arr)->cmd_size,
		 ((struct drm_trn_job *)arr)->bo_count,
		 ((struct drm_trn_job *)arr)->in_count,
		 ((struct drm_trn_job *)arr)->out_count);
	/*
	 * SUBMIT only reads its argument, so a read-only one is no fault:
	 * the read-only page's contents run, whose flags (a query's size)
	 * it refuses.
	 */
	t->submit_call = true;
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_SUBMIT, us);
	account(t, tg, ret, kind == A_NORMAL ? MODEL_ANY :
			    kind == A_RO ? -EINVAL : -EFAULT);
	t->submit_call = false;
	if (tg->kind != T_FILE || kind != A_NORMAL)
		return;
	if (!q && !exact(tg, A_NORMAL))
		unknown = true;
	else if (!q)
		errs |= S_ENOENT;
	if (!df->exact || !df->stable)
		unknown = true;

	/*
	 * After its own fields and the queue's number, and before any job,
	 * SUBMIT looks at the queue's state: banned (ECANCELED), or full with
	 * DRM_TRN_SUBMIT_NONBLOCK (EAGAIN).
	 */
	state = !top_err && q;
	if (ret == -ECANCELED || ret == -EAGAIN) {
		if (!state) {
			if (top_err || df->exact)
				fail(t, -ret, "returned %s, expected %s%#x",
				     errname(-ret), errs ? "one of " : "",
				     errs | maybe);
		} else if (ret == -ECANCELED) {
			queue_banned(t, tg->fd, df, q, "refused jobs");
		} else if (!(s.flags & DRM_TRN_SUBMIT_NONBLOCK)) {
			fail(t, EAGAIN, "EAGAIN without DRM_TRN_SUBMIT_NONBLOCK");
		} else if (q->banned && df->exact) {
			fail(t, EAGAIN, "banned queue %u: EAGAIN, expected ECANCELED",
			     q->id);
		} else if (df->exact && q->submitted != UINT64_MAX &&
			   q->submitted - q->completed + count <=
			   t->ctx->ref.queue_depth) {
			fail(t, EAGAIN, "EAGAIN: at most %" PRIu64 " + %u of %u jobs",
			     q->submitted - q->completed, count,
			     t->ctx->ref.queue_depth);
		}
	} else if (state && q->banned && df->exact &&
		   !(ret == -ENODEV && !df->stable)) {
		fail(t, -ret, "banned queue %u: returned %s, expected ECANCELED",
		     q->id, ret ? errname(-ret) : "0");
	} else if (!unknown) {
		int e = -ret;
		unsigned int bit = submit_errno_bit(e);

		if (!ret && errs)
			fail(t, 0, "succeeded, expected a failure (%#x)", errs);
		else if (ret && !resource_errno(e) && !((errs | maybe) & bit))
			fail(t, e, "returned %s, expected %s%#x", errname(e),
			     errs ? "one of " : "success or ", errs | maybe);
	}
	if (!ret)
		submitted_jobs(df, arr, stride, count, handles, syncs,
			       blind || jp.addr != (uintptr_t)arr);
	/* Any other answer came past the queue's state: not banned then. */
	if (state && df->exact && ret != -ECANCELED &&
	    !(ret == -ENODEV && !df->stable))
		queue_ok(df, q);
	if (!q)
		return;
	if (ret) {
		/* A failed call queues nothing. */
		struct drm_trn_queue_status st = { .queue_id = q->id };

		if (q->submitted != UINT64_MAX &&
		    !do_ioctl(tg->fd, DRM_IOCTL_TRN_QUEUE_STATUS, &st)) {
			if (st.submitted_seqno != q->submitted)
				fail(t, 0, "failed submit moved submitted_seqno from %"
				     PRIu64 " to %" PRIu64, q->submitted,
				     (uint64_t)st.submitted_seqno);
			queue_seen(t, tg->fd, df, q, &st);
		}
		return;
	}
	if (!df->exact || !df->stable) {
		q->submitted = UINT64_MAX;
		return;
	}
	/* All of them were queued; with @blind, numbered where we cannot see. */
	for (k = 0; k < count && !blind && q->submitted != UINT64_MAX; k++) {
		uint64_t seq;

		memcpy(&seq, arr + k * stride + offsetof(struct drm_trn_job,
							  seqno), 8);
		if (seq != q->submitted + 1 + k) {
			fail(t, 0, "job %u got seqno %" PRIu64 ", expected %"
			     PRIu64, k, seq, q->submitted + 1 + k);
			break;
		}
	}
	if (q->submitted != UINT64_MAX)
		q->submitted += count;
	submit_status(t, tg, q);
}

/*
 * QUEUE_FENCE: the engine models only kernel queues (user-mode ones it
 * destroys as they are made), so every call it can judge fails: bad
 * flags, padding or job number, a queue that is not there (-ENOENT) or
 * that is a kernel queue (-EINVAL).
 */
static void gen_queue_fence(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_trn_queue_fence c, *uc;
	enum arg_kind kind;
	int ret, model = MODEL_ANY;
	bool own;

	memset(&c, 0, sizeof(c));
	c.queue_id = pick_queue_id(t, tg);
	c.flags = one_in(t, 2) ? DRM_TRN_QUEUE_FENCE_OWN_TIMELINE :
		  one_in(t, 4) ? rnd_bits(t) : 0;
	c.seqno = one_in(t, 4) ? 0 : one_in(t, 2) ? 1 + below(t, 8) :
					 rnd64(t);
	if (!(c.flags & DRM_TRN_QUEUE_FENCE_OWN_TIMELINE) || one_in(t, 8))
		c.syncobj = pick_syncobj(t, tg);
	if (one_in(t, 4))
		c.point = rnd64(t);
	if (one_in(t, 8))
		c.pad = rnd_bits(t);
	own = c.flags & DRM_TRN_QUEUE_FENCE_OWN_TIMELINE;
	uc = place_arg(t, &c, sizeof(c), &kind);
	if (c.flags & ~DRM_TRN_QUEUE_FENCE_OWN_TIMELINE || c.pad || !c.seqno ||
	    (own && (c.syncobj || c.point)))
		model = -EINVAL;
	else if (exact(tg, kind))
		model = find_queue(tg->df, c.queue_id) ? -EINVAL : -ENOENT;
	model = arg_model(kind, model);
	snprintf(t->call, sizeof(t->call),
		 "TRN_QUEUE_FENCE(fd %d, %s, queue %u flags %#x seqno %" PRIu64 " syncobj %u point %" PRIu64 " pad %#x)",
		 tg->fd, arg_kind_names[kind], c.queue_id, c.flags,
		 (uint64_t)c.seqno, c.syncobj, (uint64_t)c.point, c.pad);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_QUEUE_FENCE, uc);
	account(t, tg, ret, model);
}

/* QUEUE_WAKE: as QUEUE_FENCE, nothing the engine models can be woken. */
static void gen_queue_wake(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_trn_queue_wake c, *uc;
	enum arg_kind kind;
	int ret, model = MODEL_ANY;

	memset(&c, 0, sizeof(c));
	c.queue_id = pick_queue_id(t, tg);
	c.flags = one_in(t, 4) ? rnd_bits(t) : 0;
	uc = place_arg(t, &c, sizeof(c), &kind);
	if (c.flags)
		model = -EINVAL;
	else if (exact(tg, kind))
		model = find_queue(tg->df, c.queue_id) ? -EINVAL : -ENOENT;
	model = arg_model(kind, model);
	snprintf(t->call, sizeof(t->call),
		 "TRN_QUEUE_WAKE(fd %d, %s, queue %u flags %#x)", tg->fd,
		 arg_kind_names[kind], c.queue_id, c.flags);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_QUEUE_WAKE, uc);
	account(t, tg, ret, model);
}

/*
 * The structure-aware generators of the driver's ioctls. A new ioctl gets
 * an entry here and in driver_ioctls[] below; see Documentation/fuzzing.md.
 */
static const struct trn_ioctl_gen {
	const char *name;
	void (*gen)(struct fuzz_thread *t, const struct target *tg);
	unsigned int weight;
} trn_ioctl_gens[] = {
	{ "TRN_QUERY", gen_query, 3 },
	{ "TRN_BO_CREATE", gen_bo_create, 3 },
	{ "TRN_BO_INFO", gen_bo_info, 2 },
	{ "TRN_BO_USERPTR", gen_bo_userptr, 2 },
	{ "TRN_QUEUE_CREATE", gen_queue_create, 2 },
	{ "TRN_QUEUE_DESTROY", gen_queue_destroy, 1 },
	{ "TRN_SUBMIT", gen_submit, 4 },
	{ "TRN_QUEUE_STATUS", gen_queue_status, 2 },
	{ "TRN_QUEUE_FENCE", gen_queue_fence, 1 },
	{ "TRN_QUEUE_WAKE", gen_queue_wake, 1 },
};

static void act_trn(struct fuzz_thread *t)
{
	unsigned int i, total = 0, pick;
	struct target tg;

	for (i = 0; i < ARRAY_SIZE(trn_ioctl_gens); i++)
		total += trn_ioctl_gens[i].weight;
	pick = below(t, total);
	for (i = 0; i < ARRAY_SIZE(trn_ioctl_gens); i++) {
		if (pick < trn_ioctl_gens[i].weight)
			break;
		pick -= trn_ioctl_gens[i].weight;
	}
	pick_target(t, &tg);
	trn_ioctl_gens[i].gen(t, &tg);
}

/* ---- driver range: random numbers, directions, sizes, bytes ---- */

/* Random bytes must not make a host buffer that eats the guest's memory. */
static void sanitize_bo_create(struct fuzz_thread *t, unsigned char *arg)
{
	struct drm_trn_bo_create c;

	memcpy(&c, arg, sizeof(c));
	if (c.placement == DRM_TRN_PLACEMENT_HOST && c.size > MAX_HOST_BO &&
	    c.size <= t->ctx->ref.va_size / 2)
		c.size &= MAX_HOST_BO - 1;
	memcpy(arg, &c, sizeof(c));
}

/*
 * Every ioctl of the driver, in DRM_COMMAND_BASE order: its argument size,
 * the offsets of user pointers in it (-1 ends the list; random bytes there
 * are replaced by pointers the kernel may safely write through), whether
 * it can create a handle, and a fix-up for values that would harm the
 * guest rather than test the driver.
 */
static const struct trn_driver_ioctl {
	unsigned int nr;
	const char *name;
	unsigned int size;
	int ptr_off[2];
	bool creates;
	void (*sanitize)(struct fuzz_thread *t, unsigned char *arg);
} driver_ioctls[] = {
	{ DRM_TRN_QUERY, "TRN_QUERY", sizeof(struct drm_trn_query),
	  { offsetof(struct drm_trn_query, data), -1 }, false, NULL },
	{ DRM_TRN_BO_CREATE, "TRN_BO_CREATE", sizeof(struct drm_trn_bo_create),
	  { -1, -1 }, true, sanitize_bo_create },
	{ DRM_TRN_BO_INFO, "TRN_BO_INFO", sizeof(struct drm_trn_bo_info),
	  { -1, -1 }, false, NULL },
	{ DRM_TRN_BO_USERPTR, "TRN_BO_USERPTR",
	  sizeof(struct drm_trn_bo_userptr),
	  { offsetof(struct drm_trn_bo_userptr, addr), -1 }, true, NULL },
	/*
	 * Queues and jobs change what the engine models: "creates"; but a
	 * destroyed queue is modelled from the argument (act_driver()).
	 */
	{ DRM_TRN_QUEUE_CREATE, "TRN_QUEUE_CREATE",
	  sizeof(struct drm_trn_queue_create), { -1, -1 }, true, NULL },
	{ DRM_TRN_QUEUE_DESTROY, "TRN_QUEUE_DESTROY",
	  sizeof(struct drm_trn_queue_destroy), { -1, -1 }, false, NULL },
	{ DRM_TRN_SUBMIT, "TRN_SUBMIT", sizeof(struct drm_trn_submit),
	  { offsetof(struct drm_trn_submit, jobs), -1 }, true, NULL },
	{ DRM_TRN_QUEUE_STATUS, "TRN_QUEUE_STATUS",
	  sizeof(struct drm_trn_queue_status), { -1, -1 }, false, NULL },
	/* A fence in a syncobj is nothing the engine models. */
	{ DRM_TRN_QUEUE_FENCE, "TRN_QUEUE_FENCE",
	  sizeof(struct drm_trn_queue_fence), { -1, -1 }, false, NULL },
	{ DRM_TRN_QUEUE_WAKE, "TRN_QUEUE_WAKE",
	  sizeof(struct drm_trn_queue_wake), { -1, -1 }, false, NULL },
};

static void fill_random(struct fuzz_thread *t, unsigned char *p, size_t len)
{
	size_t i;
	uint64_t v;

	for (i = 0; i < len; i += sizeof(v)) {
		switch (below(t, 4)) {
		case 0:
			v = 0;
			break;
		case 1:
			v = rnd_u32(t);
			break;
		default:
			v = rnd64(t);
			break;
		}
		memcpy(p + i, &v, len - i < sizeof(v) ? len - i : sizeof(v));
	}
}

/*
 * Types whose numbers the VFS answers for any file before the driver sees
 * them (FIBMAP and FIGETBSZ, the FIO* of 'T', FS_IOC_*FLAGS, FIFREEZE and
 * FS_IOC_FSGETXATTR, FICLONE, FS_IOC_GETFSUUID): FIGETBSZ succeeds on a
 * device file, and freezing devtmpfs would hang the guest.
 */
static bool vfs_ioctl_type(unsigned int type)
{
	return type == 0x00 || type == 'T' || type == 'f' || type == 'X' ||
	       type == 0x94 || type == 0x15;
}

/*
 * Whether a driver ioctl's handler may have run. DRM copies in the
 * argument only when the number says _IOC_WRITE (and zero-fills the rest),
 * so without it a bad pointer fails only on the copy back, after the
 * handler did its work; QUEUE_CREATE with an all-zero argument makes a
 * queue. Every known ioctl that creates is _IOW or _IOWR.
 */
static bool handler_may_have_run(unsigned int dir, unsigned int size,
				 enum arg_kind kind, int ret)
{
	bool unreadable = kind == A_NULL || kind == A_NONE ||
			  kind == A_STRADDLE;

	if (unreadable && (dir & _IOC_WRITE) && size)
		return false;	/* EFAULT copying in: nothing ran */
	/* After a handler that succeeded, only the copy back can fail. */
	return !ret || ret == -EFAULT;
}

static void act_driver(struct fuzz_thread *t)
{
	static const unsigned int sizes[] = { 0, 1, 8, 24, 48, 56, 64, 128,
					      129, 4096 };
	const struct trn_driver_ioctl *known = NULL;
	unsigned char view[256] = { 0 };
	unsigned int nr, type = DRM_IOCTL_BASE, dir, size, i, n_known;
	enum arg_kind kind = A_NORMAL;
	unsigned long cmd;
	struct target tg;
	struct fuzz_ptr p;
	void *arg;
	int ret, model = MODEL_ANY;

	_Static_assert(sizeof(struct drm_trn_queue_status) <= sizeof(view),
		       "the view holds any of the driver's arguments");

	n_known = ARRAY_SIZE(driver_ioctls);
	switch (below(t, 10)) {
	case 0:
		/* Not a DRM ioctl at all. */
		do {
			type = below(t, 256);
		} while (type == DRM_IOCTL_BASE || vfs_ioctl_type(type));
		nr = below(t, 256);
		break;
	case 1:
	case 2:
	case 3:
	case 4:
		nr = DRM_COMMAND_BASE + below(t, n_known + 2);
		break;
	default:
		nr = DRM_COMMAND_BASE +
		     below(t, DRM_COMMAND_END - DRM_COMMAND_BASE);
		break;
	}
	dir = below(t, 4);
	if (one_in(t, 2))
		size = sizes[below(t, ARRAY_SIZE(sizes))];
	else
		size = below(t, ARG_SIZE);

	fill_random(t, t->arg, size);
	fill_random(t, t->arg + ARG_SIZE - size / 2, size / 2);
	if (type == DRM_IOCTL_BASE && nr - DRM_COMMAND_BASE < n_known)
		known = &driver_ioctls[nr - DRM_COMMAND_BASE];
	if (known) {
		if (one_in(t, 2))
			size = known->size;
		fill_random(t, t->arg, known->size);
		for (i = 0; i < ARRAY_SIZE(known->ptr_off) &&
			    known->ptr_off[i] >= 0; i++) {
			p = pick_ptr(t, 0);
			memcpy(t->arg + known->ptr_off[i], &p.addr,
			       sizeof(p.addr));
		}
		if (known->sanitize)
			known->sanitize(t, t->arg);
	}
	cmd = _IOC(dir, type, nr, size);

	arg = t->arg;
	if (one_in(t, 10)) {
		kind = (enum arg_kind)(1 + below(t, 4));
		arg = kind == A_NULL ? NULL :
		      kind == A_NONE ? (void *)t->ctx->none :
		      kind == A_RO ? (void *)t->ctx->ro :
		      (void *)(t->arg + ARG_SIZE - size / 2);
	}

	pick_target(t, &tg);
	if (type != DRM_IOCTL_BASE)
		model = -ENOTTY;
	else if (nr - DRM_COMMAND_BASE >= n_known)
		model = -EINVAL;
	snprintf(t->call, sizeof(t->call),
		 "ioctl(fd %d, _IOC(dir %u, type %#x, nr %#x, size %u) [%s], %s)",
		 tg.fd, dir, type, nr, size, known ? known->name : "unknown",
		 arg_kind_names[kind]);
	t->submit_call = known && known->nr == DRM_TRN_SUBMIT;
	ret = do_ioctl(tg.fd, cmd, arg);
	/* A number the tables do not know answers: a new ioctl landed. */
	if (model == -EINVAL && tg.kind == T_FILE && ret != -EINVAL &&
	    !(ret == -ENODEV && !tg.df->stable)) {
		t->st.calls++;
		fail(t, ret < 0 ? -ret : 0,
		     "driver ioctl nr %#x answers %s: add it to the fuzzer (driver_ioctls[], trn_ioctl_gens[])",
		     nr, ret < 0 ? errname(-ret) : "0");
		return;
	}
	account(t, &tg, ret, model);
	t->submit_call = false;
	if (!known || tg.kind != T_FILE)
		return;
	/*
	 * What the handler saw: zeros without _IOC_WRITE, else the argument
	 * up to the size, then zeros.
	 */
	if (dir & _IOC_WRITE && (kind == A_NORMAL || kind == A_RO))
		memcpy(view, kind == A_RO ? t->ctx->ro : t->arg,
		       size < known->size ? size : known->size);
	/* Random jobs that reached a banned queue: it may be banned. */
	if (ret == -ECANCELED) {
		struct drm_trn_submit sub;
		struct fuzz_queue *q;

		memcpy(&sub, view, sizeof(sub));
		q = find_queue(tg.df, sub.queue_id);
		if (q)
			queue_banned(t, tg.fd, tg.df, q, "refused random jobs");
		else if (tg.df->exact)
			fail(t, ECANCELED, "ECANCELED for queue %u, which the file does not have",
			     sub.queue_id);
	}
	/*
	 * QUEUE_DESTROY copies nothing back: 0 is its handler's, which
	 * destroyed the queue it saw, status buffer handle and all.
	 */
	if (known->nr == DRM_TRN_QUEUE_DESTROY && !ret) {
		struct drm_trn_queue_destroy d;

		memcpy(&d, view, sizeof(d));
		queue_destroyed(tg.df, d.queue_id, t->ctx->page_size);
	}
	/*
	 * A handle or queue may exist that the engine was not told about,
	 * unless the EFAULT was the copy back's and the handler refused what
	 * it saw.
	 */
	if (known->creates && handler_may_have_run(dir, size, kind, ret) &&
	    (ret != -EFAULT || kind == A_NORMAL ||
	     !handler_refuses(t, &tg, known->nr, view)))
		tg.df->exact = false;
}

/* ---- core DRM ioctls: a safe subset ---- */

/*
 * An array of @count handles for the kernel to read, in the thread's big
 * buffer or at a bad address. Counts stay small: a huge count only makes
 * the core allocate count * 8 bytes, which warns in the page allocator
 * (a core DRM issue, see Documentation/fuzzing.md).
 */
static uint64_t handle_array(struct fuzz_thread *t, const struct target *tg,
			     uint32_t count, const char **name)
{
	uint32_t *h = (uint32_t *)t->big, i;
	struct fuzz_ptr p;

	for (i = 0; i < count && i < BIG_SIZE / 8; i++)
		h[i] = pick_syncobj(t, tg);
	if (one_in(t, 8)) {
		p = pick_ptr(t, 0);
		*name = p.name;
		return p.addr;
	}
	*name = "handles";
	return (uintptr_t)h;
}

static uint32_t pick_count(struct fuzz_thread *t)
{
	switch (below(t, 8)) {
	case 0:
		return 0;
	case 1:
		return below(t, 1024);
	default:
		return 1 + below(t, 4);
	}
}

/* Absolute CLOCK_MONOTONIC timeouts that never wait long. */
static int64_t pick_timeout(struct fuzz_thread *t)
{
	struct timespec ts;
	int64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	switch (below(t, 4)) {
	case 0:
		return 0;
	case 1:
		return now - 1000;
	case 2:
		return -1 - (int64_t)below(t, 1000);
	default:
		return now + below(t, MAX_WAIT_NS);
	}
}

static int pick_foreign_fd(struct fuzz_thread *t, const struct target *tg)
{
	switch (below(t, 6)) {
	case 0:
		return -1;
	case 1:
		return t->ctx->null_fd;
	case 2:
		return tg->fd;
	case 3:
		/* Whatever is there: never closed, only looked up. */
		return (int)below(t, 64);
	default:
		return t->sync_fd;
	}
}

static void core_version(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_version v, *uv;
	struct fuzz_ptr name = pick_ptr(t, 0), date = pick_ptr(t, 1),
			desc = pick_ptr(t, 2);
	const size_t lens[] = { 0, 1, 3, 4, 64, 4096 };
	struct fuzz_ctx *ctx = t->ctx;
	enum arg_kind kind;
	int ret, model = 0;

	memset(&v, 0, sizeof(v));
	v.name = (char *)(uintptr_t)name.addr;
	v.date = (char *)(uintptr_t)date.addr;
	v.desc = (char *)(uintptr_t)desc.addr;
	v.name_len = one_in(t, 6) ? rnd64(t) : lens[below(t, ARRAY_SIZE(lens))];
	v.date_len = one_in(t, 6) ? rnd64(t) : lens[below(t, ARRAY_SIZE(lens))];
	v.desc_len = one_in(t, 6) ? rnd64(t) : lens[below(t, ARRAY_SIZE(lens))];
	uv = place_arg(t, &v, sizeof(v), &kind);

	/* drm_copy_field(): min(len, strlen) bytes, none to a NULL buffer. */
#define COPY_FAULTS(p, len, ref) \
	((p).addr && ((len) < (ref) ? (len) : (ref)) && \
	 !ptr_ok(&(p), (len) < (ref) ? (len) : (ref)))
	if (kind != A_NORMAL)
		model = kind == A_RO ? MODEL_ANY : -EFAULT;
	else if (COPY_FAULTS(name, v.name_len, ctx->ref_name_len) ||
		 COPY_FAULTS(date, v.date_len, ctx->ref_date_len) ||
		 COPY_FAULTS(desc, v.desc_len, ctx->ref_desc_len))
		model = -EFAULT;
#undef COPY_FAULTS
	snprintf(t->call, sizeof(t->call),
		 "VERSION(fd %d, %s, name %s/%zu date %s/%zu desc %s/%zu)",
		 tg->fd, arg_kind_names[kind], name.name, v.name_len,
		 date.name, v.date_len, desc.name, v.desc_len);
	ret = do_ioctl(tg->fd, DRM_IOCTL_VERSION, uv);
	if (!account(t, tg, ret, tg->df && tg->df->stable ? model : MODEL_ANY) ||
	    ret || tg->kind != T_FILE || kind != A_NORMAL)
		return;
	if (uv->name_len != ctx->ref_name_len ||
	    uv->desc_len != ctx->ref_desc_len)
		fail(t, 0, "version lengths %zu/%zu", uv->name_len,
		     uv->desc_len);
	/* Straddling pointers all end at the same guard page: may overlap. */
	else if (ptr_ok(&name, 3) && v.name_len >= 3 &&
		 strcmp(name.name, "guard-straddle") &&
		 memcmp((void *)(uintptr_t)name.addr, "trn", 3))
		fail(t, 0, "driver name is not trn");
}

static void core_get_cap(struct fuzz_thread *t, const struct target *tg)
{
	static const uint64_t caps[] = {
		DRM_CAP_SYNCOBJ, DRM_CAP_SYNCOBJ_TIMELINE, DRM_CAP_PRIME,
		DRM_CAP_TIMESTAMP_MONOTONIC, DRM_CAP_DUMB_BUFFER, 0, 0x15,
	};
	struct drm_get_cap c = { 0 }, *uc;
	enum arg_kind kind;
	int ret;

	c.capability = one_in(t, 4) ? rnd_u32(t) :
		       caps[below(t, ARRAY_SIZE(caps))];
	c.value = rnd64(t);
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "GET_CAP(fd %d, %s, cap %#" PRIx64 ")", tg->fd,
		 arg_kind_names[kind], (uint64_t)c.capability);
	ret = do_ioctl(tg->fd, DRM_IOCTL_GET_CAP, uc);
	account(t, tg, ret, MODEL_ANY);
	/* The driver's own features. */
	if (!ret && kind == A_NORMAL && tg->kind == T_FILE &&
	    (c.capability == DRM_CAP_SYNCOBJ ||
	     c.capability == DRM_CAP_SYNCOBJ_TIMELINE) && uc->value != 1)
		fail(t, 0, "cap %#" PRIx64 " is %" PRIu64,
		     (uint64_t)c.capability, (uint64_t)uc->value);
}

static void core_set_client_cap(struct fuzz_thread *t,
				const struct target *tg)
{
	struct drm_set_client_cap c = { 0 }, *uc;
	enum arg_kind kind;
	int ret;

	c.capability = one_in(t, 4) ? rnd_u32(t) : below(t, 8);
	c.value = one_in(t, 4) ? rnd64(t) : below(t, 3);
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "SET_CLIENT_CAP(fd %d, %s, cap %#" PRIx64 " value %#" PRIx64 ")",
		 tg->fd, arg_kind_names[kind], (uint64_t)c.capability,
		 (uint64_t)c.value);
	ret = do_ioctl(tg->fd, DRM_IOCTL_SET_CLIENT_CAP, uc);
	account(t, tg, ret, MODEL_ANY);
}

static void core_gem_close(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_gem_close c = { 0 }, *uc;
	enum arg_kind kind;
	int ret, model = MODEL_ANY;

	c.handle = pick_bo_handle(t, tg);
	c.pad = one_in(t, 4) ? rnd_bits(t) : 0;
	uc = place_arg(t, &c, sizeof(c), &kind);
	if (exact(tg, kind))
		model = find_bo(tg->df, c.handle) ? 0 : -EINVAL;
	snprintf(t->call, sizeof(t->call),
		 "GEM_CLOSE(fd %d, %s, handle %u pad %#x)", tg->fd,
		 arg_kind_names[kind], c.handle, c.pad);
	ret = do_ioctl(tg->fd, DRM_IOCTL_GEM_CLOSE, uc);
	account(t, tg, ret, arg_model(kind, model));
	/* GEM_CLOSE only reads its argument: the read-only one closes too. */
	if (!ret && tg->kind == T_FILE)
		bo_closed(tg->df, kind == A_RO ? RO_HANDLE : c.handle);
}

static void core_gem_flink(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_gem_flink c = { 0 }, *uc;
	enum arg_kind kind;
	int ret;

	c.handle = pick_bo_handle(t, tg);
	c.name = rnd_u32(t);
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call), "GEM_FLINK(fd %d, %s, handle %u)",
		 tg->fd, arg_kind_names[kind], c.handle);
	ret = do_ioctl(tg->fd, DRM_IOCTL_GEM_FLINK, uc);
	account(t, tg, ret, MODEL_ANY);
}

/*
 * The thread's newest dma-buf is closed: what it held of the file it came
 * from may be freed now, or still be held by an import somewhere.
 */
static void dmabuf_close(struct fuzz_thread *t)
{
	struct fuzz_dfile *df = t->dmabuf_df;
	unsigned int i;

	if (t->dmabuf_fd >= 0)
		close(t->dmabuf_fd);
	t->dmabuf_fd = -1;
	t->dmabuf_df = NULL;
	if (!df || !df->refs || df->gen != t->dmabuf_gen)
		return;		/* that file is closed */
	charges_add(&df->linger, df->held.bos, df->held.hbm, df->held.pinned);
	memset(&df->held, 0, sizeof(df->held));
	for (i = 0; i < df->nr_bos; i++)
		df->bos[i].dmabuf = false;
}

/* memory.md: host buffers are exported, device and user memory are not. */
static void core_prime_handle_to_fd(struct fuzz_thread *t,
				    const struct target *tg)
{
	static const uint32_t flags[] = { 0, DRM_CLOEXEC, DRM_RDWR,
					  DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle c = { 0 }, *uc;
	struct fuzz_bo *bo;
	enum arg_kind kind;
	int ret, model = MODEL_ANY;

	c.handle = pick_bo_handle(t, tg);
	c.flags = one_in(t, 6) ? rnd_bits(t) : flags[below(t, 4)];
	c.fd = -1;
	uc = place_arg(t, &c, sizeof(c), &kind);
	bo = tg->kind == T_FILE ? find_bo(tg->df, c.handle) : NULL;
	if (c.flags & ~(DRM_CLOEXEC | DRM_RDWR))
		model = -EINVAL;
	else if (bo && bo->kernel_owned)
		model = -EOPNOTSUPP;	/* could be mapped writable elsewhere */
	else if (bo && bo->placement == DRM_TRN_PLACEMENT_HOST)
		model = MODEL_RESOURCE;
	else if (bo && (bo->placement == DRM_TRN_PLACEMENT_HBM ||
			bo->placement == DRM_TRN_PLACEMENT_USERPTR))
		model = -EOPNOTSUPP;
	else if (!bo && exact(tg, kind))
		model = -ENOENT;
	snprintf(t->call, sizeof(t->call),
		 "PRIME_HANDLE_TO_FD(fd %d, %s, handle %u flags %#x)", tg->fd,
		 arg_kind_names[kind], c.handle, c.flags);
	ret = do_ioctl(tg->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, uc);
	account(t, tg, ret, arg_model(kind, model));
	/* The read-only argument (handle 1) is exported before the copy back fails. */
	if (tg->kind == T_FILE && kind == A_RO && (!ret || ret == -EFAULT)) {
		bo = find_bo(tg->df, RO_HANDLE);
		if (bo)
			bo->exported = true;
	}
	if (ret || kind != A_NORMAL || uc->fd < 0)
		return;
	/* Keep the newest export for imports. */
	dmabuf_close(t);
	t->dmabuf_fd = uc->fd;
	if (bo) {
		bo->exported = true;	/* the dma-buf holds it */
		bo->dmabuf = true;
		t->dmabuf_df = tg->df;
		t->dmabuf_gen = tg->df->gen;
	}
}

/*
 * A dma-buf was imported as @handle. A buffer of the same device comes
 * back as itself, charged to whoever created it; a foreign one is charged
 * to the first file of the device that imported it, which may be this one
 * (memory.md): BO_INFO says which it is, and its size.
 */
static void imported(struct fuzz_thread *t, const struct target *tg,
		     uint32_t handle)
{
	struct drm_trn_bo_info info = { .handle = handle };
	struct fuzz_dfile *df = tg->df;
	struct fuzz_bo *bo;
	int ret;

	if (find_bo(df, handle))
		return;		/* one of the file's own, back */
	bo = track_bo(df, handle);
	if (!bo)
		return;
	snprintf(t->call, sizeof(t->call), "TRN_BO_INFO(fd %d, imported handle %u)",
		 tg->fd, handle);
	ret = do_ioctl(tg->fd, DRM_IOCTL_TRN_BO_INFO, &info);
	account(t, tg, ret, df->stable ? MODEL_RESOURCE : MODEL_ANY);
	if (ret) {
		df->charge_unbounded = true;
		return;
	}
	bo->size = info.size;
	bo->va = info.va;
	bo->placement = info.placement;
	bo->mmap_offset = info.mmap_offset;
	bo->maybe_charged = info.placement == DRM_TRN_PLACEMENT_IMPORTED;
}

static void core_prime_fd_to_handle(struct fuzz_thread *t,
				    const struct target *tg)
{
	struct drm_prime_handle c = { 0 }, *uc;
	enum arg_kind kind;
	int ret;

	make_room(t, tg);
	c.fd = one_in(t, 2) ? t->dmabuf_fd : pick_foreign_fd(t, tg);
	c.flags = one_in(t, 4) ? rnd_bits(t) : 0;
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "PRIME_FD_TO_HANDLE(fd %d, %s, fd %d flags %#x)", tg->fd,
		 arg_kind_names[kind], c.fd, c.flags);
	ret = do_ioctl(tg->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, uc);
	account(t, tg, ret, MODEL_ANY);
	if (tg->kind != T_FILE)
		return;
	if (kind == A_RO && (!ret || ret == -EFAULT))
		tg->df->exact = false;
	if (!ret && kind == A_NORMAL)
		imported(t, tg, uc->handle);
}

static void core_syncobj_create(struct fuzz_thread *t,
				const struct target *tg)
{
	struct drm_syncobj_create c = { 0 }, *uc;
	enum arg_kind kind;
	int ret;

	c.flags = one_in(t, 4) ? rnd_bits(t) :
		  (one_in(t, 2) ? DRM_SYNCOBJ_CREATE_SIGNALED : 0);
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "SYNCOBJ_CREATE(fd %d, %s, flags %#x)", tg->fd,
		 arg_kind_names[kind], c.flags);
	ret = do_ioctl(tg->fd, DRM_IOCTL_SYNCOBJ_CREATE, uc);
	account(t, tg, ret, MODEL_ANY);
	if (!ret && kind == A_NORMAL && tg->kind == T_FILE)
		remember_syncobj(tg->df, uc->handle);
}

static void core_syncobj_destroy(struct fuzz_thread *t,
				 const struct target *tg)
{
	struct drm_syncobj_destroy c = { 0 }, *uc;
	enum arg_kind kind;
	int ret;

	c.handle = pick_syncobj(t, tg);
	c.pad = one_in(t, 6) ? rnd_bits(t) : 0;
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "SYNCOBJ_DESTROY(fd %d, %s, handle %u pad %#x)", tg->fd,
		 arg_kind_names[kind], c.handle, c.pad);
	ret = do_ioctl(tg->fd, DRM_IOCTL_SYNCOBJ_DESTROY, uc);
	account(t, tg, ret,
		kind == A_NORMAL && c.pad ? -EINVAL : MODEL_ANY);
	if (!ret && kind == A_NORMAL && tg->kind == T_FILE)
		forget_syncobj(tg->df, c.handle);
}

static uint32_t pick_wait_flags(struct fuzz_thread *t)
{
	uint32_t f = below(t, 16);	/* ALL, FOR_SUBMIT, AVAILABLE, DEADLINE */

	return one_in(t, 8) ? f | rnd_bits(t) : f;
}

static void core_syncobj_wait(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_syncobj_wait c, *uc;
	const char *hname;
	enum arg_kind kind;
	int ret;

	memset(&c, 0, sizeof(c));
	c.count_handles = pick_count(t);
	c.handles = handle_array(t, tg, c.count_handles, &hname);
	c.timeout_nsec = pick_timeout(t);
	c.flags = pick_wait_flags(t);
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "SYNCOBJ_WAIT(fd %d, %s, %u %s flags %#x timeout %" PRId64 ")",
		 tg->fd, arg_kind_names[kind], c.count_handles, hname, c.flags,
		 (int64_t)c.timeout_nsec);
	ret = do_ioctl(tg->fd, DRM_IOCTL_SYNCOBJ_WAIT, uc);
	account(t, tg, ret, MODEL_ANY);
}

static uint64_t point_array(struct fuzz_thread *t, uint32_t count,
			    const char **name)
{
	uint64_t *pts = (uint64_t *)(t->big + BIG_SIZE / 2), i;
	struct fuzz_ptr p;

	for (i = 0; i < count && i < BIG_SIZE / 16; i++)
		pts[i] = one_in(t, 2) ? below(t, 8) : rnd64(t);
	if (one_in(t, 8)) {
		p = pick_ptr(t, 0);
		*name = p.name;
		return p.addr;
	}
	*name = "points";
	return (uintptr_t)pts;
}

static void core_syncobj_timeline_wait(struct fuzz_thread *t,
				       const struct target *tg)
{
	struct drm_syncobj_timeline_wait c, *uc;
	const char *hname, *pname;
	enum arg_kind kind;
	int ret;

	memset(&c, 0, sizeof(c));
	c.count_handles = pick_count(t);
	c.handles = handle_array(t, tg, c.count_handles, &hname);
	c.points = point_array(t, c.count_handles, &pname);
	c.timeout_nsec = pick_timeout(t);
	c.flags = pick_wait_flags(t);
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "SYNCOBJ_TIMELINE_WAIT(fd %d, %s, %u %s %s flags %#x timeout %" PRId64 ")",
		 tg->fd, arg_kind_names[kind], c.count_handles, hname, pname,
		 c.flags, (int64_t)c.timeout_nsec);
	ret = do_ioctl(tg->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, uc);
	account(t, tg, ret, MODEL_ANY);
}

/* RESET and SIGNAL share struct drm_syncobj_array. */
static void core_syncobj_array(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_syncobj_array c, *uc;
	bool reset = one_in(t, 2);
	const char *hname;
	enum arg_kind kind;
	int ret;

	memset(&c, 0, sizeof(c));
	c.count_handles = pick_count(t);
	c.handles = handle_array(t, tg, c.count_handles, &hname);
	c.pad = one_in(t, 6) ? rnd_bits(t) : 0;
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "SYNCOBJ_%s(fd %d, %s, %u %s pad %#x)",
		 reset ? "RESET" : "SIGNAL", tg->fd, arg_kind_names[kind],
		 c.count_handles, hname, c.pad);
	ret = do_ioctl(tg->fd, reset ? DRM_IOCTL_SYNCOBJ_RESET :
				      DRM_IOCTL_SYNCOBJ_SIGNAL, uc);
	account(t, tg, ret, MODEL_ANY);
}

/* TIMELINE_SIGNAL and QUERY share struct drm_syncobj_timeline_array. */
static void core_syncobj_timeline_array(struct fuzz_thread *t,
					const struct target *tg)
{
	struct drm_syncobj_timeline_array c, *uc;
	bool query = one_in(t, 2);
	const char *hname, *pname;
	enum arg_kind kind;
	int ret;

	memset(&c, 0, sizeof(c));
	c.count_handles = pick_count(t);
	c.handles = handle_array(t, tg, c.count_handles, &hname);
	c.points = point_array(t, c.count_handles, &pname);
	c.flags = one_in(t, 6) ? rnd_bits(t) : below(t, 2);
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "SYNCOBJ_%s(fd %d, %s, %u %s %s flags %#x)",
		 query ? "QUERY" : "TIMELINE_SIGNAL", tg->fd,
		 arg_kind_names[kind], c.count_handles, hname, pname, c.flags);
	ret = do_ioctl(tg->fd, query ? DRM_IOCTL_SYNCOBJ_QUERY :
				      DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, uc);
	account(t, tg, ret, MODEL_ANY);
}

static void core_syncobj_transfer(struct fuzz_thread *t,
				  const struct target *tg)
{
	struct drm_syncobj_transfer c, *uc;
	enum arg_kind kind;
	int ret;

	memset(&c, 0, sizeof(c));
	c.src_handle = pick_syncobj(t, tg);
	c.dst_handle = pick_syncobj(t, tg);
	c.src_point = one_in(t, 2) ? below(t, 4) : rnd64(t);
	c.dst_point = one_in(t, 2) ? below(t, 4) : rnd64(t);
	/*
	 * WAIT_FOR_SUBMIT makes the core wait 5 s (a constant) for a fence
	 * that nothing will ever submit here: left out.
	 */
	c.flags = (one_in(t, 6) ? rnd_bits(t) : below(t, 4)) &
		  ~DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
	c.pad = one_in(t, 6) ? rnd_bits(t) : 0;
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "SYNCOBJ_TRANSFER(fd %d, %s, %u:%" PRIu64 " -> %u:%" PRIu64 " flags %#x pad %#x)",
		 tg->fd, arg_kind_names[kind], c.src_handle,
		 (uint64_t)c.src_point, c.dst_handle, (uint64_t)c.dst_point,
		 c.flags, c.pad);
	ret = do_ioctl(tg->fd, DRM_IOCTL_SYNCOBJ_TRANSFER, uc);
	account(t, tg, ret, MODEL_ANY);
}

static void core_syncobj_handle_to_fd(struct fuzz_thread *t,
				      const struct target *tg)
{
	struct drm_syncobj_handle c, *uc;
	enum arg_kind kind;
	int ret;

	memset(&c, 0, sizeof(c));
	c.handle = pick_syncobj(t, tg);
	c.flags = one_in(t, 6) ? rnd_bits(t) : below(t, 2);
	c.fd = -1;
	c.pad = one_in(t, 6) ? rnd_bits(t) : 0;
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "SYNCOBJ_HANDLE_TO_FD(fd %d, %s, handle %u flags %#x pad %#x)",
		 tg->fd, arg_kind_names[kind], c.handle, c.flags, c.pad);
	ret = do_ioctl(tg->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, uc);
	account(t, tg, ret, MODEL_ANY);
	if (ret || kind != A_NORMAL || uc->fd < 0)
		return;
	/* Keep the newest export for FD_TO_HANDLE. */
	if (t->sync_fd >= 0)
		close(t->sync_fd);
	t->sync_fd = uc->fd;
}

static void core_syncobj_fd_to_handle(struct fuzz_thread *t,
				      const struct target *tg)
{
	struct drm_syncobj_handle c, *uc;
	enum arg_kind kind;
	int ret;

	memset(&c, 0, sizeof(c));
	c.fd = pick_foreign_fd(t, tg);
	c.flags = one_in(t, 6) ? rnd_bits(t) : below(t, 2);
	/* With IMPORT_SYNC_FILE, handle names the syncobj to import into. */
	c.handle = c.flags ? pick_syncobj(t, tg) : 0;
	c.pad = one_in(t, 6) ? rnd_bits(t) : 0;
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "SYNCOBJ_FD_TO_HANDLE(fd %d, %s, fd %d flags %#x handle %u pad %#x)",
		 tg->fd, arg_kind_names[kind], c.fd, c.flags, c.handle, c.pad);
	ret = do_ioctl(tg->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, uc);
	account(t, tg, ret, MODEL_ANY);
	if (!ret && kind == A_NORMAL && !c.flags && tg->kind == T_FILE)
		remember_syncobj(tg->df, uc->handle);
}

/*
 * GET_UNIQUE and GET_MAGIC dereference the NULL master of an accel file in
 * the DRM core (6.12 to 7.3: an oops, with dev->master_mutex left held).
 * trn refuses both with EOPNOTSUPP before the core sees them; the fuzzer
 * keeps calling them so that the refusal stays in place.
 */
static void core_get_unique(struct fuzz_thread *t, const struct target *tg)
{
	struct fuzz_ptr p = pick_ptr(t, 0);
	struct drm_unique c = { 0 }, *uc;
	enum arg_kind kind;
	int ret;

	c.unique_len = one_in(t, 4) ? rnd64(t) : below(t, 64);
	c.unique = (char *)(uintptr_t)p.addr;
	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call),
		 "GET_UNIQUE(fd %d, %s, %s/%zu)", tg->fd, arg_kind_names[kind],
		 p.name, c.unique_len);
	ret = do_ioctl(tg->fd, DRM_IOCTL_GET_UNIQUE, uc);
	account(t, tg, ret, MODEL_ANY);
}

static void core_get_magic(struct fuzz_thread *t, const struct target *tg)
{
	struct drm_auth c = { 0 }, *uc;
	enum arg_kind kind;
	int ret;

	uc = place_arg(t, &c, sizeof(c), &kind);
	snprintf(t->call, sizeof(t->call), "GET_MAGIC(fd %d, %s)", tg->fd,
		 arg_kind_names[kind]);
	ret = do_ioctl(tg->fd, DRM_IOCTL_GET_MAGIC, uc);
	account(t, tg, ret, MODEL_ANY);
}

/*
 * Left out on purpose: the master and authentication ioctls, mode setting
 * and the legacy ioctls, which mean nothing on an accel node.
 */
static const struct core_gen {
	const char *name;
	void (*gen)(struct fuzz_thread *t, const struct target *tg);
	bool known_bug;		/* only with --known-bugs */
} core_gens[] = {
	{ "VERSION", core_version, false },
	{ "GET_CAP", core_get_cap, false },
	{ "SET_CLIENT_CAP", core_set_client_cap, false },
	{ "GEM_CLOSE", core_gem_close, false },
	{ "GEM_FLINK", core_gem_flink, false },
	{ "PRIME_HANDLE_TO_FD", core_prime_handle_to_fd, false },
	{ "PRIME_FD_TO_HANDLE", core_prime_fd_to_handle, false },
	{ "SYNCOBJ_CREATE", core_syncobj_create, false },
	{ "SYNCOBJ_CREATE", core_syncobj_create, false },
	{ "SYNCOBJ_DESTROY", core_syncobj_destroy, false },
	{ "SYNCOBJ_WAIT", core_syncobj_wait, false },
	{ "SYNCOBJ_TIMELINE_WAIT", core_syncobj_timeline_wait, false },
	{ "SYNCOBJ_RESET/SIGNAL", core_syncobj_array, false },
	{ "SYNCOBJ_TIMELINE_SIGNAL/QUERY", core_syncobj_timeline_array, false },
	{ "SYNCOBJ_TRANSFER", core_syncobj_transfer, false },
	{ "SYNCOBJ_HANDLE_TO_FD", core_syncobj_handle_to_fd, false },
	{ "SYNCOBJ_FD_TO_HANDLE", core_syncobj_fd_to_handle, false },
	{ "GET_UNIQUE", core_get_unique, false },
	{ "GET_MAGIC", core_get_magic, false },
};

static void act_core(struct fuzz_thread *t)
{
	unsigned int i, n = ARRAY_SIZE(core_gens);
	struct target tg;

	/* The known-bug generators are last. */
	if (!t->ctx->opts->known_bugs)
		while (n && core_gens[n - 1].known_bug)
			n--;
	i = below(t, n);
	pick_target(t, &tg);
	core_gens[i].gen(t, &tg);
}

/* ---- files ---- */

static void files_open(struct fuzz_thread *t)
{
	struct fuzz_file *f = free_slot(t);

	if (!f) {
		f = &t->files[below(t, NR_FILES)];
		snprintf(t->call, sizeof(t->call), "close(%d)", f->fd);
		close_file(t, f);
	}
	open_file(t, f, true);
}

static void files_dup(struct fuzz_thread *t, struct fuzz_file *f)
{
	struct fuzz_file *d = free_slot(t);
	int fd;

	if (!d)
		return;
	snprintf(t->call, sizeof(t->call), "dup(%d)", f->fd);
	fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	account(t, NULL, fd < 0 ? -errno : 0, 0);
	if (fd < 0)
		return;
	d->fd = fd;
	d->df = f->df;
	f->df->refs++;
}

static void files_fdinfo(struct fuzz_thread *t, struct fuzz_file *f)
{
	char path[64], buf[2048];
	int ret;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", f->fd);
	snprintf(t->call, sizeof(t->call), "read(%s)", path);
	ret = read_file(path, buf, sizeof(buf));
	if (!account(t, NULL, ret < 0 ? ret : 0, 0) || ret < 0)
		return;
	if (f->df->stable && !strstr(buf, "drm-driver:\ttrn"))
		fail(t, 0, "fdinfo lacks drm-driver: trn");
}

static void files_poll(struct fuzz_thread *t, struct fuzz_file *f)
{
	struct pollfd pfd = { .fd = f->fd, .events = POLLIN | POLLOUT };
	int ret;

	snprintf(t->call, sizeof(t->call), "poll(%d, 0)", f->fd);
	ret = poll(&pfd, 1, 0);
	account(t, NULL, ret < 0 ? -errno : 0, 0);
}

/* mmap() at offsets that mostly belong to no buffer. */
static void files_mmap_random(struct fuzz_thread *t, struct fuzz_file *f)
{
	static const int prots[] = { PROT_READ, PROT_READ | PROT_WRITE,
				     PROT_WRITE, PROT_NONE };
	size_t ps = t->ctx->page_size, len = ps * (1 + below(t, 4));
	int prot = prots[below(t, 4)];
	int flags = one_in(t, 4) ? MAP_PRIVATE : MAP_SHARED;
	uint64_t off;
	void *p;
	int ret;

	switch (below(t, 4)) {
	case 0:
		off = 0;
		break;
	case 1:
		off = (uint64_t)ps * below(t, 64);
		break;
	case 2:
		/* Where DRM puts GEM mmap offsets. */
		off = (0x100000000ull + below(t, 64)) * ps;
		break;
	default:
		off = (rnd64(t) & 0x7fffffffffffull) & ~(uint64_t)(ps - 1);
		break;
	}
	snprintf(t->call, sizeof(t->call),
		 "mmap(fd %d, len %zu, prot %#x, flags %#x, off %#" PRIx64 ")",
		 f->fd, len, prot, flags, off);
	p = mmap(NULL, len, prot, flags, f->fd, (off_t)off);
	ret = p == MAP_FAILED ? -errno : 0;
	/* Offsets beyond what the address space can express. */
	if (ret == -EOVERFLOW)
		ret = -EINVAL;
	account(t, NULL, ret, MODEL_ANY);
	if (!ret)
		munmap(p, len);
}

static bool all_zero(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Map one of the file's buffers through its BO_INFO offset (memory.md:
 * MAP_SHARED only, the exact offset, no longer than the buffer) and, on the
 * stable device, check that a fresh buffer reads as zero and keeps what is
 * written to it.
 */
static void files_mmap_bo(struct fuzz_thread *t, struct fuzz_file *f)
{
	struct fuzz_dfile *df = f->df;
	struct target tg = { .kind = T_FILE, .fd = f->fd, .df = df };
	size_t ps = t->ctx->page_size, len, pages;
	struct drm_trn_bo_info info;
	int prot, flags, ret, model;
	struct fuzz_bo *bo;
	unsigned char *p;
	uint64_t off;

	if (!df->nr_bos) {
		files_mmap_random(t, f);
		return;
	}
	bo = &df->bos[below(t, df->nr_bos)];
	if (!bo->mmap_offset) {
		memset(&info, 0, sizeof(info));
		info.handle = bo->handle;
		snprintf(t->call, sizeof(t->call), "TRN_BO_INFO(fd %d, handle %u)",
			 f->fd, bo->handle);
		ret = do_ioctl(f->fd, DRM_IOCTL_TRN_BO_INFO, &info);
		if (!account(t, &tg, ret, 0) || ret)
			return;
		bo->size = info.size;
		bo->va = info.va;
		bo->placement = info.placement;
		bo->mmap_offset = info.mmap_offset;
		if (!bo->mmap_offset)
			return;
	}

	pages = bo->size / ps;
	len = ps * (1 + below(t, pages < 4 ? (uint32_t)pages : 4));
	if (one_in(t, 10))
		len = bo->size + ps;
	off = bo->mmap_offset;
	if (one_in(t, 10))
		off += ps * (1 + below(t, 4));
	prot = one_in(t, 4) ? PROT_READ : PROT_READ | PROT_WRITE;
	flags = one_in(t, 10) ? MAP_PRIVATE : MAP_SHARED;

	if (!df->stable)
		model = MODEL_ANY;
	else if (df->mode == O_WRONLY)
		model = -EACCES;
	else if (flags == MAP_SHARED && prot & PROT_WRITE &&
		 df->mode == O_RDONLY)
		model = -EACCES;
	else if (off != bo->mmap_offset)
		/* Nobody's buffer (EINVAL), or another file's (EACCES). */
		model = MODEL_ANY;
	else if (len > bo->size || flags == MAP_PRIVATE)
		model = -EINVAL;
	else if (bo->kernel_owned && prot & PROT_WRITE)
		model = -EACCES;	/* status pages map read-only */
	else
		model = MODEL_RESOURCE;

	snprintf(t->call, sizeof(t->call),
		 "mmap(fd %d, buffer %u placement %u, len %zu, prot %#x, flags %#x, off %#" PRIx64 ")",
		 f->fd, bo->handle, bo->placement, len, prot, flags, off);
	p = mmap(NULL, len, prot, flags, f->fd, (off_t)off);
	ret = p == MAP_FAILED ? -errno : 0;
	account(t, &tg, ret, model);
	if (ret)
		return;
	/* Only the creator touches: nobody else writes to it then. */
	if (df->stable && bo->created && off == bo->mmap_offset) {
		if (!bo->written && !all_zero(p, ps))
			fail(t, 0, "fresh buffer %u does not read as zero",
			     bo->handle);
		if (prot & PROT_WRITE) {
			memset(p, 0x5a, 64);
			bo->written = true;
			if (p[63] != 0x5a)
				fail(t, 0, "buffer %u lost a write", bo->handle);
		}
	}
	munmap(p, len);
}

static void act_files(struct fuzz_thread *t)
{
	struct fuzz_file *f;

	switch (below(t, 8)) {
	case 0:
	case 1:
		files_open(t);
		return;
	case 2:
		f = any_file(t);
		if (f) {
			snprintf(t->call, sizeof(t->call), "close(%d)", f->fd);
			close_file(t, f);
			account(t, NULL, 0, 0);
		}
		return;
	default:
		break;
	}
	f = any_file(t);
	if (!f)
		return;
	switch (below(t, 6)) {
	case 0:
		files_dup(t, f);
		break;
	case 1:
		files_fdinfo(t, f);
		break;
	case 2:
		files_poll(t, f);
		break;
	case 3:
		files_mmap_random(t, f);
		break;
	default:
		files_mmap_bo(t, f);
		break;
	}
}

/* ---- threads ---- */

static bool stopping(struct fuzz_ctx *ctx)
{
	return __atomic_load_n(&ctx->stop, __ATOMIC_RELAXED);
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) +
	       (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static bool past_deadline(struct fuzz_ctx *ctx)
{
	struct timespec now;

	if (!ctx->has_deadline)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > ctx->deadline.tv_sec ||
	       (now.tv_sec == ctx->deadline.tv_sec &&
		now.tv_nsec >= ctx->deadline.tv_nsec);
}

static unsigned int pick_action(struct fuzz_thread *t)
{
	unsigned int mask = t->ctx->opts->actions, total = 0, i, pick;

	for (i = 0; i < TRN_FUZZ_NR_ACTIONS; i++)
		if (mask & (1u << i))
			total += action_weight[i];
	pick = below(t, total);
	for (i = 0; i < TRN_FUZZ_NR_ACTIONS; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (pick < action_weight[i])
			return i;
		pick -= action_weight[i];
	}
	return TRN_FUZZ_TRN;
}

static void *worker(void *arg)
{
	struct fuzz_thread *t = arg;
	struct fuzz_ctx *ctx = t->ctx;
	unsigned int i, action;

	t->started = true;
	for (t->iter = 0; t->iter < t->limit && !stopping(ctx); t->iter++) {
		struct timespec start;
		double ms;

		if ((t->iter & 63) == 0 && past_deadline(ctx))
			break;
		clock_gettime(CLOCK_MONOTONIC, &start);
		action = pick_action(t);
		t->st.per_action[action]++;
		switch (action) {
		case TRN_FUZZ_TRN:
			act_trn(t);
			break;
		case TRN_FUZZ_DRIVER:
			act_driver(t);
			break;
		case TRN_FUZZ_CORE:
			act_core(t);
			break;
		default:
			act_files(t);
			break;
		}
		ms = seconds_since(&start) * 1000;
		if (ms > t->st.slowest_ms) {
			t->st.slowest_ms = ms;
			snprintf(t->st.slowest_call, sizeof(t->st.slowest_call),
				 "stream %u iteration %" PRIu64 ": %s", t->stream,
				 t->iter, t->call);
		}
		if (ctx->opts->slow_ms && ms >= ctx->opts->slow_ms) {
			pthread_mutex_lock(&ctx->lock);
			fprintf(ctx->opts->out,
				"# trn-fuzz: slow: %.0f ms, stream %u iteration %"
				PRIu64 ": %s\n", ms, t->stream, t->iter, t->call);
			pthread_mutex_unlock(&ctx->lock);
		}
	}
	t->st.iterations = t->iter;
	snprintf(t->call, sizeof(t->call), "closing files");
	for (i = 0; i < NR_FILES; i++)
		close_file(t, &t->files[i]);
	if (t->sync_fd >= 0)
		close(t->sync_fd);
	if (t->dmabuf_fd >= 0)
		close(t->dmabuf_fd);
	t->sync_fd = -1;
	t->dmabuf_fd = -1;
	return NULL;
}

static void churn_fail(struct fuzz_ctx *ctx, int err, const char *what,
		       unsigned int id)
{
	struct trn_fuzz_stats *st = ctx->st;

	pthread_mutex_lock(&ctx->lock);
	if (!st->churn_error) {
		st->churn_error = err;
		snprintf(st->churn_msg, sizeof(st->churn_msg),
			 "%s trn_sim%u: %s", what, id, errname(err));
		fprintf(ctx->opts->out, "# trn-fuzz: FAIL churn: %s\n",
			st->churn_msg);
	}
	pthread_mutex_unlock(&ctx->lock);
}

/* Creates and deletes devices 900..909 until told to stop. */
static void *churner(void *arg)
{
	struct fuzz_ctx *ctx = arg;
	struct fuzz_thread t = { .ctx = ctx, .rng = ctx->churn_rng };
	unsigned int id, idx;
	int ret;

	while (!stopping(ctx) && !ctx->st->churn_error) {
		id = churn_id(&t);
		idx = id - TRN_FUZZ_CHURN_FIRST;
		if (ctx->churn_present[idx]) {
			ret = sim_del(id);
			if (ret)
				churn_fail(ctx, -ret, "del_device", id);
			ctx->churn_present[idx] = false;
		} else {
			ret = sim_new(id, 1 + below(&t, 64), 1 + below(&t, 64),
				      1 + below(&t, 16));
			if (ret)
				churn_fail(ctx, -ret, "new_device", id);
			else
				ctx->churn_present[idx] = true;
		}
		__atomic_add_fetch(&ctx->st->churn_cycles, 1,
				   __ATOMIC_RELAXED);
	}
	return NULL;
}

/* ---- crash reports ---- */

static struct fuzz_ctx *crash_ctx;

static void put_str(const char *s)
{
	ssize_t n = write(STDERR_FILENO, s, strlen(s));

	(void)n;
}

static void put_u64(uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf) - 1;

	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_str(p);
}

/* What each thread was doing when the process died: the replay point. */
static void crash_handler(int sig)
{
	struct fuzz_ctx *ctx = crash_ctx;
	unsigned int i;

	put_str("# trn-fuzz: killed by signal ");
	put_u64((uint64_t)sig);
	put_str("\n");
	if (ctx) {
		put_str("# trn-fuzz: seed=");
		put_u64(ctx->opts->seed);
		put_str("\n");
		for (i = 0; i < ctx->nthreads; i++) {
			struct fuzz_thread *t = &ctx->threads[i];

			if (!t->started)
				continue;
			put_str("# trn-fuzz: stream ");
			put_u64(t->stream);
			put_str(" iteration ");
			put_u64(t->iter);
			put_str(": ");
			put_str(t->call);
			put_str("\n");
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- setup and teardown ---- */

static void *map_pages(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* @n writable pages followed by one PROT_NONE guard page. */
static unsigned char *map_guarded(size_t ps, size_t n)
{
	unsigned char *p = map_pages((n + 1) * ps, PROT_READ | PROT_WRITE);

	if (p && mprotect(p + n * ps, ps, PROT_NONE)) {
		munmap(p, (n + 1) * ps);
		return NULL;
	}
	return p;
}

static int setup_error(struct fuzz_ctx *ctx, int err, const char *what)
{
	struct trn_fuzz_stats *st = ctx->st;

	if (!st->setup_error) {
		st->setup_error = err;
		snprintf(st->setup_msg, sizeof(st->setup_msg), "%s: %s", what,
			 strerror(err));
	}
	return -err;
}

/* Open the stable device's node: fd or -errno. */
static int stable_open(const struct fuzz_ctx *ctx)
{
	return open_minor(ctx->stable_minor);
}

static int reference_answers(struct fuzz_ctx *ctx)
{
	struct drm_version v;
	int fd, ret;

	fd = stable_open(ctx);
	if (fd < 0)
		return setup_error(ctx, -fd, "opening the stable device");
	ret = query_info(fd, &ctx->ref);
	if (!ret)
		find_query(DRM_TRN_QUERY_HBM_STACKS)->size =
			ctx->ref.hbm_stacks * sizeof(struct drm_trn_hbm_stack);
	memset(&v, 0, sizeof(v));
	if (!ret)
		ret = raw_ioctl(fd, DRM_IOCTL_VERSION, &v);
	close(fd);
	if (ret)
		return setup_error(ctx, -ret, "querying the stable device");
	ctx->ref_name_len = v.name_len;
	ctx->ref_date_len = v.date_len;
	ctx->ref_desc_len = v.desc_len;
	return 0;
}

static void delete_churned(struct fuzz_ctx *ctx)
{
	unsigned int id;

	for (id = TRN_FUZZ_CHURN_FIRST; id <= TRN_FUZZ_CHURN_LAST; id++)
		if (sim_exists(id))
			sim_del(id);
	memset(ctx->churn_present, 0, sizeof(ctx->churn_present));
}

static int setup(struct fuzz_ctx *ctx)
{
	const struct trn_fuzz_opts *o = ctx->opts;
	struct drm_trn_query q = {
		.query = DRM_TRN_QUERY_DEVICE_INFO,
		.size = INFO_V1_SIZE,
	};
	size_t ps = ctx->page_size;
	unsigned int i;
	int ret;

	if (o->part >= 0) {
		if (o->device_churn)
			return setup_error(ctx, EINVAL,
					   "device churn needs simulated devices, not a part");
		ret = part_minor((unsigned int)o->part, &ctx->stable_minor);
		if (ret)
			return setup_error(ctx, -ret,
					   "finding the part on PCI (none bound to trn_pci?)");
	} else {
		if (!sim_available())
			return setup_error(ctx, ENODEV,
					   "trn_sim is not loaded");
		if (o->device_churn)
			delete_churned(ctx);
		ret = sim_minor(o->device_id, &ctx->stable_minor);
		if (ret)
			return setup_error(ctx, -ret,
					   "finding the stable device");
	}
	ret = reference_answers(ctx);
	if (ret)
		return ret;

	ctx->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (ctx->null_fd < 0)
		return setup_error(ctx, errno, "opening /dev/null");
	ctx->ro = map_pages(ps, PROT_READ | PROT_WRITE);
	ctx->none = map_pages(ps, PROT_NONE);
	ctx->scratch = map_pages(ps, PROT_READ | PROT_WRITE);
	if (!ctx->ro || !ctx->none || !ctx->scratch)
		return setup_error(ctx, ENOMEM, "mapping shared pages");
	q.data = (uintptr_t)ctx->scratch;
	memcpy(ctx->ro, &q, sizeof(q));
	if (mprotect(ctx->ro, ps, PROT_READ))
		return setup_error(ctx, errno, "mprotect");

	for (i = 0; i < ctx->nthreads; i++) {
		struct fuzz_thread *t = &ctx->threads[i];
		unsigned int j;

		t->ctx = ctx;
		t->stream = o->stream >= 0 ? (unsigned int)o->stream : i;
		t->rng = stream_seed(o->seed, t->stream);
		t->sync_fd = -1;
		t->dmabuf_fd = -1;
		for (j = 0; j < NR_FILES; j++)
			t->files[j].fd = -1;
		t->page = map_guarded(ps, 2);
		t->arg = map_guarded(ps, ARG_SIZE / ps);
		t->big = map_pages(BIG_SIZE, PROT_READ | PROT_WRITE);
		t->up = map_pages((UP_PAGES + 2) * ps, PROT_READ | PROT_WRITE);
		if (!t->page || !t->arg || !t->big || !t->up)
			return setup_error(ctx, ENOMEM, "mapping buffers");
		/* Userptr memory: written, then a hole, then read-only. */
		memset(t->up, 0x11, (UP_PAGES + 2) * ps);
		if (mprotect(t->up + UP_PAGES * ps, ps, PROT_NONE) ||
		    mprotect(t->up + (UP_PAGES + 1) * ps, ps, PROT_READ))
			return setup_error(ctx, errno, "mprotect");
	}
	ctx->churn_rng = stream_seed(o->seed, TRN_FUZZ_MAX_THREADS + 1);
	return 0;
}

static void teardown(struct fuzz_ctx *ctx)
{
	size_t ps = ctx->page_size;
	unsigned int i;

	for (i = 0; ctx->threads && i < ctx->nthreads; i++) {
		struct fuzz_thread *t = &ctx->threads[i];

		if (t->page)
			munmap(t->page, 3 * ps);
		if (t->arg)
			munmap(t->arg, ARG_SIZE + ps);
		if (t->big)
			munmap(t->big, BIG_SIZE);
		if (t->up)
			munmap(t->up, (UP_PAGES + 2) * ps);
	}
	if (ctx->ro)
		munmap(ctx->ro, ps);
	if (ctx->none)
		munmap(ctx->none, ps);
	if (ctx->scratch)
		munmap(ctx->scratch, ps);
	if (ctx->null_fd > 0)
		close(ctx->null_fd);
}

static void final_error(struct fuzz_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void final_error(struct fuzz_ctx *ctx, int err, const char *fmt, ...)
{
	struct trn_fuzz_stats *st = ctx->st;
	va_list ap;

	if (st->final_error)
		return;
	st->final_error = err ? err : -1;
	va_start(ap, fmt);
	vsnprintf(st->final_msg, sizeof(st->final_msg), fmt, ap);
	va_end(ap);
	fprintf(ctx->opts->out, "# trn-fuzz: FAIL at the end: %s\n",
		st->final_msg);
}

/* After the run: churned devices go, the stable device still answers. */
static void final_checks(struct fuzz_ctx *ctx)
{
	struct drm_trn_device_info info;
	unsigned int id;
	char name[32];
	int fd, ret;

	if (ctx->opts->device_churn) {
		for (id = TRN_FUZZ_CHURN_FIRST; id <= TRN_FUZZ_CHURN_LAST;
		     id++) {
			if (!sim_exists(id))
				continue;
			ret = sim_del(id);
			if (ret)
				final_error(ctx, -ret,
					    "deleting churned device %u: %s",
					    id, strerror(-ret));
		}
		for (id = TRN_FUZZ_CHURN_FIRST; id <= TRN_FUZZ_CHURN_LAST;
		     id++)
			if (sim_exists(id))
				final_error(ctx, 0,
					    "churned device %u still exists",
					    id);
	}

	fd = stable_open(ctx);
	if (fd < 0) {
		final_error(ctx, -fd, "reopening accel%u: %s",
			    ctx->stable_minor, strerror(-fd));
		return;
	}
	ret = query_info(fd, &info);
	if (ret)
		final_error(ctx, -ret, "final query: %s", strerror(-ret));
	else if (memcmp(&info, &ctx->ref, sizeof(info)))
		final_error(ctx, 0, "final query answers differently");
	ret = drm_driver_name(fd, name, sizeof(name), NULL, NULL, NULL);
	if (ret || strcmp(name, "trn"))
		final_error(ctx, -ret, "final VERSION: %s",
			    ret ? strerror(-ret) : name);
	close(fd);
}

static void merge_stats(struct trn_fuzz_stats *st,
			const struct trn_fuzz_stats *ts)
{
	unsigned int i;

	st->iterations += ts->iterations;
	st->calls += ts->calls;
	st->ok += ts->ok;
	st->opens += ts->opens;
	for (i = 0; i < TRN_FUZZ_MAX_ERRNO; i++)
		st->errnos[i] += ts->errnos[i];
	for (i = 0; i < TRN_FUZZ_NR_ACTIONS; i++)
		st->per_action[i] += ts->per_action[i];
	if (ts->slowest_ms > st->slowest_ms) {
		st->slowest_ms = ts->slowest_ms;
		memcpy(st->slowest_call, ts->slowest_call,
		       sizeof(st->slowest_call));
	}
}

int trn_fuzz_run(const struct trn_fuzz_opts *opts,
		 struct trn_fuzz_stats *stats)
{
	struct fuzz_ctx ctx;
	struct sigaction sa, old[5];
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct timespec start;
	uint64_t per, extra;
	unsigned int i;
	char acts[64];
	int ret;

	memset(stats, 0, sizeof(*stats));
	memset(&ctx, 0, sizeof(ctx));
	ctx.opts = opts;
	ctx.st = stats;
	ctx.null_fd = -1;
	ctx.page_size = (size_t)sysconf(_SC_PAGESIZE);
	ctx.nthreads = opts->threads;
	pthread_mutex_init(&ctx.lock, NULL);

	fprintf(opts->out,
		"# trn-fuzz: seed=%" PRIu64 " iterations=%" PRIu64
		" threads=%u\n",
		opts->seed, opts->iterations, opts->threads);
	fprintf(opts->out,
		"# trn-fuzz: actions=%s device=%s%d device-churn=%s soak=%us%s\n",
		trn_fuzz_actions_str(opts->actions, acts, sizeof(acts)),
		opts->part >= 0 ? "part" : "",
		opts->part >= 0 ? opts->part : (int)opts->device_id,
		opts->device_churn ? "yes" : "no",
		opts->soak_seconds,
		opts->stream >= 0 ? " (replaying one stream)" : "");
	fflush(opts->out);

	if (!opts->threads || opts->threads > TRN_FUZZ_MAX_THREADS ||
	    !opts->actions || (opts->stream >= 0 && opts->threads != 1)) {
		setup_error(&ctx, EINVAL, "bad options");
		return -1;
	}
	ctx.threads = calloc(opts->threads, sizeof(*ctx.threads));
	if (!ctx.threads) {
		setup_error(&ctx, ENOMEM, "allocating threads");
		return -1;
	}
	ret = setup(&ctx);
	if (ret)
		goto out;

	per = opts->iterations / opts->threads;
	extra = opts->iterations % opts->threads;
	for (i = 0; i < opts->threads; i++) {
		ctx.threads[i].limit = per + (i < extra);
		if (opts->soak_seconds && !opts->iterations)
			ctx.threads[i].limit = UINT64_MAX;
	}

	clock_gettime(CLOCK_MONOTONIC, &start);
	if (opts->soak_seconds) {
		ctx.deadline = start;
		ctx.deadline.tv_sec += opts->soak_seconds;
		ctx.has_deadline = true;
	}

	crash_ctx = &ctx;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_handler;
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, &old[i]);

	if (opts->device_churn) {
		ret = pthread_create(&ctx.churner, NULL, churner, &ctx);
		if (ret) {
			setup_error(&ctx, ret, "starting the churn thread");
			goto out_signals;
		}
		ctx.churn_running = true;
	}
	for (i = 0; i < opts->threads; i++) {
		ret = pthread_create(&ctx.threads[i].thread, NULL, worker,
				     &ctx.threads[i]);
		if (ret) {
			setup_error(&ctx, ret, "starting a worker");
			__atomic_store_n(&ctx.stop, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	while (i--)
		pthread_join(ctx.threads[i].thread, NULL);
	/* Whatever the speed, the churn made and removed a device. */
	for (i = 0; ctx.churn_running && i < 3000 && !stats->churn_error &&
		    __atomic_load_n(&stats->churn_cycles, __ATOMIC_RELAXED) < 2;
	     i++)
		usleep(10000);
	__atomic_store_n(&ctx.stop, 1, __ATOMIC_RELAXED);
	if (ctx.churn_running)
		pthread_join(ctx.churner, NULL);
	stats->seconds = seconds_since(&start);

	for (i = 0; i < opts->threads; i++)
		merge_stats(stats, &ctx.threads[i].st);
	if (!stats->setup_error)
		final_checks(&ctx);

out_signals:
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &old[i], NULL);
	crash_ctx = NULL;
out:
	if (opts->device_churn && opts->part < 0 && sim_available())
		delete_churned(&ctx);
	teardown(&ctx);
	free(ctx.threads);
	pthread_mutex_destroy(&ctx.lock);
	trn_fuzz_print_summary(opts->out, opts, stats);
	return stats->setup_error || stats->unexpected || stats->churn_error ||
	       stats->final_error ? -1 : 0;
}

void trn_fuzz_print_summary(FILE *out, const struct trn_fuzz_opts *opts,
			    const struct trn_fuzz_stats *st)
{
	unsigned int i;
	int n = 0;

	if (st->setup_error) {
		fprintf(out, "# trn-fuzz: setup failed: %s\n", st->setup_msg);
		return;
	}
	fprintf(out,
		"# trn-fuzz: %" PRIu64 " iterations, %" PRIu64
		" calls (%" PRIu64 " succeeded) in %.1f s: %.0f iterations/s\n",
		st->iterations, st->calls, st->ok, st->seconds,
		st->seconds > 0 ? (double)st->iterations / st->seconds : 0.0);
	fprintf(out, "# trn-fuzz: per action:");
	for (i = 0; i < TRN_FUZZ_NR_ACTIONS; i++)
		fprintf(out, " %s %" PRIu64, action_names[i],
			st->per_action[i]);
	fprintf(out, "; opens %" PRIu64, st->opens);
	if (opts->device_churn)
		fprintf(out, "; churn cycles %" PRIu64, st->churn_cycles);
	fprintf(out, "\n# trn-fuzz: errnos:");
	for (i = 1; i < TRN_FUZZ_MAX_ERRNO; i++) {
		if (!st->errnos[i])
			continue;
		fprintf(out, " %s %" PRIu64, errname((int)i), st->errnos[i]);
		n++;
	}
	fprintf(out, "%s\n", n ? "" : " none");
	if (st->slowest_ms > 0)
		fprintf(out, "# trn-fuzz: slowest iteration %.1f ms: %s\n",
			st->slowest_ms, st->slowest_call);
	fprintf(out,
		"# trn-fuzz: %s: %" PRIu64 " unexpected results%s%s%s%s\n",
		st->unexpected || st->churn_error || st->final_error ?
		"FAILED" : "passed",
		st->unexpected, st->churn_error ? "; churn: " : "",
		st->churn_error ? st->churn_msg : "",
		st->final_error ? "; end: " : "",
		st->final_error ? st->final_msg : "");
	fflush(out);
}

/* ---- options ---- */

bool trn_fuzz_errno_expected(int err)
{
	switch (err) {
	case EINVAL:
	case EFAULT:
	case ENODEV:
	case ENOTTY:
	case ENOENT:
	case ENOMEM:
	case EPERM:
	case EACCES:
	case EOPNOTSUPP:
	case ENOSPC:
	case EBADF:
	case E2BIG:
	case ETIME:
	case EBUSY:
	case EAGAIN:
	case EINTR:
	case ENXIO:
	case EEXIST:
	case EDQUOT:	/* per-context limits on buffers and pinned memory */
	case EMFILE:	/* per-context limit on queues */
	case ECANCELED:	/* SUBMIT to a queue of a banned context */
		return true;
	default:
		return false;
	}
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	char *end;
	uint64_t v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	return errno || *end ? def : v;
}

void trn_fuzz_default_opts(struct trn_fuzz_opts *opts)
{
	struct timespec ts;
	uint64_t seed;

	clock_gettime(CLOCK_REALTIME, &ts);
	/* Short enough to read and type again. */
	seed = ((uint64_t)ts.tv_sec * 1000003u + (uint64_t)ts.tv_nsec / 1000 +
		(uint64_t)getpid()) % 1000000000u;

	memset(opts, 0, sizeof(*opts));
	opts->seed = env_u64("TRN_FUZZ_SEED", seed);
	opts->iterations = env_u64("TRN_FUZZ_ITERATIONS",
				   TRN_FUZZ_DEFAULT_ITERATIONS);
	opts->threads = (unsigned int)env_u64("TRN_FUZZ_THREADS",
					      TRN_FUZZ_DEFAULT_THREADS);
	opts->soak_seconds = (unsigned int)env_u64("TRN_FUZZ_SOAK", 0);
	opts->actions = TRN_FUZZ_ALL_ACTIONS;
	opts->stream = -1;
	opts->device_id = 0;
	opts->part = -1;
	opts->trace_from = UINT64_MAX;
	opts->out = stdout;
}

int trn_fuzz_parse_actions(const char *list, unsigned int *mask)
{
	char buf[128], *tok, *save = NULL;
	unsigned int i, m = 0;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return -1;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			m |= TRN_FUZZ_ALL_ACTIONS;
			continue;
		}
		for (i = 0; i < TRN_FUZZ_NR_ACTIONS; i++)
			if (!strcmp(tok, action_names[i]))
				break;
		if (i == TRN_FUZZ_NR_ACTIONS)
			return -1;
		m |= 1u << i;
	}
	if (!m)
		return -1;
	*mask = m;
	return 0;
}

const char *trn_fuzz_actions_str(unsigned int mask, char *buf, size_t size)
{
	size_t len = 0;
	unsigned int i;

	if (mask == TRN_FUZZ_ALL_ACTIONS) {
		snprintf(buf, size, "all");
		return buf;
	}
	buf[0] = '\0';
	for (i = 0; i < TRN_FUZZ_NR_ACTIONS; i++) {
		if (!(mask & (1u << i)))
			continue;
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0,
					"%s%s", len ? "," : "",
					action_names[i]);
	}
	return buf;
}
