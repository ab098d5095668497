/* SPDX-License-Identifier: MIT */
/*
 * burst.c - the burstiness-aware I/O scheduler for virtual machines doing
 * MapReduce ("Burstiness-aware I/O Scheduler for MapReduce Framework on
 * Virtualized Environments"), per device:
 *
 *  - Burstiness detector: a stream (VM, process) whose required bandwidth
 *    - bytes that arrived during the last `window` plus the bytes still
 *    waiting, per second - exceeds B_threshold (2 MB/s) is bursty;
 *  - Coarse-grained dispatcher: bursty streams take turns round robin, each
 *    owning the disk exclusively for S_quantum (1 s); a stream that runs
 *    dry keeps its turn for `grace` in case it continues (our addition, as
 *    CFQ's slice_idle), and one that stopped being bursty leaves the turn;
 *  - Starvation handler: while bursty streams exist, reads of non-bursty
 *    streams still go out, limited to M_reserved (2 MB/s) by a token
 *    bucket; their writes wait (which raises their required bandwidth
 *    until they count as bursty, as the paper intends);
 *  - with no bursty stream, or none with requests waiting, requests go in
 *    arrival order (the "original scheduler" of the paper is CFQ; arrival
 *    order keeps this one simple and the disk never idles needlessly).
 * Requests of a stream go in arrival order; contiguous ones merge.
 * A request a process starts waiting for (expedite) leaves its stream's
 * queue for a per-device queue served before everything else, as the
 * reserved path serves calm reads, but without the token limit: a process
 * that blocks has stopped adding to its burst.
 */
#include <errno.h>
#include <stdlib.h>

#include "pol_builtin.h"
#include "pol_util.h"

#define NBUCKET 10

struct burst_opts {
	uint64_t b_threshold;    /* bytes/s */
	uint64_t s_quantum;      /* ns */
	uint64_t m_reserved;     /* bytes/s */
	uint64_t window;         /* ns */
	uint64_t grace;          /* ns */
	uint64_t reserve_depth;  /* token bucket depth, bytes */
	uint64_t max_merge;
};

struct bstream {
	uint32_t id;
	uint16_t dev;
	bool bursty, on_rr;
	struct policy_list fifo;     /* all its requests, arrival order (req->link) */
	struct policy_list reads;    /* its reads, arrival order (req->link2) */
	uint64_t pending;            /* bytes waiting */
	uint64_t bucket[NBUCKET];    /* bytes arrived per window/NBUCKET slot */
	uint64_t bucket_epoch;       /* slot number of bucket[epoch % NBUCKET] */
	struct policy_list rr;       /* in bdev.rr while bursty */
	struct policy_list all;      /* in bdev.streams */
};

struct bdev {
	struct pol_map streams_by_id;
	struct policy_list streams;  /* every stream of the device */
	struct policy_list rr;       /* bursty streams waiting for a turn */
	struct bstream *active;
	uint64_t quantum_end;
	uint64_t dry_since;          /* active ran dry at; 0 = it has requests */
	double tokens;               /* bytes non-bursty reads may use now */
	uint64_t tokens_t;
	unsigned nbursty;
	struct policy_list waited;    /* expedited requests, served first (req->link) */
};

struct burst {
	struct burst_opts o;
	struct policy_env *env;
	unsigned ndev;
	struct bdev *dev;
	uint64_t turns, reserved_reads, reserved_bytes, became_bursty, expedited;
};

static const struct policy_opt burst_opts[] = {
	{ .name = "b_threshold", .type = POLICY_OPT_RATE, .off = offsetof(struct burst_opts, b_threshold),
	  .def = "2MB/s", .min = 1, .max = UINT64_MAX,
	  .help = "required bandwidth above which a stream is bursty (paper B_threshold)" },
	{ .name = "s_quantum", .type = POLICY_OPT_TIME, .off = offsetof(struct burst_opts, s_quantum),
	  .def = "1s", .min = 1, .max = 3600 * POLICY_NS_PER_S,
	  .help = "exclusive turn of a bursty stream (paper S_quantum)" },
	{ .name = "m_reserved", .type = POLICY_OPT_RATE, .off = offsetof(struct burst_opts, m_reserved),
	  .def = "2MB/s", .min = 0, .max = UINT64_MAX,
	  .help = "bandwidth reserved for reads of non-bursty streams (paper M_reserved)" },
	{ .name = "window", .type = POLICY_OPT_TIME, .off = offsetof(struct burst_opts, window),
	  .def = "1s", .min = NBUCKET, .max = 3600 * POLICY_NS_PER_S,
	  .help = "how far back arrivals count towards the required bandwidth" },
	{ .name = "grace", .type = POLICY_OPT_TIME, .off = offsetof(struct burst_opts, grace),
	  .def = "10ms", .min = 0, .max = 60 * POLICY_NS_PER_S,
	  .help = "how long a bursty stream that ran dry keeps its turn (not in the paper)" },
	{ .name = "reserve_depth", .type = POLICY_OPT_SIZE, .off = offsetof(struct burst_opts, reserve_depth),
	  .def = "512KiB", .min = 512, .max = 1ull << 34,
	  .help = "largest burst of reserved non-bursty reads (token bucket depth)" },
	{ .name = "max_merge", .type = POLICY_OPT_SIZE, .off = offsetof(struct burst_opts, max_merge),
	  .def = "512KiB", .min = 0, .max = 1ull << 30,
	  .help = "largest command built by merging contiguous requests (0 = no merging)" },
	{ .name = NULL },
};

