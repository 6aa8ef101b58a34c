// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Tenants cannot hurt each other. A hostile local user, with an open file
 * of the device, tries what a review of the driver found it could do:
 * stall everyone on a ring with hanging jobs, queue jobs without bound,
 * pin memory beyond its limits by laundering charges, keep jobs running
 * after a queue or process is gone, and make teardown wait. Each test is
 * the regression test of one such defect (see Documentation/execution.md
 * and memory.md for the contracts).
 *
 * Two simulated devices of their own, created with trn's job_timeout_ms
 * set to TIMEOUT_MS: "ban" (id 52) has one hardware queue per core, so
 * every queue of a core shares the core's ring; "tenant" (id 53) has two,
 * and queues created on a core alternate between them (the driver spreads
 * a core's queues round robin, and nobody else uses these devices), which
 * lets a test release a semaphore from a second ring of the same core.
 *
 * With TRN_TEST_DEVICE=part (the pci lanes) both fixtures use the part
 * under test instead, which trn_pci bound with trn's default job timeout
 * and four rings per core, dealt round robin as well: a test that needs
 * two queues on one ring makes them so (queue_on_same_ring()), and reads
 * the timeout from the device. What needs the simulator's knobs or
 * devices of its own skips there and says so.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/netlink.h>

#include "kselftest_harness.h"
#include "trn_test.h"

#define BAN_DEV		(dut_is_part() ? DUT_ID : 52u)
#define TENANT_DEV	(dut_is_part() ? DUT_ID : 53u)
/*
 * trn's default, as on a part: the tests that block a ring on a semaphore
 * for a moment must not see it time out (1 s did, once, on the debug lane
 * of a loaded machine), and those that wait for a timeout wait this long.
 */
#define TIMEOUT_MS	5000
#define WAIT_MS		60000	/* for anything that must end */
#define HANG_SEM	200	/* never signalled */
#define GUILTY_JOBS	256
#define BAN_FAULTS	16	/* DRM_TRN_QUERY_DEVICE_INFO.ban_faults */
#define UNMAPPED_VA	0x3000ULL	/* below every context's VA window */

/* A dma-buf of @handle; its fd or -errno. */
static int prime_export(int fd, uint32_t handle)
{
	struct drm_prime_handle p = {
		.handle = handle,
		.flags = DRM_CLOEXEC | DRM_RDWR,
		.fd = -1,
	};
	int ret = raw_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	return ret ? ret : p.fd;
}

/* Import dma-buf @dmabuf into @fd: its handle and device address there. */
static int prime_import(int fd, int dmabuf, uint32_t *handle, uint64_t *va)
{
	struct drm_prime_handle p = { .fd = dmabuf };
	struct drm_trn_bo_info bi;
	int ret = raw_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	if (ret)
		return ret;
	*handle = p.handle;
	ret = bo_info(fd, p.handle, &bi);
	if (!ret)
		*va = bi.va;
	return ret;
}

/* A file of device @id: simulated device @id, or the part (DUT_ID). */
static int dev_open(unsigned int id)
{
	return id == DUT_ID ? dut_open() : sim_open(id);
}

/*
 * The name of the device trn registered device @id for (the simulated
 * device, or the part's PCI address): what its dmem region is named after.
 */
static int dev_parent_name(unsigned int id, char *buf, size_t size)
{
	char path[128], link[256];
	unsigned int minor;
	const char *base;
	ssize_t len;
	int ret;

	if (id != DUT_ID) {
		snprintf(buf, size, "trn_sim%u", id);
		return 0;
	}
	ret = dut_minor(&minor);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u/device", minor);
	len = readlink(path, link, sizeof(link) - 1);
	if (len <= 0)
		return len < 0 ? -errno : -ENOENT;
	link[len] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	if (strlen(base) >= size)
		return -ENAMETOOLONG;
	memcpy(buf, base, strlen(base) + 1);
	return 0;
}

/* Create device @id with job_timeout_ms @timeout_ms (restored after). */
static int new_device(unsigned int id, unsigned int queues,
		      unsigned int timeout_ms)
{
	uint64_t old;
	int ret, ret2;

	if (sim_exists(id))
		sim_del(id);
	ret = trn_param_get("job_timeout_ms", &old);
	if (ret)
		return ret;
	ret = trn_param_set("job_timeout_ms", timeout_ms);
	if (ret)
		return ret;
	ret = sim_new(id, 2, 64, queues);
	ret2 = trn_param_set("job_timeout_ms", old);
	return ret ? ret : ret2;
}

/* A file of device @id with a command buffer and a data buffer. */
struct tenant {
	int fd;
	struct host_bo cmd, data;
	uint32_t bos[2];
	struct cmds cs;
	size_t mark;	/* where the job being recorded starts */
};

static int tenant_open(struct tenant *t, unsigned int id)
{
	int ret;

	memset(t, 0, sizeof(*t));
	t->fd = dev_open(id);
	if (t->fd < 0)
		return t->fd;
	ret = host_bo_new(t->fd, 512 * 1024, &t->cmd);
	if (!ret)
		ret = host_bo_new(t->fd, 64 * 1024, &t->data);
	if (ret) {
		close(t->fd);
		t->fd = -1;
		return ret;
	}
	t->bos[0] = t->cmd.handle;
	t->bos[1] = t->data.handle;
	cmds_init(&t->cs, t->cmd.map, t->cmd.va, t->cmd.size);
	return 0;
}

static void tenant_close(struct tenant *t)
{
	if (t->fd >= 0) {
		munmap(t->cmd.map, t->cmd.size);
		munmap(t->data.map, t->data.size);
		close(t->fd);
	}
	t->fd = -1;
}

static uint32_t *t32(struct tenant *t)
{
	return t->data.map;
}

/* A job of the commands recorded from @from, listing both buffers. */
static void tenant_job(struct tenant *t, struct drm_trn_job *j, size_t from)
{
	job_init(j, t->cs.va + from, (uint32_t)(t->cs.len - from));
	j->bo_handles = (uintptr_t)t->bos;
	j->bo_count = 2;
}

/* Submit the commands recorded since @t->mark; its seqno to @seqno. */
static int tenant_submit_marked(struct tenant *t, uint32_t queue,
				uint64_t *seqno)
{
	struct drm_trn_job j;
	int ret;

	tenant_job(t, &j, t->mark);
	ret = submit_jobs(t->fd, queue, &j, 1);
	if (!ret && seqno)
		*seqno = j.seqno;
	return ret;
}

/* Record a job's commands with the expression @rec, then submit it. */
#define SUBMIT_CMDS(t, queue, seqnop, rec)				\
	((t)->mark = (t)->cs.len, (void)(rec),				\
	 tenant_submit_marked((t), (queue), (seqnop)))

/* Submit @n copies of one job in batches of up to 256. */
static int submit_copies(struct tenant *t, uint32_t queue, size_t from,
			 unsigned int n, int extra_flags)
{
	struct drm_trn_job jobs[DRM_TRN_SUBMIT_MAX_JOBS];
	unsigned int i, k;
	int ret;

	for (i = 0; i < n; i += k) {
		k = n - i < DRM_TRN_SUBMIT_MAX_JOBS ? n - i :
						      DRM_TRN_SUBMIT_MAX_JOBS;
		for (unsigned int m = 0; m < k; m++)
			tenant_job(t, &jobs[m], from);
		struct drm_trn_submit s = {
			.queue_id = queue,
			.flags = (uint32_t)extra_flags,
			.jobs = (uintptr_t)jobs,
			.job_count = k,
			.job_size = sizeof(jobs[0]),
		};
		ret = raw_ioctl(t->fd, DRM_IOCTL_TRN_SUBMIT, &s);
		if (ret)
			return ret;
	}
	return 0;
}

static int64_t ms_since(int64_t t0)
{
	return (mono_ns() - t0) / 1000000;
}

/*
 * A tenant in a child process: @setup runs there (a non-zero return is the
 * child's exit status), then the child says it is ready and waits to be
 * killed. Returns the child once it is ready, or -1 (the child reaped).
 */
static pid_t spawn_tenant(int (*setup)(const void *arg), const void *arg)
{
	int sync[2], ret;
	pid_t pid;
	char x;

	if (pipe(sync))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(sync[0]);
		ret = setup(arg);
		if (ret)
			_exit(ret);
		if (write(sync[1], "q", 1) != 1)
			_exit(12);
		pause();
		_exit(13);
	}
	close(sync[1]);
	ret = pid < 0 ? -1 : (int)read(sync[0], &x, 1);
	close(sync[0]);
	if (ret != 1) {
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* SIGKILL a tenant child and reap it: 0 if the signal killed it. */
static int kill_tenant(pid_t pid)
{
	int status;

	if (kill(pid, SIGKILL) || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -1;
}

/*
 * A queue of @fd on @core on the ring of the queue made on @core just
 * before it, by any file (next_queue_on_same_ring(); one ring per core on
 * BAN_DEV).
 */
static int queue_on_same_ring(int fd, uint32_t core,
			      struct drm_trn_queue_create *q)
{
	int ret = next_queue_on_same_ring(fd, core);

	return ret ? ret : queue_create(fd, core, DRM_TRN_PRIORITY_NORMAL, q);
}

/*
 * A job of @t on @queue that waits for device semaphore @sem, its fence in
 * a new syncobj *@sobj, exported as *@fd for other processes to wait for.
 */
static int waiting_fence(struct tenant *t, uint32_t queue, uint32_t sem,
			 uint32_t *sobj, int *fd)
{
	struct drm_syncobj_handle h = { .fd = -1 };
	struct drm_trn_sync out = { 0 };
	struct drm_trn_job j;
	size_t from = t->cs.len;
	int ret;

	ret = syncobj_create(t->fd, 0, sobj);
	if (ret)
		return ret;
	cmds_sem(&t->cs, true, sem, 1);
	tenant_job(t, &j, from);
	out.handle = *sobj;
	j.out_syncs = (uintptr_t)&out;
	j.out_count = 1;
	ret = submit_jobs(t->fd, queue, &j, 1);
	if (!ret) {
		h.handle = *sobj;
		ret = raw_ioctl(t->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);
	}
	*fd = h.fd;
	return ret;
}

/* ------------------------------------------------------------------ bans */

FIXTURE(ban)
{
	struct tenant a, b;
	struct exec_counters c0;
	uint64_t bans0;
};

FIXTURE_SETUP(ban)
{
	self->a.fd = self->b.fd = -1;
	SKIP_UNLESS_DUT();
	if (!dut_is_part()) {
		ASSERT_EQ(0, debugfs_ready());
		ASSERT_EQ(0, new_device(BAN_DEV, 1, TIMEOUT_MS));
	}
	ASSERT_EQ(0, tenant_open(&self->a, BAN_DEV));
	ASSERT_EQ(0, tenant_open(&self->b, BAN_DEV));
	ASSERT_EQ(0, exec_counters(BAN_DEV, &self->c0));
	ASSERT_EQ(0, sim_accel_u64(BAN_DEV, "bans", &self->bans0));
}

FIXTURE_TEARDOWN(ban)
{
	tenant_close(&self->a);
	tenant_close(&self->b);
	if (!dut_is_part() && sim_available() && sim_exists(BAN_DEV))
		sim_del(BAN_DEV);
}

/*
 * The guilty context queues 256 jobs that hang on a semaphore nobody
 * signals; the innocent one then submits a job on the same core, behind
 * them on the one ring. Before the ban it waited for 256 timeouts, one
 * after the other (21 minutes at the default timeout); now the first
 * timeout bans the guilty context, the device skips its other 255 jobs,
 * and the innocent job completes within one timeout plus its own run
 * time. The timing bound is generous (a loaded emulated guest), but 256
 * timeouts could never meet it; the counts prove the mechanism.
 */
TEST_F_TIMEOUT(ban, innocent_behind_256_hangs, 600)
{
	const volatile struct drm_trn_queue_status_page *sp;
	struct drm_trn_queue_create qa, qb, fresh;
	struct drm_trn_sync out = { 0 };
	struct drm_trn_queue_status st;
	struct drm_trn_device_info info;
	struct exec_counters c;
	uint64_t sb = 0, bans = 0, s = 0;
	int64_t t0, latency;
	struct drm_trn_job j;
	unsigned int i;
	size_t from;

	ASSERT_EQ(0, query_info(self->a.fd, &info));
	ASSERT_EQ(0, queue_create(self->a.fd, 0, DRM_TRN_PRIORITY_NORMAL, &qa));
	ASSERT_EQ(0, queue_on_same_ring(self->b.fd, 0, &qb));
	sp = status_page_map(self->a.fd, qa.status_handle);
	ASSERT_NE(NULL, sp);
	from = self->a.cs.len;
	cmds_sem(&self->a.cs, true, HANG_SEM, 1);
	cmds_write32(&self->a.cs, self->a.data.va, 0xbad);
	/* The first with a binary out-sync, to see its own error later. */
	ASSERT_EQ(0, syncobj_create(self->a.fd, 0, &out.handle));
	tenant_job(&self->a, &j, from);
	j.out_syncs = (uintptr_t)&out;
	j.out_count = 1;
	ASSERT_EQ(0, submit_jobs(self->a.fd, qa.queue_id, &j, 1));
	ASSERT_EQ(0, submit_copies(&self->a, qa.queue_id, from, GUILTY_JOBS - 1,
				   0));

	t0 = mono_ns();
	ASSERT_EQ(0, SUBMIT_CMDS(&self->b, qb.queue_id, &sb,
				 cmds_write32(&self->b.cs, self->b.data.va,
					      0x600d)));
	ASSERT_EQ(0, syncobj_wait_point(self->b.fd, qb.syncobj, sb, WAIT_MS));
	latency = ms_since(t0);
	printf("# innocent job behind %u hanging jobs: %lld ms (job timeout %u ms)\n",
	       GUILTY_JOBS, (long long)latency, info.job_timeout_ms);
	EXPECT_EQ(0x600d, t32(&self->b)[0]);
	EXPECT_EQ(1, timeline_fence_status(self->b.fd, qb.syncobj, sb));
	EXPECT_GT(info.job_timeout_ms + 5000, latency);
	/*
	 * It was behind the hang on the one ring: it ran only once the
	 * timeout had ended the hung job, whose fence has its error by then.
	 */
	EXPECT_EQ(-ETIMEDOUT, syncobj_fence_status(self->a.fd, out.handle));

	/*
	 * The guilty side: one timeout, 255 cancellations, nothing written.
	 * (Old timeline points lose their errors to the syncobj's garbage
	 * collection; the status page and QUEUE_STATUS keep them.)
	 */
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, qa.syncobj, GUILTY_JOBS,
					WAIT_MS));
	EXPECT_EQ(0, t32(&self->a)[0]);
	EXPECT_EQ(-ETIMEDOUT, syncobj_fence_status(self->a.fd, out.handle));
	EXPECT_EQ(-ECANCELED, timeline_fence_status(self->a.fd, qa.syncobj,
						    GUILTY_JOBS));
	EXPECT_EQ(GUILTY_JOBS, sp->completed_seqno);
	EXPECT_EQ(GUILTY_JOBS, sp->failed_count);
	for (i = GUILTY_JOBS - DRM_TRN_STATUS_PAGE_FAILURES + 1;
	     i <= GUILTY_JOBS; i++) {
		const volatile struct drm_trn_job_failure *f =
			&sp->failures[(i - 1) % DRM_TRN_STATUS_PAGE_FAILURES];

		ASSERT_EQ(i, f->seqno);
		ASSERT_EQ(ECANCELED, f->error) TH_LOG("job %u", i);
		ASSERT_EQ(DRM_TRN_STATUS_ABORTED, f->status);
	}
	munmap((void *)sp, TEST_PAGE);
	ASSERT_EQ(0, queue_status(self->a.fd, qa.queue_id, &st));
	EXPECT_EQ(DRM_TRN_QUEUE_GUILTY | DRM_TRN_QUEUE_BANNED, st.state);
	EXPECT_EQ(GUILTY_JOBS, st.jobs_failed);
	EXPECT_EQ(GUILTY_JOBS, st.completed_seqno);
	EXPECT_EQ(1, st.resets);
	EXPECT_EQ(ECANCELED, st.error);

	/* Banned: its queue refuses more, and nothing is queued. */
	EXPECT_EQ(-ECANCELED, SUBMIT_CMDS(&self->a, qa.queue_id, NULL,
					  cmds_nop(&self->a.cs)));
	EXPECT_EQ(GUILTY_JOBS, queue_submitted(self->a.fd, qa.queue_id));
	/* ... but a queue it creates now works. */
	ASSERT_EQ(0, queue_create(self->a.fd, 0, DRM_TRN_PRIORITY_NORMAL,
				  &fresh));
	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, fresh.queue_id, &s,
				 cmds_write32(&self->a.cs,
					      self->a.data.va + 4, 7)));
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, fresh.syncobj, s, WAIT_MS));
	EXPECT_EQ(7, t32(&self->a)[1]);
	EXPECT_EQ(1, timeline_fence_status(self->a.fd, fresh.syncobj, s));

	/* The innocent queue knows nothing of it. */
	ASSERT_EQ(0, queue_status(self->b.fd, qb.queue_id, &st));
	EXPECT_EQ(0, st.state);
	EXPECT_EQ(0, st.jobs_failed);

	ASSERT_EQ(0, exec_counters_idle(BAN_DEV, WAIT_MS, &c));
	EXPECT_EQ(self->c0.resets + 1, c.resets);
	EXPECT_EQ(self->c0.failed + GUILTY_JOBS, c.failed);
	ASSERT_EQ(0, sim_accel_u64(BAN_DEV, "bans", &bans));
	EXPECT_EQ(self->bans0 + 1, bans);
}

