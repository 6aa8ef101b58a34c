/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Copyright (c) 2026 The trn authors
 *
 * A QEMU model of an AWS Trainium2 / Trainium3 part, in the "QEMU mode" of
 * AWS's own driver (PCI revision 255) or, with any other revision, as a
 * real part looks to a driver, so that trn's PCI backend runs on every
 * test run without hardware. It models what the backend uses, at the
 * part's offsets (Documentation/hardware.md lists each fact and where it
 * comes from):
 *
 * - identity: vendor 0x1d0f, device 0x7364 (Trn2) or 0x7564 / 0x7565
 *   (Trn3), revision 255 (or another, to look like a real part); the
 *   routing id and serial number in MISC RAM;
 * - BAR0, the register space (4 GiB): MISC RAM, the reset register, the
 *   semaphores and events of the 8 NeuronCores, and the 132 UDMA engines
 *   of 16 queues each;
 * - BAR4, device memory: 4 stacks, seen by the device at the part's sparse
 *   stack addresses. QEMU mode: hbm-stack-mib each, back to back. A real
 *   part: the generation's 24 GiB (Trn2) or 36 GiB (Trn3) each, stack n
 *   at n * 64 GiB of a 256 GiB BAR4 (host memory backs only what the guest
 *   touches);
 * - reset: QEMU mode, one write to the reset register; a real part, a
 *   request to the firmware through MISC RAM (reset type, doorbell), while
 *   which the firmware does not answer (MISC RAM reads 0xdeadbeef);
 * - UDMA: an M2S (read) ring and an S2M (write) ring per queue, 16-byte
 *   descriptors, a tail-increment doorbell; host memory is device address
 *   | bit 46, reached with pci_dma_*() (so through an emulated IOMMU).
 *   Completion is seen by software polling, as on the part: the model
 *   writes nothing back but the data.
 *
 * Run-time fault knobs (QMP qom-set on the device): "stuck-queue" (engine
 * * 16 + queue, or -1) stops one queue making progress, "stuck-engine"
 * (an engine, or -1) all queues of one engine; "wedged-engine" (an
 * engine, or -1) stops all queues of one engine and makes them ignore
 * their reset bit, until a device reset (which clears the knob); "dma-error" makes
 * the next descriptor fail (the queue stops with bit 0 of its status
 * register set until it is reset); "reset-stuck" makes device resets
 * never finish (the reset register keeps reading 1, or the firmware stays
 * silent, and no DMA runs) until it is cleared, which finishes a pending
 * one; "removed" turns the part into a surprise-removed one: reads return
 * all ones, writes and DMA stop. "fw-resets" (read only) counts a real
 * part's firmware resets; "fw-deaf" (a count) makes its firmware miss
 * that many doorbells, leaving the reset request untaken.
 *
 * What the model does where the public facts are silent (marked as the
 * model's own in hardware.md): M2S and S2M descriptors pair one to one
 * and must agree on length, as AWS's driver always builds them; the
 * status bit above; a reset takes 10 ms of virtual time and clears the
 * queues, semaphores and events but not device memory.
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/timer.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "qom/object.h"

#define TYPE_TRN_PART "trn-part"
typedef struct TrnPartState TrnPartState;
DECLARE_INSTANCE_CHECKER(TrnPartState, TRN_PART, TYPE_TRN_PART)

#define TRN_VENDOR_AMAZON	0x1d0f
#define TRN_DEVICE_TRN2		0x7364
#define TRN_DEVICE_TRN3_0	0x7564
#define TRN_DEVICE_TRN3_1	0x7565
#define TRN_REVISION_QEMU	255

#define TRN_BAR0_SIZE		(4 * GiB)
#define TRN_STACKS		4

/* BAR0 layout. */
#define TRN_MISC_BASE		0x06c84000
#define TRN_MISC_SIZE		0x1000
#define TRN_MISC_FW_API		0x00
#define TRN_MISC_ROUTING_ID	0x24
#define TRN_MISC_SERIAL_LO	0x38
#define TRN_MISC_SERIAL_HI	0x3c
#define TRN_MISC_FW_TPB_MAP	0x1d8
#define TRN_MISC_FW_RESET	0x1ec
#define TRN_MISC_FW_DOORBELL	0x800
#define TRN_MISC_FW_STATUS	0x808
#define TRN_FW_NOT_READY	0xdeadbeef
#define TRN_RESET_REG		0x06300010

/* A real part's HBM: stacks 64 GiB apart in BAR4, of this much each. */
#define TRN_REAL_STACK_STRIDE	(64 * GiB)
#define TRN2_STACK_ACTIVE	(24 * GiB)
#define TRN3_STACK_ACTIVE	(36 * GiB)
#define TRN_NC_COUNT		8
#define TRN_NC_BASE		0xd0000000ULL
#define TRN_NC_STRIDE		0x04000000ULL
#define TRN_NC_EVENTS		0x02700000
#define TRN_NC_SEM_READ		0x02701000
#define TRN_NC_SEM_SET		0x02701400
#define TRN_NC_SEM_INCR		0x02701800
#define TRN_NC_SEM_DECR		0x02701c00
#define TRN_NC_SEMS		256

/* UDMA engines: 4 per SENG group of 32, 4 host-transfer engines. */
#define TRN_ENG_SIZE		0x100000
#define TRN_ENG_PER_SENG	32
#define TRN_SENGS		4
#define TRN_ENG_HOST_FIRST	(TRN_SENGS * TRN_ENG_PER_SENG)
#define TRN_ENGINES		(TRN_ENG_HOST_FIRST + 4)
#define TRN_QUEUES		16
#define TRN_M2S_Q0		0x01000
#define TRN_S2M_Q0		0x21000
#define TRN_Q_STRIDE		0x1000

/* Queue registers, relative to the queue. */
#define TRN_Q_CFG		0x20
#define TRN_Q_STATUS		0x24
#define TRN_Q_DRBP_LO		0x28
#define TRN_Q_DRBP_HI		0x2c
#define TRN_Q_DRL		0x30
#define TRN_Q_DRHP		0x34
#define TRN_Q_DRTP_INC		0x38
#define TRN_Q_DRTP		0x3c
#define TRN_Q_M2S_SW_CTRL	0xb0
#define TRN_Q_S2M_SW_CTRL	0x64
#define TRN_Q_CFG_EN_PREF	BIT(16)
#define TRN_Q_CFG_EN_SCHED	BIT(17)
#define TRN_Q_CFG_RESET		(3u << 24)
#define TRN_Q_SW_CTRL_RST_Q	BIT(8)
#define TRN_Q_STATUS_ERROR	BIT(0)	/* the model's own */
#define TRN_Q_RING_MIN		32
#define TRN_Q_RING_MAX		((1u << 24) - 16)

/* Descriptor len_ctrl. */
#define TRN_DESC_LEN_MASK	0xffffu
#define TRN_DESC_RING_ID(w)	(((w) >> 24) & 3)
#define TRN_DESC_SIZE		16

#define TRN_HOST_BIT		BIT_ULL(46)

/* Bytes one run of the DMA bottom half moves before it yields. */
#define TRN_DMA_BUDGET		(4 * MiB)
#define TRN_RESET_NS		(10 * SCALE_MS)
/* A real part's firmware takes longer (the model's own figure). */
#define TRN_FW_RESET_NS		(50 * SCALE_MS)

static const uint64_t trn_seng_base[TRN_SENGS] = {
	0x82000000, 0x94000000, 0xa2000000, 0xb4000000,
};

static const uint64_t trn_host_eng_base[4] = {
	0x06800000, 0x06900000, 0x46800000, 0x46900000,
};

/* Where the device sees each HBM stack. */
static const uint64_t trn_stack_base[TRN_STACKS] = {
	0x0, 0x4000000000ULL, 0x800000000000ULL, 0x804000000000ULL,
};

typedef struct TrnRing {
	uint32_t cfg;
	uint64_t base;
	uint32_t entries;
	uint32_t head;
	uint32_t tail;
	uint32_t ring_id;	/* expected in the descriptors at head */
} TrnRing;

typedef struct TrnQueue {
	TrnRing m2s;
	TrnRing s2m;
	uint32_t status;
} TrnQueue;

struct TrnPartState {
	PCIDevice pdev;
	MemoryRegion bar0;
	MemoryRegion hbm;
	MemoryRegion hbm_bar;		/* a real part's sparse BAR4 */
	MemoryRegion hbm_stack[TRN_STACKS];
	uint8_t *hbm_ptr;
	QEMUBH *dma_bh;
	QEMUTimer reset_timer;

	/* Properties. */
	uint16_t device_id;
	uint8_t revision;
	uint32_t hbm_stack_mib;
	uint32_t routing_id;
	uint64_t serial;

	/* Run-time knobs. */
	uint32_t stuck_queue;
	uint32_t stuck_engine;
	uint32_t wedged_engine;
	bool dma_error;
	bool reset_stuck;
	bool removed;

	bool real;			/* not QEMU mode: revision != 255 */
	uint64_t stack_size;
	uint32_t reset_reg;		/* a reset is under way (both modes) */
	uint32_t fw_reset;		/* MISC RAM: the reset type requested */
	uint32_t fw_tpb_map;
	uint32_t fw_resets;		/* firmware resets done, for tests */
	uint32_t fw_deaf;		/* doorbells the firmware will miss */
	uint32_t sem[TRN_NC_COUNT][TRN_NC_SEMS];
	uint32_t event[TRN_NC_COUNT][TRN_NC_SEMS];
	TrnQueue q[TRN_ENGINES][TRN_QUEUES];
	uint8_t bounce[64 * KiB];
};

static void trn_ring_reset(TrnRing *r)
{
	r->cfg = TRN_Q_CFG_RESET;
	r->head = 0;
	r->tail = 0;
	r->ring_id = 1;
}

static void trn_queue_reset(TrnQueue *q)
{
	trn_ring_reset(&q->m2s);
	trn_ring_reset(&q->s2m);
	q->status = 0;
}

/* A pointer to device memory at device address @addr, or NULL. */
static uint8_t *trn_hbm_at(TrnPartState *s, uint64_t addr, uint64_t len)
{
	int i;

	for (i = 0; i < TRN_STACKS; i++) {
		uint64_t off = addr - trn_stack_base[i];

		if (addr >= trn_stack_base[i] && off < s->stack_size &&
		    len <= s->stack_size - off)
			return s->hbm_ptr + i * s->stack_size + off;
	}
	return NULL;
}

/* Device memory access of the UDMA engines: HBM, or host memory. */
static bool trn_dev_rw(TrnPartState *s, uint64_t addr, void *buf,
		       uint64_t len, bool write)
{
	uint8_t *p;

	if (addr & TRN_HOST_BIT) {
		addr &= ~TRN_HOST_BIT;
		if (addr >> 46)
			return false;
		if (write)
			return pci_dma_write(&s->pdev, addr, buf, len) == MEMTX_OK;
		return pci_dma_read(&s->pdev, addr, buf, len) == MEMTX_OK;
	}
	p = trn_hbm_at(s, addr, len);
	if (!p)
		return false;
	if (write)
		memcpy(p, buf, len);
	else
		memcpy(buf, p, len);
	return true;
}

static bool trn_desc_read(TrnPartState *s, TrnRing *r, uint32_t *len_ctrl,
			  uint64_t *addr)
{
	uint8_t d[TRN_DESC_SIZE];

	if (!trn_dev_rw(s, r->base + (uint64_t)r->head * TRN_DESC_SIZE, d,
			sizeof(d), false))
		return false;
	*len_ctrl = ldl_le_p(d);
	*addr = ldq_le_p(d + 8);
	return TRN_DESC_RING_ID(*len_ctrl) == r->ring_id;
}

static void trn_ring_advance(TrnRing *r)
{
	if (++r->head == r->entries) {
		r->head = 0;
		r->ring_id = (r->ring_id + 1) & 3;
	}
}

static bool trn_ring_ready(const TrnRing *r)
{
	return (r->cfg & (TRN_Q_CFG_EN_PREF | TRN_Q_CFG_EN_SCHED)) ==
	       (TRN_Q_CFG_EN_PREF | TRN_Q_CFG_EN_SCHED) &&
	       r->entries && r->head != r->tail;
}

/* Copies @len bytes from @src to @dst, device addresses. */
static bool trn_dma_copy(TrnPartState *s, uint64_t src, uint64_t dst,
			 uint64_t len)
{
	while (len) {
		uint64_t n = MIN(len, sizeof(s->bounce));

		if (!trn_dev_rw(s, src, s->bounce, n, false) ||
		    !trn_dev_rw(s, dst, s->bounce, n, true))
			return false;
		src += n;
		dst += n;
		len -= n;
	}
	return true;
}

/* Moves data for one queue within @budget bytes; true if work is left. */
static bool trn_queue_run(TrnPartState *s, unsigned int e, unsigned int qi,
			  uint64_t *budget)
{
	TrnQueue *q = &s->q[e][qi];

	if (q->status & TRN_Q_STATUS_ERROR ||
	    s->stuck_queue == e * TRN_QUEUES + qi || s->stuck_engine == e ||
	    s->wedged_engine == e)
		return false;
	while (trn_ring_ready(&q->m2s) && trn_ring_ready(&q->s2m)) {
		uint32_t mlen, slen;
		uint64_t src, dst;

		if (!*budget)
			return true;
		if (!trn_desc_read(s, &q->m2s, &mlen, &src) ||
		    !trn_desc_read(s, &q->s2m, &slen, &dst) ||
		    (mlen & TRN_DESC_LEN_MASK) != (slen & TRN_DESC_LEN_MASK))
			goto fail;
		mlen &= TRN_DESC_LEN_MASK;
		if (!mlen)
			mlen = 64 * KiB;
		if (s->dma_error) {
			s->dma_error = false;
			goto fail;
		}
		if (!trn_dma_copy(s, src, dst, mlen))
			goto fail;
		trn_ring_advance(&q->m2s);
		trn_ring_advance(&q->s2m);
		*budget -= MIN(*budget, mlen);
	}
	return false;
fail:
	q->status |= TRN_Q_STATUS_ERROR;
	return false;
}

static void trn_dma_bh(void *opaque)
{
	TrnPartState *s = opaque;
	uint64_t budget = TRN_DMA_BUDGET;
	bool more = false;
	unsigned int e, qi;

	if (s->removed || s->reset_reg)
		return;
	for (e = 0; e < TRN_ENGINES; e++)
		for (qi = 0; qi < TRN_QUEUES; qi++)
			more |= trn_queue_run(s, e, qi, &budget);
	if (more)
		qemu_bh_schedule(s->dma_bh);
}

/* Which engine's registers @addr is in; sets *@off to the offset inside. */
static int trn_engine_at(uint64_t addr, uint64_t *off)
{
	int i;

	for (i = 0; i < 4; i++) {
		if (addr >= trn_host_eng_base[i] &&
		    addr < trn_host_eng_base[i] + TRN_ENG_SIZE) {
			*off = addr - trn_host_eng_base[i];
			return TRN_ENG_HOST_FIRST + i;
		}
	}
	for (i = 0; i < TRN_SENGS; i++) {
		if (addr >= trn_seng_base[i] &&
		    addr < trn_seng_base[i] + TRN_ENG_PER_SENG * TRN_ENG_SIZE) {
			*off = (addr - trn_seng_base[i]) % TRN_ENG_SIZE;
			return i * TRN_ENG_PER_SENG +
			       (addr - trn_seng_base[i]) / TRN_ENG_SIZE;
		}
	}
	return -1;
}

/* The ring and register of a queue register offset, or NULL. */
static TrnRing *trn_ring_at(TrnPartState *s, int e, uint64_t off,
			    TrnQueue **qp, uint32_t *reg, bool *m2s)
{
	uint64_t first;

	if (off >= TRN_M2S_Q0 && off < TRN_M2S_Q0 + TRN_QUEUES * TRN_Q_STRIDE) {
		first = TRN_M2S_Q0;
		*m2s = true;
	} else if (off >= TRN_S2M_Q0 &&
		   off < TRN_S2M_Q0 + TRN_QUEUES * TRN_Q_STRIDE) {
		first = TRN_S2M_Q0;
		*m2s = false;
	} else {
		return NULL;
	}
	*qp = &s->q[e][(off - first) / TRN_Q_STRIDE];
	*reg = (off - first) % TRN_Q_STRIDE;
	return *m2s ? &(*qp)->m2s : &(*qp)->s2m;
}

static uint64_t trn_queue_read(TrnPartState *s, int e, uint64_t off)
{
	TrnQueue *q;
	TrnRing *r;
	uint32_t reg;
	bool m2s;

	r = trn_ring_at(s, e, off, &q, &reg, &m2s);
	if (!r)
		return 0;
	switch (reg) {
	case TRN_Q_CFG:
		return r->cfg;
	case TRN_Q_STATUS:
		return q->status;
	case TRN_Q_DRBP_LO:
		return (uint32_t)r->base;
	case TRN_Q_DRBP_HI:
		return r->base >> 32;
	case TRN_Q_DRL:
		return r->entries;
	case TRN_Q_DRHP:
		return r->head | (uint32_t)r->ring_id << 30;
	case TRN_Q_DRTP:
		return r->tail;
	}
	return 0;
}

static void trn_queue_write(TrnPartState *s, int e, uint64_t off,
			    uint32_t val)
{
	TrnQueue *q;
	TrnRing *r;
	uint32_t reg;
	bool m2s;

	r = trn_ring_at(s, e, off, &q, &reg, &m2s);
	if (!r)
		return;
	switch (reg) {
	case TRN_Q_CFG:
		r->cfg = val;
		qemu_bh_schedule(s->dma_bh);
		break;
	case TRN_Q_DRBP_LO:
		/* The base is 64-byte aligned; the low bits read as zero. */
		r->base = (r->base & ~0xffffffffULL) | (val & ~0x3fu);
		break;
	case TRN_Q_DRBP_HI:
		r->base = (r->base & 0xffffffffULL) | (uint64_t)val << 32;
		break;
	case TRN_Q_DRL:
		/* A ring outside the part's limits holds nothing. */
		r->entries = val >= TRN_Q_RING_MIN && val <= TRN_Q_RING_MAX ?
			     val : 0;
		r->head = 0;
		r->tail = 0;
		r->ring_id = 1;
		break;
	case TRN_Q_DRTP_INC:
		if (!r->entries)
			break;
		r->tail = (r->tail + val % r->entries) % r->entries;
		qemu_bh_schedule(s->dma_bh);
		break;
	case TRN_Q_M2S_SW_CTRL:
	case TRN_Q_S2M_SW_CTRL:
		if ((reg == TRN_Q_M2S_SW_CTRL) != m2s)
			break;
		/* A wedged engine's queues ignore it: only a reset helps. */
		if (val & TRN_Q_SW_CTRL_RST_Q && s->wedged_engine != (uint32_t)e) {
			r->head = 0;
			r->tail = 0;
			r->ring_id = 1;
			q->status = 0;
		}
		break;
	}
}

static uint64_t trn_misc_read(TrnPartState *s, uint64_t off)
{
	/* A real part's firmware does not answer while it resets the part. */
	if (s->real && s->reset_reg)
		return TRN_FW_NOT_READY;
	switch (off) {
	case TRN_MISC_FW_API:
		return 1;
	case TRN_MISC_ROUTING_ID:
		return s->routing_id;
	case TRN_MISC_SERIAL_LO:
		return (uint32_t)s->serial;
	case TRN_MISC_SERIAL_HI:
		return s->serial >> 32;
	}
	if (!s->real)
		return 0;
	switch (off) {
	case TRN_MISC_FW_TPB_MAP:
		return s->fw_tpb_map;
	case TRN_MISC_FW_RESET:
		return s->fw_reset;
	case TRN_MISC_FW_STATUS:
		/* Its busy bit (3) shows only in 0xdeadbeef, above. */
		return 0;
	}
	return 0;
}

static uint64_t trn_reset_ns(TrnPartState *s)
{
	return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
	       (s->real ? TRN_FW_RESET_NS : TRN_RESET_NS);
}

/* A device reset starts: no DMA runs until trn_reset_done(). */
static void trn_reset_start(TrnPartState *s)
{
	s->reset_reg = 1;
	if (!s->reset_stuck)
		timer_mod(&s->reset_timer, trn_reset_ns(s));
}

/*
 * A real part's firmware mailbox: a reset type (1 the device, 2 the cores
 * of the map) and a doorbell. The model resets the whole part for either.
 */
static void trn_misc_write(TrnPartState *s, uint64_t off, uint32_t val)
{
	if (!s->real || s->reset_reg)
		return;
	switch (off) {
	case TRN_MISC_FW_TPB_MAP:
		s->fw_tpb_map = val;
		break;
	case TRN_MISC_FW_RESET:
		s->fw_reset = val;
		break;
	case TRN_MISC_FW_DOORBELL:
		if (s->fw_deaf) {
			/* The "fw-deaf" knob: the request stays untaken. */
			s->fw_deaf--;
			break;
		}
		if (s->fw_reset == 1 || s->fw_reset == 2)
			trn_reset_start(s);
		break;
	}
}

/* Semaphores and events of NeuronCore @nc; @off inside its window. */
static uint32_t *trn_sem_at(TrnPartState *s, unsigned int nc, uint64_t off,
			    uint64_t *kind)
{
	uint64_t block;

	if (off >= TRN_NC_EVENTS && off < TRN_NC_EVENTS + TRN_NC_SEMS * 4) {
		*kind = TRN_NC_EVENTS;
		return &s->event[nc][(off - TRN_NC_EVENTS) / 4];
	}
	for (block = TRN_NC_SEM_READ; block <= TRN_NC_SEM_DECR; block += 0x400) {
		if (off >= block && off < block + TRN_NC_SEMS * 4) {
			*kind = block;
			return &s->sem[nc][(off - block) / 4];
		}
	}
	return NULL;
}

static uint64_t trn_bar0_read(void *opaque, hwaddr addr, unsigned int size)
{
	TrnPartState *s = opaque;
	uint64_t off, kind;
	uint32_t *sem;
	int e;

	if (s->removed)
		return ~0ULL;
	if (addr == TRN_RESET_REG)
		return s->real ? 0 : s->reset_reg;
	if (addr >= TRN_MISC_BASE && addr < TRN_MISC_BASE + TRN_MISC_SIZE)
		return trn_misc_read(s, addr - TRN_MISC_BASE);
	if (addr >= TRN_NC_BASE &&
	    addr < TRN_NC_BASE + TRN_NC_COUNT * TRN_NC_STRIDE) {
		sem = trn_sem_at(s, (addr - TRN_NC_BASE) / TRN_NC_STRIDE,
				 (addr - TRN_NC_BASE) % TRN_NC_STRIDE, &kind);
		return sem ? *sem : 0;
	}
	e = trn_engine_at(addr, &off);
	if (e >= 0)
		return trn_queue_read(s, e, off);
	return 0;
}

static void trn_bar0_write(void *opaque, hwaddr addr, uint64_t val,
			   unsigned int size)
{
	TrnPartState *s = opaque;
	uint64_t off, kind;
	uint32_t *sem;
	int e;

	if (s->removed)
		return;
	if (addr == TRN_RESET_REG) {
		/*
		 * QEMU mode: any value starts a reset; the register reads 0
		 * once done. A real part has no such register.
		 */
		if (!s->real)
			trn_reset_start(s);
		return;
	}
	if (addr >= TRN_MISC_BASE && addr < TRN_MISC_BASE + TRN_MISC_SIZE) {
		trn_misc_write(s, addr - TRN_MISC_BASE, val);
		return;
	}
	if (addr >= TRN_NC_BASE &&
	    addr < TRN_NC_BASE + TRN_NC_COUNT * TRN_NC_STRIDE) {
		sem = trn_sem_at(s, (addr - TRN_NC_BASE) / TRN_NC_STRIDE,
				 (addr - TRN_NC_BASE) % TRN_NC_STRIDE, &kind);
		if (!sem)
			return;
		if (kind == TRN_NC_EVENTS || kind == TRN_NC_SEM_SET)
			*sem = val;
		else if (kind == TRN_NC_SEM_INCR)
			*sem += val;
		else if (kind == TRN_NC_SEM_DECR)
			*sem -= val;
		return;
	}
	e = trn_engine_at(addr, &off);
	if (e >= 0)
		trn_queue_write(s, e, off, val);
}

static const MemoryRegionOps trn_bar0_ops = {
	.read = trn_bar0_read,
	.write = trn_bar0_write,
	.endianness = DEVICE_LITTLE_ENDIAN,
	.valid = { .min_access_size = 4, .max_access_size = 4 },
	.impl = { .min_access_size = 4, .max_access_size = 4 },
};

static void trn_part_reset_state(TrnPartState *s)
{
	unsigned int e, qi;

	for (e = 0; e < TRN_ENGINES; e++)
		for (qi = 0; qi < TRN_QUEUES; qi++) {
			trn_queue_reset(&s->q[e][qi]);
			s->q[e][qi].m2s.entries = 0;
			s->q[e][qi].s2m.entries = 0;
			s->q[e][qi].m2s.base = 0;
			s->q[e][qi].s2m.base = 0;
		}
	memset(s->sem, 0, sizeof(s->sem));
	memset(s->event, 0, sizeof(s->event));
	s->wedged_engine = UINT32_MAX;
}

static void trn_reset_done(void *opaque)
{
	TrnPartState *s = opaque;

	trn_part_reset_state(s);
	s->reset_reg = 0;
	if (s->real) {
		/* The firmware took the request and is back. */
		s->fw_reset = 0;
		s->fw_resets++;
	}
}

static void trn_part_realize(PCIDevice *pdev, Error **errp)
{
	TrnPartState *s = TRN_PART(pdev);
	uint64_t hbm_size;

	if (s->device_id != TRN_DEVICE_TRN2 &&
	    s->device_id != TRN_DEVICE_TRN3_0 &&
	    s->device_id != TRN_DEVICE_TRN3_1) {
		error_setg(errp, "trn-part: device-id 0x%04x is not a Trn2 (0x7364) or Trn3 (0x7564, 0x7565) part",
			   s->device_id);
		return;
	}
	s->real = s->revision != TRN_REVISION_QEMU;
	if (s->real) {
		s->stack_size = s->device_id == TRN_DEVICE_TRN2 ?
				TRN2_STACK_ACTIVE : TRN3_STACK_ACTIVE;
	} else if (s->hbm_stack_mib < 32 || s->hbm_stack_mib > 1024 ||
		   !is_power_of_2(s->hbm_stack_mib)) {
		error_setg(errp, "trn-part: hbm-stack-mib %u is not a power of two from 32 to 1024",
			   s->hbm_stack_mib);
		return;
	} else {
		s->stack_size = (uint64_t)s->hbm_stack_mib * MiB;
	}
	hbm_size = TRN_STACKS * s->stack_size;

	pci_set_word(pdev->config + PCI_DEVICE_ID, s->device_id);
	pci_set_byte(pdev->config + PCI_REVISION_ID, s->revision);

	memory_region_init_io(&s->bar0, OBJECT(s), &trn_bar0_ops, s,
			      "trn-part-bar0", TRN_BAR0_SIZE);
	/*
	 * Not reserved: of a real part's 96 or 144 GiB, host memory backs
	 * only the pages the guest touches.
	 */
	memory_region_init_ram_flags_nomigrate(&s->hbm, OBJECT(s),
					       "trn-part-hbm", hbm_size,
					       RAM_NORESERVE, errp);
	if (*errp)
		return;
	s->hbm_ptr = memory_region_get_ram_ptr(&s->hbm);
	if (s->real) {
		unsigned int i;

		memory_region_init(&s->hbm_bar, OBJECT(s), "trn-part-bar4",
				   TRN_STACKS * TRN_REAL_STACK_STRIDE);
		for (i = 0; i < TRN_STACKS; i++) {
			memory_region_init_alias(&s->hbm_stack[i], OBJECT(s),
						 "trn-part-hbm-stack", &s->hbm,
						 i * s->stack_size,
						 s->stack_size);
			memory_region_add_subregion(&s->hbm_bar,
						    i * TRN_REAL_STACK_STRIDE,
						    &s->hbm_stack[i]);
		}
	}
	/*
	 * Both 64-bit and prefetchable: a 4 GiB register BAR only fits a
	 * PCIe root port's 64-bit window, which is the prefetchable one.
	 */
	pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
			 PCI_BASE_ADDRESS_MEM_TYPE_64 |
			 PCI_BASE_ADDRESS_MEM_PREFETCH, &s->bar0);
	pci_register_bar(pdev, 4, PCI_BASE_ADDRESS_SPACE_MEMORY |
			 PCI_BASE_ADDRESS_MEM_TYPE_64 |
			 PCI_BASE_ADDRESS_MEM_PREFETCH,
			 s->real ? &s->hbm_bar : &s->hbm);

	if (pci_bus_is_express(pci_get_bus(pdev))) {
		if (pcie_endpoint_cap_init(pdev, 0x80) < 0) {
			error_setg(errp, "trn-part: no room for the PCIe capability");
			return;
		}
	} else {
		pdev->cap_present &= ~QEMU_PCI_CAP_EXPRESS;
	}

	s->dma_bh = qemu_bh_new_guarded(trn_dma_bh, s,
					&DEVICE(s)->mem_reentrancy_guard);
	timer_init_ns(&s->reset_timer, QEMU_CLOCK_VIRTUAL, trn_reset_done, s);
	trn_part_reset_state(s);
}

