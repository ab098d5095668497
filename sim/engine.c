/* SPDX-License-Identifier: MIT */
/*
 * engine.c - iosig-sim's discrete-event engine (see engine.h).
 *
 * Three kinds of events in one binary heap ordered by (time, sequence):
 *   ARRIVE  a workload request.  Open loop: the source is read one request
 *           ahead, so at most one is pending.  Closed loop: each stream
 *           keeps at most iodepth requests outstanding; the source is read
 *           up to CL_LOOKAHEAD requests ahead into per-stream FIFOs, a
 *           stream's first request arrives at its own arrival time and
 *           each later one when a slot of the stream frees (the think time
 *           after a completion), in the stream's order;
 *   DONE    a device command completes (its merged chain is completed
 *           member by member);
 *   WAKE    a wake-up the policy asked for with env->wake_at().
 * After all events of one instant, the policy's dispatch() runs.  The
 * engine holds no scheduling logic: what to issue, where and when is the
 * policy's; how long it takes is the device model's.
 */
#include "engine.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLAB 1024                 /* requests allocated at a time */
#define SAME_INSTANT_MAX 100000000ull   /* events at one instant before declaring a livelock */
#define PROGRESS_EVERY 65536
#define CL_LOOKAHEAD 65536        /* closed loop: requests read ahead at most */
#define CL_IODEPTH_MAX 65536

enum ev_kind { EV_ARRIVE, EV_DONE, EV_WAKE };

struct ev {
	uint64_t t, seq;
	struct policy_req *req;   /* ARRIVE: the request; DONE: the chain head */
	uint16_t dev;
	uint8_t kind;
};

enum { RQ_FREE, RQ_HELD, RQ_ISSUED, RQ_DONE };

/* Closed loop: one stream's state. */
struct cl_stream {
	uint32_t id;
	unsigned active;          /* released (arrival scheduled or arrived), not finished */
	bool started;             /* its first request has been released */
	uint64_t slot_at;         /* when its last slot freed with nothing to release */
	uint64_t last_release;    /* arrival time of its latest request (order kept) */
	struct ereq *head, *tail; /* read from the source, not released yet */
};

/* A workload request and the engine's bookkeeping for it. */
struct ereq {
	struct policy_req r;
	uint64_t think_ns;        /* closed loop: delay before the stream's next arrival */
	struct ereq *next;        /* free or deferred list */
	struct ereq *cl_next;     /* closed loop: next in its stream's FIFO */
	struct cl_stream *cls;    /* closed loop: its stream */
	uint8_t state;            /* RQ_* */
};

struct sim_engine {
	struct sim_config cfg;
	struct policy_env env;
	struct policy_dev_info info[SIM_MAX_DEVS];
	struct sim_dev_counters dc[SIM_MAX_DEVS];
	struct policy *pol;
	uint64_t now, seq;

	struct ev *heap;
	size_t nheap, capheap;

	struct ereq **slabs;
	size_t nslabs;
	struct ereq *free, *deferred;
	uint64_t next_id, outstanding, max_outstanding;

	bool src_done;
	uint64_t read_count, kept, filtered, wrapped;
	uint64_t unarrived;       /* read from the source, arrival not yet happened */

	bool closed;              /* closed loop (cfg.closed_loop or the source's nature) */
	unsigned iodepth;
	struct cl_stream **clmap; /* open addressing by stream id */
	size_t clcap, ncl;
	uint64_t cl_buffered;     /* read, not released */
	uint64_t cl_waits;        /* slots that found their stream's next request beyond
	                             the lookahead */
	uint64_t wake;            /* pending wake-up, UINT64_MAX = none */
	uint64_t events, last_activity;
	uint64_t violations;      /* policy calls that broke the contract (ignored) */
	struct sim_metrics m;
	int fatal;
	char fatal_msg[SIM_ERR_MAX];
};