/*
 * The same 256 hanging jobs, and the guilty process is killed instead:
 * closing its file cancels its jobs on the ring at once, without waiting
 * for a timeout (no reset happens), so the innocent job runs.
 */
/* In a child: GUILTY_JOBS jobs that wait for a semaphore nobody signals. */
static int guilty_tenant(const void *arg)
{
	struct drm_trn_queue_create q;
	struct tenant g;
	size_t from;

	(void)arg;
	if (tenant_open(&g, BAN_DEV) ||
	    queue_create(g.fd, 0, DRM_TRN_PRIORITY_NORMAL, &q))
		return 10;
	from = g.cs.len;
	cmds_sem(&g.cs, true, HANG_SEM, 1);
	return submit_copies(&g, q.queue_id, from, GUILTY_JOBS, 0) ? 11 : 0;
}

TEST_F_TIMEOUT(ban, sigkill_frees_the_ring, 600)
{
	struct drm_trn_queue_create qb;
	struct exec_counters c;
	uint64_t sb = 0;
	pid_t pid;

	pid = spawn_tenant(guilty_tenant, NULL);
	ASSERT_LT(0, pid);

	ASSERT_EQ(0, queue_on_same_ring(self->b.fd, 0, &qb));
	ASSERT_EQ(0, SUBMIT_CMDS(&self->b, qb.queue_id, &sb,
				 cmds_write32(&self->b.cs, self->b.data.va,
					      0x600d)));
	ASSERT_EQ(0, kill_tenant(pid));

	ASSERT_EQ(0, syncobj_wait_point(self->b.fd, qb.syncobj, sb, WAIT_MS));
	EXPECT_EQ(0x600d, t32(&self->b)[0]);
	EXPECT_EQ(1, timeline_fence_status(self->b.fd, qb.syncobj, sb));
	ASSERT_EQ(0, exec_counters_idle(BAN_DEV, WAIT_MS, &c));
	/* Cancelled, not timed out: no reset was needed. */
	EXPECT_EQ(self->c0.resets, c.resets);
	EXPECT_EQ(self->c0.failed + GUILTY_JOBS, c.failed);
}

