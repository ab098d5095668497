/* SPDX-License-Identifier: MIT */
/*
 * sig_param.c - the parameters of the signature language (docs/design.md §3):
 * primary names and aliases, which take values and of what dimension, which
 * contradict each other, and the valid range of their values.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sig_internal.h"

enum {
	GROUP_VISIBILITY,
	GROUP_PERSISTENCE,
	GROUP_PATTERN,
};

static const struct sigp_param_info params[IOSIG_P_COUNT] = {
	[IOSIG_P_GLOBAL] = { "global", true, IOSIG_DIM_NONE, GROUP_VISIBILITY,
			     "data cannot be both visible on all nodes and node-local" },
	[IOSIG_P_LOCAL] = { "local", true, IOSIG_DIM_NONE, GROUP_VISIBILITY,
			    "data cannot be both visible on all nodes and node-local" },
	[IOSIG_P_PERSIST] = { "persist", true, IOSIG_DIM_NONE, GROUP_PERSISTENCE,
			      "data cannot be both persistent and temporary" },
	[IOSIG_P_TMP] = { "tmp", true, IOSIG_DIM_NONE, GROUP_PERSISTENCE,
			  "data cannot be both persistent and temporary" },
	[IOSIG_P_SEQUENTIAL] = { "sequential_access", true, IOSIG_DIM_NONE, GROUP_PATTERN,
				 "a file has one dominant access pattern" },
	[IOSIG_P_RANDOM] = { "random_access", true, IOSIG_DIM_NONE, GROUP_PATTERN,
			     "a file has one dominant access pattern" },
	[IOSIG_P_ARCHIVE] = { "archive", true, IOSIG_DIM_NONE, SIGP_GROUP_NONE, NULL },
	[IOSIG_P_TAMPER] = { "tamper", true, IOSIG_DIM_NONE, SIGP_GROUP_NONE, NULL },
	[IOSIG_P_SIZE_PER_IO] = { "size_per_io", false, IOSIG_DIM_SIZE, SIGP_GROUP_NONE, NULL },
	[IOSIG_P_TOTALSIZE] = { "totalsize", false, IOSIG_DIM_SIZE, SIGP_GROUP_NONE, NULL },
	[IOSIG_P_MIN_MTTDL] = { "min_mttdl", false, IOSIG_DIM_TIME, SIGP_GROUP_NONE, NULL },
	[IOSIG_P_AVAILABILITY] = { "availability", false, IOSIG_DIM_FRACTION, SIGP_GROUP_NONE,
				   NULL },
	[IOSIG_P_LIFETIME] = { "lifetime", false, IOSIG_DIM_TIME, SIGP_GROUP_NONE, NULL },
	[IOSIG_P_NAME] = { "name", false, IOSIG_DIM_NONE, SIGP_GROUP_NONE, NULL },
};

/* Every accepted spelling, primary names first.  Case matters: the aliases
 * "MTTDL" and "size_per_IO" are spelt as in the original IOSIG. */
static const struct {
	const char *spelling;
	enum iosig_param id;
} spellings[] = {
	{ "global", IOSIG_P_GLOBAL },
	{ "local", IOSIG_P_LOCAL },
	{ "persist", IOSIG_P_PERSIST },
	{ "tmp", IOSIG_P_TMP },
	{ "sequential_access", IOSIG_P_SEQUENTIAL },
	{ "random_access", IOSIG_P_RANDOM },
	{ "archive", IOSIG_P_ARCHIVE },
	{ "tamper", IOSIG_P_TAMPER },
	{ "size_per_io", IOSIG_P_SIZE_PER_IO },
	{ "totalsize", IOSIG_P_TOTALSIZE },
	{ "min_mttdl", IOSIG_P_MIN_MTTDL },
	{ "availability", IOSIG_P_AVAILABILITY },
	{ "lifetime", IOSIG_P_LIFETIME },
	{ "name", IOSIG_P_NAME },
	{ "temp", IOSIG_P_TMP },
	{ "sequential", IOSIG_P_SEQUENTIAL },
	{ "random", IOSIG_P_RANDOM },
	{ "tamperproof", IOSIG_P_TAMPER },
	{ "size_per_IO", IOSIG_P_SIZE_PER_IO },
	{ "MTTDL", IOSIG_P_MIN_MTTDL },
};

#define NSPELLINGS (sizeof(spellings) / sizeof(spellings[0]))

const struct sigp_param_info *sigp_param_info(enum iosig_param id)
{
	if ((unsigned)id >= IOSIG_P_COUNT)
		return NULL;
	return &params[id];
}

const char *iosig_param_name(enum iosig_param id)
{
	if ((unsigned)id >= IOSIG_P_COUNT)
		return NULL;
	return params[id].name;
}

int sigp_param_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < NSPELLINGS; i++)
		if (strlen(spellings[i].spelling) == len &&
		    memcmp(spellings[i].spelling, name, len) == 0)
			return (int)spellings[i].id;
	return -1;
}

const char *sigp_param_suggest(const char *name, size_t len)
{
	const char *cands[NSPELLINGS];

	for (size_t i = 0; i < NSPELLINGS; i++)
		cands[i] = spellings[i].spelling;
	return sigp_suggest(name, len, cands, NSPELLINGS);
}

const char *sigp_dim_name(enum iosig_dim dim)
{
	switch (dim) {
	case IOSIG_DIM_SIZE:
		return "size";
	case IOSIG_DIM_TIME:
		return "time";
	case IOSIG_DIM_FRACTION:
		return "fraction";
	case IOSIG_DIM_RATE:
		return "rate";
	case IOSIG_DIM_NONE:
		break;
	}
	return "plain number";
}

/* Sizes are stored in a uint64_t; 2^63 bytes (8 EiB) is the largest
 * accepted so that every size also fits a signed 64-bit off_t-like type
 * after rounding. */
#define SIGP_SIZE_MAX 9223372036854775808.0

int sigp_param_check(enum iosig_param id, double v, char *msg, size_t size)
{
	const char *name = iosig_param_name(id);

	switch (id) {
	case IOSIG_P_SIZE_PER_IO:
	case IOSIG_P_TOTALSIZE:
		if (!isfinite(v) || v < 0 || v > SIGP_SIZE_MAX) {
			snprintf(msg, size, "%s must be between 0 and 2^63 bytes (8 EiB), not %g",
				 name, v);
			return -ERANGE;
		}
		return 0;
	case IOSIG_P_MIN_MTTDL:
	case IOSIG_P_LIFETIME:
		if (!isfinite(v) || v < 0) {
			snprintf(msg, size, "%s must be a finite, non-negative time, not %g s",
				 name, v);
			return -ERANGE;
		}
		return 0;
	case IOSIG_P_AVAILABILITY:
		if (!isfinite(v) || v < 0 || v > 1) {
			snprintf(msg, size,
				 "%s is a probability of loss and must be between 0 and 1 "
				 "(e.g. 0.001 or 100*ppm), not %g", name, v);
			return -ERANGE;
		}
		return 0;
	default:
		return 0;
	}
}

uint64_t sigp_size_round(double v)
{
	v = round(v);
	if (!(v > 0))
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)v;
}
