// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Post-mortem dumps: every hang (a job that ran past its timeout and was
 * abandoned by a ring or device reset, or that wedged the device) leaves a
 * text report in devcoredump, /sys/class/devcoredump/devcdN/data, whose
 * failing_device is the backend's device. The report holds the ring's
 * state, the hung job's descriptor and the start of its command stream,
 * its context, process and queue, the jobs still on the ring and the ring's
 * latest retired jobs (execution.md, "Post-mortem dumps", gives the
 * format).
 *
 * The capture runs in the timeout handler, in a fence-signalling section
 * and partly under the ring's lock: it takes a fixed-size snapshot with
 * GFP_NOWAIT (reclaim could wait on the very fence being handled) and
 * only references the buffer holding the commands. A work item, which may
 * sleep, reads the commands, writes the text and hands it to
 * dev_coredumpm(). One snapshot waits per device at a time, and
 * devcoredump keeps one dump per device until it is read and dismissed
 * (or five minutes pass): hangs meanwhile are counted, not dumped, so a
 * tenant that hangs in a loop costs the kernel one report.
 */

#include <linux/devcoredump.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>

#include <uapi/drm/trn_accel.h>

#include "trn_drv.h"

/* Jobs still on the ring that a dump lists, oldest first. */
#define TRN_DUMP_PENDING	16
/* Bytes of the hung job's command stream a dump shows, from its start. */
#define TRN_DUMP_CMD_BYTES	512
/* Room for the text: the fields above fit many times over. */
#define TRN_DUMP_TEXT_SIZE	SZ_32K

/* Version of the text format, the report's first line. */
#define TRN_DUMP_FORMAT		1

/* A job on the ring, as the dump lists it. */
struct trn_dump_job {
	u64 ring_seqno;
	u64 seqno;
	u32 ctx;
	u32 queue;
	u32 status;
	u32 flags;
};

/**
 * struct trn_coredump - what the timeout handler saw
 * @tdev: the device, referenced (drm_dev_get())
 * @time_ns: wall clock of the capture
 * @outcome: what the handler did: "ring reset", "device reset", "device
 *           wedged"
 * @ring: ring index; @core its NeuronCore; @entries its size
 * @core: see @ring
 * @entries: see @ring
 * @last_seqno: the ring's latest job
 * @completed_seqno: the device's completion record of the ring
 * @history_next: jobs the ring retired so far
 * @bad: the hung job
 * @pid: process that opened the hung job's file
 * @comm: its command name
 * @cmd_va: device address of the hung job's commands
 * @cmd_size: their size
 * @bo_count: buffers the job listed
 * @desc: the hung job's descriptor, as the device left it
 * @cmd_obj: the buffer holding the commands, referenced, or NULL if the
 *           job listed none that holds them
 * @cmd_offset: where the commands start in @cmd_obj
 * @cmd_len: bytes of them to show
 * @npending: entries of @pending
 * @pending_total: jobs on the ring, also those @pending leaves out
 * @pending: the jobs on the ring, oldest first
 * @nhistory: entries of @history
 * @history: the ring's latest retired jobs, oldest first
 * @stats: the device's job counters
 */
struct trn_coredump {
	struct trn_device *tdev;
	u64 time_ns;
	const char *outcome;
	u32 ring;
	u32 core;
	u32 entries;
	u64 last_seqno;
	u64 completed_seqno;
	u64 history_next;
	struct trn_dump_job bad;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	u64 cmd_va;
	u32 cmd_size;
	u32 bo_count;
	struct trn_hw_desc desc;
	struct drm_gem_object *cmd_obj;
	u64 cmd_offset;
	u32 cmd_len;
	u32 npending;
	u32 pending_total;
	struct trn_dump_job pending[TRN_DUMP_PENDING];
	u32 nhistory;
	struct trn_ring_record history[TRN_RING_HISTORY];
	struct {
		u64 submitted;
		u64 completed;
		u64 failed;
		u64 resets;
		u64 device_resets;
	} stats;
};