/*
 * MMU faults: each fails only its own job, but the ban_faults-th fault of
 * a context bans it, and its job blocked behind the faulting ones is
 * cancelled.
 */
TEST_F(ban, faults_ban_after_ban_faults)
{
	struct drm_trn_device_info info;
	struct drm_trn_queue_create q, qs, fresh;
	struct drm_trn_queue_status st;
	uint64_t s = 0, blocked = 0;
	unsigned int i;

	ASSERT_EQ(0, query_info(self->a.fd, &info));
	ASSERT_EQ(BAN_FAULTS, info.ban_faults);
	ASSERT_EQ(0, queue_create(self->a.fd, 0, DRM_TRN_PRIORITY_NORMAL, &q));
	for (i = 1; i < BAN_FAULTS; i++) {
		ASSERT_EQ(0, SUBMIT_CMDS(&self->a, q.queue_id, &s,
					 cmds_write32(&self->a.cs,
						      UNMAPPED_VA, i)));
		ASSERT_EQ(0, syncobj_wait_point(self->a.fd, q.syncobj, s,
						WAIT_MS));
		ASSERT_EQ(-EFAULT, timeline_fence_status(self->a.fd, q.syncobj,
							 s));
	}
	ASSERT_EQ(0, queue_status(self->a.fd, q.queue_id, &st));
	EXPECT_EQ(DRM_TRN_QUEUE_FAULTED, st.state);

	/* A job that blocks on core 1, then the last straw on core 0. */
	ASSERT_EQ(0, queue_create(self->a.fd, 1, DRM_TRN_PRIORITY_NORMAL, &qs));
	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, qs.queue_id, &blocked,
				 (cmds_sem(&self->a.cs, true, HANG_SEM, 1),
				  cmds_write32(&self->a.cs, self->a.data.va,
					       0xbad))));
	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, q.queue_id, &s,
				 cmds_write32(&self->a.cs, UNMAPPED_VA, 99)));
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, q.syncobj, s, WAIT_MS));
	EXPECT_EQ(-EFAULT, timeline_fence_status(self->a.fd, q.syncobj, s));
	/* The blocked job is cancelled, well before any timeout. */
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, qs.syncobj, blocked,
					WAIT_MS));
	EXPECT_EQ(-ECANCELED, timeline_fence_status(self->a.fd, qs.syncobj,
						    blocked));
	EXPECT_EQ(0, t32(&self->a)[0]);

	ASSERT_EQ(0, queue_status(self->a.fd, q.queue_id, &st));
	EXPECT_EQ(DRM_TRN_QUEUE_FAULTED | DRM_TRN_QUEUE_BANNED, st.state);
	EXPECT_EQ(-ECANCELED, SUBMIT_CMDS(&self->a, q.queue_id, NULL,
					  cmds_nop(&self->a.cs)));
	EXPECT_EQ(-ECANCELED, SUBMIT_CMDS(&self->a, qs.queue_id, NULL,
					  cmds_nop(&self->a.cs)));
	ASSERT_EQ(0, queue_create(self->a.fd, 0, DRM_TRN_PRIORITY_NORMAL,
				  &fresh));
	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, fresh.queue_id, &s,
				 cmds_nop(&self->a.cs)));
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, fresh.syncobj, s, WAIT_MS));
	EXPECT_EQ(1, timeline_fence_status(self->a.fd, fresh.syncobj, s));
	/* No timeout, and the other context was never banned. */
	ASSERT_EQ(0, queue_status(self->a.fd, fresh.queue_id, &st));
	EXPECT_EQ(0, st.state);
	EXPECT_EQ(0, st.resets);
}