static int burst_init(struct policy *pol)
{
	struct burst *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->o = *(struct burst_opts *)pol->opts;
	b->env = pol->env;
	b->ndev = pol->env->ndev;
	b->dev = calloc(b->ndev ? b->ndev : 1, sizeof(*b->dev));
	if (!b->dev) {
		free(b);
		return -ENOMEM;
	}
	for (unsigned d = 0; d < b->ndev; d++) {
		pol_map_init(&b->dev[d].streams_by_id);
		pol_list_init(&b->dev[d].streams);
		pol_list_init(&b->dev[d].rr);
		pol_list_init(&b->dev[d].waited);
		b->dev[d].tokens = b->o.m_reserved ? (double)b->o.reserve_depth : 0;
		b->dev[d].tokens_t = pol->env->now(pol->env);
	}
	pol->priv = b;
	return 0;
}

/* Arrived bytes in the last window (buckets rotated up to now). */
static uint64_t arrived(struct burst *b, struct bstream *s, uint64_t now)
{
	uint64_t slot = b->o.window / NBUCKET, epoch = now / slot, sum = 0;

	if (epoch - s->bucket_epoch >= NBUCKET) {
		for (unsigned i = 0; i < NBUCKET; i++)
			s->bucket[i] = 0;
	} else {
		for (uint64_t e = s->bucket_epoch + 1; e <= epoch; e++)
			s->bucket[e % NBUCKET] = 0;
	}
	s->bucket_epoch = epoch;
	for (unsigned i = 0; i < NBUCKET; i++)
		sum += s->bucket[i];
	return sum;
}

/* Required bandwidth in bytes per second. */
static double required(struct burst *b, struct bstream *s, uint64_t now)
{
	return (double)(arrived(b, s, now) + s->pending) * 1e9 / (double)b->o.window;
}

static void make_bursty(struct burst *b, struct bdev *bd, struct bstream *s)
{
	s->bursty = true;
	bd->nbursty++;
	b->became_bursty++;
	if (s != bd->active && !s->on_rr) {
		pol_list_add_tail(&bd->rr, &s->rr);
		s->on_rr = true;
	}
}

static void make_calm(struct bdev *bd, struct bstream *s)
{
	s->bursty = false;
	bd->nbursty--;
	if (s->on_rr) {
		pol_list_del(&s->rr);
		s->on_rr = false;
	}
}

static int burst_submit(struct policy *pol, struct policy_req *req)
{
	struct burst *b = pol->priv;
	uint64_t now = b->env->now(b->env);
	struct bdev *bd;
	struct bstream *s;

	if (req->dev >= b->ndev)
		return -EINVAL;
	bd = &b->dev[req->dev];
	s = pol_map_get(&bd->streams_by_id, req->stream);
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s || pol_map_put(&bd->streams_by_id, req->stream, s) < 0) {
			free(s);
			return -ENOMEM;
		}
		s->id = req->stream;
		s->dev = req->dev;
		pol_list_init(&s->fifo);
		pol_list_init(&s->reads);
		pol_list_init(&s->rr);
		pol_list_add_tail(&bd->streams, &s->all);
		s->bucket_epoch = now / (b->o.window / NBUCKET);
	}
	arrived(b, s, now);
	s->bucket[s->bucket_epoch % NBUCKET] += req->len;
	s->pending += req->len;
	req->pptr = s;
	pol_list_add_tail(&s->fifo, &req->link);
	if (req->op == POLICY_OP_READ)
		pol_list_add_tail(&s->reads, &req->link2);
	else
		pol_list_init(&req->link2);
	if (s == bd->active)
		bd->dry_since = 0;
	if (!s->bursty && required(b, s, now) > (double)b->o.b_threshold) {
		make_bursty(b, bd, s);
	} else if (s->bursty && !s->on_rr && s != bd->active) {
		pol_list_add_tail(&bd->rr, &s->rr);   /* an idle bursty stream is back */
		s->on_rr = true;
	}
	return 0;
}