static void trn_part_exit(PCIDevice *pdev)
{
	TrnPartState *s = TRN_PART(pdev);

	timer_del(&s->reset_timer);
	qemu_bh_delete(s->dma_bh);
	if (pci_is_express(pdev))
		pcie_cap_exit(pdev);
}

static void trn_part_qdev_reset(DeviceState *dev)
{
	TrnPartState *s = TRN_PART(dev);

	timer_del(&s->reset_timer);
	s->reset_reg = 0;
	s->fw_reset = 0;
	trn_part_reset_state(s);
}

static bool trn_get_dma_error(Object *obj, Error **errp)
{
	return TRN_PART(obj)->dma_error;
}

static void trn_set_dma_error(Object *obj, bool val, Error **errp)
{
	TRN_PART(obj)->dma_error = val;
}

static bool trn_get_reset_stuck(Object *obj, Error **errp)
{
	return TRN_PART(obj)->reset_stuck;
}

/* Clearing it lets a pending reset finish, as a freed part would. */
static void trn_set_reset_stuck(Object *obj, bool val, Error **errp)
{
	TrnPartState *s = TRN_PART(obj);

	s->reset_stuck = val;
	if (!val && s->reset_reg && !timer_pending(&s->reset_timer))
		timer_mod(&s->reset_timer, trn_reset_ns(s));
}

