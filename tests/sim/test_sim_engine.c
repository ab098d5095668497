/* SPDX-License-Identifier: MIT */
/* The discrete-event engine: determinism for a seed, closed loops, bounded
 * memory, address wrapping, and the policy contract (issue/finish/wake_at
 * and their errors) through a test policy registered here. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dev.h"
#include "engine.h"
#include "gen.h"
#include "trace.h"

/* ---- a test policy whose behaviour is chosen by an option ---- */

enum { M_FIFO, M_HOLD, M_TIMER, M_PAD, M_FINISH, M_REJECT, M_BADISSUE };
static const char *const modes[] = { "fifo", "hold", "timer", "pad", "finish", "reject",
				     "badissue", NULL };

struct tp_opts {
	unsigned mode;
};

static const struct policy_opt tp_tab[] = {
	{ .name = "mode", .type = POLICY_OPT_ENUM, .off = offsetof(struct tp_opts, mode),
	  .def = "fifo", .choices = modes, .help = "behaviour under test" },
	{ .name = NULL },
};

#define TPQ 4096
struct tp {
	unsigned mode;
	struct policy_req *q[TPQ];      /* FIFO ring of held requests */
	unsigned head, n;
	struct policy_req pad[64];      /* internal requests */
	unsigned pad_used;
	unsigned ticks, completes;
	int issue_results[4];           /* badissue: what env->issue returned */
};

/* What the badissue mode saw, for the test to check. */
static int last_issue_results[4];
/* The signature hints of the last request submitted. */
static uint64_t last_hint_size;
static uint8_t last_hint_pattern;

static int tp_init(struct policy *pol)
{
	struct tp *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->mode = ((struct tp_opts *)pol->opts)->mode;
	pol->priv = t;
	return 0;
}

static int tp_submit(struct policy *pol, struct policy_req *req)
{
	struct tp *t = pol->priv;
	struct policy_env *env = pol->env;

	last_hint_size = req->hint_size;
	last_hint_pattern = req->hint_pattern;
	if (t->mode == M_REJECT && req->op == POLICY_OP_WRITE)
		return -EROFS;
	if (t->mode == M_FINISH && req->op == POLICY_OP_READ) {
		env->finish(env, req, 0);
		return 0;
	}
	if (t->n == TPQ)
		return -ENOSPC;
	t->q[(t->head + t->n++) % TPQ] = req;
	if (t->mode == M_TIMER)
		env->wake_at(env, env->now(env) + 1000000);
	return 0;
}

static void issue_queued(struct policy *pol)
{
	struct tp *t = pol->priv;
	struct policy_env *env = pol->env;

	while (t->n && env->inflight(env, 0) < env->dev[0].queue_depth) {
		struct policy_req *r = t->q[t->head];

		t->head = (t->head + 1) % TPQ;
		t->n--;
		r->merge_next = NULL;
		assert_int_equal(env->issue(env, r, 0, r->offset), 0);
		if (t->mode == M_PAD && r->op == POLICY_OP_WRITE && t->pad_used < 64 &&
		    env->inflight(env, 1) < env->dev[1].queue_depth) {
			struct policy_req *p = &t->pad[t->pad_used++];

			memset(p, 0, sizeof(*p));
			p->id = (1ull << 63) + t->pad_used;
			p->op = POLICY_OP_WRITE;
			p->len = r->len;
			p->flags = POLICY_REQ_INTERNAL | POLICY_REQ_PAD;
			p->dev = 1;
			assert_int_equal(env->issue(env, p, 1, 0), 0);
		}
	}
}

static void tp_dispatch(struct policy *pol)
{
	struct tp *t = pol->priv;
	struct policy_env *env = pol->env;

	if (t->mode == M_BADISSUE && t->n) {
		struct policy_req *r = t->q[t->head];

		r->merge_next = NULL;
		t->issue_results[0] = env->issue(env, r, 7, 0);                   /* no device 7 */
		t->issue_results[1] = env->issue(env, r, 0, env->dev[0].capacity); /* beyond the end */
		t->issue_results[2] = env->issue(env, r, 0, r->offset);           /* fine */
		t->issue_results[3] = env->issue(env, r, 0, r->offset);           /* issued twice */
		memcpy(last_issue_results, t->issue_results, sizeof(last_issue_results));
		t->head = (t->head + 1) % TPQ;
		t->n--;
		t->mode = M_FIFO;
		return;
	}
	if (t->mode == M_FIFO || t->mode == M_PAD || t->mode == M_FINISH || t->mode == M_REJECT)
		issue_queued(pol);
}