/* Takes req (and contiguous followers of its stream) and issues them. */
static void send(struct burst *b, unsigned d, struct bstream *s, struct policy_req *req)
{
	struct policy_req *tail = req;
	uint64_t total = req->len;

	pol_list_del(&req->link);
	pol_list_del(&req->link2);
	req->merge_next = NULL;
	/* Merge the stream's following requests that continue it. */
	while (!pol_list_empty(&s->fifo)) {
		struct policy_req *n = pol_container_of(s->fifo.next, struct policy_req, link);

		if (!pol_can_merge(tail, n, total, b->o.max_merge))
			break;
		pol_list_del(&n->link);
		pol_list_del(&n->link2);
		n->merge_next = NULL;
		tail->merge_next = n;
		tail = n;
		total += n->len;
	}
	s->pending -= total;
	pol_issue(b->env, req, d, req->offset);
}

/* Sends the head of the expedited queue and the expedited requests right
 * behind it that continue it. */
static void send_waited(struct burst *b, unsigned d, struct bdev *bd)
{
	struct policy_req *req = pol_container_of(bd->waited.next, struct policy_req, link);
	struct policy_req *tail = req;
	uint64_t total = req->len;

	pol_list_del(&req->link);
	req->merge_next = NULL;
	((struct bstream *)req->pptr)->pending -= req->len;
	while (!pol_list_empty(&bd->waited)) {
		struct policy_req *n = pol_container_of(bd->waited.next, struct policy_req, link);

		if (!pol_can_merge(tail, n, total, b->o.max_merge))
			break;
		pol_list_del(&n->link);
		((struct bstream *)n->pptr)->pending -= n->len;
		n->merge_next = NULL;
		tail->merge_next = n;
		tail = n;
		total += n->len;
	}
	pol_issue(b->env, req, d, req->offset);
}

/* A process waits for req: out of its stream's queues into the device's
 * expedited queue. */
static void burst_expedite(struct policy *pol, struct policy_req *req)
{
	struct burst *b = pol->priv;

	pol_list_del(&req->link);
	pol_list_del(&req->link2);
	pol_list_add_tail(&b->dev[req->dev].waited, &req->link);
	b->expedited++;
}

/* Oldest request (reads_only: oldest read) of a non-bursty stream, or NULL. */
static struct policy_req *oldest_calm(struct bdev *bd, bool reads_only)
{
	struct policy_req *best = NULL;

	for (struct policy_list *l = bd->streams.next; l != &bd->streams; l = l->next) {
		struct bstream *s = pol_container_of(l, struct bstream, all);
		struct policy_list *q = reads_only ? &s->reads : &s->fifo;
		struct policy_req *r;

		if (s->bursty || pol_list_empty(q))
			continue;
		r = reads_only ? pol_container_of(q->next, struct policy_req, link2) :
				 pol_container_of(q->next, struct policy_req, link);
		if (!best || r->arrival_ns < best->arrival_ns ||
		    (r->arrival_ns == best->arrival_ns && r->id < best->id))
			best = r;
	}
	return best;
}

/* The bursty stream whose turn it is, or NULL while none can go now. */
static struct bstream *turn(struct burst *b, struct bdev *bd, uint64_t now)
{
	struct bstream *a = bd->active;

	if (a) {
		bool dry = pol_list_empty(&a->fifo);

		if (dry && !bd->dry_since)
			bd->dry_since = now;
		if (now >= bd->quantum_end || !a->bursty ||
		    (dry && now - bd->dry_since >= b->o.grace)) {
			/* Turn over: re-classify, back in line if still bursty. */
			bd->active = NULL;
			if (a->bursty && required(b, a, now) <= (double)b->o.b_threshold)
				make_calm(bd, a);
			if (a->bursty && !a->on_rr) {
				pol_list_add_tail(&bd->rr, &a->rr);
				a->on_rr = true;
			}
			a = NULL;
		} else {
			if (dry)
				b->env->wake_at(b->env, bd->dry_since + b->o.grace < bd->quantum_end ?
							       bd->dry_since + b->o.grace : bd->quantum_end);
			return a;
		}
	}
	/* Waiting calm streams may have become bursty by waiting. */
	for (struct policy_list *l = bd->streams.next; l != &bd->streams; l = l->next) {
		struct bstream *s = pol_container_of(l, struct bstream, all);

		if (!s->bursty && s->pending && required(b, s, now) > (double)b->o.b_threshold)
			make_bursty(b, bd, s);
	}
	/* Next bursty stream with requests; idle ones rejoin on arrival. */
	do {
		if (pol_list_empty(&bd->rr))
			return NULL;
		a = pol_container_of(bd->rr.next, struct bstream, rr);
		pol_list_del(&a->rr);
		a->on_rr = false;
	} while (pol_list_empty(&a->fifo));
	bd->active = a;
	bd->quantum_end = now + b->o.s_quantum;
	bd->dry_since = 0;
	b->turns++;
	return a;
}

