/* SPDX-License-Identifier: MIT */
/*
 * dev_ssd.c - an SSD: channels x dies of NAND behind a page-mapped FTL.
 *
 *  - Writes go page by page to the open block of the next die in
 *    round-robin order (consecutive dies sit on different channels); the
 *    page crosses its channel, then the die programs it.
 *  - Reads find the page through the mapping (never-written pages are read
 *    from die lpn % dies), the die senses it, then it crosses the channel.
 *  - When a die's free blocks fall below the threshold, greedy garbage
 *    collection picks the full block with the fewest valid pages, copies
 *    them inside the die (read + program each) and erases it: the die is
 *    busy meanwhile, so later requests to it stall.
 *  - Every command also pays a controller overhead; flushes complete after
 *    it (no volatile write cache is modelled).
 *
 * Memory: the mapping table is allocated in 4 KiB chunks when first
 * written (at most 4 bytes per logical page) and a block's reverse map
 * exists only while the block holds data (4 bytes per page): memory grows
 * with the written footprint up to a bound set by the capacity, never
 * with the length of the trace.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "source.h"

#define NONE UINT32_MAX
#define L2P_CHUNK 1024u          /* mapping slots allocated together (4 KiB) */

struct ssd_opts {
	uint64_t capacity;         /* logical bytes */
	uint64_t channels, dies;   /* dies per channel */
	uint64_t page, ppb;        /* page bytes, pages per block */
	double op;                 /* over-provisioning: spare / logical */
	uint64_t t_read, t_prog, t_erase, overhead;
	uint64_t channel_rate;     /* bytes/s */
	double gc_threshold;       /* free-block fraction of a die that starts GC */
	uint64_t queue_depth;
};

static const struct policy_opt ssd_opts_tab[] = {
	{ .name = "capacity", .type = POLICY_OPT_SIZE, .off = offsetof(struct ssd_opts, capacity),
	  .def = "64GiB", .min = 1ull << 20, .max = 1ull << 46,
	  .help = "logical capacity (mapping memory: up to 4 bytes per page)" },
	{ .name = "channels", .type = POLICY_OPT_UINT, .off = offsetof(struct ssd_opts, channels),
	  .def = "8", .min = 1, .max = 64, .help = "flash channels" },
	{ .name = "dies", .type = POLICY_OPT_UINT, .off = offsetof(struct ssd_opts, dies),
	  .def = "8", .min = 1, .max = 64, .help = "dies per channel" },
	{ .name = "page", .type = POLICY_OPT_SIZE, .off = offsetof(struct ssd_opts, page),
	  .def = "4KiB", .min = 512, .max = 1u << 20, .help = "flash page size" },
	{ .name = "pages_per_block", .type = POLICY_OPT_UINT, .off = offsetof(struct ssd_opts, ppb),
	  .def = "256", .min = 2, .max = 65536, .help = "pages per erase block" },
	{ .name = "op", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct ssd_opts, op),
	  .def = "0.07", .fmin = 0.01, .fmax = 4, .help = "over-provisioning (spare/logical capacity)" },
	{ .name = "read", .type = POLICY_OPT_TIME, .off = offsetof(struct ssd_opts, t_read),
	  .def = "50us", .min = 0, .max = POLICY_NS_PER_S, .help = "page read (sense) time" },
	{ .name = "program", .type = POLICY_OPT_TIME, .off = offsetof(struct ssd_opts, t_prog),
	  .def = "200us", .min = 0, .max = POLICY_NS_PER_S,
	  .help = "program time of one page (effective, multi-plane)" },
	{ .name = "erase", .type = POLICY_OPT_TIME, .off = offsetof(struct ssd_opts, t_erase),
	  .def = "3ms", .min = 0, .max = 10 * POLICY_NS_PER_S, .help = "block erase time" },
	{ .name = "overhead", .type = POLICY_OPT_TIME, .off = offsetof(struct ssd_opts, overhead),
	  .def = "20us", .min = 0, .max = POLICY_NS_PER_S, .help = "controller/FTL time per command" },
	{ .name = "channel_rate", .type = POLICY_OPT_RATE, .off = offsetof(struct ssd_opts, channel_rate),
	  .def = "400MiB/s", .min = 1u << 20, .max = 1ull << 40, .help = "bytes per second of one channel" },
	{ .name = "gc_threshold", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct ssd_opts, gc_threshold),
	  .def = "0.05", .fmin = 0, .fmax = 0.5,
	  .help = "garbage collection starts when a die's free blocks fall below this fraction" },
	{ .name = "queue_depth", .type = POLICY_OPT_UINT, .off = offsetof(struct ssd_opts, queue_depth),
	  .def = "32", .min = 1, .max = 65536, .help = "commands in flight (NCQ/NVMe queue)" },
	{ .name = NULL },
};