/* ---- heap ---- */

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static int ev_push(struct sim_engine *e, uint64_t t, enum ev_kind kind, struct policy_req *req,
		   unsigned dev)
{
	size_t i;

	if (e->nheap == e->capheap) {
		size_t ncap = e->capheap ? e->capheap * 2 : 256;
		struct ev *n = realloc(e->heap, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		e->heap = n;
		e->capheap = ncap;
	}
	i = e->nheap++;
	e->heap[i] = (struct ev){ .t = t, .seq = e->seq++, .req = req, .dev = (uint16_t)dev,
				  .kind = (uint8_t)kind };
	while (i && ev_less(&e->heap[i], &e->heap[(i - 1) / 2])) {
		struct ev tmp = e->heap[i];

		e->heap[i] = e->heap[(i - 1) / 2];
		e->heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	return 0;
}

static struct ev ev_pop(struct sim_engine *e)
{
	struct ev top = e->heap[0];
	size_t i = 0;

	e->heap[0] = e->heap[--e->nheap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < e->nheap && ev_less(&e->heap[l], &e->heap[m]))
			m = l;
		if (r < e->nheap && ev_less(&e->heap[r], &e->heap[m]))
			m = r;
		if (m == i)
			break;
		struct ev tmp = e->heap[i];

		e->heap[i] = e->heap[m];
		e->heap[m] = tmp;
		i = m;
	}
	return top;
}

static void fail(struct sim_engine *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct sim_engine *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (e->fatal)
		return;
	e->fatal = code;
	va_start(ap, fmt);
	vsnprintf(e->fatal_msg, sizeof(e->fatal_msg), fmt, ap);
	va_end(ap);
}

/* ---- requests ---- */

static struct ereq *req_alloc(struct sim_engine *e)
{
	struct ereq *q;

	if (!e->free) {
		struct ereq **ns = realloc(e->slabs, (e->nslabs + 1) * sizeof(*ns));
		struct ereq *slab;

		if (!ns)
			return NULL;
		e->slabs = ns;
		slab = calloc(SLAB, sizeof(*slab));
		if (!slab)
			return NULL;
		e->slabs[e->nslabs++] = slab;
		for (size_t i = SLAB; i-- > 0;) {
			slab[i].next = e->free;
			e->free = &slab[i];
		}
	}
	q = e->free;
	e->free = q->next;
	memset(q, 0, sizeof(*q));
	q->r.engine_data = e;
	return q;
}

static struct ereq *ereq_of(struct sim_engine *e, struct policy_req *r)
{
	return r && r->engine_data == e ? (struct ereq *)r : NULL;
}

/* Returns deferred requests to the free list (after the hooks that may
 * still look at them have returned). */
static void flush_deferred(struct sim_engine *e)
{
	while (e->deferred) {
		struct ereq *q = e->deferred;

		e->deferred = q->next;
		q->state = RQ_FREE;
		q->next = e->free;
		e->free = q;
	}
}

static int schedule_next(struct sim_engine *e);
static int cl_fill(struct sim_engine *e);
static int cl_release(struct sim_engine *e, struct cl_stream *s, uint64_t t);

/* A workload request is finished (device completion, env->finish or refusal). */
static void finish_workload(struct sim_engine *e, struct ereq *q, int status)
{
	if (sim_metrics_add(&e->m, q->r.op, q->r.len, q->r.arrival_ns, e->now, status) < 0)
		fail(e, -ENOMEM, "out of memory recording latencies");
	if (e->cfg.on_complete)
		e->cfg.on_complete(e->cfg.ctx, &q->r, e->now);
	q->r.status = status;
	q->state = RQ_DONE;
	q->next = e->deferred;
	e->deferred = q;
	e->outstanding--;
	e->last_activity = e->now;
	if (e->closed) {
		/* A slot of the stream frees: its next request arrives after
		 * the think time (once it is read, if it is not yet). */
		struct cl_stream *s = q->cls;
		uint64_t t = e->now + q->think_ns + e->cfg.think_ns;

		s->active--;
		if (s->head) {
			cl_release(e, s, t);
		} else {
			s->slot_at = t;
			if (!e->src_done && e->cl_buffered >= CL_LOOKAHEAD)
				e->cl_waits++;
		}
		cl_fill(e);
	}
}

/* ---- the source ---- */

/*
 * Reads the next request to keep into *ret (arrival_ns = the source's).
 * Returns 1, 0 at the end, or -errno after fail().
 */
static int read_one(struct sim_engine *e, struct ereq **ret)
{
	const struct policy_dev_info *home = &e->info[0];
	struct sim_io io;
	struct ereq *q;
	int r;

	for (;;) {
		if (e->src_done)
			return 0;
		if (e->cfg.max_requests && e->kept >= e->cfg.max_requests) {
			e->src_done = true;
			return 0;
		}
		r = sim_source_next(e->cfg.src, &io);
		if (r < 0) {
			fail(e, r, "%s", e->cfg.src->err);
			return r;
		}
		if (r == 0) {
			e->src_done = true;
			return 0;
		}
		e->read_count++;
		if (e->cfg.trace_dev >= 0 && io.dev != (uint64_t)e->cfg.trace_dev) {
			e->filtered++;
			continue;
		}
		break;
	}
	if (io.op != POLICY_OP_FLUSH) {
		if (io.len > home->capacity) {
			fail(e, -EINVAL, "request %" PRIu64 " of the workload is %" PRIu64 " bytes, larger "
			     "than %s (%" PRIu64 " bytes)", e->read_count, io.len, home->name,
			     home->capacity);
			return -EINVAL;
		}
		if (io.offset > home->capacity - io.len) {
			/* Traces address larger disks than the model: wrap. */
			io.offset %= home->capacity;
			if (io.offset > home->capacity - io.len)
				io.offset = home->capacity - io.len;
			io.offset -= io.offset % SIM_SECTOR;
			e->wrapped++;
		}
	} else {
		io.offset = io.len = 0;
	}
	q = req_alloc(e);
	if (!q) {
		fail(e, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	e->kept++;
	q->r.id = e->next_id++;
	q->r.offset = io.offset;
	q->r.len = io.len;
	q->r.arrival_ns = io.arrival_ns;
	q->r.stream = io.stream;
	q->r.dev = 0;
	q->r.op = io.op;
	q->r.flags = io.flags & POLICY_REQ_SYNC;
	q->r.hint_size = io.hint_size;
	q->r.hint_pattern = io.hint_pattern;
	if (!io.hint_size && !io.hint_pattern)
		for (unsigned i = 0; i < e->cfg.nhints; i++)
			if (e->cfg.hints[i].stream == io.stream) {
				q->r.hint_size = e->cfg.hints[i].size;
				q->r.hint_pattern = e->cfg.hints[i].pattern;
				break;
			}
	q->think_ns = io.think_ns;
	e->unarrived++;
	*ret = q;
	return 1;
}

/* Open loop: reads the next request and schedules its arrival.  0 (also
 * at the end) or -errno after fail(). */
static int schedule_next(struct sim_engine *e)
{
	struct ereq *q;
	int r = read_one(e, &q);

	if (r <= 0)
		return r;
	if (q->r.arrival_ns < e->now)
		q->r.arrival_ns = e->now;
	r = ev_push(e, q->r.arrival_ns, EV_ARRIVE, &q->r, 0);
	if (r < 0)
		fail(e, r, "out of memory");
	return r;
}

/* ---- closed loop ---- */

static size_t cl_slot(uint32_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* The state of stream id, created on first use; NULL without memory. */
static struct cl_stream *cl_stream_get(struct sim_engine *e, uint32_t id)
{
	size_t i;

	if (2 * (e->ncl + 1) > e->clcap) {
		size_t ncap = e->clcap ? 2 * e->clcap : 64;
		struct cl_stream **n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < e->clcap; j++)
			if (e->clmap[j]) {
				for (i = cl_slot(e->clmap[j]->id, ncap); n[i]; i = (i + 1) & (ncap - 1))
					;
				n[i] = e->clmap[j];
			}
		free(e->clmap);
		e->clmap = n;
		e->clcap = ncap;
	}
	for (i = cl_slot(id, e->clcap); e->clmap[i]; i = (i + 1) & (e->clcap - 1))
		if (e->clmap[i]->id == id)
			return e->clmap[i];
	e->clmap[i] = calloc(1, sizeof(**e->clmap));
	if (!e->clmap[i])
		return NULL;
	e->clmap[i]->id = id;
	e->ncl++;
	return e->clmap[i];
}

/* Releases the head of s's FIFO: it arrives at t, or later to keep the
 * stream's order. */
static int cl_release(struct sim_engine *e, struct cl_stream *s, uint64_t t)
{
	struct ereq *q = s->head;
	int r;

	s->head = q->cl_next;
	if (!s->head)
		s->tail = NULL;
	e->cl_buffered--;
	if (t < e->now)
		t = e->now;
	if (t < s->last_release)
		t = s->last_release;
	s->last_release = t;
	s->started = true;
	s->active++;
	q->r.arrival_ns = t;
	r = ev_push(e, t, EV_ARRIVE, &q->r, 0);
	if (r < 0)
		fail(e, r, "out of memory");
	return r;
}

/* Reads ahead up to CL_LOOKAHEAD requests; a request whose stream has a
 * free slot is released at once: a new stream's first request at its own
 * arrival time, a later one when its slot freed.  0 or -errno. */
static int cl_fill(struct sim_engine *e)
{
	while (!e->src_done && e->cl_buffered < CL_LOOKAHEAD) {
		struct cl_stream *s;
		struct ereq *q;
		int r = read_one(e, &q);

		if (r <= 0)
			return r;
		s = cl_stream_get(e, q->r.stream);
		if (!s) {
			fail(e, -ENOMEM, "out of memory");
			return -ENOMEM;
		}
		q->cls = s;
		if (s->tail)
			s->tail->cl_next = q;
		else
			s->head = q;
		s->tail = q;
		e->cl_buffered++;
		if (s->head == q && s->active < e->iodepth &&
		    cl_release(e, s, s->started ? s->slot_at : q->r.arrival_ns) < 0)
			return -ENOMEM;
	}
	return 0;
}



/* ---- the environment the policy sees ---- */

static struct sim_engine *eng(struct policy_env *env)
{
	return env->ctx;
}

static uint64_t env_now(struct policy_env *env)
{
	return eng(env)->now;
}

static unsigned env_inflight(struct policy_env *env, unsigned dev)
{
	struct sim_engine *e = eng(env);

	return dev < e->cfg.ndev ? e->dc[dev].inflight : 0;
}

static int env_issue(struct policy_env *env, struct policy_req *req, unsigned dev, uint64_t offset)
{
	struct sim_engine *e = eng(env);
	struct sim_dev_counters *c;
	uint64_t total = 0, n = 0, done;
	struct policy_req *m;

	if (!req || dev >= e->cfg.ndev)
		return -EINVAL;
	c = &e->dc[dev];
	if (c->inflight >= e->info[dev].queue_depth)
		return -EBUSY;
	for (m = req; m; m = m->merge_next) {
		struct ereq *q = ereq_of(e, m);

		if (++n > (1u << 20) || m->op != req->op || m->op > POLICY_OP_FLUSH ||
		    (q && q->state != RQ_HELD))
			return -EINVAL;
		if (m->op == POLICY_OP_FLUSH ? (m->len || m != req || m->merge_next) : !m->len)
			return -EINVAL;
		total += m->len;
	}
	if (offset > e->info[dev].capacity || total > e->info[dev].capacity - offset)
		return -EINVAL;

	done = e->cfg.devs[dev]->ops->serve(e->cfg.devs[dev], req->op, offset, total, e->now);
	if (done < e->now)
		done = e->now;
	if (ev_push(e, done, EV_DONE, req, dev) < 0) {
		fail(e, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	if (c->inflight++ == 0)
		c->busy_since = e->now;
	c->commands++;
	for (m = req; m; m = m->merge_next) {
		struct ereq *q = ereq_of(e, m);

		m->issued_dev = (uint16_t)dev;
		m->issued_off = offset;
		m->issue_ns = e->now;
		offset += m->len;
		c->requests++;
		if (m->op == POLICY_OP_READ)
			c->bytes_read += m->len;
		else if (m->op == POLICY_OP_WRITE)
			c->bytes_written += m->len;
		if (m->flags & POLICY_REQ_PAD)
			c->padding_bytes += m->len;
		if (!q)
			c->internal_bytes += m->len;
		else if (dev != m->dev)
			c->redirected_bytes += m->len;
		if (q)
			q->state = RQ_ISSUED;
	}
	e->last_activity = e->now;
	return 0;
}

static void env_finish(struct policy_env *env, struct policy_req *req, int status)
{
	struct sim_engine *e = eng(env);
	struct ereq *q = ereq_of(e, req);

	if (!q || q->state != RQ_HELD) {
		e->violations++;   /* not a held workload request: ignore */
		return;
	}
	finish_workload(e, q, status);
}

static void env_wake_at(struct policy_env *env, uint64_t when)
{
	struct sim_engine *e = eng(env);

	if (when < e->now)
		when = e->now;
	if (when >= e->wake)
		return;
	e->wake = when;
	if (ev_push(e, when, EV_WAKE, NULL, 0) < 0)
		fail(e, -ENOMEM, "out of memory");
}

/* ---- events ---- */

static void on_arrive(struct sim_engine *e, struct policy_req *req)
{
	struct ereq *q = (struct ereq *)req;
	int r;

	q->state = RQ_HELD;
	e->unarrived--;
	e->outstanding++;
	if (e->outstanding > e->max_outstanding)
		e->max_outstanding = e->outstanding;
	e->last_activity = e->now;
	r = e->pol->ops->submit(e->pol, req);
	if (r < 0 && q->state == RQ_HELD)
		finish_workload(e, q, r);
	if (!e->closed)
		schedule_next(e);
}

static void on_done(struct sim_engine *e, struct policy_req *head, unsigned dev)
{
	struct sim_dev_counters *c = &e->dc[dev];

	if (--c->inflight == 0)
		c->busy_ns += e->now - c->busy_since;
	e->last_activity = e->now;
	for (struct policy_req *m = head; m;) {
		struct policy_req *next = m->merge_next;
		struct ereq *q = ereq_of(e, m);

		m->status = 0;
		e->pol->ops->complete(e->pol, m);
		if (q && q->state == RQ_ISSUED) {
			q->state = RQ_HELD;   /* finish_workload's bookkeeping expects a live request */
			finish_workload(e, q, 0);
		}
		m = next;
	}
}

static bool devices_idle(const struct sim_engine *e)
{
	for (unsigned d = 0; d < e->cfg.ndev; d++)
		if (e->dc[d].inflight)
			return false;
	return true;
}

int sim_engine_run(struct sim_engine *e, char *err, size_t errlen)
{
	uint64_t drain = e->cfg.drain_ns ? e->cfg.drain_ns : 60 * POLICY_NS_PER_S;
	uint64_t same = 0, last_t = 0;

	if (e->closed)
		cl_fill(e);
	else
		schedule_next(e);
	while (e->nheap && !e->fatal) {
		struct ev ev = ev_pop(e);

		if (ev.t > e->now) {
			e->now = ev.t;
			same = 0;
		}
		if (++same > SAME_INSTANT_MAX) {
			fail(e, -ELOOP, "policy '%s' keeps the simulation at t = %.9f s (more than %llu "
			     "events at one instant): a livelock", e->pol->ops->name, e->now / 1e9,
			     SAME_INSTANT_MAX);
			break;
		}
		e->events++;
		switch (ev.kind) {
		case EV_ARRIVE:
			on_arrive(e, ev.req);
			break;
		case EV_DONE:
			on_done(e, ev.req, ev.dev);
			break;
		case EV_WAKE:
			if (ev.t != e->wake)
				break;   /* superseded by an earlier wake-up */
			e->wake = UINT64_MAX;
			e->pol->ops->tick(e->pol);
			break;
		}
		if (!e->nheap || e->heap[0].t > e->now) {
			e->pol->ops->dispatch(e->pol);
			flush_deferred(e);
		}
		if (e->src_done && !e->unarrived && !e->outstanding && devices_idle(e) &&
		    (!e->nheap || e->heap[0].t > e->last_activity + drain))
			break;
		if (e->cfg.on_progress && e->events % PROGRESS_EVERY == 0) {
			double f = sim_source_progress(e->cfg.src);

			e->cfg.on_progress(e->cfg.ctx, e->now, e->m.completed, f);
		}
		last_t = e->now;
	}
	(void)last_t;
	flush_deferred(e);
	if (!e->fatal && e->outstanding)
		fail(e, -EPROTO, "policy '%s' still holds %" PRIu64 " request(s) at t = %.9f s with "
		     "nothing in flight and no wake-up pending: they would never complete",
		     e->pol->ops->name, e->outstanding, e->now / 1e9);
	if (e->fatal) {
		snprintf(err, errlen, "%s", e->fatal_msg);
		return e->fatal;
	}
	return 0;
}

/* ---- set-up and results ---- */

int sim_engine_create(const struct sim_config *cfg, struct sim_engine **ret, char *err,
		      size_t errlen)
{
	struct sim_engine *e;
	int r;

	if (!cfg->ndev || cfg->ndev > SIM_MAX_DEVS || !cfg->src || !cfg->policy) {
		snprintf(err, errlen, "a run needs a policy, a workload and 1 to %d devices",
			 SIM_MAX_DEVS);
		return -EINVAL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e->cfg = *cfg;
	e->wake = UINT64_MAX;
	e->closed = cfg->closed_loop || cfg->src->closed_loop;
	e->iodepth = cfg->iodepth ? cfg->iodepth : cfg->src->iodepth ? cfg->src->iodepth : 1;
	if (!e->closed && (cfg->iodepth || cfg->think_ns)) {
		snprintf(err, errlen, "an iodepth or a think time needs a closed-loop run");
		free(e);
		return -EINVAL;
	}
	if (e->iodepth > CL_IODEPTH_MAX) {
		snprintf(err, errlen, "iodepth %u is more than %u", e->iodepth, CL_IODEPTH_MAX);
		free(e);
		return -EINVAL;
	}
	sim_metrics_init(&e->m);
	for (unsigned d = 0; d < cfg->ndev; d++)
		e->info[d] = cfg->devs[d]->info;
	e->env = (struct policy_env){
		.version = POLICY_ENV_VERSION,
		.ctx = e,
		.ndev = cfg->ndev,
		.dev = e->info,
		.now = env_now,
		.inflight = env_inflight,
		.issue = env_issue,
		.finish = env_finish,
		.wake_at = env_wake_at,
	};
	r = policy_create(cfg->policy, &e->env, &e->pol, err, errlen);
	if (r < 0) {
		sim_metrics_free(&e->m);
		free(e);
		return r;
	}
	*ret = e;
	return 0;
}

void sim_engine_destroy(struct sim_engine *e)
{
	if (!e)
		return;
	policy_destroy(e->pol);
	for (size_t i = 0; i < e->nslabs; i++)
		free(e->slabs[i]);
	free(e->slabs);
	for (size_t i = 0; i < e->clcap; i++)
		free(e->clmap[i]);
	free(e->clmap);
	free(e->heap);
	sim_metrics_free(&e->m);
	free(e);
}

const struct sim_metrics *sim_engine_metrics(const struct sim_engine *e)
{
	return &e->m;
}

const struct sim_dev_counters *sim_engine_dev_counters(const struct sim_engine *e, unsigned dev)
{
	return dev < e->cfg.ndev ? &e->dc[dev] : NULL;
}

uint64_t sim_engine_events(const struct sim_engine *e)
{
	return e->events;
}

uint64_t sim_engine_max_outstanding(const struct sim_engine *e)
{
	return e->max_outstanding;
}

static void emit_counter(void *ctx, const char *key, double value)
{
	json_num(ctx, key, value);
}

void sim_engine_report(struct sim_engine *e, struct json_writer *w)
{
	uint64_t start = e->m.completed ? e->m.first_arrival_ns : 0;
	uint64_t end = e->m.last_completion_ns > e->last_activity ? e->m.last_completion_ns
								   : e->last_activity;
	double span = end > start ? (double)(end - start) : 0, busy = 0;

	for (unsigned d = 0; d < e->cfg.ndev; d++)
		busy += (double)e->dc[d].busy_ns;

	json_obj_begin(w, "policy");
	json_str(w, "name", e->pol->ops->name);
	json_str(w, "spec", e->cfg.policy);
	json_obj_begin(w, "counters");
	if (e->pol->ops->report)
		e->pol->ops->report(e->pol, emit_counter, w);
	json_obj_end(w);
	json_obj_end(w);

	json_obj_begin(w, "workload");
	json_str(w, "source", e->cfg.src->kind);
	json_uint(w, "requests_read", e->read_count);
	json_uint(w, "requests_simulated", e->kept);
	json_uint(w, "filtered_by_device", e->filtered);
	json_uint(w, "addresses_wrapped", e->wrapped);
	json_uint(w, "arrivals_clamped", e->cfg.src->clamped);
	json_bool(w, "closed_loop", e->closed);
	if (e->closed) {
		json_uint(w, "iodepth", e->iodepth);
		json_num(w, "think_s", (double)e->cfg.think_ns / 1e9);
		json_uint(w, "streams", e->ncl);
		json_uint(w, "lookahead_waits", e->cl_waits);
	}
	json_obj_end(w);

	sim_metrics_json(&e->m, busy / 1e9, w);

	json_arr_begin(w, "devices");
	for (unsigned d = 0; d < e->cfg.ndev; d++) {
		const struct sim_dev_counters *c = &e->dc[d];
		struct sim_dev *dv = e->cfg.devs[d];

		json_obj_begin(w, NULL);
		json_str(w, "name", dv->name);
		json_str(w, "class", iosig_class_name(dv->info.cls));
		json_str(w, "model", dv->model);
		json_uint(w, "capacity_bytes", dv->info.capacity);
		json_uint(w, "queue_depth", dv->info.queue_depth);
		json_uint(w, "commands", c->commands);
		json_uint(w, "requests", c->requests);
		json_uint(w, "bytes_read", c->bytes_read);
		json_uint(w, "bytes_written", c->bytes_written);
		json_uint(w, "internal_bytes", c->internal_bytes);
		json_uint(w, "padding_bytes", c->padding_bytes);
		json_uint(w, "redirected_bytes", c->redirected_bytes);
		json_num(w, "busy_s", (double)c->busy_ns / 1e9);
		json_num(w, "utilization", span > 0 ? (double)c->busy_ns / span : 0);
		dv->ops->report(dv, w);
		json_obj_end(w);
	}
	json_arr_end(w);

	json_obj_begin(w, "engine");
	json_uint(w, "events", e->events);
	json_uint(w, "max_outstanding_requests", e->max_outstanding);
	json_uint(w, "contract_violations", e->violations);
	json_obj_end(w);
}
