/* SPDX-License-Identifier: MIT */
/*
 * bid.c - BID staging queues, adaptive wait timers, deadlines and
 * marking-order flushing (see bid.h for the algorithm and the paper).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bid.h"

struct bid_sq_alloc {
	struct bid_sq sq;
	struct bid_hist own;          /* history when it dies with the queue */
};

int bid_core_init(struct bid *b, struct policy_env *env, const struct bid_core_opts *o)
{
	memset(b, 0, sizeof(*b));
	b->o = *o;
	b->env = env;
	b->ndev = env->ndev;
	b->dev = calloc(b->ndev ? b->ndev : 1, sizeof(*b->dev));
	if (!b->dev)
		return -ENOMEM;
	for (unsigned d = 0; d < b->ndev; d++) {
		pol_map_init(&b->dev[d].open);
		pol_list_init(&b->dev[d].marked);
	}
	pol_heap_init(&b->timers);
	pol_list_init(&b->free_sqs);
	pol_map_init(&b->hist);
	return 0;
}

static void free_sq_mem(struct bid_sq *sq)
{
	free(pol_container_of(sq, struct bid_sq_alloc, sq));
}

void bid_core_fini(struct bid *b)
{
	if (!b->dev)
		return;
	for (unsigned d = 0; d < b->ndev; d++) {
		struct bid_dev *bd = &b->dev[d];

		for (size_t i = 0; i < bd->open.cap; i++)
			if (bd->open.vals[i])
				free_sq_mem(bd->open.vals[i]);
		pol_map_free(&bd->open);
		while (!pol_list_empty(&bd->marked)) {
			struct bid_sq *sq = pol_container_of(bd->marked.next, struct bid_sq, link);

			pol_list_del(&sq->link);
			free_sq_mem(sq);
		}
	}
	while (!pol_list_empty(&b->free_sqs)) {
		struct bid_sq *sq = pol_container_of(b->free_sqs.next, struct bid_sq, link);

		pol_list_del(&sq->link);
		free_sq_mem(sq);
	}
	pol_map_free_vals(&b->hist);
	pol_heap_free(&b->timers);
	free(b->dev);
	b->dev = NULL;
}

static uint64_t wait_of(const struct bid *b, const struct bid_hist *h)
{
	uint64_t w;

	if (!h->n)
		return b->o.wait_default;
	w = (uint64_t)(b->o.wait_mult *
		       (double)pol_weighted_mean(h->gap, BID_K_MAX, h->head,
						 h->n < b->o.wait_k ? h->n : (unsigned)b->o.wait_k));
	if (w < b->o.wait_min)
		w = b->o.wait_min;
	if (w > b->o.wait_max)
		w = b->o.wait_max;
	return w;
}

static void hist_add(struct bid_hist *h, uint64_t gap)
{
	h->gap[h->head] = gap;
	h->head = (h->head + 1) % BID_K_MAX;
	if (h->n < BID_K_MAX)
		h->n++;
}

static struct bid_sq *sq_new(struct bid *b, uint32_t stream, uint16_t dev, uint64_t now)
{
	struct bid_sq_alloc *a;
	struct bid_sq *sq;

	if (!pol_list_empty(&b->free_sqs)) {
		sq = pol_container_of(b->free_sqs.next, struct bid_sq, link);
		pol_list_del(&sq->link);
		a = pol_container_of(sq, struct bid_sq_alloc, sq);
	} else {
		a = malloc(sizeof(*a));
		if (!a)
			return NULL;
	}
	memset(a, 0, sizeof(*a));
	sq = &a->sq;
	sq->stream = stream;
	sq->dev = dev;
	sq->ts_old = sq->ts_new = now;
	sq->timer.idx = SIZE_MAX;
	pol_list_init(&sq->link);
	sq->hist = &a->own;
	if (b->o.keep_history) {
		struct bid_hist *h = pol_map_get(&b->hist, stream);

		if (!h) {
			h = calloc(1, sizeof(*h));
			if (!h || pol_map_put(&b->hist, stream, h) < 0) {
				free(h);
				pol_list_add_tail(&b->free_sqs, &sq->link);
				return NULL;
			}
		}
		sq->hist = h;
	}
	return sq;
}

