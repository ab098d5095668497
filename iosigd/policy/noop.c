/* SPDX-License-Identifier: MIT */
/*
 * noop.c - Linux's noop elevator: one FIFO per device, requests served in
 * arrival order; a request is merged with the ones right behind it in the
 * FIFO when they continue it on disk (the only reordering noop does).
 * A request a program starts waiting for while it is queued (expedite)
 * moves to a second FIFO served first: noop holds nothing back, but a
 * waiting program should not queue behind writes nobody waits for.
 */
#include <errno.h>
#include <stdlib.h>

#include "pol_builtin.h"
#include "pol_util.h"

struct noop_opts {
	uint64_t max_merge;   /* largest merged command, bytes */
};

struct noop {
	struct noop_opts o;
	struct policy_list *fifo;  /* one per device */
	struct policy_list *waited; /* per device: expedited requests, served first */
	uint64_t expedited;
};

static const struct policy_opt noop_opts[] = {
	{ .name = "max_merge", .type = POLICY_OPT_SIZE, .off = offsetof(struct noop_opts, max_merge),
	  .def = "512KiB", .min = 0, .max = 1ull << 30,
	  .help = "largest command built by merging contiguous requests (Linux max_sectors_kb; 0 = no merging)" },
	{ .name = NULL },
};

static int noop_init(struct policy *pol)
{
	struct noop *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->o = *(struct noop_opts *)pol->opts;
	q->fifo = calloc(pol->env->ndev ? pol->env->ndev : 1, sizeof(*q->fifo));
	q->waited = calloc(pol->env->ndev ? pol->env->ndev : 1, sizeof(*q->waited));
	if (!q->fifo || !q->waited) {
		free(q->fifo);
		free(q->waited);
		free(q);
		return -ENOMEM;
	}
	for (unsigned d = 0; d < pol->env->ndev; d++) {
		pol_list_init(&q->fifo[d]);
		pol_list_init(&q->waited[d]);
	}
	pol->priv = q;
	return 0;
}

static int noop_submit(struct policy *pol, struct policy_req *req)
{
	struct noop *q = pol->priv;

	if (req->dev >= pol->env->ndev)
		return -EINVAL;
	pol_list_add_tail(&q->fifo[req->dev], &req->link);
	return 0;
}

static void noop_dispatch(struct policy *pol)
{
	struct noop *q = pol->priv;
	struct policy_env *env = pol->env;

	for (unsigned d = 0; d < env->ndev; d++) {
		for (;;) {
			struct policy_list *h = !pol_list_empty(&q->waited[d]) ? &q->waited[d] : &q->fifo[d];
			struct policy_req *head, *tail;
			uint64_t total;

			if (pol_list_empty(h) || !pol_dev_room(env, d))
				break;
			head = tail = pol_container_of(h->next, struct policy_req, link);
			total = head->len;

			pol_list_del(&head->link);
			head->merge_next = NULL;
			while (!pol_list_empty(h)) {
				struct policy_req *n = pol_container_of(h->next, struct policy_req, link);

				if (!pol_can_merge(tail, n, total, q->o.max_merge))
					break;
				pol_list_del(&n->link);
				n->merge_next = NULL;
				tail->merge_next = n;
				tail = n;
				total += n->len;
			}
			pol_issue(env, head, d, head->offset);
		}
	}
}

static void noop_complete(struct policy *pol, struct policy_req *req)
{
}

/* A program waits for req: it goes after the requests expedited before it,
 * ahead of everything nobody waits for. */
static void noop_expedite(struct policy *pol, struct policy_req *req)
{
	struct noop *q = pol->priv;

	pol_list_del(&req->link);
	pol_list_add_tail(&q->waited[req->dev], &req->link);
	q->expedited++;
}

static void noop_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	struct noop *q = pol->priv;

	emit(ctx, "expedited", (double)q->expedited);
}

static void noop_tick(struct policy *pol)
{
}

static void noop_fini(struct policy *pol)
{
	struct noop *q = pol->priv;

	if (!q)
		return;
	free(q->fifo);
	free(q->waited);
	free(q);
	pol->priv = NULL;
}

const struct policy_ops pol_noop_ops = {
	.version = POLICY_OPS_VERSION,
	.name = "noop",
	.summary = "FIFO per device with back-merging of contiguous requests (Linux noop)",
	.opts = noop_opts,
	.opts_size = sizeof(struct noop_opts),
	.init = noop_init,
	.submit = noop_submit,
	.dispatch = noop_dispatch,
	.complete = noop_complete,
	.tick = noop_tick,
	.fini = noop_fini,
	.report = noop_report,
	.expedite = noop_expedite,
};
