// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The trn_sim module: its bus, the runtime creation and destruction of
 * simulated devices (/sys/bus/trn_sim/new_device and del_device), and the
 * devices created at load time.
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>

#include <kunit/visibility.h>

#include "trn_sim.h"

static unsigned int num_devices = 1;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices,
		 "Simulated devices created at load time with the default shape (default: 1)");

/* Protects trn_sim_devices and serialises device creation and removal. */
static DEFINE_MUTEX(trn_sim_lock);
static LIST_HEAD(trn_sim_devices);

/*
 * Devices not yet released. A DRM device can hold the last reference to
 * its parent past del_device; module exit waits for those releases, whose
 * code lives here.
 */
static atomic_t trn_sim_live = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(trn_sim_release_wq);

struct dentry *trn_sim_debugfs_root;

static const struct bus_type trn_sim_bus;

static void trn_sim_dev_release(struct device *dev)
{
	kfree(to_trn_sim_dev(dev));
	if (atomic_dec_and_test(&trn_sim_live))
		wake_up(&trn_sim_release_wq);
}

static struct trn_sim_dev *trn_sim_find(u32 id)
{
	struct trn_sim_dev *sdev;

	lockdep_assert_held(&trn_sim_lock);
	list_for_each_entry(sdev, &trn_sim_devices, list)
		if (sdev->id == id)
			return sdev;
	return NULL;
}

static int trn_sim_add(const struct trn_sim_shape *shape)
{
	struct trn_sim_dev *sdev;
	int ret;

	lockdep_assert_held(&trn_sim_lock);
	if (trn_sim_find(shape->id))
		return -EEXIST;

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	sdev->id = shape->id;
	sdev->num_cores = shape->num_cores;
	sdev->hbm_mib = shape->hbm_mib;
	sdev->hbm_stacks = shape->hbm_stacks;
	sdev->queues_per_core = shape->queues_per_core;
	sdev->dev.bus = &trn_sim_bus;
	sdev->dev.release = trn_sim_dev_release;
	device_initialize(&sdev->dev);
	atomic_inc(&trn_sim_live);

	ret = dev_set_name(&sdev->dev, "trn_sim%u", sdev->id);
	if (ret)
		goto err_put;
	ret = device_add(&sdev->dev);
	if (ret)
		goto err_put;
	/* Probing is synchronous: a device that did not bind is an error. */
	if (!sdev->dev.driver) {
		ret = sdev->probe_err ?: -ENODEV;
		goto err_del;
	}

	list_add_tail(&sdev->list, &trn_sim_devices);
	return 0;

err_del:
	device_del(&sdev->dev);
err_put:
	put_device(&sdev->dev);
	return ret;
}

static void trn_sim_del(struct trn_sim_dev *sdev)
{
	lockdep_assert_held(&trn_sim_lock);
	list_del(&sdev->list);
	device_unregister(&sdev->dev);
}

/**
 * trn_sim_parse() - parse a line of blank-separated decimal numbers
 * @buf: what userspace wrote, not necessarily terminated
 * @count: bytes in @buf
 * @vals: where the numbers go
 * @max: room in @vals
 *
 * Return: how many numbers were found, -EINVAL if @buf holds anything else
 * or more than @max numbers, -ENOMEM.
 */