static void sq_free(struct bid *b, struct bid_sq *sq)
{
	pol_list_add_tail(&b->free_sqs, &sq->link);
}

static void mark(struct bid *b, struct bid_sq *sq, uint64_t now);

static uint64_t sq_expiry(const struct bid_sq *sq)
{
	uint64_t w = sq->ts_new + sq->wait;

	return w < sq->deadline ? w : sq->deadline;
}

int bid_core_stage(struct bid *b, struct policy_req *req)
{
	struct policy_env *env = b->env;
	uint64_t now = env->now(env);
	struct bid_dev *bd = &b->dev[req->dev];
	struct bid_sq *sq = pol_map_get(&bd->open, req->stream);

	if (!sq) {
		sq = sq_new(b, req->stream, req->dev, now);
		if (!sq)
			return -ENOMEM;
		if (pol_map_put(&bd->open, req->stream, sq) < 0) {
			sq_free(b, sq);
			return -ENOMEM;
		}
		sq->deadline = now + b->o.deadline_write;
		sq->wait = wait_of(b, sq->hist);
	} else if (sq->marked) {
		/* Waiting in the marked list: it takes the request along. */
		req->pptr = sq;
		req->pdata[0] = now;
		req->tnode.key = req->offset;
		req->tnode.key2 = req->id;
		bid_sq_add(sq, req);
		return 0;
	} else {
		/* Gap between the newest staged request and this one. */
		hist_add(sq->hist, now - sq->ts_new);
		sq->ts_new = now;
		sq->wait = wait_of(b, sq->hist);
	}
	if (req->op == POLICY_OP_READ && sq->deadline > now + b->o.deadline_read)
		sq->deadline = now + b->o.deadline_read;
	req->pptr = sq;
	req->pdata[0] = now;
	req->tnode.key = req->offset;
	req->tnode.key2 = req->id;
	bid_sq_add(sq, req);
	if (pol_heap_set(&b->timers, &sq->timer, sq_expiry(sq)) < 0) {
		/* Cannot time it: flush it at once rather than lose it. */
		mark(b, sq, now);
		return 0;
	}
	env->wake_at(env, pol_heap_min(&b->timers) ? pol_heap_min(&b->timers)->key : now);
	return 0;
}

void bid_sq_take(struct bid_sq *sq, struct policy_req *req)
{
	pol_tree_remove(&sq->reqs, &req->tnode);
	sq->nreq--;
	sq->bytes -= req->len;
	if (req->op == POLICY_OP_WRITE) {
		sq->nwrite--;
		sq->write_bytes -= req->len;
	}
}

void bid_sq_add(struct bid_sq *sq, struct policy_req *req)
{
	pol_tree_insert(&sq->reqs, &req->tnode);
	sq->nreq++;
	sq->bytes += req->len;
	if (req->op == POLICY_OP_WRITE) {
		sq->nwrite++;
		sq->write_bytes += req->len;
	}
}

static void mark(struct bid *b, struct bid_sq *sq, uint64_t now)
{
	struct bid_dev *bd = &b->dev[sq->dev];

	pol_heap_remove(&b->timers, &sq->timer);
	if (b->o.keep_history)
		sq->hist = NULL;   /* the stream's next queue continues it */
	sq->marked = true;
	sq->mark_ns = now;
	sq->by_deadline = sq->deadline <= now;
	if (sq->by_deadline)
		b->marked_deadline++;
	else
		b->marked_wait++;
	if (b->on_mark)
		b->on_mark(b, sq);
	if (!sq->nreq && !sq->tiered) {
		pol_map_del(&bd->open, sq->stream);
		sq_free(b, sq);
		return;
	}
	/* (An emptied tiered queue stays so that its process's late writes
	 * follow it to the SSD; it is freed when its turn to flush comes.) */
	pol_list_add_tail(&bd->marked, &sq->link);
}

void bid_core_expedite(struct bid *b, struct policy_req *req)
{
	struct bid_sq *sq = req->pptr;

	/* Marked now, it is flushed whole in marking order: the queue's other
	 * requests go with it, as when a deadline expires. */
	b->expedited++;
	if (!sq->marked)
		mark(b, sq, b->env->now(b->env));
}

