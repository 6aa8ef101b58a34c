// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The part's UDMA engines: queue bring-up, descriptor pairs, completion by
 * polling a marker in host memory (the engines write nothing back and do
 * not interrupt). For now only the probe's self-test uses them.
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

/**
 * struct trn_udma_queue - one queue of one engine, both of its rings
 * @m2s: BAR0 address of its M2S (read side) registers
 * @s2m: BAR0 address of its S2M (write side) registers
 * @m2s_ring: CPU address of the M2S descriptors
 * @s2m_ring: CPU address of the S2M descriptors
 * @ring_dma: DMA address of both rings (M2S first)
 * @entries: descriptors in each ring
 * @tail: next free slot, the same in both rings
 * @ring_id: ring id of the descriptors written at @tail
 */
struct trn_udma_queue {
	void __iomem *m2s;
	void __iomem *s2m;
	struct trn_udma_desc *m2s_ring;
	struct trn_udma_desc *s2m_ring;
	dma_addr_t ring_dma;
	u32 entries;
	u32 tail;
	u32 ring_id;
};

static u64 trn_udma_host(dma_addr_t addr)
{
	return addr | TRN_PCI_HOST_BIT;
}

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

static void trn_udma_queue_start(struct trn_udma_queue *uq)
{
	u64 base = trn_udma_host(uq->ring_dma);

	uq->tail = 0;
	uq->ring_id = 1;
	trn_udma_ring_start(uq->m2s, TRN_UDMA_M2S_SW_CTRL, base, uq->entries);
	trn_udma_ring_start(uq->s2m, TRN_UDMA_S2M_SW_CTRL,
			    base + uq->entries * sizeof(struct trn_udma_desc),
			    uq->entries);
}

/*
 * Queues one copy of @len bytes (at most 64 KiB) from @src to @dst, device
 * addresses, behind everything queued before when @ordered.
 */
static void trn_udma_queue_copy(struct trn_udma_queue *uq, u64 src, u64 dst,
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

/* Hands @n queued pairs to the engine: the write side first. */
static void trn_udma_queue_kick(struct trn_udma_queue *uq, u32 n)
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
	const u32 entries = TRN_UDMA_SELFTEST_RING;
	size_t rings = 2 * entries * sizeof(struct trn_udma_desc);
	u64 hbm = trn_pci_stack_addr(0) + TRN_PCI_FW_CARVEOUT;
	struct trn_udma_queue uq = { .entries = entries };
	dma_addr_t buf_dma;
	u32 *src, *dst, *marker, val;
	void __iomem *eng;
	u8 *buf;
	int i, ret;

	buf = dma_alloc_coherent(dev, 3 * PAGE_SIZE, &buf_dma, GFP_KERNEL);
	uq.m2s_ring = dma_alloc_coherent(dev, rings, &uq.ring_dma, GFP_KERNEL);
	if (!buf || !uq.m2s_ring) {
		ret = -ENOMEM;
		goto out;
	}
	uq.s2m_ring = uq.m2s_ring + entries;
	src = (u32 *)buf;
	dst = (u32 *)(buf + PAGE_SIZE);
	marker = (u32 *)(buf + 2 * PAGE_SIZE);
	for (i = 0; i < PAGE_SIZE / 4; i++)
		src[i] = 0x7e570000 + i;
	memset(dst, 0, PAGE_SIZE);
	marker[0] = TRN_UDMA_MARKER;
	marker[1] = 0;

	eng = tpd->regs + TRN_UDMA_H2D_0;
	uq.m2s = eng + TRN_UDMA_M2S_Q(0);
	uq.s2m = eng + TRN_UDMA_S2M_Q(0);
	trn_udma_queue_start(&uq);
	trn_udma_queue_copy(&uq, trn_udma_host(buf_dma), hbm, PAGE_SIZE,
			    false);
	trn_udma_queue_copy(&uq, hbm, trn_udma_host(buf_dma + PAGE_SIZE),
			    PAGE_SIZE, true);
	trn_udma_queue_copy(&uq, trn_udma_host(buf_dma + 2 * PAGE_SIZE),
			    trn_udma_host(buf_dma + 2 * PAGE_SIZE + 4), 4, true);
	trn_udma_queue_kick(&uq, 3);

	ret = read_poll_timeout(READ_ONCE, val,
				val == TRN_UDMA_MARKER ||
				readl(uq.m2s + TRN_UDMA_Q_STATUS) != 0,
				10, USEC_PER_SEC, false, marker[1]);
	if (readl(uq.m2s + TRN_UDMA_Q_STATUS) == U32_MAX)
		ret = -ENODEV;
	else if (readl(uq.m2s + TRN_UDMA_Q_STATUS) & TRN_UDMA_STATUS_ERROR)
		ret = -EIO;
	else if (!ret && memcmp(src, dst, PAGE_SIZE))
		ret = -EIO;
	/*
	 * Leave the queue idle and empty for whoever uses it next; a reset
	 * queue touches none of the buffers freed below.
	 */
	writel(TRN_UDMA_SW_CTRL_RST_Q, uq.m2s + TRN_UDMA_M2S_SW_CTRL);
	writel(TRN_UDMA_SW_CTRL_RST_Q, uq.s2m + TRN_UDMA_S2M_SW_CTRL);
out:
	if (uq.m2s_ring)
		dma_free_coherent(dev, rings, uq.m2s_ring, uq.ring_dma);
	if (buf)
		dma_free_coherent(dev, 3 * PAGE_SIZE, buf, buf_dma);
	return ret;
}
