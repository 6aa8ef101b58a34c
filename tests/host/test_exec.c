// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * libtrnhal's execution API (queues, submission, fences, command buffers)
 * against a fake driver.
 *
 * The library is built with TRNHAL_TESTING: its ioctls go to fake_ioctl()
 * and its mmap()/munmap() to fake_mmap()/fake_munmap(). The fake plays two
 * trn devices (accel0, accel1; it tells their files apart by the node they
 * were opened from) with GEM objects, queues whose status page is plain
 * memory the tests write like the kernel would, and syncobjs that carry the
 * identity of the timeline they stand for, so that a syncobj imported into
 * the other device can be traced back to its queue. It records the
 * arguments of the last submission and syncobj calls for the tests to
 * compare with what they asked for.
 *
 * Submissions arrive through trnhal_test_raw_ioctl (one ioctl() each, the
 * library restarts them itself), everything else through trnhal_test_ioctl
 * (drmIoctl()). Like the kernel of uAPI 1.3 the fake bounds each queue to
 * fake.depth unfinished jobs (a blocking submission "waits" by completing
 * the oldest ones), refuses jobs of a banned queue, and closes a queue's
 * status buffer handle in QUEUE_DESTROY; its mapping lives on, as a
 * "zombie", until unmapped. fake.uapi_minor = 2 plays an older driver.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "trn_accel.h"
#include "trn_isa.h"
#include "trnhal.h"
#include "../../libhal/internal.h"
#include "check.h"

#define NDEV		2
#define MAX_OBJ		64
#define MAX_SYNC	64
#define MAX_QUEUE	16
#define MAX_FD		1024
#define PAGE		4096ULL
#define REC_JOBS	8
#define REC_ITEMS	80
#define REC_WAIT	32
#define MAX_ZOMBIE	8
#define REC_ATTEMPTS	16
#define MAX_SCRIPT	8

struct fobj {
	bool live;
	uint32_t placement, flags;
	uint64_t size, va;
	void *mem;
	int maps;
};

struct fsync {
	bool live;
	int timeline;		/* global identity: a queue's, or 1000 + n */
};

struct fqueue {
	bool live;
	int dev;
	uint32_t core, priority;
	uint32_t syncobj, status_handle;
	uint64_t submitted;
	bool banned;			/* the context was banned since */
	struct drm_trn_queue_status_page *page;
};

/* Memory of a closed handle that is still mapped. */
struct fzombie {
	void *mem;
	uint64_t size;
	int maps;
};

struct fdev {
	int fd;
	struct fobj obj[MAX_OBJ];	/* index = GEM handle, 0 unused */
	struct fsync sync[MAX_SYNC];	/* index = syncobj handle, 0 unused */
};

/* Last DRM_IOCTL_TRN_SUBMIT, deep-copied. */
struct submit_rec {
	int dev;
	struct drm_trn_submit s;
	struct drm_trn_job jobs[REC_JOBS];
	uint32_t bos[REC_JOBS][REC_ITEMS];
	struct drm_trn_sync in[REC_JOBS][REC_ITEMS];
	struct drm_trn_sync out[REC_JOBS][REC_ITEMS];
};

/* Last DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT. */
struct wait_rec {
	int dev;
	uint32_t count, flags;
	int64_t timeout;
	uint32_t handles[REC_WAIT];
	uint64_t points[REC_WAIT];
};

enum wait_mode {
	WAIT_COMPLETE,		/* the points signal, the page says so */
	WAIT_TIMEOUT,		/* ETIME */
	WAIT_SIGNAL_ONLY,	/* the points signal, the page lags behind */
};

static struct {
	pthread_mutex_t lock;
	struct fdev dev[NDEV];
	struct fqueue queue[MAX_QUEUE];	/* index = queue id, 0 unused */
	struct fzombie zombie[MAX_ZOMBIE];
	int timeline_of_fd[MAX_FD];	/* exported syncobj fds; -1 none */
	int next_timeline;
	uint64_t next_va;

	/* records */
	struct drm_trn_queue_create last_create;
	struct submit_rec sub;
	struct wait_rec wait;
	struct drm_syncobj_transfer last_transfer;
	struct drm_syncobj_handle last_export;
	uint32_t last_signal;
	int last_mmap_prot, last_mmap_flags;

	/* counters */
	unsigned int creates, destroys, submits, waits, exports, imports;
	unsigned int sync_creates, sync_destroys, transfers, signals;
	unsigned int sync_file_exports, gem_closes, mmaps, munmaps, statuses;
	unsigned int status_closes;	/* status handles QUEUE_DESTROY closed */
	unsigned int blocked;		/* blocking submissions that "waited" */
	unsigned int bad;		/* misuse: unknown handles, bad args */

	/* every DRM_IOCTL_TRN_SUBMIT attempt, failed ones included */
	unsigned int attempts;
	uint32_t attempt_flags[REC_ATTEMPTS];	/* the latest ones */
	unsigned int eagain_streak;	/* non-blocking EAGAINs in a row */

	/* behaviour */
	int fail_next;			/* errno for the next ioctl of fail_req */
	unsigned long fail_req;
	bool fail_mmap;
	enum wait_mode wait_mode;
	uint32_t wait_first;		/* first_signaled for wait-any */
	uint32_t uapi_minor;		/* DRM_TRN_UAPI_MINOR, or 2 */
	uint32_t depth;			/* queue_depth */
	int script[MAX_SCRIPT];		/* errnos of the next SUBMIT attempts */
	unsigned int script_len, script_pos;
	/* QUEUE_DESTROY hands the closed status handle to a new object. */
	bool reuse_handles;
	uint32_t reused_handle;
} fake = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.uapi_minor = DRM_TRN_UAPI_MINOR,
	.depth = 1024,
};

static char root[64], sys_root[96], dev_root[96];

static int set_errno(int e)
{
	errno = e;
	return -1;
}

static void misuse(const char *what)
{
	fprintf(stderr, "fake driver: %s\n", what);
	fake.bad++;
}

/* Which fake device a file descriptor was opened on, or -1. */
static int dev_of_fd(int fd)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 7)
		return -1;
	path[n] = '\0';
	if (!strcmp(path + n - 7, "/accel0"))
		return 0;
	if (!strcmp(path + n - 7, "/accel1"))
		return 1;
	return -1;
}

static uint64_t mmap_offset(int d, uint32_t h)
{
	return 0x100000000ULL + (uint64_t)d * 0x10000000ULL +
	       (uint64_t)h * 0x100000ULL;
}

/* Caller holds fake.lock. */
static void obj_init(struct fobj *o, uint64_t size, uint32_t placement,
		     uint32_t flags)
{
	size = (size + PAGE - 1) & ~(PAGE - 1);
	memset(o, 0, sizeof(*o));
	o->live = true;
	o->size = size;
	o->placement = placement;
	o->flags = flags;
	o->va = fake.next_va;
	fake.next_va += size + PAGE;
	o->mem = aligned_alloc(PAGE, size);
	memset(o->mem, 0, size);
}

static uint32_t obj_new(struct fdev *fd, uint64_t size, uint32_t placement,
			uint32_t flags)
{
	uint32_t h;

	for (h = 1; h < MAX_OBJ; h++) {
		if (!fd->obj[h].live) {
			obj_init(&fd->obj[h], size, placement, flags);
			return h;
		}
	}
	return 0;
}

/*
 * The kernel closes handle @h: a mapping keeps the memory (a zombie until
 * unmapped), as a CPU mapping of a GEM object outlives its handle.
 */
static void obj_close_mapped(struct fdev *fd, uint32_t h)
{
	struct fobj *o = &fd->obj[h];
	int z;

	o->live = false;
	if (!o->maps) {
		free(o->mem);
		return;
	}
	for (z = 0; z < MAX_ZOMBIE && fake.zombie[z].mem; z++)
		;
	if (z == MAX_ZOMBIE) {
		misuse("too many zombies");
		return;
	}
	fake.zombie[z].mem = o->mem;
	fake.zombie[z].size = o->size;
	fake.zombie[z].maps = o->maps;
}

static struct fobj *obj_get(struct fdev *fd, uint32_t h)
{
	if (!h || h >= MAX_OBJ || !fd->obj[h].live)
		return NULL;
	return &fd->obj[h];
}

static uint32_t sync_new(struct fdev *fd, int timeline)
{
	uint32_t h;

	for (h = 1; h < MAX_SYNC; h++) {
		if (!fd->sync[h].live) {
			fd->sync[h].live = true;
			fd->sync[h].timeline = timeline;
			return h;
		}
	}
	return 0;
}

static struct fsync *sync_get(struct fdev *fd, uint32_t h)
{
	if (!h || h >= MAX_SYNC || !fd->sync[h].live)
		return NULL;
	return &fd->sync[h];
}

/* The queue whose timeline a syncobj of device @d stands for. */
static struct fqueue *queue_of_sync(int d, uint32_t h)
{
	struct fsync *s = sync_get(&fake.dev[d], h);

	if (!s || s->timeline <= 0 || s->timeline >= MAX_QUEUE)
		return NULL;
	return &fake.queue[s->timeline];
}

static void page_complete(struct drm_trn_queue_status_page *pg, uint64_t n)
{
	if (__atomic_load_n(&pg->completed_seqno, __ATOMIC_RELAXED) < n)
		__atomic_store_n(&pg->completed_seqno, n, __ATOMIC_RELEASE);
}

/* The kernel's order: entry, then failed_count, then completed_seqno. */
static void page_fail(struct drm_trn_queue_status_page *pg, uint64_t seqno,
		      uint32_t error)
{
	uint64_t n = __atomic_load_n(&pg->failed_count, __ATOMIC_RELAXED);
	struct drm_trn_job_failure *f =
		&pg->failures[n % DRM_TRN_STATUS_PAGE_FAILURES];

	f->error = error;
	f->status = DRM_TRN_STATUS_BAD_OPCODE;
	__atomic_store_n(&f->seqno, seqno, __ATOMIC_RELEASE);
	__atomic_store_n(&pg->failed_count, n + 1, __ATOMIC_RELEASE);
	page_complete(pg, seqno);
}

static void copy_syncs(struct drm_trn_sync *dst, uint64_t src, uint32_t n)
{
	if (n > REC_ITEMS)
		n = REC_ITEMS;
	if (n)
		memcpy(dst, (void *)(uintptr_t)src, n * sizeof(*dst));
}

static int do_submit(int d, struct drm_trn_submit *s)
{
	struct drm_trn_job *jobs = (void *)(uintptr_t)s->jobs;
	struct fqueue *q;
	uint32_t i, k;

	if (!s->queue_id || s->queue_id >= MAX_QUEUE ||
	    !fake.queue[s->queue_id].live || fake.queue[s->queue_id].dev != d)
		return set_errno(ENOENT);
	if ((s->flags & ~DRM_TRN_SUBMIT_NONBLOCK) ||
	    (s->flags && fake.uapi_minor < 3) || !s->job_count ||
	    s->job_count > DRM_TRN_SUBMIT_MAX_JOBS || s->job_size != 64) {
		misuse("bad submit header");
		return set_errno(EINVAL);
	}
	q = &fake.queue[s->queue_id];
	/* The kernel's order: banned, then room, then the jobs. */
	if (q->banned)
		return set_errno(ECANCELED);
	if (fake.uapi_minor >= 3 &&
	    q->submitted - q->page->completed_seqno + s->job_count >
	    fake.depth) {
		if (s->flags & DRM_TRN_SUBMIT_NONBLOCK)
			return set_errno(EAGAIN);
		/* Waits until the device has finished enough jobs. */
		page_complete(q->page,
			      q->submitted + s->job_count - fake.depth);
		fake.blocked++;
	}
	fake.sub.dev = d;
	fake.sub.s = *s;
	for (i = 0; i < s->job_count; i++) {
		struct drm_trn_job *j = &jobs[i];

		/* Every handle must exist in this file: the kernel's rule. */
		for (k = 0; k < j->bo_count; k++)
			if (!obj_get(&fake.dev[d],
				     ((uint32_t *)(uintptr_t)j->bo_handles)[k]))
				return set_errno(ENOENT);
		for (k = 0; k < j->in_count; k++) {
			struct drm_trn_sync *in = (void *)(uintptr_t)j->in_syncs;

			if (!sync_get(&fake.dev[d], in[k].handle) || in[k].flags)
				return set_errno(ENOENT);
		}
		if (j->pad || j->seqno || (j->bo_count && !j->bo_handles) ||
		    (j->in_count && !j->in_syncs) ||
		    (j->out_count && !j->out_syncs)) {
			misuse("bad job");
			return set_errno(EINVAL);
		}
		if (i < REC_JOBS) {
			fake.sub.jobs[i] = *j;
			if (j->bo_count)
				memcpy(fake.sub.bos[i],
				       (void *)(uintptr_t)j->bo_handles,
				       (j->bo_count < REC_ITEMS ? j->bo_count :
					REC_ITEMS) * 4);
			copy_syncs(fake.sub.in[i], j->in_syncs, j->in_count);
			copy_syncs(fake.sub.out[i], j->out_syncs, j->out_count);
		}
	}
	for (i = 0; i < s->job_count; i++)
		jobs[i].seqno = ++q->submitted;
	fake.submits++;
	return 0;
}

static int do_wait(int d, struct drm_syncobj_timeline_wait *w)
{
	uint32_t *h = (void *)(uintptr_t)w->handles;
	uint64_t *p = (void *)(uintptr_t)w->points;
	uint32_t i, n;

	fake.waits++;
	fake.wait.dev = d;
	fake.wait.count = w->count_handles;
	fake.wait.flags = w->flags;
	fake.wait.timeout = w->timeout_nsec;
	n = w->count_handles < REC_WAIT ? w->count_handles : REC_WAIT;
	memcpy(fake.wait.handles, h, n * sizeof(*h));
	memcpy(fake.wait.points, p, n * sizeof(*p));
	for (i = 0; i < w->count_handles; i++) {
		struct fqueue *q = queue_of_sync(d, h[i]);

		if (!q || !p[i] || p[i] > q->submitted) {
			misuse("wait for a point never submitted");
			return set_errno(EINVAL);
		}
	}
	if (fake.wait_mode == WAIT_TIMEOUT)
		return set_errno(ETIME);
	if (fake.wait_mode == WAIT_COMPLETE) {
		for (i = 0; i < w->count_handles; i++) {
			if (!(w->flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL) &&
			    i != fake.wait_first)
				continue;
			page_complete(queue_of_sync(d, h[i])->page, p[i]);
		}
	}
	w->first_signaled = fake.wait_first;
	return 0;
}

