/* SPDX-License-Identifier: MIT */
/*
 * bfq.c - Budget Fair Queueing (Linux block/bfq-iosched.c and bfq-wf2q.c,
 * documented in Documentation/block/bfq-iosched.rst), per device:
 *
 *  - one queue per process for its synchronous requests (reads, sync
 *    writes) and one queue shared by all asynchronous writes; each queue
 *    has a weight, (8 - ioprio) * 10 (the documentation's formula);
 *  - queues are served one at a time, each for a *budget* of sectors,
 *    scheduled by B-WF2Q+: a queue's virtual start S and finish F = S +
 *    budget / weight; the system virtual time V grows with the service
 *    given divided by the sum of the busy queues' weights; the next queue
 *    is the eligible one (S <= V) with the smallest F;
 *  - the in-service queue is expired when its budget is exhausted, when
 *    its budget timeout (timeout_sync, 125 ms) fires, or when it runs dry;
 *    a sync queue that runs dry may keep the device idle for slice_idle
 *    (8 ms) waiting for its process's next request (on a rotational drive
 *    without command queueing idling always pays; elsewhere only for
 *    sequential I/O-bound queues or to protect a heavier queue);
 *  - the budget feedback loop: after an expiration a sync queue's next
 *    budget grows (x2 on timeout, x4 when exhausted), shrinks when it went
 *    idle, or follows what it used; the maximum budget is auto-tuned to
 *    what the estimated peak rate serves in timeout_sync; slow (seeky)
 *    queues are charged the time they held the device, not their sectors;
 *  - low_latency (on): a queue that starts after being idle for a while is
 *    deemed interactive and its weight raised 30-fold for a time computed
 *    from the peak rate (3-25 s, and at most 120 000 sectors); a queue that
 *    waits for its requests and stays under 7000 sectors/s is soft
 *    real-time (x3000 for 300 ms); queues created in a burst of 8 within
 *    180 ms are not raised;
 *  - within a queue: sector order from the last position with short
 *    backward seeks (back_seek_max 16 MiB at penalty 2), except an
 *    expired FIFO head once per budget (fifo_expire_sync/async).
 *
 * A write a process starts waiting for (expedite) becomes what BFQ makes of
 * a request a process blocks on: it moves from the shared async queue to
 * its process's sync queue (made, and weight raised, as any new one), at
 * the head of the FIFO with its expiry passed, as that queue's next
 * request; the queue may then preempt the one in service.
 *
 * Not modelled (docs/policies.md): groups (cgroups) and I/O priority
 * classes other than best effort, early queue merging of cooperating
 * processes, injection of other queues' I/O while idling, and the tag
 * limits of async I/O.
 */
#include <errno.h>
#include <stdlib.h>

#include "pol_builtin.h"
#include "pol_util.h"

#define MS POLICY_NS_PER_MS
#define SECT 512u
#define WFQ_SHIFT 22                    /* bfq_delta(): service << 22 / weight */
#define RATE_SHIFT 16                   /* peak rate in (sectors/us) << 16 */
#define MIN_TT (2 * MS)                 /* BFQ_MIN_TT: an immediate think time */
#define SEEK_THR 800                    /* BFQQ_SEEK_THR, sectors */
#define SECT_THR_NONROT 64              /* BFQQ_SECT_THR_NONROT, sectors */
#define DEFAULT_MAX_BUDGET (16 * 1024)  /* bfq_default_max_budget, sectors */
#define STATS_MIN_BUDGETS 194           /* bfq_stats_min_budgets */
#define ASYNC_CHARGE 3                  /* bfq_async_charge_factor */
#define RATE_MIN_SAMPLES 32             /* BFQ_RATE_MIN_SAMPLES */
#define RATE_MIN_INTERVAL (300 * MS)    /* BFQ_RATE_MIN_INTERVAL */
#define RATE_REF_INTERVAL (1000 * MS)   /* BFQ_RATE_REF_INTERVAL */
#define WR_COEFF 30                     /* bfq_wr_coeff */
#define SOFTRT_FACTOR 100               /* BFQ_SOFTRT_WEIGHT_FACTOR */
#define WR_RT_MAX_TIME (300 * MS)       /* bfq_wr_rt_max_time */
#define WR_MIN_IDLE_TIME (2000 * MS)    /* bfq_wr_min_idle_time */
#define WR_MIN_INTER_ARR_ASYNC (500 * MS) /* bfq_wr_min_inter_arr_async */
#define WR_MAX_SOFTRT_RATE 7000         /* bfq_wr_max_softrt_rate, sectors/s */
#define MAX_SERVICE_FROM_WR 120000      /* max_service_from_wr, sectors */
#define REQUESTS_WITHIN_TIMER 120       /* bfq_requests_within_timer */
#define LARGE_BURST_THRESH 8            /* bfq_large_burst_thresh */
#define BURST_INTERVAL (180 * MS)       /* bfq_burst_interval */
#define DEFAULT_WEIGHT 40               /* (IOPRIO_BE_NR - 4) * 10 */
#define NO_STREAM UINT32_MAX
#define NEVER UINT64_MAX

/* ref_rate[] and ref_wr_duration[] (rotational, non-rotational): reference
 * peak rates in (sectors/us) << 16 and interactive raising in ms. */
static const uint64_t ref_rate[2] = { 14000, 33000 };
static const uint64_t ref_wr_duration_ms[2] = { 7000, 2500 };

enum bfq_expiration {
	EXP_TOO_IDLE,
	EXP_BUDGET_TIMEOUT,
	EXP_BUDGET_EXHAUSTED,
	EXP_NO_MORE_REQUESTS,
	EXP_PREEMPTED,
	EXP_NREASONS,
};

struct bfq_opts {
	uint64_t fifo_expire_sync, fifo_expire_async;   /* ns */
	uint64_t back_seek_max;                         /* bytes */
	uint64_t back_seek_penalty;
	uint64_t slice_idle, timeout_sync;              /* ns */
	uint64_t max_budget;                            /* bytes, 0 = auto */
	bool strict_guarantees, low_latency;
	uint64_t ioprio, ioprio_stream, stream_ioprio;
	uint64_t max_merge;                             /* bytes */
};

struct bfq_dev;

struct bfq_queue {
	struct bfq_dev *bd;
	uint32_t stream;
	bool sync;
	struct policy_tnode *sorted;      /* queued requests by (offset, id) */
	struct policy_list fifo;          /* arrival order; req->pdata[0] = FIFO expiry */
	struct policy_req *next_rq;
	unsigned nreq;                    /* queued */
	unsigned dispatched;              /* commands in flight */
	/* B-WF2Q+ entity */
	bool busy;
	struct policy_list active;        /* in bd->active while busy */
	uint64_t start, finish;           /* virtual times */
	uint64_t seq;                     /* when it was last (re)queued: ties go to the earlier */
	uint64_t budget, service;         /* sectors */
	uint64_t max_budget;              /* sectors */
	unsigned orig_weight, weight;
	/* state flags of bfq_queue */
	bool fifo_checked;                /* bfq_bfqq_fifo_expire: FIFO looked at this budget */
	bool wait_request;                /* the device idles for it */
	bool non_blocking_wait_rq;
	bool io_bound, short_ttime, in_large_burst, just_created, softrt_update;
	bool in_burst_list;
	uint32_t seek_history;
	uint64_t last_request_pos;        /* end of its last request, bytes */
	uint64_t budget_timeout;          /* ns: its service slot ends */
	uint64_t idle_since;              /* ns: it went empty with nothing in flight
	                                     (NEVER for a new queue); the kernel keeps this
	                                     in budget_timeout too */
	unsigned requests_within_timer;
	uint64_t ttime_last_end, ttime_samples, ttime_total, ttime_mean;
	/* weight raising */
	unsigned wr_coeff;
	uint64_t wr_cur_max_time, last_wr_start_finish, wr_start_at_switch_to_srt;
	uint64_t service_from_wr, service_from_backlogged, last_idle_bklogged;
	uint64_t soft_rt_next_start;
	struct policy_list free_link;
};