static const char *const trn_status_names[TRN_STATUS_COUNT] = {
	[DRM_TRN_STATUS_OK] = "ok",
	[DRM_TRN_STATUS_BAD_OPCODE] = "bad_opcode",
	[DRM_TRN_STATUS_BAD_SIZE] = "bad_size",
	[DRM_TRN_STATUS_BAD_ALIGN] = "bad_align",
	[DRM_TRN_STATUS_BAD_ARG] = "bad_arg",
	[DRM_TRN_STATUS_CALL_DEPTH] = "call_depth",
	[DRM_TRN_STATUS_MMU_FAULT] = "mmu_fault",
	[DRM_TRN_STATUS_TIMEOUT] = "timeout",
	[DRM_TRN_STATUS_ABORTED] = "aborted",
	[DRM_TRN_STATUS_UNSUPPORTED] = "unsupported",
	[DRM_TRN_STATUS_DEVICE_ERROR] = "device_error",
};

/**
 * trn_status_name() - the name of a job status
 * @status: an &enum drm_trn_job_status, or what a descriptor holds
 *
 * Return: the name sysfs jobs_failed_by_status/ uses, "pending" for a
 * descriptor the device has not written back, "unknown" for the rest.
 */
const char *trn_status_name(u32 status)
{
	if (status < TRN_STATUS_COUNT && trn_status_names[status])
		return trn_status_names[status];
	return status == TRN_DESC_STATUS_PENDING ? "pending" : "unknown";
}

static void trn_dump_job_fill(struct trn_dump_job *d, struct trn_ring *ring,
			      struct trn_job *job)
{
	struct trn_hw_desc *desc = &ring->desc[job->ring_seqno &
					       (ring->entries - 1)];

	d->ring_seqno = job->ring_seqno;
	d->seqno = job->seqno;
	d->ctx = job->queue->ctx->id;
	d->queue = job->queue->id;
	d->status = le32_to_cpu(READ_ONCE(desc->status));
	d->flags = le32_to_cpu(READ_ONCE(desc->flags));
}

/* The buffer of @job holding its commands: a reference, and where. */
static void trn_dump_find_cmds(struct trn_coredump *dump,
			       struct trn_job *job)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++) {
		struct trn_mapping *map = job->maps[i];
		u64 start = map->node.start, size = map->bo->base.size;

		if (job->cmd_va < start || job->cmd_va - start >= size)
			continue;
		dump->cmd_offset = job->cmd_va - start;
		dump->cmd_len = min_t(u64, min_t(u64, job->cmd_size,
						 TRN_DUMP_CMD_BYTES),
				      size - dump->cmd_offset);
		drm_gem_object_get(&map->bo->base);
		dump->cmd_obj = &map->bo->base;
		return;
	}
}

/**
 * trn_coredump_capture() - snapshot a ring whose oldest job timed out
 * @ring: the ring, before the timeout handler resets anything
 * @bad: the job that timed out
 *
 * Called from the timeout handler, in its fence-signalling section, with
 * no lock held; takes the ring's lock. Allocates only without reclaim.
 *
 * Return: the snapshot, for trn_coredump_submit() or
 * trn_coredump_discard(), or NULL if none is taken (one is still being
 * written, the kernel has no devcoredump, or no memory).
 */
struct trn_coredump *trn_coredump_capture(struct trn_ring *ring,
					  struct trn_job *bad)
{
	struct trn_device *tdev = ring->tdev;
	struct trn_coredump *dump;
	struct trn_job *job;
	unsigned long flags;
	u64 i, first;

	if (!IS_ENABLED(CONFIG_DEV_COREDUMP))
		return NULL;
	if (READ_ONCE(tdev->coredump.pending)) {
		atomic64_inc(&tdev->stats.coredumps_dropped);
		return NULL;
	}
	dump = kzalloc(sizeof(*dump), GFP_NOWAIT | __GFP_NOWARN);
	if (!dump) {
		atomic64_inc(&tdev->stats.coredumps_dropped);
		return NULL;
	}
	dump->tdev = tdev;
	dump->time_ns = ktime_get_real_ns();
	dump->ring = ring->index;
	dump->core = ring->core;
	dump->entries = ring->entries;
	dump->pid = bad->queue->ctx->pid;
	memcpy(dump->comm, bad->queue->ctx->comm, sizeof(dump->comm));
	dump->cmd_va = bad->cmd_va;
	dump->cmd_size = bad->cmd_size;
	dump->bo_count = bad->bo_count;
	trn_dump_find_cmds(dump, bad);

