// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn_pci: binding real Trainium2 / Trainium3 parts, opt-in.
 *
 * AWS's own driver, neuron.ko, binds the same devices, and hosts load it at
 * boot. So trn_pci has no device table: installing trn never makes udev
 * load it, and loading it binds nothing unless asked. A part is bound
 * through driver_override or new_id in sysfs, or with claim=1, which binds
 * every supported part that no driver has. A part neuron.ko (or any other
 * driver) holds is never taken: the driver core only offers unbound
 * devices, and claim=1 never unbinds. Documentation/hardware.md says how
 * an operator opts a part in, and back.
 *
 * Two kinds of part: AWS's QEMU mode of it (PCI revision 255), reset by
 * one register write, its HBM stacks back to back in BAR4; and a real part
 * (any other revision), reset through its firmware's mailbox, each stack
 * 64 GiB apart in BAR4. No real part has run this code yet: the model in
 * tests/pci-lane/ plays one from the public facts (hardware.md).
 */

#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/iopoll.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include <uapi/drm/trn_accel.h>

#include "../trn_hw.h"
#include "trn_pci.h"

static bool claim;
module_param(claim, bool, 0444);
MODULE_PARM_DESC(claim,
		 "Bind every Trainium2/3 part that has no driver when loaded (default: no, bind only through driver_override or new_id)");

static const struct trn_pci_part {
	u16 device;
	u32 generation;
	const char *name;
	u64 stack_size;		/* a real part's, carve-out included */
} trn_pci_parts[] = {
	{ TRN_PCI_DEVICE_TRN2, DRM_TRN_GEN_TRN2, "Trn2", TRN_PCI_TRN2_STACK },
	{ TRN_PCI_DEVICE_TRN3_0, DRM_TRN_GEN_TRN3, "Trn3", TRN_PCI_TRN3_STACK },
	{ TRN_PCI_DEVICE_TRN3_1, DRM_TRN_GEN_TRN3, "Trn3", TRN_PCI_TRN3_STACK },
};

/* Device addresses of the HBM stacks. */
static const u64 trn_pci_stacks[TRN_PCI_STACKS] = {
	0x0, 0x4000000000ULL, 0x800000000000ULL, 0x804000000000ULL,
};

/**
 * trn_pci_stack_addr() - where the device sees an HBM stack
 * @stack: stack number, below %TRN_PCI_STACKS
 *
 * Return: the device address of the stack's first byte.
 */
u64 trn_pci_stack_addr(unsigned int stack)
{
	return trn_pci_stacks[stack];
}

static const struct trn_pci_part *trn_pci_part_of(const struct pci_dev *pdev)
{
	unsigned int i;

	if (pdev->vendor != TRN_PCI_VENDOR_AMAZON)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(trn_pci_parts); i++)
		if (pdev->device == trn_pci_parts[i].device)
			return &trn_pci_parts[i];
	return NULL;
}

/**
 * trn_pci_lost() - the part reads all ones: it stopped answering
 * @tpd: the part, registered with the core
 *
 * A surprise removal, or a link that went down. From now on nothing
 * touches its registers (@tpd->gone), the rings end the jobs they run, and
 * the device's health is "failed" (trn_device_error()) until the part is
 * unbound.
 *
 * Context: any context. Called again, it does nothing more.
 */
void trn_pci_lost(struct trn_pci_dev *tpd)
{
	if (!READ_ONCE(tpd->gone))
		dev_err(&tpd->pdev->dev,
			"trn_pci: the part stopped answering: its registers read all ones\n");
	WRITE_ONCE(tpd->gone, true);
	trn_device_error(tpd->tdev, TRN_HW_ERROR_NOT_ANSWERING);
}

/*
 * Whether the part still answers, asked every TRN_PCI_HEARTBEAT also when
 * no job runs, so that an operator learns of a part that fell off the bus
 * before a tenant's job does. It runs from the part's registration until
 * remove cancels it, before the core unplugs the device, and stops once
 * the part is lost. Freezable: a suspended part reads all ones too.
 */
