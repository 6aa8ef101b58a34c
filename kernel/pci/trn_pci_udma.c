// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The part's UDMA engines: queue bring-up, descriptor pairs, completion by
 * polling a marker in host memory (the engines write nothing back and do
 * not interrupt). The probe's self-test and the command processor
 * (trn_pci_cp.c) use them.
 */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/iopoll.h>
#include <linux/pci.h>
#include <linux/string.h>

#include "trn_pci.h"

#define TRN_UDMA_SELFTEST_RING	TRN_UDMA_RING_MIN
#define TRN_UDMA_MARKER		0xabcdef01

/* Stop, reset, point at the ring, start: the order AWS's driver uses. */
static void trn_udma_ring_start(void __iomem *q, u32 sw_ctrl, u64 base,
				u32 entries)
{
	u32 cfg = readl(q + TRN_UDMA_Q_CFG);

	cfg &= ~(TRN_UDMA_CFG_EN_PREF | TRN_UDMA_CFG_EN_SCHED);
	writel(cfg, q + TRN_UDMA_Q_CFG);
	writel(TRN_UDMA_SW_CTRL_RST_Q, q + sw_ctrl);
	writel(lower_32_bits(base), q + TRN_UDMA_Q_DRBP_LO);
	writel(upper_32_bits(base), q + TRN_UDMA_Q_DRBP_HI);
	writel(entries, q + TRN_UDMA_Q_DRL);
	writel(cfg | TRN_UDMA_CFG_EN_PREF | TRN_UDMA_CFG_EN_SCHED,
	       q + TRN_UDMA_Q_CFG);
}

/**
 * trn_udma_queue_alloc() - set up a queue's rings in host memory
 * @tpd: the part
 * @uq: the queue
 * @engine: BAR0 address of the engine's registers
 * @queue: queue number in the engine
 * @entries: descriptors in each of its rings, at least %TRN_UDMA_RING_MIN
 *
 * The queue stays stopped until trn_udma_queue_start().
 *
 * Return: 0 or -ENOMEM.
 */
int trn_udma_queue_alloc(struct trn_pci_dev *tpd, struct trn_udma_queue *uq,
			 void __iomem *engine, u32 queue, u32 entries)
{
	size_t rings = 2 * entries * sizeof(struct trn_udma_desc);

	uq->m2s_ring = dma_alloc_coherent(&tpd->pdev->dev, rings,
					  &uq->ring_dma, GFP_KERNEL);
	if (!uq->m2s_ring)
		return -ENOMEM;
	uq->s2m_ring = uq->m2s_ring + entries;
	uq->entries = entries;
	uq->m2s = engine + TRN_UDMA_M2S_Q(queue);
	uq->s2m = engine + TRN_UDMA_S2M_Q(queue);
	return 0;
}

/**
 * trn_udma_queue_free() - free what trn_udma_queue_alloc() set up
 * @tpd: the part
 * @uq: the queue, stopped (trn_udma_queue_stop()) if it ever ran
 */
void trn_udma_queue_free(struct trn_pci_dev *tpd, struct trn_udma_queue *uq)
{
	if (!uq->m2s_ring)
		return;
	dma_free_coherent(&tpd->pdev->dev,
			  2 * uq->entries * sizeof(struct trn_udma_desc),
			  uq->m2s_ring, uq->ring_dma);
	uq->m2s_ring = NULL;
}

/* Whether one side of a queue reads as just reset: empty, ring id 1. */
static int trn_udma_ring_is_reset(void __iomem *q)
{
	u32 head = readl(q + TRN_UDMA_Q_DRHP);

	if (head == U32_MAX)
		return -ENODEV;
	return head == TRN_UDMA_DRHP_RESET && !readl(q + TRN_UDMA_Q_DRTP) ?
	       0 : -EIO;
}

/**
 * trn_udma_queue_stop() - reset a queue: it forgets its descriptors and
 * touches no memory afterwards
 * @uq: the queue
 *
 * Return: 0; -EIO if the queue's pointers do not read as reset afterwards
 * (the engine no longer responds: only a device reset stops it), -ENODEV
 * if the part is gone.
 */
int trn_udma_queue_stop(struct trn_udma_queue *uq)
{
	int ret;

	writel(TRN_UDMA_SW_CTRL_RST_Q, uq->m2s + TRN_UDMA_M2S_SW_CTRL);
	writel(TRN_UDMA_SW_CTRL_RST_Q, uq->s2m + TRN_UDMA_S2M_SW_CTRL);
	ret = trn_udma_ring_is_reset(uq->m2s);
	return ret ?: trn_udma_ring_is_reset(uq->s2m);
}

/**
 * trn_udma_queue_status() - the read side's status register
 * @uq: the queue
 *
 * Return: the register: %TRN_UDMA_STATUS_ERROR when the queue stopped on an
 * error, all ones when the part is gone.
 */
u32 trn_udma_queue_status(struct trn_udma_queue *uq)
{
	return readl(uq->m2s + TRN_UDMA_Q_STATUS);
}

/**
 * trn_udma_queue_start() - (re)start a queue with empty rings
 * @uq: the queue
 */
