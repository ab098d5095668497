/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the shared ring between one client process and iosigd
 * (docs/daemon.md "The ring").
 *
 * One memfd, mapped by both, sealed against shrinking:
 *
 *   header   (IOSD_RING_HDR bytes) magic, version, geometry; the producer's
 *            line (sq_tail, waiters) and the consumer's (sq_head, flags,
 *            cq_seq) on separate cache lines
 *   entries  N x struct iosd_entry (N a power of two)
 *   data     D bytes (a power of two): write payloads and read results
 *
 * The client is the only producer: it fills a free entry (and its data,
 * contiguous in the data area), then publishes it by advancing sq_tail with
 * release order.  The daemon is the only consumer: it copies each published
 * entry out of shared memory, validates the copy (iosd_entry_check()), and
 * later completes it by storing result (and result2) and then state = DONE
 * with release order.  Completions come in any order (policies reorder);
 * the client reclaims entries in ring order, so an entry and its data are
 * reused only when it and every earlier one are done.
 *
 * Doorbells.  The daemon sets IOSD_RING_NEED_WAKEUP in flags before it
 * sleeps and then looks at sq_tail once more; the client, after publishing,
 * writes the "kick daemon" eventfd only when that flag is set (a busy
 * daemon costs the client no system call).  Waiting for completions uses a
 * futex on cq_seq, which the daemon bumps after every batch of completions
 * and wakes when `waiters` says a thread sleeps on it: every waiting thread
 * of the client wakes and looks at its own entry, and no wake-up is lost
 * (the futex compares the counter in the kernel).  A client that waits for
 * space (a full ring) counts itself in space_waiters and kicks the daemon,
 * which then expedites what its policies hold of that client.
 *
 * Everything here is plain arithmetic on the mapping plus the futex call;
 * the locking (one producer) is the caller's.
 */
#ifndef IOSIG_PROTO_RING_H
#define IOSIG_PROTO_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IOSD_RING_MAGIC 0x474e5249u       /* "IRNG" */
#define IOSD_RING_VERSION 1
#define IOSD_RING_HDR 256                 /* bytes before the entries */
#define IOSD_RING_ENTRIES_MIN 8u
#define IOSD_RING_ENTRIES_MAX 65536u
#define IOSD_RING_DATA_MIN (64ull << 10)
#define IOSD_RING_DATA_MAX (1ull << 30)
#define IOSD_RING_ALIGN 64                /* data allocations start at multiples of this */

/* Ring flags (hdr.flags, written by the daemon). */
#define IOSD_RING_NEED_WAKEUP 1u          /* the daemon sleeps: kick it after publishing */
#define IOSD_RING_HOME 2u                 /* the daemon stopped with everything of this session's
                                             files at home: no recovery to wait for */