	spin_lock_irqsave(&ring->lock, flags);
	dump->last_seqno = ring->last_seqno;
	if (ring->status)
		dump->completed_seqno =
			le64_to_cpu(READ_ONCE(ring->status->completed_seqno));
	trn_dump_job_fill(&dump->bad, ring, bad);
	memcpy(&dump->desc, &ring->desc[bad->ring_seqno & (ring->entries - 1)],
	       sizeof(dump->desc));
	list_for_each_entry(job, &ring->pending, link) {
		if (dump->npending < TRN_DUMP_PENDING)
			trn_dump_job_fill(&dump->pending[dump->npending++],
					  ring, job);
		dump->pending_total++;
	}
	dump->history_next = ring->history_next;
	first = ring->history_next > TRN_RING_HISTORY ?
		ring->history_next - TRN_RING_HISTORY : 0;
	for (i = first; i < ring->history_next; i++)
		dump->history[dump->nhistory++] =
			ring->history[i % TRN_RING_HISTORY];
	spin_unlock_irqrestore(&ring->lock, flags);

	dump->stats.submitted = atomic64_read(&tdev->stats.submitted);
	dump->stats.completed = atomic64_read(&tdev->stats.completed);
	dump->stats.failed = atomic64_read(&tdev->stats.failed);
	dump->stats.resets = atomic64_read(&tdev->stats.resets);
	dump->stats.device_resets = atomic64_read(&tdev->stats.device_resets);
	drm_dev_get(&tdev->drm);
	return dump;
}

/*
 * Free a snapshot from the timeout handler. Its references are not the
 * last ones there: the hung job holds its buffers, and the device is
 * registered.
 */
static void trn_coredump_release(struct trn_coredump *dump)
{
	if (dump->cmd_obj)
		drm_gem_object_put(dump->cmd_obj);
	drm_dev_put(&dump->tdev->drm);
	kfree(dump);
}

/**
 * trn_coredump_discard() - drop a snapshot: nobody hung after all
 * @dump: the snapshot, or NULL
 *
 * Called where trn_coredump_capture() was, with the hung job still held.
 */
void trn_coredump_discard(struct trn_coredump *dump)
{
	if (dump)
		trn_coredump_release(dump);
}

/**
 * trn_coredump_submit() - have the report of a snapshot written
 * @dump: the snapshot, or NULL
 * @outcome: what the timeout handler did, a string constant
 *
 * Called where trn_coredump_capture() was, with the hung job still held.
 * The work item writes the report and puts the snapshot's references,
 * which by then may be the last ones of the buffer and the device.
 */
void trn_coredump_submit(struct trn_coredump *dump, const char *outcome)
{
	struct trn_device *tdev;

	if (!dump)
		return;
	tdev = dump->tdev;
	dump->outcome = outcome;
	if (cmpxchg(&tdev->coredump.pending, NULL, dump)) {
		/* Another timeout's snapshot is still being written. */
		atomic64_inc(&tdev->stats.coredumps_dropped);
		trn_coredump_release(dump);
		return;
	}
	queue_work(system_unbound_wq, &tdev->coredump.work);
}

/* Copy the commands the snapshot points at into @buf; false if unreadable. */
static bool trn_dump_read_cmds(struct trn_coredump *dump, u8 *buf)
{
	struct trn_device *tdev = dump->tdev;
	struct trn_bo *bo = to_trn_bo(dump->cmd_obj);
	u64 off = dump->cmd_offset;
	u32 done = 0, n;
	bool ok = false;
	int idx;

	if (bo->placement == DRM_TRN_PLACEMENT_HBM) {
		if (!tdev->ops->hbm_read || !drm_dev_enter(&tdev->drm, &idx))
			return false;
		tdev->ops->hbm_read(tdev, bo->hbm.start + off, buf,
				    dump->cmd_len);
		drm_dev_exit(idx);
		return true;
	}
	/* Host and userptr buffers; their pages are replaced under the lock. */
	mutex_lock(&bo->lock);
	if (bo->pages) {
		while (done < dump->cmd_len) {
			void *va = kmap_local_page(bo->pages[off >> PAGE_SHIFT]);

			n = min_t(u32, dump->cmd_len - done,
				  PAGE_SIZE - offset_in_page(off));
			memcpy(buf + done, va + offset_in_page(off), n);
			kunmap_local(va);
			done += n;
			off += n;
		}
		ok = true;
	}
	mutex_unlock(&bo->lock);
	return ok;
}

