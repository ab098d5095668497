/* SPDX-License-Identifier: MIT */
/*
 * bid_hdd.c - BID-HDD: contention-avoiding scheduling for disks (Mishra &
 * Somani 2017).  Per-process staging queues with adaptive wait timers and
 * deadlines, flushed whole in marking order (the machinery is in bid.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "bid.h"
#include "pol_builtin.h"

struct bid_hdd_opts {
	struct bid_core_opts core;
};

static const struct policy_opt bid_hdd_opts[] = {
	BID_CORE_OPTS,
	{ .name = NULL },
};

static int bid_hdd_init(struct policy *pol)
{
	struct bid *b = malloc(sizeof(*b));
	int r;

	if (!b)
		return -ENOMEM;
	r = bid_core_init(b, pol->env, &((struct bid_hdd_opts *)pol->opts)->core);
	if (r < 0) {
		free(b);
		return r;
	}
	pol->priv = b;
	return 0;
}

static int bid_hdd_submit(struct policy *pol, struct policy_req *req)
{
	struct bid *b = pol->priv;

	if (req->dev >= b->ndev)
		return -EINVAL;
	return bid_core_stage(b, req);
}

static void bid_hdd_dispatch(struct policy *pol)
{
	bid_core_dispatch(pol->priv);
}

static void bid_hdd_complete(struct policy *pol, struct policy_req *req)
{
}

static void bid_hdd_tick(struct policy *pol)
{
	bid_core_expire(pol->priv);
}

static void bid_hdd_expedite(struct policy *pol, struct policy_req *req)
{
	bid_core_expedite(pol->priv, req);
}

static void bid_hdd_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	bid_core_report(pol->priv, emit, ctx);
}

static void bid_hdd_fini(struct policy *pol)
{
	struct bid *b = pol->priv;

	if (!b)
		return;
	bid_core_fini(b);
	free(b);
	pol->priv = NULL;
}

const struct policy_ops pol_bid_hdd_ops = {
	.version = POLICY_OPS_VERSION,
	.name = "bid-hdd",
	.summary = "BID: per-process staging queues, adaptive wait + deadline, whole-queue flushes in marking order",
	.opts = bid_hdd_opts,
	.opts_size = sizeof(struct bid_hdd_opts),
	.init = bid_hdd_init,
	.submit = bid_hdd_submit,
	.dispatch = bid_hdd_dispatch,
	.complete = bid_hdd_complete,
	.tick = bid_hdd_tick,
	.fini = bid_hdd_fini,
	.report = bid_hdd_report,
	.expedite = bid_hdd_expedite,
};
