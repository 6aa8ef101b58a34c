// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Per-device figures in sysfs, on the accel node's device:
 * /sys/class/accel/accelN/{hbm_total,hbm_used,host_pinned}, in bytes, and
 * hbm_stack_used (bytes of each HBM stack, one number per stack), the
 * job counters jobs_submitted, jobs_completed, jobs_failed (and by status
 * in jobs_failed_by_status/), resets, device_resets, bans and mmu_faults,
 * whether the device is wedged (a device reset failed), its health and
 * health_reason (trn_health.c), the post-mortem dumps made and dropped
 * (trn_coredump.c), and the policy figures job_timeout_ms and
 * queue_depth. They are the node's attribute groups, so they exist when
 * its uevent is sent. Each NeuronCore's share of the job figures is in
 * cores/<N>/, added once the node is registered (the number of cores is
 * the device's). Documentation/ABI/testing/sysfs-driver-trn.
 */

#include <linux/device.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include <drm/drm_file.h>

#include "trn_drv.h"

static struct trn_device *kdev_to_trn(struct device *kdev)
{
	struct drm_minor *minor = dev_get_drvdata(kdev);

	return to_trn_device(minor->dev);
}

static ssize_t hbm_total_show(struct device *kdev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", kdev_to_trn(kdev)->desc.hbm_size);
}
static DEVICE_ATTR_RO(hbm_total);

static ssize_t hbm_used_show(struct device *kdev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", trn_hbm_used(kdev_to_trn(kdev)));
}
static DEVICE_ATTR_RO(hbm_used);

/* One number per HBM stack, in stack order: an array of one type. */
static ssize_t hbm_stack_used_show(struct device *kdev,
				   struct device_attribute *attr, char *buf)
{
	struct trn_device *tdev = kdev_to_trn(kdev);
	u32 n, stacks = tdev->desc.hbm_stacks;
	u64 *used;
	int len = 0;

	used = kcalloc(stacks, sizeof(*used), GFP_KERNEL);
	if (!used)
		return -ENOMEM;
	trn_hbm_stacks_usage(tdev, used, NULL);
	for (n = 0; n < stacks; n++)
		len += sysfs_emit_at(buf, len, "%s%llu", n ? " " : "", used[n]);
	len += sysfs_emit_at(buf, len, "\n");
	kfree(used);
	return len;
}
static DEVICE_ATTR_RO(hbm_stack_used);

static ssize_t host_pinned_show(struct device *kdev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&kdev_to_trn(kdev)->host_pinned));
}
static DEVICE_ATTR_RO(host_pinned);

/* User-mode queues' work is counted when it is looked at. */
#define TRN_STAT_ATTR(_name, _field)					\
static ssize_t _name##_show(struct device *kdev,			\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct trn_device *tdev = kdev_to_trn(kdev);			\
									\
	trn_uqs_harvest(tdev);						\
	return sysfs_emit(buf, "%lld\n",					\
			  atomic64_read(&tdev->stats._field));		\
}									\
static DEVICE_ATTR_RO(_name)

TRN_STAT_ATTR(jobs_submitted, submitted);
TRN_STAT_ATTR(jobs_completed, completed);
TRN_STAT_ATTR(jobs_failed, failed);
TRN_STAT_ATTR(resets, resets);
TRN_STAT_ATTR(device_resets, device_resets);
TRN_STAT_ATTR(bans, bans);
TRN_STAT_ATTR(mmu_faults, mmu_faults);
TRN_STAT_ATTR(coredumps, coredumps);
TRN_STAT_ATTR(coredumps_dropped, coredumps_dropped);

static ssize_t health_show(struct device *kdev,
			   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  trn_health_name(trn_health(kdev_to_trn(kdev), NULL,
						     0)));
}
static DEVICE_ATTR_RO(health);

static ssize_t health_reason_show(struct device *kdev,
				  struct device_attribute *attr, char *buf)
{
	char reason[96];

	trn_health(kdev_to_trn(kdev), reason, sizeof(reason));
	return sysfs_emit(buf, "%s\n", reason);
}
static DEVICE_ATTR_RO(health_reason);