struct bfq_dev {
	unsigned idx;
	bool rot;                         /* rotational (an HDD) */
	bool hw_tag;                      /* the device queues commands (depth > 3) */
	struct pol_map sync;              /* stream -> sync queue */
	struct bfq_queue *async_q;
	struct policy_list active;        /* busy queues */
	struct bfq_queue *in_service;
	uint64_t vtime, wsum;
	uint64_t seq;
	unsigned busy_queues, wr_busy_queues;
	uint64_t idle_until;              /* idle slice timer, 0 = none */
	uint64_t last_budget_start, last_idling_start;
	uint64_t last_position;           /* end of the last dispatched command, bytes */
	uint64_t last_completion, last_dispatch;
	/* peak rate estimation */
	uint64_t peak_rate;               /* (sectors/us) << RATE_SHIFT */
	uint64_t rate_samples, sequential_samples, tot_sectors, last_rq_max_size;
	uint64_t first_dispatch, delta_from_first;
	uint64_t max_budget;              /* bfq_max_budget, sectors */
	uint64_t budgets_assigned;
	uint64_t rate_dur_prod;
	/* large bursts of queue creations */
	uint64_t last_ins_in_burst;
	unsigned burst_size;
	bool large_burst;
};

struct bfq {
	struct bfq_opts o;
	struct policy_env *env;
	unsigned ndev;
	struct bfq_dev *dev;
	struct policy_list free_queues;
	/* counters */
	uint64_t slices, expirations[EXP_NREASONS], idle_waits, idle_hits, time_charged;
	uint64_t wr_interactive, wr_softrt, preemptions, expedited;
};

static const struct policy_opt bfq_opts[] = {
	{ .name = "fifo_expire_sync", .type = POLICY_OPT_TIME,
	  .off = offsetof(struct bfq_opts, fifo_expire_sync), .def = "124ms",
	  .min = 1, .max = 3600 * POLICY_NS_PER_S,
	  .help = "age after which a sync request is served out of sector order (bfq-iosched.rst: 124 ms)" },
	{ .name = "fifo_expire_async", .type = POLICY_OPT_TIME,
	  .off = offsetof(struct bfq_opts, fifo_expire_async), .def = "248ms",
	  .min = 1, .max = 3600 * POLICY_NS_PER_S,
	  .help = "the same for async requests (bfq-iosched.rst: 248 ms)" },
	{ .name = "back_seek_max", .type = POLICY_OPT_SIZE,
	  .off = offsetof(struct bfq_opts, back_seek_max), .def = "16MiB", .min = 0, .max = 1ull << 40,
	  .help = "longest backward seek taken as the next request (bfq_back_max, 16*1024 KiB)" },
	{ .name = "back_seek_penalty", .type = POLICY_OPT_UINT,
	  .off = offsetof(struct bfq_opts, back_seek_penalty), .def = "2", .min = 1, .max = 1u << 20,
	  .help = "cost of a backward seek relative to a forward one (bfq-iosched.rst: 2)" },
	{ .name = "slice_idle", .type = POLICY_OPT_TIME,
	  .off = offsetof(struct bfq_opts, slice_idle), .def = "8ms", .min = 0, .max = 10 * POLICY_NS_PER_S,
	  .help = "idle wait for the next request of a drained sync queue (bfq_slice_idle, NSEC_PER_SEC/125; 0 = never)" },
	{ .name = "timeout_sync", .type = POLICY_OPT_TIME,
	  .off = offsetof(struct bfq_opts, timeout_sync), .def = "125ms", .min = 1 * MS,
	  .max = 60 * POLICY_NS_PER_S,
	  .help = "budget timeout: longest service of a queue once selected (bfq_timeout, HZ/8)" },
	{ .name = "max_budget", .type = POLICY_OPT_SIZE,
	  .off = offsetof(struct bfq_opts, max_budget), .def = "0", .min = 0, .max = 1ull << 40,
	  .help = "largest budget (bfq-iosched.rst: 0 = auto-tuned to timeout_sync at the estimated peak rate)" },
	{ .name = "strict_guarantees", .type = POLICY_OPT_BOOL,
	  .off = offsetof(struct bfq_opts, strict_guarantees), .def = "0",
	  .help = "always idle for a drained queue, one command at a time (bfq-iosched.rst: unset)" },
	{ .name = "low_latency", .type = POLICY_OPT_BOOL,
	  .off = offsetof(struct bfq_opts, low_latency), .def = "1",
	  .help = "weight raising for interactive and soft real-time queues (bfq-iosched.rst: enabled)" },
	{ .name = "ioprio", .type = POLICY_OPT_UINT, .off = offsetof(struct bfq_opts, ioprio),
	  .def = "4", .min = 0, .max = 7,
	  .help = "best-effort I/O priority of every stream; weight = (8 - ioprio) * 10 (bfq-iosched.rst)" },
	{ .name = "ioprio_stream", .type = POLICY_OPT_UINT,
	  .off = offsetof(struct bfq_opts, ioprio_stream), .def = "4294967295", .min = 0,
	  .max = UINT32_MAX, .help = "one stream whose priority is stream_ioprio (4294967295 = none)" },
	{ .name = "stream_ioprio", .type = POLICY_OPT_UINT,
	  .off = offsetof(struct bfq_opts, stream_ioprio), .def = "4", .min = 0, .max = 7,
	  .help = "I/O priority of ioprio_stream (an ionice'd process)" },
	{ .name = "max_merge", .type = POLICY_OPT_SIZE, .off = offsetof(struct bfq_opts, max_merge),
	  .def = "512KiB", .min = 0, .max = 1ull << 30,
	  .help = "largest command built by merging contiguous requests (0 = no merging)" },
	{ .name = NULL },
};

static int bfq_init(struct policy *pol)
{
	struct policy_env *env = pol->env;
	struct bfq *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->o = *(struct bfq_opts *)pol->opts;
	b->env = env;
	b->ndev = env->ndev;
	b->dev = calloc(b->ndev ? b->ndev : 1, sizeof(*b->dev));
	if (!b->dev) {
		free(b);
		return -ENOMEM;
	}
	pol_list_init(&b->free_queues);
	for (unsigned d = 0; d < b->ndev; d++) {
		struct bfq_dev *bd = &b->dev[d];
		/* Non-rotational only when known to be (blk_queue_nonrot): a
		 * device of no particular kind (RAID, network) is rotational, as
		 * a Linux queue is unless its driver says otherwise. */
		enum iosig_class cls = env->dev[d].cls;
		bool nonrot = cls == IOSIG_CLASS_SSD || cls == IOSIG_CLASS_NVM || cls == IOSIG_CLASS_RAM;

		bd->idx = d;
		bd->rot = !nonrot;
		bd->hw_tag = env->dev[d].queue_depth > 3;   /* BFQ_HW_QUEUE_THRESHOLD */
		pol_map_init(&bd->sync);
		pol_list_init(&bd->active);
		/* bfq_init_queue: peak rate 2/3 of the reference one */
		bd->peak_rate = ref_rate[nonrot] * 2 / 3;
		bd->rate_dur_prod = ref_rate[nonrot] * ref_wr_duration_ms[nonrot];
		bd->max_budget = b->o.max_budget ? b->o.max_budget / SECT : DEFAULT_MAX_BUDGET;
	}
	pol->priv = b;
	return 0;
}