static int fake_trn_ioctl(int d, unsigned long req, void *arg)
{
	struct fdev *fd = &fake.dev[d];

	if (fake.fail_next && req == fake.fail_req) {
		int e = fake.fail_next;

		fake.fail_next = 0;
		return set_errno(e);
	}
	if (req == DRM_IOCTL_TRN_QUERY) {
		struct drm_trn_query *q = arg;
		struct drm_trn_device_info *di = (void *)(uintptr_t)q->data;

		if (q->query != DRM_TRN_QUERY_DEVICE_INFO ||
		    q->size != sizeof(*di))
			return set_errno(EINVAL);
		memset(di, 0, sizeof(*di));
		di->uapi_major = DRM_TRN_UAPI_MAJOR;
		di->uapi_minor = fake.uapi_minor;
		di->generation = DRM_TRN_GEN_SIM;
		di->num_cores = 8;
		if (fake.uapi_minor < 3) {
			/* uAPI 1.2's answer ends before queue_depth. */
			q->size = offsetof(struct drm_trn_device_info,
					   queue_depth);
			return 0;
		}
		di->queue_depth = fake.depth;
		di->job_timeout_ms = 5000;
		di->ban_faults = 16;
		if (fake.uapi_minor >= 8)
			di->hbm_stacks = 4;
		return 0;
	}
	if (req == DRM_IOCTL_TRN_BO_CREATE) {
		struct drm_trn_bo_create *c = arg;

		if (c->placement != DRM_TRN_PLACEMENT_HOST &&
		    c->placement != DRM_TRN_PLACEMENT_HBM)
			return set_errno(EINVAL);
		c->handle = obj_new(fd, c->size, c->placement, c->flags);
		if (!c->handle)
			return set_errno(ENOMEM);
		c->va = fd->obj[c->handle].va;
		return 0;
	}
	if (req == DRM_IOCTL_TRN_BO_INFO) {
		struct drm_trn_bo_info *bi = arg;
		struct fobj *o = obj_get(fd, bi->handle);

		if (!o) {
			misuse("BO_INFO of an unknown handle");
			return set_errno(ENOENT);
		}
		bi->size = o->size;
		bi->va = o->va;
		bi->placement = o->placement;
		bi->bo_flags = o->flags;
		bi->mmap_offset = mmap_offset(d, bi->handle);
		return 0;
	}
	if (req == DRM_IOCTL_GEM_CLOSE) {
		struct drm_gem_close *c = arg;
		struct fobj *o = obj_get(fd, c->handle);

		if (!o) {
			misuse("GEM_CLOSE of an unknown handle");
			return set_errno(EINVAL);
		}
		if (o->maps)
			misuse("GEM_CLOSE of a mapped object (library order)");
		free(o->mem);
		o->live = false;
		fake.gem_closes++;
		return 0;
	}
	if (req == DRM_IOCTL_TRN_QUEUE_CREATE) {
		struct drm_trn_queue_create *c = arg;
		struct fqueue *q;
		uint32_t id;

		fake.last_create = *c;
		if (c->flags || c->ring_entries || c->ring_handle ||
		    c->doorbell_handle || c->pad ||
		    c->queue_id || c->syncobj || c->status_handle) {
			misuse("QUEUE_CREATE with non-zero in/out fields");
			return set_errno(EINVAL);
		}
		if (c->core >= 8 || c->priority > DRM_TRN_PRIORITY_HIGH)
			return set_errno(EINVAL);
		for (id = 1; id < MAX_QUEUE && fake.queue[id].live; id++)
			;
		if (id == MAX_QUEUE)
			return set_errno(ENOMEM);
		q = &fake.queue[id];
		memset(q, 0, sizeof(*q));
		q->live = true;
		q->dev = d;
		q->core = c->core;
		q->priority = c->priority;
		q->syncobj = sync_new(fd, (int)id);
		q->status_handle = obj_new(fd, sizeof(*q->page),
					   DRM_TRN_PLACEMENT_HOST, 0);
		q->page = fd->obj[q->status_handle].mem;
		c->queue_id = id;
		c->syncobj = q->syncobj;
		c->status_handle = q->status_handle;
		fake.last_create = *c;
		fake.creates++;
		return 0;
	}
	if (req == DRM_IOCTL_TRN_QUEUE_DESTROY) {
		struct drm_trn_queue_destroy *x = arg;
		struct fqueue *q;

		if (!x->queue_id || x->queue_id >= MAX_QUEUE ||
		    !fake.queue[x->queue_id].live || x->flags) {
			misuse("QUEUE_DESTROY of an unknown queue");
			return set_errno(ENOENT);
		}
		q = &fake.queue[x->queue_id];
		q->live = false;
		fake.destroys++;
		/* uAPI 1.3 closes the status handle; the syncobj stays. */
		if (fake.uapi_minor < 3)
			return 0;
		if (!obj_get(fd, q->status_handle)) {
			misuse("status handle closed before QUEUE_DESTROY");
			return 0;
		}
		obj_close_mapped(fd, q->status_handle);
		fake.status_closes++;
		if (fake.reuse_handles) {
			/* Another thread's new buffer gets the number. */
			obj_init(&fd->obj[q->status_handle], PAGE,
				 DRM_TRN_PLACEMENT_HOST, 0);
			fake.reused_handle = q->status_handle;
		}
		return 0;
	}
	if (req == DRM_IOCTL_TRN_SUBMIT)
		return do_submit(d, arg);
	if (req == DRM_IOCTL_TRN_QUEUE_STATUS) {
		struct drm_trn_queue_status *s = arg;
		struct fqueue *q;

		if (!s->queue_id || s->queue_id >= MAX_QUEUE || s->flags)
			return set_errno(EINVAL);
		q = &fake.queue[s->queue_id];
		fake.statuses++;
		s->submitted_seqno = q->submitted;
		s->completed_seqno = q->page->completed_seqno;
		s->jobs_failed = q->page->failed_count;
		s->failed_seqno = 7;
		s->error = EFAULT;
		s->status = DRM_TRN_STATUS_MMU_FAULT;
		s->error_offset = 0x40;
		s->error_cmd_va = 0x1040;
		s->fault_va = 0xdead000;
		s->state = DRM_TRN_QUEUE_FAULTED |
			   (q->banned ? DRM_TRN_QUEUE_BANNED : 0);
		s->resets = 2;
		return 0;
	}
	if (req == DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT)
		return do_wait(d, arg);
	if (req == DRM_IOCTL_SYNCOBJ_CREATE) {
		struct drm_syncobj_create *c = arg;

		if (c->flags) {
			misuse("SYNCOBJ_CREATE flags");
			return set_errno(EINVAL);
		}
		c->handle = sync_new(fd, 1000 + (int)++fake.sync_creates);
		return 0;
	}
	if (req == DRM_IOCTL_SYNCOBJ_DESTROY) {
		struct drm_syncobj_destroy *x = arg;
		struct fsync *s = sync_get(fd, x->handle);

		if (!s || x->pad) {
			misuse("SYNCOBJ_DESTROY of an unknown handle");
			return set_errno(EINVAL);
		}
		s->live = false;
		fake.sync_destroys++;
		return 0;
	}
	if (req == DRM_IOCTL_SYNCOBJ_TRANSFER) {
		struct drm_syncobj_transfer *t = arg;

		fake.last_transfer = *t;
		if (!sync_get(fd, t->src_handle) || !sync_get(fd, t->dst_handle)) {
			misuse("SYNCOBJ_TRANSFER of an unknown handle");
			return set_errno(ENOENT);
		}
		fake.transfers++;
		return 0;
	}
	if (req == DRM_IOCTL_SYNCOBJ_SIGNAL) {
		struct drm_syncobj_array *a = arg;

		if (a->count_handles != 1 || a->pad)
			return set_errno(EINVAL);
		fake.last_signal = *(uint32_t *)(uintptr_t)a->handles;
		fake.signals++;
		return 0;
	}
	if (req == DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD) {
		struct drm_syncobj_handle *h = arg;
		struct fsync *s = sync_get(fd, h->handle);
		int nfd;

		fake.last_export = *h;
		if (!s) {
			misuse("SYNCOBJ_HANDLE_TO_FD of an unknown handle");
			return set_errno(ENOENT);
		}
		nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nfd < 0 || nfd >= MAX_FD)
			return set_errno(EMFILE);
		if (h->flags & DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE) {
			fake.sync_file_exports++;
		} else {
			fake.timeline_of_fd[nfd] = s->timeline;
			fake.exports++;
		}
		h->fd = nfd;
		return 0;
	}
	if (req == DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE) {
		struct drm_syncobj_handle *h = arg;

		if (h->fd < 0 || h->fd >= MAX_FD ||
		    fake.timeline_of_fd[h->fd] < 0 || h->flags || h->handle) {
			misuse("SYNCOBJ_FD_TO_HANDLE of a non-syncobj fd");
			return set_errno(EINVAL);
		}
		h->handle = sync_new(fd, fake.timeline_of_fd[h->fd]);
		fake.imports++;
		return 0;
	}
	return set_errno(ENOTTY);
}

static int fake_dispatch(int fd, unsigned long req, void *arg)
{
	int d, ret;

	if (req == DRM_IOCTL_VERSION) {
		struct drm_version *v = arg;

		memcpy(v->name, "trn", v->name_len < 3 ? v->name_len : 3);
		v->name_len = 3;
		v->version_major = 1;
		return 0;
	}
	d = dev_of_fd(fd);
	if (d < 0) {
		fprintf(stderr, "ioctl on fd %d, not a device\n", fd);
		check_failures++;
		return set_errno(EBADF);
	}
	pthread_mutex_lock(&fake.lock);
	ret = fake_trn_ioctl(d, req, arg);
	pthread_mutex_unlock(&fake.lock);
	return ret;
}

/* drmIoctl(): everything but the submission. */
static int fake_ioctl(int fd, unsigned long req, void *arg)
{
	if (req == DRM_IOCTL_TRN_SUBMIT) {
		pthread_mutex_lock(&fake.lock);
		misuse("SUBMIT through drmIoctl(), which retries EAGAIN");
		pthread_mutex_unlock(&fake.lock);
	}
	return fake_dispatch(fd, req, arg);
}

/*
 * One ioctl(): only the submission; fails as scripted first. A library
 * that kept restarting a non-blocking submission on EAGAIN would spin
 * here for ever: that is ended with EIO after a while.
 */
static int fake_raw_ioctl(int fd, unsigned long req, void *arg)
{
	const struct drm_trn_submit *s = arg;
	bool nonblock = req == DRM_IOCTL_TRN_SUBMIT &&
			(s->flags & DRM_TRN_SUBMIT_NONBLOCK);
	int e = 0, ret;

	pthread_mutex_lock(&fake.lock);
	if (req != DRM_IOCTL_TRN_SUBMIT) {
		misuse("raw ioctl other than SUBMIT");
	} else {
		fake.attempt_flags[fake.attempts++ % REC_ATTEMPTS] = s->flags;
		if (fake.script_pos < fake.script_len)
			e = fake.script[fake.script_pos++];
	}
	pthread_mutex_unlock(&fake.lock);
	if (e)
		ret = set_errno(e);
	else
		ret = fake_dispatch(fd, req, arg);
	e = ret ? errno : 0;
	pthread_mutex_lock(&fake.lock);
	if (!nonblock || e != EAGAIN) {
		fake.eagain_streak = 0;
	} else if (++fake.eagain_streak > 100) {
		misuse("non-blocking submission restarted on EAGAIN");
		fake.eagain_streak = 0;
		e = EIO;
	}
	pthread_mutex_unlock(&fake.lock);
	return e ? set_errno(e) : ret;
}

static void *fake_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t offset)
{
	int d = dev_of_fd(fd);
	void *p = MAP_FAILED;
	uint32_t h;

	pthread_mutex_lock(&fake.lock);
	fake.mmaps++;
	fake.last_mmap_prot = prot;
	fake.last_mmap_flags = flags;
	if (fake.fail_mmap) {
		fake.fail_mmap = false;
		errno = ENOMEM;
		goto out;
	}
	for (h = 1; d >= 0 && h < MAX_OBJ; h++) {
		struct fobj *o = &fake.dev[d].obj[h];

		if (o->live && (uint64_t)offset == mmap_offset(d, h)) {
			if (addr || len != o->size || flags != MAP_SHARED)
				misuse("mmap arguments");
			o->maps++;
			p = o->mem;
			goto out;
		}
	}
	misuse("mmap of an unknown offset");
	errno = EINVAL;
out:
	pthread_mutex_unlock(&fake.lock);
	return p;
}

static int fake_munmap(void *addr, size_t len)
{
	int d;
	uint32_t h;

	pthread_mutex_lock(&fake.lock);
	fake.munmaps++;
	for (d = 0; d < NDEV; d++) {
		for (h = 1; h < MAX_OBJ; h++) {
			struct fobj *o = &fake.dev[d].obj[h];

			if (o->live && o->mem == addr && o->maps) {
				if (len != o->size)
					misuse("munmap length");
				o->maps--;
				pthread_mutex_unlock(&fake.lock);
				return 0;
			}
		}
	}
	for (d = 0; d < MAX_ZOMBIE; d++) {
		struct fzombie *z = &fake.zombie[d];

		if (z->mem == addr && z->maps) {
			if (len != z->size)
				misuse("munmap length");
			if (!--z->maps) {
				free(z->mem);
				z->mem = NULL;
			}
			pthread_mutex_unlock(&fake.lock);
			return 0;
		}
	}
	misuse("munmap of something not mapped");
	pthread_mutex_unlock(&fake.lock);
	return 0;
}

