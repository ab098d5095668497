/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the shared ring: geometry, entry validation, the consumer's and
 * the producer's steps, the futex doorbell (see ring.h).
 */
#include "ring.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/falloc.h>

_Static_assert(sizeof(struct iosd_entry) == 64, "entry layout");
_Static_assert(sizeof(struct iosd_ring_hdr) == IOSD_RING_HDR, "header layout");
_Static_assert(offsetof(struct iosd_ring_hdr, sq_tail) == 64, "producer line");
_Static_assert(offsetof(struct iosd_ring_hdr, sq_head) == 128, "consumer line");

/* sync_file_range(2) flags, as in <fcntl.h> (not included: the values are
 * part of the protocol). */
#define SFR_WAIT_BEFORE 1u
#define SFR_WRITE 2u
#define SFR_WAIT_AFTER 4u

/* fallocate(2) modes a client may ask for. */
#define FALLOC_KNOWN (FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE | \
		      FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE | FALLOC_FL_UNSHARE_RANGE)

static bool pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

bool iosd_ring_geometry_ok(uint32_t entries, uint64_t data)
{
	return pow2(entries) && entries >= IOSD_RING_ENTRIES_MIN &&
	       entries <= IOSD_RING_ENTRIES_MAX && pow2(data) && data >= IOSD_RING_DATA_MIN &&
	       data <= IOSD_RING_DATA_MAX;
}

uint64_t iosd_ring_bytes(uint32_t entries, uint64_t data)
{
	uint64_t data_off;

	if (!iosd_ring_geometry_ok(entries, data))
		return 0;
	/* The data area starts on a page (4 KiB) boundary. */
	data_off = (IOSD_RING_HDR + (uint64_t)entries * sizeof(struct iosd_entry) + 4095) & ~4095ull;
	return data_off + data;
}

static uint64_t data_start(uint32_t entries)
{
	return (IOSD_RING_HDR + (uint64_t)entries * sizeof(struct iosd_entry) + 4095) & ~4095ull;
}

uint64_t iosd_ring_max_io(uint64_t data)
{
	uint64_t q = data / 4;

	return q < (1ull << 20) ? q : 1ull << 20;
}

static void set_view(struct iosd_ring *r, void *mem, uint32_t entries, uint64_t data)
{
	r->hdr = mem;
	r->entries = (struct iosd_entry *)((uint8_t *)mem + IOSD_RING_HDR);
	r->data = (uint8_t *)mem + data_start(entries);
	r->nentries = entries;
	r->mask = entries - 1;
	r->data_bytes = data;
}

void iosd_ring_init(struct iosd_ring *r, void *mem, uint32_t entries, uint64_t data)
{
	struct iosd_ring_hdr *h = mem;

	set_view(r, mem, entries, data);
	h->magic = IOSD_RING_MAGIC;
	h->version = IOSD_RING_VERSION;
	h->entries = entries;
	h->entry_size = sizeof(struct iosd_entry);
	h->data_bytes = data;
	h->entries_off = IOSD_RING_HDR;
	h->data_off = data_start(entries);
	h->total = iosd_ring_bytes(entries, data);
	atomic_store_explicit(&h->sq_tail, 0, memory_order_relaxed);
	atomic_store_explicit(&h->waiters, 0, memory_order_relaxed);
	atomic_store_explicit(&h->space_waiters, 0, memory_order_relaxed);
	atomic_store_explicit(&h->sq_head, 0, memory_order_relaxed);
	atomic_store_explicit(&h->flags, 0, memory_order_relaxed);
	atomic_store_explicit(&h->cq_seq, 0, memory_order_relaxed);
}

int iosd_ring_view(struct iosd_ring *r, void *mem, uint64_t size, uint32_t entries,
		   uint64_t data)
{
	if (!iosd_ring_geometry_ok(entries, data) || size != iosd_ring_bytes(entries, data))
		return -EINVAL;
	set_view(r, mem, entries, data);
	return 0;
}

static const char *const op_names[IOSD_OP_MAX + 1] = {
	[IOSD_OP_WRITE] = "WRITE", [IOSD_OP_APPEND] = "APPEND", [IOSD_OP_READ] = "READ",
	[IOSD_OP_FSYNC] = "FSYNC", [IOSD_OP_FDATASYNC] = "FDATASYNC",
	[IOSD_OP_SYNC_RANGE] = "SYNC_RANGE", [IOSD_OP_TRUNCATE] = "TRUNCATE",
	[IOSD_OP_FALLOCATE] = "FALLOCATE", [IOSD_OP_BARRIER] = "BARRIER",
	[IOSD_OP_WRITTEN] = "WRITTEN",
};

const char *iosd_op_name(unsigned op)
{
	return op >= 1 && op <= IOSD_OP_MAX ? op_names[op] : "unknown";
}

bool iosd_fallocate_mode_ok(uint32_t mode)
{
	return !(mode & ~(uint32_t)FALLOC_KNOWN);
}

static int bad(const char **ret_why, const char *why)
{
	*ret_why = why;
	return -EBADMSG;
}