struct bid_sq *bid_core_find(struct bid *b, unsigned dev, uint32_t stream)
{
	return pol_map_get(&b->dev[dev].open, stream);
}

/* The flush of sq begins: new requests of its process open a new queue. */
static void flush_begin(struct bid_dev *bd, struct bid_sq *sq)
{
	if (sq->flushing)
		return;
	sq->flushing = true;
	if (pol_map_get(&bd->open, sq->stream) == sq)
		pol_map_del(&bd->open, sq->stream);
}

/* Frees the head marked queues that have nothing left to flush. */
static void drop_empty_heads(struct bid *b, struct bid_dev *bd)
{
	while (!pol_list_empty(&bd->marked)) {
		struct bid_sq *sq = pol_container_of(bd->marked.next, struct bid_sq, link);

		if (sq->nreq)
			return;
		flush_begin(bd, sq);
		pol_list_del(&sq->link);
		sq_free(b, sq);
		b->flushed_queues++;
	}
}

void bid_core_expire(struct bid *b)
{
	struct policy_env *env = b->env;
	uint64_t now = env->now(env);
	struct pol_hnode *h;

	while ((h = pol_heap_min(&b->timers)) && h->key <= now)
		mark(b, pol_container_of(h, struct bid_sq, timer), now);
	if ((h = pol_heap_min(&b->timers)))
		env->wake_at(env, h->key);
}

void bid_core_dispatch(struct bid *b)
{
	struct policy_env *env = b->env;
	uint64_t now = env->now(env);

	bid_core_expire(b);
	for (unsigned d = 0; d < b->ndev; d++) {
		struct bid_dev *bd = &b->dev[d];

		drop_empty_heads(b, bd);
		while (pol_dev_room(env, d) && !pol_list_empty(&bd->marked)) {
			struct bid_sq *sq = pol_container_of(bd->marked.next, struct bid_sq, link);
			struct policy_req *rq = bid_sq_first(sq), *tail, *next;
			uint64_t total;

			flush_begin(bd, sq);
			bid_sq_take(sq, rq);
			rq->merge_next = NULL;
			tail = rq;
			total = rq->len;
			b->staged_ns_total += now - rq->pdata[0];
			b->staged_reqs++;
			/* Ascending offsets; contiguous requests merge, also into the
			 * next marked queue when it continues the command. */
			for (;;) {
				next = bid_sq_first(sq);
				if (!next) {
					struct bid_sq *after;

					pol_list_del(&sq->link);
					sq_free(b, sq);
					b->flushed_queues++;
					drop_empty_heads(b, bd);
					if (pol_list_empty(&bd->marked))
						break;
					after = pol_container_of(bd->marked.next, struct bid_sq, link);
					next = bid_sq_first(after);
					if (!pol_can_merge(tail, next, total, b->o.max_merge))
						break;
					sq = after;
					flush_begin(bd, sq);
				}
				if (!pol_can_merge(tail, next, total, b->o.max_merge))
					break;
				bid_sq_take(sq, next);
				next->merge_next = NULL;
				tail->merge_next = next;
				tail = next;
				total += next->len;
				b->staged_ns_total += now - next->pdata[0];
				b->staged_reqs++;
				b->merged++;
			}
			b->commands++;
			pol_issue(env, rq, d, rq->offset);
		}
	}
}

void bid_core_report(struct bid *b, policy_report_fn emit, void *ctx)
{
	emit(ctx, "marked_by_wait", (double)b->marked_wait);
	emit(ctx, "marked_by_deadline", (double)b->marked_deadline);
	emit(ctx, "flushed_queues", (double)b->flushed_queues);
	emit(ctx, "commands", (double)b->commands);
	emit(ctx, "merged_requests", (double)b->merged);
	emit(ctx, "expedited", (double)b->expedited);
	emit(ctx, "mean_staging_ms",
	     b->staged_reqs ? (double)b->staged_ns_total / (double)b->staged_reqs / 1e6 : 0);
}