/* jobs_failed_by_status/<status>: failed jobs by their status. */
#define TRN_FAILED_ATTR(_name, _status)					\
static ssize_t _name##_show(struct device *kdev,			\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct trn_device *tdev = kdev_to_trn(kdev);			\
									\
	trn_uqs_harvest(tdev);						\
	return sysfs_emit(buf, "%lld\n",					\
			  atomic64_read(&tdev->stats.failed_by[_status])); \
}									\
static struct device_attribute dev_attr_failed_##_name =		\
	__ATTR(_name, 0444, _name##_show, NULL)

TRN_FAILED_ATTR(bad_opcode, DRM_TRN_STATUS_BAD_OPCODE);
TRN_FAILED_ATTR(bad_size, DRM_TRN_STATUS_BAD_SIZE);
TRN_FAILED_ATTR(bad_align, DRM_TRN_STATUS_BAD_ALIGN);
TRN_FAILED_ATTR(bad_arg, DRM_TRN_STATUS_BAD_ARG);
TRN_FAILED_ATTR(call_depth, DRM_TRN_STATUS_CALL_DEPTH);
TRN_FAILED_ATTR(mmu_fault, DRM_TRN_STATUS_MMU_FAULT);
TRN_FAILED_ATTR(timeout, DRM_TRN_STATUS_TIMEOUT);
TRN_FAILED_ATTR(aborted, DRM_TRN_STATUS_ABORTED);
TRN_FAILED_ATTR(unsupported, DRM_TRN_STATUS_UNSUPPORTED);
TRN_FAILED_ATTR(device_error, DRM_TRN_STATUS_DEVICE_ERROR);

static struct attribute *trn_failed_attrs[] = {
	&dev_attr_failed_bad_opcode.attr,
	&dev_attr_failed_bad_size.attr,
	&dev_attr_failed_bad_align.attr,
	&dev_attr_failed_bad_arg.attr,
	&dev_attr_failed_call_depth.attr,
	&dev_attr_failed_mmu_fault.attr,
	&dev_attr_failed_timeout.attr,
	&dev_attr_failed_aborted.attr,
	&dev_attr_failed_unsupported.attr,
	&dev_attr_failed_device_error.attr,
	NULL
};

static const struct attribute_group trn_failed_group = {
	.name = "jobs_failed_by_status",
	.attrs = trn_failed_attrs,
};

static ssize_t wedged_show(struct device *kdev,
			   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(kdev_to_trn(kdev)->wedged));
}
static DEVICE_ATTR_RO(wedged);

static ssize_t job_timeout_ms_show(struct device *kdev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", kdev_to_trn(kdev)->job_timeout_ms);
}
static DEVICE_ATTR_RO(job_timeout_ms);

static ssize_t queue_depth_show(struct device *kdev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", trn_queue_depth());
}
static DEVICE_ATTR_RO(queue_depth);

static struct attribute *trn_attrs[] = {
	&dev_attr_hbm_total.attr,
	&dev_attr_hbm_used.attr,
	&dev_attr_hbm_stack_used.attr,
	&dev_attr_host_pinned.attr,
	&dev_attr_jobs_submitted.attr,
	&dev_attr_jobs_completed.attr,
	&dev_attr_jobs_failed.attr,
	&dev_attr_resets.attr,
	&dev_attr_device_resets.attr,
	&dev_attr_wedged.attr,
	&dev_attr_bans.attr,
	&dev_attr_mmu_faults.attr,
	&dev_attr_coredumps.attr,
	&dev_attr_coredumps_dropped.attr,
	&dev_attr_health.attr,
	&dev_attr_health_reason.attr,
	&dev_attr_job_timeout_ms.attr,
	&dev_attr_queue_depth.attr,
	NULL
};

static const struct attribute_group trn_attr_group = {
	.attrs = trn_attrs,
};

/* The attribute groups of a trn device's accel node. */
const struct attribute_group *trn_attr_groups[] = {
	&trn_attr_group,
	&trn_failed_group,
	NULL
};