static void trn_pci_heartbeat(struct work_struct *work)
{
	struct trn_pci_dev *tpd = container_of(to_delayed_work(work),
					       struct trn_pci_dev, heartbeat);

	if (READ_ONCE(tpd->gone))
		return;
	if (readl(tpd->regs + TRN_PCI_MISC + TRN_PCI_MISC_ROUTING_ID) !=
	    U32_MAX)
		tpd->silent = 0;
	else if (++tpd->silent == TRN_PCI_SILENT_BEATS)
		trn_pci_lost(tpd);
	if (!READ_ONCE(tpd->gone))
		queue_delayed_work(system_freezable_wq, &tpd->heartbeat,
				   round_jiffies_relative(TRN_PCI_HEARTBEAT));
}

/* Before the first ring starts: the command processor reports to @tdev. */
static int trn_pci_hw_init(struct trn_device *tdev)
{
	struct trn_pci_dev *tpd = trn_device_hw_priv(tdev);

	tpd->tdev = tdev;
	return 0;
}

static const struct trn_hw_ops trn_pci_hw_ops = {
	.owner = THIS_MODULE,
	.hw_init = trn_pci_hw_init,
	.ctx_init = trn_pci_ctx_init,
	.ctx_fini = trn_pci_ctx_fini,
	.mmu_map = trn_pci_mmu_map,
	.mmu_unmap = trn_pci_mmu_unmap,
	.hbm_pfn = trn_pci_hbm_pfn,
	.hbm_populate = trn_pci_hbm_populate,
	.hbm_clear = trn_pci_hbm_clear,
	.hbm_read = trn_pci_hbm_read,
	.ring_init = trn_pci_ring_init,
	.ring_fini = trn_pci_ring_fini,
	.ring_doorbell = trn_pci_ring_doorbell,
	.ring_reset = trn_pci_ring_reset,
	.device_reset = trn_pci_device_reset,
};

/* Tables of contexts the core could not destroy: it was unplugged first. */
static void trn_pci_contexts_free(struct trn_pci_dev *tpd)
{
	struct trn_pci_ctx *pctx;
	unsigned long ctx;

	xa_for_each(&tpd->contexts, ctx, pctx)
		trn_pci_ctx_fini(tpd->tdev, ctx);
	xa_destroy(&tpd->contexts);
}

/* Make the part a trn device: the core's view of it. */
static int trn_pci_register(struct trn_pci_dev *tpd,
			    const struct trn_pci_part *part)
{
	const struct trn_device_desc desc = {
		.generation = part->generation,
		.device_id = part->device,
		.num_cores = TRN_PCI_CORES,
		.queues_per_core = TRN_PCI_QUEUES_PER_CORE,
		.hbm_size = tpd->hbm_usable,
		.hbm_stacks = TRN_PCI_STACKS,
		.va_start = TRN_PCI_VA_START,
		.va_size = TRN_PCI_VA_END - TRN_PCI_VA_START,
		/* NOP, WRITE, FILL, COPY, CALL and semaphores: trn_pci_cp.c. */
		.capabilities = DRM_TRN_CAP_HBM_CPU_VISIBLE |
				DRM_TRN_CAP_SEMAPHORES,
		.hbm_cpu_wc = true,
		.ring_entries = TRN_PCI_RING_ENTRIES,
	};
	struct trn_device *tdev;
	int ret;

	xa_init(&tpd->contexts);
	init_waitqueue_head(&tpd->unwedged);
	init_waitqueue_head(&tpd->sem_wq);
	INIT_DELAYED_WORK(&tpd->heartbeat, trn_pci_heartbeat);
	ret = trn_pci_cp_init(tpd);
	if (ret)
		return ret;
	tdev = trn_device_register(&tpd->pdev->dev, &desc, &trn_pci_hw_ops,
				   tpd);
	if (IS_ERR(tdev)) {
		trn_pci_cp_fini(tpd);
		return PTR_ERR(tdev);
	}
	queue_delayed_work(system_freezable_wq, &tpd->heartbeat,
			   round_jiffies_relative(TRN_PCI_HEARTBEAT));
	return 0;
}

/* QEMU mode: one write starts a reset; the register reads 0 once done. */
static int trn_pci_reset_qemu(struct trn_pci_dev *tpd)
{
	void __iomem *reg = tpd->regs + TRN_PCI_QEMU_RESET;
	u32 val;
	int ret;

	writel(0, reg);
	ret = readl_poll_timeout(reg, val, !val || val == U32_MAX,
				 USEC_PER_MSEC, 10 * USEC_PER_SEC);
	if (!ret && val == U32_MAX)
		ret = -ENODEV;
	return ret;
}

