/* SPDX-License-Identifier: MIT */
/*
 * source.h - where simulated requests come from: a trace reader or a
 * workload generator, behind one streaming interface.  A source hands out
 * one request at a time in arrival order, so the simulator never holds a
 * whole trace in memory.
 */
#ifndef IOSIG_SIM_SOURCE_H
#define IOSIG_SIM_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"   /* enum policy_op, enum policy_req_flag */

#define SIM_SECTOR 512u          /* bytes per sector of sector-addressed traces */
#define SIM_ERR_MAX 512

/* One workload request. */
struct sim_io {
	uint64_t arrival_ns;     /* absolute arrival time (open-loop sources) */
	uint64_t offset;         /* bytes from the start of the traced device */
	uint64_t len;            /* bytes; 0 only for POLICY_OP_FLUSH */
	uint64_t think_ns;       /* closed-loop sources: delay from this request's
	                            completion to the next request's arrival */
	uint64_t measured_ns;    /* service time the real device measured, 0 = unknown */
	uint32_t stream;         /* process / stream / VM that issued it */
	uint32_t dev;            /* device number in the trace (0 if the format has none) */
	uint8_t op;              /* enum policy_op */
	uint8_t flags;           /* POLICY_REQ_SYNC or 0 (the other flags are the policies') */
	uint8_t hint_pattern;    /* the stream's declared pattern (enum policy_pattern), 0 = none */
	uint64_t hint_size;      /* the stream's declared size_per_io in bytes, 0 = none */
};

struct sim_source;

struct sim_source_ops {
	/* Next request into *ret: 1 = got one, 0 = end of input, -errno = error
	 * (message in src->err, "file:line: what is wrong"). */
	int (*next)(struct sim_source *src, struct sim_io *ret);
	/* Fraction of the input consumed so far in [0, 1], or -1 if unknown. */
	double (*progress)(struct sim_source *src);
	/* Frees the source (and closes its file). */
	void (*destroy)(struct sim_source *src);
};

/* Base of every source; concrete sources embed it first. */
struct sim_source {
	const struct sim_source_ops *ops;
	const char *kind;        /* format or workload name, for reports */
	bool closed_loop;        /* true: the next request arrives think_ns after the
	                            previous one completes (DiskSim validate traces,
	                            closed-loop generators); see struct sim_config */
	unsigned iodepth;        /* closed loop: requests each stream keeps outstanding
	                            (0 = 1) unless the run sets one */
	uint64_t clamped;        /* arrivals earlier than the previous one, moved
	                            forward to it (traces merged from several CPUs) */
	char err[SIM_ERR_MAX];   /* last error message */
};

static inline int sim_source_next(struct sim_source *src, struct sim_io *ret)
{
	return src->ops->next(src, ret);
}

static inline double sim_source_progress(struct sim_source *src)
{
	return src->ops->progress ? src->ops->progress(src) : -1;
}

/* Destroys src; NULL is fine. */
static inline void sim_source_destroy(struct sim_source *src)
{
	if (src)
		src->ops->destroy(src);
}

#endif /* IOSIG_SIM_SOURCE_H */