/* A file range [off, off + len) that fits loff_t. */
static bool range_ok(uint64_t off, uint64_t len)
{
	return off <= (uint64_t)INT64_MAX && len <= (uint64_t)INT64_MAX - off;
}

int iosd_entry_check(const struct iosd_ring *r, const struct iosd_entry *e, uint32_t pos,
		     const char **ret_why)
{
	uint64_t max_io = iosd_ring_max_io(r->data_bytes);

	if (e->seq != pos)
		return bad(ret_why, "entry position does not match its sequence number");
	if (e->op < 1 || e->op > IOSD_OP_MAX)
		return bad(ret_why, "unknown operation");
	if (e->flags & ~IOSD_EF_MASK)
		return bad(ret_why, "unknown entry flags");
	if (e->reserved0)
		return bad(ret_why, "reserved entry field not zero");
	if (atomic_load_explicit(&e->state, memory_order_relaxed) != IOSD_ST_PUBLISHED)
		return bad(ret_why, "entry not in the published state");
	switch (e->op) {
	case IOSD_OP_WRITE:
	case IOSD_OP_APPEND:
	case IOSD_OP_READ:
		if (!e->length || e->length > max_io)
			return bad(ret_why, "data length out of range");
		if (e->data_off > r->data_bytes || e->length > r->data_bytes - e->data_off)
			return bad(ret_why, "data outside the data area");
		if (e->op == IOSD_OP_APPEND ? e->offset != 0 : !range_ok(e->offset, e->length))
			return bad(ret_why, "file range out of bounds");
		if (e->aux)
			return bad(ret_why, "aux set on a data operation");
		return 0;
	case IOSD_OP_FSYNC:
	case IOSD_OP_FDATASYNC:
	case IOSD_OP_BARRIER:
		if (e->offset || e->length || e->data_off ||
		    (e->aux & ~(e->op == IOSD_OP_BARRIER ? IOSD_BARRIER_HOME : 0u)))
			return bad(ret_why, "arguments on an operation that takes none");
		return 0;
	case IOSD_OP_SYNC_RANGE:
		if (e->data_off || !range_ok(e->offset, e->length))
			return bad(ret_why, "SYNC_RANGE: bad range");
		if (e->aux & ~(SFR_WAIT_BEFORE | SFR_WRITE | SFR_WAIT_AFTER))
			return bad(ret_why, "SYNC_RANGE: unknown flags");
		return 0;
	case IOSD_OP_TRUNCATE:
		if (e->length || e->data_off || e->aux || e->offset > (uint64_t)INT64_MAX)
			return bad(ret_why, "TRUNCATE: bad arguments");
		return 0;
	case IOSD_OP_WRITTEN:
		if (e->data_off || e->aux || !e->length || e->length > IOSD_WRITTEN_MAX ||
		    !range_ok(e->offset, e->length))
			return bad(ret_why, "WRITTEN: bad range");
		return 0;
	case IOSD_OP_FALLOCATE:
		if (e->data_off || !e->length || !range_ok(e->offset, e->length))
			return bad(ret_why, "FALLOCATE: bad range");
		if (!iosd_fallocate_mode_ok(e->aux))
			return bad(ret_why, "FALLOCATE: unknown mode");
		return 0;
	}
	return bad(ret_why, "unknown operation");
}

/* ---- consumer ---- */

uint32_t iosd_ring_pending(const struct iosd_ring *r, uint32_t head)
{
	uint32_t tail = atomic_load_explicit(&r->hdr->sq_tail, memory_order_acquire);
	uint32_t n = tail - head;

	return n > r->nentries ? UINT32_MAX : n;
}

void iosd_ring_copy(const struct iosd_ring *r, uint32_t pos, struct iosd_entry *ret)
{
	/* One copy: every later look at the entry is at this private copy,
	 * whatever the producer writes into the shared one meanwhile. */
	memcpy(ret, iosd_ring_entry(r, pos), sizeof(*ret));
}

void iosd_ring_set_head(struct iosd_ring *r, uint32_t head)
{
	atomic_store_explicit(&r->hdr->sq_head, head, memory_order_release);
}

void iosd_ring_assign(struct iosd_ring *r, uint32_t pos, uint64_t offset)
{
	struct iosd_entry *e = iosd_ring_entry(r, pos);

	e->result2 = offset;
	atomic_store_explicit(&e->state, IOSD_ST_INGESTED, memory_order_release);
}

void iosd_ring_complete(struct iosd_ring *r, uint32_t pos, int64_t result, uint64_t result2)
{
	struct iosd_entry *e = iosd_ring_entry(r, pos);

	e->result = result;
	e->result2 = result2;
	atomic_store_explicit(&e->state, IOSD_ST_DONE, memory_order_release);
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	/* Not FUTEX_PRIVATE_FLAG: the word is shared between processes. */
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

void iosd_ring_notify(struct iosd_ring *r)
{
	atomic_fetch_add_explicit(&r->hdr->cq_seq, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&r->hdr->waiters, memory_order_seq_cst))
		futex(&r->hdr->cq_seq, FUTEX_WAKE, INT_MAX, NULL);
}