static void trn_pci_fw_request_reset(void __iomem *misc)
{
	writel(TRN_PCI_FW_RESET_DEVICE, misc + TRN_PCI_MISC_FW_RESET);
	writel(1, misc + TRN_PCI_MISC_FW_DOORBELL);
}

/*
 * A real part: the reset is a request to its firmware. The request type
 * reads back until the firmware takes it (0), and MISC RAM reads
 * TRN_PCI_NOT_READY while the firmware resets the part, whose status
 * shows TRN_PCI_FW_STATUS_BUSY until the part is back. A request still
 * untaken (the type reads back) after TRN_PCI_FW_RESET_TAKE_US is sent
 * again; one under way (TRN_PCI_NOT_READY) is waited for.
 */
static int trn_pci_reset_fw(struct trn_pci_dev *tpd)
{
	void __iomem *misc = tpd->regs + TRN_PCI_MISC;
	ktime_t now = ktime_get();
	ktime_t deadline = ktime_add_us(now, TRN_PCI_FW_RESET_STEP_US);
	ktime_t resend = ktime_add_us(now, TRN_PCI_FW_RESET_TAKE_US);
	unsigned int sends = 1;
	u32 val;
	int ret;

	trn_pci_fw_request_reset(misc);
	for (;;) {
		val = readl(misc + TRN_PCI_MISC_FW_RESET);
		if (!val || val == U32_MAX)
			break;
		now = ktime_get();
		if (ktime_after(now, deadline))
			return -ETIMEDOUT;
		if (val == TRN_PCI_FW_RESET_DEVICE && ktime_after(now, resend) &&
		    sends < TRN_PCI_FW_RESET_SENDS) {
			trn_pci_fw_request_reset(misc);
			sends++;
			resend = ktime_add_us(now, TRN_PCI_FW_RESET_TAKE_US);
		}
		fsleep(10 * USEC_PER_MSEC);
	}
	if (val == U32_MAX)
		return -ENODEV;
	if (sends > 1)
		dev_info(&tpd->pdev->dev,
			 "trn_pci: the firmware took the reset request sent %u times\n",
			 sends);
	ret = readl_poll_timeout(misc + TRN_PCI_MISC_FW_STATUS, val,
				 !(val & TRN_PCI_FW_STATUS_BUSY) ||
				 val == U32_MAX, 10 * USEC_PER_MSEC,
				 TRN_PCI_FW_RESET_STEP_US);
	if (!ret && val == U32_MAX)
		ret = -ENODEV;
	return ret;
}

/**
 * trn_pci_reset() - reset the whole part
 * @tpd: the part
 *
 * Through the reset register in QEMU mode, through the firmware on a real
 * part. Clears every UDMA queue, semaphore and event; device memory stays.
 *
 * Context: process context; sleeps for as long as the reset takes.
 * Return: 0, -ETIMEDOUT, or -ENODEV if the part is gone.
 */
int trn_pci_reset(struct trn_pci_dev *tpd)
{
	return tpd->qemu_mode ? trn_pci_reset_qemu(tpd) : trn_pci_reset_fw(tpd);
}

static int trn_pci_read_identity(struct trn_pci_dev *tpd)
{
	void __iomem *misc = tpd->regs + TRN_PCI_MISC;
	u32 rid, lo, hi;
	int ret;

	/* The firmware may not be ready right after reset. */
	ret = readl_poll_timeout(misc + TRN_PCI_MISC_ROUTING_ID, rid,
				 rid != TRN_PCI_NOT_READY, 10 * USEC_PER_MSEC,
				 20 * USEC_PER_SEC);
	if (ret)
		return ret;
	if (rid == U32_MAX)
		return -ENODEV;
	lo = readl(misc + TRN_PCI_MISC_SERIAL_LO);
	hi = readl(misc + TRN_PCI_MISC_SERIAL_HI);
	tpd->routing_id = rid;
	tpd->serial = (u64)hi << 32 | lo;
	return 0;
}

/*
 * Where BAR4 shows each HBM stack. QEMU mode: a quarter of BAR4 each, back
 * to back. A real part: its generation's stack size, 64 GiB apart.
 */