static void setup(void)
{
	char path[PATH_MAX];
	int d, i;

	snprintf(root, sizeof(root), "/tmp/trnhal-exec-XXXXXX");
	if (!mkdtemp(root))
		perror("mkdtemp"), exit(1);
	snprintf(sys_root, sizeof(sys_root), "%s/sys", root);
	snprintf(dev_root, sizeof(dev_root), "%s/dev", root);
	if (mkdir(sys_root, 0755) || mkdir(dev_root, 0755))
		perror("mkdir"), exit(1);
	for (d = 0; d < NDEV; d++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/accel%d", sys_root, d);
		if (mkdir(path, 0755))
			perror("mkdir"), exit(1);
		snprintf(path, sizeof(path), "%s/accel%d", dev_root, d);
		f = fopen(path, "w");
		if (!f)
			perror(path), exit(1);
		fclose(f);
	}
	for (i = 0; i < MAX_FD; i++)
		fake.timeline_of_fd[i] = -1;
	fake.next_va = 1ULL << 32;
	trnhal_test_sysfs_root = sys_root;
	trnhal_test_dev_root = dev_root;
	trnhal_test_ioctl = fake_ioctl;
	trnhal_test_raw_ioctl = fake_raw_ioctl;
	trnhal_test_mmap = fake_mmap;
	trnhal_test_munmap = fake_munmap;
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", root);
}

static trn_device_t *open_dev(unsigned int minor)
{
	trn_device_t *dev = NULL;

	CHECK_INT(trn_device_open(minor, &dev), 0);
	if (!dev)
		exit(check_exit("test_exec"));
	return dev;
}

static trn_queue_t *new_queue(trn_device_t *dev)
{
	trn_queue_t *q = NULL;

	CHECK_INT(trn_queue_create(dev, 0, TRN_PRIORITY_NORMAL, &q), 0);
	if (!q)
		exit(check_exit("test_exec"));
	return q;
}

/* The fake's record of the queue the library created last. */
static struct fqueue *last_fqueue(void)
{
	return &fake.queue[fake.last_create.queue_id];
}

static int live_objects(void)
{
	int d, h, n = 0;

	pthread_mutex_lock(&fake.lock);
	for (d = 0; d < NDEV; d++)
		for (h = 1; h < MAX_OBJ; h++)
			n += fake.dev[d].obj[h].live;
	pthread_mutex_unlock(&fake.lock);
	return n;
}

/* Mappings of closed handles not unmapped yet. */
static int live_zombies(void)
{
	int z, n = 0;

	pthread_mutex_lock(&fake.lock);
	for (z = 0; z < MAX_ZOMBIE; z++)
		n += fake.zombie[z].mem != NULL;
	pthread_mutex_unlock(&fake.lock);
	return n;
}

static int live_syncobjs(void)
{
	int d, h, n = 0;

	pthread_mutex_lock(&fake.lock);
	for (d = 0; d < NDEV; d++)
		for (h = 1; h < MAX_SYNC; h++)
			n += fake.dev[d].sync[h].live;
	pthread_mutex_unlock(&fake.lock);
	return n;
}

/* A job of @n NOPs at the start of @cb (recorded if @cb is empty). */
static struct trn_job nop_job(trn_cmdbuf_t *cb)
{
	struct trn_job j;

	if (!trn_cmdbuf_size(cb))
		CHECK_INT(trn_cmd_nop(cb), 0);
	memset(&j, 0, sizeof(j));
	j.cmd_va = trn_cmdbuf_va(cb);
	j.cmd_size = (uint32_t)trn_cmdbuf_size(cb);
	return j;
}

/* Submit @n empty jobs to @q so that fences up to @n can be asked about. */
static void submit_n(trn_queue_t *q, trn_cmdbuf_t *cb, unsigned int n)
{
	struct trn_job j = nop_job(cb);
	struct trn_fence f;

	while (n--)
		CHECK_INT(trn_submit(q, &j, &f), 0);
}

static void test_queue_lifetime(void)
{
	unsigned int gem_closes = fake.gem_closes, munmaps = fake.munmaps;
	unsigned int status_closes = fake.status_closes;
	unsigned int sync_destroys = fake.sync_destroys;
	trn_device_t *dev = open_dev(0);
	int fd = trn_device_fd(dev);
	struct fqueue *fq;
	trn_queue_t *q = (void *)1;
	uint32_t id;

	CHECK_INT(trn_queue_create(dev, 3, TRN_PRIORITY_HIGH, &q), 0);
	CHECK(q != NULL);
	CHECK_INT(fake.last_create.core, 3);
	CHECK_INT(fake.last_create.priority, DRM_TRN_PRIORITY_HIGH);
	CHECK_INT(fake.last_create.flags, 0);
	id = fake.last_create.queue_id;
	fq = last_fqueue();
	/* The status page is mapped read-only and shared. */
	CHECK_INT(fake.last_mmap_prot, PROT_READ);
	CHECK_INT(fake.last_mmap_flags, MAP_SHARED);
	CHECK_INT(fake.dev[0].obj[fq->status_handle].maps, 1);
	CHECK(trn_queue_device(q) == dev);
	CHECK(trn_queue_device(NULL) == NULL);
	CHECK_INT(trn_queue_last_seqno(q), 0);
	CHECK_INT(trn_queue_last_seqno(NULL), 0);

	/* The queue keeps the device's file open. */
	trn_device_close(dev);
	CHECK(fcntl(fd, F_GETFD) >= 0);
	CHECK_INT(trnhal_test_registry_size(), 1);

	trn_queue_destroy(q);
	CHECK(!fake.queue[id].live);
	/* QUEUE_DESTROY closed the page's handle; the library only unmaps. */
	CHECK_INT(fake.status_closes, status_closes + 1);
	CHECK_INT(fake.gem_closes, gem_closes);
	CHECK_INT(fake.munmaps, munmaps + 1);
	CHECK_INT(live_zombies(), 0);
	CHECK_INT(fake.sync_destroys, sync_destroys + 1);
	CHECK(!fake.dev[0].sync[fq->syncobj].live);
	CHECK_INT(trnhal_test_registry_size(), 0);
	CHECK(fcntl(fd, F_GETFD) < 0);
	trn_queue_destroy(NULL);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(live_syncobjs(), 0);
	CHECK_INT(fake.bad, 0);
}

static void test_queue_errors(void)
{
	trn_device_t *dev = open_dev(0);
	unsigned int gem_closes = fake.gem_closes;
	struct trn_queue_status st;
	trn_queue_t *q = (void *)1;

	CHECK_INT(trn_queue_create(dev, 0, 0, NULL), -EINVAL);
	CHECK_INT(trn_queue_create(NULL, 0, 0, &q), -EINVAL);
	CHECK(q == NULL);
	/* The kernel's errors come back; nothing is left behind. */
	CHECK_INT(trn_queue_create(dev, 8, 0, &q), -EINVAL);
	CHECK_INT(trn_queue_create(dev, 0, 3, &q), -EINVAL);
	fake.fail_req = DRM_IOCTL_TRN_QUEUE_CREATE;
	fake.fail_next = EACCES;
	CHECK_INT(trn_queue_create(dev, 0, TRN_PRIORITY_HIGH, &q), -EACCES);
	CHECK(q == NULL);
	/* A page that cannot be mapped undoes the queue. */
	fake.fail_mmap = true;
	CHECK_INT(trn_queue_create(dev, 0, 0, &q), -ENOMEM);
	CHECK(q == NULL);
	CHECK(!last_fqueue()->live);
	fake.fail_req = DRM_IOCTL_TRN_BO_INFO;
	fake.fail_next = ENODEV;
	CHECK_INT(trn_queue_create(dev, 0, 0, &q), -ENODEV);
	CHECK(!last_fqueue()->live);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(live_syncobjs(), 0);
	/* The status handles went with QUEUE_DESTROY, not closed twice. */
	CHECK_INT(fake.gem_closes, gem_closes);

	q = new_queue(dev);
	CHECK_INT(trn_queue_status(q, NULL), -EINVAL);
	CHECK_INT(trn_queue_status(NULL, &st), -EINVAL);
	memset(&st, 0xaa, sizeof(st));
	CHECK_INT(trn_queue_status(q, &st), 0);
	CHECK_INT(st.submitted_seqno, 0);
	CHECK_INT(st.failed_seqno, 7);
	CHECK_INT(st.error, -EFAULT);		/* negative, unlike the uAPI */
	CHECK_INT(st.status, TRN_STATUS_MMU_FAULT);
	CHECK_INT(st.error_offset, 0x40);
	CHECK_INT(st.error_cmd_va, 0x1040);
	CHECK_INT(st.fault_va, 0xdead000);
	CHECK_INT(st.state, TRN_QUEUE_FAULTED);
	CHECK_INT(st.resets, 2);
	CHECK_INT(st.reserved[0], 0);
	CHECK_INT(st.reserved[5], 0);
	fake.fail_req = DRM_IOCTL_TRN_QUEUE_STATUS;
	fake.fail_next = ENODEV;
	CHECK_INT(trn_queue_status(q, &st), -ENODEV);
	trn_queue_destroy(q);
	trn_device_close(dev);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(fake.bad, 0);
}

static void test_submit(void)
{
	trn_device_t *dev = open_dev(0), *dev1 = open_dev(1);
	struct trn_syncobj_point wsp[2], ssp;
	struct trn_fence waits[3], f = { NULL, 99 };
	trn_queue_t *q = new_queue(dev);
	uint32_t qsync = last_fqueue()->syncobj;
	trn_queue_t *q2 = new_queue(dev);
	uint32_t q2sync = last_fqueue()->syncobj;
	uint32_t qid = fake.last_create.queue_id - 1;
	trn_cmdbuf_t *cb;
	trn_bo_t *bo, *other, *bos[2];
	struct trn_bo_info cbi, boi;
	struct trn_job j;
	unsigned int submits;

	uint32_t raw[3];
	int i;

	/* Raw syncobjs the job names (made as if by the application). */
	pthread_mutex_lock(&fake.lock);
	for (i = 0; i < 3; i++)
		raw[i] = sync_new(&fake.dev[0], 500 + i);
	pthread_mutex_unlock(&fake.lock);
	wsp[0] = (struct trn_syncobj_point){ raw[0], 0, 3 };
	wsp[1] = (struct trn_syncobj_point){ raw[1], 0, 0 };
	ssp = (struct trn_syncobj_point){ raw[2], 0, 0 };

	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	CHECK_INT(trn_bo_create(dev, 4096, TRN_PLACEMENT_HBM, 0, 0, &bo), 0);
	CHECK_INT(trn_bo_create(dev1, 4096, TRN_PLACEMENT_HBM, 0, 0, &other), 0);
	submit_n(q2, cb, 5);
	CHECK_INT(trn_queue_last_seqno(q2), 5);

	CHECK_INT(trn_cmd_write32(cb, trn_bo_va(bo), 1), 0);
	bos[0] = trn_cmdbuf_bo(cb);
	bos[1] = bo;
	waits[0].queue = q;		/* seqno 0: always signalled, skipped */
	waits[0].seqno = 0;
	waits[1].queue = q2;
	waits[1].seqno = 5;
	waits[2].queue = NULL;		/* the zero fence, skipped as well */
	waits[2].seqno = 0;
	memset(&j, 0, sizeof(j));
	j.cmd_va = trn_cmdbuf_va(cb);
	j.cmd_size = (uint32_t)trn_cmdbuf_size(cb);
	j.bos = bos;
	j.bo_count = 2;
	j.waits = waits;
	j.wait_count = 3;
	j.wait_syncobjs = wsp;
	j.wait_syncobj_count = 2;
	j.signal_syncobjs = &ssp;
	j.signal_syncobj_count = 1;
	CHECK_INT(trn_submit(q, &j, &f), 0);
	CHECK(f.queue == q);
	CHECK_INT(f.seqno, 1);
	CHECK_INT(trn_queue_last_seqno(q), 1);

	CHECK_INT(trn_bo_info(trn_cmdbuf_bo(cb), &cbi), 0);
	CHECK_INT(trn_bo_info(bo, &boi), 0);
	CHECK_INT(fake.sub.dev, 0);
	CHECK_INT(fake.sub.s.queue_id, qid);
	CHECK_INT(fake.sub.s.flags, 0);
	CHECK_INT(fake.sub.s.job_count, 1);
	CHECK_INT(fake.sub.s.job_size, sizeof(struct drm_trn_job));
	CHECK_INT(fake.sub.jobs[0].cmd_va, cbi.va);
	CHECK_INT(fake.sub.jobs[0].cmd_size, 8 + 24);
	CHECK_INT(fake.sub.jobs[0].flags, 0);
	CHECK_INT(fake.sub.jobs[0].bo_count, 2);
	CHECK_INT(fake.sub.bos[0][0], cbi.handle);
	CHECK_INT(fake.sub.bos[0][1], boi.handle);
	CHECK_INT(fake.sub.jobs[0].in_count, 3);
	CHECK_INT(fake.sub.in[0][0].handle, q2sync);
	CHECK_INT(fake.sub.in[0][0].point, 5);
	CHECK_INT(fake.sub.in[0][0].flags, 0);
	CHECK_INT(fake.sub.in[0][1].handle, raw[0]);
	CHECK_INT(fake.sub.in[0][1].point, 3);
	CHECK_INT(fake.sub.in[0][2].handle, raw[1]);
	CHECK_INT(fake.sub.in[0][2].point, 0);
	CHECK_INT(fake.sub.jobs[0].out_count, 1);
	CHECK_INT(fake.sub.out[0][0].handle, raw[2]);
	CHECK_INT(fake.sub.out[0][0].point, 0);
	CHECK_INT(fake.sub.jobs[0].pad, 0);
	CHECK(qsync != q2sync);

	/* A job without buffers or fences passes null pointers. */
	j = nop_job(cb);
	CHECK_INT(trn_submit(q, &j, NULL), 0);
	CHECK_INT(trn_queue_last_seqno(q), 2);
	CHECK_INT(fake.sub.jobs[0].bo_count, 0);
	CHECK_INT(fake.sub.jobs[0].bo_handles, 0);
	CHECK_INT(fake.sub.jobs[0].in_syncs, 0);
	CHECK_INT(fake.sub.jobs[0].out_syncs, 0);

	/* The library's own checks: nothing reaches the kernel. */
	submits = fake.submits;
	CHECK_INT(trn_submit(NULL, &j, &f), -EINVAL);
	CHECK_INT(trn_submit(q, NULL, &f), -EINVAL);
	CHECK_INT(trn_submit_batch(q, &j, 0, &f), -EINVAL);
	j.reserved[3] = 1;
	CHECK_INT(trn_submit(q, &j, &f), -EINVAL);
	j = nop_job(cb);
	j.bo_count = 1;				/* NULL array */
	CHECK_INT(trn_submit(q, &j, &f), -EINVAL);
	bos[1] = other;				/* a buffer of accel1 */
	j.bos = bos;
	j.bo_count = 2;
	CHECK_INT(trn_submit(q, &j, &f), -EXDEV);
	bos[1] = NULL;
	CHECK_INT(trn_submit(q, &j, &f), -EINVAL);
	j = nop_job(cb);
	wsp[0].reserved = 1;
	j.wait_syncobjs = wsp;
	j.wait_syncobj_count = 1;
	CHECK_INT(trn_submit(q, &j, &f), -EINVAL);
	wsp[0].reserved = 0;
	j = nop_job(cb);
	waits[0].queue = NULL;
	waits[0].seqno = 4;			/* a fence without its queue */
	j.waits = waits;
	j.wait_count = 1;
	CHECK_INT(trn_submit(q, &j, &f), -EINVAL);
	CHECK_INT(fake.submits, submits);

	/* The kernel's errors come back as they are; seqnos unchanged. */
	j = nop_job(cb);
	fake.fail_req = DRM_IOCTL_TRN_SUBMIT;
	fake.fail_next = EFAULT;
	f.seqno = 77;
	CHECK_INT(trn_submit(q, &j, &f), -EFAULT);
	CHECK_INT(f.seqno, 77);
	CHECK_INT(trn_queue_last_seqno(q), 2);
	/* A handle the kernel does not know (closed behind our back). */
	pthread_mutex_lock(&fake.lock);
	fake.dev[0].obj[boi.handle].live = false;
	pthread_mutex_unlock(&fake.lock);
	bos[0] = bo;
	j.bos = bos;
	j.bo_count = 1;
	CHECK_INT(trn_submit(q, &j, &f), -ENOENT);
	pthread_mutex_lock(&fake.lock);
	fake.dev[0].obj[boi.handle].live = true;
	pthread_mutex_unlock(&fake.lock);

	trn_bo_free(bo);
	trn_bo_free(other);
	trn_cmdbuf_destroy(cb);
	trn_queue_destroy(q);
	trn_queue_destroy(q2);
	trn_device_close(dev);
	trn_device_close(dev1);
	pthread_mutex_lock(&fake.lock);
	for (i = 0; i < 3; i++)
		fake.dev[0].sync[raw[i]].live = false;
	pthread_mutex_unlock(&fake.lock);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(live_syncobjs(), 0);
	CHECK_INT(trnhal_test_registry_size(), 0);
	CHECK_INT(fake.bad, 0);
}

