// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Registration of devices by hardware backends (see trn_hw.h).
 */

#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/mm.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include <kunit/visibility.h>

#include <uapi/drm/trn_accel.h>

#include "trn_drv.h"

/* Stacks of one size, each a whole number of pages. */
static bool trn_desc_stacks_even(const struct trn_device_desc *desc)
{
	u32 rem;
	u64 stack = div_u64_rem(desc->hbm_size, desc->hbm_stacks, &rem);

	return !rem && PAGE_ALIGNED(stack);
}

/**
 * trn_desc_validate() - check a backend's description of its device
 * @parent: the backend's device, for messages
 * @desc: the description
 *
 * Return: 0 or -EINVAL.
 */
VISIBLE_IF_KUNIT int trn_desc_validate(struct device *parent,
				       const struct trn_device_desc *desc)
{
	if (!desc->num_cores || !desc->queues_per_core || !desc->hbm_size) {
		dev_err(parent, "device without cores, queues or memory\n");
		return -EINVAL;
	}
	if (!desc->hbm_stacks || desc->hbm_stacks > TRN_MAX_HBM_STACKS ||
	    !trn_desc_stacks_even(desc)) {
		dev_err(parent, "invalid HBM stacks: %u of %llu bytes\n",
			desc->hbm_stacks, desc->hbm_size);
		return -EINVAL;
	}
	if (!PAGE_ALIGNED(desc->va_start) || !PAGE_ALIGNED(desc->va_size) ||
	    !desc->va_size || desc->va_start + desc->va_size < desc->va_start) {
		dev_err(parent, "invalid device VA range\n");
		return -EINVAL;
	}
	if (!is_power_of_2(desc->ring_entries) || desc->ring_entries < 16 ||
	    desc->ring_entries > 65536) {
		dev_err(parent, "invalid ring size %u\n", desc->ring_entries);
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(trn_desc_validate);

/*
 * Whether streaming DMA mappings of @dev need syncs (bounce buffering, a
 * device that does not snoop): map a page and ask. The core syncs a
 * kernel queue's buffers at its jobs' boundaries; a user-mode queue's jobs
 * it never sees, so such a device gets none.
 */
static bool trn_dma_needs_sync(struct device *dev)
{
	struct page *page = alloc_page(GFP_KERNEL);
	bool need = true;
	dma_addr_t addr;

	if (!page)
		return true;
	addr = dma_map_page(dev, page, 0, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (!dma_mapping_error(dev, addr)) {
		need = dma_need_sync(dev, addr);
		dma_unmap_page(dev, addr, PAGE_SIZE, DMA_BIDIRECTIONAL);
	}
	__free_page(page);
	return need;
}

/**
 * trn_device_register() - register an accelerator with the trn core
 * @parent: the backend's bound device; the DRM device is managed by its
 *          devres, so this must be called from the backend's probe
 * @desc: description of the hardware, copied
 * @ops: hardware operations, which must outlive the device
 * @hw_priv: backend data, returned by trn_device_hw_priv()
 *
 * Creates the accel node once the hardware is initialised.
 *
 * Return: the new device or an ERR_PTR() on failure.
 */
struct trn_device *trn_device_register(struct device *parent,
				       const struct trn_device_desc *desc,
				       const struct trn_hw_ops *ops,
				       void *hw_priv)
{
	struct trn_device *tdev;
	int ret;

	if (!ops || !ops->owner || !ops->ctx_init || !ops->ctx_fini ||
	    !ops->mmu_map || !ops->mmu_unmap || !ops->hbm_clear ||
	    !ops->ring_init || !ops->ring_fini || !ops->ring_doorbell ||
	    !ops->ring_reset)
		return ERR_PTR(-EINVAL);
	if ((desc->capabilities & DRM_TRN_CAP_HBM_CPU_VISIBLE) && !ops->hbm_pfn)
		return ERR_PTR(-EINVAL);
	if (desc->user_queues &&
	    (!ops->uq_init || !ops->uq_fini || !ops->uq_wake ||
	     !ops->uq_irq_at || !ops->uq_stop))
		return ERR_PTR(-EINVAL);
	ret = trn_desc_validate(parent, desc);
	if (ret)
		return ERR_PTR(ret);

	tdev = devm_drm_dev_alloc(parent, &trn_drm_driver, struct trn_device,
				  drm);
	if (IS_ERR(tdev))
		return tdev;
	tdev->desc = *desc;
	if (desc->user_queues && trn_dma_needs_sync(parent)) {
		dev_info(parent, "no user-mode queues: DMA mappings need syncs\n");
		tdev->desc.user_queues = 0;
	}
	/* The core says what it offers on top of the hardware. */
	if (tdev->desc.user_queues)
		tdev->desc.capabilities |= DRM_TRN_CAP_USER_QUEUES;
	else
		tdev->desc.capabilities &= ~DRM_TRN_CAP_USER_QUEUES;
	tdev->ops = ops;
	tdev->hw_priv = hw_priv;
	atomic64_set(&tdev->host_pinned, 0);
	xa_init_flags(&tdev->contexts, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	INIT_LIST_HEAD(&tdev->imports);
	INIT_LIST_HEAD(&tdev->dma_bos);
	trn_uqs_init(tdev);
	trn_health_init(tdev);
	trn_coredump_init(tdev);
	tdev->cores = drmm_kcalloc(&tdev->drm, desc->num_cores,
				   sizeof(*tdev->cores), GFP_KERNEL);
	if (!tdev->cores)
		return ERR_PTR(-ENOMEM);
	/* Created with the node, before its uevent announces it. */
	tdev->drm.accel->kdev->groups = trn_attr_groups;
	ret = drmm_mutex_init(&tdev->drm, &tdev->import_lock);
	if (ret)
		return ERR_PTR(ret);
	ret = drmm_mutex_init(&tdev->drm, &tdev->uq_lock);
	if (ret)
		return ERR_PTR(ret);
	ret = trn_hbm_init(tdev);
	if (ret)
		return ERR_PTR(ret);
	ret = trn_rings_init(tdev);
	if (ret)
		return ERR_PTR(ret);

	if (ops->hw_init) {
		ret = ops->hw_init(tdev);
		if (ret)
			return ERR_PTR(ret);
	}
	ret = trn_rings_start(tdev);
	if (ret)
		goto err_hw_fini;

	ret = drm_dev_register(&tdev->drm, 0);
	if (ret)
		goto err_rings_stop;
	ret = trn_sysfs_cores_init(tdev);
	if (ret)
		goto err_unplug;

	return tdev;

err_unplug:
	drm_dev_unplug(&tdev->drm);
err_rings_stop:
	trn_rings_stop(tdev);
	trn_uqs_unplug(tdev);
err_hw_fini:
	if (ops->hw_fini)
		ops->hw_fini(tdev);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(trn_device_register);

/**
 * trn_device_unregister() - remove an accelerator registered by a backend
 * @tdev: the device
 *
 * Unplugs the DRM device: open files stay valid but every further ioctl on
 * them fails with -ENODEV, and CPU mappings of device memory are torn down
 * (touching them raises SIGBUS). Jobs on the hardware and queued ones fail
 * with -ENODEV. Host buffers keep their contents on ordinary pages, and no
 * DMA mapping of the backend's device remains (trn_gem_unplug()). The
 * memory goes when the last file is closed and the backend's device is
 * released.
 */
void trn_device_unregister(struct trn_device *tdev)
{
	/* Children of the node's directory go before it does. */
	trn_sysfs_cores_fini(tdev);
	drm_dev_unplug(&tdev->drm);
	/* No fault handler runs any more: drop every CPU page of the device. */
	unmap_mapping_range(tdev->drm.anon_inode->i_mapping, 0, 0, 1);
	trn_rings_stop(tdev);
	trn_uqs_unplug(tdev);
	trn_coredump_fini(tdev);
	trn_health_fini(tdev);
	if (tdev->ops->hw_fini)
		tdev->ops->hw_fini(tdev);
	/* Nothing of the backend's device may stay mapped past its driver. */
	trn_gem_unplug(tdev);
}
EXPORT_SYMBOL_GPL(trn_device_unregister);

/**
 * trn_device_hw_priv() - the backend data given to trn_device_register()
 * @tdev: the device
 *
 * Return: the backend's private pointer.
 */
void *trn_device_hw_priv(struct trn_device *tdev)
{
	return tdev->hw_priv;
}
EXPORT_SYMBOL_GPL(trn_device_hw_priv);