static void trn_dump_print_job(struct seq_buf *s, const char *prefix,
			       const struct trn_dump_job *j)
{
	seq_buf_printf(s, "%sring_seqno=%llu context=%u queue=%u seqno=%llu status=%s flags=0x%x\n",
		       prefix, j->ring_seqno, j->ctx, j->queue, j->seqno,
		       trn_status_name(j->status), j->flags);
}

static void trn_dump_print_words(struct seq_buf *s, const void *data,
				 size_t len)
{
	const u8 *p = data;
	size_t i;

	for (i = 0; i < len; i += 8) {
		u64 w = 0;

		memcpy(&w, p + i, min_t(size_t, 8, len - i));
		if (!(i % 32))
			seq_buf_printf(s, "  %04zx:", i);
		seq_buf_printf(s, " %016llx", le64_to_cpu((__force __le64)w));
		if (i % 32 == 24 || i + 8 >= len)
			seq_buf_putc(s, '\n');
	}
}

static void trn_dump_write(struct trn_coredump *dump, struct seq_buf *s)
{
	struct trn_device *tdev = dump->tdev;
	struct drm_minor *minor = tdev->drm.accel;
	u8 cmds[TRN_DUMP_CMD_BYTES];
	char reason[96];
	u32 i;

	seq_buf_printf(s, "trn devcoredump %d\n", TRN_DUMP_FORMAT);
	seq_buf_printf(s, "driver: %s %d.%d.%d\n", TRN_DRIVER_NAME,
		       TRN_DRIVER_MAJOR, TRN_DRIVER_MINOR,
		       TRN_DRIVER_PATCHLEVEL);
	seq_buf_printf(s, "device: accel%d\n", minor ? minor->index : -1);
	seq_buf_printf(s, "device_id: %u\n", tdev->desc.device_id);
	seq_buf_printf(s, "time_ns: %llu\n", dump->time_ns);
	seq_buf_printf(s, "reason: job timeout\n");
	seq_buf_printf(s, "outcome: %s\n", dump->outcome);
	seq_buf_printf(s, "health: %s\n",
		       trn_health_name(trn_health(tdev, reason,
						  sizeof(reason))));
	seq_buf_printf(s, "health_reason: %s\n", reason);
	seq_buf_printf(s, "ring: %u\n", dump->ring);
	seq_buf_printf(s, "ring.core: %u\n", dump->core);
	seq_buf_printf(s, "ring.entries: %u\n", dump->entries);
	seq_buf_printf(s, "ring.last_seqno: %llu\n", dump->last_seqno);
	seq_buf_printf(s, "ring.completed_seqno: %llu\n",
		       dump->completed_seqno);
	seq_buf_printf(s, "ring.retired: %llu\n", dump->history_next);
	seq_buf_printf(s, "job.context: %u\n", dump->bad.ctx);
	seq_buf_printf(s, "job.pid: %d\n", dump->pid);
	seq_buf_printf(s, "job.comm: %s\n", dump->comm);
	seq_buf_printf(s, "job.queue: %u\n", dump->bad.queue);
	seq_buf_printf(s, "job.seqno: %llu\n", dump->bad.seqno);
	seq_buf_printf(s, "job.ring_seqno: %llu\n", dump->bad.ring_seqno);
	seq_buf_printf(s, "job.cmd_va: 0x%llx\n", dump->cmd_va);
	seq_buf_printf(s, "job.cmd_size: %u\n", dump->cmd_size);
	seq_buf_printf(s, "job.bos: %u\n", dump->bo_count);
	seq_buf_printf(s, "descriptor:\n");
	trn_dump_print_words(s, &dump->desc, sizeof(dump->desc));
	if (!dump->cmd_obj) {
		seq_buf_printf(s, "commands: none (not in the job's buffers)\n");
	} else if (!trn_dump_read_cmds(dump, cmds)) {
		seq_buf_printf(s, "commands: none (buffer not readable)\n");
	} else {
		seq_buf_printf(s, "commands: %u of %u bytes\n", dump->cmd_len,
			       dump->cmd_size);
		trn_dump_print_words(s, cmds, dump->cmd_len);
	}
	seq_buf_printf(s, "pending: %u\n", dump->pending_total);
	for (i = 0; i < dump->npending; i++)
		trn_dump_print_job(s, "  ", &dump->pending[i]);
	seq_buf_printf(s, "history: %u\n", dump->nhistory);
	for (i = 0; i < dump->nhistory; i++) {
		const struct trn_ring_record *r = &dump->history[i];

		seq_buf_printf(s, "  ring_seqno=%llu context=%u queue=%u seqno=%llu",
			       r->ring_seqno, r->ctx, r->queue, r->seqno);
		seq_buf_printf(s, " status=%s run_ns=%llu\n",
			       trn_status_name(r->status), r->run_ns);
	}
	seq_buf_printf(s, "stats: submitted=%llu completed=%llu failed=%llu",
		       dump->stats.submitted, dump->stats.completed,
		       dump->stats.failed);
	seq_buf_printf(s, " resets=%llu device_resets=%llu\n",
		       dump->stats.resets, dump->stats.device_resets);
	seq_buf_printf(s, "end\n");
}