/* ------------------------------------------------------- bounded queues */

/*
 * A writable trn parameter set for a test; param_restore() (also in the
 * fixture's teardown, should the test stop early) puts it back.
 */
struct param {
	const char *name;
	uint64_t old;
	bool set;
};

static int param_push(struct param *p, const char *name, uint64_t val)
{
	int ret;

	p->name = name;
	p->set = false;
	ret = trn_param_get(name, &p->old);
	if (!ret)
		ret = trn_param_set(name, val);
	p->set = !ret;
	return ret;
}

static void param_restore(struct param *p)
{
	if (p->set)
		trn_param_set(p->name, p->old);
	p->set = false;
}

FIXTURE(tenant)
{
	struct tenant a;
	uint32_t depth;
	struct param cap;
};

FIXTURE_SETUP(tenant)
{
	struct drm_trn_device_info info;

	self->a.fd = -1;
	SKIP_UNLESS_DUT();
	if (!dut_is_part()) {
		ASSERT_EQ(0, debugfs_ready());
		ASSERT_EQ(0, new_device(TENANT_DEV, 2, TIMEOUT_MS));
	}
	ASSERT_EQ(0, tenant_open(&self->a, TENANT_DEV));
	ASSERT_EQ(0, query_info(self->a.fd, &info));
	self->depth = info.queue_depth;
}

FIXTURE_TEARDOWN(tenant)
{
	param_restore(&self->cap);
	tenant_close(&self->a);
	if (!dut_is_part() && sim_available() && sim_exists(TENANT_DEV))
		sim_del(TENANT_DEV);
}

/*
 * Two queues of one context on core 0, on its two rings: the first holds
 * jobs blocked on semaphore @sem, the second can release them.
 */
static int two_rings(struct tenant *t, struct drm_trn_queue_create *blocked,
		     struct drm_trn_queue_create *releaser)
{
	int ret = queue_create(t->fd, 0, DRM_TRN_PRIORITY_NORMAL, blocked);

	return ret ? ret : queue_create(t->fd, 0, DRM_TRN_PRIORITY_NORMAL,
					releaser);
}

static void on_alarm(int sig)
{
	(void)sig;
}

struct blocked_submit {
	struct tenant *t;
	uint32_t queue;
	size_t from;
	int ret;
};

static void *blocking_submit(void *arg)
{
	struct blocked_submit *b = arg;

	b->ret = submit_copies(b->t, b->queue, b->from, 1, 0);
	return NULL;
}

/*
 * A queue holds queue_depth unfinished jobs. Beyond that SUBMIT blocks, in
 * a wait a signal interrupts (-EINTR, nothing queued), or fails at once
 * with -EAGAIN with DRM_TRN_SUBMIT_NONBLOCK; once jobs finish, there is
 * room again. (Before, 102,400 jobs queued behind a hang in a second.)
 */
TEST_F_TIMEOUT(tenant, bounded_depth, 600)
{
	struct drm_trn_queue_create q, rel;
	struct blocked_submit b = { 0 };
	struct sigaction sa = { 0 };
	uint64_t depth = 0, s = 0, sub;
	pthread_t th;
	size_t from;

	ASSERT_EQ(0, sim_accel_u64(TENANT_DEV, "queue_depth", &depth));
	ASSERT_EQ(depth, self->depth);
	ASSERT_LE(DRM_TRN_SUBMIT_MAX_JOBS, self->depth);
	ASSERT_EQ(0, two_rings(&self->a, &q, &rel));

	from = self->a.cs.len;
	cmds_sem(&self->a.cs, true, 7, 1);
	ASSERT_EQ(0, submit_copies(&self->a, q.queue_id, from, self->depth,
				   DRM_TRN_SUBMIT_NONBLOCK));
	sub = queue_submitted(self->a.fd, q.queue_id);
	EXPECT_EQ(self->depth, sub);

	/* Full: refused at once, nothing queued, not even part of a batch. */
	EXPECT_EQ(-EAGAIN, submit_copies(&self->a, q.queue_id, from, 1,
					 DRM_TRN_SUBMIT_NONBLOCK));
	EXPECT_EQ(-EAGAIN, submit_copies(&self->a, q.queue_id, from, 8,
					 DRM_TRN_SUBMIT_NONBLOCK));
	EXPECT_EQ(sub, queue_submitted(self->a.fd, q.queue_id));

	/* Blocking, interrupted by a signal: -EINTR, nothing queued. */
	sa.sa_handler = on_alarm;	/* no SA_RESTART */
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	b.t = &self->a;
	b.queue = q.queue_id;
	b.from = from;
	b.ret = 1;
	ASSERT_EQ(0, pthread_create(&th, NULL, blocking_submit, &b));
	usleep(300000);
	EXPECT_EQ(1, b.ret);	/* still waiting */
	ASSERT_EQ(0, pthread_kill(th, SIGUSR1));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(-EINTR, b.ret);
	EXPECT_EQ(sub, queue_submitted(self->a.fd, q.queue_id));

	/* Blocking, until the jobs are released from the other ring. */
	b.ret = 1;
	ASSERT_EQ(0, pthread_create(&th, NULL, blocking_submit, &b));
	usleep(300000);
	EXPECT_EQ(1, b.ret);
	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, rel.queue_id, &s,
				 cmds_sem(&self->a.cs, false, 7, 1)));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, b.ret);
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, q.syncobj, sub + 1,
					WAIT_MS));
	EXPECT_EQ(1, timeline_fence_status(self->a.fd, q.syncobj, sub + 1));
	/* Room again, without waiting. */
	EXPECT_EQ(0, submit_copies(&self->a, q.queue_id, from,
				   DRM_TRN_SUBMIT_MAX_JOBS,
				   DRM_TRN_SUBMIT_NONBLOCK));
	signal(SIGUSR1, SIG_DFL);
}

/* ------------------------------------------------------------- teardown */

/*
 * The review's scenario: queue Q7 runs SEM_WAIT with out-sync S; Q6 gets
 * "WRITE x = 0xbad" with in-sync S. QUEUE_DESTROY(Q6) used to block until
 * S signalled and then run the write. Now it returns at once (S is still
 * unsignalled when it does), and when S signals the write never lands:
 * the job fails with -ESRCH, in the status page too.
 */
