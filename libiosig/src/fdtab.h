/* SPDX-License-Identifier: MIT */
/*
 * fdtab.h - a table indexed by descriptor number, read without locks: the
 * tag table (tag.c) and the interposers' table of descriptors the daemon
 * client handles (interpose.c) are instances of it.  Private.
 *
 * Descriptors below FDTAB_FIRST live in a static array: "is this fd in the
 * table?" is one bounds check and one load.  Higher ones, up to FDTAB_MAX,
 * are in chunks allocated on first use and kept for the life of the
 * process.  Readers use acquire loads; writers must be serialised by the
 * caller (a mutex), which also decides when a replaced value may be freed.
 * Header only: the iosig-redirect preload's front half compiles it without
 * the rest of libiosig.
 */
#ifndef IOSIG_FDTAB_H
#define IOSIG_FDTAB_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#define FDTAB_FIRST 1024u                     /* descriptors in the static array */
#define FDTAB_CHUNK 1024u                     /* slots per chunk above it */
#define FDTAB_CHUNKS 1023u                    /* chunks: descriptors below 1M */
#define FDTAB_MAX (FDTAB_FIRST + FDTAB_CHUNK * FDTAB_CHUNKS)

typedef void *_Atomic fdtab_slot;

struct fdtab {
	fdtab_slot first[FDTAB_FIRST];
	fdtab_slot *_Atomic chunks[FDTAB_CHUNKS];
};

/* The slot of fd, or NULL when its chunk does not exist (with `create`:
 * allocated, caller serialised) or fd is out of range. */
static inline fdtab_slot *fdtab_slot_of(struct fdtab *t, int fd, bool create)
{
	unsigned u = (unsigned)fd, c;
	fdtab_slot *chunk;

	if (u < FDTAB_FIRST)
		return &t->first[u];
	if (u >= FDTAB_MAX)
		return NULL;
	c = (u - FDTAB_FIRST) / FDTAB_CHUNK;
	chunk = atomic_load_explicit(&t->chunks[c], memory_order_acquire);
	if (!chunk && create) {
		chunk = calloc(FDTAB_CHUNK, sizeof(*chunk));
		if (!chunk)
			return NULL;
		atomic_store_explicit(&t->chunks[c], chunk, memory_order_release);
	}
	return chunk ? &chunk[(u - FDTAB_FIRST) % FDTAB_CHUNK] : NULL;
}

/* The value of fd, NULL when none: the untagged fast path. */
static inline void *fdtab_get(struct fdtab *t, int fd)
{
	fdtab_slot *s;

	if (__builtin_expect((unsigned)fd < FDTAB_FIRST, 1))
		return atomic_load_explicit(&t->first[fd], memory_order_acquire);
	s = fdtab_slot_of(t, fd, false);
	return s ? atomic_load_explicit(s, memory_order_acquire) : NULL;
}

/* Sets fd's value (NULL clears it) and returns the old one through
 * *ret_old.  0, -EBADF (fd out of range), -ENOMEM (no chunk; nothing set). */
static inline int fdtab_set(struct fdtab *t, int fd, void *val, void **ret_old)
{
	fdtab_slot *s = fdtab_slot_of(t, fd, val != NULL);
	void *old;

	if (!s) {
		if (!val) {
			*ret_old = NULL;
			return 0;   /* nothing there to clear */
		}
		return (unsigned)fd >= FDTAB_MAX ? -EBADF : -ENOMEM;
	}
	old = atomic_exchange_explicit(s, val, memory_order_acq_rel);
	*ret_old = old;
	return 0;
}

/* Calls fn(fd, value) for every fd with a value (caller serialised). */
static inline void fdtab_each(struct fdtab *t, void (*fn)(void *ctx, int fd, void *val),
			      void *ctx)
{
	for (unsigned i = 0; i < FDTAB_FIRST; i++) {
		void *v = atomic_load_explicit(&t->first[i], memory_order_acquire);

		if (v)
			fn(ctx, (int)i, v);
	}
	for (unsigned c = 0; c < FDTAB_CHUNKS; c++) {
		fdtab_slot *chunk = atomic_load_explicit(&t->chunks[c], memory_order_acquire);

		if (!chunk)
			continue;
		for (unsigned i = 0; i < FDTAB_CHUNK; i++) {
			void *v = atomic_load_explicit(&chunk[i], memory_order_acquire);

			if (v)
				fn(ctx, (int)(FDTAB_FIRST + c * FDTAB_CHUNK + i), v);
		}
	}
}

#endif /* IOSIG_FDTAB_H */
