/* SPDX-License-Identifier: MIT */
/*
 * pol_util.c - treap, indexed heap, stream map, internal-request pool.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_util.h"

void pol_errbuf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void pol_err(struct policy *pol, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pol->err, sizeof(pol->err), fmt, ap);
	va_end(ap);
}

/* ---- treap ---- */

/* Deterministic priority from the node's keys (splitmix64 finaliser), so a
 * run is reproducible and adversarial orders still balance. */
static uint32_t tprio(const struct policy_tnode *n)
{
	uint64_t z = n->key * 0x9e3779b97f4a7c15ull ^ n->key2;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(z ^ (z >> 31));
}

static int tcmp(uint64_t ak, uint64_t ak2, const struct policy_tnode *b)
{
	if (ak != b->key)
		return ak < b->key ? -1 : 1;
	if (ak2 != b->key2)
		return ak2 < b->key2 ? -1 : 1;
	return 0;
}

static struct policy_tnode *rot_right(struct policy_tnode *t)
{
	struct policy_tnode *l = t->left;

	t->left = l->right;
	l->right = t;
	return l;
}

static struct policy_tnode *rot_left(struct policy_tnode *t)
{
	struct policy_tnode *r = t->right;

	t->right = r->left;
	r->left = t;
	return r;
}

static struct policy_tnode *tinsert(struct policy_tnode *t, struct policy_tnode *n)
{
	if (!t)
		return n;
	if (tcmp(n->key, n->key2, t) < 0) {
		t->left = tinsert(t->left, n);
		if (t->left->prio > t->prio)
			t = rot_right(t);
	} else {
		t->right = tinsert(t->right, n);
		if (t->right->prio > t->prio)
			t = rot_left(t);
	}
	return t;
}

void pol_tree_insert(struct policy_tnode **root, struct policy_tnode *n)
{
	n->left = n->right = NULL;
	n->prio = tprio(n);
	*root = tinsert(*root, n);
}

/* Joins two treaps where every key of a is below every key of b. */
static struct policy_tnode *tjoin(struct policy_tnode *a, struct policy_tnode *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->right = tjoin(a->right, b);
		return a;
	}
	b->left = tjoin(a, b->left);
	return b;
}

void pol_tree_remove(struct policy_tnode **root, struct policy_tnode *n)
{
	struct policy_tnode **pp = root;

	while (*pp && *pp != n)
		pp = tcmp(n->key, n->key2, *pp) < 0 ? &(*pp)->left : &(*pp)->right;
	if (!*pp)
		return;
	*pp = tjoin(n->left, n->right);
	n->left = n->right = NULL;
}

struct policy_tnode *pol_tree_first(struct policy_tnode *t)
{
	while (t && t->left)
		t = t->left;
	return t;
}

struct policy_tnode *pol_tree_last(struct policy_tnode *t)
{
	while (t && t->right)
		t = t->right;
	return t;
}

struct policy_tnode *pol_tree_lower_bound(struct policy_tnode *t, uint64_t key, uint64_t key2)
{
	struct policy_tnode *best = NULL;

	while (t) {
		if (tcmp(key, key2, t) <= 0) {
			best = t;
			t = t->left;
		} else {
			t = t->right;
		}
	}
	return best;
}

struct policy_tnode *pol_tree_floor(struct policy_tnode *t, uint64_t key, uint64_t key2)
{
	struct policy_tnode *best = NULL;

	while (t) {
		if (tcmp(key, key2, t) >= 0) {
			best = t;
			t = t->right;
		} else {
			t = t->left;
		}
	}
	return best;
}

struct policy_tnode *pol_tree_next(struct policy_tnode *t, const struct policy_tnode *n)
{
	struct policy_tnode *best = NULL;

	if (n->right)
		return pol_tree_first(n->right);
	while (t) {
		if (tcmp(n->key, n->key2, t) < 0) {
			best = t;
			t = t->left;
		} else {
			t = t->right;
		}
	}
	return best;
}

