/* SPDX-License-Identifier: MIT */
/*
 * cfq.c - Completely Fair Queuing (Linux block/cfq-iosched.c, the default
 * elevator the BID and burstiness papers compare against), per device:
 *
 *  - one sector-sorted queue per process for its synchronous requests
 *    (reads, sync writes) and one shared queue for all asynchronous writes;
 *  - busy queues take turns round robin; the active queue owns the disk for
 *    a time slice (slice_sync 100 ms, slice_async 40 ms) and may have at
 *    most `quantum` requests at the device at once;
 *  - inside a slice requests go in ascending sector order from the head
 *    position (C-LOOK), except that an expired FIFO head (fifo_expire_sync
 *    125 ms / async 250 ms) goes first, once per slice;
 *  - when a sync queue runs dry before its slice ends, the disk idles up to
 *    slice_idle (8 ms) for that process's next request (anticipation)
 *    instead of seeking away.
 *
 * An asynchronous write a process starts waiting for (expedite) becomes
 * what CFQ makes of a synchronous one: it moves to that process's sync
 * queue, at the head of its FIFO with its expiry passed.
 *
 * Simplifications, documented in docs/policies.md: one priority class, no
 * cgroups, no workload-type trees (sync, sync-noidle and async queues share
 * one round robin), slices do not scale with the number of busy queues.
 */
#include <errno.h>
#include <stdlib.h>

#include "pol_builtin.h"
#include "pol_util.h"

struct cfq_opts {
	uint64_t quantum;
	uint64_t slice_sync, slice_async, slice_idle;
	uint64_t fifo_expire_sync, fifo_expire_async;
	uint64_t max_merge;
};

struct cfq_queue {
	uint32_t stream;
	bool sync;
	bool on_rr;
	struct policy_tnode *sorted;   /* by (offset, id) */
	struct policy_list fifo;       /* arrival order; req->pdata[0] = FIFO expiry */
	unsigned nreq;                 /* queued */
	unsigned inflight;             /* dispatched, not completed (commands) */
	bool fifo_served;              /* served an expired request this slice */
	struct policy_list rr;         /* in cfq_dev.rr */
	struct policy_list free_link;
};

struct cfq_dev {
	struct policy_list rr;         /* busy queues waiting for a slice */
	struct cfq_queue *active;
	uint64_t slice_end;
	uint64_t idle_until;           /* 0 = not idling */
	uint64_t head_pos;             /* end of the last dispatched command */
	struct pol_map sync;           /* stream -> sync queue */
	struct cfq_queue *async_q;
};

struct cfq {
	struct cfq_opts o;
	unsigned ndev;
	struct cfq_dev *dev;
	struct policy_list free_queues;
	uint64_t slices, idles, idle_hits, expedited;
};

#define MS POLICY_NS_PER_MS

static const struct policy_opt cfq_opts[] = {
	{ .name = "quantum", .type = POLICY_OPT_UINT, .off = offsetof(struct cfq_opts, quantum),
	  .def = "8", .min = 1, .max = 1024,
	  .help = "most requests of the active queue at the device at once (Linux quantum)" },
	{ .name = "slice_sync", .type = POLICY_OPT_TIME, .off = offsetof(struct cfq_opts, slice_sync),
	  .def = "100ms", .min = 1, .max = 60 * POLICY_NS_PER_S,
	  .help = "time slice of a process's synchronous queue (Linux slice_sync)" },
	{ .name = "slice_async", .type = POLICY_OPT_TIME, .off = offsetof(struct cfq_opts, slice_async),
	  .def = "40ms", .min = 1, .max = 60 * POLICY_NS_PER_S,
	  .help = "time slice of the shared asynchronous queue (Linux slice_async)" },
	{ .name = "slice_idle", .type = POLICY_OPT_TIME, .off = offsetof(struct cfq_opts, slice_idle),
	  .def = "8ms", .min = 0, .max = 10 * POLICY_NS_PER_S,
	  .help = "idle wait for the next request of a drained sync queue (Linux slice_idle; 0 = never idle)" },
	{ .name = "fifo_expire_sync", .type = POLICY_OPT_TIME, .off = offsetof(struct cfq_opts, fifo_expire_sync),
	  .def = "125ms", .min = 1, .max = 3600 * POLICY_NS_PER_S,
	  .help = "age after which a sync request jumps the sorted order (Linux fifo_expire_sync)" },
	{ .name = "fifo_expire_async", .type = POLICY_OPT_TIME, .off = offsetof(struct cfq_opts, fifo_expire_async),
	  .def = "250ms", .min = 1, .max = 3600 * POLICY_NS_PER_S,
	  .help = "age after which an async request jumps the sorted order (Linux fifo_expire_async)" },
	{ .name = "max_merge", .type = POLICY_OPT_SIZE, .off = offsetof(struct cfq_opts, max_merge),
	  .def = "512KiB", .min = 0, .max = 1ull << 30,
	  .help = "largest command built by merging contiguous requests (0 = no merging)" },
	{ .name = NULL },
};

