// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The DRM driver of trn: module, file operations, contexts and the ioctl
 * table. Devices come and go through trn_device.c on behalf of backends.
 */

#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>

#include <uapi/drm/trn_accel.h>

#include "trn_compat.h"
#include "trn_drv.h"

static unsigned int max_bos_per_file = 1U << 20;
module_param(max_bos_per_file, uint, 0644);
MODULE_PARM_DESC(max_bos_per_file,
		 "Buffer objects a context may create (default: 1048576)");

static unsigned int max_pinned_mib_per_file;
module_param(max_pinned_mib_per_file, uint, 0644);
MODULE_PARM_DESC(max_pinned_mib_per_file,
		 "Host memory in MiB a context may pin (default 0: half of RAM)");

/* A queue's depth bounds the kernel memory its jobs take. */
#define TRN_QUEUE_DEPTH_MIN	DRM_TRN_SUBMIT_MAX_JOBS
#define TRN_QUEUE_DEPTH_MAX	65536

static unsigned int queue_depth = 1024;
module_param(queue_depth, uint, 0444);
MODULE_PARM_DESC(queue_depth,
		 "Jobs a queue may hold unfinished, 256 to 65536 (default 1024)");

/*
 * trn's own work items: freeing jobs, cancelling a context's jobs. Unbound,
 * and with a rescuer: cancelling is on the way to signalling fences, which
 * memory reclaim may be waiting for.
 */
struct workqueue_struct *trn_wq;

/* Memory of jobs, charged to the submitter's memory cgroup. */
struct kmem_cache *trn_job_cache;

/**
 * trn_max_bos_per_file() - limit on the buffers of one context
 *
 * Return: the number of buffers a context may hold.
 */
u64 trn_max_bos_per_file(void)
{
	return READ_ONCE(max_bos_per_file);
}

/**
 * trn_max_pinned_per_file() - limit on the host memory one context pins
 *
 * Return: bytes.
 */
u64 trn_max_pinned_per_file(void)
{
	u64 mib = READ_ONCE(max_pinned_mib_per_file);

	return mib ? mib * SZ_1M : (u64)totalram_pages() << (PAGE_SHIFT - 1);
}

/**
 * trn_queue_depth() - how many unfinished jobs a queue may hold
 *
 * Return: the depth, fixed when the module was loaded.
 */
u32 trn_queue_depth(void)
{
	return clamp(queue_depth, TRN_QUEUE_DEPTH_MIN, TRN_QUEUE_DEPTH_MAX);
}

static int trn_open(struct drm_device *drm, struct drm_file *file)
{
	struct trn_device *tdev = to_trn_device(drm);
	struct trn_file *tfile;
	int idx, ret;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	tfile = kzalloc(sizeof(*tfile), GFP_KERNEL_ACCOUNT);
	if (!tfile) {
		ret = -ENOMEM;
		goto out_exit;
	}
	tfile->tdev = tdev;
	tfile->usage = trn_usage_create();
	if (!tfile->usage) {
		ret = -ENOMEM;
		goto err_free;
	}
	tfile->ctx = trn_ctx_create(tdev);
	if (IS_ERR(tfile->ctx)) {
		ret = PTR_ERR(tfile->ctx);
		goto err_usage;
	}
	ret = trn_queues_init(tfile);
	if (ret)
		goto err_ctx;
	file->driver_priv = tfile;
	drm_dev_exit(idx);
	return 0;

err_ctx:
	trn_ctx_put(tfile->ctx);
err_usage:
	trn_usage_put(tfile->usage);
err_free:
	kfree(tfile);
out_exit:
	drm_dev_exit(idx);
	return ret;
}

static void trn_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;

	/*
	 * Every handle is closed, and the queues went in trn_release(). The
	 * context lives on while jobs of the file still hold it.
	 */
	trn_queues_fini(tfile);
	trn_ctx_put(tfile->ctx);
	trn_usage_put(tfile->usage);
	kfree(tfile);
}

static void trn_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;
	struct trn_ctx *ctx = tfile->ctx;

	trn_gem_show_fdinfo(p, file);
	drm_printf(p, "trn-context:\t%u\n", ctx->id);
	drm_printf(p, "trn-buffers:\t%lld\n",
		   atomic64_read(&tfile->usage->bos));
	drm_printf(p, "trn-mmu-faults:\t%lld\n",
		   atomic64_read(&ctx->mmu_faults));
	drm_printf(p, "trn-last-fault-va:\t0x%llx\n",
		   (u64)atomic64_read(&ctx->last_fault_va));
	drm_printf(p, "trn-bans:\t%d\n", atomic_read(&ctx->bans));
	trn_job_show_fdinfo(p, tfile);
}