/*
 * A written report, as devcoredump holds it. It references the device so
 * that trn_dump_free() may look at it whenever devcoredump lets go (at the
 * latest in trn_coredump_fini()).
 */
struct trn_dump_text {
	struct trn_device *tdev;
	char text[];
};

static ssize_t trn_dump_read(char *buffer, loff_t offset, size_t count,
			     void *data, size_t datalen)
{
	struct trn_dump_text *t = data;

	return memory_read_from_buffer(buffer, count, &offset, t->text,
				       datalen);
}

static void trn_dump_free(void *data)
{
	struct trn_dump_text *t = data;
	struct trn_device *tdev = t->tdev;

	/*
	 * devcoredump frees a report it refuses (it holds an older one of
	 * the device, dumps are disabled, no memory) before dev_coredumpm()
	 * returns, in the task calling it; one it kept, later and from
	 * elsewhere (its work, the reader dismissing it, the device going).
	 */
	if (READ_ONCE(tdev->coredump.writer) == current)
		tdev->coredump.refused = true;
	vfree(t);
	drm_dev_put(&tdev->drm);
}

static void trn_coredump_work(struct work_struct *work)
{
	struct trn_device *tdev = container_of(work, struct trn_device,
					       coredump.work);
	struct trn_coredump *dump = xchg(&tdev->coredump.pending, NULL);
	struct trn_dump_text *t;
	struct seq_buf s;
	size_t room = TRN_DUMP_TEXT_SIZE - sizeof(*t);

	if (!dump)
		return;
	t = vmalloc(TRN_DUMP_TEXT_SIZE);
	if (t) {
		t->tdev = tdev;
		drm_dev_get(&tdev->drm);
		seq_buf_init(&s, t->text, room);
		trn_dump_write(dump, &s);
		/*
		 * devcoredump owns the report from here; a module reference
		 * (owner) is not needed: trn_coredump_fini() takes every
		 * report of the device back before the device goes.
		 */
		tdev->coredump.refused = false;
		WRITE_ONCE(tdev->coredump.writer, current);
		dev_coredumpm(tdev->drm.dev, NULL, t, seq_buf_used(&s),
			      GFP_KERNEL, trn_dump_read, trn_dump_free);
		WRITE_ONCE(tdev->coredump.writer, NULL);
		if (tdev->coredump.refused)
			atomic64_inc(&tdev->stats.coredumps_dropped);
		else
			atomic64_inc(&tdev->stats.coredumps);
	} else {
		atomic64_inc(&tdev->stats.coredumps_dropped);
	}
	/* The last references may go here: the device's with them. */
	if (dump->cmd_obj)
		drm_gem_object_put(dump->cmd_obj);
	kfree(dump);
	drm_dev_put(&tdev->drm);
}

/**
 * trn_coredump_init() - set up a device's post-mortem dumps
 * @tdev: the device, being registered
 */
void trn_coredump_init(struct trn_device *tdev)
{
	INIT_WORK(&tdev->coredump.work, trn_coredump_work);
}

/**
 * trn_coredump_fini() - a device goes away: finish and drop its dumps
 * @tdev: the device, unplugged, its rings stopped (no more timeouts)
 *
 * The dump waiting to be written is written (without the commands of
 * device memory, which is gone), then every dump of the device is dropped
 * from devcoredump, which would otherwise hold the backend's device, and
 * call its release code, after the backend's module is gone.
 */
void trn_coredump_fini(struct trn_device *tdev)
{
	flush_work(&tdev->coredump.work);
	dev_coredump_put(tdev->drm.dev);
}
