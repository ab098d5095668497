/* SPDX-License-Identifier: MIT */
/*
 * gen.h - seeded workload generators as streaming sources:
 *   mapreduce  N bulky sequential processes (HDFS-chunk sized runs) plus
 *              light random interrupting ones (the BID paper's setting);
 *   pangu      write-dominated, bursty, mostly small requests on a few
 *              append streams (the Pangu traces of the BCW/MIOS paper);
 *   vms        N virtual machines alternating bulky sequential bursts and
 *              quiet periods (the burstiness-aware scheduler paper);
 *   dfsio      Hadoop's TestDFSIO: N tasks each writing and/or reading its
 *              own file sequentially, closed loop (the next request follows
 *              a completion), for throughput (the memory-storage cache paper).
 * A generator keeps one record per stream, so memory does not grow with the
 * number of requests.  Each stream has its own PRNG derived from the seed,
 * so the same seed and options give the same workload on every machine.
 */
#ifndef IOSIG_SIM_GEN_H
#define IOSIG_SIM_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"
#include "rng.h"
#include "source.h"

#define SIM_GEN_MAX_STREAMS 4096

struct sim_gen;

/* One generator kind. */
struct sim_gen_kind {
	const char *name;
	const char *summary;
	const struct policy_opt *opts;
	size_t opts_size;
	/* Checks the options and sets up g's streams; -EINVAL with a reason. */
	int (*init)(struct sim_gen *g, char *err, size_t errlen);
	/* Produces stream s's request at its due time g->stream[s].t and sets
	 * the stream's next due time (UINT64_MAX = the stream is finished). */
	void (*emit)(struct sim_gen *g, unsigned s, struct sim_io *ret);
};

/* Per-stream state; kinds use the fields they need. */
struct sim_gen_stream {
	uint64_t t;                 /* next request due (ns), UINT64_MAX = done */
	struct sim_rng rng;
	uint64_t pos;               /* next offset of a sequential run */
	uint64_t left;              /* bytes left in the current run/burst */
	uint64_t base, size;        /* region of the stream */
	uint64_t until;             /* end of the current phase (ns) */
	uint32_t id;                /* stream id in the requests */
	uint8_t op, kind;           /* current op; kind-specific role */
};

struct sim_gen {
	struct sim_source src;
	const struct sim_gen_kind *kind;
	void *opts;                 /* the kind's options struct */
	uint64_t span;              /* address space in bytes */
	uint64_t seed;
	uint64_t max_requests, end_ns;  /* stop after either (0 = no limit) */
	uint64_t emitted;
	struct sim_rng rng;         /* shared draws (start phases ...) */
	unsigned nstream;
	struct sim_gen_stream *stream;
	unsigned *heap;             /* stream indices ordered by (t, index) */
	unsigned nheap;
};

extern const struct sim_gen_kind *const sim_gen_kinds[];

/*
 * Creates a generator from "NAME[:opt=val,...]".  capacity is the home
 * device's size, the default address span.  On failure returns -errno
 * with a message and leaves *ret untouched.
 */
int sim_gen_create(const char *spec, uint64_t seed, uint64_t capacity, struct sim_source **ret,
		   char *err, size_t errlen);
/* --help text of every generator. */
void sim_gen_help(FILE *fp);

/* For kinds: allocates n streams (t = 0, per-stream PRNGs seeded). */
int sim_gen_streams(struct sim_gen *g, unsigned n);
/* A uniformly random aligned offset for a run of len bytes in [base, base+size). */
uint64_t sim_gen_offset(struct sim_rng *r, uint64_t base, uint64_t size, uint64_t len,
			uint64_t align);

#endif /* IOSIG_SIM_GEN_H */

/* Options every generator has, first in its options struct. */
struct sim_gen_common {
	uint64_t requests;          /* stop after this many requests (0 = no limit) */
	uint64_t duration;          /* stop at this time (ns, 0 = no limit) */
	uint64_t span;              /* bytes of address space (0 = the home device) */
};

#define SIM_GEN_COMMON_OPTS(T)                                                            \
	{ .name = "requests", .type = POLICY_OPT_UINT,                                        \
	  .off = offsetof(T, c.requests), .def = "100000", .min = 0, .max = UINT64_MAX - 1, \
	  .help = "requests to generate (0 = until duration)" },                            \
	{ .name = "duration", .type = POLICY_OPT_TIME, .off = offsetof(T, c.duration),      \
	  .def = "0", .min = 0, .max = 1000000 * POLICY_NS_PER_S,                            \
	  .help = "simulated time to generate for (0 = until requests)" },                  \
	{ .name = "span", .type = POLICY_OPT_SIZE, .off = offsetof(T, c.span), .def = "0", \
	  .min = 0, .max = 1ull << 50,                                                       \
	  .help = "address space used (0 = the capacity of the first device)" }

/* Applies the common options to g; -EINVAL if the span is too small. */
int sim_gen_common(struct sim_gen *g, const struct sim_gen_common *c, uint64_t min_span,
		   char *err, size_t errlen);