const struct sim_dev_class sim_dev_class_ssd = {
	.name = "ssd",
	.summary = "flash SSD: channels x dies, read/program/erase, page-mapped FTL, greedy GC",
	.models = "generic",
	.opts = ssd_opts_tab,
	.opts_size = sizeof(struct ssd_opts),
};

struct ssd_block {
	uint32_t valid;            /* valid pages */
	uint32_t erases;
	uint32_t *rmap;            /* page -> logical page (NONE = invalid); NULL when erased */
	bool full;                 /* written to the end and no longer open */
};

struct ssd_die {
	double free_at;            /* ns the die is idle from */
	uint32_t *free_stack;      /* free block numbers (within the die) */
	uint32_t nfree;
	uint32_t active, wp;       /* open block and its next page */
};

struct dev_ssd {
	struct sim_dev dev;
	struct ssd_opts o;
	uint32_t ndies, nblocks, ppb, gc_min;
	uint64_t lpages;
	double xfer_ns;            /* one page over a channel */
	struct ssd_die *die;
	struct ssd_block *blk;     /* ndies * nblocks */
	double *chan_free;
	uint32_t **l2p;            /* chunks of L2P_CHUNK slots: ppn + 1, 0 = unmapped */
	uint32_t next_die;
	/* counters */
	uint64_t host_pages, gc_pages, erases, gc_runs, read_pages, unmapped_reads;
	uint32_t min_free;
	double gc_busy_ns;
};

/* The mapping slot of lpn (*slot = ppn + 1, 0 = unmapped); NULL if its
 * chunk does not exist and !create, or out of memory. */
static uint32_t *l2p_slot(struct dev_ssd *s, uint64_t lpn, bool create)
{
	uint64_t c = lpn / L2P_CHUNK;

	if (!s->l2p[c]) {
		if (!create)
			return NULL;
		s->l2p[c] = calloc(L2P_CHUNK, sizeof(uint32_t));
		if (!s->l2p[c])
			return NULL;
	}
	return &s->l2p[c][lpn % L2P_CHUNK];
}

/* Opens a new block in die d.  false if none is free or memory is short. */
static bool open_block(struct dev_ssd *s, uint32_t d)
{
	struct ssd_die *die = &s->die[d];
	struct ssd_block *b;
	uint32_t blk;

	if (die->active != NONE)
		s->blk[(size_t)d * s->nblocks + die->active].full = true;
	die->active = NONE;
	if (!die->nfree)
		return false;
	blk = die->free_stack[--die->nfree];
	b = &s->blk[(size_t)d * s->nblocks + blk];
	if (!b->rmap) {
		b->rmap = malloc(s->ppb * sizeof(uint32_t));
		if (!b->rmap) {
			die->free_stack[die->nfree++] = blk;
			return false;
		}
	}
	for (uint32_t i = 0; i < s->ppb; i++)
		b->rmap[i] = NONE;
	b->full = false;
	b->valid = 0;
	die->active = blk;
	die->wp = 0;
	if (die->nfree < s->min_free)
		s->min_free = die->nfree;
	return true;
}

/* Places logical page lpn in die d's open block (mapping only, no timing). */
static bool place(struct dev_ssd *s, uint32_t d, uint64_t lpn)
{
	struct ssd_die *die = &s->die[d];
	uint32_t *slot = l2p_slot(s, lpn, true);
	struct ssd_block *b;
	uint64_t ppn;

	if (!slot)
		return false;
	if ((die->active == NONE || die->wp == s->ppb) && !open_block(s, d))
		return false;
	if (*slot) {
		uint64_t old = *slot - 1;
		struct ssd_block *ob = &s->blk[old / s->ppb];

		ob->valid--;
		ob->rmap[old % s->ppb] = NONE;
	}
	b = &s->blk[(size_t)d * s->nblocks + die->active];
	ppn = ((uint64_t)d * s->nblocks + die->active) * s->ppb + die->wp;
	b->rmap[die->wp++] = (uint32_t)lpn;
	b->valid++;
	*slot = (uint32_t)(ppn + 1);
	return true;
}

