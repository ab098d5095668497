/* SPDX-License-Identifier: MIT */
/*
 * pol_util.h - building blocks shared by the policies: intrusive lists, an
 * ordered set (treap), an indexed min-heap for timers, a stream map, a
 * bounded pool of internal requests, and request merging.  All O(1) or
 * O(log n); nothing allocates per request.  Private to iosigd/policy.
 */
#ifndef POL_UTIL_H
#define POL_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

#define pol_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Formats a message into err[errlen] (nothing if err is NULL). */
void pol_errbuf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Writes a message into pol->err (for init failures). */
void pol_err(struct policy *pol, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- lists (circular, head is a node) ---- */

static inline void pol_list_init(struct policy_list *h)
{
	h->next = h->prev = h;
}

static inline bool pol_list_empty(const struct policy_list *h)
{
	return h->next == h;
}

static inline void pol_list_add_tail(struct policy_list *h, struct policy_list *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void pol_list_add_head(struct policy_list *h, struct policy_list *n)
{
	n->next = h->next;
	n->prev = h;
	h->next->prev = n;
	h->next = n;
}

static inline void pol_list_del(struct policy_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

/* ---- ordered set: a treap keyed by (key, key2), key2 breaks ties ---- */

/* Inserts n with the key and key2 already set in n (pairs must be unique). */
void pol_tree_insert(struct policy_tnode **root, struct policy_tnode *n);
/* Removes n, which must be in the tree. */
void pol_tree_remove(struct policy_tnode **root, struct policy_tnode *n);
/* Smallest node, or NULL. */
struct policy_tnode *pol_tree_first(struct policy_tnode *root);
/* Largest node, or NULL. */
struct policy_tnode *pol_tree_last(struct policy_tnode *root);
/* Smallest node with (key, key2) >= the pair, or NULL. */
struct policy_tnode *pol_tree_lower_bound(struct policy_tnode *root, uint64_t key, uint64_t key2);
/* Largest node with (key, key2) <= the pair, or NULL. */
struct policy_tnode *pol_tree_floor(struct policy_tnode *root, uint64_t key, uint64_t key2);
/* In-order successor / predecessor of n (n in the tree), or NULL. */
struct policy_tnode *pol_tree_next(struct policy_tnode *root, const struct policy_tnode *n);
struct policy_tnode *pol_tree_prev(struct policy_tnode *root, const struct policy_tnode *n);

static inline struct policy_req *pol_req_of_tnode(struct policy_tnode *n)
{
	return n ? pol_container_of(n, struct policy_req, tnode) : NULL;
}

/* ---- indexed min-heap (timers) ---- */

struct pol_hnode {
	uint64_t key;    /* expiry time */
	size_t idx;      /* position in the heap; SIZE_MAX when not in it */
};

struct pol_heap {
	struct pol_hnode **v;
	size_t n, cap;
};

void pol_heap_init(struct pol_heap *h);
void pol_heap_free(struct pol_heap *h);
static inline bool pol_hnode_queued(const struct pol_hnode *x)
{
	return x->idx != SIZE_MAX;
}
/* Inserts x or, if it is in already, moves it to its new key.  0 or -ENOMEM. */
int pol_heap_set(struct pol_heap *h, struct pol_hnode *x, uint64_t key);
void pol_heap_remove(struct pol_heap *h, struct pol_hnode *x);
static inline struct pol_hnode *pol_heap_min(const struct pol_heap *h)
{
	return h->n ? h->v[0] : NULL;
}

/* ---- stream map: uint32 id -> pointer (linear probing, grows) ---- */

struct pol_map {
	uint32_t *keys;
	void **vals;
	size_t n, cap;   /* cap is a power of two; 0 = empty */
};

void pol_map_init(struct pol_map *m);
void pol_map_free(struct pol_map *m);
/* pol_map_free() after free() of every value (values malloc'ed by the caller). */
void pol_map_free_vals(struct pol_map *m);
void *pol_map_get(const struct pol_map *m, uint32_t key);
/* Inserts or replaces.  0 or -ENOMEM. */
int pol_map_put(struct pol_map *m, uint32_t key, void *val);
void pol_map_del(struct pol_map *m, uint32_t key);

/* ---- internal requests: a bounded pool ---- */

struct pol_pool {
	struct policy_req *items;
	struct policy_list free;
	size_t cap, used;
	uint64_t next_id;
};

/* cap requests; ids start at 2^63 so they never collide with workload ids. */
int pol_pool_init(struct pol_pool *p, size_t cap);
void pol_pool_free(struct pol_pool *p);
/* A zeroed INTERNAL request (op, dev, offset, len set), or NULL if all are in use. */
struct policy_req *pol_pool_get(struct pol_pool *p, uint8_t op, uint16_t dev, uint64_t offset,
				uint64_t len, uint8_t extra_flags, uint64_t now);
void pol_pool_put(struct pol_pool *p, struct policy_req *r);
static inline bool pol_pool_owns(const struct pol_pool *p, const struct policy_req *r)
{
	return r >= p->items && r < p->items + p->cap;
}

/* ---- location table: extents of a home device stored elsewhere ---- */

/* [off, off + len) of home device `home` lives at toff on device tdev.  The
 * table returns pointers into its own storage: valid until it changes. */
struct pol_ext {
	uint64_t off;
	uint64_t len;
	uint64_t toff;
	uint64_t tag;              /* the caller's constant (iosigd: a sequence, a file);
	                              extents merge only when their tags are equal */
	uint16_t tdev;
};

struct pol_extnode;   /* a node of the table's B+ tree (pol_util.c) */

struct pol_extmap {
	unsigned ndev;
	/* Per home device a B+ tree of the extents by offset: a few wide
	 * nodes per lookup instead of a pointer chase per level, for tables
	 * of hundreds of thousands of extents (bid-hybrid's small writes). */
	struct pol_extnode **root;
	struct pol_extnode *spare;   /* nodes reserved for the next change */
	unsigned nspare;
	size_t count;                /* extents in the table */
	/* Counting filter: per hashed (home, 1 MiB grain), how many extents
	 * overlap it (saturating at 255, then never decremented).  A lookup
	 * whose grains all count 0 needs no tree search: most requests of a
	 * tiering policy touch nothing the table holds. */
	uint8_t *filter;
	/* pol_extmap_first/next: where the extent last returned is. */
	struct pol_extnode *cur;
	unsigned cur_i;
};

int pol_extmap_init(struct pol_extmap *m, unsigned ndev);
void pol_extmap_free(struct pol_extmap *m);
/* Maps [off, off + len) of home to (tdev, toff) with tag `tag`, replacing
 * whatever overlapped; extends the previous extent when it continues it
 * with the same tag.  0 or -ENOMEM (the table is unchanged then). */
int pol_extmap_put(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len,
		   unsigned tdev, uint64_t toff, uint64_t tag);
/* The same with tag 0 (the policies' tables). */
static inline int pol_extmap_set(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len,
				 unsigned tdev, uint64_t toff)
{
	return pol_extmap_put(m, home, off, len, tdev, toff, 0);
}
/* Forgets any mapping of [off, off + len) (the data is at home again).
 * 0 or -ENOMEM (the table is unchanged then). */
int pol_extmap_clear(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len);
/* The first extent overlapping [off, off + len), or NULL; then
 * pol_extmap_next() while it returns extents starting before off + len. */
struct pol_ext *pol_extmap_first(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len);
struct pol_ext *pol_extmap_next(struct pol_extmap *m, unsigned home, struct pol_ext *e);
static inline uint64_t pol_ext_off(const struct pol_ext *e)
{
	return e->off;
}

/* ---- pieces: internal requests that carry part of a workload request ---- */

/* parent will be served by n pieces (counted in parent->pdata[0..1]). */
void pol_pieces_begin(struct policy_req *parent, uint64_t n);
/* A piece of parent for [off, off + len) of its home device: INTERNAL,
 * parent's op, stream, hints and sync flag, `parent` set (policy.h); NULL
 * when the pool is empty. */
struct policy_req *pol_piece_get(struct pol_pool *p, struct policy_req *parent, uint64_t off,
				 uint64_t len, uint64_t now);
/* A piece completed: recycles it and returns its parent when that was the
 * last piece (with *ret_status the first error or 0), else NULL. */
struct policy_req *pol_piece_done(struct pol_pool *p, struct policy_req *piece, int *ret_status);

/* ---- reads straddling tiers: split into pieces ---- */

struct pol_splitter {
	struct pol_pool pool;
};

/* Where each piece of a split read goes (ctx is the policy's). */
struct pol_split_ops {
	void (*home)(void *ctx, struct policy_req *piece);  /* not mapped: at home */
	void (*mapped)(void *ctx, struct policy_req *piece, unsigned tdev, uint64_t toff);
};

int pol_splitter_init(struct pol_splitter *s, size_t cap);
void pol_splitter_free(struct pol_splitter *s);
static inline bool pol_splitter_owns(const struct pol_splitter *s, const struct policy_req *r)
{
	return pol_pool_owns(&s->pool, r);
}
/*
 * Splits read req along the extents of m into pieces (pol_piece_get)
 * handed to ops, all or nothing: 0, or -EAGAIN when the pool lacks pieces
 * (retry after some complete).  Uses req->pdata[0..1].
 */
int pol_split_read(struct pol_splitter *s, struct pol_extmap *m, struct policy_req *req,
		   uint64_t now, const struct pol_split_ops *ops, void *ctx);
/* A piece completed (pol_piece_done on the splitter's pool). */
static inline struct policy_req *pol_split_done(struct pol_splitter *s, struct policy_req *piece,
						int *ret_status)
{
	return pol_piece_done(&s->pool, piece, ret_status);
}

/* ---- merging ---- */

/* Whether b can follow a (already `total` bytes in its chain) in one
 * command: same op and home device, contiguous, total + b->len <= max. */
static inline bool pol_can_merge(const struct policy_req *a, const struct policy_req *b,
				 uint64_t total, uint64_t max)
{
	return a->op == b->op && a->op != POLICY_OP_FLUSH && a->dev == b->dev &&
	       a->offset + a->len == b->offset && total + b->len <= max;
}

/*
 * In a tree of requests sorted by offset: links into one merge_next chain
 * the requests contiguous with rq before it (as a front merge would) and
 * after it (back merge), at most max bytes in all, and returns the chain
 * head.  Nothing is removed from the tree.  *ret_next is the request
 * after the chain in sorted order (NULL if none).
 */
struct policy_req *pol_tree_chain(struct policy_tnode *root, struct policy_req *rq, uint64_t max,
				  struct policy_req **ret_next);

/* Sum of the lengths of req's chain. */
static inline uint64_t pol_chain_len(const struct policy_req *req)
{
	uint64_t n = 0;

	for (; req; req = req->merge_next)
		n += req->len;
	return n;
}

/* Device has room for one more command. */
static inline bool pol_dev_room(struct policy_env *env, unsigned dev)
{
	return env->inflight(env, dev) < env->dev[dev].queue_depth;
}

/*
 * Issues req's chain to dev at offset.  Callers check pol_dev_room() first,
 * so a refusal means the request itself is bad (range, device): every
 * workload member of the chain is then finished with that status so nothing
 * hangs.  Returns the result of env->issue().
 */
int pol_issue(struct policy_env *env, struct policy_req *req, unsigned dev, uint64_t offset);

/* Weighted mean of the last n samples of a ring, weight i+1 for the i-th
 * oldest (the newest counts most).  ring[] has cap entries, head = next
 * write position, n <= cap. */
uint64_t pol_weighted_mean(const uint64_t *ring, unsigned cap, unsigned head, unsigned n);

#endif /* POL_UTIL_H */
