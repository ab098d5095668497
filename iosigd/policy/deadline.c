/* SPDX-License-Identifier: MIT */
/*
 * deadline.c - Linux's mq-deadline elevator (block/mq-deadline.c as of
 * Linux 6.x), per device: reads and writes each sit in a sector-sorted tree
 * and in a FIFO with an expiry time (read 500 ms, write 5 s).  Requests go
 * out in batches of up to fifo_batch (16) along the sorted order, each
 * direction continuing from the position of its last dispatched request
 * (latest_pos: requests that arrived meanwhile further along join the
 * sweep); a new batch starts from the FIFO head when that request has
 * expired or nothing lies further along, and reads are preferred over
 * writes except that writes are served after writes_starved (2) read
 * batches.  As in the kernel, the first batch is a write batch (last_dir
 * starts as WRITE).  Contiguous requests along the sorted order merge into
 * one command.  One I/O priority class: mq-deadline's per-priority queues
 * and prio_aging_expire (10 s) do not apply; neither does async_depth (the
 * device's queue depth is the model's).  A request a program starts waiting
 * for (expedite) counts as expired: it goes to the head of its FIFO, so the
 * next batch of its direction starts from it, and a waited write does not
 * wait for writes_starved read batches.
 */
#include <errno.h>
#include <stdlib.h>

#include "pol_builtin.h"
#include "pol_util.h"

enum { DL_READ = 0, DL_WRITE = 1 };

struct dl_opts {
	uint64_t read_expire, write_expire;   /* ns */
	uint64_t fifo_batch;                  /* requests per batch */
	uint64_t writes_starved;              /* read batches before writes must go */
	uint64_t max_merge;                   /* bytes */
};

struct dl_dev {
	struct policy_tnode *sorted[2];  /* by (offset, id) */
	struct policy_list fifo[2];      /* arrival order; pdata[0] = expiry */
	uint64_t latest_pos[2];          /* offset of the last dispatched request per direction */
	int last_dir;                    /* direction of the last dispatched request */
	unsigned batching;               /* requests dispatched in this batch */
	unsigned starved;                /* read batches while writes waited */
	uint64_t queued[2];
	unsigned waited[2];              /* expedited requests queued (pdata[1] = 1) */
};

struct dl {
	struct dl_opts o;
	unsigned ndev;
	struct dl_dev *dev;
	uint64_t expired_batches;        /* batches started from an expired FIFO head */
	uint64_t expedited;
};

static const struct policy_opt dl_opts[] = {
	{ .name = "read_expire", .type = POLICY_OPT_TIME, .off = offsetof(struct dl_opts, read_expire),
	  .def = "500ms", .min = 1, .max = 3600 * POLICY_NS_PER_S,
	  .help = "deadline of a read (Linux read_expire)" },
	{ .name = "write_expire", .type = POLICY_OPT_TIME, .off = offsetof(struct dl_opts, write_expire),
	  .def = "5s", .min = 1, .max = 3600 * POLICY_NS_PER_S,
	  .help = "deadline of a write (Linux write_expire)" },
	{ .name = "fifo_batch", .type = POLICY_OPT_UINT, .off = offsetof(struct dl_opts, fifo_batch),
	  .def = "16", .min = 1, .max = 1u << 20,
	  .help = "requests dispatched in one sorted batch (Linux fifo_batch)" },
	{ .name = "writes_starved", .type = POLICY_OPT_UINT, .off = offsetof(struct dl_opts, writes_starved),
	  .def = "2", .min = 1, .max = 1u << 20,
	  .help = "read batches allowed while writes wait (Linux writes_starved)" },
	{ .name = "max_merge", .type = POLICY_OPT_SIZE, .off = offsetof(struct dl_opts, max_merge),
	  .def = "512KiB", .min = 0, .max = 1ull << 30,
	  .help = "largest command built by merging contiguous requests (0 = no merging)" },
	{ .name = NULL },
};

static int dl_init(struct policy *pol)
{
	struct dl *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->o = *(struct dl_opts *)pol->opts;
	q->ndev = pol->env->ndev;
	q->dev = calloc(q->ndev ? q->ndev : 1, sizeof(*q->dev));
	if (!q->dev) {
		free(q);
		return -ENOMEM;
	}
	for (unsigned d = 0; d < q->ndev; d++) {
		pol_list_init(&q->dev[d].fifo[DL_READ]);
		pol_list_init(&q->dev[d].fifo[DL_WRITE]);
		q->dev[d].last_dir = DL_WRITE;   /* dd_init_sched */
	}
	pol->priv = q;
	return 0;
}

static int dir_of(const struct policy_req *r)
{
	return r->op == POLICY_OP_READ ? DL_READ : DL_WRITE;
}

static int dl_submit(struct policy *pol, struct policy_req *req)
{
	struct dl *q = pol->priv;
	struct dl_dev *dd;
	int dir = dir_of(req);

	if (req->dev >= q->ndev)
		return -EINVAL;
	dd = &q->dev[req->dev];
	req->pdata[0] = pol->env->now(pol->env) +
			(dir == DL_READ ? q->o.read_expire : q->o.write_expire);
	req->pdata[1] = 0;
	req->tnode.key = req->offset;
	req->tnode.key2 = req->id;
	pol_tree_insert(&dd->sorted[dir], &req->tnode);
	pol_list_add_tail(&dd->fifo[dir], &req->link);
	dd->queued[dir]++;
	return 0;
}

