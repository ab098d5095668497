/* SPDX-License-Identifier: MIT */
/*
 * bid.h - the staging machinery of BID (Mishra & Somani, "Host managed
 * contention avoidance storage solutions for Big Data", J Big Data 2017),
 * shared by bid_hdd.c and bid_hybrid.c.  Private to iosigd/policy.
 *
 * Per home device and process p, requests wait in a staging queue SQ_p.
 * Each SQ_p has a wait timer (weighted mean of the last k inter-arrival
 * gaps of p's requests; a default until gaps are known) and a deadline
 * (5000 ms while it holds only writes, cut to 500 ms when a read joins).
 * When either expires SQ_p is marked; marked queues are flushed to the
 * device whole, one after another in marking order, each in ascending
 * offset order with contiguous requests merged - also across the boundary
 * to the next marked queue when it continues the command, as the paper's
 * LBA-sorted dispatch queue would merge them.  SQ_p exists until its flush
 * begins ("SQ_p is created when ... there is no existing SQ_p"): requests
 * of p arriving while it waits in the marked list join it; once its flush
 * has begun they open a new SQ_p.  A program that waits for a staged
 * request (an fsync behind it: expedite) marks its queue at once - the
 * paper's deadline exists so that a waiting process is not held up, and a
 * process that waits now has no more requests coming to merge.
 */
#ifndef POL_BID_H
#define POL_BID_H

#include "pol_util.h"

#define BID_K_MAX 64

/* Options common to both BID policies (first member of their opts). */
struct bid_core_opts {
	uint64_t wait_k;          /* gaps remembered */
	uint64_t wait_default;    /* ns, before any gap is known */
	uint64_t wait_min, wait_max;
	double wait_mult;         /* wait = wait_mult * weighted mean */
	uint64_t deadline_write, deadline_read;
	bool keep_history;        /* gaps survive the staging queue */
	uint64_t max_merge;
};

/* One staging queue SQ_p. */
struct bid_sq {
	uint32_t stream;
	uint16_t dev;
	bool marked;
	bool flushing;                /* its flush began: no longer takes requests */
	bool tiered;                  /* hybrid: its writes went to the SSD */
	struct policy_tnode *reqs;    /* by (offset, id) */
	unsigned nreq, nwrite;
	uint64_t bytes, write_bytes;
	uint64_t ts_old, ts_new;      /* oldest / newest arrival */
	uint64_t wait, deadline;      /* wait length, absolute deadline */
	struct pol_hnode timer;       /* key = min(ts_new + wait, deadline) */
	struct policy_list link;      /* marked: in bid_dev.marked; free: in free list */
	struct bid_hist *hist;        /* the stream's gap history */
	uint64_t mark_ns;
	bool by_deadline;             /* marked because the deadline expired */
};

/* Gap history of a stream (per staging queue, or per stream with keep_history). */
struct bid_hist {
	uint64_t gap[BID_K_MAX];
	unsigned head, n;
};

struct bid_dev {
	struct pol_map open;          /* stream -> its SQ (open, or marked and waiting) */
	struct policy_list marked;    /* marked SQs, marking order */
};

struct bid;
/* Called when a queue is marked, before it joins the flush order (hybrid
 * tiering takes its writes out here).  May leave the queue empty. */
typedef void (*bid_mark_fn)(struct bid *b, struct bid_sq *sq);

struct bid {
	struct bid_core_opts o;
	struct policy_env *env;
	unsigned ndev;
	struct bid_dev *dev;
	struct pol_heap timers;       /* unmarked SQs by expiry */
	struct policy_list free_sqs;
	struct pol_map hist;          /* stream -> bid_hist (keep_history) */
	bid_mark_fn on_mark;
	void *ctx;                    /* for on_mark */
	/* counters */
	uint64_t marked_wait, marked_deadline, flushed_queues, commands, merged, expedited;
	uint64_t staged_ns_total, staged_reqs;
};

/* Option-table entries of struct bid_core_opts, for a policy whose options
 * struct starts with it (offsets are relative to that struct). */