static int trn_pci_hbm_layout(struct trn_pci_dev *tpd,
			      const struct trn_pci_part *part, u64 bar_len)
{
	if (tpd->qemu_mode) {
		tpd->stack_size = bar_len / TRN_PCI_STACKS;
		tpd->stack_stride = tpd->stack_size;
	} else {
		tpd->stack_size = part->stack_size;
		tpd->stack_stride = TRN_PCI_STACK_STRIDE;
	}
	if (tpd->stack_size <= TRN_PCI_FW_CARVEOUT ||
	    !IS_ALIGNED(tpd->stack_size, SZ_1M) ||
	    (TRN_PCI_STACKS - 1) * tpd->stack_stride + tpd->stack_size >
	    bar_len)
		return -ENODEV;
	tpd->stack_usable = tpd->stack_size - TRN_PCI_FW_CARVEOUT;
	return 0;
}

static int trn_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	const struct trn_pci_part *part;
	struct trn_pci_dev *tpd;
	resource_size_t hbm_len;
	unsigned int i;
	int ret;

	tpd = devm_kzalloc(dev, sizeof(*tpd), GFP_KERNEL);
	if (!tpd)
		return -ENOMEM;
	tpd->pdev = pdev;
	/* driver_override can offer any device: take only what we know. */
	part = trn_pci_part_of(pdev);
	if (!part) {
		dev_info(dev, "trn_pci: %04x:%04x is not a Trainium2/3 part\n",
			 pdev->vendor, pdev->device);
		return -ENODEV;
	}
	tpd->name = part->name;
	tpd->qemu_mode = pdev->revision == TRN_PCI_REVISION_QEMU;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	tpd->regs = pcim_iomap_region(pdev, TRN_PCI_BAR_REGS, "trn_pci");
	if (IS_ERR(tpd->regs))
		return dev_err_probe(dev, PTR_ERR(tpd->regs),
				     "cannot map the register BAR\n");
	ret = pcim_request_region(pdev, TRN_PCI_BAR_HBM, "trn_pci");
	if (ret)
		return dev_err_probe(dev, ret, "cannot claim the HBM BAR\n");
	hbm_len = pci_resource_len(pdev, TRN_PCI_BAR_HBM);
	ret = trn_pci_hbm_layout(tpd, part, hbm_len);
	if (ret)
		return dev_err_probe(dev, ret,
				     "HBM BAR of %pa bytes cannot hold %u stacks\n",
				     &hbm_len, TRN_PCI_STACKS);
	tpd->hbm_usable = TRN_PCI_STACKS * tpd->stack_usable;
	/* Nothing of it cleared yet: trn_pci_hbm_populate(). */
	tpd->hbm_scrubbed =
		devm_bitmap_zalloc(dev, DIV_ROUND_UP_ULL(tpd->hbm_usable,
							 TRN_PCI_SCRUB_GRANULE),
				   GFP_KERNEL);
	if (!tpd->hbm_scrubbed)
		return -ENOMEM;
	mutex_init(&tpd->scrub_lock);
	/*
	 * Device memory for the CPU: write-combined, as AWS's driver maps
	 * it, and only what trn allocates: not the firmware's carve-outs,
	 * not the gaps between a real part's stacks.
	 */
	tpd->hbm_phys = pci_resource_start(pdev, TRN_PCI_BAR_HBM);
	for (i = 0; i < TRN_PCI_STACKS; i++) {
		tpd->stack_io[i] =
			devm_ioremap_wc(dev, tpd->hbm_phys +
					i * tpd->stack_stride +
					TRN_PCI_FW_CARVEOUT,
					tpd->stack_usable);
		if (!tpd->stack_io[i])
			return dev_err_probe(dev, -ENOMEM,
					     "cannot map HBM stack %u\n", i);
	}

	/* The device's host window: DMA addresses below its bit 46. */
	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(46));
	if (ret)
		return dev_err_probe(dev, ret, "no 46-bit DMA\n");
	pci_set_master(pdev);

	ret = trn_pci_reset(tpd);
	if (ret)
		return dev_err_probe(dev, ret, "reset did not complete\n");
	ret = trn_pci_read_identity(tpd);
	if (ret)
		return dev_err_probe(dev, ret, "no identity in MISC RAM\n");
	ret = trn_pci_udma_selftest(tpd);
	if (ret)
		return dev_err_probe(dev, ret, "UDMA self-test failed\n");

	pci_set_drvdata(pdev, tpd);
	ret = trn_pci_register(tpd, part);
	if (ret)
		return dev_err_probe(dev, ret, "cannot register with trn\n");
	dev_info(dev, "trn_pci: %s (%04x:%04x rev %u, %s), routing id %u, serial %016llx, HBM %u x %llu MiB (%llu MiB usable), UDMA self-test passed\n",
		 tpd->name, pdev->vendor, pdev->device, pdev->revision,
		 tpd->qemu_mode ? "QEMU mode" : "firmware reset",
		 tpd->routing_id, tpd->serial, TRN_PCI_STACKS,
		 tpd->stack_size >> 20, tpd->hbm_usable >> 20);
	return 0;
}