/* A batch beyond the stack arrays, and one within them. */
static void test_batch(void)
{
	enum { NJOBS = 6, NBOS = 12 };
	trn_device_t *dev = open_dev(0);
	trn_queue_t *q = new_queue(dev), *q2 = new_queue(dev);
	uint32_t q2sync = last_fqueue()->syncobj;
	struct trn_job jobs[NJOBS];
	struct trn_fence fences[NJOBS], waits[NJOBS][8];
	trn_bo_t *bos[NBOS];
	struct trn_bo_info info;
	trn_cmdbuf_t *cb;
	int i, k;

	CHECK_INT(trn_cmdbuf_create(dev, 4096, &cb), 0);
	for (i = 0; i < NBOS; i++)
		CHECK_INT(trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0,
					&bos[i]), 0);
	submit_n(q2, cb, 40);
	for (i = 0; i < NJOBS; i++) {
		CHECK_INT(trn_cmd_nop(cb), 0);
		jobs[i] = nop_job(cb);
		jobs[i].cmd_va = trn_cmdbuf_va(cb) + 8 * (uint64_t)i;
		jobs[i].cmd_size = 8;
		jobs[i].bos = bos;
		jobs[i].bo_count = (uint32_t)(NBOS - i);
		for (k = 0; k < 8; k++) {
			waits[i][k].queue = q2;
			waits[i][k].seqno = (uint64_t)(i * 5 + k + 1);
		}
		jobs[i].waits = waits[i];
		jobs[i].wait_count = 8;		/* 48 in-fences: the heap */
	}
	CHECK_INT(trn_submit_batch(q, jobs, NJOBS, fences), 0);
	CHECK_INT(fake.sub.s.job_count, NJOBS);
	CHECK_INT(fake.sub.s.job_size, 64);
	for (i = 0; i < NJOBS; i++) {
		CHECK(fences[i].queue == q);
		CHECK_INT(fences[i].seqno, i + 1);
		CHECK_INT(fake.sub.jobs[i].cmd_va, trn_cmdbuf_va(cb) + 8 * i);
		CHECK_INT(fake.sub.jobs[i].cmd_size, 8);
		CHECK_INT(fake.sub.jobs[i].bo_count, NBOS - i);
		for (k = 0; k < NBOS - i; k++) {
			CHECK_INT(trn_bo_info(bos[k], &info), 0);
			CHECK_INT(fake.sub.bos[i][k], info.handle);
		}
		CHECK_INT(fake.sub.jobs[i].in_count, 8);
		for (k = 0; k < 8; k++) {
			CHECK_INT(fake.sub.in[i][k].handle, q2sync);
			CHECK_INT(fake.sub.in[i][k].point, i * 5 + k + 1);
		}
		CHECK_INT(fake.sub.jobs[i].out_count, 0);
	}
	CHECK_INT(trn_queue_last_seqno(q), NJOBS);

	/* Three small jobs fit the stack arrays. */
	for (i = 0; i < 3; i++) {
		jobs[i].bo_count = 2;
		jobs[i].wait_count = 1;
	}
	CHECK_INT(trn_submit_batch(q, jobs, 3, fences), 0);
	CHECK_INT(fake.sub.s.job_count, 3);
	for (i = 0; i < 3; i++) {
		CHECK_INT(fences[i].seqno, NJOBS + i + 1);
		CHECK_INT(fake.sub.jobs[i].in_count, 1);
		CHECK_INT(fake.sub.in[i][0].point, i * 5 + 1);
		CHECK_INT(fake.sub.jobs[i].bo_count, 2);
	}
	CHECK_INT(trn_queue_last_seqno(q), NJOBS + 3);
	/* A bad job anywhere fails the whole batch. */
	jobs[2].reserved[0] = 1;
	CHECK_INT(trn_submit_batch(q, jobs, 3, fences), -EINVAL);
	CHECK_INT(trn_queue_last_seqno(q), NJOBS + 3);

	for (i = 0; i < NBOS; i++)
		trn_bo_free(bos[i]);
	trn_cmdbuf_destroy(cb);
	trn_queue_destroy(q);
	trn_queue_destroy(q2);
	trn_device_close(dev);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(fake.bad, 0);
}

/* The next SUBMIT attempts fail with these errnos, in order. */
static void script(unsigned int n, ...)
{
	va_list ap;
	unsigned int i;

	pthread_mutex_lock(&fake.lock);
	va_start(ap, n);
	for (i = 0; i < n && i < MAX_SCRIPT; i++)
		fake.script[i] = va_arg(ap, int);
	va_end(ap);
	fake.script_len = i;
	fake.script_pos = 0;
	pthread_mutex_unlock(&fake.lock);
}

/* Flags of SUBMIT attempt number @n (counted by fake.attempts). */
static uint32_t attempt_flags(unsigned int n)
{
	return fake.attempt_flags[n % REC_ATTEMPTS];
}

/* An array of @n copies of @j. */
static struct trn_job *jobs_of(const struct trn_job *j, size_t n)
{
	struct trn_job *a = calloc(n, sizeof(*a));
	size_t i;

	if (!a)
		exit(check_exit("test_exec"));
	for (i = 0; i < n; i++)
		a[i] = *j;
	return a;
}

/* Bounded queues: trn_try_submit*() fails at once, trn_submit*() waits. */
static void test_try_submit(void)
{
	trn_device_t *dev = open_dev(0);
	trn_queue_t *q = new_queue(dev);
	struct fqueue *fq = last_fqueue();
	struct trn_fence f, fences[TRN_SUBMIT_MAX_JOBS + 1];
	unsigned int attempts, submits, blocked;
	struct trn_syncobj_point sp = { 1, 1, 0 };
	struct trn_device_info info;
	struct trn_job j, *jobs;
	trn_cmdbuf_t *cb;

	fake.depth = 256;
	memset(&info, 0xaa, sizeof(info));
	CHECK_INT(trn_device_info(dev, &info), 0);
	CHECK_INT(info.uapi_minor, DRM_TRN_UAPI_MINOR);
	CHECK_INT(info.queue_depth, 256);
	CHECK_INT(info.job_timeout_ms, 5000);
	CHECK_INT(info.ban_faults, 16);
	CHECK_INT(info.user_queues, 0);
	CHECK_INT(info.hbm_stacks, 4);
	CHECK_INT(info.reserved0, 0);
	CHECK_INT(info.reserved[12], 0);

	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	j = nop_job(cb);
	jobs = jobs_of(&j, TRN_SUBMIT_MAX_JOBS + 1);

	/* With room: queued as by trn_submit(), with the flag set. */
	attempts = fake.attempts;
	CHECK_INT(trn_try_submit(q, &j, &f), 0);
	CHECK(f.queue == q);
	CHECK_INT(f.seqno, 1);
	CHECK_INT(fake.attempts, attempts + 1);
	CHECK_INT(attempt_flags(attempts), DRM_TRN_SUBMIT_NONBLOCK);
	CHECK_INT(fake.sub.s.flags, DRM_TRN_SUBMIT_NONBLOCK);
	CHECK_INT(fake.sub.s.job_count, 1);
	CHECK_INT(fake.sub.s.job_size, sizeof(struct drm_trn_job));
	CHECK_INT(fake.sub.jobs[0].cmd_va, j.cmd_va);
	CHECK_INT(fake.sub.jobs[0].cmd_size, j.cmd_size);
	CHECK_INT(fake.sub.jobs[0].flags, 0);
	CHECK_INT(trn_try_submit_batch(q, jobs, 255, fences), 0);
	CHECK_INT(fake.sub.s.flags, DRM_TRN_SUBMIT_NONBLOCK);
	CHECK_INT(fake.sub.s.job_count, 255);
	CHECK(fences[0].queue == q && fences[254].queue == q);
	CHECK_INT(fences[0].seqno, 2);
	CHECK_INT(fences[254].seqno, 256);
	CHECK_INT(trn_queue_last_seqno(q), 256);

	/* Full: -EAGAIN at once, one attempt, nothing queued or written. */
	attempts = fake.attempts;
	submits = fake.submits;
	f.queue = NULL;
	f.seqno = 77;
	CHECK_INT(trn_try_submit(q, &j, &f), -EAGAIN);
	CHECK_INT(fake.attempts, attempts + 1);
	CHECK_INT(fake.submits, submits);
	CHECK_INT(fq->submitted, 256);
	CHECK_INT(trn_queue_last_seqno(q), 256);
	CHECK(f.queue == NULL);
	CHECK_INT(f.seqno, 77);
	/* All or nothing: one free slot does not take two jobs. */
	page_complete(fq->page, 1);
	fences[0].seqno = 88;
	fences[1].seqno = 88;
	CHECK_INT(trn_try_submit_batch(q, jobs, 2, fences), -EAGAIN);
	CHECK_INT(fake.attempts, attempts + 2);
	CHECK_INT(fences[0].seqno, 88);
	CHECK_INT(fences[1].seqno, 88);
	CHECK_INT(fq->submitted, 256);
	CHECK_INT(trn_try_submit_batch(q, jobs, 1, fences), 0);
	CHECK_INT(fences[0].seqno, 257);
	CHECK_INT(trn_try_submit(q, &j, &f), -EAGAIN);

	/* trn_submit*() on a full queue wait in the kernel instead. */
	blocked = fake.blocked;
	attempts = fake.attempts;
	CHECK_INT(trn_submit(q, &j, &f), 0);
	CHECK_INT(f.seqno, 258);
	CHECK_INT(fake.blocked, blocked + 1);
	CHECK_INT(fake.attempts, attempts + 1);
	CHECK_INT(attempt_flags(attempts), 0);
	CHECK_INT(trn_submit_batch(q, jobs, 3, fences), 0);
	CHECK_INT(fake.blocked, blocked + 2);
	CHECK_INT(fences[2].seqno, 261);
	CHECK_INT(fake.sub.s.flags, 0);
	CHECK_INT(trn_queue_last_seqno(q), 261);

	/* The library's own checks: nothing reaches the kernel. */
	attempts = fake.attempts;
	CHECK_INT(trn_try_submit(NULL, &j, &f), -EINVAL);
	CHECK_INT(trn_try_submit(q, NULL, &f), -EINVAL);
	CHECK_INT(trn_try_submit_batch(NULL, jobs, 1, fences), -EINVAL);
	CHECK_INT(trn_try_submit_batch(q, NULL, 1, fences), -EINVAL);
	CHECK_INT(trn_try_submit_batch(q, jobs, 0, fences), -EINVAL);
	CHECK_INT(trn_try_submit_batch(q, jobs, TRN_SUBMIT_MAX_JOBS + 1,
				       fences), -EINVAL);
	CHECK_INT(trn_submit_batch(q, jobs, TRN_SUBMIT_MAX_JOBS + 1, fences),
		  -EINVAL);
	jobs[1].reserved[0] = 1;		/* a bad job fails the batch */
	CHECK_INT(trn_try_submit_batch(q, jobs, 2, fences), -EINVAL);
	jobs[1] = j;
	j.reserved[3] = 1;
	CHECK_INT(trn_try_submit(q, &j, &f), -EINVAL);
	j.reserved[3] = 0;
	j.bo_count = 1;				/* NULL arrays with counts */
	CHECK_INT(trn_try_submit(q, &j, &f), -EINVAL);
	j.bo_count = 0;
	j.wait_count = 1;
	CHECK_INT(trn_try_submit(q, &j, &f), -EINVAL);
	j.wait_count = 0;
	j.wait_syncobj_count = 1;
	CHECK_INT(trn_try_submit(q, &j, &f), -EINVAL);
	j.wait_syncobj_count = 0;
	j.signal_syncobj_count = 1;
	CHECK_INT(trn_try_submit(q, &j, &f), -EINVAL);
	j.signal_syncobjs = &sp;		/* reserved 1 */
	CHECK_INT(trn_try_submit(q, &j, &f), -EINVAL);
	j = nop_job(cb);
	CHECK_INT(fake.attempts, attempts);
	CHECK_INT(trn_queue_last_seqno(q), 261);

	free(jobs);
	fake.depth = 1024;
	trn_cmdbuf_destroy(cb);
	trn_queue_destroy(q);
	trn_device_close(dev);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(live_zombies(), 0);
	CHECK_INT(fake.bad, 0);
}