/* Greedy garbage collection in die d while it is short of free blocks. */
static void collect(struct dev_ssd *s, uint32_t d)
{
	struct ssd_die *die = &s->die[d];

	while (die->nfree < s->gc_min) {
		struct ssd_block *victim = NULL;
		uint32_t vi = 0, moved = 0;
		double busy;

		for (uint32_t i = 0; i < s->nblocks; i++) {
			struct ssd_block *b = &s->blk[(size_t)d * s->nblocks + i];

			if (b->full && i != die->active && (!victim || b->valid < victim->valid)) {
				victim = b;
				vi = i;
			}
		}
		if (!victim || victim->valid >= s->ppb)
			return;   /* nothing reclaimable: the die is full of valid data */
		for (uint32_t p = 0; p < s->ppb; p++) {
			uint32_t lpn = victim->rmap[p];

			if (lpn == NONE)
				continue;
			if (!place(s, d, lpn))
				return;
			moved++;
		}
		victim->full = false;
		victim->valid = 0;
		victim->erases++;
		free(victim->rmap);
		victim->rmap = NULL;
		die->free_stack[die->nfree++] = vi;
		busy = moved * (double)(s->o.t_read + s->o.t_prog) + (double)s->o.t_erase;
		die->free_at += busy;
		s->gc_busy_ns += busy;
		s->gc_pages += moved;
		s->erases++;
		s->gc_runs++;
	}
}

static double page_write(struct dev_ssd *s, uint64_t lpn, double t)
{
	uint32_t d = s->next_die, ch = d % s->o.channels;
	struct ssd_die *die = &s->die[d];
	double ts = t;

	s->next_die = (s->next_die + 1) % s->ndies;
	if (s->chan_free[ch] > ts)
		ts = s->chan_free[ch];
	if (die->free_at > ts)
		ts = die->free_at;
	s->chan_free[ch] = ts + s->xfer_ns;
	die->free_at = ts + s->xfer_ns + (double)s->o.t_prog;
	place(s, d, lpn);
	s->host_pages++;
	t = die->free_at;
	collect(s, d);
	return t;
}

static double page_read(struct dev_ssd *s, uint64_t lpn, double t)
{
	uint32_t *slot = l2p_slot(s, lpn, false);
	uint32_t d, ch;
	struct ssd_die *die;
	double ts;

	if (slot && *slot) {
		d = (uint32_t)((*slot - 1) / s->ppb / s->nblocks);
	} else {
		d = (uint32_t)(lpn % s->ndies);
		s->unmapped_reads++;
	}
	ch = d % s->o.channels;
	die = &s->die[d];
	ts = t > die->free_at ? t : die->free_at;
	ts += (double)s->o.t_read;
	if (s->chan_free[ch] > ts)
		ts = s->chan_free[ch];
	s->chan_free[ch] = ts + s->xfer_ns;
	die->free_at = ts + s->xfer_ns;
	s->read_pages++;
	return die->free_at;
}

static uint64_t ssd_serve(struct sim_dev *dv, int op, uint64_t offset, uint64_t len, uint64_t now)
{
	struct dev_ssd *s = (struct dev_ssd *)dv;
	double t = (double)now + (double)s->o.overhead, done = t;
	uint64_t first = offset / s->o.page, last = (offset + len + s->o.page - 1) / s->o.page;

	if (op == POLICY_OP_FLUSH)
		return (uint64_t)done;
	for (uint64_t lpn = first; lpn < last && lpn < s->lpages; lpn++) {
		double end = op == POLICY_OP_WRITE ? page_write(s, lpn, t) : page_read(s, lpn, t);

		if (end > done)
			done = end;
	}
	return (uint64_t)done;
}

static void ssd_report(struct sim_dev *dv, struct json_writer *w)
{
	struct dev_ssd *s = (struct dev_ssd *)dv;

	json_obj_begin(w, "flash");
	json_uint(w, "dies", s->ndies);
	json_uint(w, "blocks_per_die", s->nblocks);
	json_uint(w, "host_pages_written", s->host_pages);
	json_uint(w, "gc_pages_moved", s->gc_pages);
	json_num(w, "write_amplification",
		 s->host_pages ? (double)(s->host_pages + s->gc_pages) / (double)s->host_pages : 0);
	json_uint(w, "gc_runs", s->gc_runs);
	json_uint(w, "erases", s->erases);
	json_num(w, "gc_busy_s", s->gc_busy_ns / 1e9);
	json_uint(w, "pages_read", s->read_pages);
	json_uint(w, "unmapped_page_reads", s->unmapped_reads);
	json_uint(w, "min_free_blocks_per_die", s->min_free);
	json_obj_end(w);
}