static void tp_complete(struct policy *pol, struct policy_req *req)
{
	struct tp *t = pol->priv;

	t->completes++;
}

static void tp_tick(struct policy *pol)
{
	struct tp *t = pol->priv;

	t->ticks++;
	if (t->mode == M_TIMER)
		issue_queued(pol);
}

static void tp_fini(struct policy *pol)
{
	free(pol->priv);
}

static void tp_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	struct tp *t = pol->priv;

	emit(ctx, "ticks", t->ticks);
	emit(ctx, "completes", t->completes);
}

static const struct policy_ops tp_ops = {
	.version = POLICY_OPS_VERSION,
	.name = "test-engine",
	.summary = "engine test policy",
	.opts = tp_tab,
	.opts_size = sizeof(struct tp_opts),
	.init = tp_init,
	.submit = tp_submit,
	.dispatch = tp_dispatch,
	.complete = tp_complete,
	.tick = tp_tick,
	.fini = tp_fini,
	.report = tp_report,
};

/* ---- helpers ---- */

struct run {
	char *json;          /* the report (caller frees) */
	int rc;
	char err[512];
	uint64_t arrivals[8], dones[8];
	unsigned ndone;
	uint64_t max_outstanding;
	struct sim_dev_counters dc[2];
	struct sim_metrics m;   /* copied counters only (no histograms) */
};

/* Every completion of a run when recs is set (up to caprec). */
struct rec {
	uint64_t id, off, arrival, done;
	uint32_t stream;
};
static struct rec *recs;
static size_t nrec, caprec;

static void on_done(void *ctx, const struct policy_req *req, uint64_t done)
{
	struct run *r = ctx;

	if (recs && nrec < caprec)
		recs[nrec++] = (struct rec){ .id = req->id, .off = req->offset,
					     .arrival = req->arrival_ns, .done = done,
					     .stream = req->stream };

	if (r->ndone < 8) {
		r->arrivals[r->ndone] = req->arrival_ns;
		r->dones[r->ndone] = done;
	}
	r->ndone++;
}

static const struct sim_hint *run_hints;   /* --hint table for the next run() */
static unsigned run_nhints;
static bool run_closed;                    /* --closed-loop, --iodepth, --think */
static unsigned run_iodepth;
static uint64_t run_think;

/* Runs policy on src with the devices; fills *out. */
static void run(const char *policy, struct sim_source *src, const char *const *devspecs,
		unsigned ndev, int64_t trace_dev, struct run *out)
{
	struct sim_dev *devs[4];
	struct sim_engine *e = NULL;
	struct json_writer w;
	size_t len = 0;
	FILE *fp;
	char err[512];

	memset(out, 0, sizeof(*out));
	for (unsigned d = 0; d < ndev; d++)
		if (sim_dev_create(devspecs[d], d, &devs[d], err, sizeof(err)) < 0)
			fail_msg("%s", err);
	{
		struct sim_config cfg = { .policy = policy, .devs = devs, .ndev = ndev, .src = src,
					  .trace_dev = trace_dev, .ctx = out, .on_complete = on_done,
					  .hints = run_hints, .nhints = run_nhints,
					  .closed_loop = run_closed, .iodepth = run_iodepth,
					  .think_ns = run_think };

		if (sim_engine_create(&cfg, &e, err, sizeof(err)) < 0)
			fail_msg("%s", err);
	}
	out->rc = sim_engine_run(e, out->err, sizeof(out->err));
	fp = open_memstream(&out->json, &len);
	json_init(&w, fp, false);
	json_obj_begin(&w, NULL);
	sim_engine_report(e, &w);
	json_obj_end(&w);
	assert_int_equal(json_finish(&w), 0);
	fclose(fp);
	out->max_outstanding = sim_engine_max_outstanding(e);
	for (unsigned d = 0; d < ndev && d < 2; d++)
		out->dc[d] = *sim_engine_dev_counters(e, d);
	out->m = *sim_engine_metrics(e);
	out->m.lat.bucket = NULL;
	sim_engine_destroy(e);
	sim_source_destroy(src);
	for (unsigned d = 0; d < ndev; d++)
		sim_dev_destroy(devs[d]);
}