TEST_F(tenant, destroy_cancels_waiting_job)
{
	struct drm_trn_queue_create q7, rel, q6;
	const volatile struct drm_trn_queue_status_page *sp;
	struct drm_trn_sync in = { 0 }, out = { 0 };
	struct drm_trn_job j;
	uint64_t s = 0;
	uint32_t sobj;
	size_t from;

	ASSERT_EQ(0, two_rings(&self->a, &q7, &rel));
	ASSERT_EQ(0, queue_create(self->a.fd, 1, DRM_TRN_PRIORITY_NORMAL, &q6));
	ASSERT_EQ(0, syncobj_create(self->a.fd, 0, &sobj));
	sp = status_page_map(self->a.fd, q6.status_handle);
	ASSERT_NE(NULL, sp);

	from = self->a.cs.len;
	cmds_sem(&self->a.cs, true, 5, 1);
	tenant_job(&self->a, &j, from);
	out.handle = sobj;
	j.out_syncs = (uintptr_t)&out;
	j.out_count = 1;
	ASSERT_EQ(0, submit_jobs(self->a.fd, q7.queue_id, &j, 1));

	from = self->a.cs.len;
	cmds_write32(&self->a.cs, self->a.data.va + 8, 0xbad);
	tenant_job(&self->a, &j, from);
	in.handle = sobj;
	j.in_syncs = (uintptr_t)&in;
	j.in_count = 1;
	ASSERT_EQ(0, submit_jobs(self->a.fd, q6.queue_id, &j, 1));

	ASSERT_EQ(0, queue_destroy(self->a.fd, q6.queue_id));
	/* It did not wait for S. */
	EXPECT_EQ(-ETIME, syncobj_wait_point(self->a.fd, sobj, 0, 0));

	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, rel.queue_id, &s,
				 cmds_sem(&self->a.cs, false, 5, 1)));
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, sobj, 0, WAIT_MS));
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, q6.syncobj, 1, WAIT_MS));
	EXPECT_EQ(-ESRCH, timeline_fence_status(self->a.fd, q6.syncobj, 1));
	EXPECT_EQ(0, t32(&self->a)[2]);
	/* The mapping of the status page outlives the queue and tells. */
	EXPECT_EQ(1, sp->completed_seqno);
	EXPECT_EQ(1, sp->failed_count);
	EXPECT_EQ(1, sp->failures[0].seqno);
	EXPECT_EQ(ESRCH, sp->failures[0].error);
	EXPECT_EQ(DRM_TRN_STATUS_ABORTED, sp->failures[0].status);
	munmap((void *)sp, TEST_PAGE);
	/* The status buffer went with the queue. */
	EXPECT_EQ(-EINVAL, gem_close(self->a.fd, q6.status_handle));
}

/* What a tenant child queues: jobs that write a word, behind a fence. */
struct waiter {
	unsigned int dev;
	uint32_t core;
	int fence_fd;		/* a syncobj's fd: every job's in-fence */
	int dmabuf;		/* they write at byte 12 of it; -1: own buffer */
	unsigned int jobs;	/* at most 4 */
	uint32_t value;
};

static int waiting_tenant(const void *arg)
{
	const struct waiter *w = arg;
	struct drm_syncobj_handle ih = { .fd = w->fence_fd };
	struct drm_trn_queue_create q;
	struct drm_trn_sync in = { 0 };
	struct drm_trn_job jobs[4];
	struct tenant g;
	unsigned int k;
	uint64_t va;
	size_t from;

	if (w->jobs > ARRAY_SIZE(jobs) || tenant_open(&g, w->dev) ||
	    queue_create(g.fd, w->core, DRM_TRN_PRIORITY_NORMAL, &q) ||
	    raw_ioctl(g.fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &ih))
		return 10;
	va = g.data.va;
	if (w->dmabuf >= 0) {
		if (prime_import(g.fd, w->dmabuf, &g.bos[1], &va))
			return 10;
		va += 12;
	}
	from = g.cs.len;
	cmds_write32(&g.cs, va, w->value);
	in.handle = ih.handle;
	for (k = 0; k < w->jobs; k++) {
		tenant_job(&g, &jobs[k], from);
		jobs[k].in_syncs = (uintptr_t)&in;
		jobs[k].in_count = 1;
	}
	return submit_jobs(g.fd, q.queue_id, jobs, w->jobs) ? 11 : 0;
}

/*
 * A process is killed with a job waiting for an in-fence; the fence
 * signals right after: the job must not run (it used to, if the fence
 * came within about a second of the kill).
 */
TEST_F(tenant, sigkill_cancels_waiting_job)
{
	struct drm_trn_queue_create q7, rel;
	struct waiter w = {
		.dev = TENANT_DEV, .core = 1, .jobs = 1, .value = 0xbad,
	};
	struct exec_counters c0, c;
	struct drm_trn_bo_info bi;
	uint32_t sobj;
	uint64_t s = 0;
	uint32_t *shared;
	pid_t pid;

	ASSERT_EQ(0, two_rings(&self->a, &q7, &rel));
	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, q7.queue_id, NULL,
				 cmds_sem(&self->a.cs, true, 6, 1)));
	/* The next job's fence, in S, for the child to wait for. */
	ASSERT_EQ(0, waiting_fence(&self->a, q7.queue_id, 6, &sobj,
				   &w.fence_fd));
	/* The data buffer, shared with the child through a dma-buf. */
	w.dmabuf = prime_export(self->a.fd, self->a.data.handle);
	ASSERT_LE(0, w.dmabuf);
	ASSERT_EQ(0, bo_info(self->a.fd, self->a.data.handle, &bi));
	shared = t32(&self->a);
	ASSERT_EQ(0, exec_counters(TENANT_DEV, &c0));

	pid = spawn_tenant(waiting_tenant, &w);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, kill_tenant(pid));

	/* Now the fence signals: release both waiting jobs of ours. */
	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, rel.queue_id, &s,
				 cmds_sem(&self->a.cs, false, 6, 2)));
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, sobj, 0, WAIT_MS));
	ASSERT_EQ(0, exec_counters_idle(TENANT_DEV, WAIT_MS, &c));
	EXPECT_EQ(0, shared[3]);
	/* The child's job was counted as failed: cancelled, not lost. */
	EXPECT_EQ(c0.failed + 1, c.failed);
	EXPECT_EQ(c0.submitted + 2, c.submitted);
	close(w.dmabuf);
	close(w.fence_fd);
}

/*
 * Closing a handle, or the file, waits for no job, the own ones nor those
 * of another context that share the buffer; the buffer stays mapped for
 * the jobs that use it. Another context has a job blocked on a shared
 * buffer; this one closes its handle and its whole file while its own job
 * is stuck in the device (hang_next ignores cancellation, so only the
 * timeout ends it): both return before anything finished.
 */