/**
 * struct trn_core_kobj - the directory cores/<N>/ of one NeuronCore
 * @kobj: its kobject; the directory lives while it is in sysfs
 * @tdev: the device
 * @core: the core's number
 */
struct trn_core_kobj {
	struct kobject kobj;
	struct trn_device *tdev;
	u32 core;
};

static void trn_core_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct trn_core_kobj, kobj));
}

/*
 * Shown only while the directory is in sysfs, which is removed before the
 * device can go (trn_sysfs_cores_fini() drains the readers).
 */
#define TRN_CORE_ATTR(_name, _field)					\
static ssize_t core_##_name##_show(struct kobject *kobj,		\
				   struct kobj_attribute *attr, char *buf) \
{									\
	struct trn_core_kobj *ck = container_of(kobj, struct trn_core_kobj, \
						kobj);			\
									\
	trn_uqs_harvest(ck->tdev);					\
	return sysfs_emit(buf, "%lld\n",				\
			  atomic64_read(&ck->tdev->cores[ck->core]._field)); \
}									\
static struct kobj_attribute core_attr_##_name =			\
	__ATTR(_name, 0444, core_##_name##_show, NULL)

TRN_CORE_ATTR(jobs_completed, completed);
TRN_CORE_ATTR(jobs_failed, failed);
TRN_CORE_ATTR(jobs_timed_out, timed_out);
TRN_CORE_ATTR(busy_ns, busy_ns);

static struct attribute *trn_core_attrs[] = {
	&core_attr_jobs_completed.attr,
	&core_attr_jobs_failed.attr,
	&core_attr_jobs_timed_out.attr,
	&core_attr_busy_ns.attr,
	NULL
};
ATTRIBUTE_GROUPS(trn_core);

static const struct kobj_type trn_core_ktype = {
	.release = trn_core_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = trn_core_groups,
};

/**
 * trn_sysfs_cores_init() - add cores/<N>/ under the accel node
 * @tdev: the device, its node just registered
 *
 * Return: 0 or a negative errno; on failure nothing is added.
 */
int trn_sysfs_cores_init(struct trn_device *tdev)
{
	struct kobject *parent = &tdev->drm.accel->kdev->kobj;
	u32 n = tdev->desc.num_cores, i;
	int ret;

	tdev->core_kobjs = kcalloc(n, sizeof(*tdev->core_kobjs), GFP_KERNEL);
	if (!tdev->core_kobjs)
		return -ENOMEM;
	tdev->cores_kobj = kobject_create_and_add("cores", parent);
	if (!tdev->cores_kobj) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < n; i++) {
		struct trn_core_kobj *ck = kzalloc(sizeof(*ck), GFP_KERNEL);

		if (!ck) {
			ret = -ENOMEM;
			goto err_del;
		}
		ck->tdev = tdev;
		ck->core = i;
		ret = kobject_init_and_add(&ck->kobj, &trn_core_ktype,
					   tdev->cores_kobj, "%u", i);
		if (ret) {
			kobject_put(&ck->kobj);
			goto err_del;
		}
		tdev->core_kobjs[i] = ck;
	}
	return 0;

err_del:
	trn_sysfs_cores_fini(tdev);
	return ret;
err_free:
	kfree(tdev->core_kobjs);
	tdev->core_kobjs = NULL;
	return ret;
}

/**
 * trn_sysfs_cores_fini() - remove cores/<N>/, before the node goes
 * @tdev: the device
 *
 * Waits for readers of the files; afterwards none touches @tdev.
 */
void trn_sysfs_cores_fini(struct trn_device *tdev)
{
	u32 i;

	if (!tdev->core_kobjs)
		return;
	for (i = 0; i < tdev->desc.num_cores; i++)
		if (tdev->core_kobjs[i])
			kobject_put(&tdev->core_kobjs[i]->kobj);
	kobject_put(tdev->cores_kobj);
	kfree(tdev->core_kobjs);
	tdev->core_kobjs = NULL;
	tdev->cores_kobj = NULL;
}