#define BID_CORE_OPTS \
	{ .name = "wait_k", .type = POLICY_OPT_UINT, .off = offsetof(struct bid_core_opts, wait_k), \
	  .def = "8", .min = 1, .max = BID_K_MAX, \
	  .help = "inter-arrival gaps k whose weighted mean is the wait timer (BID wait(SQ_p))" }, \
	{ .name = "wait_default", .type = POLICY_OPT_TIME, .off = offsetof(struct bid_core_opts, wait_default), \
	  .def = "2ms", .min = 0, .max = 60 * POLICY_NS_PER_S, \
	  .help = "wait timer of a new staging queue, before gaps are known (BID default wait)" }, \
	{ .name = "wait_min", .type = POLICY_OPT_TIME, .off = offsetof(struct bid_core_opts, wait_min), \
	  .def = "0", .min = 0, .max = 60 * POLICY_NS_PER_S, \
	  .help = "lower clamp of the adaptive wait timer" }, \
	{ .name = "wait_max", .type = POLICY_OPT_TIME, .off = offsetof(struct bid_core_opts, wait_max), \
	  .def = "500ms", .min = 0, .max = 60 * POLICY_NS_PER_S, \
	  .help = "upper clamp of the adaptive wait timer" }, \
	{ .name = "wait_mult", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct bid_core_opts, wait_mult), \
	  .def = "1", .fmin = 0, .fmax = 1000, \
	  .help = "wait timer = wait_mult x weighted mean of the gaps (the paper uses the mean: 1)" }, \
	{ .name = "deadline_write", .type = POLICY_OPT_TIME, .off = offsetof(struct bid_core_opts, deadline_write), \
	  .def = "5000ms", .min = 1, .max = 3600 * POLICY_NS_PER_S, \
	  .help = "deadline(SQ_p) of a staging queue holding only writes (BID: 5000 ms)" }, \
	{ .name = "deadline_read", .type = POLICY_OPT_TIME, .off = offsetof(struct bid_core_opts, deadline_read), \
	  .def = "500ms", .min = 1, .max = 3600 * POLICY_NS_PER_S, \
	  .help = "deadline(SQ_p) once a read joins the queue (BID: 500 ms)" }, \
	{ .name = "keep_history", .type = POLICY_OPT_BOOL, .off = offsetof(struct bid_core_opts, keep_history), \
	  .def = "0", \
	  .help = "keep a process's gap history across its staging queues (the paper drops it with SQ_p)" }, \
	{ .name = "max_merge", .type = POLICY_OPT_SIZE, .off = offsetof(struct bid_core_opts, max_merge), \
	  .def = "512KiB", .min = 0, .max = 1ull << 30, \
	  .help = "largest command built by merging contiguous staged requests (0 = no merging)" }

int bid_core_init(struct bid *b, struct policy_env *env, const struct bid_core_opts *o);
void bid_core_fini(struct bid *b);
/* The SQ that a request of (dev, stream) would join now, or NULL. */
struct bid_sq *bid_core_find(struct bid *b, unsigned dev, uint32_t stream);
/* Stages a request of (req->dev, req->stream).  0 or -ENOMEM. */
int bid_core_stage(struct bid *b, struct policy_req *req);
/* Marks every queue whose timer expired by now and re-arms the wake-up. */
void bid_core_expire(struct bid *b);
/* Flushes marked queues to their devices while they have room. */
void bid_core_dispatch(struct bid *b);
/* A program waits for staged req: marks its queue now (expedite). */
void bid_core_expedite(struct bid *b, struct policy_req *req);
/* Removes req from sq (hybrid tiering); the caller owns it afterwards. */
void bid_sq_take(struct bid_sq *sq, struct policy_req *req);
/* Adds req to sq (staging, or putting back a taken request). */
void bid_sq_add(struct bid_sq *sq, struct policy_req *req);
static inline struct policy_req *bid_sq_first(struct bid_sq *sq)
{
	return pol_req_of_tnode(pol_tree_first(sq->reqs));
}
static inline struct policy_req *bid_sq_next(struct bid_sq *sq, struct policy_req *r)
{
	return pol_req_of_tnode(pol_tree_next(sq->reqs, &r->tnode));
}
/* Emits the core counters. */
void bid_core_report(struct bid *b, policy_report_fn emit, void *ctx);

#endif /* POL_BID_H */