TEST_F(tenant, close_waits_for_no_job)
{
	struct drm_trn_queue_create qa, qb, rel;
	struct exec_counters c0, c;
	struct tenant b;
	char path[128];
	uint64_t left = 1, sb = 0, s = 0;
	uint32_t handle;
	uint64_t va;
	int dmabuf, i;

	SIMULATOR_ONLY("a job stuck in the device needs trn_sim's hang_next");
	sim_debugfs_path(TENANT_DEV, "hang_next", path, sizeof(path));
	if (access(path, W_OK))
		SKIP(return, "no %s", path);
	ASSERT_EQ(0, tenant_open(&b, TENANT_DEV));
	ASSERT_EQ(0, exec_counters(TENANT_DEV, &c0));

	/* A: a job the device gets stuck in, while nothing else runs. */
	ASSERT_EQ(0, queue_create(self->a.fd, 1, DRM_TRN_PRIORITY_NORMAL, &qa));
	ASSERT_EQ(0, sysfs_write(path, "1"));
	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, qa.queue_id, NULL,
				 cmds_write32(&self->a.cs, self->a.data.va + 20,
					      0xa)));
	for (i = 0; i < 6000 && left; i++) {
		ASSERT_EQ(0, read_u64(path, &left));
		if (left)
			usleep(10000);
	}
	ASSERT_EQ(0, left);

	/* B: a job blocked on semaphore 4, listing A's data buffer. */
	dmabuf = prime_export(self->a.fd, self->a.data.handle);
	ASSERT_LE(0, dmabuf);
	ASSERT_EQ(0, prime_import(b.fd, dmabuf, &handle, &va));
	ASSERT_EQ(0, two_rings(&b, &qb, &rel));
	b.bos[1] = handle;
	ASSERT_EQ(0, SUBMIT_CMDS(&b, qb.queue_id, &sb,
				 (cmds_sem(&b.cs, true, 4, 1),
				  cmds_write32(&b.cs, va + 16, 0xb))));

	ASSERT_EQ(0, gem_close(self->a.fd, self->a.data.handle));
	munmap(self->a.data.map, self->a.data.size);
	self->a.data.map = mmap(NULL, self->a.data.size, PROT_READ, MAP_SHARED,
				dmabuf, 0);
	ASSERT_NE(MAP_FAILED, self->a.data.map);
	munmap(self->a.cmd.map, self->a.cmd.size);
	close(self->a.fd);
	self->a.fd = -1;
	/* Both returned while B's job waits and A's is still stuck. */
	EXPECT_EQ(-ETIME, syncobj_wait_point(b.fd, qb.syncobj, sb, 0));
	ASSERT_EQ(0, exec_counters(TENANT_DEV, &c));
	EXPECT_EQ(c0.resets, c.resets);

	ASSERT_EQ(0, SUBMIT_CMDS(&b, rel.queue_id, &s,
				 cmds_sem(&b.cs, false, 4, 1)));
	ASSERT_EQ(0, syncobj_wait_point(b.fd, qb.syncobj, sb, WAIT_MS));
	EXPECT_EQ(1, timeline_fence_status(b.fd, qb.syncobj, sb));
	EXPECT_EQ(0xb, t32(&self->a)[4]);
	/* A's stuck job ends with its timeout; nothing else runs of A. */
	ASSERT_EQ(0, exec_counters_idle(TENANT_DEV, WAIT_MS, &c));
	EXPECT_EQ(c0.resets + 1, c.resets);
	EXPECT_EQ(0, t32(&self->a)[5]);
	munmap(self->a.data.map, self->a.data.size);
	self->a.data.map = NULL;
	close(dmabuf);
	tenant_close(&b);
}

/* --------------------------------------------------------------- memory */

/*
 * A queue's status buffer is charged to its file and goes with the queue:
 * 4,000 create/destroy cycles used to leave 15 MiB pinned and uncharged.
 */
TEST_F(tenant, status_buffers_go_with_their_queues)
{
	struct drm_trn_memory_info m0, m1, m;
	struct drm_trn_queue_create q;
	uint64_t pinned0 = 0, pinned = 0;
	unsigned int i;

	ASSERT_EQ(0, sim_accel_u64(TENANT_DEV, "host_pinned", &pinned0));
	ASSERT_EQ(0, query_memory(self->a.fd, &m0));
	ASSERT_EQ(0, queue_create(self->a.fd, 0, DRM_TRN_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, query_memory(self->a.fd, &m1));
	EXPECT_EQ(m0.ctx_bos + 1, m1.ctx_bos);
	EXPECT_EQ(m0.ctx_pinned + TEST_PAGE, m1.ctx_pinned);
	ASSERT_EQ(0, queue_destroy(self->a.fd, q.queue_id));
	for (i = 0; i < 4000; i++) {
		ASSERT_EQ(0, queue_create(self->a.fd, i % 2,
					  DRM_TRN_PRIORITY_NORMAL, &q));
		ASSERT_EQ(0, queue_destroy(self->a.fd, q.queue_id));
	}
	ASSERT_EQ(0, query_memory(self->a.fd, &m));
	EXPECT_EQ(m0.ctx_bos, m.ctx_bos);
	EXPECT_EQ(m0.ctx_pinned, m.ctx_pinned);
	ASSERT_EQ(0, sim_accel_u64(TENANT_DEV, "host_pinned", &pinned));
	EXPECT_EQ(pinned0, pinned);
}

/*
 * Export, then close: the charge used to leave with the handle, so a file
 * could pin any amount against an 8 MiB cap through dma-bufs held
 * elsewhere. Now a buffer is charged until it is freed.
 */
TEST_F(tenant, export_and_close_keeps_the_charge)
{
	struct drm_trn_memory_info m;
	struct param *cap = &self->cap;
	int fds[3] = { -1, -1, -1 };
	uint32_t h;
	uint64_t va;
	int i;

	ASSERT_EQ(0, param_push(cap, "max_pinned_mib_per_file", 8));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, bo_create(self->a.fd, 3 << 20,
				       DRM_TRN_PLACEMENT_HOST, 0, 0, &h, &va));
		fds[i] = prime_export(self->a.fd, h);
		ASSERT_LE(0, fds[i]);
		ASSERT_EQ(0, gem_close(self->a.fd, h));
	}
	ASSERT_EQ(0, query_memory(self->a.fd, &m));
	/* Its command and data buffers, and the two exported ones. */
	EXPECT_EQ(self->a.cmd.size + self->a.data.size + (6 << 20),
		  m.ctx_pinned);
	EXPECT_EQ(-EDQUOT, bo_create(self->a.fd, 3 << 20,
				     DRM_TRN_PLACEMENT_HOST, 0, 0, &h, &va));
	/* The memory goes with the last dma-buf, and the charge with it. */
	close(fds[0]);
	close(fds[1]);
	ASSERT_EQ(0, query_memory(self->a.fd, &m));
	EXPECT_EQ(self->a.cmd.size + self->a.data.size, m.ctx_pinned);
	EXPECT_EQ(0, bo_create(self->a.fd, 3 << 20, DRM_TRN_PLACEMENT_HOST, 0,
			       0, &h, &va));
	param_restore(cap);
	(void)fds[2];
}

/* A foreign dma-buf pins the exporter's memory for us: it is charged. */
TEST_F(tenant, imports_are_charged)
{
	/* Small: a bounce buffer maps at most 256 KiB at once. */
	struct dma_heap_allocation_data a = {
		.len = 64 << 10,
		.fd_flags = O_RDWR | O_CLOEXEC,
	};
	struct drm_trn_memory_info m0, m;
	struct param *cap = &self->cap;
	uint32_t h;
	uint64_t va;
	int heap;

	heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (heap < 0)
		SKIP(return, "no /dev/dma_heap/system");
	ASSERT_EQ(0, ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a));
	close(heap);
	ASSERT_EQ(0, query_memory(self->a.fd, &m0));
	ASSERT_EQ(0, prime_import(self->a.fd, (int)a.fd, &h, &va));
	ASSERT_EQ(0, query_memory(self->a.fd, &m));
	EXPECT_EQ(m0.ctx_bos + 1, m.ctx_bos);
	EXPECT_EQ(m0.ctx_pinned + (64 << 10), m.ctx_pinned);
	ASSERT_EQ(0, gem_close(self->a.fd, h));
	ASSERT_EQ(0, query_memory(self->a.fd, &m));
	EXPECT_EQ(m0.ctx_pinned, m.ctx_pinned);

	/* Beyond the cap, an import is refused like a creation. */
	ASSERT_EQ(0, bo_create(self->a.fd, (1 << 20) - m.ctx_pinned,
			       DRM_TRN_PLACEMENT_HOST, 0, 0, NULL, NULL));
	ASSERT_EQ(0, param_push(cap, "max_pinned_mib_per_file", 1));
	EXPECT_EQ(-EDQUOT, prime_import(self->a.fd, (int)a.fd, &h, &va));
	param_restore(cap);
	close((int)a.fd);
}

