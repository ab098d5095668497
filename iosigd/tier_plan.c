/* SPDX-License-Identifier: MIT */
/*
 * tier_plan.c - recovery's decision: which bytes of which store are the
 * newest acknowledged data of which home file (rules in tier_plan.h).
 *
 * 1. Every sector a DATA, FILL or PAD record touched is a (store, sector,
 *    sequence, checksum) tuple; sorted by sector and newest first, each
 *    sector's state is the first tuple whose checksum matches the sector,
 *    and walking down from it, each record owns the bytes no newer record
 *    (up to the state) wrote: those are its valid bytes.
 * 2. Per home file, in sequence order, valid DATA bytes are mapped, HOME
 *    ranges are unmapped, a FENCE unmaps all, in an extent map (the
 *    policies' pol_extmap, one root per file).
 * 3. What stays mapped is the plan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_util.h"
#include "tier_format.h"
#include "tier_plan.h"

/* One sector a record touched. */
struct touch {
	uint64_t sector;
	uint64_t seq;
	uint32_t rec;
	uint32_t crc;
	uint16_t store;
};

/* A valid range of a record's bytes in its data area. */
struct vpiece {
	uint32_t rec;
	uint64_t lo, hi;
};

struct vlist {
	struct vpiece *v;
	size_t n, cap;
};