struct policy_tnode *pol_tree_prev(struct policy_tnode *t, const struct policy_tnode *n)
{
	struct policy_tnode *best = NULL;

	if (n->left)
		return pol_tree_last(n->left);
	while (t) {
		if (tcmp(n->key, n->key2, t) > 0) {
			best = t;
			t = t->right;
		} else {
			t = t->left;
		}
	}
	return best;
}

struct policy_req *pol_tree_chain(struct policy_tnode *root, struct policy_req *rq, uint64_t max,
				  struct policy_req **ret_next)
{
	struct policy_req *head = rq, *tail = rq, *p, *n;
	uint64_t total = rq->len;

	/* Front: predecessors ending where the chain starts. */
	while ((p = pol_req_of_tnode(pol_tree_prev(root, &head->tnode))) &&
	       pol_can_merge(p, head, 0, UINT64_MAX) && total + p->len <= max) {
		p->merge_next = head;
		head = p;
		total += p->len;
	}
	tail->merge_next = NULL;
	n = pol_req_of_tnode(pol_tree_next(root, &tail->tnode));
	while (n && pol_can_merge(tail, n, total, max)) {
		tail->merge_next = n;
		tail = n;
		total += n->len;
		n = pol_req_of_tnode(pol_tree_next(root, &n->tnode));
	}
	tail->merge_next = NULL;
	*ret_next = n;
	return head;
}

/* ---- indexed heap ---- */

void pol_heap_init(struct pol_heap *h)
{
	memset(h, 0, sizeof(*h));
}

void pol_heap_free(struct pol_heap *h)
{
	free(h->v);
	memset(h, 0, sizeof(*h));
}

static void hswap(struct pol_heap *h, size_t a, size_t b)
{
	struct pol_hnode *t = h->v[a];

	h->v[a] = h->v[b];
	h->v[b] = t;
	h->v[a]->idx = a;
	h->v[b]->idx = b;
}

static void hup(struct pol_heap *h, size_t i)
{
	while (i && h->v[(i - 1) / 2]->key > h->v[i]->key) {
		hswap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void hdown(struct pol_heap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && h->v[l]->key < h->v[m]->key)
			m = l;
		if (r < h->n && h->v[r]->key < h->v[m]->key)
			m = r;
		if (m == i)
			return;
		hswap(h, i, m);
		i = m;
	}
}

int pol_heap_set(struct pol_heap *h, struct pol_hnode *x, uint64_t key)
{
	if (pol_hnode_queued(x)) {
		uint64_t old = x->key;

		x->key = key;
		if (key < old)
			hup(h, x->idx);
		else
			hdown(h, x->idx);
		return 0;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 16;
		struct pol_hnode **v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	x->key = key;
	x->idx = h->n;
	h->v[h->n++] = x;
	hup(h, x->idx);
	return 0;
}

void pol_heap_remove(struct pol_heap *h, struct pol_hnode *x)
{
	size_t i = x->idx;

	if (!pol_hnode_queued(x))
		return;
	if (i != h->n - 1) {
		hswap(h, i, h->n - 1);
		h->n--;
		hup(h, i);
		hdown(h, i);
	} else {
		h->n--;
	}
	x->idx = SIZE_MAX;
}

/* ---- stream map ---- */

static size_t mhash(uint32_t k, size_t cap)
{
	return (size_t)((k * 2654435761u) & (cap - 1));
}

void pol_map_init(struct pol_map *m)
{
	memset(m, 0, sizeof(*m));
}

void pol_map_free_vals(struct pol_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->vals[i]);
	pol_map_free(m);
}