/* ---- small helpers ---- */

static uint64_t sectors(uint64_t bytes)
{
	return (bytes + SECT - 1) / SECT;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* bfq_max_budget() / bfq_min_budget(), sectors. */
static uint64_t max_budget(const struct bfq *b, const struct bfq_dev *bd)
{
	if (b->o.max_budget)
		return b->o.max_budget / SECT;
	return bd->budgets_assigned < STATS_MIN_BUDGETS ? DEFAULT_MAX_BUDGET : bd->max_budget;
}

static uint64_t min_budget(const struct bfq *b, const struct bfq_dev *bd)
{
	return max_budget(b, bd) / 32;
}

/* bfq_wr_duration(), ns. */
static uint64_t wr_duration(const struct bfq_dev *bd)
{
	uint64_t ms = bd->rate_dur_prod / (bd->peak_rate ? bd->peak_rate : 1);

	return (ms < 3000 ? 3000 : ms > 25000 ? 25000 : ms) * MS;
}

static bool seeky(const struct bfq_queue *q)
{
	return __builtin_popcount(q->seek_history) > 19;
}

static bool totally_seeky(const struct bfq_queue *q)
{
	return q->seek_history == UINT32_MAX;
}

/* BFQ_RQ_SEEKY: far from the last position (and small, on flash). */
static bool rq_seeky(const struct bfq_dev *bd, uint64_t last_pos, const struct policy_req *rq)
{
	uint64_t d = last_pos > rq->offset ? last_pos - rq->offset : rq->offset - last_pos;

	return last_pos && d / SECT > SEEK_THR && (bd->rot || sectors(rq->len) < SECT_THR_NONROT);
}

/* Sum of the lengths of rq's chain, in sectors. */
static uint64_t chain_sectors(const struct policy_req *rq)
{
	return sectors(pol_chain_len(rq));
}

/* bfq_serv_to_charge(): async requests cost three times their sectors
 * (unless weight raised or weights differ). */
static bool asymmetric(const struct bfq_dev *bd, const struct bfq_queue *q);

static uint64_t serv_to_charge(const struct bfq_queue *q, uint64_t sect)
{
	if (q->sync || q->wr_coeff > 1 || asymmetric(q->bd, q))
		return sect;
	return sect * ASYNC_CHARGE;
}

static uint64_t budget_left(const struct bfq_queue *q)
{
	return q->budget > q->service ? q->budget - q->service : 0;
}

/* bfq_asymmetric_scenario(): busy, non-raised queues of different weights
 * (one class, no groups here).  bfqq with the smallest weight is fine. */
static bool asymmetric(const struct bfq_dev *bd, const struct bfq_queue *q)
{
	unsigned lo = UINT32_MAX, hi = 0;

	for (struct policy_list *p = bd->active.next; p != &bd->active; p = p->next) {
		const struct bfq_queue *a = pol_container_of(p, struct bfq_queue, active);

		if (a->wr_coeff > 1)
			continue;
		if (a->orig_weight < lo)
			lo = a->orig_weight;
		if (a->orig_weight > hi)
			hi = a->orig_weight;
	}
	if (lo >= hi)
		return false;
	return !(q && q->wr_coeff == 1 && q->orig_weight == lo);
}

static unsigned ioprio_weight(const struct bfq *b, uint32_t stream)
{
	uint64_t prio = stream == b->o.ioprio_stream ? b->o.stream_ioprio : b->o.ioprio;

	return (unsigned)(8 - prio) * 10;   /* weight = (IOPRIO_BE_NR - ioprio) * 10 */
}

/* ---- B-WF2Q+ ---- */

static uint64_t vdelta(uint64_t service, unsigned weight)
{
	return (service << WFQ_SHIFT) / (weight ? weight : 1);
}

/* The queue's weight changed (raising began or ended): keep wsum right. */
static void set_weight(struct bfq_queue *q)
{
	unsigned w = q->orig_weight * q->wr_coeff;

	if (q->busy)
		q->bd->wsum = q->bd->wsum - q->weight + w;
	q->weight = w;
}

/* __bfq_activate_entity: S from V (or its old F if still ahead, or back
 * shifted for a queue recovering a service hole), F = S + budget / w. */
static void activate(struct bfq_queue *q)
{
	struct bfq_dev *bd = q->bd;
	bool backshifted = q->non_blocking_wait_rq && bd->vtime > q->finish;
	uint64_t min_vstart = backshifted ? q->finish : bd->vtime;

	/* A queue whose F is still ahead of V was on the idle tree: its new
	 * slot starts at F. */
	q->start = q->finish > bd->vtime ? max_u64(min_vstart, q->finish) : min_vstart;
	q->finish = q->start + vdelta(q->budget, q->weight);
	if (backshifted && bd->vtime > q->finish) {
		uint64_t d = bd->vtime - q->finish;

		q->start += d;
		q->finish += d;
	}
	q->non_blocking_wait_rq = false;
	q->seq = ++bd->seq;
	q->busy = true;
	pol_list_add_tail(&bd->active, &q->active);
	bd->wsum += q->weight;
	bd->busy_queues++;
	if (q->wr_coeff > 1)
		bd->wr_busy_queues++;
}

/* bfq_del_bfqq_busy: F charged with the service received; the queue keeps
 * its timestamps for a later activation. */
static void deactivate(struct bfq_queue *q)
{
	struct bfq_dev *bd = q->bd;

	q->finish = q->start + vdelta(q->service, q->weight);
	q->busy = false;
	pol_list_del(&q->active);
	bd->wsum -= q->weight;
	bd->busy_queues--;
	if (q->wr_coeff > 1)
		bd->wr_busy_queues--;
}

/* __bfq_requeue_entity for the in-service queue: its next slot starts
 * where the service it received ends. */
static void requeue(struct bfq_queue *q)
{
	q->finish = q->start + vdelta(q->service, q->weight);
	q->start = q->finish;
	q->finish = q->start + vdelta(q->budget, q->weight);
	q->seq = ++q->bd->seq;
}

/* bfq_bfqq_served: the queue received `served` sectors. */
static void served(struct bfq_queue *q, uint64_t served_sect)
{
	struct bfq_dev *bd = q->bd;

	q->service += served_sect;
	q->service_from_backlogged += served_sect;
	if (q->wr_coeff > 1)
		q->service_from_wr += served_sect;
	if (bd->wsum)
		bd->vtime += vdelta(served_sect, (unsigned)min_u64(bd->wsum, UINT32_MAX));
}

/* The eligible busy queue (S <= V) with the smallest F; V jumps to the
 * smallest S when none is eligible. */
static struct bfq_queue *next_queue(struct bfq_dev *bd)
{
	struct bfq_queue *best = NULL;
	uint64_t min_start = UINT64_MAX;

	for (struct policy_list *p = bd->active.next; p != &bd->active; p = p->next) {
		struct bfq_queue *q = pol_container_of(p, struct bfq_queue, active);

		if (q->start < min_start)
			min_start = q->start;
	}
	if (min_start == UINT64_MAX)
		return NULL;
	if (min_start > bd->vtime)
		bd->vtime = min_start;
	for (struct policy_list *p = bd->active.next; p != &bd->active; p = p->next) {
		struct bfq_queue *q = pol_container_of(p, struct bfq_queue, active);

		if (q->start <= bd->vtime &&
		    (!best || q->finish < best->finish ||
		     (q->finish == best->finish && q->seq < best->seq)))
			best = q;
	}
	return best;
}

/* ---- peak rate and the maximum budget ---- */

static void reset_rate(struct bfq_dev *bd, const struct policy_req *rq, uint64_t now)
{
	if (rq) {
		bd->last_dispatch = bd->first_dispatch = now;
		bd->rate_samples = 1;
		bd->sequential_samples = 0;
		bd->tot_sectors = bd->last_rq_max_size = chain_sectors(rq);
	} else {
		bd->rate_samples = 0;
	}
}

/* bfq_update_rate_reset: a new peak rate from the observation interval
 * (enough samples, at least 300 ms, mostly sequential or faster), low-pass
 * filtered; the auto-tuned maximum budget follows it. */
static void update_rate_reset(struct bfq *b, struct bfq_dev *bd, const struct policy_req *rq,
			      uint64_t now)
{
	uint64_t rate, weight, divisor, us;

	if (bd->rate_samples < RATE_MIN_SAMPLES || bd->delta_from_first < RATE_MIN_INTERVAL)
		goto reset;
	if (bd->last_completion > bd->first_dispatch)
		bd->delta_from_first = max_u64(bd->delta_from_first,
					       bd->last_completion - bd->first_dispatch);
	us = bd->delta_from_first / 1000;
	rate = us ? (bd->tot_sectors << RATE_SHIFT) / us : 0;
	if ((bd->sequential_samples < (3 * bd->rate_samples) >> 2 && rate <= bd->peak_rate) ||
	    rate > (20ull << RATE_SHIFT))
		goto reset;
	weight = 9 * bd->sequential_samples / bd->rate_samples;
	weight = min_u64(8, weight * bd->delta_from_first / RATE_REF_INTERVAL);
	divisor = 10 - weight;
	bd->peak_rate = bd->peak_rate * (divisor - 1) / divisor + rate / divisor;
	if (!bd->peak_rate)
		bd->peak_rate = 1;
	if (!b->o.max_budget)   /* bfq_calc_max_budget */
		bd->max_budget = bd->peak_rate * 1000 * (b->o.timeout_sync / MS) >> RATE_SHIFT;
reset:
	reset_rate(bd, rq, now);
}

/* bfq_update_peak_rate, on every dispatch. */
static void update_peak_rate(struct bfq *b, struct bfq_dev *bd, const struct policy_req *rq,
			     uint64_t now)
{
	uint64_t sect = chain_sectors(rq);

	if (bd->rate_samples == 0) {
		reset_rate(bd, rq, now);
		goto last;
	}
	if (now - bd->last_dispatch > 100 * MS && !b->env->inflight(b->env, bd->idx)) {
		update_rate_reset(b, bd, rq, now);
		goto last;
	}
	bd->rate_samples++;
	if ((b->env->inflight(b->env, bd->idx) > 0 || now - bd->last_completion < MIN_TT) &&
	    !rq_seeky(bd, bd->last_position, rq))
		bd->sequential_samples++;
	bd->tot_sectors += sect;
	bd->last_rq_max_size = bd->rate_samples % 32 ? max_u64(sect, bd->last_rq_max_size) : sect;
	bd->delta_from_first = now - bd->first_dispatch;
	if (bd->delta_from_first >= RATE_REF_INTERVAL)
		update_rate_reset(b, bd, rq, now);
last:
	bd->last_position = rq->offset + pol_chain_len(rq);
	bd->last_dispatch = now;
}

/* ---- queues ---- */

static struct bfq_queue *queue_new(struct bfq *b, struct bfq_dev *bd, uint32_t stream, bool sync,
				   uint64_t now)
{
	struct bfq_queue *q;

	if (!pol_list_empty(&b->free_queues)) {
		q = pol_container_of(b->free_queues.next, struct bfq_queue, free_link);
		pol_list_del(&q->free_link);
	} else {
		q = malloc(sizeof(*q));
		if (!q)
			return NULL;
	}
	/* bfq_init_bfqq */
	*q = (struct bfq_queue){ .bd = bd, .stream = stream, .sync = sync };
	pol_list_init(&q->fifo);
	pol_list_init(&q->active);
	pol_list_init(&q->free_link);
	q->orig_weight = q->weight = ioprio_weight(b, sync ? stream : NO_STREAM);
	q->short_ttime = sync;           /* tentatively */
	q->just_created = sync;
	q->io_bound = true;
	q->max_budget = 2 * max_budget(b, bd) / 3;
	q->wr_coeff = 1;
	q->last_wr_start_finish = now;
	q->soft_rt_next_start = now;
	q->seek_history = 1;             /* the first request is almost certainly seeky */
	q->ttime_last_end = now + 1;
	q->budget_timeout = 0;
	q->idle_since = NEVER;           /* "smallest from now": idle for long */
	q->wr_start_at_switch_to_srt = 0;
	return q;
}

/* Recycles a queue that holds nothing and is not scheduled. */
static void queue_put(struct bfq *b, struct bfq_queue *q)
{
	struct bfq_dev *bd = q->bd;

	if (q->nreq || q->dispatched || q->busy || q == bd->in_service)
		return;
	/* An expired queue keeps its state (timestamps, weight raising,
	 * think time) while it may come back; drop it only once its F is
	 * behind V and it is not being raised. */
	if (q->finish > bd->vtime || q->wr_coeff > 1 || q->in_burst_list)
		return;
	if (q->sync)
		pol_map_del(&bd->sync, q->stream);
	else
		bd->async_q = NULL;
	pol_list_add_tail(&b->free_queues, &q->free_link);
}

/* bfq_handle_burst: many queues created close together are a large burst
 * (services, parallel jobs): none of them is weight raised. */
static void handle_burst(struct bfq_dev *bd, struct bfq_queue *q, uint64_t now)
{
	if (q->in_burst_list || q->in_large_burst)
		return;
	if (now > bd->last_ins_in_burst + BURST_INTERVAL) {
		/* bfq_reset_burst_list: a new burst may begin with q */
		for (size_t i = 0; i < bd->sync.cap; i++) {
			struct bfq_queue *o = bd->sync.vals[i];

			if (o)
				o->in_burst_list = false;
		}
		bd->large_burst = false;
		bd->burst_size = bd->busy_queues == 0 ? 1 : 0;
		q->in_burst_list = bd->burst_size == 1;
	} else if (bd->large_burst) {
		q->in_large_burst = true;
	} else if (++bd->burst_size >= LARGE_BURST_THRESH) {
		bd->large_burst = true;
		q->in_large_burst = true;
		/* The queues of the burst so far become part of it too. */
		for (size_t i = 0; i < bd->sync.cap; i++) {
			struct bfq_queue *o = bd->sync.vals[i];

			if (o && o->in_burst_list) {
				o->in_burst_list = false;
				o->in_large_burst = true;
			}
		}
	} else {
		q->in_burst_list = true;
	}
	bd->last_ins_in_burst = now;
}

static void end_wr(struct bfq_queue *q, uint64_t now)
{
	if (q->busy && q->wr_coeff > 1)
		q->bd->wr_busy_queues--;
	q->wr_coeff = 1;
	q->wr_cur_max_time = 0;
	q->last_wr_start_finish = now;
	set_weight(q);
}

static void start_wr(struct bfq_queue *q, unsigned coeff)
{
	if (q->busy && q->wr_coeff == 1)
		q->bd->wr_busy_queues++;
	q->wr_coeff = coeff;
	set_weight(q);
}

/* ---- expiration ---- */

/* Whether idling for q, drained, is worth it (bfq_better_to_idle). */
static bool idling_boosts_thr(struct bfq *b, const struct bfq_queue *q)
{
	const struct bfq_dev *bd = q->bd;
	bool rot_without_queueing = bd->rot && !bd->hw_tag;
	bool seq_io_bound = !seeky(q) && q->io_bound && q->short_ttime;

	return (rot_without_queueing || ((bd->rot || !bd->hw_tag) && seq_io_bound)) &&
	       bd->wr_busy_queues == 0;
}

static bool idling_for_guarantees(struct bfq *b, const struct bfq_queue *q)
{
	const struct bfq_dev *bd = q->bd;

	return (q->wr_coeff > 1 &&
		(bd->wr_busy_queues < bd->busy_queues ||
		 b->env->inflight(b->env, bd->idx) >= q->dispatched + 4)) ||
	       asymmetric(bd, q);
}

static bool better_to_idle(struct bfq *b, const struct bfq_queue *q)
{
	if (b->o.strict_guarantees)
		return true;
	if (!b->o.slice_idle || !q->sync)
		return false;
	return idling_boosts_thr(b, q) || idling_for_guarantees(b, q);
}

static bool must_idle(struct bfq *b, const struct bfq_queue *q)
{
	return !q->nreq && better_to_idle(b, q);
}

static bool budget_timed_out(const struct bfq_queue *q, uint64_t now)
{
	return now >= q->budget_timeout;
}

static bool may_expire_for_budg_timeout(const struct bfq_queue *q, uint64_t now)
{
	return (!q->wait_request || budget_left(q) >= q->budget / 3) &&
	       budget_timed_out(q, now);
}

/* bfq_bfqq_is_slow: seeky, or served under half the maximum budget in a
 * slot longer than 20 ms. */
static bool is_slow(struct bfq *b, struct bfq_queue *q, bool compensate, uint64_t now,
		    uint64_t *ret_delta_ms)
{
	struct bfq_dev *bd = q->bd;
	uint64_t end = compensate ? bd->last_idling_start : now;
	uint64_t delta = end > bd->last_budget_start ? end - bd->last_budget_start : 0;
	bool slow = seeky(q);

	if (!q->sync)
		return false;
	if (delta < 1 * MS) {
		*ret_delta_ms = bd->rot ? b->o.slice_idle / MS : MIN_TT / MS;
		return slow;
	}
	*ret_delta_ms = delta / MS;
	if (delta > 20 * MS)
		slow = q->service < max_budget(b, bd) / 2;
	return slow;
}

/* bfq_bfqq_charge_time: a slow queue pays for the time it held the device. */
static void charge_time(struct bfq *b, struct bfq_queue *q, uint64_t time_ms)
{
	uint64_t timeout_ms = b->o.timeout_sync / MS ? b->o.timeout_sync / MS : 1;
	uint64_t bounded = min_u64(time_ms, timeout_ms);
	uint64_t for_time = max_budget(b, q->bd) * bounded / timeout_ms;
	uint64_t tot = max_u64(for_time, q->service);

	if (tot > q->budget)
		q->budget = tot;
	if (tot > q->service) {
		served(q, tot - q->service);
		b->time_charged++;
	}
}

/* __bfq_bfqq_recalc_budget: the next budget of a sync queue from why it
 * expired; async queues always get the maximum. */
static void recalc_budget(struct bfq *b, struct bfq_queue *q, enum bfq_expiration reason)
{
	struct bfq_dev *bd = q->bd;
	uint64_t minb = min_budget(b, bd), maxb = max_budget(b, bd);
	uint64_t budget = q->wr_coeff == 1 ? q->max_budget : 2 * minb;

	if (q->sync && q->wr_coeff == 1) {
		switch (reason) {
		case EXP_TOO_IDLE:
			if (q->dispatched > 0)
				budget = min_u64(budget * 2, maxb);
			else
				budget = budget > 5 * minb ? budget - 4 * minb : minb;
			break;
		case EXP_BUDGET_TIMEOUT:
			budget = min_u64(budget * 2, maxb);
			break;
		case EXP_BUDGET_EXHAUSTED:
			budget = min_u64(budget * 4, maxb);
			break;
		case EXP_NO_MORE_REQUESTS:
			budget = max_u64(q->service, minb);
			break;
		default:
			return;
		}
	} else if (!q->sync) {
		budget = maxb;
	}
	q->max_budget = budget;
	if (bd->budgets_assigned >= STATS_MIN_BUDGETS && !b->o.max_budget)
		q->max_budget = min_u64(q->max_budget, maxb);
	if (q->next_rq)
		q->budget = max_u64(q->max_budget, serv_to_charge(q, sectors(q->next_rq->len)));
}

/* bfq_bfqq_softrt_next_start: when the queue's next request may arrive
 * for it to be soft real-time (under 7000 sectors/s, not greedy). */
static uint64_t softrt_next_start(struct bfq *b, const struct bfq_queue *q, uint64_t now)
{
	uint64_t by_rate = q->last_idle_bklogged +
			   q->service_from_backlogged * POLICY_NS_PER_S / WR_MAX_SOFTRT_RATE;

	/* "+ 4" jiffies in the kernel: 4 ms at HZ=1000 */
	return max_u64(q->soft_rt_next_start, max_u64(by_rate, now + b->o.slice_idle + 4 * MS));
}

/* bfq_bfqq_expire. */
static void expire(struct bfq *b, struct bfq_queue *q, bool compensate, enum bfq_expiration reason,
		   uint64_t now)
{
	struct bfq_dev *bd = q->bd;
	uint64_t delta_ms = 0;
	bool slow = is_slow(b, q, compensate, now, &delta_ms);

	b->expirations[reason]++;
	if (q->wr_coeff == 1 &&
	    (slow || (reason == EXP_BUDGET_TIMEOUT && budget_left(q) >= q->budget / 3)))
		charge_time(b, q, delta_ms);
	if (reason == EXP_TOO_IDLE && q->service <= 2 * q->budget / 10)
		q->io_bound = false;
	if (b->o.low_latency && q->wr_coeff == 1)
		q->last_wr_start_finish = now;
	if (b->o.low_latency && !q->nreq) {
		if (!q->dispatched && q->wr_coeff != WR_COEFF)
			q->soft_rt_next_start = softrt_next_start(b, q, now);
		else if (q->dispatched)
			q->softrt_update = true;
	}
	recalc_budget(b, q, reason);
	/* __bfq_bfqq_expire */
	if (!q->nreq && !(reason == EXP_PREEMPTED && idling_for_guarantees(b, q))) {
		if (!q->dispatched)
			q->idle_since = now;
		deactivate(q);
	} else {
		requeue(q);
	}
	bd->in_service = NULL;
	bd->idle_until = 0;
	q->wait_request = false;
	if (!q->busy && reason != EXP_BUDGET_TIMEOUT && reason != EXP_BUDGET_EXHAUSTED)
		q->non_blocking_wait_rq = true;   /* service kept: it may come back in time */
	else
		q->service = 0;
	queue_put(b, q);
}

/* ---- selection and dispatch ---- */

static void set_budget_timeout(struct bfq *b, struct bfq_queue *q, uint64_t now)
{
	unsigned coeff = q->wr_cur_max_time == WR_RT_MAX_TIME ? 1 : q->weight / q->orig_weight;

	q->bd->last_budget_start = now;
	q->budget_timeout = now + b->o.timeout_sync * coeff;
}

static struct bfq_queue *set_in_service(struct bfq *b, struct bfq_dev *bd, uint64_t now)
{
	struct bfq_queue *q = next_queue(bd);

	if (!q)
		return NULL;
	q->fifo_checked = false;
	bd->budgets_assigned = (bd->budgets_assigned * 7 + 256) / 8;
	if (q->wr_coeff > 1 && q->wr_cur_max_time == WR_RT_MAX_TIME &&
	    q->last_wr_start_finish < now && q->idle_since != NEVER && q->idle_since < now) {
		/* Soft real-time: the raising period does not run while unserved. */
		if (q->idle_since > q->last_wr_start_finish)
			q->last_wr_start_finish += now - q->idle_since;
		else
			q->last_wr_start_finish = now;
	}
	set_budget_timeout(b, q, now);
	bd->in_service = q;
	b->slices++;
	return q;
}

/* The idle slice timer (bfq_arm_slice_timer). */
static void arm_slice_timer(struct bfq *b, struct bfq_queue *q, uint64_t now)
{
	struct bfq_dev *bd = q->bd;
	uint64_t sl = b->o.slice_idle;

	q->wait_request = true;
	if (seeky(q) && q->wr_coeff == 1 && !asymmetric(bd, q))
		sl = min_u64(sl, MIN_TT);
	else if (q->wr_coeff > 1)
		sl = max_u64(sl, 20 * MS);
	bd->last_idling_start = now;
	bd->idle_until = now + (sl ? sl : 1);
	b->idle_waits++;
	b->env->wake_at(b->env, bd->idle_until);
}

/* bfq_select_queue (without injecting other queues' I/O while idling). */
static struct bfq_queue *select_queue(struct bfq *b, struct bfq_dev *bd, uint64_t now)
{
	struct bfq_queue *q = bd->in_service;
	enum bfq_expiration reason = EXP_BUDGET_TIMEOUT;

	if (!q)
		goto new_queue;
	if (may_expire_for_budg_timeout(q, now) && !must_idle(b, q))
		goto expire;
check_queue:
	if (q->next_rq) {
		if (serv_to_charge(q, sectors(q->next_rq->len)) > budget_left(q)) {
			reason = EXP_BUDGET_EXHAUSTED;
			goto expire;
		}
		if (q->wait_request) {
			q->wait_request = false;
			bd->idle_until = 0;
		}
		return q;
	}
	if (q->wait_request || (q->dispatched && better_to_idle(b, q)))
		return NULL;   /* keep it: the device idles for it */
	reason = EXP_NO_MORE_REQUESTS;
expire:
	expire(b, q, false, reason, now);
new_queue:
	q = set_in_service(b, bd, now);
	if (q)
		goto check_queue;
	return NULL;
}

/* bfq_choose_req: of two requests, the one to serve after position last
 * (forward first, short backward seeks at a penalty). */
static struct policy_req *choose_req(struct bfq *b, struct policy_req *r1, struct policy_req *r2,
				     uint64_t last)
{
	uint64_t s1, s2, d1 = 0, d2 = 0, back_max = b->o.back_seek_max;
	bool w1 = false, w2 = false;

	if (!r1 || r1 == r2)
		return r2;
	if (!r2)
		return r1;
	s1 = r1->offset;
	s2 = r2->offset;
	if (s1 >= last)
		d1 = s1 - last;
	else if (s1 + back_max >= last)
		d1 = (last - s1) * b->o.back_seek_penalty;
	else
		w1 = true;
	if (s2 >= last)
		d2 = s2 - last;
	else if (s2 + back_max >= last)
		d2 = (last - s2) * b->o.back_seek_penalty;
	else
		w2 = true;
	if (!w1 && !w2) {
		if (d1 != d2)
			return d1 < d2 ? r1 : r2;
		return s1 >= s2 ? r1 : r2;
	}
	if (w1 != w2)
		return w1 ? r2 : r1;
	return s1 <= s2 ? r1 : r2;   /* both behind: the one further back first */
}

/* bfq_find_next_rq: after serving `last` (still in the tree), the next
 * request: an expired FIFO head once per budget, else the neighbour
 * chosen by choose_req. */
static struct policy_req *find_next_rq(struct bfq *b, struct bfq_queue *q, struct policy_req *last,
				       uint64_t now)
{
	struct policy_req *next, *prev, *head;

	if (!q->fifo_checked) {
		q->fifo_checked = true;
		head = pol_container_of(q->fifo.next, struct policy_req, link);
		if (head != last && head->pdata[0] <= now)
			return head;
	}
	prev = pol_req_of_tnode(pol_tree_prev(q->sorted, &last->tnode));
	next = pol_req_of_tnode(pol_tree_next(q->sorted, &last->tnode));
	if (!next) {
		next = pol_req_of_tnode(pol_tree_first(q->sorted));
		if (next == last)
			next = NULL;
	}
	return choose_req(b, next, prev, last->offset);
}

static void take(struct bfq_queue *q, struct policy_req *r)
{
	pol_tree_remove(&q->sorted, &r->tnode);
	pol_list_del(&r->link);
	q->nreq--;
}

/* bfq_update_wr_data: raising ends after its time or service. */
static void update_wr_data(struct bfq *b, struct bfq_queue *q, uint64_t now)
{
	if (q->wr_coeff == 1)
		return;
	if (q->in_large_burst) {
		end_wr(q, now);
	} else if (now > q->last_wr_start_finish + q->wr_cur_max_time) {
		if (q->wr_cur_max_time != WR_RT_MAX_TIME ||
		    now > q->wr_start_at_switch_to_srt + wr_duration(q->bd)) {
			end_wr(q, now);
		} else {
			/* back from soft real-time to the interactive period */
			q->wr_cur_max_time = wr_duration(q->bd);
			q->last_wr_start_finish = q->wr_start_at_switch_to_srt;
			start_wr(q, WR_COEFF);
		}
	}
	if (q->wr_coeff > 1 && q->wr_cur_max_time != WR_RT_MAX_TIME &&
	    q->service_from_wr > MAX_SERVICE_FROM_WR)
		end_wr(q, now);
}

static void bfq_dispatch(struct policy *pol)
{
	struct bfq *b = pol->priv;
	struct policy_env *env = b->env;
	uint64_t now = env->now(env);

	for (unsigned d = 0; d < b->ndev; d++) {
		struct bfq_dev *bd = &b->dev[d];

		while (pol_dev_room(env, d)) {
			struct bfq_queue *q;
			struct policy_req *rq, *next, *after;
			uint64_t total = 0, limit;

			if (b->o.strict_guarantees && env->inflight(env, d) > 0)
				break;
			q = select_queue(b, bd, now);
			if (!q)
				break;
			rq = q->next_rq;
			after = find_next_rq(b, q, rq, now);
			/* Merge contiguous requests within what the budget has left
			 * (blk-mq merges bios before BFQ sees them). */
			limit = budget_left(q) * SECT / serv_to_charge(q, 1);
			if (limit > b->o.max_merge)
				limit = b->o.max_merge;
			if (limit < rq->len)
				limit = rq->len;
			rq = pol_tree_chain(q->sorted, rq, limit, &next);
			for (struct policy_req *m = rq; m; m = m->merge_next) {
				if (after == m)
					after = NULL;
				take(q, m);
				total += m->len;
				m->pdata[1] = m != rq;   /* chain members pass through complete() */
			}
			/* The next request: what find_next_rq chose unless it went
			 * in this command, then the one after the command. */
			q->next_rq = after ? after : next;
			if (!q->next_rq && q->nreq)
				q->next_rq = pol_req_of_tnode(pol_tree_lower_bound(q->sorted,
									  rq->offset, 0));
			if (!q->next_rq && q->nreq)
				q->next_rq = pol_req_of_tnode(pol_tree_first(q->sorted));
			served(q, serv_to_charge(q, sectors(total)));
			q->dispatched++;
			update_peak_rate(b, bd, rq, now);
			update_wr_data(b, q, now);
			if (pol_issue(env, rq, d, rq->offset) < 0)
				q->dispatched--;
		}
	}
}

/* ---- arrivals ---- */

/* bfq_bfqq_handle_idle_busy_switch: a queue gets a request while not
 * busy: weight raising, budget (or the rest of the last one, for a queue
 * that comes back in time), and possibly preemption of the in-service
 * queue. */
static bool idle_busy_switch(struct bfq *b, struct bfq_queue *q, uint64_t now)
{
	struct bfq_dev *bd = q->bd;
	bool idle_for_long = !q->dispatched &&
			     (q->idle_since == NEVER || now > q->idle_since + WR_MIN_IDLE_TIME);
	bool arrived_in_time = now <= q->ttime_last_end + 3 * b->o.slice_idle;
	bool in_burst = q->in_large_burst;
	/* Only queues of the default weight (ioprio 4) are raised: another
	 * weight is taken as the user's explicit choice. */
	bool default_weight = q->orig_weight == DEFAULT_WEIGHT;
	bool soft_rt = !totally_seeky(q) && !in_burst && now > q->soft_rt_next_start &&
		       !q->dispatched && default_weight;
	bool interactive = !in_burst && idle_for_long && default_weight;
	bool wr_deserved = b->o.low_latency &&
			   (q->wr_coeff > 1 || (q->sync && (interactive || soft_rt)));
	bool wants_preempt;
	unsigned old_coeff = q->wr_coeff;

	/* bfq_bfqq_update_budg_for_activation */
	if (q->non_blocking_wait_rq && arrived_in_time && budget_left(q) > 0) {
		q->budget = min_u64(budget_left(q), q->max_budget);
		q->service = 0;
		wants_preempt = true;
	} else {
		q->service = 0;
		q->budget = max_u64(q->max_budget, serv_to_charge(q, sectors(q->next_rq->len)));
		q->non_blocking_wait_rq = false;
		wants_preempt = false;
	}
	if (!q->just_created && idle_for_long &&
	    (q->idle_since == NEVER || now > q->idle_since + 10000 * MS)) {
		q->in_large_burst = false;
		q->in_burst_list = false;
	}
	q->just_created = false;
	if (!q->io_bound) {
		if (arrived_in_time) {
			if (++q->requests_within_timer >= REQUESTS_WITHIN_TIMER)
				q->io_bound = true;
		} else {
			q->requests_within_timer = 0;
		}
	}
	if (b->o.low_latency) {
		/* bfq_update_bfqq_wr_on_rq_arrival */
		if (old_coeff == 1 && wr_deserved) {
			if (interactive) {
				q->service_from_wr = 0;
				q->wr_cur_max_time = wr_duration(bd);
				start_wr(q, WR_COEFF);
				b->wr_interactive++;
			} else {
				q->wr_start_at_switch_to_srt = 0;
				q->wr_cur_max_time = WR_RT_MAX_TIME;
				start_wr(q, WR_COEFF * SOFTRT_FACTOR);
				b->wr_softrt++;
			}
			q->budget = min_u64(q->budget, 2 * min_budget(b, bd));
		} else if (old_coeff > 1) {
			if (interactive) {
				q->wr_cur_max_time = wr_duration(bd);
				start_wr(q, WR_COEFF);
			} else if (in_burst) {
				end_wr(q, now);
			} else if (soft_rt) {
				if (q->wr_cur_max_time != WR_RT_MAX_TIME) {
					q->wr_start_at_switch_to_srt = q->last_wr_start_finish;
					q->wr_cur_max_time = WR_RT_MAX_TIME;
					start_wr(q, WR_COEFF * SOFTRT_FACTOR);
				}
				q->last_wr_start_finish = now;
			}
		}
	}
	q->last_idle_bklogged = now;
	q->service_from_backlogged = 0;
	q->softrt_update = false;
	activate(q);
	/* Preempt the in-service queue if q is now due first and needs it,
	 * or if the in-service queue no longer needs the device plugged. */
	if (bd->in_service && bd->in_service != q &&
	    ((wants_preempt && q->wr_coeff >= bd->in_service->wr_coeff) ||
	     q->weight > bd->in_service->weight || !better_to_idle(b, bd->in_service)) &&
	    q->start <= bd->vtime && q->finish < bd->in_service->finish) {
		b->preemptions++;
		expire(b, bd->in_service, false, EXP_PREEMPTED, now);
	}
	return interactive;
}

/* The sync queue of `stream` or the async queue of bd, made if need be;
 * NULL when out of memory. */
static struct bfq_queue *queue_get(struct bfq *b, struct bfq_dev *bd, uint32_t stream, bool sync,
				   uint64_t now)
{
	struct bfq_queue *q = sync ? pol_map_get(&bd->sync, stream) : bd->async_q;

	if (q)
		return q;
	q = queue_new(b, bd, stream, sync, now);
	if (!q)
		return NULL;
	if (sync ? pol_map_put(&bd->sync, stream, q) < 0 : (bd->async_q = q, 0)) {
		pol_list_add_tail(&b->free_queues, &q->free_link);
		return NULL;
	}
	if (sync && (bd->burst_size > 0 || bd->busy_queues == 0))
		handle_burst(bd, q, now);
	return q;
}

/* bfq_add_request and bfq_rq_enqueued: req arrives in q.  `waited`: a
 * request a process now blocks on (expedite) - the head of q's FIFO with
 * its expiry passed, and q's next request. */
static void add_request(struct bfq *b, struct bfq_queue *q, struct policy_req *req, bool waited,
			uint64_t now)
{
	struct bfq_dev *bd = q->bd;
	bool sync = q->sync;
	struct policy_req *prev_next;
	unsigned old_coeff;
	bool interactive = false;

	if (sync) {
		/* bfq_update_io_thinktime, _has_short_ttime, _io_seektime */
		uint64_t elapsed = now > q->ttime_last_end ? now - q->ttime_last_end : 0;

		elapsed = min_u64(elapsed, 2 * b->o.slice_idle);
		q->ttime_samples = (7 * q->ttime_samples + 256) / 8;
		q->ttime_total = (7 * q->ttime_total + 256 * elapsed) / 8;
		q->ttime_mean = (q->ttime_total + 128) / q->ttime_samples;
		q->short_ttime = !(q->ttime_samples > 80 && q->ttime_mean > b->o.slice_idle);
	}
	q->seek_history = q->seek_history << 1 | rq_seeky(bd, q->last_request_pos, req);
	if (q->wr_coeff > 1 && q->wr_cur_max_time == WR_RT_MAX_TIME && totally_seeky(q))
		end_wr(q, now);
	req->pptr = q;
	req->pdata[1] = 0;
	req->tnode.key = req->offset;
	req->tnode.key2 = req->id;
	pol_tree_insert(&q->sorted, &req->tnode);
	q->nreq++;
	prev_next = q->next_rq;
	q->next_rq = waited ? req : choose_req(b, q->next_rq, req, bd->last_position);
	old_coeff = q->wr_coeff;
	if (!q->busy) {
		interactive = idle_busy_switch(b, q, now);
	} else {
		if (b->o.low_latency && q->wr_coeff == 1 && !sync &&
		    now > q->last_wr_start_finish + WR_MIN_INTER_ARR_ASYNC) {
			q->wr_cur_max_time = wr_duration(bd);
			start_wr(q, WR_COEFF);
		}
		if (prev_next != q->next_rq && q != bd->in_service)
			/* bfq_updated_next_req: the budget fits the new first request */
			q->budget = max_u64(max_u64(q->max_budget, serv_to_charge(q,
					    sectors(q->next_rq->len))), q->service);
	}
	/* Not raised: the time of the last arrival (what async raising looks
	 * at); raising (re)started: when it did. */
	if (b->o.low_latency && (old_coeff == 1 || q->wr_coeff == 1 || interactive))
		q->last_wr_start_finish = now;
	if (waited) {
		req->pdata[0] = now;
		pol_list_add_head(&q->fifo, &req->link);
	} else {
		req->pdata[0] = now + (sync ? b->o.fifo_expire_sync : b->o.fifo_expire_async);
		pol_list_add_tail(&q->fifo, &req->link);
	}
	/* bfq_rq_enqueued */
	q->last_request_pos = req->offset + req->len;
	if (q == bd->in_service && q->wait_request) {
		bool small = q->nreq == 1 && sectors(req->len) < 32;
		bool timed_out = budget_timed_out(q, now);

		b->idle_hits++;
		if (small && idling_boosts_thr(b, q) && !timed_out && !waited)
			return;   /* wait a little more for a larger one */
		q->wait_request = false;
		bd->idle_until = 0;
		if (timed_out)
			expire(b, q, false, EXP_BUDGET_TIMEOUT, now);
	}
}

static int bfq_submit(struct policy *pol, struct policy_req *req)
{
	struct bfq *b = pol->priv;
	uint64_t now = b->env->now(b->env);
	bool sync = req->op == POLICY_OP_READ || (req->flags & POLICY_REQ_SYNC);
	struct bfq_queue *q;

	if (req->dev >= b->ndev || req->op == POLICY_OP_FLUSH)
		return -EINVAL;
	q = queue_get(b, &b->dev[req->dev], req->stream, sync, now);
	if (!q)
		return -ENOMEM;
	add_request(b, q, req, false, now);
	return 0;
}

/* A process now waits for req: what BFQ makes of a request a process
 * blocks on.  It leaves its queue (bfq_remove_request: the queue's next
 * request is found again; an emptied queue that is not in service leaves
 * the scheduler) and arrives in its process's sync queue - created and,
 * like any new sync queue, possibly weight raised - at the head of the
 * FIFO with its expiry passed, as that queue's next request. */
static void bfq_expedite(struct policy *pol, struct policy_req *req)
{
	struct bfq *b = pol->priv;
	uint64_t now = b->env->now(b->env);
	struct bfq_queue *from = req->pptr, *to;
	struct bfq_dev *bd = from->bd;

	to = from->sync ? from : queue_get(b, bd, req->stream, true, now);
	if (!to)
		return;   /* out of memory: it stays where it is */
	if (from->next_rq == req)
		from->next_rq = find_next_rq(b, from, req, now);
	take(from, req);
	if (from != to && !from->nreq) {
		from->next_rq = NULL;
		if (from->busy && from != bd->in_service) {
			if (!from->dispatched)
				from->idle_since = now;
			deactivate(from);
		}
		queue_put(b, from);
	}
	add_request(b, to, req, true, now);
	b->expedited++;
}

/* ---- completions and the idle timer ---- */

static void bfq_complete(struct policy *pol, struct policy_req *req)
{
	struct bfq *b = pol->priv;
	struct policy_env *env = b->env;
	struct bfq_queue *q = req->pptr;
	struct bfq_dev *bd = q->bd;
	uint64_t now = env->now(env), delta_us;

	if (req->pdata[1])
		return;   /* a member of a command: the head accounts for it */
	q->dispatched--;
	if (!q->dispatched && !q->busy)
		q->idle_since = now;
	q->ttime_last_end = now;
	delta_us = (now - bd->last_completion) / 1000;
	if (delta_us > MIN_TT / 1000 &&
	    (bd->last_rq_max_size << RATE_SHIFT) / delta_us < 1ull << (RATE_SHIFT - 10))
		update_rate_reset(b, bd, NULL, now);
	bd->last_completion = now;
	if (q->softrt_update && !q->dispatched && !q->nreq && q->wr_coeff != WR_COEFF)
		q->soft_rt_next_start = softrt_next_start(b, q, now);
	if (bd->in_service == q) {
		if (must_idle(b, q)) {
			if (!q->dispatched)
				arm_slice_timer(b, q, now);
		} else if (may_expire_for_budg_timeout(q, now)) {
			expire(b, q, false, EXP_BUDGET_TIMEOUT, now);
		} else if (!q->nreq && (!q->dispatched || !better_to_idle(b, q))) {
			expire(b, q, false, EXP_NO_MORE_REQUESTS, now);
		}
	} else {
		queue_put(b, q);
	}
}

static void bfq_tick(struct policy *pol)
{
	struct bfq *b = pol->priv;
	struct policy_env *env = b->env;
	uint64_t now = env->now(env);

	for (unsigned d = 0; d < b->ndev; d++) {
		struct bfq_dev *bd = &b->dev[d];
		struct bfq_queue *q = bd->in_service;

		if (!bd->idle_until)
			continue;
		if (now < bd->idle_until) {
			env->wake_at(env, bd->idle_until);   /* re-arm: an earlier tick consumed it */
			continue;
		}
		bd->idle_until = 0;
		if (!q)
			continue;
		q->wait_request = false;
		/* bfq_idle_slice_timer_body */
		if (budget_timed_out(q, now))
			expire(b, q, true, EXP_BUDGET_TIMEOUT, now);
		else if (!q->nreq)
			expire(b, q, true, EXP_TOO_IDLE, now);
	}
}

static void bfq_report(struct policy *pol, policy_report_fn emit, void *ctx)
{
	struct bfq *b = pol->priv;

	emit(ctx, "slices", (double)b->slices);
	emit(ctx, "expired_budget_exhausted", (double)b->expirations[EXP_BUDGET_EXHAUSTED]);
	emit(ctx, "expired_budget_timeout", (double)b->expirations[EXP_BUDGET_TIMEOUT]);
	emit(ctx, "expired_too_idle", (double)b->expirations[EXP_TOO_IDLE]);
	emit(ctx, "expired_no_more_requests", (double)b->expirations[EXP_NO_MORE_REQUESTS]);
	emit(ctx, "preemptions", (double)b->preemptions);
	emit(ctx, "idle_waits", (double)b->idle_waits);
	emit(ctx, "idle_hits", (double)b->idle_hits);
	emit(ctx, "time_charged_expirations", (double)b->time_charged);
	emit(ctx, "weight_raised_interactive", (double)b->wr_interactive);
	emit(ctx, "weight_raised_soft_rt", (double)b->wr_softrt);
	emit(ctx, "expedited", (double)b->expedited);
	if (b->ndev) {
		emit(ctx, "max_budget_bytes", (double)max_budget(b, &b->dev[0]) * SECT);
		emit(ctx, "peak_rate_mib_s", (double)b->dev[0].peak_rate * 1e6 * SECT /
					     (1u << RATE_SHIFT) / (1024.0 * 1024));
	}
}

static void bfq_fini(struct policy *pol)
{
	struct bfq *b = pol->priv;

	if (!b)
		return;
	for (unsigned d = 0; d < b->ndev; d++) {
		struct bfq_dev *bd = &b->dev[d];

		pol_map_free_vals(&bd->sync);
		free(bd->async_q);
	}
	while (!pol_list_empty(&b->free_queues)) {
		struct bfq_queue *q = pol_container_of(b->free_queues.next, struct bfq_queue, free_link);

		pol_list_del(&q->free_link);
		free(q);
	}
	free(b->dev);
	free(b);
	pol->priv = NULL;
}

const struct policy_ops pol_bfq_ops = {
	.version = POLICY_OPS_VERSION,
	.name = "bfq",
	.summary = "budget fair queueing: B-WF2Q+ budgets per process, idling, weight raising (Linux BFQ)",
	.opts = bfq_opts,
	.opts_size = sizeof(struct bfq_opts),
	.init = bfq_init,
	.submit = bfq_submit,
	.dispatch = bfq_dispatch,
	.complete = bfq_complete,
	.tick = bfq_tick,
	.fini = bfq_fini,
	.report = bfq_report,
	.expedite = bfq_expedite,
};