/*
 * User memory counts against the owner's RLIMIT_MEMLOCK, per user, across
 * all its files (the per-file caps alone let N files pin N times a cap).
 * A child drops root (and with it CAP_IPC_LOCK) keeping two open files.
 */
TEST_F(tenant, userptr_honours_memlock)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		const size_t mib = 1 << 20;
		struct rlimit rl = { mib, mib };
		uint32_t h1, h2, h3;
		uint64_t va;
		char *mem;
		int fd1, fd2;

		fd1 = dev_open(TENANT_DEV);
		fd2 = dev_open(TENANT_DEV);
		mem = mmap(NULL, 4 * mib, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fd1 < 0 || fd2 < 0 || mem == MAP_FAILED)
			_exit(10);
		memset(mem, 1, 4 * mib);
		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(65534) ||
		    setuid(65534))
			_exit(11);
		/* Within the limit; then over it, in either file. */
		EXPECT_EQ(0, bo_userptr(fd1, mem, mib / 2, 0, &h1, &va));
		EXPECT_EQ(-ENOMEM, bo_userptr(fd1, mem + mib, mib, 0, &h2, &va));
		EXPECT_EQ(-ENOMEM, bo_userptr(fd2, mem + mib, mib, 0, &h2, &va));
		EXPECT_EQ(0, bo_userptr(fd2, mem + mib, mib / 2, 0, &h2, &va));
		EXPECT_EQ(-ENOMEM, bo_userptr(fd2, mem + 2 * mib, TEST_PAGE, 0,
					      &h3, &va));
		/* Freeing gives it back. */
		EXPECT_EQ(0, gem_close(fd1, h1));
		EXPECT_EQ(0, bo_userptr(fd1, mem + 2 * mib, mib / 2, 0, &h3,
					&va));
		_exit(_metadata->exit_code == KSFT_PASS ? 0 : 14);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* The cgroup2 hierarchy, mounted if need be; "" if there is none. */
static const char *cgroup_root(void)
{
	static const char *const dirs[] = { "/sys/fs/cgroup", "/tmp/trn-cg" };
	char path[128], buf[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/cgroup.controllers", dirs[i]);
		if (read_file(path, buf, sizeof(buf)) >= 0)
			return dirs[i];
	}
	mkdir("/tmp/trn-cg", 0755);
	if (mount("none", "/tmp/trn-cg", "cgroup2", 0, NULL))
		return "";
	return "/tmp/trn-cg";
}

/* A child cgroup with @controller enabled; its path in @dir, 0 or -errno. */
static int cgroup_make(const char *controller, char *dir, size_t size)
{
	const char *root = cgroup_root();
	char path[192], buf[512], enable[32];

	if (!*root)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	if (read_file(path, buf, sizeof(buf)) < 0 || !strstr(buf, controller))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	snprintf(enable, sizeof(enable), "+%s", controller);
	if (sysfs_write(path, enable))
		return -EIO;
	snprintf(dir, size, "%s/trn-test-%s", root, controller);
	rmdir(dir);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int cgroup_enter(const char *dir)
{
	char path[256], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return sysfs_write(path, pid);
}

/*
 * Host buffers are shmem pages charged to their creator's memory cgroup
 * for as long as they live. A process in a cgroup limited to 48 MiB tries
 * every laundering path: buffers exported and their handles closed, new
 * files opened as old ones fill, queues created and destroyed. It is
 * stopped with -ENOMEM (not the OOM killer) before it pins much more than
 * its limit.
 */
TEST_F_TIMEOUT(tenant, memcg_stops_laundering, 300)
{
	char dir[192], path[256];
	uint64_t pinned0 = 0, pinned = 0;
	int status, p[2];
	pid_t pid;
	long got = 0;

	if (cgroup_make("memory", dir, sizeof(dir)))
		SKIP(return, "no cgroup2 memory controller");
	snprintf(path, sizeof(path), "%s/memory.max", dir);
	ASSERT_EQ(0, sysfs_write(path, "50331648"));
	snprintf(path, sizeof(path), "%s/memory.swap.max", dir);
	sysfs_write(path, "0");
	ASSERT_EQ(0, sim_accel_u64(TENANT_DEV, "host_pinned", &pinned0));
	ASSERT_EQ(0, pipe(p));
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct drm_trn_queue_create q;
		long mib = 0;
		int fd = -1, ret = 0, i;
		uint32_t h;
		uint64_t va;

		close(p[0]);
		if (cgroup_enter(dir))
			_exit(10);
		for (i = 0; i < 64 && !ret; i++) {
			if (i % 4 == 0)
				fd = dev_open(TENANT_DEV);	/* files kept open */
			if (fd < 0)
				_exit(11);
			if (!queue_create(fd, 0, DRM_TRN_PRIORITY_NORMAL, &q))
				queue_destroy(fd, q.queue_id);
			ret = bo_create(fd, 4 << 20, DRM_TRN_PLACEMENT_HOST, 0,
					0, &h, &va);
			if (ret && ret != -ENOMEM)
				fprintf(stderr, "# buffer %d: %s\n", i,
					strerror(-ret));
			if (!ret) {
				if (prime_export(fd, h) < 0)	/* kept */
					_exit(12);
				gem_close(fd, h);
				mib += 4;
			}
		}
		if (write(p[1], &mib, sizeof(mib)) != sizeof(mib))
			_exit(13);
		_exit(ret == -ENOMEM ? 0 : 20);
	}
	close(p[1]);
	EXPECT_EQ(sizeof(got), read(p[0], &got, sizeof(got)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(0, WEXITSTATUS(status));
	printf("# the cgroup stopped it after %ld MiB of 48\n", got);
	EXPECT_GE(48, got);
	/* Its memory went with the process's last dma-buf. */
	ASSERT_EQ(0, sim_accel_u64(TENANT_DEV, "host_pinned", &pinned));
	for (int i = 0; i < 500 && pinned != pinned0; i++) {
		usleep(10000);
		ASSERT_EQ(0, sim_accel_u64(TENANT_DEV, "host_pinned", &pinned));
	}
	EXPECT_EQ(pinned0, pinned);
	rmdir(dir);
}

/*
 * Device memory is a region of the dmem cgroup controller where the kernel
 * has one: a cgroup's dmem.max bounds what its processes allocate.
 */
TEST_F(tenant, dmem_limits_device_memory)
{
	char dir[192], path[256], line[192], name[64];
	int status;
	pid_t pid;

	if (cgroup_make("dmem", dir, sizeof(dir)))
		SKIP(return, "the kernel has no dmem cgroup controller (CONFIG_CGROUP_DMEM)");
	snprintf(path, sizeof(path), "%s/dmem.max", dir);
	ASSERT_EQ(0, dev_parent_name(TENANT_DEV, name, sizeof(name)));
	snprintf(line, sizeof(line), "trn/%s/hbm 8388608", name);
	ASSERT_EQ(0, sysfs_write(path, line));
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t h1, h2;
		uint64_t va;
		int fd;

		if (cgroup_enter(dir))
			_exit(10);
		fd = dev_open(TENANT_DEV);
		if (fd < 0)
			_exit(11);
		if (bo_create(fd, 6 << 20, DRM_TRN_PLACEMENT_HBM, 0, 0, &h1, &va))
			_exit(12);
		if (bo_create(fd, 4 << 20, DRM_TRN_PLACEMENT_HBM, 0, 0, &h2,
			      &va) != -ENOMEM)
			_exit(13);
		if (gem_close(fd, h1) ||
		    bo_create(fd, 4 << 20, DRM_TRN_PLACEMENT_HBM, 0, 0, &h2, &va))
			_exit(14);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	rmdir(dir);
}

/* ----------------------------------------------------- smaller defects */

/* mmap of a dma-buf at an offset maps that page, not page 0. */
TEST_F(tenant, dmabuf_mmap_honours_the_offset)
{
	struct host_bo b;
	unsigned char *m;
	int dmabuf, i;

	ASSERT_EQ(0, host_bo_new(self->a.fd, 4 * TEST_PAGE, &b));
	for (i = 0; i < 4; i++)
		memset((char *)b.map + i * TEST_PAGE, 0x10 + i, TEST_PAGE);
	dmabuf = prime_export(self->a.fd, b.handle);
	ASSERT_LE(0, dmabuf);
	m = mmap(NULL, TEST_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf,
		 3 * TEST_PAGE);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_TRUE(all_bytes(m, 0x13, TEST_PAGE));
	memset(m, 0x77, 64);
	EXPECT_TRUE(all_bytes((char *)b.map + 3 * TEST_PAGE, 0x77, 64));
	EXPECT_TRUE(all_bytes(b.map, 0x10, TEST_PAGE));
	munmap(m, TEST_PAGE);
	/* Beyond the buffer: refused. */
	m = mmap(NULL, 2 * TEST_PAGE, PROT_READ, MAP_SHARED, dmabuf,
		 3 * TEST_PAGE);
	EXPECT_EQ(MAP_FAILED, m);
	close(dmabuf);
	host_bo_free(self->a.fd, &b);
}

/*
 * fdinfo's drm-active-<region> counts buffers a queued or running job
 * lists (it stayed 0: job fences are bookkeeping, which the DRM helper
 * ignores).
 */
TEST_F(tenant, fdinfo_active_while_jobs_use_buffers)
{
	struct drm_trn_queue_create q, rel;
	uint64_t active = 0, s = 0, sj = 0;

	ASSERT_EQ(0, fdinfo_u64(self->a.fd, "drm-active-host", &active));
	EXPECT_EQ(0, active);
	ASSERT_EQ(0, two_rings(&self->a, &q, &rel));
	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, q.queue_id, &sj,
				 cmds_sem(&self->a.cs, true, 3, 1)));
	ASSERT_EQ(0, fdinfo_u64(self->a.fd, "drm-active-host", &active));
	EXPECT_EQ(self->a.cmd.size + self->a.data.size, active);
	ASSERT_EQ(0, SUBMIT_CMDS(&self->a, rel.queue_id, &s,
				 cmds_sem(&self->a.cs, false, 3, 1)));
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, q.syncobj, sj, WAIT_MS));
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, rel.syncobj, s, WAIT_MS));
	ASSERT_EQ(0, fdinfo_u64(self->a.fd, "drm-active-host", &active));
	EXPECT_EQ(0, active);
}