/*
 * The part's identity, in /sys/bus/pci/devices/<address>/trn/ while bound:
 * what an operator checks before and after opting a part in.
 */
static struct trn_pci_dev *trn_pci_of(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t generation_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", trn_pci_of(dev)->name);
}
static DEVICE_ATTR_RO(generation);

static ssize_t routing_id_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", trn_pci_of(dev)->routing_id);
}
static DEVICE_ATTR_RO(routing_id);

static ssize_t serial_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%016llx\n", trn_pci_of(dev)->serial);
}
static DEVICE_ATTR_RO(serial);

static ssize_t hbm_stacks_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", TRN_PCI_STACKS);
}
static DEVICE_ATTR_RO(hbm_stacks);

static ssize_t hbm_stack_bytes_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", trn_pci_of(dev)->stack_size);
}
static DEVICE_ATTR_RO(hbm_stack_bytes);

static ssize_t hbm_usable_bytes_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", trn_pci_of(dev)->hbm_usable);
}
static DEVICE_ATTR_RO(hbm_usable_bytes);

static struct attribute *trn_pci_attrs[] = {
	&dev_attr_generation.attr,
	&dev_attr_routing_id.attr,
	&dev_attr_serial.attr,
	&dev_attr_hbm_stacks.attr,
	&dev_attr_hbm_stack_bytes.attr,
	&dev_attr_hbm_usable_bytes.attr,
	NULL
};

static const struct attribute_group trn_pci_group = {
	.name = "trn",
	.attrs = trn_pci_attrs,
};

static const struct attribute_group *trn_pci_groups[] = {
	&trn_pci_group,
	NULL
};

/*
 * Unbind, module unload or (surprise) removal: the core unplugs the device
 * (open files see -ENODEV, jobs fail with -ENODEV) and stops every ring,
 * which stops its DMA; then nothing reaches the part any more.
 */
static void trn_pci_remove(struct pci_dev *pdev)
{
	struct trn_pci_dev *tpd = pci_get_drvdata(pdev);

	cancel_delayed_work_sync(&tpd->heartbeat);
	/* A part that vanished reads all ones: touch no register of it. */
	if (readl(tpd->regs + TRN_PCI_MISC + TRN_PCI_MISC_ROUTING_ID) ==
	    U32_MAX)
		WRITE_ONCE(tpd->gone, true);
	trn_device_unregister(tpd->tdev);
	trn_pci_contexts_free(tpd);
	trn_pci_cp_fini(tpd);
}

static struct pci_driver trn_pci_driver = {
	.name = "trn_pci",
	/* No table: see the top of this file. */
	.id_table = NULL,
	.probe = trn_pci_probe,
	.remove = trn_pci_remove,
	.dev_groups = trn_pci_groups,
};

static int __init trn_pci_init(void)
{
	unsigned int i;
	int ret;

	ret = pci_register_driver(&trn_pci_driver);
	if (ret || !claim)
		return ret;
	/* Dynamic ids bind only devices without a driver. */
	for (i = 0; i < ARRAY_SIZE(trn_pci_parts); i++) {
		ret = pci_add_dynid(&trn_pci_driver, TRN_PCI_VENDOR_AMAZON,
				    trn_pci_parts[i].device, PCI_ANY_ID,
				    PCI_ANY_ID, 0, 0, 0);
		if (ret) {
			pci_unregister_driver(&trn_pci_driver);
			return ret;
		}
	}
	return 0;
}
module_init(trn_pci_init);

static void __exit trn_pci_exit(void)
{
	pci_unregister_driver(&trn_pci_driver);
}
module_exit(trn_pci_exit);

MODULE_DESCRIPTION("trn backend for AWS Trainium2/Trainium3 parts (opt-in)");
MODULE_LICENSE("GPL");
