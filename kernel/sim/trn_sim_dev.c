// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Binding of a simulated device: registration with the trn core as a
 * hardware backend, and its debugfs directory of knobs.
 */

#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/sizes.h>

#include <uapi/drm/trn_accel.h>

#include "../trn_hw.h"
#include "trn_sim.h"

/*
 * The engines report faults and completions with sdev->tdev: set it before
 * the device becomes visible, so that no job can run without it.
 */
static int trn_sim_hw_init(struct trn_device *tdev)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);

	sdev->tdev = tdev;
	return 0;
}

static const struct trn_hw_ops trn_sim_hw_ops = {
	.owner = THIS_MODULE,
	.hw_init = trn_sim_hw_init,
	.ctx_init = trn_sim_ctx_init,
	.ctx_fini = trn_sim_ctx_fini,
	.mmu_map = trn_sim_mmu_map,
	.mmu_unmap = trn_sim_mmu_unmap,
	.hbm_pfn = trn_sim_hbm_pfn,
	.hbm_populate = trn_sim_hbm_populate,
	.hbm_clear = trn_sim_hbm_clear,
	.hbm_read = trn_sim_hbm_read,
	.ring_init = trn_sim_ring_init,
	.ring_fini = trn_sim_ring_fini,
	.ring_doorbell = trn_sim_ring_doorbell,
	.ring_reset = trn_sim_ring_reset,
	.device_reset = trn_sim_device_reset,
	.uq_init = trn_sim_uq_init,
	.uq_fini = trn_sim_uq_fini,
	.uq_wake = trn_sim_uq_wake,
	.uq_irq_at = trn_sim_uq_irq_at,
	.uq_stop = trn_sim_uq_stop,
};

static void trn_sim_debugfs_init(struct trn_sim_dev *sdev)
{
	sdev->debugfs = debugfs_create_dir(dev_name(&sdev->dev),
					   trn_sim_debugfs_root);
	debugfs_create_u32("cores", 0400, sdev->debugfs, &sdev->num_cores);
	debugfs_create_u32("queues", 0400, sdev->debugfs,
			   &sdev->queues_per_core);
	debugfs_create_u32("hbm_mib", 0400, sdev->debugfs, &sdev->hbm_mib);
	debugfs_create_u32("hbm_stacks", 0400, sdev->debugfs,
			   &sdev->hbm_stacks);
	trn_sim_mmu_debugfs_init(sdev);
	trn_sim_engine_debugfs_init(sdev);
}

/**
 * trn_sim_probe() - bring a simulated device up and register it
 * @dev: the device on the trn_sim bus
 *
 * Return: 0 or a negative errno.
 */
int trn_sim_probe(struct device *dev)
{
	struct trn_sim_dev *sdev = to_trn_sim_dev(dev);
	const struct trn_device_desc desc = {
		.generation = DRM_TRN_GEN_SIM,
		.device_id = sdev->id,
		.num_cores = sdev->num_cores,
		.queues_per_core = sdev->queues_per_core,
		.hbm_size = (u64)sdev->hbm_mib * SZ_1M,
		.hbm_stacks = sdev->hbm_stacks,
		.va_start = TRN_SIM_VA_START,
		.va_size = TRN_SIM_VA_END - TRN_SIM_VA_START,
		.capabilities = DRM_TRN_CAP_SIMULATED |
				DRM_TRN_CAP_HBM_CPU_VISIBLE |
				DRM_TRN_CAP_TIMESTAMP | DRM_TRN_CAP_SEMAPHORES |
				DRM_TRN_CAP_COMPUTE | DRM_TRN_CAP_LOG_ERF |
				DRM_TRN_CAP_SRC_U8,
		.ring_entries = TRN_SIM_RING_ENTRIES,
		.user_queues = TRN_SIM_USER_QUEUES,
	};
	struct trn_device *tdev;
	int ret;

	/* The device reaches host memory by bus address, 64 bits wide. */
	dev->dma_mask = &dev->coherent_dma_mask;
	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_out;
	ret = trn_sim_mem_init(sdev);
	if (ret)
		goto err_out;
	trn_sim_mmu_init(sdev);
	ret = trn_sim_engine_init(sdev);
	if (ret)
		goto err_mmu;

	tdev = trn_device_register(dev, &desc, &trn_sim_hw_ops, sdev);
	if (IS_ERR(tdev)) {
		ret = PTR_ERR(tdev);
		goto err_engine;
	}
	sdev->tdev = tdev;
	trn_sim_debugfs_init(sdev);
	return 0;

err_engine:
	sdev->tdev = NULL;
	trn_sim_engine_fini(sdev);
err_mmu:
	trn_sim_mmu_fini(sdev);
	trn_sim_mem_fini(sdev);
err_out:
	sdev->probe_err = ret;
	return ret;
}

/**
 * trn_sim_remove() - unregister a simulated device from the core
 * @dev: the device on the trn_sim bus
 */
void trn_sim_remove(struct device *dev)
{
	struct trn_sim_dev *sdev = to_trn_sim_dev(dev);

	debugfs_remove_recursive(sdev->debugfs);
	sdev->debugfs = NULL;
	trn_device_unregister(sdev->tdev);
	/* Engines still running or hung, then contexts of open files. */
	trn_sim_engine_fini(sdev);
	trn_sim_mmu_fini(sdev);
	trn_sim_mem_fini(sdev);
	sdev->tdev = NULL;
}