/* A submission that failed queued nothing: what is restarted, and not. */
static void test_submit_restart(void)
{
	trn_device_t *dev = open_dev(0);
	trn_queue_t *q = new_queue(dev);
	struct fqueue *fq = last_fqueue();
	struct trn_fence f, fences[2];
	struct trn_job jobs[2];
	unsigned int attempts, i;
	trn_cmdbuf_t *cb;

	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	jobs[0] = jobs[1] = nop_job(cb);

	/* Blocking: EINTR (a signal in the wait) and EAGAIN, as drmIoctl(). */
	script(4, EINTR, EAGAIN, EINTR, EAGAIN);
	attempts = fake.attempts;
	CHECK_INT(trn_submit(q, &jobs[0], &f), 0);
	CHECK_INT(f.seqno, 1);
	CHECK_INT(fake.attempts, attempts + 5);
	for (i = 0; i < 5; i++)
		CHECK_INT(attempt_flags(attempts + i), 0);
	CHECK_INT(fq->submitted, 1);		/* queued once */
	script(2, EINTR, EAGAIN);
	attempts = fake.attempts;
	CHECK_INT(trn_submit_batch(q, jobs, 2, fences), 0);
	CHECK_INT(fences[1].seqno, 3);
	CHECK_INT(fake.attempts, attempts + 3);
	CHECK_INT(fq->submitted, 3);

	/* Non-blocking: EINTR is restarted, EAGAIN is the answer. */
	script(2, EINTR, EINTR);
	attempts = fake.attempts;
	CHECK_INT(trn_try_submit(q, &jobs[0], &f), 0);
	CHECK_INT(f.seqno, 4);
	CHECK_INT(fake.attempts, attempts + 3);
	for (i = 0; i < 3; i++)
		CHECK_INT(attempt_flags(attempts + i), DRM_TRN_SUBMIT_NONBLOCK);
	script(3, EINTR, EAGAIN, EINTR);
	attempts = fake.attempts;
	f.seqno = 77;
	CHECK_INT(trn_try_submit(q, &jobs[0], &f), -EAGAIN);
	CHECK_INT(fake.attempts, attempts + 2);
	CHECK_INT(f.seqno, 77);
	script(1, EAGAIN);
	CHECK_INT(trn_try_submit_batch(q, jobs, 2, fences), -EAGAIN);
	CHECK_INT(fake.attempts, attempts + 3);
	CHECK_INT(fq->submitted, 4);
	CHECK_INT(trn_queue_last_seqno(q), 4);

	/* Any other error is final, in both modes. */
	script(1, ENOMEM);
	attempts = fake.attempts;
	CHECK_INT(trn_submit(q, &jobs[0], &f), -ENOMEM);
	script(1, ENODEV);
	CHECK_INT(trn_try_submit(q, &jobs[0], &f), -ENODEV);
	CHECK_INT(fake.attempts, attempts + 2);
	CHECK_INT(f.seqno, 77);
	CHECK_INT(trn_queue_last_seqno(q), 4);
	script(0);

	trn_cmdbuf_destroy(cb);
	trn_queue_destroy(q);
	trn_device_close(dev);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(fake.bad, 0);
}

/* A banned context: its queue refuses jobs, a new queue takes them. */
static void test_banned(void)
{
	trn_device_t *dev = open_dev(0);
	trn_queue_t *q = new_queue(dev), *q2;
	struct fqueue *fq = last_fqueue();
	struct trn_fence f, f1 = { q, 1 }, f2 = { q, 2 };
	struct trn_queue_status st;
	unsigned int attempts;
	struct trn_job j;
	trn_cmdbuf_t *cb;

	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	j = nop_job(cb);
	submit_n(q, cb, 2);
	CHECK_INT(trn_queue_status(q, &st), 0);
	CHECK_INT(st.state & TRN_QUEUE_BANNED, 0);

	/* The kernel bans the context and cancels the queue's jobs. */
	fq->banned = true;
	page_fail(fq->page, 1, ECANCELED);
	page_fail(fq->page, 2, ECANCELED);
	attempts = fake.attempts;
	CHECK_INT(trn_submit(q, &j, &f), -ECANCELED);
	CHECK_INT(trn_try_submit(q, &j, &f), -ECANCELED);
	CHECK_INT(trn_submit_batch(q, &j, 1, &f), -ECANCELED);
	CHECK_INT(fake.attempts, attempts + 3);		/* none restarted */
	CHECK_INT(trn_queue_last_seqno(q), 2);
	CHECK_INT(trn_fence_status(&f1), -ECANCELED);
	CHECK_INT(trn_fence_wait(&f2, INT64_MAX), -ECANCELED);
	CHECK_INT(trn_queue_wait_idle(q, INT64_MAX), 0);
	memset(&st, 0xaa, sizeof(st));
	CHECK_INT(trn_queue_status(q, &st), 0);
	CHECK_INT(st.state, TRN_QUEUE_FAULTED | TRN_QUEUE_BANNED);
	CHECK_INT(TRN_QUEUE_BANNED, DRM_TRN_QUEUE_BANNED);

	/* Queues made after the ban work. */
	q2 = new_queue(dev);
	CHECK_INT(trn_submit(q2, &j, &f), 0);
	CHECK_INT(f.seqno, 1);
	CHECK_INT(trn_try_submit(q2, &j, &f), 0);
	CHECK_INT(trn_queue_status(q2, &st), 0);
	CHECK_INT(st.state & TRN_QUEUE_BANNED, 0);

	trn_cmdbuf_destroy(cb);
	trn_queue_destroy(q);
	trn_queue_destroy(q2);
	trn_device_close(dev);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(fake.bad, 0);
}

/*
 * trn_queue_destroy() waits for nothing and leaves the status handle to
 * the kernel, which closes it: the number may name another buffer by the
 * time the library would close it.
 */
static void test_destroy_handles(void)
{
	trn_device_t *dev = open_dev(0);
	trn_queue_t *q = new_queue(dev);
	struct fqueue *fq = last_fqueue();
	uint32_t h = fq->status_handle;
	unsigned int gem_closes, destroys, waits, munmaps;
	trn_cmdbuf_t *cb;

	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	submit_n(q, cb, 3);		/* unfinished: cancelled, not waited for */
	gem_closes = fake.gem_closes;
	destroys = fake.destroys;
	waits = fake.waits;
	munmaps = fake.munmaps;
	fake.reuse_handles = true;
	trn_queue_destroy(q);
	fake.reuse_handles = false;
	CHECK_INT(fake.destroys, destroys + 1);
	CHECK_INT(fake.waits, waits);
	CHECK_INT(fake.reused_handle, h);
	/* The other buffer behind the number survives. */
	CHECK(obj_get(&fake.dev[0], h) != NULL);
	CHECK_INT(fake.gem_closes, gem_closes);
	/* The page's mapping, which outlived the handle, is gone too. */
	CHECK_INT(fake.munmaps, munmaps + 1);
	CHECK_INT(live_zombies(), 0);
	CHECK_INT(fake.bad, 0);

	pthread_mutex_lock(&fake.lock);
	free(fake.dev[0].obj[h].mem);
	fake.dev[0].obj[h].live = false;
	pthread_mutex_unlock(&fake.lock);
	trn_cmdbuf_destroy(cb);
	trn_device_close(dev);
	CHECK_INT(live_objects(), 0);
}

/* A uAPI 1.2 driver: unbounded queues, and the status handle is ours. */
static void test_old_driver(void)
{
	unsigned int gem_closes, status_closes, attempts;
	struct trn_fence f, fences[3];
	struct trn_device_info info;
	trn_queue_t *q = (void *)1;
	struct trn_job jobs[3];
	trn_device_t *dev;
	trn_cmdbuf_t *cb;
	uint32_t h;

	CHECK_INT(trnhal_test_registry_size(), 0);	/* a new file */
	fake.uapi_minor = 2;
	dev = open_dev(0);
	memset(&info, 0xaa, sizeof(info));
	CHECK_INT(trn_device_info(dev, &info), 0);
	CHECK_INT(info.uapi_minor, 2);
	CHECK_INT(info.num_cores, 8);
	CHECK_INT(info.queue_depth, 0);
	CHECK_INT(info.job_timeout_ms, 0);
	CHECK_INT(info.ban_faults, 0);
	CHECK_INT(info.user_queues, 0);

	/* A failed create closes the handle QUEUE_DESTROY left open. */
	gem_closes = fake.gem_closes;
	fake.fail_mmap = true;
	CHECK_INT(trn_queue_create(dev, 0, 0, &q), -ENOMEM);
	CHECK(q == NULL);
	CHECK_INT(fake.gem_closes, gem_closes + 1);
	CHECK_INT(live_objects(), 0);

	q = new_queue(dev);
	h = last_fqueue()->status_handle;
	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	jobs[0] = jobs[1] = jobs[2] = nop_job(cb);
	/* Never full there, and the driver would refuse the flag. */
	attempts = fake.attempts;
	CHECK_INT(trn_try_submit(q, &jobs[0], &f), 0);
	CHECK_INT(f.seqno, 1);
	CHECK_INT(trn_try_submit_batch(q, jobs, 3, fences), 0);
	CHECK_INT(fences[2].seqno, 4);
	CHECK_INT(fake.attempts, attempts + 2);
	CHECK_INT(attempt_flags(attempts), 0);
	CHECK_INT(attempt_flags(attempts + 1), 0);

	/* Destroy closes the handle itself, after unmapping. */
	gem_closes = fake.gem_closes;
	status_closes = fake.status_closes;
	trn_queue_destroy(q);
	CHECK_INT(fake.gem_closes, gem_closes + 1);
	CHECK_INT(fake.status_closes, status_closes);
	CHECK(obj_get(&fake.dev[0], h) == NULL);
	trn_cmdbuf_destroy(cb);
	trn_device_close(dev);
	fake.uapi_minor = DRM_TRN_UAPI_MINOR;
	CHECK_INT(live_objects(), 0);
	CHECK_INT(live_zombies(), 0);
	CHECK_INT(fake.bad, 0);
}

static void test_cross_device(void)
{
	trn_device_t *d0 = open_dev(0), *d1 = open_dev(1);
	trn_queue_t *qa = new_queue(d0);
	int timeline_a = (int)fake.last_create.queue_id;
	trn_queue_t *qb = new_queue(d1);
	unsigned int exports = fake.exports, imports = fake.imports;
	unsigned int destroys = fake.sync_destroys;
	trn_cmdbuf_t *cb0, *cb1;
	struct trn_fence fa, fb;
	struct trn_job j;
	uint32_t imported;
	int fd1 = trn_device_fd(d1);

	CHECK_INT(trn_cmdbuf_create(d0, 0, &cb0), 0);
	CHECK_INT(trn_cmdbuf_create(d1, 0, &cb1), 0);
	submit_n(qa, cb0, 3);
	fa.queue = qa;
	fa.seqno = 3;

	/* accel1 waits for accel0's job 3: qa's syncobj moves over once. */
	j = nop_job(cb1);
	j.waits = &fa;
	j.wait_count = 1;
	CHECK_INT(trn_submit(qb, &j, &fb), 0);
	CHECK_INT(fake.exports, exports + 1);
	CHECK_INT(fake.imports, imports + 1);
	CHECK_INT(fake.last_export.flags, 0);	/* the syncobj, not a sync_file */
	CHECK_INT(fake.sub.dev, 1);
	CHECK_INT(fake.sub.jobs[0].in_count, 1);
	imported = fake.sub.in[0][0].handle;
	CHECK_INT(fake.sub.in[0][0].point, 3);
	CHECK_INT(fake.dev[1].sync[imported].timeline, timeline_a);
	CHECK_INT(trnhal_test_queue_imports(qa), 1);
	/* The exported fd is closed again. */
	CHECK(fcntl(fake.last_export.fd, F_GETFD) < 0);

	fa.seqno = 2;
	CHECK_INT(trn_submit(qb, &j, &fb), 0);
	CHECK_INT(fake.exports, exports + 1);		/* cached */
	CHECK_INT(fake.sub.in[0][0].handle, imported);
	CHECK_INT(fake.sub.in[0][0].point, 2);
	CHECK_INT(fb.seqno, 2);

	/* A failing export or import: error back, nothing cached. */
	trn_queue_destroy(qa);
	CHECK_INT(fake.sync_destroys, destroys + 2);	/* own + imported */
	CHECK(!fake.dev[1].sync[imported].live);
	qa = new_queue(d0);
	submit_n(qa, cb0, 1);
	fa.queue = qa;
	fa.seqno = 1;
	fake.fail_req = DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE;
	fake.fail_next = EMFILE;
	CHECK_INT(trn_submit(qb, &j, &fb), -EMFILE);
	CHECK_INT(trnhal_test_queue_imports(qa), 0);
	fake.fail_req = DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD;
	fake.fail_next = ENOMEM;
	CHECK_INT(trn_submit(qb, &j, &fb), -ENOMEM);
	CHECK_INT(trn_submit(qb, &j, &fb), 0);
	CHECK_INT(trnhal_test_queue_imports(qa), 1);

	/* The import holds accel1 open until qa goes. */
	trn_cmdbuf_destroy(cb1);
	trn_queue_destroy(qb);
	trn_device_close(d1);
	CHECK(fcntl(fd1, F_GETFD) >= 0);
	trn_queue_destroy(qa);
	CHECK(fcntl(fd1, F_GETFD) < 0);
	trn_cmdbuf_destroy(cb0);
	trn_device_close(d0);
	CHECK_INT(trnhal_test_registry_size(), 0);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(live_syncobjs(), 0);
	CHECK_INT(fake.bad, 0);
}

static void page_reset(struct drm_trn_queue_status_page *pg)
{
	memset(pg, 0, sizeof(*pg));
}

static int status_of(trn_queue_t *q, uint64_t seqno)
{
	struct trn_fence f = { q, seqno };

	return trn_fence_status(&f);
}

