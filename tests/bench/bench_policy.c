/* SPDX-License-Identifier: MIT */
/*
 * bench_policy - the cost of each policy's hot path alone: a minimal engine
 * (devices that finish every command after a fixed 20 us, timers, no
 * statistics) feeds N requests from S streams (each sequential in its own
 * region, 4 KiB, 10 us apart overall) through the policy and reports
 * requests per second of wall time and peak resident requests as JSON.
 *
 * Usage: bench_policy [N [S]]   (default 1000000 requests, 16 streams)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "policy.h"

#define NDEV 2

struct bev {
	uint64_t t;
	struct policy_req *head;
};

struct bench {
	struct policy_env env;
	struct policy_dev_info dev[NDEV];
	unsigned inflight[NDEV];
	uint64_t now, wake;
	struct bev *evs;          /* completions, in time order (a FIFO: fixed latency) */
	size_t head, tail, cap;
	uint64_t done, issued_cmds;
};

static uint64_t b_now(struct policy_env *env)
{
	return ((struct bench *)env->ctx)->now;
}

static unsigned b_inflight(struct policy_env *env, unsigned dev)
{
	return ((struct bench *)env->ctx)->inflight[dev];
}

static int b_issue(struct policy_env *env, struct policy_req *req, unsigned dev, uint64_t off)
{
	struct bench *b = env->ctx;

	if (b->inflight[dev] >= b->dev[dev].queue_depth)
		return -EBUSY;
	for (struct policy_req *r = req; r; r = r->merge_next) {
		r->issued_dev = (uint16_t)dev;
		r->issued_off = off;
		r->issue_ns = b->now;
		off += r->len;
	}
	if (b->tail - b->head == b->cap)
		return -ENOMEM;
	b->evs[b->tail++ % b->cap] = (struct bev){ .t = b->now + 20000, .head = req };
	b->inflight[dev]++;
	b->issued_cmds++;
	return 0;
}

static void b_finish(struct policy_env *env, struct policy_req *req, int status)
{
	((struct bench *)env->ctx)->done++;
}

static void b_wake_at(struct policy_env *env, uint64_t t)
{
	struct bench *b = env->ctx;

	if (t < b->wake)
		b->wake = t;
}

/* Completes every command due by time t. */
static void drain_until(struct bench *b, struct policy *pol, uint64_t t)
{
	for (;;) {
		uint64_t next = b->head < b->tail ? b->evs[b->head % b->cap].t : UINT64_MAX;
		uint64_t wake = b->wake;

		if (next > t && wake > t)
			return;
		if (wake <= next) {
			b->now = wake > b->now ? wake : b->now;
			b->wake = UINT64_MAX;
			pol->ops->tick(pol);
		} else {
			struct bev e = b->evs[b->head++ % b->cap];

			b->now = e.t;
			b->inflight[e.head->issued_dev]--;
			for (struct policy_req *r = e.head, *n; r; r = n) {
				n = r->merge_next;
				pol->ops->complete(pol, r);
				if (!(r->flags & POLICY_REQ_INTERNAL))
					b->done++;
			}
		}
		pol->ops->dispatch(pol);
	}
}

static int run(const char *spec, unsigned n, unsigned streams)
{
	struct bench b = { 0 };
	struct policy *pol = NULL;
	struct policy_req *reqs = calloc(n, sizeof(*reqs));
	char err[256];
	double t0, t1;
	int r;

	b.dev[0] = (struct policy_dev_info){ .name = "hdd", .cls = IOSIG_CLASS_HDD,
					    .capacity = 1ull << 42, .queue_depth = 32, .block_size = 512 };
	b.dev[1] = (struct policy_dev_info){ .name = "ssd", .cls = IOSIG_CLASS_SSD,
					    .capacity = 1ull << 40, .queue_depth = 32, .block_size = 4096 };
	b.env = (struct policy_env){ .version = POLICY_ENV_VERSION, .ctx = &b, .ndev = NDEV,
				    .dev = b.dev, .now = b_now, .inflight = b_inflight,
				    .issue = b_issue, .finish = b_finish, .wake_at = b_wake_at };
	b.wake = UINT64_MAX;
	b.cap = 1024;
	b.evs = calloc(b.cap, sizeof(*b.evs));
	if (!reqs || !b.evs) {
		fprintf(stderr, "bench_policy: out of memory\n");
		free(reqs);
		free(b.evs);
		return 1;
	}
	r = policy_create(spec, &b.env, &pol, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "bench_policy: %s\n", err);
		free(reqs);
		free(b.evs);
		return 1;
	}
	t0 = bench_now();
	for (unsigned i = 0; i < n; i++) {
		struct policy_req *q = &reqs[i];
		unsigned s = i % streams;

		q->id = i + 1;
		q->stream = s;
		q->dev = 0;
		q->op = (i % 7) ? POLICY_OP_WRITE : POLICY_OP_READ;
		q->flags = q->op == POLICY_OP_READ ? POLICY_REQ_SYNC : 0;
		q->offset = (uint64_t)s * (1ull << 34) + (uint64_t)(i / streams) * 4096;
		q->len = 4096;
		q->arrival_ns = (uint64_t)i * 10000;
		drain_until(&b, pol, q->arrival_ns);
		b.now = q->arrival_ns;
		if (pol->ops->submit(pol, q) < 0)
			b.done++;
		pol->ops->dispatch(pol);
	}
	drain_until(&b, pol, UINT64_MAX - 1);
	t1 = bench_now();
	printf("    {\"policy\": \"%s\", \"requests\": %u, \"streams\": %u, \"completed\": %llu, "
	       "\"commands\": %llu, \"seconds\": %.4f, \"requests_per_s\": %.0f}",
	       spec, n, streams, (unsigned long long)b.done, (unsigned long long)b.issued_cmds,
	       t1 - t0, n / (t1 - t0));
	r = b.done == n ? 0 : 1;
	if (r)
		fprintf(stderr, "bench_policy: %s finished %llu of %u requests\n", spec,
			(unsigned long long)b.done, n);
	policy_destroy(pol);
	free(reqs);
	free(b.evs);
	return r;
}

int main(int argc, char **argv)
{
	static const char *const specs[] = { "noop", "deadline", "cfq", "bfq", "bid-hdd",
					     "bid-hybrid", "burst" };
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000000;
	unsigned streams = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 16;
	int bad = 0;

	if (!n || !streams) {
		fprintf(stderr, "usage: bench_policy [REQUESTS [STREAMS]] (both > 0)\n");
		return 2;
	}
	printf("{\n  \"benchmark\": \"policy hot path (20 us devices, 4 KiB requests)\",\n  \"results\": [\n");
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		bad |= run(specs[i], n, streams);
		printf("%s\n", i + 1 < sizeof(specs) / sizeof(specs[0]) ? "," : "");
	}
	printf("  ]\n}\n");
	return bad;
}
