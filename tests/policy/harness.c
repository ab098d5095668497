/* SPDX-License-Identifier: MIT */
/*
 * harness.c - the fake engine of harness.h.  Events are kept in a binary
 * heap ordered by (time, sequence), so runs are deterministic.  Devices
 * serve their commands one after another in issue order.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

const struct policy_dev_info hx_hdd = {
	.name = "hdd0", .cls = IOSIG_CLASS_HDD, .capacity = 1ull << 40, .queue_depth = 1,
	.block_size = 512,
};

enum ev_kind { EV_SUBMIT, EV_DONE, EV_TIMER, EV_EXPEDITE };

struct ev {
	uint64_t t, seq;
	enum ev_kind kind;
	unsigned idx;            /* request (SUBMIT, EXPEDITE) or command (DONE) index */
	struct policy_req *head; /* DONE: chain head */
};

struct hx_dev {
	uint64_t free_at;        /* when the device finishes its queued work */
	uint64_t pos;            /* byte position after the last command */
	unsigned inflight;
	int fake_inflight;
	uint64_t (*lat_fn)(void *ctx, const struct hx_cmd *c);
	void *lat_ctx;
};

struct hx {
	struct policy_env env;
	struct policy_dev_info info[HX_MAX_DEV];
	struct hx_model model[HX_MAX_DEV];
	struct hx_dev dev[HX_MAX_DEV];
	struct policy *pol;
	uint64_t now, seq;
	struct ev *evs;
	size_t nev, capev;
	struct hx_req *reqs;
	unsigned nreq, capreq;
	struct hx_cmd *cmds;
	unsigned ncmd, capcmd;
	uint64_t wake;           /* pending wake-up, UINT64_MAX = none */
	unsigned ticks;
	bool started;            /* hx_run() was called: requests must not move */
	uint64_t take_until;     /* env->home takes writes back before this time */
	const char *rep_key;
	double rep_val;
};

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static void ev_push(struct hx *h, struct ev e)
{
	size_t i;

	if (h->nev == h->capev) {
		h->capev = h->capev ? 2 * h->capev : 64;
		h->evs = realloc(h->evs, h->capev * sizeof(*h->evs));
		assert(h->evs);
	}
	e.seq = h->seq++;
	i = h->nev++;
	h->evs[i] = e;
	while (i && ev_less(&h->evs[i], &h->evs[(i - 1) / 2])) {
		struct ev t = h->evs[i];

		h->evs[i] = h->evs[(i - 1) / 2];
		h->evs[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct ev ev_pop(struct hx *h)
{
	struct ev top = h->evs[0];
	size_t i = 0;

	h->evs[0] = h->evs[--h->nev];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct ev t;

		if (l < h->nev && ev_less(&h->evs[l], &h->evs[m]))
			m = l;
		if (r < h->nev && ev_less(&h->evs[r], &h->evs[m]))
			m = r;
		if (m == i)
			break;
		t = h->evs[i];
		h->evs[i] = h->evs[m];
		h->evs[m] = t;
		i = m;
	}
	return top;
}

static struct hx_req *hx_of(struct policy_req *r)
{
	return (struct hx_req *)(void *)((char *)r - offsetof(struct hx_req, r));
}

static struct hx *env_hx(struct policy_env *env)
{
	return env->ctx;
}

static uint64_t cb_now(struct policy_env *env)
{
	return env_hx(env)->now;
}

static unsigned cb_inflight(struct policy_env *env, unsigned dev)
{
	struct hx *h = env_hx(env);

	assert(dev < env->ndev);
	if (h->dev[dev].fake_inflight >= 0)
		return (unsigned)h->dev[dev].fake_inflight;
	return h->dev[dev].inflight;
}

static int cb_issue(struct policy_env *env, struct policy_req *req, unsigned dev, uint64_t off)
{
	struct hx *h = env_hx(env);
	struct hx_dev *d;
	struct hx_cmd c = { 0 };
	uint64_t len = 0, o = off, svc, start, dist;
	const struct hx_model *m;

	if (dev >= env->ndev || !req)
		return -EINVAL;
	d = &h->dev[dev];
	m = &h->model[dev];
	if (d->inflight >= h->info[dev].queue_depth)
		return -EBUSY;
	for (struct policy_req *r = req; r; r = r->merge_next) {
		if (r->op != req->op)
			return -EINVAL;
		len += r->len;
		c.nreq++;
	}
	if (off + len > h->info[dev].capacity)
		return -EINVAL;
	for (struct policy_req *r = req; r; r = r->merge_next) {
		r->issued_dev = (uint16_t)dev;
		r->issued_off = o;
		r->issue_ns = h->now;
		o += r->len;
		if (!(r->flags & POLICY_REQ_INTERNAL)) {
			assert(!hx_of(r)->taken);   /* the engine's since env->home */
			hx_of(r)->issued = true;
		}
	}
	c.t = h->now;
	c.dev = dev;
	c.off = off;
	c.len = len;
	c.first_id = req->id;
	c.op = req->op;
	c.flags = req->flags;
	c.stream = req->stream;
	c.hdev = req->dev;
	c.hoff = req->offset;
	c.hlen = req->len;
	if (req->parent) {
		c.piece = true;
		c.parent_id = req->parent->id;
		c.parent_off = req->parent->offset;
		c.parent_len = req->parent->len;
		c.parent_op = req->parent->op;
		c.parent_workload = !(req->parent->flags & POLICY_REQ_INTERNAL);
	}
	dist = off > d->pos ? off - d->pos : d->pos - off;
	svc = m->overhead_ns + (uint64_t)((double)m->seek_ns_per_gib * (double)dist / (1u << 30)) +
	      (m->bytes_per_s ? (uint64_t)((double)len * 1e9 / (double)m->bytes_per_s) : 0);
	if (d->lat_fn)
		svc = d->lat_fn(d->lat_ctx, &c);
	start = d->free_at > h->now ? d->free_at : h->now;
	d->free_at = start + svc;
	d->pos = off + len;
	d->inflight++;
	c.done = d->free_at;
	if (h->ncmd == h->capcmd) {
		h->capcmd = h->capcmd ? 2 * h->capcmd : 64;
		h->cmds = realloc(h->cmds, h->capcmd * sizeof(*h->cmds));
		assert(h->cmds);
	}
	h->cmds[h->ncmd] = c;
	ev_push(h, (struct ev){ .t = c.done, .kind = EV_DONE, .idx = h->ncmd, .head = req });
	h->ncmd++;
	return 0;
}

static void cb_finish(struct policy_env *env, struct policy_req *req, int status)
{
	struct hx *h = env_hx(env);
	struct hx_req *x;

	assert(!(req->flags & POLICY_REQ_INTERNAL));
	x = hx_of(req);
	assert(x->done_t == UINT64_MAX);
	x->done_t = h->now;
	x->status = status;
}

static void cb_wake_at(struct policy_env *env, uint64_t t)
{
	struct hx *h = env_hx(env);

	if (t < h->now)
		t = h->now;
	if (t < h->wake) {
		h->wake = t;
		ev_push(h, (struct ev){ .t = t, .kind = EV_TIMER });
	}
}

/* env->home: the contract's conditions, counted; before hx_take_home()'s
 * time the harness takes the write back (an engine writing it itself). */
static bool cb_home(struct policy_env *env, struct policy_req *req)
{
	struct hx *h = env_hx(env);
	struct hx_req *x;

	assert(!(req->flags & POLICY_REQ_INTERNAL) && (req->flags & POLICY_REQ_HOME) &&
	       req->op == POLICY_OP_WRITE);
	x = hx_of(req);
	assert(x->submitted && !x->issued && !x->taken && x->done_t == UINT64_MAX);
	x->homed++;
	/* (iosigd leaves a write a program waits for to its policy.) */
	if (h->now >= h->take_until || (req->flags & POLICY_REQ_SYNC))
		return false;
	x->taken = true;
	x->done_t = h->now;
	x->status = 0;
	return true;
}

void hx_take_home(struct hx *h, uint64_t until)
{
	h->take_until = until;
}

struct hx *hx_new(unsigned ndev, const struct policy_dev_info *info, const struct hx_model *model)
{
	struct hx *h = calloc(1, sizeof(*h));

	assert(h && ndev <= HX_MAX_DEV);
	for (unsigned i = 0; i < ndev; i++) {
		h->info[i] = info[i];
		h->model[i] = model[i];
		h->dev[i].fake_inflight = -1;
	}
	h->env = (struct policy_env){
		.version = POLICY_ENV_VERSION,
		.ctx = h,
		.ndev = ndev,
		.dev = h->info,
		.now = cb_now,
		.inflight = cb_inflight,
		.issue = cb_issue,
		.finish = cb_finish,
		.wake_at = cb_wake_at,
		.home = cb_home,
	};
	h->wake = UINT64_MAX;
	return h;
}

void hx_free(struct hx *h)
{
	if (!h)
		return;
	policy_destroy(h->pol);
	free(h->evs);
	free(h->reqs);
	free(h->cmds);
	free(h);
}

int hx_policy(struct hx *h, const char *spec, char *err, size_t errlen)
{
	return policy_create(spec, &h->env, &h->pol, err, errlen);
}

struct policy *hx_pol(struct hx *h)
{
	return h->pol;
}

unsigned hx_add_hint(struct hx *h, uint64_t t, uint32_t stream, unsigned dev, uint8_t op,
		     uint64_t off, uint64_t len, uint8_t flags, uint64_t hint_size,
		     uint8_t hint_pattern)
{
	struct hx_req *x;

	if (h->nreq == h->capreq) {
		/* Requests are referenced by the policy: never move them once
		 * the run started; tests add all requests before hx_run(). */
		assert(!h->started);
		h->capreq = h->capreq ? 2 * h->capreq : 64;
		h->reqs = realloc(h->reqs, h->capreq * sizeof(*h->reqs));
		assert(h->reqs);
	}
	x = &h->reqs[h->nreq];
	memset(x, 0, sizeof(*x));
	x->r.id = h->nreq + 1;
	x->r.offset = off;
	x->r.len = len;
	x->r.arrival_ns = t;
	x->r.stream = stream;
	x->r.dev = (uint16_t)dev;
	x->r.op = op;
	x->r.flags = flags;
	x->r.hint_size = hint_size;
	x->r.hint_pattern = hint_pattern;
	x->submit_t = t;
	x->done_t = UINT64_MAX;
	ev_push(h, (struct ev){ .t = t, .kind = EV_SUBMIT, .idx = h->nreq });
	return h->nreq++;
}

unsigned hx_add(struct hx *h, uint64_t t, uint32_t stream, unsigned dev, uint8_t op,
		uint64_t off, uint64_t len, uint8_t flags)
{
	return hx_add_hint(h, t, stream, dev, op, off, len, flags, 0, POLICY_PATTERN_UNKNOWN);
}

void hx_expedite(struct hx *h, uint64_t t, unsigned i)
{
	assert(i < h->nreq);
	ev_push(h, (struct ev){ .t = t, .kind = EV_EXPEDITE, .idx = i });
}

void hx_run(struct hx *h, uint64_t until)
{
	const struct policy_ops *ops = h->pol->ops;

	h->started = true;
	while (h->nev && h->evs[0].t <= until) {
		uint64_t t = h->evs[0].t;

		h->now = t;
		/* Every event of this instant, then one dispatch. */
		while (h->nev && h->evs[0].t == t) {
			struct ev e = ev_pop(h);

			switch (e.kind) {
			case EV_SUBMIT: {
				struct hx_req *x = &h->reqs[e.idx];

				x->submitted = true;
				x->submit_ret = ops->submit(h->pol, &x->r);
				if (x->submit_ret < 0) {
					x->done_t = h->now;
					x->status = x->submit_ret;
				}
				break;
			}
			case EV_DONE: {
				struct policy_req *r = e.head, *next;

				h->dev[h->cmds[e.idx].dev].inflight--;
				for (; r; r = next) {
					bool user = !(r->flags & POLICY_REQ_INTERNAL);

					next = r->merge_next;
					r->status = 0;
					ops->complete(h->pol, r);
					if (user) {
						hx_of(r)->done_t = h->now;
						hx_of(r)->status = 0;
					}
				}
				break;
			}
			case EV_EXPEDITE: {
				struct hx_req *x = &h->reqs[e.idx];

				if (!x->submitted || x->issued || x->done_t != UINT64_MAX)
					break;
				x->r.flags |= POLICY_REQ_SYNC;
				x->expedited = true;
				if (ops->expedite)
					ops->expedite(h->pol, &x->r);
				break;
			}
			case EV_TIMER:
				if (h->wake <= t) {
					h->wake = UINT64_MAX;
					h->ticks++;
					ops->tick(h->pol);
				}
				break;
			}
		}
		ops->dispatch(h->pol);
	}
	if (until != UINT64_MAX && h->now < until)
		h->now = until;
}

uint64_t hx_now(const struct hx *h)
{
	return h->now;
}

struct hx_req *hx_r(struct hx *h, unsigned i)
{
	assert(i < h->nreq);
	return &h->reqs[i];
}

unsigned hx_nreq(const struct hx *h)
{
	return h->nreq;
}

unsigned hx_ncmd(const struct hx *h)
{
	return h->ncmd;
}

const struct hx_cmd *hx_cmd(const struct hx *h, unsigned i)
{
	assert(i < h->ncmd);
	return &h->cmds[i];
}

unsigned hx_ticks(const struct hx *h)
{
	return h->ticks;
}

void hx_fake_inflight(struct hx *h, unsigned dev, int n)
{
	h->dev[dev].fake_inflight = n;
}

void hx_set_latency_fn(struct hx *h, unsigned dev,
		       uint64_t (*fn)(void *ctx, const struct hx_cmd *c), void *ctx)
{
	h->dev[dev].lat_fn = fn;
	h->dev[dev].lat_ctx = ctx;
}

static void rep_emit(void *ctx, const char *key, double v)
{
	struct hx *h = ctx;

	if (!strcmp(key, h->rep_key))
		h->rep_val = v;
}

double hx_report(struct hx *h, const char *key)
{
	h->rep_key = key;
	h->rep_val = NAN;
	if (h->pol->ops->report)
		h->pol->ops->report(h->pol, rep_emit, h);
	return h->rep_val;
}

unsigned hx_outstanding(const struct hx *h)
{
	unsigned n = 0;

	for (unsigned i = 0; i < h->nreq; i++)
		n += h->reqs[i].done_t == UINT64_MAX;
	return n;
}