static void ssd_destroy(struct sim_dev *dv)
{
	struct dev_ssd *s = (struct dev_ssd *)dv;

	if (!s)
		return;
	if (s->l2p)
		for (uint64_t c = 0; c < (s->lpages + L2P_CHUNK - 1) / L2P_CHUNK; c++)
			free(s->l2p[c]);
	free(s->l2p);
	if (s->blk)
		for (size_t i = 0; i < (size_t)s->ndies * s->nblocks; i++)
			free(s->blk[i].rmap);
	free(s->blk);
	if (s->die)
		for (uint32_t d = 0; d < s->ndies; d++)
			free(s->die[d].free_stack);
	free(s->die);
	free(s->chan_free);
	free(s);
}

static const struct sim_dev_ops ssd_ops = {
	.serve = ssd_serve,
	.report = ssd_report,
	.destroy = ssd_destroy,
};

int sim_dev_ssd_create(const char *model, const char *optstr, struct sim_dev **ret, char *err,
		       size_t errlen)
{
	struct dev_ssd *s;
	uint64_t phys_pages, per_die;
	int r;

	if (*model && strcmp(model, "generic")) {
		snprintf(err, errlen, "unknown SSD model '%s' (known: generic)", model);
		return -ENOENT;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto out_nomem;
	r = sim_dev_opts(&sim_dev_class_ssd, &s->o, optstr, err, errlen);
	if (r < 0) {
		free(s);
		return r;
	}
	s->ndies = (uint32_t)(s->o.channels * s->o.dies);
	s->ppb = (uint32_t)s->o.ppb;
	s->lpages = s->o.capacity / s->o.page;
	phys_pages = (uint64_t)((double)s->lpages * (1 + s->o.op)) + 1;
	per_die = (phys_pages + (uint64_t)s->ndies * s->ppb - 1) / ((uint64_t)s->ndies * s->ppb);
	/* A die needs room for GC to work: the open block, the threshold and one spare. */
	s->gc_min = (uint32_t)((double)per_die * s->o.gc_threshold);
	if (s->gc_min < 2)
		s->gc_min = 2;
	if (per_die < s->gc_min + 2)
		per_die = s->gc_min + 2;
	if (per_die * s->ndies * s->ppb >= (uint64_t)UINT32_MAX - 1 || s->lpages >= UINT32_MAX) {
		snprintf(err, errlen, "%llu pages do not fit the 32-bit mapping: use larger pages or "
			 "a smaller capacity", (unsigned long long)(per_die * s->ndies * s->ppb));
		free(s);
		return -EINVAL;
	}
	s->nblocks = (uint32_t)per_die;
	s->min_free = s->nblocks;
	s->xfer_ns = (double)s->o.page / (double)s->o.channel_rate * 1e9;
	s->die = calloc(s->ndies, sizeof(*s->die));
	s->blk = calloc((size_t)s->ndies * s->nblocks, sizeof(*s->blk));
	s->chan_free = calloc(s->o.channels, sizeof(*s->chan_free));
	s->l2p = calloc((s->lpages + L2P_CHUNK - 1) / L2P_CHUNK, sizeof(*s->l2p));
	if (!s->die || !s->blk || !s->chan_free || !s->l2p)
		goto out_free;
	for (uint32_t d = 0; d < s->ndies; d++) {
		struct ssd_die *die = &s->die[d];

		die->free_stack = malloc(s->nblocks * sizeof(uint32_t));
		if (!die->free_stack)
			goto out_free;
		/* Pop order 0, 1, 2 ... */
		for (uint32_t i = 0; i < s->nblocks; i++)
			die->free_stack[i] = s->nblocks - 1 - i;
		die->nfree = s->nblocks;
		die->active = NONE;
	}
	s->dev.ops = &ssd_ops;
	snprintf(s->dev.model, sizeof(s->dev.model), "generic");
	s->dev.info.cls = IOSIG_CLASS_SSD;
	s->dev.info.capacity = s->lpages * s->o.page;
	s->dev.info.queue_depth = (uint32_t)s->o.queue_depth;
	s->dev.info.block_size = (uint32_t)s->o.page;
	*ret = &s->dev;
	return 0;

out_free:
	ssd_destroy(&s->dev);
out_nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}