static int cfq_init(struct policy *pol)
{
	struct cfq *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->o = *(struct cfq_opts *)pol->opts;
	c->ndev = pol->env->ndev;
	c->dev = calloc(c->ndev ? c->ndev : 1, sizeof(*c->dev));
	if (!c->dev) {
		free(c);
		return -ENOMEM;
	}
	pol_list_init(&c->free_queues);
	for (unsigned d = 0; d < c->ndev; d++) {
		pol_list_init(&c->dev[d].rr);
		pol_map_init(&c->dev[d].sync);
	}
	pol->priv = c;
	return 0;
}

static struct cfq_queue *queue_new(struct cfq *c, uint32_t stream, bool sync)
{
	struct cfq_queue *q;

	if (!pol_list_empty(&c->free_queues)) {
		q = pol_container_of(c->free_queues.next, struct cfq_queue, free_link);
		pol_list_del(&q->free_link);
	} else {
		q = malloc(sizeof(*q));
		if (!q)
			return NULL;
	}
	*q = (struct cfq_queue){ .stream = stream, .sync = sync };
	pol_list_init(&q->fifo);
	pol_list_init(&q->rr);
	pol_list_init(&q->free_link);
	return q;
}

/* Recycles an idle queue that is neither active, queued nor in flight. */
static void queue_put(struct cfq *c, struct cfq_dev *cd, struct cfq_queue *q)
{
	if (q->nreq || q->inflight || q == cd->active || q->on_rr)
		return;
	if (q->sync)
		pol_map_del(&cd->sync, q->stream);
	else
		cd->async_q = NULL;
	pol_list_add_tail(&c->free_queues, &q->free_link);
}

/* The queue of `stream`'s sync requests or the shared async queue on cd,
 * made if need be; NULL when out of memory. */
static struct cfq_queue *queue_get(struct cfq *c, struct cfq_dev *cd, uint32_t stream, bool sync)
{
	struct cfq_queue *q = sync ? pol_map_get(&cd->sync, stream) : cd->async_q;

	if (q)
		return q;
	q = queue_new(c, stream, sync);
	if (!q)
		return NULL;
	if (sync ? pol_map_put(&cd->sync, stream, q) < 0 : (cd->async_q = q, 0)) {
		pol_list_add_tail(&c->free_queues, &q->free_link);
		return NULL;
	}
	return q;
}

/* Puts req into q (FIFO tail, or head when `first`) and q in line. */
static void queue_add(struct cfq *c, struct cfq_dev *cd, struct cfq_queue *q,
		      struct policy_req *req, bool first)
{
	req->pptr = q;
	req->tnode.key = req->offset;
	req->tnode.key2 = req->id;
	pol_tree_insert(&q->sorted, &req->tnode);
	if (first)
		pol_list_add_head(&q->fifo, &req->link);
	else
		pol_list_add_tail(&q->fifo, &req->link);
	q->nreq++;
	if (q == cd->active) {
		if (cd->idle_until) {
			/* The process came back while we idled for it. */
			cd->idle_until = 0;
			c->idle_hits++;
		}
	} else if (!q->on_rr) {
		pol_list_add_tail(&cd->rr, &q->rr);
		q->on_rr = true;
	}
}

static int cfq_submit(struct policy *pol, struct policy_req *req)
{
	struct cfq *c = pol->priv;
	struct policy_env *env = pol->env;
	struct cfq_dev *cd;
	struct cfq_queue *q;
	bool sync = req->op == POLICY_OP_READ || (req->flags & POLICY_REQ_SYNC);

	if (req->dev >= c->ndev)
		return -EINVAL;
	cd = &c->dev[req->dev];
	q = queue_get(c, cd, req->stream, sync);
	if (!q)
		return -ENOMEM;
	req->pdata[1] = 0;
	req->pdata[0] = env->now(env) + (sync ? c->o.fifo_expire_sync : c->o.fifo_expire_async);
	queue_add(c, cd, q, req, false);
	return 0;
}

/* Ends the active queue's slice. */
static void slice_expire(struct cfq *c, struct cfq_dev *cd)
{
	struct cfq_queue *q = cd->active;

	cd->active = NULL;
	cd->idle_until = 0;
	if (q->nreq) {
		pol_list_add_tail(&cd->rr, &q->rr);
		q->on_rr = true;
	} else {
		queue_put(c, cd, q);
	}
}

/* The queue to dispatch from now, or NULL (nothing, or idling). */
static struct cfq_queue *select_queue(struct cfq *c, struct cfq_dev *cd, struct policy_env *env,
				      uint64_t now)
{
	struct cfq_queue *q = cd->active;

	if (q) {
		if (now >= cd->slice_end) {
			slice_expire(c, cd);
		} else if (q->nreq) {
			return q;
		} else if (q->sync && c->o.slice_idle) {
			/* Drained sync queue: wait for its in-flight requests, then
			 * idle for the process's next request. */
			if (q->inflight)
				return NULL;
			if (!cd->idle_until) {
				cd->idle_until = now + c->o.slice_idle;
				if (cd->idle_until > cd->slice_end)
					cd->idle_until = cd->slice_end;
				c->idles++;
				env->wake_at(env, cd->idle_until);
				return NULL;
			}
			if (now < cd->idle_until) {
				/* Re-arm: an earlier tick may have consumed the wake-up. */
				env->wake_at(env, cd->idle_until);
				return NULL;
			}
			slice_expire(c, cd);
		} else {
			slice_expire(c, cd);
		}
	}
	if (pol_list_empty(&cd->rr))
		return NULL;
	q = pol_container_of(cd->rr.next, struct cfq_queue, rr);
	pol_list_del(&q->rr);
	q->on_rr = false;
	q->fifo_served = false;
	cd->active = q;
	cd->idle_until = 0;
	cd->slice_end = now + (q->sync ? c->o.slice_sync : c->o.slice_async);
	c->slices++;
	return q;
}