void trn_udma_queue_start(struct trn_udma_queue *uq)
{
	u64 base = trn_pci_host_addr(uq->ring_dma);

	uq->tail = 0;
	uq->ring_id = 1;
	trn_udma_ring_start(uq->m2s, TRN_UDMA_M2S_SW_CTRL, base, uq->entries);
	trn_udma_ring_start(uq->s2m, TRN_UDMA_S2M_SW_CTRL,
			    base + uq->entries * sizeof(struct trn_udma_desc),
			    uq->entries);
}

/**
 * trn_udma_queue_copy() - queue one copy (not handed to the engine yet)
 * @uq: the queue, with a free slot
 * @src: source device address
 * @dst: destination device address
 * @len: bytes, 1 to 64 KiB
 * @ordered: start only after everything queued before has been written
 */
void trn_udma_queue_copy(struct trn_udma_queue *uq, u64 src, u64 dst,
			 u32 len, bool ordered)
{
	u32 ctrl = FIELD_PREP(TRN_UDMA_DESC_LEN, len) |
		   FIELD_PREP(TRN_UDMA_DESC_RING_ID, uq->ring_id);

	uq->m2s_ring[uq->tail] = (struct trn_udma_desc) {
		.len_ctrl = cpu_to_le32(ctrl | TRN_UDMA_DESC_FIRST |
					TRN_UDMA_DESC_LAST |
					(ordered ? TRN_UDMA_DESC_DMB : 0)),
		.addr = cpu_to_le64(src),
	};
	uq->s2m_ring[uq->tail] = (struct trn_udma_desc) {
		.len_ctrl = cpu_to_le32(ctrl),
		.addr = cpu_to_le64(dst),
	};
	if (++uq->tail == uq->entries) {
		uq->tail = 0;
		uq->ring_id = (uq->ring_id + 1) & 3;
	}
}

/**
 * trn_udma_queue_kick() - hand queued copies to the engine
 * @uq: the queue
 * @n: copies queued since the last kick
 *
 * The write side gets them first, so that the read side never streams
 * into a write side that has no descriptor.
 */
void trn_udma_queue_kick(struct trn_udma_queue *uq, u32 n)
{
	dma_wmb();
	writel(n, uq->s2m + TRN_UDMA_Q_DRTP_INC);
	writel(n, uq->m2s + TRN_UDMA_Q_DRTP_INC);
}

/**
 * trn_pci_udma_selftest() - prove the data path of a freshly reset part
 * @tpd: the part
 *
 * Copies a page from host memory to the first usable page of HBM, back to
 * another host page, then the completion marker, on queue 0 of engine
 * H2D_0, and checks what arrived.
 *
 * Return: 0, -ENOMEM, -EIO when the copy was wrong or the queue stopped on
 * an error, -ETIMEDOUT when the marker never came, -ENODEV when the part
 * is gone.
 */
int trn_pci_udma_selftest(struct trn_pci_dev *tpd)
{
	struct device *dev = &tpd->pdev->dev;
	u64 hbm = trn_pci_stack_addr(0) + TRN_PCI_FW_CARVEOUT;
	struct trn_udma_queue uq = {};
	dma_addr_t buf_dma;
	u32 *src, *dst, *marker, val;
	u8 *buf;
	int i, ret, stop;

	buf = dma_alloc_coherent(dev, 3 * PAGE_SIZE, &buf_dma, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	ret = trn_udma_queue_alloc(tpd, &uq, tpd->regs + TRN_UDMA_H2D_0, 0,
				   TRN_UDMA_SELFTEST_RING);
	if (ret)
		goto out;
	src = (u32 *)buf;
	dst = (u32 *)(buf + PAGE_SIZE);
	marker = (u32 *)(buf + 2 * PAGE_SIZE);
	for (i = 0; i < PAGE_SIZE / 4; i++)
		src[i] = 0x7e570000 + i;
	memset(dst, 0, PAGE_SIZE);
	marker[0] = TRN_UDMA_MARKER;
	marker[1] = 0;

	trn_udma_queue_start(&uq);
	trn_udma_queue_copy(&uq, trn_pci_host_addr(buf_dma), hbm, PAGE_SIZE,
			    false);
	trn_udma_queue_copy(&uq, hbm, trn_pci_host_addr(buf_dma + PAGE_SIZE),
			    PAGE_SIZE, true);
	trn_udma_queue_copy(&uq, trn_pci_host_addr(buf_dma + 2 * PAGE_SIZE),
			    trn_pci_host_addr(buf_dma + 2 * PAGE_SIZE + 4), 4, true);
	trn_udma_queue_kick(&uq, 3);

	ret = read_poll_timeout(READ_ONCE, val,
				val == TRN_UDMA_MARKER ||
				readl(uq.m2s + TRN_UDMA_Q_STATUS) != 0,
				10, USEC_PER_SEC, false, marker[1]);
	if (trn_udma_queue_status(&uq) == U32_MAX)
		ret = -ENODEV;
	else if (trn_udma_queue_status(&uq) & TRN_UDMA_STATUS_ERROR)
		ret = -EIO;
	else if (!ret && memcmp(src, dst, PAGE_SIZE))
		ret = -EIO;
	/*
	 * Leave the queue idle and empty for whoever uses it next; a reset
	 * queue touches none of the buffers freed below.
	 */
	stop = trn_udma_queue_stop(&uq);
	if (!ret)
		ret = stop;
	trn_udma_queue_free(tpd, &uq);
out:
	dma_free_coherent(dev, 3 * PAGE_SIZE, buf, buf_dma);
	return ret;
}