static bool trn_get_removed(Object *obj, Error **errp)
{
	return TRN_PART(obj)->removed;
}

static void trn_set_removed(Object *obj, bool val, Error **errp)
{
	TRN_PART(obj)->removed = val;
}

static void trn_part_instance_init(Object *obj)
{
	TrnPartState *s = TRN_PART(obj);

	/* A PCIe endpoint where the bus is PCIe (realize decides). */
	s->pdev.cap_present |= QEMU_PCI_CAP_EXPRESS;
	s->stuck_queue = UINT32_MAX;
	object_property_add_uint32_ptr(obj, "stuck-queue", &s->stuck_queue,
				       OBJ_PROP_FLAG_READWRITE);
	s->stuck_engine = UINT32_MAX;
	object_property_add_uint32_ptr(obj, "stuck-engine", &s->stuck_engine,
				       OBJ_PROP_FLAG_READWRITE);
	s->wedged_engine = UINT32_MAX;
	object_property_add_uint32_ptr(obj, "wedged-engine", &s->wedged_engine,
				       OBJ_PROP_FLAG_READWRITE);
	object_property_add_bool(obj, "dma-error", trn_get_dma_error,
				 trn_set_dma_error);
	object_property_add_bool(obj, "reset-stuck", trn_get_reset_stuck,
				 trn_set_reset_stuck);
	object_property_add_bool(obj, "removed", trn_get_removed,
				 trn_set_removed);
	object_property_add_uint32_ptr(obj, "fw-resets", &s->fw_resets,
				       OBJ_PROP_FLAG_READ);
	object_property_add_uint32_ptr(obj, "fw-deaf", &s->fw_deaf,
				       OBJ_PROP_FLAG_READWRITE);
}