static const struct drm_ioctl_desc trn_ioctls[] = {
	DRM_IOCTL_DEF_DRV(TRN_QUERY, trn_ioctl_query, 0),
	DRM_IOCTL_DEF_DRV(TRN_BO_CREATE, trn_ioctl_bo_create, 0),
	DRM_IOCTL_DEF_DRV(TRN_BO_INFO, trn_ioctl_bo_info, 0),
	DRM_IOCTL_DEF_DRV(TRN_BO_USERPTR, trn_ioctl_bo_userptr, 0),
	DRM_IOCTL_DEF_DRV(TRN_QUEUE_CREATE, trn_ioctl_queue_create, 0),
	DRM_IOCTL_DEF_DRV(TRN_QUEUE_DESTROY, trn_ioctl_queue_destroy, 0),
	DRM_IOCTL_DEF_DRV(TRN_SUBMIT, trn_ioctl_submit, 0),
	DRM_IOCTL_DEF_DRV(TRN_QUEUE_STATUS, trn_ioctl_queue_status, 0),
	DRM_IOCTL_DEF_DRV(TRN_QUEUE_FENCE, trn_ioctl_queue_fence, 0),
	DRM_IOCTL_DEF_DRV(TRN_QUEUE_WAKE, trn_ioctl_queue_wake, 0),
};

/*
 * DRM_IOCTL_GET_UNIQUE and DRM_IOCTL_GET_MAGIC dereference the file's DRM
 * master, which accel files never have: the DRM core oopses on them (6.12
 * to 7.3). They mean nothing for an accelerator; refuse them.
 */
static bool trn_ioctl_needs_master(unsigned int cmd)
{
	return _IOC_TYPE(cmd) == DRM_IOCTL_BASE &&
	       (_IOC_NR(cmd) == _IOC_NR(DRM_IOCTL_GET_UNIQUE) ||
		_IOC_NR(cmd) == _IOC_NR(DRM_IOCTL_GET_MAGIC));
}

static long trn_unlocked_ioctl(struct file *filp, unsigned int cmd,
			       unsigned long arg)
{
	if (trn_ioctl_needs_master(cmd))
		return -EOPNOTSUPP;
	return drm_ioctl(filp, cmd, arg);
}

#ifdef CONFIG_COMPAT
static long trn_compat_ioctl(struct file *filp, unsigned int cmd,
			     unsigned long arg)
{
	if (trn_ioctl_needs_master(cmd))
		return -EOPNOTSUPP;
	return drm_compat_ioctl(filp, cmd, arg);
}
#else
#define trn_compat_ioctl NULL
#endif

/*
 * A file is closed: its queues go and its jobs are cancelled before the
 * DRM core closes its handles, so that the device stops using the file's
 * buffers as soon as it can. Nothing waits for the device: jobs hold what
 * they use (their buffers, mappings and context) until they are freed.
 */
static int trn_release(struct inode *inode, struct file *filp)
{
	struct drm_file *file = filp->private_data;

	trn_queues_close(file->driver_priv);
	return drm_release(inode, filp);
}

/*
 * Spelled out rather than DEFINE_DRM_ACCEL_FOPS(): the macro's contents vary
 * between kernels (fdinfo in particular) and we always want fdinfo.
 */
static const struct file_operations trn_fops = {
	.owner		= THIS_MODULE,
	.open		= accel_open,
	.release	= trn_release,
	.unlocked_ioctl	= trn_unlocked_ioctl,
	.compat_ioctl	= trn_compat_ioctl,
	.poll		= drm_poll,
	.read		= drm_read,
	.llseek		= noop_llseek,
	.mmap		= drm_gem_mmap,
	.show_fdinfo	= drm_show_fdinfo,
	.fop_flags	= FOP_UNSIGNED_OFFSET,
};

const struct drm_driver trn_drm_driver = {
	.driver_features	= DRIVER_COMPUTE_ACCEL | DRIVER_GEM |
				  DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE,
	.open			= trn_open,
	.postclose		= trn_postclose,
	.show_fdinfo		= trn_show_fdinfo,
	.gem_prime_import	= trn_gem_prime_import,
	.gem_prime_import_sg_table = trn_gem_prime_import_sg_table,
	.ioctls			= trn_ioctls,
	.num_ioctls		= ARRAY_SIZE(trn_ioctls),
	.fops			= &trn_fops,
	.name			= TRN_DRIVER_NAME,
	.desc			= TRN_DRIVER_DESC,
	.major			= TRN_DRIVER_MAJOR,
	.minor			= TRN_DRIVER_MINOR,
	.patchlevel		= TRN_DRIVER_PATCHLEVEL,
};

static int __init trn_init(void)
{
	trn_job_cache = KMEM_CACHE(trn_job, SLAB_ACCOUNT);
	if (!trn_job_cache)
		return -ENOMEM;
	trn_wq = alloc_workqueue("trn", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!trn_wq) {
		kmem_cache_destroy(trn_job_cache);
		return -ENOMEM;
	}
	return 0;
}

static void __exit trn_exit(void)
{
	/*
	 * No device is left, so no job: this only waits for work to return,
	 * the job release's too.
	 */
	trn_jobs_flush();
	destroy_workqueue(trn_wq);
	kmem_cache_destroy(trn_job_cache);
}

module_init(trn_init);
module_exit(trn_exit);

MODULE_DESCRIPTION("DRM accel driver for Trainium-class ML accelerators");
MODULE_AUTHOR("The trn authors");
MODULE_LICENSE("GPL");
/* trn_gem_unplug() unmaps imported buffers itself. */
MODULE_IMPORT_NS("DMA_BUF");