void iosd_ring_wake_all(struct iosd_ring *r)
{
	atomic_fetch_add_explicit(&r->hdr->cq_seq, 1, memory_order_seq_cst);
	futex(&r->hdr->cq_seq, FUTEX_WAKE, INT_MAX, NULL);
}

bool iosd_ring_sleep_prepare(struct iosd_ring *r, uint32_t head)
{
	atomic_fetch_or_explicit(&r->hdr->flags, IOSD_RING_NEED_WAKEUP, memory_order_seq_cst);
	if (atomic_load_explicit(&r->hdr->sq_tail, memory_order_seq_cst) != head) {
		iosd_ring_awake(r);
		return true;
	}
	return false;
}

void iosd_ring_awake(struct iosd_ring *r)
{
	atomic_fetch_and_explicit(&r->hdr->flags, ~IOSD_RING_NEED_WAKEUP, memory_order_relaxed);
}

/* ---- producer ---- */

void iosd_prod_init(struct iosd_prod *p, struct iosd_ring *r, uint64_t *slot_end, uint8_t *hold)
{
	memset(p, 0, sizeof(*p));
	p->r = r;
	p->slot_end = slot_end;
	p->hold = hold;
	p->tail = atomic_load_explicit(&r->hdr->sq_tail, memory_order_relaxed);
	p->reclaim = p->tail;
}

int iosd_prod_reserve(struct iosd_prod *p, uint64_t len, struct iosd_entry **ret_entry,
		      uint64_t *ret_data_off)
{
	struct iosd_ring *r = p->r;
	uint64_t need = (len + IOSD_RING_ALIGN - 1) & ~(uint64_t)(IOSD_RING_ALIGN - 1);
	uint64_t head = p->data_head, pos, end;

	if (len > iosd_ring_max_io(r->data_bytes))
		return -EINVAL;
	if (p->tail - p->reclaim >= r->nentries)
		return -EAGAIN;
	if (need) {
		pos = head & (r->data_bytes - 1);
		/* Contiguous: skip the end of the area when it is too short. */
		if (pos + need > r->data_bytes)
			head += r->data_bytes - pos;
		end = head + need;
		if (end - p->data_tail > r->data_bytes)
			return -EAGAIN;
		*ret_data_off = head & (r->data_bytes - 1);
	} else {
		end = p->data_head;
		*ret_data_off = 0;
	}
	p->slot_end[p->tail & r->mask] = end;
	p->data_head = end;
	*ret_entry = iosd_ring_entry(r, p->tail);
	return 0;
}

uint32_t iosd_prod_publish(struct iosd_prod *p, bool *ret_kick)
{
	struct iosd_ring *r = p->r;
	struct iosd_entry *e = iosd_ring_entry(r, p->tail);
	uint32_t pos = p->tail;

	e->seq = pos;
	e->result = 0;
	e->result2 = 0;
	e->reserved0 = 0;
	atomic_store_explicit(&e->state, IOSD_ST_PUBLISHED, memory_order_relaxed);
	p->tail = pos + 1;
	atomic_store_explicit(&r->hdr->sq_tail, p->tail, memory_order_release);
	/* Pairs with iosd_ring_sleep_prepare(): either the daemon sees the
	 * new tail after setting the flag, or we see the flag here. */
	atomic_thread_fence(memory_order_seq_cst);
	*ret_kick = atomic_load_explicit(&r->hdr->flags, memory_order_relaxed) &
		    IOSD_RING_NEED_WAKEUP;
	return pos;
}

uint32_t iosd_prod_reclaim(struct iosd_prod *p, iosd_reclaim_fn fn, void *ctx)
{
	struct iosd_ring *r = p->r;
	uint32_t n = 0;

	while (p->reclaim != p->tail) {
		struct iosd_entry *e = iosd_ring_entry(r, p->reclaim);

		if (iosd_entry_state(e) != IOSD_ST_DONE || p->hold[p->reclaim & r->mask])
			break;
		if (fn)
			fn(ctx, e);
		p->data_tail = p->slot_end[p->reclaim & r->mask];
		atomic_store_explicit(&e->state, IOSD_ST_FREE, memory_order_relaxed);
		p->reclaim++;
		n++;
	}
	return n;
}

uint32_t iosd_ring_cq_seq(const struct iosd_ring *r)
{
	return atomic_load_explicit(&r->hdr->cq_seq, memory_order_acquire);
}

void iosd_ring_wait(struct iosd_ring *r, uint32_t seen, int timeout_ms)
{
	struct timespec ts, *tsp = NULL;

	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		tsp = &ts;
	}
	atomic_fetch_add_explicit(&r->hdr->waiters, 1, memory_order_seq_cst);
	/* The kernel compares cq_seq with `seen` under its lock: a bump
	 * between our check and the sleep makes the call return at once. */
	if (atomic_load_explicit(&r->hdr->cq_seq, memory_order_seq_cst) == seen)
		futex(&r->hdr->cq_seq, FUTEX_WAIT, seen, tsp);
	atomic_fetch_sub_explicit(&r->hdr->waiters, 1, memory_order_seq_cst);
}