static Property trn_part_properties[] = {
	DEFINE_PROP_UINT16("device-id", TrnPartState, device_id,
			   TRN_DEVICE_TRN2),
	/* Not 255: a real part, as far as a driver can tell. */
	DEFINE_PROP_UINT8("revision", TrnPartState, revision,
			  TRN_REVISION_QEMU),
	DEFINE_PROP_UINT32("hbm-stack-mib", TrnPartState, hbm_stack_mib, 64),
	DEFINE_PROP_UINT32("routing-id", TrnPartState, routing_id, 0),
	DEFINE_PROP_UINT64("serial", TrnPartState, serial,
			   0x7e57000000000001ULL),
	DEFINE_PROP_END_OF_LIST(),
};

static void trn_part_class_init(ObjectClass *klass, void *data)
{
	DeviceClass *dc = DEVICE_CLASS(klass);
	PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

	k->realize = trn_part_realize;
	k->exit = trn_part_exit;
	k->vendor_id = TRN_VENDOR_AMAZON;
	k->device_id = TRN_DEVICE_TRN2;
	k->revision = TRN_REVISION_QEMU;
	k->class_id = PCI_CLASS_OTHERS;
	dc->desc = "AWS Trainium2/3 part (model: AWS's QEMU mode, or a real part's layout)";
	dc->reset = trn_part_qdev_reset;
	device_class_set_props(dc, trn_part_properties);
	set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo trn_part_info = {
	.name = TYPE_TRN_PART,
	.parent = TYPE_PCI_DEVICE,
	.instance_size = sizeof(TrnPartState),
	.instance_init = trn_part_instance_init,
	.class_init = trn_part_class_init,
	.interfaces = (InterfaceInfo[]) {
		{ INTERFACE_PCIE_DEVICE },
		{ INTERFACE_CONVENTIONAL_PCI_DEVICE },
		{ },
	},
};

static void trn_part_register_types(void)
{
	type_register_static(&trn_part_info);
}

type_init(trn_part_register_types)