static void test_fence_status(void)
{
	trn_device_t *dev = open_dev(0);
	trn_queue_t *q = new_queue(dev);
	struct drm_trn_queue_status_page *pg = last_fqueue()->page;
	struct trn_fence f = { NULL, 0 };
	trn_cmdbuf_t *cb;
	unsigned int ioctls;
	uint64_t s;

	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	submit_n(q, cb, 300);
	ioctls = fake.submits + fake.waits + fake.statuses;

	CHECK_INT(trn_fence_status(&f), 0);	/* the zero fence */
	f.seqno = 1;
	CHECK_INT(trn_fence_status(&f), -EINVAL);	/* no queue */
	CHECK_INT(trn_fence_status(NULL), -EINVAL);
	CHECK_INT(status_of(q, 301), -EINVAL);	/* never submitted */
	CHECK_INT(status_of(q, 0), 0);

	/* Nothing done, then jobs done in order. */
	CHECK_INT(status_of(q, 1), 1);
	page_complete(pg, 3);
	CHECK_INT(status_of(q, 1), 0);
	CHECK_INT(status_of(q, 3), 0);
	CHECK_INT(status_of(q, 4), 1);

	/* One failure. */
	page_fail(pg, 5, EILSEQ);
	CHECK_INT(status_of(q, 4), 0);
	CHECK_INT(status_of(q, 5), -EILSEQ);
	CHECK_INT(status_of(q, 6), 1);
	page_complete(pg, 9);
	CHECK_INT(status_of(q, 9), 0);
	CHECK_INT(status_of(q, 5), -EILSEQ);
	/* A failure recorded whose completed_seqno has not moved yet. */
	page_fail(pg, 12, EFAULT);
	__atomic_store_n(&pg->completed_seqno, 10, __ATOMIC_RELEASE);
	CHECK_INT(status_of(q, 10), 0);
	CHECK_INT(status_of(q, 11), 1);
	CHECK_INT(status_of(q, 5), -EILSEQ);
	page_complete(pg, 12);
	CHECK_INT(status_of(q, 12), -EFAULT);

	/* Exactly 64 failures (jobs 1-64): all remembered. */
	page_reset(pg);
	for (s = 1; s <= 64; s++)
		page_fail(pg, s, (uint32_t)(1000 + s));
	CHECK_INT(status_of(q, 1), -1001);
	CHECK_INT(status_of(q, 64), -1064);
	CHECK_INT(status_of(q, 65), 1);
	page_complete(pg, 70);
	CHECK_INT(status_of(q, 65), 0);

	/* Every job of 1-100 failed: 37-100 remembered, older -ERANGE. */
	page_reset(pg);
	for (s = 1; s <= 100; s++)
		page_fail(pg, s, (uint32_t)(1000 + s));
	page_complete(pg, 150);
	CHECK_INT(status_of(q, 100), -1100);
	CHECK_INT(status_of(q, 37), -1037);
	CHECK_INT(status_of(q, 36), -ERANGE);
	CHECK_INT(status_of(q, 1), -ERANGE);
	CHECK_INT(status_of(q, 101), 0);
	CHECK_INT(status_of(q, 150), 0);
	CHECK_INT(status_of(q, 151), 1);

	/* Even jobs 2-140 failed (70): 14-140 remembered. */
	page_reset(pg);
	for (s = 2; s <= 140; s += 2)
		page_fail(pg, s, (uint32_t)(2000 + s));
	page_complete(pg, 200);
	CHECK_INT(status_of(q, 140), -2140);
	CHECK_INT(status_of(q, 139), 0);
	CHECK_INT(status_of(q, 15), 0);
	CHECK_INT(status_of(q, 14), -2014);
	CHECK_INT(status_of(q, 13), -ERANGE);	/* cannot tell any more */
	CHECK_INT(status_of(q, 12), -ERANGE);
	CHECK_INT(status_of(q, 199), 0);

	/*
	 * 64 failures, and the kernel is rewriting the oldest slot for a
	 * job not yet complete: job 1 cannot be told any more, nor is it
	 * reported as a success; newer ones still can.
	 */
	page_reset(pg);
	for (s = 1; s <= 64; s++)
		page_fail(pg, s, (uint32_t)(1000 + s));
	pg->failures[0].seqno = 80;
	pg->failures[0].error = EIO;
	CHECK_INT(status_of(q, 1), -ERANGE);
	CHECK_INT(status_of(q, 2), -1002);
	page_reset(pg);

	/* None of this made a system call. */
	CHECK_INT(fake.submits + fake.waits + fake.statuses, ioctls);

	trn_cmdbuf_destroy(cb);
	trn_queue_destroy(q);
	/* A fence of another queue than its own says -EINVAL, not hangs. */
	trn_device_close(dev);
	CHECK_INT(fake.bad, 0);
}

struct completer {
	struct drm_trn_queue_status_page *page;
	uint64_t seqno;
	unsigned int delay_us;
};

static void *complete_later(void *arg)
{
	struct completer *c = arg;

	usleep(c->delay_us);
	page_complete(c->page, c->seqno);
	return NULL;
}

static void test_fence_wait(void)
{
	trn_device_t *dev = open_dev(0);
	trn_queue_t *q = new_queue(dev);
	struct fqueue *fq = last_fqueue();
	struct drm_trn_queue_status_page *pg = fq->page;
	struct completer c = { pg, 2, 20000 };
	trn_cmdbuf_t *cb;
	struct trn_fence f = { q, 1 };
	unsigned int waits;
	int64_t t0, abs;
	pthread_t th;

	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	submit_n(q, cb, 10);

	/* Pending and the deadline has passed: -ETIME, no system call. */
	waits = fake.waits;
	trnhal_test_spin_ns = 1000000;
	t0 = trn_now_ns();
	CHECK_INT(trn_fence_wait(&f, 0), -ETIME);
	CHECK_INT(trn_fence_wait(&f, t0 - 1), -ETIME);
	CHECK_INT(fake.waits, waits);

	/* Spins for the budget, then sleeps in the kernel until abs. */
	fake.wait_mode = WAIT_TIMEOUT;
	abs = trn_now_ns() + 5000000000LL;
	t0 = trn_now_ns();
	CHECK_INT(trn_fence_wait(&f, abs), -ETIME);
	CHECK(trn_now_ns() - t0 >= 1000000);
	CHECK_INT(fake.waits, waits + 1);
	CHECK_INT(fake.wait.dev, 0);
	CHECK_INT(fake.wait.count, 1);
	CHECK_INT(fake.wait.handles[0], fq->syncobj);
	CHECK_INT(fake.wait.points[0], 1);
	CHECK_INT(fake.wait.flags, 0);
	CHECK_INT(fake.wait.timeout, abs);

	/* The deadline cuts the spin short (of 5 s here). */
	trnhal_test_spin_ns = 5000000000LL;
	abs = trn_now_ns() + 1000000;
	t0 = trn_now_ns();
	CHECK_INT(trn_fence_wait(&f, abs), -ETIME);
	CHECK(trn_now_ns() - t0 < 1000000000LL);

	/* Forever; the job finishes while the caller sleeps. */
	trnhal_test_spin_ns = 0;
	fake.wait_mode = WAIT_COMPLETE;
	fake.wait_first = 0;
	f.seqno = 3;
	CHECK_INT(trn_fence_wait(&f, INT64_MAX), 0);
	CHECK_INT(fake.wait.timeout, INT64_MAX);
	CHECK_INT(fake.wait.points[0], 3);
	CHECK_INT(fake.waits, waits + 3);
	/* Done already: no system call, not even a clock read needed. */
	CHECK_INT(trn_fence_wait(&f, 0), 0);
	f.seqno = 2;
	CHECK_INT(trn_fence_wait(&f, INT64_MAX), 0);
	CHECK_INT(fake.waits, waits + 3);

	/* A failed job: the wait says how it ended. */
	page_fail(pg, 4, ETIMEDOUT);
	f.seqno = 4;
	CHECK_INT(trn_fence_wait(&f, INT64_MAX), -ETIMEDOUT);
	page_fail(pg, 6, ECANCELED);
	fake.wait_mode = WAIT_COMPLETE;
	f.seqno = 5;
	CHECK_INT(trn_fence_wait(&f, INT64_MAX), 0);

	/* The job finishes during the spin: no system call at all. */
	trnhal_test_spin_ns = 5000000000LL;
	c.seqno = 7;
	waits = fake.waits;
	CHECK_INT(pthread_create(&th, NULL, complete_later, &c), 0);
	f.seqno = 7;
	CHECK_INT(trn_fence_wait(&f, INT64_MAX), 0);
	pthread_join(th, NULL);
	CHECK_INT(fake.waits, waits);
	trnhal_test_spin_ns = 0;

	/* A signalled point whose page never catches up is reported. */
	fake.wait_mode = WAIT_SIGNAL_ONLY;
	f.seqno = 8;
	CHECK_INT(trn_fence_wait(&f, INT64_MAX), -EIO);
	/* The kernel's own errors (a bad handle) come back. */
	fake.wait_mode = WAIT_COMPLETE;
	fake.fail_req = DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT;
	fake.fail_next = ENOENT;
	CHECK_INT(trn_fence_wait(&f, INT64_MAX), -ENOENT);

	/* Idle: the last submitted job; failures do not matter. */
	page_fail(pg, 9, EILSEQ);
	CHECK_INT(trn_queue_wait_idle(q, INT64_MAX), 0);
	CHECK_INT(fake.wait.points[0], 10);
	CHECK_INT(trn_queue_wait_idle(q, 0), 0);
	CHECK_INT(trn_queue_wait_idle(NULL, 0), -EINVAL);
	submit_n(q, cb, 1);
	CHECK_INT(trn_queue_wait_idle(q, 0), -ETIME);
	fake.wait_mode = WAIT_TIMEOUT;
	CHECK_INT(trn_queue_wait_idle(q, INT64_MAX), -ETIME);
	fake.wait_mode = WAIT_COMPLETE;

	f.seqno = 12;
	CHECK_INT(trn_fence_wait(&f, INT64_MAX), -EINVAL);	/* never */
	f.queue = NULL;
	f.seqno = 0;
	CHECK_INT(trn_fence_wait(&f, 0), 0);
	CHECK_INT(trn_fence_wait(NULL, 0), -EINVAL);

	trnhal_test_spin_ns = TRN_FENCE_SPIN_NS;
	trn_cmdbuf_destroy(cb);
	trn_queue_destroy(q);
	trn_device_close(dev);
	CHECK_INT(fake.bad, 0);
}

static void test_wait_many(void)
{
	enum { N = 20 };
	trn_device_t *dev = open_dev(0), *dev1 = open_dev(1);
	trn_queue_t *qa = new_queue(dev);
	struct fqueue *fa = last_fqueue();
	trn_queue_t *qb = new_queue(dev);
	struct fqueue *fb = last_fqueue();
	trn_queue_t *qc = new_queue(dev1);
	struct trn_fence fs[N];
	trn_cmdbuf_t *cb, *cb1;
	unsigned int waits;
	size_t first = 99;
	int i;

	trnhal_test_spin_ns = 0;
	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	CHECK_INT(trn_cmdbuf_create(dev1, 0, &cb1), 0);
	submit_n(qa, cb, N);
	submit_n(qb, cb, N);
	submit_n(qc, cb1, 2);
	page_complete(fa->page, 1);

	/* {done, pending, zero, pending}: only the pending ones go in. */
	fs[0] = (struct trn_fence){ qa, 1 };
	fs[1] = (struct trn_fence){ qa, 4 };
	fs[2] = (struct trn_fence){ NULL, 0 };
	fs[3] = (struct trn_fence){ qb, 2 };
	fake.wait_mode = WAIT_COMPLETE;
	waits = fake.waits;
	CHECK_INT(trn_fence_wait_many(fs, 4, 0, INT64_MAX, &first), 0);
	CHECK_INT(first, 99);			/* only with wait_any */
	CHECK_INT(fake.waits, waits + 1);
	CHECK_INT(fake.wait.count, 2);
	CHECK_INT(fake.wait.flags, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL);
	CHECK_INT(fake.wait.handles[0], fa->syncobj);
	CHECK_INT(fake.wait.points[0], 4);
	CHECK_INT(fake.wait.handles[1], fb->syncobj);
	CHECK_INT(fake.wait.points[1], 2);
	CHECK_INT(fake.wait.timeout, INT64_MAX);

	/* Any: one done already, no system call. */
	fs[0] = (struct trn_fence){ qa, 9 };
	fs[1] = (struct trn_fence){ qb, 2 };
	CHECK_INT(trn_fence_wait_many(fs, 2, 1, INT64_MAX, &first), 0);
	CHECK_INT(first, 1);
	CHECK_INT(fake.waits, waits + 1);
	/* Any, all pending: the kernel's first_signaled is the index. */
	fs[1] = (struct trn_fence){ qb, 5 };
	fake.wait_first = 1;
	CHECK_INT(trn_fence_wait_many(fs, 2, 1, INT64_MAX, &first), 0);
	CHECK_INT(first, 1);
	CHECK_INT(fake.wait.flags, 0);
	CHECK_INT(trn_fence_status(&fs[1]), 0);
	CHECK_INT(trn_fence_status(&fs[0]), 1);
	fake.wait_first = 0;

	/* Timeouts: a poll without a system call, then the kernel's. */
	fs[1] = (struct trn_fence){ qb, 6 };
	CHECK_INT(trn_fence_wait_many(fs, 2, 0, 0, NULL), -ETIME);
	fake.wait_mode = WAIT_TIMEOUT;
	CHECK_INT(trn_fence_wait_many(fs, 2, 1, trn_now_ns() + 1000000, NULL),
		  -ETIME);
	fake.wait_mode = WAIT_COMPLETE;

	/* More fences than the stack holds. */
	for (i = 0; i < N; i++)
		fs[i] = (struct trn_fence){ i % 2 ? qa : qb, (uint64_t)i + 1 };
	CHECK_INT(trn_fence_wait_many(fs, N, 0, INT64_MAX, NULL), 0);
	for (i = 0; i < N; i++)
		CHECK_INT(trn_fence_status(&fs[i]), 0);

	/* One device per call; bad arguments. */
	fs[0] = (struct trn_fence){ qa, 1 };
	fs[1] = (struct trn_fence){ qc, 1 };
	CHECK_INT(trn_fence_wait_many(fs, 2, 0, INT64_MAX, NULL), -EXDEV);
	CHECK_INT(trn_fence_wait_many(fs, 0, 0, INT64_MAX, NULL), -EINVAL);
	CHECK_INT(trn_fence_wait_many(NULL, 1, 0, INT64_MAX, NULL), -EINVAL);
	fs[1] = (struct trn_fence){ qa, 1000 };
	CHECK_INT(trn_fence_wait_many(fs, 2, 0, INT64_MAX, NULL), -EINVAL);
	fs[1] = (struct trn_fence){ NULL, 0 };
	CHECK_INT(trn_fence_wait_many(fs, 2, 1, 0, &first), 0);
	CHECK_INT(first, 0);

	trnhal_test_spin_ns = TRN_FENCE_SPIN_NS;
	trn_cmdbuf_destroy(cb);
	trn_cmdbuf_destroy(cb1);
	trn_queue_destroy(qa);
	trn_queue_destroy(qb);
	trn_queue_destroy(qc);
	trn_device_close(dev);
	trn_device_close(dev1);
	CHECK_INT(fake.bad, 0);
}