/* Takes rq out of both structures. */
static void dl_remove(struct dl_dev *dd, struct policy_req *rq)
{
	int dir = dir_of(rq);

	pol_tree_remove(&dd->sorted[dir], &rq->tnode);
	pol_list_del(&rq->link);
	dd->queued[dir]--;
	if (rq->pdata[1])
		dd->waited[dir]--;
}

static struct policy_req *fifo_head(struct dl_dev *dd, int dir)
{
	return pol_list_empty(&dd->fifo[dir]) ? NULL :
	       pol_container_of(dd->fifo[dir].next, struct policy_req, link);
}

/* The first request of direction dir at or after its latest position
 * (deadline_next_request / deadline_from_pos). */
static struct policy_req *next_request(struct dl_dev *dd, int dir)
{
	return pol_req_of_tnode(pol_tree_lower_bound(dd->sorted[dir], dd->latest_pos[dir], 0));
}

/* Picks the next request of a device as mq-deadline's __dd_dispatch_request. */
static struct policy_req *dl_pick(struct dl *q, struct dl_dev *dd, uint64_t now)
{
	struct policy_req *rq;
	int dir;

	/* Continue the current batch in sorted order. */
	rq = next_request(dd, dd->last_dir);
	if (rq && dd->batching < q->o.fifo_batch)
		return rq;

	/* Start a new batch: reads first, unless writes starved long enough
	 * or a program waits for a write. */
	if (dd->waited[DL_WRITE] && !dd->waited[DL_READ])
		goto dispatch_writes;
	if (dd->queued[DL_READ]) {
		if (dd->queued[DL_WRITE] && dd->starved++ >= q->o.writes_starved)
			goto dispatch_writes;
		dir = DL_READ;
		goto dispatch_find_request;
	}
	if (dd->queued[DL_WRITE]) {
dispatch_writes:
		dd->starved = 0;
		dir = DL_WRITE;
		goto dispatch_find_request;
	}
	return NULL;

dispatch_find_request:
	/* An expired FIFO head, or nothing further along: restart from the FIFO. */
	rq = fifo_head(dd, dir);
	if (rq->pdata[0] <= now)
		q->expired_batches++;
	else if (next_request(dd, dir))
		rq = next_request(dd, dir);
	dd->last_dir = dir;
	dd->batching = 0;
	return rq;
}

static void dl_dispatch(struct policy *pol)
{
	struct dl *q = pol->priv;
	struct policy_env *env = pol->env;
	uint64_t now = env->now(env);

	for (unsigned d = 0; d < q->ndev; d++) {
		struct dl_dev *dd = &q->dev[d];

		while (pol_dev_room(env, d)) {
			struct policy_req *rq = dl_pick(q, dd, now), *next;
			int dir;

			if (!rq)
				break;
			dir = dir_of(rq);
			rq = pol_tree_chain(dd->sorted[dir], rq, q->o.max_merge, &next);
			for (struct policy_req *m = rq; m; m = m->merge_next)
				dl_remove(dd, m);
			dd->latest_pos[dir] = rq->offset;   /* blk_rq_pos() of the command */
			dd->batching++;
			pol_issue(env, rq, d, rq->offset);
		}
	}
}

static void dl_complete(struct policy *pol, struct policy_req *req)
{
}

static void dl_tick(struct policy *pol)
{
}

/* A program waits for req: expired now, at the head of its FIFO behind
 * the requests expedited before it. */
static void dl_expedite(struct policy *pol, struct policy_req *req)
{
	struct dl *q = pol->priv;
	struct dl_dev *dd = &q->dev[req->dev];
	int dir = dir_of(req);
	struct policy_list *after = &dd->fifo[dir];

	if (req->pdata[1])
		return;
	req->pdata[1] = 1;
	req->pdata[0] = pol->env->now(pol->env);
	dd->waited[dir]++;
	q->expedited++;
	pol_list_del(&req->link);
	while (after->next != &dd->fifo[dir] &&
	       pol_container_of(after->next, struct policy_req, link)->pdata[1])
		after = after->next;
	pol_list_add_head(after, &req->link);
}

static void dl_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	struct dl *q = pol->priv;

	emit(ctx, "expired_batches", (double)q->expired_batches);
	emit(ctx, "expedited", (double)q->expedited);
}

static void dl_fini(struct policy *pol)
{
	struct dl *q = pol->priv;

	if (!q)
		return;
	free(q->dev);
	free(q);
	pol->priv = NULL;
}

const struct policy_ops pol_deadline_ops = {
	.version = POLICY_OPS_VERSION,
	.name = "deadline",
	.summary = "sorted batches with read/write expiry and write-starvation limit (Linux deadline)",
	.opts = dl_opts,
	.opts_size = sizeof(struct dl_opts),
	.init = dl_init,
	.submit = dl_submit,
	.dispatch = dl_dispatch,
	.complete = dl_complete,
	.tick = dl_tick,
	.fini = dl_fini,
	.report = dl_report,
	.expedite = dl_expedite,
};