static struct sim_source *gen(const char *spec, uint64_t seed, uint64_t cap)
{
	struct sim_source *src;
	char err[256];

	if (sim_gen_create(spec, seed, cap, &src, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return src;
}

static struct sim_source *text_trace(const char *text, const char *format)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	struct sim_source *src;
	char err[256];

	assert_non_null(fp);
	assert_int_equal(sim_trace_open_fp(fp, "t", true, format, &src, err, sizeof(err)), 0);
	return src;
}

/* ---- tests ---- */

static void test_determinism(void **state)
{
	static const char *const hdd[] = { "hdd:generic" };
	struct run a, b, c;

	run("noop", gen("mapreduce:requests=20000", 1, 1ull << 40), hdd, 1, -1, &a);
	run("noop", gen("mapreduce:requests=20000", 1, 1ull << 40), hdd, 1, -1, &b);
	run("noop", gen("mapreduce:requests=20000", 2, 1ull << 40), hdd, 1, -1, &c);
	assert_int_equal(a.rc, 0);
	assert_int_equal(a.m.completed, 20000);
	assert_string_equal(a.json, b.json);
	assert_string_not_equal(a.json, c.json);
	free(a.json);
	free(b.json);
	free(c.json);
}

static void test_closed_loop(void **state)
{
	/* Validate format: the next request arrives 5 ms after the previous
	 * one completes, whatever the model's service time. */
	static const char trace[] = "R Hit 1000 8 1.0 5000.0\nW Hit 2000 8 1.0 7000.0\n"
				    "R Hit 3000 8 1.0 0\n";
	static const char *const ram[] = { "ram" };
	struct run r;

	run("noop", text_trace(trace, "validate"), ram, 1, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ndone, 3);
	assert_int_equal(r.arrivals[0], 0);
	assert_int_equal(r.arrivals[1], r.dones[0] + 5000000);
	assert_int_equal(r.arrivals[2], r.dones[1] + 7000000);
	assert_int_equal(r.max_outstanding, 1);
	free(r.json);
}

/* The completion record of the request at offset off. */
static const struct rec *rec_at(uint64_t off)
{
	for (size_t i = 0; i < nrec; i++)
		if (recs[i].off == off)
			return &recs[i];
	fail_msg("no request at offset %llu completed", (unsigned long long)off);
	return NULL;
}

/* --closed-loop on an open-loop trace, iodepth 1, think 2 ms: stream 1's
 * requests at 0, 8 and 16 KiB (trace times 0, 0, 1 ms) follow each other
 * 2 ms after each completion; stream 2 starts at its own trace time, 5 ms,
 * and its second request (trace time 100 ms) comes 2 ms after the first
 * completes, not at 100 ms. */
static void test_closed_loop_replay(void **state)
{
	static const char trace[] = "time_ms,op,offset,bytes,stream\n"
				    "0,R,0,4096,1\n0,R,8192,4096,1\n1,R,16384,4096,1\n"
				    "5,R,65536,4096,2\n100,R,131072,4096,2\n";
	static const char *const ram[] = { "ram:generic,read_latency=1ms" };
	struct rec buf[16];
	struct run r;

	recs = buf;
	nrec = 0;
	caprec = 16;
	run_closed = true;
	run_think = 2000000;
	run("noop", text_trace(trace, "csv"), ram, 1, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(nrec, 5);
	assert_int_equal(rec_at(0)->arrival, 0);
	assert_int_equal(rec_at(8192)->arrival, rec_at(0)->done + 2000000);
	assert_int_equal(rec_at(16384)->arrival, rec_at(8192)->done + 2000000);
	assert_int_equal(rec_at(65536)->arrival, 5000000);
	assert_int_equal(rec_at(131072)->arrival, rec_at(65536)->done + 2000000);
	assert_true(rec_at(131072)->arrival < 10000000);
	assert_non_null(strstr(r.json, "\"closed_loop\":true,\"iodepth\":1,\"think_s\":0.002,"
				       "\"streams\":2,\"lookahead_waits\":0"));
	free(r.json);

	/* Without --closed-loop the trace times hold. */
	nrec = 0;
	run_closed = false;
	run_think = 0;
	run("noop", text_trace(trace, "csv"), ram, 1, -1, &r);
	assert_int_equal(rec_at(131072)->arrival, 100000000);
	assert_non_null(strstr(r.json, "\"closed_loop\":false"));
	free(r.json);
	recs = NULL;
}

/* A closed loop with iodepth 4 under a reordering policy (deadline on an
 * HDD): every stream keeps its order of arrival and never has more than
 * 4 requests outstanding, and with all streams kept busy the same
 * workload finishes sooner on the faster device (open loop it cannot:
 * the arrival times are fixed). */
static void test_closed_loop_window(void **state)
{
	static const char *const hdd[] = { "hdd:generic" }, *const ssd[] = { "ssd:generic" };
	static struct rec buf[3000];
	struct run rh, rs, oh, os;
	unsigned maxov = 0;

	recs = buf;
	nrec = 0;
	caprec = 3000;
	run_closed = true;
	run_iodepth = 4;
	run("deadline", gen("mapreduce:requests=3000", 4, 1ull << 40), hdd, 1, -1,
	    &rh);
	assert_int_equal(rh.rc, 0);
	assert_int_equal(nrec, 3000);
	for (size_t i = 0; i < nrec; i++) {
		unsigned overlapping = 0;

		for (size_t j = 0; j < nrec; j++) {
			if (recs[j].stream != recs[i].stream)
				continue;
			/* The engine numbers requests in source order. */
			if (recs[j].id < recs[i].id)
				assert_true(recs[j].arrival <= recs[i].arrival);
			if (recs[j].arrival <= recs[i].arrival && recs[j].done > recs[i].arrival)
				overlapping++;
		}
		assert_true(overlapping >= 1 && overlapping <= 4);
		if (overlapping > maxov)
			maxov = overlapping;
	}
	assert_int_equal(maxov, 4);
	recs = NULL;
	run("deadline", gen("mapreduce:requests=3000", 4, 1ull << 40), ssd, 1, -1,
	    &rs);
	run_closed = false;
	run_iodepth = 0;
	run("deadline", gen("mapreduce:requests=3000", 4, 1ull << 40), hdd, 1, -1,
	    &oh);
	run("deadline", gen("mapreduce:requests=3000", 4, 1ull << 40), ssd, 1, -1,
	    &os);
	/* Closed: 13.6 s on the HDD, 0.9 s on the SSD; open: 49.3 s on both. */
	assert_true(rs.m.last_completion_ns * 10 < rh.m.last_completion_ns);
	assert_true(os.m.last_completion_ns * 100 > oh.m.last_completion_ns * 99);
	free(rh.json);
	free(rs.json);
	free(oh.json);
	free(os.json);
}

/* One stream with 70 000 requests ahead of another's second request: the
 * read-ahead window (65 536) fills, the second stream's free slot waits
 * for its request to be read (counted), and everything completes with a
 * bounded number of requests in the engine. */
static void test_closed_loop_lookahead(void **state)
{
	static const char *const ram[] = { "ram" };
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	struct run r;

	fprintf(fp, "time_us,op,offset,bytes,stream\n0,R,0,4096,2\n");
	for (unsigned i = 0; i < 70000; i++)
		fprintf(fp, "%u,W,%u,4096,1\n", i, 4096 * (i + 1));
	fprintf(fp, "70000,R,4096,4096,2\n");
	fclose(fp);
	run_closed = true;
	run("noop", text_trace(text, "csv"), ram, 1, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.m.completed, 70002);
	assert_true(r.max_outstanding <= 2);
	assert_non_null(strstr(r.json, "\"streams\":2,\"lookahead_waits\":1"));
	run_closed = false;
	free(r.json);
	free(text);
}

static void test_bounded_memory(void **state)
{
	/* 200000 requests on a fast device: only a handful are ever
	 * outstanding, so the engine holds a handful. */
	static const char *const ram[] = { "ram" };
	struct run r;

	run("noop", gen("pangu:requests=200000", 3, 16ull << 30), ram, 1, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.m.completed, 200000);
	assert_true(r.max_outstanding < 64);
	free(r.json);
}

static void test_wrap_and_filter(void **state)
{
	/* Device 5 only; block 10^9 is beyond a 1 GiB RAM disk: wrapped. */
	static const char trace[] = "1.0 5 1000000000 8 1\n2.0 6 0 8 1\n3.0 5 16 8 0\n";
	static const char *const ram[] = { "ram:generic,capacity=1GiB" };
	struct run r;

	run("noop", text_trace(trace, "disksim"), ram, 1, 5, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.m.completed, 2);
	assert_non_null(strstr(r.json, "\"filtered_by_device\":1,\"addresses_wrapped\":1"));
	free(r.json);
}

static void test_policy_holds_forever(void **state)
{
	static const char trace[] = "1.0 0 0 8 1\n2.0 0 8 8 1\n3.0 0 16 8 0\n";
	static const char *const ram[] = { "ram" };
	struct run r;

	run("test-engine:mode=hold", text_trace(trace, "disksim"), ram, 1, -1, &r);
	assert_int_equal(r.rc, -EPROTO);
	assert_string_equal(r.err, "policy 'test-engine' still holds 3 request(s) at t = 0.003000000 s "
				   "with nothing in flight and no wake-up pending: they would never "
				   "complete");
	free(r.json);
}

static void test_timer(void **state)
{
	static const char trace[] = "1.0 0 0 8 1\n1.5 0 8 8 1\n";
	static const char *const ram[] = { "ram" };
	struct run r;

	run("test-engine:mode=timer", text_trace(trace, "disksim"), ram, 1, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ndone, 2);
	/* Both held until the wake-up at 2.0 ms: the second request's wake-up
	 * at 2.5 ms merges into the earlier one. */
	assert_true(r.dones[0] >= 2000000 && r.dones[0] < 2001000);
	assert_true(r.dones[1] >= 2000000 && r.dones[1] < 2001000);
	assert_non_null(strstr(r.json, "\"counters\":{\"ticks\":"));
	free(r.json);
}

static void test_padding_and_internal(void **state)
{
	static const char trace[] = "1.0 0 0 8 0\n2.0 0 8 8 0\n3.0 0 16 8 1\n";
	static const char *const devs[] = { "hdd:generic", "ssd" };
	struct run r;

	run("test-engine:mode=pad", text_trace(trace, "disksim"), devs, 2, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.m.completed, 3);
	assert_int_equal(r.dc[1].padding_bytes, 2 * 4096);
	assert_int_equal(r.dc[1].internal_bytes, 2 * 4096);
	assert_int_equal(r.dc[0].bytes_written, 2 * 4096);
	assert_int_equal(r.dc[0].bytes_read, 4096);
	assert_int_equal(r.dc[0].commands, 3);
	assert_true(r.dc[0].busy_ns > 0);
	free(r.json);
}

static void test_finish_and_reject(void **state)
{
	static const char trace[] = "1.0 0 0 8 1\n2.0 0 8 8 0\n3.0 0 16 8 1\n";
	static const char *const ram[] = { "ram" };
	struct run r;

	run("test-engine:mode=finish", text_trace(trace, "disksim"), ram, 1, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.m.completed, 3);
	assert_int_equal(r.dc[0].commands, 1);     /* only the write reached the device */
	assert_int_equal(r.arrivals[0], r.dones[0]);   /* finished at arrival: latency 0 */
	free(r.json);

	run("test-engine:mode=reject", text_trace(trace, "disksim"), ram, 1, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.m.completed, 3);
	assert_int_equal(r.m.errors, 1);
	free(r.json);
}

static void test_issue_errors(void **state)
{
	static const char trace[] = "1.0 0 0 8 1\n";
	static const char *const ram[] = { "ram" };
	struct run r;

	run("test-engine:mode=badissue", text_trace(trace, "disksim"), ram, 1, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(last_issue_results[0], -EINVAL);
	assert_int_equal(last_issue_results[1], -EINVAL);
	assert_int_equal(last_issue_results[2], 0);
	assert_true(last_issue_results[3] == -EBUSY || last_issue_results[3] == -EINVAL);
	assert_int_equal(r.m.completed, 1);
	free(r.json);
}

static void test_hints(void **state)
{
	/* CSV streams 7 and 8; only 7 has a declared signature. */
	static const char trace[] = "time_ms,op,offset,bytes,stream\n1,W,0,4096,8\n2,W,4096,4096,7\n";
	static const char *const ram[] = { "ram" };
	static const struct sim_hint h[] = { { .stream = 7, .size = 65536,
					       .pattern = POLICY_PATTERN_SEQUENTIAL } };
	struct run r;

	run_hints = h;
	run_nhints = 1;
	run("test-engine", text_trace(trace, "csv"), ram, 1, -1, &r);
	run_hints = NULL;
	run_nhints = 0;
	assert_int_equal(r.rc, 0);
	assert_int_equal(last_hint_size, 65536);
	assert_int_equal(last_hint_pattern, POLICY_PATTERN_SEQUENTIAL);
	free(r.json);

	/* Generated workloads declare their streams themselves. */
	run("test-engine", gen("vms:requests=10,size=128KiB", 1, 1ull << 30), ram, 1, -1, &r);
	assert_int_equal(last_hint_size, 128 << 10);
	assert_int_equal(last_hint_pattern, POLICY_PATTERN_SEQUENTIAL);
	free(r.json);
}

static void test_create_errors(void **state)
{
	struct sim_dev *dev;
	struct sim_engine *e;
	struct sim_source *src = gen("pangu:requests=10", 1, 1ull << 30);
	char err[512];
	struct sim_config cfg = { .policy = "nosuch", .ndev = 1, .src = src };

	assert_int_equal(sim_dev_create("ram", 0, &dev, err, sizeof(err)), 0);
	cfg.devs = &dev;
	assert_int_equal(sim_engine_create(&cfg, &e, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "unknown policy 'nosuch' (known: noop"));
	cfg.policy = "noop:bogus=1";
	assert_int_equal(sim_engine_create(&cfg, &e, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "noop: unknown option 'bogus' (valid: max_merge)");
	cfg.ndev = 0;
	assert_int_equal(sim_engine_create(&cfg, &e, err, sizeof(err)), -EINVAL);
	sim_dev_destroy(dev);
	sim_source_destroy(src);
}

static void test_trace_errors_surface(void **state)
{
	static const char trace[] = "1.0 0 0 8 1\n2.0 0 zz 8 1\n";
	static const char *const ram[] = { "ram" };
	struct run r;

	run("noop", text_trace(trace, "disksim"), ram, 1, -1, &r);
	assert_int_equal(r.rc, -EINVAL);
	assert_string_equal(r.err, "t:2: block number 'zz' is not a block number");
	free(r.json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_closed_loop),
		cmocka_unit_test(test_closed_loop_replay),
		cmocka_unit_test(test_closed_loop_window),
		cmocka_unit_test(test_closed_loop_lookahead),
		cmocka_unit_test(test_bounded_memory),
		cmocka_unit_test(test_wrap_and_filter),
		cmocka_unit_test(test_policy_holds_forever),
		cmocka_unit_test(test_timer),
		cmocka_unit_test(test_padding_and_internal),
		cmocka_unit_test(test_finish_and_reject),
		cmocka_unit_test(test_issue_errors),
		cmocka_unit_test(test_hints),
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_trace_errors_surface),
	};
	char err[256];

	if (policy_register(&tp_ops, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