static void test_sync_file(void)
{
	trn_device_t *dev = open_dev(0);
	trn_queue_t *q = new_queue(dev);
	struct fqueue *fq = last_fqueue();
	unsigned int creates = fake.sync_creates, destroys = fake.sync_destroys;
	struct trn_fence f = { q, 2 };
	trn_cmdbuf_t *cb;
	uint32_t binary;
	int fd = 5;

	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	submit_n(q, cb, 3);

	CHECK_INT(trn_fence_sync_file(&f, &fd), 0);
	CHECK(fd >= 0);
	CHECK_INT(fake.sync_creates, creates + 1);
	binary = fake.last_transfer.dst_handle;
	CHECK(binary != fq->syncobj);
	CHECK_INT(fake.last_transfer.src_handle, fq->syncobj);
	CHECK_INT(fake.last_transfer.src_point, 2);
	CHECK_INT(fake.last_transfer.dst_point, 0);
	CHECK_INT(fake.last_transfer.flags, 0);
	CHECK_INT(fake.last_export.handle, binary);
	CHECK_INT(fake.last_export.flags,
		  DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE);
	close(fd);

	/* The binary syncobj is made once. */
	f.seqno = 3;
	CHECK_INT(trn_fence_sync_file(&f, &fd), 0);
	close(fd);
	CHECK_INT(fake.sync_creates, creates + 1);
	CHECK_INT(fake.last_transfer.src_point, 3);
	/* Seqno 0: a signalled sync_file. */
	f.seqno = 0;
	CHECK_INT(trn_fence_sync_file(&f, &fd), 0);
	close(fd);
	CHECK_INT(fake.signals, 1);
	CHECK_INT(fake.last_signal, binary);

	/* Errors. */
	CHECK_INT(trn_fence_sync_file(&f, NULL), -EINVAL);
	f.queue = NULL;
	CHECK_INT(trn_fence_sync_file(&f, &fd), -EINVAL);
	CHECK_INT(fd, -1);
	f.queue = q;
	f.seqno = 4;
	CHECK_INT(trn_fence_sync_file(&f, &fd), -EINVAL);
	f.seqno = 1;
	fake.fail_req = DRM_IOCTL_SYNCOBJ_TRANSFER;
	fake.fail_next = ENOMEM;
	CHECK_INT(trn_fence_sync_file(&f, &fd), -ENOMEM);
	CHECK_INT(fd, -1);

	trn_cmdbuf_destroy(cb);
	trn_queue_destroy(q);
	CHECK_INT(fake.sync_destroys, destroys + 2);	/* timeline + binary */
	trn_device_close(dev);
	CHECK_INT(live_syncobjs(), 0);
	CHECK_INT(fake.bad, 0);
}

/* Expected command bytes, built by hand (little endian). */
struct expect {
	uint8_t b[1024];
	size_t n;
};

static void put32(struct expect *e, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		e->b[e->n++] = (uint8_t)(v >> (8 * i));
}

static void put32s(struct expect *e, const uint32_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		put32(e, v[i]);
}

static void put64s(struct expect *e, const uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		put32(e, (uint32_t)v[i]);
		put32(e, (uint32_t)(v[i] >> 32));
	}
}

/* A command's fields in order, one macro per run of 32- or 64-bit ones. */
#define PUT32(e, ...)	put32s(e, (const uint32_t[]){ __VA_ARGS__ },	\
			       sizeof((uint32_t[]){ __VA_ARGS__ }) / 4)
#define PUT64(e, ...)	put64s(e, (const uint64_t[]){ __VA_ARGS__ },	\
			       sizeof((uint64_t[]){ __VA_ARGS__ }) / 8)

/* The bytes recorded in @cb through its CPU mapping. */
static const uint8_t *cb_bytes(trn_cmdbuf_t *cb)
{
	void *p = NULL;

	CHECK_INT(trn_bo_map(trn_cmdbuf_bo(cb), &p), 0);
	CHECK_INT(trn_bo_unmap(trn_cmdbuf_bo(cb)), 0);
	return p;
}

static void check_bytes(trn_cmdbuf_t *cb, const struct expect *e, int line)
{
	const uint8_t *p = cb_bytes(cb);
	size_t i;

	if (trn_cmdbuf_size(cb) != e->n) {
		fprintf(stderr, "%s:%d: recorded %zu bytes, expected %zu\n",
			__FILE__, line, trn_cmdbuf_size(cb), e->n);
		check_failures++;
		return;
	}
	for (i = 0; i < e->n; i++) {
		if (p[i] != e->b[i]) {
			fprintf(stderr, "%s:%d: byte %zu is 0x%02x, expected 0x%02x\n",
				__FILE__, line, i, p[i], e->b[i]);
			check_failures++;
			return;
		}
	}
}

static void test_cmd_encoding(void)
{
	trn_device_t *dev = open_dev(0);
	struct trn_matmul mm;
	struct expect e;
	struct fobj *o;
	trn_cmdbuf_t *cb = (void *)1;
	struct trn_bo_info info;

	CHECK_INT(trn_cmdbuf_create(dev, 0, NULL), -EINVAL);
	CHECK_INT(trn_cmdbuf_create(NULL, 0, &cb), -EINVAL);
	CHECK(cb == NULL);
	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	CHECK_INT(trn_cmdbuf_capacity(cb), 65536);
	CHECK_INT(trn_cmdbuf_size(cb), 0);
	/* A cached host buffer, mapped once. */
	CHECK_INT(trn_bo_info(trn_cmdbuf_bo(cb), &info), 0);
	CHECK_INT(info.placement, TRN_PLACEMENT_HOST);
	CHECK_INT(info.flags, 0);
	CHECK_INT(info.size, 65536);
	CHECK_INT(trn_cmdbuf_va(cb), info.va);
	CHECK_INT(trn_cmdbuf_tail_va(cb), info.va);
	CHECK_INT(trnhal_test_bo_map_refs(trn_cmdbuf_bo(cb)), 1);
	o = &fake.dev[0].obj[info.handle];
	CHECK_INT(o->maps, 1);
	CHECK_INT(fake.last_mmap_prot, PROT_READ | PROT_WRITE);

	memset(&e, 0, sizeof(e));
	CHECK_INT(trn_cmd_nop(cb), 0);
	PUT32(&e, 0x00010000, 0);
	CHECK_INT(trn_cmd_write32(cb, 0x1122334455667788ULL, 0xdeadbeef), 0);
	PUT32(&e, 0x00030001, 0);
	PUT64(&e, 0x1122334455667788ULL, 0xdeadbeefULL);
	CHECK_INT(trn_cmd_write64(cb, 0x1000, 0x0102030405060708ULL), 0);
	PUT32(&e, 0x00030101, 0);
	PUT64(&e, 0x1000, 0x0102030405060708ULL);
	CHECK_INT(trn_cmd_fill(cb, 0x2000, 0xa5a5a5a5, 0x300), 0);
	PUT32(&e, 0x00030002, 0xa5a5a5a5);
	PUT64(&e, 0x2000, 0x300);
	CHECK_INT(trn_cmd_copy(cb, 0x3000, 0x4000, 0x123), 0);
	PUT32(&e, 0x00070003, 0);
	/* dst, src, width, height, dst_pitch, src_pitch */
	PUT64(&e, 0x3000, 0x4000, 0x123, 1, 0x123, 0x123);
	CHECK_INT(trn_cmd_copy2d(cb, 0x5000, 0x200, 0x6000, 0x400, 0x80, 7), 0);
	PUT32(&e, 0x00070003, 0);
	PUT64(&e, 0x5000, 0x6000, 0x80, 7, 0x200, 0x400);
	CHECK_INT(trn_cmd_timestamp(cb, 0x7008), 0);
	PUT32(&e, 0x00020004, 0);
	PUT64(&e, 0x7008);
	CHECK_INT(trn_cmd_sem_signal(cb, 255, 0xfffffffffULL), 0);
	PUT32(&e, 0x00020005, 255);
	PUT64(&e, 0xfffffffffULL);
	CHECK_INT(trn_cmd_sem_wait(cb, 3, 42), 0);
	PUT32(&e, 0x00020006, 3);
	PUT64(&e, 42);
	CHECK_INT(trn_cmd_call(cb, 0x8000, 0x40), 0);
	PUT32(&e, 0x00030007, 0);
	PUT64(&e, 0x8000, 0x40);
	check_bytes(cb, &e, __LINE__);
	CHECK_INT(trn_cmdbuf_tail_va(cb), info.va + e.n);

	memset(&mm, 0, sizeof(mm));
	mm.m = 3;
	mm.n = 65536;
	mm.k = 256;
	mm.flags = TRN_MATMUL_BF16 | TRN_MATMUL_ACCUMULATE;
	mm.a = 0xa000;
	mm.lda = 0x200;
	mm.b = 0xb000;
	mm.ldb = 0x40000;
	mm.c = 0xc000;
	mm.ldc = 0x40000;
	CHECK_INT(trn_cmd_matmul(cb, &mm), 0);
	PUT32(&e, 0x00080310, 3, 65536, 256);
	/* a, b, c, lda, ldb, ldc */
	PUT64(&e, 0xa000, 0xb000, 0xc000, 0x200, 0x40000, 0x40000);
	CHECK_INT(trn_cmd_unary(cb, TRN_UNARY_RELU_GRAD, TRN_ELEM_DST_BF16, 4,
				65536, 0xd000, 0x100, 0xe000, 0), 0);
	PUT32(&e, 0x00060111, 9, 4, 65536);
	/* dst, src, dst_pitch, src_pitch */
	PUT64(&e, 0xd000, 0xe000, 0x100, 0);
	CHECK_INT(trn_cmd_unary(cb, TRN_UNARY_GELU_ERF_GRAD, 0, 1, 2, 0xd000,
				8, 0xe000, 8), 0);
	PUT32(&e, 0x00060011, 13, 1, 2);
	PUT64(&e, 0xd000, 0xe000, 8, 8);
	CHECK_INT(trn_cmd_unary(cb, TRN_UNARY_NEG, TRN_ELEM_SRC_U8, 3, 5,
				0xd000, 20, 0xe001, 7), 0);
	PUT32(&e, 0x00060411, 1, 3, 5);
	PUT64(&e, 0xd000, 0xe001, 20, 7);
	CHECK_INT(trn_cmd_binary(cb, TRN_BINARY_MIN,
				 TRN_ELEM_DST_BF16 | TRN_BINARY_B_PER_ROW, 1, 2,
				 0xf000, 8, 0x10000, 16, 0x11000, 4), 0);
	PUT32(&e, 0x00080312, 5, 1, 2);
	/* dst, a, b, dst_pitch, a_pitch, b_pitch */
	PUT64(&e, 0xf000, 0x10000, 0x11000, 8, 16, 4);
	CHECK_INT(trn_cmd_reduce(cb, TRN_REDUCE_MAX, 5, 6, 0x12000, 0x13000,
				 0x18), 0);
	PUT32(&e, 0x00050013, 1, 5, 6);
	/* dst, src, src_pitch */
	PUT64(&e, 0x12000, 0x13000, 0x18);
	CHECK_INT(trn_cmd_unary(cb, TRN_UNARY_COPY, 0, 1, 1, 1, 2, 3, 4), 0);
	PUT32(&e, 0x00060011, 0, 1, 1);
	PUT64(&e, 1, 3, 2, 4);
	CHECK_INT(trn_cmd_binary(cb, TRN_BINARY_ADD, 0, 7, 8, 1, 2, 3, 4, 5, 6),
		  0);
	PUT32(&e, 0x00080012, 0, 7, 8);
	PUT64(&e, 1, 3, 5, 2, 4, 6);
	CHECK_INT(trn_cmd_reduce(cb, TRN_REDUCE_SUM, 1, 1, 8, 16, 0), 0);
	PUT32(&e, 0x00050013, 0, 1, 1);
	PUT64(&e, 8, 16, 0);
	mm.flags = 0;
	mm.m = mm.n = mm.k = 1;
	CHECK_INT(trn_cmd_matmul(cb, &mm), 0);
	PUT32(&e, 0x00080010, 1, 1, 1);
	PUT64(&e, 0xa000, 0xb000, 0xc000, 0x200, 0x40000, 0x40000);
	/* The transpose flags are header bits 10 and 11. */
	mm.flags = TRN_MATMUL_TRANSPOSE_A;
	mm.m = 5;
	mm.n = 6;
	mm.k = 7;
	CHECK_INT(trn_cmd_matmul(cb, &mm), 0);
	PUT32(&e, 0x00080410, 5, 6, 7);
	PUT64(&e, 0xa000, 0xb000, 0xc000, 0x200, 0x40000, 0x40000);
	mm.flags = TRN_MATMUL_TRANSPOSE_B | TRN_MATMUL_BF16;
	CHECK_INT(trn_cmd_matmul(cb, &mm), 0);
	PUT32(&e, 0x00080910, 5, 6, 7);
	PUT64(&e, 0xa000, 0xb000, 0xc000, 0x200, 0x40000, 0x40000);
	mm.flags = TRN_MATMUL_BF16 | TRN_MATMUL_ACCUMULATE |
		   TRN_MATMUL_TRANSPOSE_A | TRN_MATMUL_TRANSPOSE_B;
	mm.lda = 0;
	mm.ldb = 2;
	CHECK_INT(trn_cmd_matmul(cb, &mm), 0);
	PUT32(&e, 0x00080f10, 5, 6, 7);
	PUT64(&e, 0xa000, 0xb000, 0xc000, 0, 2, 0x40000);
	check_bytes(cb, &e, __LINE__);

	/* Reset starts over at the beginning. */
	trn_cmdbuf_reset(cb);
	CHECK_INT(trn_cmdbuf_size(cb), 0);
	CHECK_INT(trn_cmdbuf_tail_va(cb), info.va);
	CHECK_INT(trn_cmd_timestamp(cb, 0x99), 0);
	memset(&e, 0, sizeof(e));
	PUT32(&e, 0x00020004, 0);
	PUT64(&e, 0x99);
	check_bytes(cb, &e, __LINE__);

	trn_cmdbuf_destroy(cb);
	CHECK(!o->live);
	trn_cmdbuf_destroy(NULL);
	CHECK_INT(trn_cmdbuf_size(NULL), 0);
	CHECK_INT(trn_cmdbuf_capacity(NULL), 0);
	CHECK_INT(trn_cmdbuf_va(NULL), 0);
	CHECK(trn_cmdbuf_bo(NULL) == NULL);
	CHECK_INT(trn_cmd_nop(NULL), -EINVAL);
	trn_device_close(dev);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(fake.bad, 0);
}

