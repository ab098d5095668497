/* SPDX-License-Identifier: MIT */
/*
 * engine.h - the discrete-event engine of iosig-sim.  It feeds a source's
 * requests (trace or generator) to a policy through the policy contract
 * (iosigd/policy/policy.h) and serves the commands the policy issues on
 * simulated devices.  Events are ordered by (time, sequence number), so a
 * run is a pure function of its inputs; memory is bounded by the requests
 * outstanding at once, never by the length of the trace.
 */
#ifndef IOSIG_SIM_ENGINE_H
#define IOSIG_SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev.h"
#include "json.h"
#include "metrics.h"
#include "policy.h"
#include "source.h"

#define SIM_MAX_DEVS 16

/* What a run is made of.  The engine takes ownership of nothing. */
struct sim_config {
	const char *policy;              /* policy spec "NAME[:opt=val,...]" */
	struct sim_dev **devs;           /* devices; device 0 is the workload's home */
	unsigned ndev;
	struct sim_source *src;          /* the workload */
	int64_t trace_dev;               /* keep only requests of this trace device; -1 = all */
	uint64_t drain_ns;               /* after the workload, keep serving policy wake-ups
	                                    this long past the last activity (0 = 60 s) */
	uint64_t max_requests;           /* stop reading the source after this many (0 = all) */
	/* Closed loop (also when the source is closed-loop by nature): each
	 * stream (request.stream) keeps at most iodepth requests outstanding,
	 * in its order; its first request arrives at its own arrival time,
	 * every later one when a slot frees: think_ns after a request of the
	 * stream completed, plus that request's own think time (sources that
	 * carry one).  iodepth 0 = the source's, else 1; both need a closed
	 * loop. */
	bool closed_loop;
	unsigned iodepth;
	uint64_t think_ns;
	/* Signatures declared per stream (--hint), applied to requests that
	 * carry none: nhints entries. */
	const struct sim_hint *hints;
	unsigned nhints;
	/* Optional observers (plots, progress); ctx is passed back. */
	void *ctx;
	void (*on_complete)(void *ctx, const struct policy_req *req, uint64_t done_ns);
	void (*on_progress)(void *ctx, uint64_t now_ns, uint64_t completed, double fraction);
};

/* A stream's declared signature: the priors annotated code gives policies. */
struct sim_hint {
	uint32_t stream;
	uint64_t size;                   /* size_per_io in bytes, 0 = not declared */
	uint8_t pattern;                 /* SIM_PATTERN_* */
};

/* Counters of one device, kept by the engine. */
struct sim_dev_counters {
	uint64_t commands;               /* device commands (a merged chain is one) */
	uint64_t requests;               /* requests in those commands */
	uint64_t bytes_read, bytes_written;
	uint64_t internal_bytes;         /* bytes of requests the policy made itself */
	uint64_t padding_bytes;          /* bytes of POLICY_REQ_PAD requests */
	uint64_t redirected_bytes;       /* workload bytes issued away from their home device */
	uint64_t busy_ns;                /* time with at least one command in flight */
	unsigned inflight;
	uint64_t busy_since;
};

struct sim_engine;

/* Builds the policy instance for cfg.  On failure returns -errno with a
 * message and leaves *ret untouched. */
int sim_engine_create(const struct sim_config *cfg, struct sim_engine **ret, char *err,
		      size_t errlen);
/* Runs to the end of the workload.  0, or -errno with a message (bad
 * input, a policy that never finishes its requests, out of memory). */
int sim_engine_run(struct sim_engine *e, char *err, size_t errlen);
/* Writes the results as members of the current JSON object. */
void sim_engine_report(struct sim_engine *e, struct json_writer *w);
const struct sim_metrics *sim_engine_metrics(const struct sim_engine *e);
const struct sim_dev_counters *sim_engine_dev_counters(const struct sim_engine *e, unsigned dev);
uint64_t sim_engine_events(const struct sim_engine *e);
uint64_t sim_engine_max_outstanding(const struct sim_engine *e);
void sim_engine_destroy(struct sim_engine *e);

#endif /* IOSIG_SIM_ENGINE_H */