static int cmp_seq(const void *a, const void *b)
{
	const struct tplan_rec *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_touch(const void *a, const void *b)
{
	const struct touch *x = a, *y = b;

	if (x->store != y->store)
		return x->store < y->store ? -1 : 1;
	if (x->sector != y->sector)
		return x->sector < y->sector ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq;   /* newest first */
}

static int cmp_vpiece(const void *a, const void *b)
{
	const struct vpiece *x = a, *y = b;

	if (x->rec != y->rec)
		return x->rec < y->rec ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool touches_data(const struct tplan_rec *r)
{
	return r->type == TIER_REC_DATA || r->type == TIER_REC_FILL || r->type == TIER_REC_PAD;
}

static uint32_t crc_at(const struct tplan_rec *r, uint32_t i)
{
	const uint8_t *p = r->crcs + 4 * (size_t)i;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int vlist_add(struct vlist *l, uint32_t rec, uint64_t lo, uint64_t hi)
{
	/* Sectors come in ascending order: a piece continuing the record's
	 * previous one in the same sector walk is usually the list's last. */
	if (l->n && l->v[l->n - 1].rec == rec && l->v[l->n - 1].hi == lo) {
		l->v[l->n - 1].hi = hi;
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct vpiece *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct vpiece){ .rec = rec, .lo = lo, .hi = hi };
	return 0;
}

/* Intervals of one sector already owned by newer records. */
struct claimed {
	uint64_t lo[64], hi[64];
	unsigned n;
	bool full;     /* more than 64 pieces: treat the rest as owned */
};

/* Adds to l the parts of [lo, hi) not in c, for record rec; then claims
 * [lo, hi). */
static int own(struct claimed *c, struct vlist *l, uint32_t rec, uint64_t lo, uint64_t hi)
{
	uint64_t pos = lo;
	int r = 0;

	if (c->full)
		return 0;
	/* At most 64 intervals: an insertion sort by start. */
	for (unsigned i = 0; i < c->n; i++)
		for (unsigned k = i + 1; k < c->n; k++)
			if (c->lo[k] < c->lo[i]) {
				uint64_t t = c->lo[i];

				c->lo[i] = c->lo[k];
				c->lo[k] = t;
				t = c->hi[i];
				c->hi[i] = c->hi[k];
				c->hi[k] = t;
			}
	for (unsigned i = 0; i < c->n && pos < hi; i++) {
		if (c->hi[i] <= pos || c->lo[i] >= hi)
			continue;
		if (c->lo[i] > pos)
			r = r ? r : vlist_add(l, rec, pos, c->lo[i]);
		pos = c->hi[i] > pos ? c->hi[i] : pos;
	}
	if (pos < hi)
		r = r ? r : vlist_add(l, rec, pos, hi);
	if (c->n == 64) {
		c->full = true;
		return r;
	}
	c->lo[c->n] = lo;
	c->hi[c->n] = hi;
	c->n++;
	return r;
}

/* Step 1: the valid bytes of every data record, into *ret. */
static int valid_bytes(struct tplan_rec *recs, size_t n, const struct tplan_ops *ops, void *ctx,
		       struct tplan *p, struct vlist *ret)
{
	struct touch *t = NULL;
	size_t nt = 0, i = 0;
	int r = 0;

	for (size_t k = 0; k < n; k++)
		if (touches_data(&recs[k]))
			nt += recs[k].ncrc;
	if (!nt)
		return 0;
	t = malloc(nt * sizeof(*t));
	if (!t)
		return -ENOMEM;
	nt = 0;
	for (size_t k = 0; k < n; k++) {
		if (!touches_data(&recs[k]))
			continue;
		for (uint32_t s = 0; s < recs[k].ncrc; s++)
			t[nt++] = (struct touch){ .sector = recs[k].loc / TIER_SECTOR + s,
						  .seq = recs[k].seq, .rec = (uint32_t)k,
						  .crc = crc_at(&recs[k], s), .store = recs[k].store };
	}
	qsort(t, nt, sizeof(*t), cmp_touch);
	while (i < nt) {
		size_t end = i, k;
		uint32_t actual;

		while (end < nt && t[end].store == t[i].store && t[end].sector == t[i].sector)
			end++;
		p->sectors++;
		r = ops->sector_crc(ctx, t[i].store, t[i].sector, &actual);
		if (r < 0)
			goto out;
		for (k = i; k < end && t[k].crc != actual; k++) {
			/* Newer than what the sector holds: this write did not
			 * make it (a torn or lost write, or garbage). */
			const struct tplan_rec *rec = &recs[t[k].rec];
			uint64_t base = t[k].sector * TIER_SECTOR;
			uint64_t lo = rec->loc > base ? rec->loc : base;
			uint64_t hi = rec->loc + rec->len < base + TIER_SECTOR ?
				      rec->loc + rec->len : base + TIER_SECTOR;

			if (rec->type == TIER_REC_DATA)
				p->data_rejected_bytes += hi - lo;
		}
		if (k == end) {
			p->torn_sectors++;
		} else {
			struct claimed c = { .n = 0 };
			uint64_t base = t[i].sector * TIER_SECTOR;

			for (; k < end; k++) {
				const struct tplan_rec *rec = &recs[t[k].rec];
				uint64_t lo = rec->loc > base ? rec->loc : base;
				uint64_t hi = rec->loc + rec->len < base + TIER_SECTOR ?
					      rec->loc + rec->len : base + TIER_SECTOR;

				r = own(&c, ret, t[k].rec, lo, hi);
				if (r < 0)
					goto out;
			}
		}
		i = end;
	}
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(*ret->v), cmp_vpiece);
out:
	free(t);
	return r;
}

static int collect(struct pol_extmap *m, struct tplan *p)
{
	for (unsigned f = 0; f < p->nfiles; f++) {
		size_t n = 0, k = 0;

		for (struct pol_ext *e = pol_extmap_first(m, f, 0, UINT64_MAX); e;
		     e = pol_extmap_next(m, f, e))
			n++;
		if (!n)
			continue;
		p->pieces[f] = malloc(n * sizeof(**p->pieces));
		if (!p->pieces[f])
			return -ENOMEM;
		for (struct pol_ext *e = pol_extmap_first(m, f, 0, UINT64_MAX); e;
		     e = pol_extmap_next(m, f, e)) {
			p->pieces[f][k++] = (struct tplan_piece){ .file_off = pol_ext_off(e),
								  .len = e->len, .loc = e->toff,
								  .store = e->tdev };
			p->copy_bytes += e->len;
		}
		p->npieces[f] = n;
	}
	return 0;
}

int tplan_build(struct tplan_rec *recs, size_t n, unsigned nfiles, const struct tplan_ops *ops,
		void *ctx, struct tplan *ret)
{
	struct tplan p = { .nfiles = nfiles };
	struct vlist vl = { 0 };
	struct pol_extmap m;
	size_t vi = 0;
	int r;

	if (n)
		qsort(recs, n, sizeof(*recs), cmp_seq);   /* recs may be NULL then */
	p.pieces = calloc(nfiles ? nfiles : 1, sizeof(*p.pieces));
	p.npieces = calloc(nfiles ? nfiles : 1, sizeof(*p.npieces));
	if (!p.pieces || !p.npieces || pol_extmap_init(&m, nfiles ? nfiles : 1) < 0) {
		tplan_free(&p);
		return -ENOMEM;
	}
	r = valid_bytes(recs, n, ops, ctx, &p, &vl);
	for (size_t k = 0; r == 0 && k < n; k++) {
		const struct tplan_rec *rec = &recs[k];

		/* vl is sorted by record: this record's pieces come next. */
		while (vi < vl.n && vl.v[vi].rec < k)
			vi++;
		if (rec->file < 0 || (unsigned)rec->file >= nfiles)
			continue;
		switch (rec->type) {
		case TIER_REC_DATA:
			p.data_records++;
			for (; vi < vl.n && vl.v[vi].rec == k && r == 0; vi++) {
				const struct vpiece *v = &vl.v[vi];

				if (pol_extmap_put(&m, (unsigned)rec->file,
						   rec->file_off + (v->lo - rec->loc), v->hi - v->lo,
						   rec->store, v->lo, 0) < 0)
					r = -ENOMEM;
			}
			break;
		case TIER_REC_HOME:
			p.homes++;
			if (pol_extmap_clear(&m, (unsigned)rec->file, rec->file_off, rec->len) < 0)
				r = -ENOMEM;
			break;
		case TIER_REC_FENCE:
			p.fences++;
			if (pol_extmap_clear(&m, (unsigned)rec->file, 0, UINT64_MAX) < 0)
				r = -ENOMEM;
			break;
		default:
			break;
		}
	}
	if (r == 0)
		r = collect(&m, &p);
	free(vl.v);
	pol_extmap_free(&m);
	if (r < 0) {
		tplan_free(&p);
		return r;
	}
	*ret = p;
	return 0;
}

void tplan_free(struct tplan *p)
{
	if (!p)
		return;
	if (p->pieces)
		for (unsigned f = 0; f < p->nfiles; f++)
			free(p->pieces[f]);
	free(p->pieces);
	free(p->npieces);
	memset(p, 0, sizeof(*p));
}