static void take(struct cfq_queue *q, struct policy_req *r)
{
	pol_tree_remove(&q->sorted, &r->tnode);
	pol_list_del(&r->link);
	q->nreq--;
}

/* A process waits for req: from the async queue into its sync queue, at
 * the head of the FIFO, expired (served first in the queue's next slice). */
static void cfq_expedite(struct policy *pol, struct policy_req *req)
{
	struct cfq *c = pol->priv;
	struct cfq_dev *cd = &c->dev[req->dev];
	struct cfq_queue *from = req->pptr, *to;

	to = from->sync ? from : queue_get(c, cd, req->stream, true);
	if (!to)
		return;   /* out of memory: it stays where it is */
	take(from, req);
	if (from != to && !from->nreq && from->on_rr) {
		pol_list_del(&from->rr);
		from->on_rr = false;
	}
	if (from != to)
		queue_put(c, cd, from);
	req->pdata[0] = pol->env->now(pol->env);
	queue_add(c, cd, to, req, true);
	to->fifo_served = false;
	c->expedited++;
}

static void cfq_dispatch(struct policy *pol)
{
	struct cfq *c = pol->priv;
	struct policy_env *env = pol->env;
	uint64_t now = env->now(env);

	for (unsigned d = 0; d < c->ndev; d++) {
		struct cfq_dev *cd = &c->dev[d];

		while (pol_dev_room(env, d)) {
			struct cfq_queue *q = select_queue(c, cd, env, now);
			struct policy_req *rq, *next;
			uint64_t total;

			if (!q || q->inflight >= c->o.quantum)
				break;
			rq = pol_container_of(q->fifo.next, struct policy_req, link);
			if (!q->fifo_served && rq->pdata[0] <= now) {
				q->fifo_served = true;
			} else {
				rq = pol_req_of_tnode(pol_tree_lower_bound(q->sorted, cd->head_pos, 0));
				if (!rq)
					rq = pol_req_of_tnode(pol_tree_first(q->sorted));
			}
			rq = pol_tree_chain(q->sorted, rq, c->o.max_merge, &next);
			total = 0;
			for (struct policy_req *m = rq; m; m = m->merge_next) {
				take(q, m);
				total += m->len;
			}
			cd->head_pos = rq->offset + total;
			q->inflight++;
			if (pol_issue(env, rq, d, rq->offset) < 0)
				q->inflight--;
		}
	}
}

static void cfq_complete(struct policy *pol, struct policy_req *req)
{
	struct cfq *c = pol->priv;
	struct cfq_queue *q = req->pptr;
	struct cfq_dev *cd = &c->dev[req->dev];

	/* Once per command: the chain head is the request whose issued_off
	 * starts the command; members after it only pass through. */
	if (req->pdata[1])
		return;
	for (struct policy_req *m = req->merge_next; m; m = m->merge_next)
		m->pdata[1] = 1;
	q->inflight--;
	queue_put(c, cd, q);
}

static void cfq_tick(struct policy *pol)
{
}

static void cfq_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	struct cfq *c = pol->priv;

	emit(ctx, "slices", (double)c->slices);
	emit(ctx, "idle_waits", (double)c->idles);
	emit(ctx, "idle_hits", (double)c->idle_hits);
	emit(ctx, "expedited", (double)c->expedited);
}

static void cfq_fini(struct policy *pol)
{
	struct cfq *c = pol->priv;

	if (!c)
		return;
	for (unsigned d = 0; d < c->ndev; d++) {
		struct cfq_dev *cd = &c->dev[d];

		pol_map_free_vals(&cd->sync);
		free(cd->async_q);
	}
	while (!pol_list_empty(&c->free_queues)) {
		struct cfq_queue *q = pol_container_of(c->free_queues.next, struct cfq_queue, free_link);

		pol_list_del(&q->free_link);
		free(q);
	}
	free(c->dev);
	free(c);
	pol->priv = NULL;
}

const struct policy_ops pol_cfq_ops = {
	.version = POLICY_OPS_VERSION,
	.name = "cfq",
	.summary = "per-process sorted queues served round robin in time slices, with idling (Linux CFQ)",
	.opts = cfq_opts,
	.opts_size = sizeof(struct cfq_opts),
	.init = cfq_init,
	.submit = cfq_submit,
	.dispatch = cfq_dispatch,
	.complete = cfq_complete,
	.tick = cfq_tick,
	.fini = cfq_fini,
	.report = cfq_report,
	.expedite = cfq_expedite,
};
