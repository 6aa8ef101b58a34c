/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn_pci: the backend for real Trainium2 / Trainium3 parts. The register
 * offsets and rules here are facts from AWS's own driver, each listed with
 * its source in Documentation/hardware.md.
 */
#ifndef __TRN_PCI_H__
#define __TRN_PCI_H__

#include <linux/bits.h>
#include <linux/sizes.h>
#include <linux/types.h>

struct pci_dev;

#define TRN_PCI_VENDOR_AMAZON	0x1d0f
#define TRN_PCI_DEVICE_TRN2	0x7364
#define TRN_PCI_DEVICE_TRN3_0	0x7564
#define TRN_PCI_DEVICE_TRN3_1	0x7565
/* AWS's QEMU models of the part report this revision. */
#define TRN_PCI_REVISION_QEMU	255

#define TRN_PCI_BAR_REGS	0
#define TRN_PCI_BAR_HBM		4

/* BAR0: MISC RAM (identity, firmware mailbox). */
#define TRN_PCI_MISC		0x06c84000
#define TRN_PCI_MISC_ROUTING_ID	0x24
#define TRN_PCI_MISC_SERIAL_LO	0x38
#define TRN_PCI_MISC_SERIAL_HI	0x3c
/* MISC RAM reads this while the firmware is not ready. */
#define TRN_PCI_NOT_READY	0xdeadbeef
/* BAR0: the reset register of QEMU mode. */
#define TRN_PCI_QEMU_RESET	0x06300010

/* HBM: 4 stacks at sparse device addresses, 16 MiB of each the firmware's. */
#define TRN_PCI_STACKS		4
#define TRN_PCI_FW_CARVEOUT	SZ_16M

/* The device reaches host memory at its DMA address with this bit set. */
#define TRN_PCI_HOST_BIT	BIT_ULL(46)

/* UDMA: an engine's M2S and S2M queues, and their registers. */
#define TRN_UDMA_H2D_0		0x06900000
#define TRN_UDMA_M2S_Q(q)	(0x01000 + (q) * 0x1000)
#define TRN_UDMA_S2M_Q(q)	(0x21000 + (q) * 0x1000)
#define TRN_UDMA_Q_CFG		0x20
#define TRN_UDMA_Q_STATUS	0x24
#define TRN_UDMA_Q_DRBP_LO	0x28
#define TRN_UDMA_Q_DRBP_HI	0x2c
#define TRN_UDMA_Q_DRL		0x30
#define TRN_UDMA_Q_DRTP_INC	0x38
#define TRN_UDMA_M2S_SW_CTRL	0xb0
#define TRN_UDMA_S2M_SW_CTRL	0x64
#define TRN_UDMA_CFG_EN_PREF	BIT(16)
#define TRN_UDMA_CFG_EN_SCHED	BIT(17)
#define TRN_UDMA_SW_CTRL_RST_Q	BIT(8)
/* Set by the QEMU model when a queue stopped on an error. */
#define TRN_UDMA_STATUS_ERROR	BIT(0)
#define TRN_UDMA_RING_MIN	32

/* Descriptor control word. */
#define TRN_UDMA_DESC_LEN	GENMASK(15, 0)
#define TRN_UDMA_DESC_RING_ID	GENMASK(25, 24)
#define TRN_UDMA_DESC_FIRST	BIT(26)
#define TRN_UDMA_DESC_LAST	BIT(27)
#define TRN_UDMA_DESC_DMB	BIT(30)

/**
 * struct trn_udma_desc - a UDMA descriptor (device-visible, little endian)
 * @len_ctrl: length (0 means 64 KiB) and TRN_UDMA_DESC_* bits
 * @meta: M2S metadata, or zero
 * @addr: source (M2S) or destination (S2M) device address
 */
struct trn_udma_desc {
	__le32 len_ctrl;
	__le32 meta;
	__le64 addr;
};

/**
 * struct trn_pci_dev - one part bound to trn_pci
 * @pdev: the PCI device
 * @regs: BAR0, uncached
 * @name: "Trn2" or "Trn3"
 * @routing_id: the part's place among the instance's devices
 * @serial: its serial number
 * @stack_size: bytes between HBM stacks in BAR4 (QEMU mode: BAR4 / 4)
 * @hbm_usable: bytes of device memory trn may allocate (all stacks)
 */
struct trn_pci_dev {
	struct pci_dev *pdev;
	void __iomem *regs;
	const char *name;
	u32 routing_id;
	u64 serial;
	u64 stack_size;
	u64 hbm_usable;
};

u64 trn_pci_stack_addr(unsigned int stack);
int trn_pci_udma_selftest(struct trn_pci_dev *tpd);

#endif /* __TRN_PCI_H__ */
