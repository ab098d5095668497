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

int pol_extmap_init(struct pol_extmap *m, unsigned ndev)
{
	memset(m, 0, sizeof(*m));
	m->root = calloc(ndev ? ndev : 1, sizeof(*m->root));
	if (!m->root)
		return -ENOMEM;
	m->ndev = ndev;
	return 0;
}

static void ext_free_tree(struct policy_tnode *t)
{
	if (!t)
		return;
	ext_free_tree(t->left);
	ext_free_tree(t->right);
	free(pol_container_of(t, struct pol_ext, node));
}

void pol_extmap_free(struct pol_extmap *m)
{
	if (!m->root)
		return;
	for (unsigned d = 0; d < m->ndev; d++)
		ext_free_tree(m->root[d]);
	while (m->spare) {
		struct pol_ext *e = m->spare;

		m->spare = (struct pol_ext *)(void *)e->node.left;
		free(e);
	}
	free(m->root);
	memset(m, 0, sizeof(*m));
}

static struct pol_ext *ext_alloc(struct pol_extmap *m)
{
	struct pol_ext *e = m->spare;

	if (e) {
		m->spare = (struct pol_ext *)(void *)e->node.left;
		memset(e, 0, sizeof(*e));
		return e;
	}
	return calloc(1, sizeof(*e));
}

static void ext_release(struct pol_extmap *m, struct pol_ext *e)
{
	e->node.left = (struct policy_tnode *)(void *)m->spare;
	m->spare = e;
}

static struct pol_ext *ext_of(struct policy_tnode *n)
{
	return n ? pol_container_of(n, struct pol_ext, node) : NULL;
}

struct pol_ext *pol_extmap_first(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len)
{
	struct policy_tnode *root = m->root[home];
	struct pol_ext *e = ext_of(pol_tree_floor(root, off, 0));

	if (e && pol_ext_off(e) + e->len > off)
		return e;
	e = ext_of(pol_tree_lower_bound(root, off, 0));
	return e && pol_ext_off(e) < off + len ? e : NULL;
}

struct pol_ext *pol_extmap_next(struct pol_extmap *m, unsigned home, struct pol_ext *e)
{
	return ext_of(pol_tree_next(m->root[home], &e->node));
}

int pol_extmap_clear(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len)
{
	struct policy_tnode **root = &m->root[home];
	uint64_t end = off + len;
	struct pol_ext *e = pol_extmap_first(m, home, off, len);

	while (e && pol_ext_off(e) < end) {
		struct pol_ext *next = pol_extmap_next(m, home, e);
		uint64_t es = pol_ext_off(e), ee = es + e->len;

		if (es < off && ee > end) {
			/* Spans the range: split into left and right parts. */
			struct pol_ext *r = ext_alloc(m);

			if (!r)
				return -ENOMEM;
			r->node.key = end;
			r->len = ee - end;
			r->tdev = e->tdev;
			r->tag = e->tag;
			r->toff = e->toff + (end - es);
			e->len = off - es;
			pol_tree_insert(root, &r->node);
			m->count++;
			return 0;
		}
		if (es < off) {
			e->len = off - es;                  /* keep the left part */
		} else if (ee > end) {
			pol_tree_remove(root, &e->node);    /* keep the right part */
			e->toff += end - es;
			e->len = ee - end;
			e->node.key = end;
			pol_tree_insert(root, &e->node);
		} else {
			pol_tree_remove(root, &e->node);
			ext_release(m, e);
			m->count--;
		}
		e = next;
	}
	return 0;
}

int pol_extmap_put(struct pol_extmap *m, unsigned home, uint64_t off, uint64_t len,
		   unsigned tdev, uint64_t toff, uint64_t tag)
{
	struct policy_tnode **root = &m->root[home];
	struct pol_ext *e, *prev;

	/* Reserve the node first so failure leaves the table as it was. */
	e = ext_alloc(m);
	if (!e)
		return -ENOMEM;
	if (pol_extmap_clear(m, home, off, len) < 0) {
		ext_release(m, e);
		return -ENOMEM;
	}
	prev = ext_of(pol_tree_floor(*root, off, 0));
	if (prev && pol_ext_off(prev) + prev->len == off && prev->tdev == tdev &&
	    prev->toff + prev->len == toff && prev->tag == tag) {
		prev->len += len;   /* continues the previous extent */
		ext_release(m, e);
		return 0;
	}
	e->node.key = off;
	e->len = len;
	e->tdev = (uint16_t)tdev;
	e->toff = toff;
	e->tag = tag;
	pol_tree_insert(root, &e->node);
	m->count++;
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

