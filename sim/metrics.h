/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - what a run measures about the workload's requests: counts,
 * bytes, latency (mean, p50, p99, p99.9, max) overall, per operation and per
 * size class (the BCW/MIOS paper's classes), cumulative I/O completion time
 * and the time span of the run.  Constant memory (histograms).
 */
#ifndef IOSIG_SIM_METRICS_H
#define IOSIG_SIM_METRICS_H

#include <stdint.h>

#include "pol_hist.h"
#include "json.h"

#define SIM_SIZE_CLASSES 6

/* Size class of a request of len bytes: [0,4K) [4K,16K) [16K,64K)
 * [64K,256K) [256K,1M) [1M,inf). */
unsigned sim_size_class(uint64_t len);
/* Name of a size class ("4KiB-16KiB"). */
const char *sim_size_class_name(unsigned cls);

struct sim_metrics {
	uint64_t completed;             /* workload requests finished (any status) */
	uint64_t errors;                /* ... with a non-zero status */
	int first_error;                /* status of the first of them (-errno), 0 = none */
	uint64_t first_error_ns;        /* when it finished */
	uint64_t reads, writes, flushes;
	uint64_t bytes_read, bytes_written;
	uint64_t first_arrival_ns;      /* earliest arrival seen */
	uint64_t last_completion_ns;
	uint64_t first_arrival_op[2];   /* the same per op (read, write): the span of the */
	uint64_t last_completion_op[2]; /* reads and of the writes, for their throughput */
	double latency_sum_ns;          /* cumulative I/O completion time of the requests */
	struct pol_hist lat;            /* every successful read and write */
	struct pol_hist lat_op[2];      /* by op: read, write */
	struct pol_hist lat_cls[2][SIM_SIZE_CLASSES];
};

void sim_metrics_init(struct sim_metrics *m);
void sim_metrics_free(struct sim_metrics *m);
/* Records one finished workload request.  0 or -ENOMEM. */
int sim_metrics_add(struct sim_metrics *m, int op, uint64_t len, uint64_t arrival_ns,
		    uint64_t done_ns, int status);
/* Writes the "requests", "time" and "latency" members into the current
 * object; device_time_s (the devices' summed busy time, the BID paper's
 * cumulative I/O completion time) goes into "time". */
void sim_metrics_json(const struct sim_metrics *m, double device_time_s, struct json_writer *w);
/* Writes {count, mean_us, p50_us, p99_us, p999_us, max_us} named key. */
void pol_hist_json(const struct pol_hist *h, const char *key, struct json_writer *w);

#endif /* IOSIG_SIM_METRICS_H */