/* Every call must fail with @err and leave @cb as it was. */
#define CHECK_REFUSED(call, err, cb, snap)				\
	do {								\
		size_t _n = trn_cmdbuf_size(cb);			\
		CHECK_INT(call, err);					\
		CHECK_INT(trn_cmdbuf_size(cb), _n);			\
		CHECK(!memcmp(cb_bytes(cb), snap, sizeof(snap)));	\
	} while (0)

static void test_cmd_refused(void)
{
	static uint8_t snap[4096];
	trn_device_t *dev = open_dev(0);
	struct trn_matmul mm;
	trn_cmdbuf_t *cb;
	int i;

	CHECK_INT(trn_cmdbuf_create(dev, 1, &cb), 0);
	CHECK_INT(trn_cmdbuf_capacity(cb), 4096);
	/* Leave 16 bytes: a 24-byte command does not fit, 16 bytes do. */
	for (i = 0; i < 4096 / 8 - 2; i++)
		CHECK_INT(trn_cmd_nop(cb), 0);
	memcpy(snap, cb_bytes(cb), sizeof(snap));

	CHECK_REFUSED(trn_cmd_write32(cb, 0, 1), -ENOSPC, cb, snap);
	CHECK_REFUSED(trn_cmd_write64(cb, 0, 1), -ENOSPC, cb, snap);
	CHECK_REFUSED(trn_cmd_fill(cb, 0, 1, 4), -ENOSPC, cb, snap);
	CHECK_REFUSED(trn_cmd_copy(cb, 0, 8, 8), -ENOSPC, cb, snap);
	CHECK_REFUSED(trn_cmd_copy2d(cb, 0, 8, 8, 8, 8, 1), -ENOSPC, cb, snap);
	CHECK_REFUSED(trn_cmd_call(cb, 0, 8), -ENOSPC, cb, snap);
	CHECK_REFUSED(trn_cmd_unary(cb, 0, 0, 1, 1, 0, 0, 0, 0), -ENOSPC, cb,
		      snap);
	CHECK_REFUSED(trn_cmd_binary(cb, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0),
		      -ENOSPC, cb, snap);
	CHECK_REFUSED(trn_cmd_reduce(cb, 0, 1, 1, 0, 0, 0), -ENOSPC, cb, snap);
	memset(&mm, 0, sizeof(mm));
	mm.m = mm.n = mm.k = 1;
	CHECK_REFUSED(trn_cmd_matmul(cb, &mm), -ENOSPC, cb, snap);

	/* What the ISA can never accept: -EINVAL, even with room. */
	CHECK_REFUSED(trn_cmd_sem_signal(cb, TRN_NUM_SEMAPHORES, 1), -EINVAL,
		      cb, snap);
	CHECK_REFUSED(trn_cmd_sem_wait(cb, UINT32_MAX, 1), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_call(cb, 0x1000, 0), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_call(cb, 0x1000, 12), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_call(cb, 0x1004, 16), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_unary(cb, TRN_UNARY_GELU_ERF_GRAD + 1, 0, 1, 1, 0, 0,
				    0, 0), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_unary(cb, 0, TRN_BINARY_B_PER_ROW, 1, 1, 0, 0, 0,
				    0), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_unary(cb, 0, 0, 0, 1, 0, 0, 0, 0), -EINVAL, cb,
		      snap);
	CHECK_REFUSED(trn_cmd_unary(cb, 0, 0, 1, TRN_ISA_MAX_DIM + 1, 0, 0, 0,
				    0), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_binary(cb, TRN_BINARY_MIN + 1, 0, 1, 1, 0, 0, 0,
				     0, 0, 0), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_unary(cb, 0, 1U << 3, 1, 1, 0, 0, 0, 0), -EINVAL,
		      cb, snap);
	CHECK_REFUSED(trn_cmd_binary(cb, 0, TRN_ELEM_SRC_U8, 1, 1, 0, 0, 0, 0,
				     0, 0), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_binary(cb, 0, 0, TRN_ISA_MAX_DIM + 1, 1, 0, 0,
				     0, 0, 0, 0), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_binary(cb, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0),
		      -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_reduce(cb, TRN_REDUCE_MAX + 1, 1, 1, 0, 0, 0),
		      -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_reduce(cb, 0, 0, 1, 0, 0, 0), -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_reduce(cb, 0, 1, TRN_ISA_MAX_DIM + 1, 0, 0, 0),
		      -EINVAL, cb, snap);
	CHECK_REFUSED(trn_cmd_matmul(cb, NULL), -EINVAL, cb, snap);
	mm.flags = 1U << 4;
	CHECK_REFUSED(trn_cmd_matmul(cb, &mm), -EINVAL, cb, snap);
	mm.flags = TRN_MATMUL_TRANSPOSE_B | 1U << 7;
	CHECK_REFUSED(trn_cmd_matmul(cb, &mm), -EINVAL, cb, snap);
	mm.flags = 0;
	mm.m = 0;
	CHECK_REFUSED(trn_cmd_matmul(cb, &mm), -EINVAL, cb, snap);
	mm.m = TRN_ISA_MAX_DIM + 1;
	CHECK_REFUSED(trn_cmd_matmul(cb, &mm), -EINVAL, cb, snap);
	mm.m = 1;
	mm.k = 4096;			/* B of 4096 * 4097 * 4 bytes */
	mm.n = 4097;
	CHECK_REFUSED(trn_cmd_matmul(cb, &mm), -EINVAL, cb, snap);
	/* However B is stored, and whatever its element type. */
	mm.flags = TRN_MATMUL_TRANSPOSE_B | TRN_MATMUL_BF16;
	CHECK_REFUSED(trn_cmd_matmul(cb, &mm), -EINVAL, cb, snap);
	mm.flags = 0;
	mm.n = 0;
	CHECK_REFUSED(trn_cmd_matmul(cb, &mm), -EINVAL, cb, snap);

	/* The largest legal values are accepted, exactly filling the end. */
	CHECK_INT(trn_cmd_sem_signal(cb, TRN_NUM_SEMAPHORES - 1, 0), 0);
	CHECK_INT(trn_cmdbuf_size(cb), 4096);
	CHECK_INT(trn_cmd_nop(cb), -ENOSPC);
	trn_cmdbuf_reset(cb);
	CHECK_INT(trn_cmd_unary(cb, 0, 0, TRN_ISA_MAX_DIM, TRN_ISA_MAX_DIM, 0,
				0, 0, 0), 0);
	mm.n = 4096;			/* B of exactly 64 MiB */
	CHECK_INT(trn_cmd_matmul(cb, &mm), 0);

	trn_cmdbuf_destroy(cb);
	trn_device_close(dev);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(fake.bad, 0);
}

static int child_checks(trn_device_t *dev, trn_queue_t *q, trn_cmdbuf_t *cb)
{
	unsigned int destroys = fake.destroys, closes = fake.gem_closes;
	unsigned int sync_destroys = fake.sync_destroys;
	unsigned int submits = fake.submits, attempts = fake.attempts;
	struct trn_fence f = { q, 1 }, many[2] = { { q, 1 }, { q, 1 } };
	struct trn_queue_status st;
	trn_queue_t *q2;
	trn_cmdbuf_t *cb2;
	struct trn_job j;
	int fd;

	memset(&j, 0, sizeof(j));
	j.cmd_va = 0x1000;
	j.cmd_size = 8;
	CHECK_INT(trn_queue_create(dev, 0, 0, &q2), -ECHILD);
	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb2), -ECHILD);
	CHECK_INT(trn_submit(q, &j, &f), -ECHILD);
	CHECK_INT(trn_submit_batch(q, &j, 1, &f), -ECHILD);
	CHECK_INT(trn_try_submit(q, &j, &f), -ECHILD);
	CHECK_INT(trn_try_submit_batch(q, &j, 1, &f), -ECHILD);
	CHECK_INT(trn_fence_status(&f), -ECHILD);
	CHECK_INT(trn_fence_wait(&f, INT64_MAX), -ECHILD);
	CHECK_INT(trn_fence_wait_many(many, 2, 0, INT64_MAX, NULL), -ECHILD);
	CHECK_INT(trn_fence_sync_file(&f, &fd), -ECHILD);
	CHECK_INT(trn_queue_status(q, &st), -ECHILD);
	CHECK_INT(trn_queue_wait_idle(q, INT64_MAX), -ECHILD);
	/* The mapping is still the parent's buffer: no writes from here. */
	CHECK_INT(trn_cmd_nop(cb), -ECHILD);
	CHECK_INT(trn_cmd_write32(cb, 0, 0), -ECHILD);
	CHECK_INT(trn_cmdbuf_va(cb), 0);
	/* Letting go touches nothing of the parent's. */
	trn_queue_destroy(q);
	trn_cmdbuf_destroy(cb);
	trn_device_close(dev);
	CHECK_INT(fake.destroys, destroys);
	CHECK_INT(fake.gem_closes, closes);
	CHECK_INT(fake.sync_destroys, sync_destroys);
	CHECK_INT(fake.submits, submits);
	CHECK_INT(fake.attempts, attempts);
	return check_failures ? 1 : 0;
}

static void test_fork(void)
{
	trn_device_t *dev = open_dev(0);
	trn_queue_t *q = new_queue(dev);
	struct fqueue *fq = last_fqueue();
	struct trn_fence f = { q, 1 };
	trn_cmdbuf_t *cb;
	int status = -1;
	pid_t pid;

	CHECK_INT(trn_cmdbuf_create(dev, 0, &cb), 0);
	submit_n(q, cb, 1);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		check_failures = 0;	/* the child's own */
		_exit(child_checks(dev, q, cb));
	}
	CHECK(pid > 0);
	CHECK_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* The parent's queue works on. */
	CHECK_INT(trn_fence_status(&f), 1);
	page_complete(fq->page, 1);
	CHECK_INT(trn_fence_status(&f), 0);
	CHECK_INT(trn_cmd_nop(cb), 0);
	trn_cmdbuf_destroy(cb);
	trn_queue_destroy(q);
	trn_device_close(dev);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(trnhal_test_registry_size(), 0);
}

enum { THREADS = 4, PER_THREAD = 500 };

struct submitter {
	trn_queue_t *q, *other;		/* other: a queue of the other device */
	trn_cmdbuf_t *cb;
	uint64_t prev;
	int bad;
};

static void *submit_loop(void *arg)
{
	struct submitter *s = arg;
	struct trn_fence f, w = { s->other, 1 };
	struct trn_job j;
	int i;

	memset(&j, 0, sizeof(j));
	j.cmd_va = trn_cmdbuf_va(s->cb);
	j.cmd_size = 8;
	j.waits = &w;
	j.wait_count = 1;
	for (i = 0; i < PER_THREAD; i++) {
		if (trn_submit(s->q, &j, &f) || f.seqno <= s->prev ||
		    trn_queue_last_seqno(s->q) < f.seqno)
			s->bad++;
		s->prev = f.seqno;
	}
	return NULL;
}

/* Many threads on one queue, all waiting for one queue of another device. */
static void test_threads(void)
{
	trn_device_t *d0 = open_dev(0), *d1 = open_dev(1);
	trn_queue_t *q = new_queue(d0), *other = new_queue(d1);
	struct submitter s[THREADS];
	pthread_t th[THREADS];
	unsigned int exports = fake.exports;
	trn_cmdbuf_t *cb, *cb1;
	int i;

	CHECK_INT(trn_cmdbuf_create(d0, 0, &cb), 0);
	CHECK_INT(trn_cmdbuf_create(d1, 0, &cb1), 0);
	CHECK_INT(trn_cmd_nop(cb), 0);
	submit_n(other, cb1, 1);
	for (i = 0; i < THREADS; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].q = q;
		s[i].other = other;
		s[i].cb = cb;
		CHECK_INT(pthread_create(&th[i], NULL, submit_loop, &s[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		CHECK_INT(s[i].bad, 0);
	}
	CHECK_INT(trn_queue_last_seqno(q), THREADS * PER_THREAD);
	CHECK_INT(fake.exports, exports + 1);
	CHECK_INT(trnhal_test_queue_imports(other), 1);

	trn_cmdbuf_destroy(cb);
	trn_cmdbuf_destroy(cb1);
	trn_queue_destroy(q);
	trn_queue_destroy(other);
	trn_device_close(d0);
	trn_device_close(d1);
	CHECK_INT(live_objects(), 0);
	CHECK_INT(live_syncobjs(), 0);
	CHECK_INT(trnhal_test_registry_size(), 0);
	CHECK_INT(fake.bad, 0);
}

int main(void)
{
	setup();
	test_queue_lifetime();
	test_queue_errors();
	test_submit();
	test_batch();
	test_try_submit();
	test_submit_restart();
	test_banned();
	test_destroy_handles();
	test_old_driver();
	test_cross_device();
	test_fence_status();
	test_fence_wait();
	test_wait_many();
	test_sync_file();
	test_cmd_encoding();
	test_cmd_refused();
	test_fork();
	test_threads();
	teardown();
	return check_exit("test_exec");
}
