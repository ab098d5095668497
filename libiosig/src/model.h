/* SPDX-License-Identifier: MIT */
/*
 * model.h - private helpers of the reliability models (model_mttdl.c,
 * model_mc.c) shared with the `iosig mttdl` tool and the unit tests.
 *
 * The MTTDL models see every layout as `groups` independent groups of
 * `disks` devices, each group an MDS code tolerating `tolerated` device
 * failures and holding 1/groups of the file (docs/models.md, "Layouts").
 */
#ifndef IOSIG_MODEL_H
#define IOSIG_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "iosig.h"

/* A layout reduced to what Eq. 2 and its Markov chain need. */
struct mdl_shape {
	unsigned groups;    /* independent groups; data is lost when any group loses it */
	unsigned disks;     /* d: devices per group */
	unsigned tolerated; /* m: failures a group survives (m < d) */
};

/*
 * Reduces `layout` to a shape.  RAID10 is groups of 2 mirrored disks (an even
 * number of disks >= 2); ERASURE takes m from layout->tolerated; every other
 * kind implies m and ignores layout->tolerated; SINGLE accepts disks 0 or 1.
 * Returns 0, or -EINVAL for an unknown kind or a disk count the kind cannot
 * have (*ret_shape untouched then).
 */
int mdl_layout_shape(const struct iosig_layout *layout, struct mdl_shape *ret_shape);

/*
 * The birth-death chain with killing that the Monte Carlo estimator samples
 * and Eq. 2 approximates (docs/models.md, "The Markov chain").  Level k is
 * the number of failed devices (MDS group) or of degraded groups (RAID10).
 * From level k the chain moves up at rate up[k], down at rate down[k], and is
 * absorbed (data lost) at rate loss_fail[k] (one failure too many) plus
 * loss_err[k] (a rebuild that completes but found an uncorrectable error).
 */
struct mdl_chain {
	unsigned levels;   /* number of levels (m + 1, or groups + 1) */
	double *up;        /* [levels] rate of one more failure that is survived, 1/s */
	double *down;      /* [levels] rate of a successful repair, 1/s */
	double *loss_fail; /* [levels] rate of a fatal device failure, 1/s */
	double *loss_err;  /* [levels] rate of a repair that hits an uncorrectable error, 1/s */
};

/*
 * Builds the chain of `shape` for per-device mttf and mttr (seconds) and h =
 * file size in bits x UBER.  The probability that a critical rebuild (reading
 * what the d - m survivors of a group hold) meets an uncorrectable error is
 * 1 - exp(-(d - m) h / groups).  -EINVAL for invalid numbers, -ENOMEM;
 * *ret_chain is untouched on failure.  Free with mdl_chain_free().
 */
int mdl_chain_new(const struct mdl_shape *shape, double mttf, double mttr, double h,
		  struct mdl_chain **ret_chain);
void mdl_chain_free(struct mdl_chain *chain);

/*
 * Exact mean time to absorption of the chain from level 0, in seconds
 * (+inf when the loss probability of an excursion underflows).  This is what
 * iosig_mttdl_simulate() converges to; Eq. 2 is its rare-event limit.
 */
double mdl_chain_mttdl(const struct mdl_chain *chain);

/* Checks shared by the analytic model and the simulator: mttf and mttr
 * finite and > 0, uber in [0, 1], size finite and >= 0. */
bool mdl_params_valid(double mttf, double mttr, double uber, double size);

/*
 * Random numbers of the Monte Carlo estimator: xoshiro256** seeded through
 * splitmix64 (prng.h), so a seed gives the same sequence everywhere (no rand()).
 * Exposed for the unit tests of the samplers.
 */
struct mdl_rng {
	uint64_t s[4]; /* xoshiro256** state, never all zero */
};

void mdl_rng_seed(struct mdl_rng *rng, uint64_t seed);
uint64_t mdl_rng_next(struct mdl_rng *rng);
/* Uniform in (0, 1]: safe to take the logarithm of. */
double mdl_rng_uniform(struct mdl_rng *rng);
/* Gamma(shape, 1) for shape >= 1; multiply by a scale. */
double mdl_rng_gamma(struct mdl_rng *rng, double shape);
/* Poisson(mean) for mean >= 0. */
double mdl_rng_poisson(struct mdl_rng *rng, double mean);
/* Number of failures before the n-th success of Bernoulli trials whose
 * failure/success odds are `odds` (= (1 - p) / p); n >= 0. */
double mdl_rng_negbin(struct mdl_rng *rng, double n, double odds);

#endif /* IOSIG_MODEL_H */