static void refill(struct burst *b, struct bdev *bd, uint64_t now)
{
	bd->tokens += (double)(now - bd->tokens_t) * (double)b->o.m_reserved / 1e9;
	if (bd->tokens > (double)b->o.reserve_depth)
		bd->tokens = (double)b->o.reserve_depth;
	bd->tokens_t = now;
}

static void burst_dispatch(struct policy *pol)
{
	struct burst *b = pol->priv;
	struct policy_env *env = b->env;
	uint64_t now = env->now(env);

	for (unsigned d = 0; d < b->ndev; d++) {
		struct bdev *bd = &b->dev[d];

		refill(b, bd, now);
		while (pol_dev_room(env, d)) {
			struct bstream *a;
			struct policy_req *r;

			if (!pol_list_empty(&bd->waited)) {
				send_waited(b, d, bd);
				continue;
			}
			if (!bd->nbursty && !bd->active) {
				/* Nobody bursty: arrival order. */
				r = oldest_calm(bd, false);
				if (!r)
					break;
				send(b, d, r->pptr, r);
				continue;
			}
			/* Starvation handler: reserved bandwidth for calm reads. */
			r = oldest_calm(bd, true);
			if (r && bd->tokens >= (double)r->len) {
				bd->tokens -= (double)r->len;
				b->reserved_reads++;
				b->reserved_bytes += r->len;
				send(b, d, r->pptr, r);
				continue;
			}
			if (r && b->o.m_reserved)
				env->wake_at(env, now + (uint64_t)(((double)r->len - bd->tokens) * 1e9 /
								   (double)b->o.m_reserved) + 1);
			a = turn(b, bd, now);
			if (!a) {
				/* No bursty stream has work: calm ones may use the disk. */
				r = oldest_calm(bd, false);
				if (!r)
					break;
				send(b, d, r->pptr, r);
				continue;
			}
			if (pol_list_empty(&a->fifo))
				break;   /* its grace period */
			send(b, d, a, pol_container_of(a->fifo.next, struct policy_req, link));
		}
	}
}

static void burst_complete(struct policy *pol, struct policy_req *req)
{
}

static void burst_tick(struct policy *pol)
{
}

static void burst_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	struct burst *b = pol->priv;

	emit(ctx, "turns", (double)b->turns);
	emit(ctx, "became_bursty", (double)b->became_bursty);
	emit(ctx, "reserved_reads", (double)b->reserved_reads);
	emit(ctx, "reserved_bytes", (double)b->reserved_bytes);
	emit(ctx, "expedited", (double)b->expedited);
}

static void burst_fini(struct policy *pol)
{
	struct burst *b = pol->priv;

	if (!b)
		return;
	for (unsigned d = 0; d < b->ndev; d++) {
		struct bdev *bd = &b->dev[d];

		while (!pol_list_empty(&bd->streams)) {
			struct bstream *s = pol_container_of(bd->streams.next, struct bstream, all);

			pol_list_del(&s->all);
			free(s);
		}
		pol_map_free(&bd->streams_by_id);
	}
	free(b->dev);
	free(b);
	pol->priv = NULL;
}

const struct policy_ops pol_burst_ops = {
	.version = POLICY_OPS_VERSION,
	.name = "burst",
	.summary = "burstiness-aware: bursty streams get exclusive round-robin quanta, calm reads a reserved bandwidth",
	.opts = burst_opts,
	.opts_size = sizeof(struct burst_opts),
	.init = burst_init,
	.submit = burst_submit,
	.dispatch = burst_dispatch,
	.complete = burst_complete,
	.tick = burst_tick,
	.fini = burst_fini,
	.report = burst_report,
	.expedite = burst_expedite,
};
