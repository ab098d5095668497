/* SPDX-License-Identifier: MIT */
/*
 * noop.c - Linux's noop elevator: one FIFO per device, requests served in
 * arrival order; a request is merged with the ones right behind it in the
 * FIFO when they continue it on disk (the only reordering noop does).
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
	if (!q->fifo) {
		free(q);
		return -ENOMEM;
	}
	for (unsigned d = 0; d < pol->env->ndev; d++)
		pol_list_init(&q->fifo[d]);
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
		struct policy_list *h = &q->fifo[d];

		while (!pol_list_empty(h) && pol_dev_room(env, d)) {
			struct policy_req *head = pol_container_of(h->next, struct policy_req, link);
			struct policy_req *tail = head;
			uint64_t total = head->len;

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

static void noop_tick(struct policy *pol)
{
}

static void noop_fini(struct policy *pol)
{
	struct noop *q = pol->priv;

	if (!q)
		return;
	free(q->fifo);
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
};