void pol_map_free(struct pol_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

void *pol_map_get(const struct pol_map *m, uint32_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mhash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return NULL;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

static int mgrow(struct pol_map *m)
{
	size_t cap = m->cap ? 2 * m->cap : 16;
	uint32_t *keys = calloc(cap, sizeof(*keys));
	void **vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t j = 0; j < m->cap; j++) {
		size_t i;

		if (!m->vals[j])
			continue;
		for (i = mhash(m->keys[j], cap); vals[i]; i = (i + 1) & (cap - 1))
			;
		keys[i] = m->keys[j];
		vals[i] = m->vals[j];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int pol_map_put(struct pol_map *m, uint32_t key, void *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && mgrow(m) < 0)
		return -ENOMEM;
	for (i = mhash(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

void pol_map_del(struct pol_map *m, uint32_t key)
{
	size_t i, j;

	if (!m->cap)
		return;
	for (i = mhash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return;
		if (m->keys[i] == key)
			break;
	}
	m->vals[i] = NULL;
	m->n--;
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	for (j = (i + 1) & (m->cap - 1); m->vals[j]; j = (j + 1) & (m->cap - 1)) {
		size_t h = mhash(m->keys[j], m->cap);

		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->vals[j] = NULL;
			i = j;
		}
	}
}

/* ---- pool ---- */

int pol_pool_init(struct pol_pool *p, size_t cap)
{
	memset(p, 0, sizeof(*p));
	pol_list_init(&p->free);
	p->next_id = 1ull << 63;
	if (!cap)
		return 0;
	p->items = calloc(cap, sizeof(*p->items));
	if (!p->items)
		return -ENOMEM;
	p->cap = cap;
	for (size_t i = 0; i < cap; i++)
		pol_list_add_tail(&p->free, &p->items[i].link);
	return 0;
}

void pol_pool_free(struct pol_pool *p)
{
	free(p->items);
	memset(p, 0, sizeof(*p));
}

struct policy_req *pol_pool_get(struct pol_pool *p, uint8_t op, uint16_t dev, uint64_t offset,
				uint64_t len, uint8_t extra_flags, uint64_t now)
{
	struct policy_req *r;

	if (pol_list_empty(&p->free))
		return NULL;
	r = pol_container_of(p->free.next, struct policy_req, link);
	pol_list_del(&r->link);
	memset(r, 0, sizeof(*r));
	pol_list_init(&r->link);
	pol_list_init(&r->link2);
	r->id = p->next_id++;
	r->op = op;
	r->dev = dev;
	r->offset = offset;
	r->len = len;
	r->flags = (uint8_t)(POLICY_REQ_INTERNAL | extra_flags);
	r->arrival_ns = now;
	p->used++;
	return r;
}

void pol_pool_put(struct pol_pool *p, struct policy_req *r)
{
	pol_list_add_tail(&p->free, &r->link);
	p->used--;
}

int pol_issue(struct policy_env *env, struct policy_req *req, unsigned dev, uint64_t offset)
{
	int r = env->issue(env, req, dev, offset);

	if (r < 0) {
		for (struct policy_req *m = req, *next; m; m = next) {
			next = m->merge_next;
			m->merge_next = NULL;
			if (!(m->flags & POLICY_REQ_INTERNAL))
				env->finish(env, m, r);
		}
	}
	return r;
}

uint64_t pol_weighted_mean(const uint64_t *ring, unsigned cap, unsigned head, unsigned n)
{
	double num = 0, den = 0;

	for (unsigned i = 0; i < n; i++) {
		/* i = 0 is the oldest of the n newest samples */
		unsigned pos = (head + cap - n + i) % cap;
		double w = (double)(i + 1);

		num += w * (double)ring[pos];
		den += w;
	}
	return den > 0 ? (uint64_t)(num / den + 0.5) : 0;
}

/* ---- location table ---- */

#define EXT_GRAIN_SHIFT 20          /* filter grain: 1 MiB */
#define EXT_FILTER_SLOTS (1u << 20) /* filter counters (1 MiB of memory) */

static size_t fslot(unsigned home, uint64_t grain)
{
	uint64_t z = (grain * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)home << 58);

	z ^= z >> 29;
	return (size_t)(z & (EXT_FILTER_SLOTS - 1));
}

/* Adds delta (+1 or -1) to the filter counters of [off, off + len). */
static void fcount(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len, int delta)
{
	uint64_t g, last = (off + len - 1) >> EXT_GRAIN_SHIFT;

	if (!len)
		return;
	for (g = off >> EXT_GRAIN_SHIFT; g <= last; g++) {
		uint8_t *c = &m->filter[fslot(home, g)];

		if (*c != UINT8_MAX)   /* saturated counters stay: a false "maybe" is harmless */
			*c = (uint8_t)(*c + delta);
	}
}

/* Whether an extent may overlap [off, off + len) (long ranges: always). */
static bool fmaybe(const struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len)
{
	uint64_t g, last = (off + (len ? len : 1) - 1) >> EXT_GRAIN_SHIFT;

	if (len > UINT64_MAX - off || last - (off >> EXT_GRAIN_SHIFT) >= 64)
		return true;
	for (g = off >> EXT_GRAIN_SHIFT; g <= last; g++)
		if (m->filter[fslot(home, g)])
			return true;
	return false;
}

/*
 * The tree: leaves hold up to XB extents sorted by offset and are linked
 * in order; an inner node holds up to XB children, key[i] separating
 * child[i] (offsets below it) from child[i + 1].  Every extent lies in the
 * leaf a descent for its offset reaches: inserts go there, splits move the
 * upper half right, and an extent's offset never changes in place (a
 * changed offset is a delete and an insert).  A leaf left empty is unlinked
 * and its ancestors lose that child (no rebalancing: lookups stay correct,
 * and nodes are at least half full after splits).  Changes take their new
 * nodes from a reserve filled first, so they never fail half done.
 */
#define XB 16
#define XDEPTH 40                   /* levels a path may have (far beyond reach) */

struct pol_extnode {
	uint16_t n;                     /* extents (leaf) or children (inner) */
	bool leaf;
	struct pol_extnode *prev, *next; /* leaves, in offset order */
	union {
		struct pol_ext ent[XB];
		struct {
			uint64_t key[XB - 1];
			struct pol_extnode *child[XB];
		} in;
	} u;
};

/* A position: the i-th extent of leaf l (l NULL: none). */
struct xpos {
	struct pol_extnode *l;
	unsigned i;
};

/* A descent's path: the inner nodes and the child taken in each. */
struct xpath {
	struct pol_extnode *node[XDEPTH];
	unsigned idx[XDEPTH];
	unsigned depth;
};

int pol_extmap_init(struct pol_extmap *m, unsigned ndev)
{
	memset(m, 0, sizeof(*m));
	m->root = calloc(ndev ? ndev : 1, sizeof(*m->root));
	m->filter = calloc(EXT_FILTER_SLOTS, 1);
	if (!m->root || !m->filter) {
		free(m->root);
		free(m->filter);
		m->root = NULL;
		m->filter = NULL;
		return -ENOMEM;
	}
	m->ndev = ndev;
	return 0;
}

static void xfree_tree(struct pol_extnode *t)
{
	if (!t)
		return;
	if (!t->leaf)
		for (unsigned i = 0; i < t->n; i++)
			xfree_tree(t->u.in.child[i]);
	free(t);
}

void pol_extmap_free(struct pol_extmap *m)
{
	if (!m->root)
		return;
	for (unsigned d = 0; d < m->ndev; d++)
		xfree_tree(m->root[d]);
	while (m->spare) {
		struct pol_extnode *n = m->spare;

		m->spare = n->next;
		free(n);
	}
	free(m->root);
	free(m->filter);
	memset(m, 0, sizeof(*m));
}

/* Levels of home's tree (0: empty). */
static unsigned xheight(const struct pol_extmap *m, unsigned home)
{
	unsigned h = 0;

	for (const struct pol_extnode *t = m->root[home]; t; t = t->leaf ? NULL : t->u.in.child[0])
		h++;
	return h;
}

/* Makes sure `inserts` inserts into home's tree find their nodes: a split
 * per level and a new root each.  0 or -ENOMEM. */
static int xreserve(struct pol_extmap *m, unsigned home, unsigned inserts)
{
	unsigned need = inserts * (xheight(m, home) + 2);

	while (m->nspare < need) {
		struct pol_extnode *n = malloc(sizeof(*n));

		if (!n)
			return -ENOMEM;
		n->next = m->spare;
		m->spare = n;
		m->nspare++;
	}
	return 0;
}

static struct pol_extnode *xnode(struct pol_extmap *m, bool leaf)
{
	struct pol_extnode *n = m->spare;

	m->spare = n->next;
	m->nspare--;
	memset(n, 0, offsetof(struct pol_extnode, u));
	n->leaf = leaf;
	return n;
}

/* Index of the first of the n extents with offset >= key (> key: upper). */
static unsigned xlower(const struct pol_ext *ent, unsigned n, uint64_t key)
{
	unsigned lo = 0;

	while (lo < n) {
		unsigned mid = (lo + n) / 2;

		if (ent[mid].off < key)
			lo = mid + 1;
		else
			n = mid;
	}
	return lo;
}

static unsigned xupper(const struct pol_ext *ent, unsigned n, uint64_t key)
{
	unsigned lo = 0;

	while (lo < n) {
		unsigned mid = (lo + n) / 2;

		if (ent[mid].off <= key)
			lo = mid + 1;
		else
			n = mid;
	}
	return lo;
}

/* The leaf of home's tree whose range holds key (NULL: empty tree). */
static struct pol_extnode *xdescend(const struct pol_extmap *m, unsigned home, uint64_t key,
				    struct xpath *p)
{
	struct pol_extnode *t = m->root[home];

	if (p)
		p->depth = 0;
	while (t && !t->leaf) {
		unsigned lo = 0, n = t->n - 1u;

		while (lo < n) {   /* keys <= key */
			unsigned mid = (lo + n) / 2;

			if (t->u.in.key[mid] <= key)
				lo = mid + 1;
			else
				n = mid;
		}
		if (p) {
			p->node[p->depth] = t;
			p->idx[p->depth++] = lo;
		}
		t = t->u.in.child[lo];
	}
	return t;
}

/* The last extent with offset <= key. */
static struct xpos xfloor(const struct pol_extmap *m, unsigned home, uint64_t key)
{
	struct pol_extnode *l = xdescend(m, home, key, NULL);
	unsigned i = l ? xupper(l->u.ent, l->n, key) : 0;

	while (l && i == 0) {
		l = l->prev;
		i = l ? l->n : 0;
	}
	return (struct xpos){ l, i ? i - 1 : 0 };
}

/* The first extent with offset >= key. */
static struct xpos xlower_bound(const struct pol_extmap *m, unsigned home, uint64_t key)
{
	struct pol_extnode *l = xdescend(m, home, key, NULL);
	unsigned i = l ? xlower(l->u.ent, l->n, key) : 0;

	while (l && i == l->n) {
		l = l->next;
		i = 0;
	}
	return (struct xpos){ l, i };
}

/* Inserts e (its offset not in the table) using reserved nodes. */
static void xinsert(struct pol_extmap *m, unsigned home, const struct pol_ext *e)
{
	struct pol_extnode *l, *r, *child;
	struct xpath p;
	uint64_t sep;
	unsigned i;

	if (!m->root[home]) {
		l = m->root[home] = xnode(m, true);
		l->u.ent[0] = *e;
		l->n = 1;
		return;
	}
	l = xdescend(m, home, e->off, &p);
	i = xlower(l->u.ent, l->n, e->off);
	if (l->n < XB) {
		memmove(&l->u.ent[i + 1], &l->u.ent[i], (l->n - i) * sizeof(*e));
		l->u.ent[i] = *e;
		l->n++;
		return;
	}
	/* Full: the upper half (of XB + 1) goes to a new leaf after l. */
	{
		struct pol_ext all[XB + 1];
		unsigned keep = (XB + 1) / 2;

		memcpy(all, l->u.ent, i * sizeof(*e));
		all[i] = *e;
		memcpy(&all[i + 1], &l->u.ent[i], (XB - i) * sizeof(*e));
		r = xnode(m, true);
		memcpy(l->u.ent, all, keep * sizeof(*e));
		memcpy(r->u.ent, &all[keep], (XB + 1 - keep) * sizeof(*e));
		l->n = (uint16_t)keep;
		r->n = (uint16_t)(XB + 1 - keep);
		r->prev = l;
		r->next = l->next;
		if (l->next)
			l->next->prev = r;
		l->next = r;
		sep = r->u.ent[0].off;
		child = r;
	}
	/* Hand (sep, child) up, splitting full inner nodes. */
	while (p.depth) {
		struct pol_extnode *t = p.node[--p.depth];
		unsigned j = p.idx[p.depth] + 1;   /* child's place */
		uint64_t keys[XB];
		struct pol_extnode *kids[XB + 1];
		unsigned n = t->n, keep;

		if (n < XB) {
			memmove(&t->u.in.key[j], &t->u.in.key[j - 1], (n - j) * sizeof(sep));
			memmove(&t->u.in.child[j + 1], &t->u.in.child[j], (n - j) * sizeof(child));
			t->u.in.key[j - 1] = sep;
			t->u.in.child[j] = child;
			t->n++;
			return;
		}
		/* n + 1 children, n keys: the left keeps `keep` children, the
		 * key between the halves goes up. */
		memcpy(keys, t->u.in.key, (j - 1) * sizeof(sep));
		keys[j - 1] = sep;
		memcpy(&keys[j], &t->u.in.key[j - 1], (n - j) * sizeof(sep));
		memcpy(kids, t->u.in.child, j * sizeof(child));
		kids[j] = child;
		memcpy(&kids[j + 1], &t->u.in.child[j], (n - j) * sizeof(child));
		keep = (n + 1) / 2;
		r = xnode(m, false);
		memcpy(t->u.in.key, keys, (keep - 1) * sizeof(sep));
		memcpy(t->u.in.child, kids, keep * sizeof(child));
		t->n = (uint16_t)keep;
		memcpy(r->u.in.key, &keys[keep], (n - keep) * sizeof(sep));
		memcpy(r->u.in.child, &kids[keep], (n + 1 - keep) * sizeof(child));
		r->n = (uint16_t)(n + 1 - keep);
		sep = keys[keep - 1];
		child = r;
	}
	/* The root split: a new root above. */
	r = xnode(m, false);
	r->u.in.child[0] = m->root[home];
	r->u.in.child[1] = child;
	r->u.in.key[0] = sep;
	r->n = 2;
	m->root[home] = r;
}

/* Deletes the extent at q; returns the position of the one after it. */
static struct xpos xdelete(struct pol_extmap *m, unsigned home, struct xpos q)
{
	struct pol_extnode *l = q.l, *next;
	uint64_t key = l->u.ent[q.i].off;
	struct xpath p;

	memmove(&l->u.ent[q.i], &l->u.ent[q.i + 1], (l->n - q.i - 1) * sizeof(l->u.ent[0]));
	l->n--;
	if (q.i < l->n)
		return q;
	next = l->next;
	if (l->n)
		return (struct xpos){ next, 0 };
	/* An empty leaf goes; so do ancestors left without children. */
	xdescend(m, home, key, &p);
	if (l->prev)
		l->prev->next = l->next;
	if (l->next)
		l->next->prev = l->prev;
	free(l);
	for (;;) {
		struct pol_extnode *t;
		unsigned j;

		if (!p.depth) {
			m->root[home] = NULL;
			break;
		}
		t = p.node[--p.depth];
		j = p.idx[p.depth];
		if (t->n > 1) {
			unsigned k = j ? j - 1 : 0;   /* the key on the removed child's left */

			memmove(&t->u.in.key[k], &t->u.in.key[k + 1], (t->n - 2 - k) * sizeof(key));
			memmove(&t->u.in.child[j], &t->u.in.child[j + 1], (t->n - 1 - j) * sizeof(t));
			t->n--;
			break;
		}
		free(t);
	}
	/* A root with one child steps down. */
	while (m->root[home] && !m->root[home]->leaf && m->root[home]->n == 1) {
		struct pol_extnode *t = m->root[home];

		m->root[home] = t->u.in.child[0];
		free(t);
	}
	return (struct xpos){ next, 0 };
}

static struct pol_ext *xat(struct xpos q)
{
	return q.l ? &q.l->u.ent[q.i] : NULL;
}

/* The first extent overlapping [off, off + len), or none. */
static struct xpos xfirst(const struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len)
{
	struct xpos q;

	if (!m->root[home] || !fmaybe(m, home, off, len))
		return (struct xpos){ NULL, 0 };
	q = xfloor(m, home, off);
	if (q.l && xat(q)->off + xat(q)->len > off)
		return q;
	q = xlower_bound(m, home, off);
	return q.l && xat(q)->off < off + len ? q : (struct xpos){ NULL, 0 };
}

struct pol_ext *pol_extmap_first(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len)
{
	struct xpos q = xfirst(m, home, off, len);

	m->cur = q.l;
	m->cur_i = q.i;
	return xat(q);
}

struct pol_ext *pol_extmap_next(struct pol_extmap *m, unsigned home, struct pol_ext *e)
{
	struct xpos q;

	if (m->cur && m->cur_i < m->cur->n && &m->cur->u.ent[m->cur_i] == e) {
		q = (struct xpos){ m->cur, m->cur_i + 1 };
		while (q.l && q.i == q.l->n)
			q = (struct xpos){ q.l->next, 0 };
	} else {
		q = xlower_bound(m, home, e->off + 1);
	}
	m->cur = q.l;
	m->cur_i = q.i;
	return xat(q);
}

/* pol_extmap_clear with its nodes reserved (at most one insert). */
static void xclear(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len)
{
	uint64_t end = off + len;
	struct xpos q = xfirst(m, home, off, len);

	while (q.l && xat(q)->off < end) {
		struct pol_ext *e = xat(q);
		uint64_t es = e->off, ee = es + e->len;

		fcount(m, home, es, ee - es, -1);
		if (es < off && ee > end) {
			/* Spans the range: the left part stays, the right part is new. */
			struct pol_ext r = { .off = end, .len = ee - end, .tdev = e->tdev,
					     .toff = e->toff + (end - es), .tag = e->tag };

			e->len = off - es;
			fcount(m, home, es, e->len, +1);
			fcount(m, home, end, r.len, +1);
			xinsert(m, home, &r);
			m->count++;
			return;
		}
		if (es < off) {
			e->len = off - es;                  /* keep the left part */
			fcount(m, home, es, e->len, +1);
			q.i++;
			while (q.l && q.i == q.l->n)
				q = (struct xpos){ q.l->next, 0 };
		} else if (ee > end) {
			/* Keep the right part: a new offset, so delete and insert. */
			struct pol_ext r = { .off = end, .len = ee - end, .tdev = e->tdev,
					     .toff = e->toff + (end - es), .tag = e->tag };

			xdelete(m, home, q);
			xinsert(m, home, &r);
			fcount(m, home, end, r.len, +1);
			return;
		} else {
			q = xdelete(m, home, q);
			m->count--;
		}
	}
}

int pol_extmap_clear(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len)
{
	m->cur = NULL;
	if (xreserve(m, home, 1) < 0)
		return -ENOMEM;
	xclear(m, home, off, len);
	return 0;
}

int pol_extmap_put(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len,
		   unsigned tdev, uint64_t toff, uint64_t tag)
{
	struct pol_ext e = { .off = off, .len = len, .toff = toff, .tag = tag,
			     .tdev = (uint16_t)tdev };
	struct pol_ext *prev = NULL;

	m->cur = NULL;
	if (xreserve(m, home, 2) < 0)
		return -ENOMEM;
	xclear(m, home, off, len);
	/* Only an extent ending at off can be continued (none if the grain
	 * holding off - 1 is empty). */
	if (off && m->root[home] && fmaybe(m, home, off - 1, 1))
		prev = xat(xfloor(m, home, off));
	if (prev && prev->off + prev->len == off && prev->tdev == tdev &&
	    prev->toff + prev->len == toff && prev->tag == tag) {
		fcount(m, home, prev->off, prev->len, -1);
		prev->len += len;   /* continues the previous extent */
		fcount(m, home, prev->off, prev->len, +1);
		return 0;
	}
	xinsert(m, home, &e);
	m->count++;
	fcount(m, home, off, len, +1);
	return 0;
}

/* ---- pieces ---- */

void pol_pieces_begin(struct policy_req *parent, uint64_t n)
{
	parent->pdata[0] = n;
	parent->pdata[1] = 0;
}

struct policy_req *pol_piece_get(struct pol_pool *p, struct policy_req *parent, uint64_t off,
				 uint64_t len, uint64_t now)
{
	struct policy_req *r = pol_pool_get(p, parent->op, parent->dev, off, len,
					    parent->flags & POLICY_REQ_SYNC, now);

	if (r) {
		r->parent = parent;
		r->stream = parent->stream;
		r->hint_size = parent->hint_size;
		r->hint_pattern = parent->hint_pattern;
	}
	return r;
}

struct policy_req *pol_piece_done(struct pol_pool *p, struct policy_req *piece, int *ret_status)
{
	struct policy_req *parent = piece->parent;

	if (piece->status && !parent->pdata[1])
		parent->pdata[1] = (uint64_t)(int64_t)piece->status;
	pol_pool_put(p, piece);
	if (--parent->pdata[0])
		return NULL;
	*ret_status = (int)(int64_t)parent->pdata[1];
	return parent;
}

/* ---- split reads ---- */

int pol_splitter_init(struct pol_splitter *s, size_t cap)
{
	return pol_pool_init(&s->pool, cap);
}

void pol_splitter_free(struct pol_splitter *s)
{
	pol_pool_free(&s->pool);
}

int pol_split_read(struct pol_splitter *s, struct pol_extmap *m, struct policy_req *req,
		   uint64_t now, const struct pol_split_ops *ops, void *ctx)
{
	uint64_t pos = req->offset, end = req->offset + req->len, need = 0;
	struct pol_ext *e;

	/* Count first so that a split is all or nothing. */
	for (e = pol_extmap_first(m, req->dev, pos, req->len); e && pol_ext_off(e) < end;
	     e = pol_extmap_next(m, req->dev, e)) {
		need += pol_ext_off(e) > pos;
		need++;
		pos = pol_ext_off(e) + e->len;
	}
	need += pos < end;
	if (s->pool.cap - s->pool.used < need)
		return -EAGAIN;
	pol_pieces_begin(req, need);
	pos = req->offset;
	e = pol_extmap_first(m, req->dev, pos, req->len);
	while (pos < end) {
		uint64_t start = e ? pol_ext_off(e) : end;
		bool at_home = start > pos;
		uint64_t stop = at_home ? start : pol_ext_off(e) + e->len;
		uint64_t len = (stop < end ? stop : end) - pos;
		struct policy_req *p = pol_piece_get(&s->pool, req, pos, len, now);

		if (at_home) {
			ops->home(ctx, p);
		} else {
			ops->mapped(ctx, p, e->tdev, e->toff + (pos - pol_ext_off(e)));
			e = pol_extmap_next(m, req->dev, e);
			if (e && pol_ext_off(e) >= end)
				e = NULL;
		}
		pos += len;
	}
	return 0;
}