/* A failed job's timeline out-point carries its error. */
TEST_F(tenant, timeline_out_point_carries_the_error)
{
	struct drm_trn_queue_create q;
	struct drm_trn_sync out = { .point = 3 };
	struct drm_trn_job j;
	size_t from;

	ASSERT_EQ(0, queue_create(self->a.fd, 0, DRM_TRN_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, syncobj_create(self->a.fd, 0, &out.handle));
	from = self->a.cs.len;
	cmds_write32(&self->a.cs, UNMAPPED_VA, 1);
	tenant_job(&self->a, &j, from);
	j.out_syncs = (uintptr_t)&out;
	j.out_count = 1;
	ASSERT_EQ(0, submit_jobs(self->a.fd, q.queue_id, &j, 1));
	ASSERT_EQ(0, syncobj_wait_point(self->a.fd, out.handle, 3, WAIT_MS));
	EXPECT_EQ(-EFAULT, timeline_fence_status(self->a.fd, out.handle, 3));
	EXPECT_EQ(-EFAULT, timeline_fence_status(self->a.fd, q.syncobj,
						 j.seqno));
}

/*
 * The accel node's attributes exist when its "add" uevent is sent (they
 * were added after registration, so udev rules could not see them).
 */
TEST(sysfs_attributes_exist_at_the_add_uevent)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1,
	};
	char buf[8192], path[256];
	bool seen = false;
	int sk, i;

	SIMULATOR_ONLY("the device it watches being added is a simulated one");
	if (!sim_available())
		SKIP(return, "trn_sim is not loaded");
	if (sim_exists(54))
		sim_del(54);
	sk = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
		    NETLINK_KOBJECT_UEVENT);
	ASSERT_LE(0, sk);
	ASSERT_EQ(0, bind(sk, (struct sockaddr *)&sa, sizeof(sa)));
	struct timeval tv = { .tv_sec = 10 };

	ASSERT_EQ(0, setsockopt(sk, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, sim_new(54, 1, 16, 1));
	for (i = 0; i < 200 && !seen; i++) {
		ssize_t n = recv(sk, buf, sizeof(buf) - 1, 0);
		const char *name;

		if (n <= 0)
			break;
		buf[n] = '\0';
		/* "add@/devices/.../accel/accelN" */
		if (strncmp(buf, "add@", 4) || !strstr(buf, "trn_sim54/accel/"))
			continue;
		name = strrchr(buf, '/');
		snprintf(path, sizeof(path), "/sys%.200s/hbm_total", buf + 4);
		EXPECT_EQ(0, access(path, R_OK)) TH_LOG("%s at %s", path, name);
		seen = true;
	}
	EXPECT_TRUE(seen);
	close(sk);
	sim_del(54);
}

/*
 * The use-after-free the review suspected in job freeing: jobs waiting
 * for another device's fence, the device deleted under them, then the
 * owner killed. Repeated; KASAN on the debug lane watches.
 */
TEST_F_TIMEOUT(tenant, del_device_and_sigkill_with_waiting_jobs, 600)
{
	struct drm_trn_queue_create q7, rel;
	struct waiter w = { .dev = 55, .dmabuf = -1, .jobs = 4, .value = 1 };
	uint32_t sobj;
	uint64_t s = 0;
	int round;

	SIMULATOR_ONLY("the device deleted under the waiting jobs is a simulated one");
	ASSERT_EQ(0, two_rings(&self->a, &q7, &rel));
	for (round = 0; round < 8; round++) {
		pid_t pid;

		ASSERT_EQ(0, waiting_fence(&self->a, q7.queue_id, 8, &sobj,
					   &w.fence_fd));
		ASSERT_EQ(0, new_device(55, 1, TIMEOUT_MS));
		pid = spawn_tenant(waiting_tenant, &w);
		ASSERT_LT(0, pid);
		ASSERT_EQ(0, sim_del(55));
		ASSERT_EQ(0, kill_tenant(pid));
		/* The fence the dead jobs waited for signals now. */
		ASSERT_EQ(0, SUBMIT_CMDS(&self->a, rel.queue_id, &s,
					 cmds_sem(&self->a.cs, false, 8, 1)));
		ASSERT_EQ(0, syncobj_wait_point(self->a.fd, sobj, 0, WAIT_MS));
		close(w.fence_fd);
		syncobj_destroy(self->a.fd, sobj);
	}
	EXPECT_FALSE(sim_exists(55));
}

TEST_HARNESS_MAIN