VISIBLE_IF_KUNIT int trn_sim_parse(const char *buf, size_t count, u32 *vals,
				   int max)
{
	char *copy, *cur, *tok;
	int n = 0, ret = 0;

	copy = kmemdup_nul(buf, count, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;

	cur = strim(copy);
	while ((tok = strsep(&cur, " \t")) != NULL) {
		if (!*tok)
			continue;
		if (n == max || kstrtou32(tok, 10, &vals[n])) {
			ret = -EINVAL;
			break;
		}
		n++;
	}
	kfree(copy);
	return ret ? ret : n;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_parse);

static bool trn_sim_in_range(u32 val, u32 min, u32 max)
{
	return val >= min && val <= max;
}

/**
 * trn_sim_parse_shape() - parse a new_device line
 * @buf: "ID [CORES [HBM_MIB [QUEUES [STACKS]]]]", omitted values take the
 *       defaults
 * @count: bytes in @buf
 * @shape: the result, written only on success
 *
 * Return: 0, -EINVAL for anything malformed or out of range, -ENOMEM.
 */
VISIBLE_IF_KUNIT int trn_sim_parse_shape(const char *buf, size_t count,
					 struct trn_sim_shape *shape)
{
	u32 v[5] = { 0, TRN_SIM_DEFAULT_CORES, TRN_SIM_DEFAULT_HBM_MIB,
		     TRN_SIM_DEFAULT_QUEUES, TRN_SIM_DEFAULT_STACKS };
	int n;

	n = trn_sim_parse(buf, count, v, ARRAY_SIZE(v));
	if (n < 0)
		return n;
	if (n == 0 || v[0] > TRN_SIM_MAX_ID ||
	    !trn_sim_in_range(v[1], 1, TRN_SIM_MAX_CORES) ||
	    !trn_sim_in_range(v[2], 1, TRN_SIM_MAX_HBM_MIB) ||
	    !trn_sim_in_range(v[3], 1, TRN_SIM_MAX_QUEUES) ||
	    !trn_sim_in_range(v[4], 1, TRN_SIM_MAX_STACKS))
		return -EINVAL;
	/* Stacks of equal size, each whole pages. */
	if ((v[2] * (SZ_1M / PAGE_SIZE)) % v[4])
		return -EINVAL;

	shape->id = v[0];
	shape->num_cores = v[1];
	shape->hbm_mib = v[2];
	shape->queues_per_core = v[3];
	shape->hbm_stacks = v[4];
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_parse_shape);

/* "ID [CORES [HBM_MIB [QUEUES [STACKS]]]]": a new device; omitted default. */
static ssize_t new_device_store(const struct bus_type *bus, const char *buf,
				size_t count)
{
	struct trn_sim_shape shape;
	int ret;

	ret = trn_sim_parse_shape(buf, count, &shape);
	if (ret)
		return ret;

	mutex_lock(&trn_sim_lock);
	ret = trn_sim_add(&shape);
	mutex_unlock(&trn_sim_lock);
	return ret ? ret : count;
}
static BUS_ATTR_WO(new_device);

/* "ID": remove that device; files open on it see -ENODEV from now on. */
static ssize_t del_device_store(const struct bus_type *bus, const char *buf,
				size_t count)
{
	struct trn_sim_dev *sdev;
	u32 id;
	int n;

	n = trn_sim_parse(buf, count, &id, 1);
	if (n < 0)
		return n;
	if (n == 0)
		return -EINVAL;

	mutex_lock(&trn_sim_lock);
	sdev = trn_sim_find(id);
	if (sdev)
		trn_sim_del(sdev);
	mutex_unlock(&trn_sim_lock);
	return sdev ? count : -ENOENT;
}
static BUS_ATTR_WO(del_device);

static struct attribute *trn_sim_bus_attrs[] = {
	&bus_attr_new_device.attr,
	&bus_attr_del_device.attr,
	NULL
};
ATTRIBUTE_GROUPS(trn_sim_bus);

static const struct bus_type trn_sim_bus = {
	.name		= "trn_sim",
	.bus_groups	= trn_sim_bus_groups,
	.probe		= trn_sim_probe,
	.remove		= trn_sim_remove,
};

static struct device_driver trn_sim_driver = {
	.name		= "trn_sim",
	.bus		= &trn_sim_bus,
	.owner		= THIS_MODULE,
	.probe_type	= PROBE_FORCE_SYNCHRONOUS,
};

static void trn_sim_del_all(void)
{
	struct trn_sim_dev *sdev, *tmp;

	mutex_lock(&trn_sim_lock);
	list_for_each_entry_safe_reverse(sdev, tmp, &trn_sim_devices, list)
		trn_sim_del(sdev);
	mutex_unlock(&trn_sim_lock);
}

static int __init trn_sim_init(void)
{
	unsigned int i;
	int ret;

	if (num_devices > TRN_SIM_MAX_ID + 1)
		return -EINVAL;

	trn_sim_debugfs_root = debugfs_create_dir("trn_sim", NULL);

	ret = bus_register(&trn_sim_bus);
	if (ret)
		goto err_debugfs;
	ret = driver_register(&trn_sim_driver);
	if (ret)
		goto err_bus;

	mutex_lock(&trn_sim_lock);
	for (i = 0; i < num_devices && !ret; i++) {
		struct trn_sim_shape shape = {
			.id = i,
			.num_cores = TRN_SIM_DEFAULT_CORES,
			.hbm_mib = TRN_SIM_DEFAULT_HBM_MIB,
			.queues_per_core = TRN_SIM_DEFAULT_QUEUES,
			.hbm_stacks = TRN_SIM_DEFAULT_STACKS,
		};

		ret = trn_sim_add(&shape);
	}
	mutex_unlock(&trn_sim_lock);
	if (ret)
		goto err_devices;
	return 0;

err_devices:
	trn_sim_del_all();
	driver_unregister(&trn_sim_driver);
err_bus:
	bus_unregister(&trn_sim_bus);
err_debugfs:
	debugfs_remove_recursive(trn_sim_debugfs_root);
	wait_event(trn_sim_release_wq, !atomic_read(&trn_sim_live));
	return ret;
}

static void __exit trn_sim_exit(void)
{
	trn_sim_del_all();
	driver_unregister(&trn_sim_driver);
	bus_unregister(&trn_sim_bus);
	debugfs_remove_recursive(trn_sim_debugfs_root);
	wait_event(trn_sim_release_wq, !atomic_read(&trn_sim_live));
}

module_init(trn_sim_init);
module_exit(trn_sim_exit);

MODULE_DESCRIPTION("Simulated Trainium-class device for the trn driver");
MODULE_AUTHOR("The trn authors");
MODULE_LICENSE("GPL");