#define IOSD_RING_SHARED 4u               /* another session has (had) one of this session's files
                                             registered, or this one a tiered file twice: writes go
                                             through the ring, none as WRITTEN (set before that
                                             session's REGISTERED) */

enum iosd_op {
	IOSD_OP_WRITE = 1,        /* length bytes of data at offset */
	IOSD_OP_APPEND = 2,       /* length bytes at the file's end; result2 = the offset used */
	IOSD_OP_READ = 3,         /* up to length bytes at offset into the data area */
	IOSD_OP_FSYNC = 4,        /* every earlier write of the file durable, then fsync */
	IOSD_OP_FDATASYNC = 5,    /* the same with fdatasync */
	IOSD_OP_SYNC_RANGE = 6,   /* sync_file_range(offset, length, aux) after earlier writes */
	IOSD_OP_TRUNCATE = 7,     /* ftruncate(offset) after every earlier operation */
	IOSD_OP_FALLOCATE = 8,    /* fallocate(aux, offset, length) after every earlier one */
	IOSD_OP_BARRIER = 9,      /* done when every earlier write of the file is done */
	IOSD_OP_WRITTEN = 10,     /* the client wrote length bytes at offset itself (no data
				   * here): schedule their write-back; done at once.  On a
				   * tiered registration only under IOSD_R2_HOME */
	IOSD_OP_MAX = 10
};

/* result2 of a done WRITE (set by the daemon): it went into the page cache
 * as it is, and the daemon's tier holds nothing of the file - the client
 * may write the handle's next large writes itself (WRITTEN) while this is
 * the newest done WRITE or APPEND of the handle and nothing of its own is
 * pending; otherwise not on a tiered registration (docs/daemon.md). */
#define IOSD_R2_HOME 1ull

/* Entry flags (set by the client). */
#define IOSD_EF_WAITED 1u        /* a thread waits for this entry: finish it soon */
#define IOSD_EF_MASK IOSD_EF_WAITED

/* BARRIER aux: the process closes its last descriptor of the file, or
 * detaches it (mmap ...): the file must be complete at home - data the
 * daemon keeps in a tier written there first (docs/tiers.md). */
#define IOSD_BARRIER_HOME 1u

/* Entry states. */
enum iosd_state {
	IOSD_ST_FREE = 0,         /* the client may fill it */
	IOSD_ST_PUBLISHED = 1,    /* filled by the client (before sq_tail moves past it) */
	IOSD_ST_INGESTED = 2,     /* APPEND: the daemon assigned result2 (the offset) */
	IOSD_ST_DONE = 3,         /* result (and result2) are final */
};

/* One operation.  64 bytes. */
struct iosd_entry {
	uint64_t offset;          /* file offset; TRUNCATE: the new size */
	uint64_t length;          /* bytes; SYNC_RANGE: 0 = to the end of the file */
	uint64_t data_off;        /* WRITE/APPEND/READ: position in the data area */
	int64_t result;           /* daemon: bytes done, 0, or -errno */
	uint64_t result2;         /* daemon: APPEND: the offset written at */
	uint32_t seq;             /* the ring position it was published at (sq_tail value) */
	uint32_t handle;          /* from REGISTER */
	uint16_t op;              /* enum iosd_op */
	uint16_t flags;           /* IOSD_EF_* */
	uint32_t aux;             /* FALLOCATE: mode; SYNC_RANGE: flags */
	_Atomic uint32_t state;   /* enum iosd_state */
	uint32_t reserved0;       /* 0 */
};

/* The header at the start of the mapping. */
struct iosd_ring_hdr {
	uint32_t magic;           /* IOSD_RING_MAGIC */
	uint32_t version;         /* IOSD_RING_VERSION */
	uint32_t entries;         /* N */
	uint32_t entry_size;      /* sizeof(struct iosd_entry) */
	uint64_t data_bytes;      /* D */
	uint64_t entries_off;     /* IOSD_RING_HDR */
	uint64_t data_off;        /* where the data area starts */
	uint64_t total;           /* bytes of the whole mapping */
	uint8_t pad0[64 - 48];
	/* producer (client) line */
	_Atomic uint32_t sq_tail;   /* entries published so far (wraps) */
	_Atomic uint32_t waiters;   /* client threads sleeping on cq_seq */
	_Atomic uint32_t space_waiters; /* client threads waiting for ring space */
	uint8_t pad1[64 - 12];
	/* consumer (daemon) line */
	_Atomic uint32_t sq_head;   /* entries the daemon has copied out so far */
	_Atomic uint32_t flags;     /* IOSD_RING_* */
	_Atomic uint32_t cq_seq;    /* bumped after completions (futex word) */
	uint8_t pad2[64 - 12];
	uint8_t pad3[IOSD_RING_HDR - 192];
};

/* A view of a mapped ring (either side). */
struct iosd_ring {
	struct iosd_ring_hdr *hdr;
	struct iosd_entry *entries;
	uint8_t *data;
	uint32_t nentries;        /* N */
	uint32_t mask;            /* N - 1 */
	uint64_t data_bytes;      /* D */
};

/* True if N and D are acceptable (powers of two within the bounds). */
bool iosd_ring_geometry_ok(uint32_t entries, uint64_t data);
/* Bytes of a mapping for N and D (0 if the geometry is not ok). */
uint64_t iosd_ring_bytes(uint32_t entries, uint64_t data);
/* Largest data one entry may carry: D/4, at most 1 MiB. */
uint64_t iosd_ring_max_io(uint64_t data);
/* Largest range one WRITTEN entry may name. */
#define IOSD_WRITTEN_MAX (1ull << 30)
/* Writes of at least this many bytes the client does itself, straight into
 * the page cache, and names in a WRITTEN entry (one copy instead of two:
 * docs/daemon.md "The ring"). */
#define IOSD_WRITTEN_MIN (32ull << 10)

/* Client: writes a fresh header into mem (iosd_ring_bytes() bytes, zeroed)
 * and sets up the view. */
void iosd_ring_init(struct iosd_ring *r, void *mem, uint32_t entries, uint64_t data);
/*
 * Either side: sets up the view of mem for the geometry the peer announced
 * (never read back from the shared header, which the peer may change).
 * 0, or -EINVAL when the geometry is not ok or size is not its size.
 */
int iosd_ring_view(struct iosd_ring *r, void *mem, uint64_t size, uint32_t entries,
		   uint64_t data);

/*
 * Consumer: validates a copy of a published entry taken at ring position
 * `pos` against the geometry: the position, the op, its flags, reserved
 * fields, offsets and lengths (no overflow, inside the data area, shapes
 * each op requires).  0, or -EBADMSG with a static reason in *ret_why.
 * The handle is the caller's to check.
 */
int iosd_entry_check(const struct iosd_ring *r, const struct iosd_entry *e, uint32_t pos,
		     const char **ret_why);

/* "WRITE" ... or "unknown". */
const char *iosd_op_name(unsigned op);
/* True if a FALLOCATE entry may carry this fallocate(2) mode. */
bool iosd_fallocate_mode_ok(uint32_t mode);

/* ---- consumer (daemon) ---- */

/* Published entries not yet copied out, given the daemon's own head
 * (never trust hdr->sq_head): sq_tail - head, or UINT32_MAX when the
 * producer claims more than N (a corrupt ring). */
uint32_t iosd_ring_pending(const struct iosd_ring *r, uint32_t head);
/* Copies the entry at position pos out of shared memory. */
void iosd_ring_copy(const struct iosd_ring *r, uint32_t pos, struct iosd_entry *ret);
/* Records that entries before `head` are copied out (for the client's
 * take-over: those after it were never seen). */
void iosd_ring_set_head(struct iosd_ring *r, uint32_t head);
/* APPEND: stores the offset and state INGESTED. */
void iosd_ring_assign(struct iosd_ring *r, uint32_t pos, uint64_t offset);
/* Stores result, result2 and state DONE (release).  The caller calls
 * iosd_ring_notify() once after a batch. */
void iosd_ring_complete(struct iosd_ring *r, uint32_t pos, int64_t result, uint64_t result2);
/* After a batch of completions: bumps cq_seq and wakes the sleepers. */
void iosd_ring_notify(struct iosd_ring *r);
/*
 * Before sleeping: sets NEED_WAKEUP, then looks at sq_tail once more.
 * True (flag cleared again) if entries arrived meanwhile: do not sleep.
 */
bool iosd_ring_sleep_prepare(struct iosd_ring *r, uint32_t head);
/* After waking: clears NEED_WAKEUP (a busy daemon needs no kicks). */
void iosd_ring_awake(struct iosd_ring *r);

/* ---- producer (client) ---- */

/* The producer's private state: what it allocated and may reclaim.  Lives
 * in the client's memory, never in the shared mapping. */
struct iosd_prod {
	struct iosd_ring *r;
	uint32_t tail;            /* next position to publish (== hdr->sq_tail) */
	uint32_t reclaim;         /* oldest position not reclaimed yet */
	uint64_t data_head;       /* bytes allocated so far (monotonic) */
	uint64_t data_tail;       /* bytes released so far (monotonic) */
	uint64_t *slot_end;       /* per entry: data_head after its allocation */
	uint8_t *hold;            /* per entry: non-zero while a waiter still needs it */
};

/* Sets up p for r; slot_end and hold must hold r->nentries values each
 * (hold zeroed). */
void iosd_prod_init(struct iosd_prod *p, struct iosd_ring *r, uint64_t *slot_end, uint8_t *hold);
/*
 * Reserves the next entry and `len` contiguous data bytes (0 = none) and
 * returns the entry (state FREE, caller fills it) and the data offset.
 * -EAGAIN when the ring lacks an entry or the space now (reclaim or wait),
 * -EINVAL when len exceeds iosd_ring_max_io().
 */
int iosd_prod_reserve(struct iosd_prod *p, uint64_t len, struct iosd_entry **ret_entry,
		      uint64_t *ret_data_off);
/* Publishes the reserved entry (sets seq and state, advances sq_tail) and
 * returns its position.  True in *ret_kick when the daemon sleeps and must
 * be kicked. */
uint32_t iosd_prod_publish(struct iosd_prod *p, bool *ret_kick);
/* Called for each entry reclaimed (its result is final: a writer's error
 * is recorded here). */
typedef void (*iosd_reclaim_fn)(void *ctx, const struct iosd_entry *e);
/* Reclaims done entries from the oldest on, stopping at the first one not
 * done or held (p->hold: a waiter has not read its result or data yet);
 * fn (may be NULL) sees each.  Returns how many. */
uint32_t iosd_prod_reclaim(struct iosd_prod *p, iosd_reclaim_fn fn, void *ctx);
/* Entries published and not reclaimed. */
static inline uint32_t iosd_prod_outstanding(const struct iosd_prod *p)
{
	return p->tail - p->reclaim;
}
/* The entry at position pos. */
static inline struct iosd_entry *iosd_ring_entry(const struct iosd_ring *r, uint32_t pos)
{
	return &r->entries[pos & r->mask];
}
/* Its state (acquire: result and result2 are visible once DONE is). */
static inline uint32_t iosd_entry_state(const struct iosd_entry *e)
{
	return atomic_load_explicit(&e->state, memory_order_acquire);
}

/* The completion counter to pass to iosd_ring_wait(). */
uint32_t iosd_ring_cq_seq(const struct iosd_ring *r);
/*
 * Sleeps until cq_seq differs from `seen`, a wake-up, a signal or
 * timeout_ms (-1: none).  Registers in `waiters` while it sleeps.
 */
void iosd_ring_wait(struct iosd_ring *r, uint32_t seen, int timeout_ms);
/* Wakes every thread in iosd_ring_wait() (the client's watcher after a
 * take-over; the daemon through iosd_ring_notify()). */
void iosd_ring_wake_all(struct iosd_ring *r);

#endif /* IOSIG_PROTO_RING_H */
