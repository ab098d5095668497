/* SPDX-License-Identifier: MIT */
/*
 * units.c - the unit constants of signature values (docs/design.md §3).
 *
 * Sizes are powers of 1024 in bytes whatever the spelling (K, KB and KiB
 * are all 1024 bytes; the original IOSIG's bit-based units were a bug).
 * Times are in seconds, fractions in plain probability.  Unit names are
 * reserved words inside signature values: an identifier spelt like a unit is
 * always the unit, never a variable.  Lower-case "k"/"kB" are deliberately
 * not units, so that the common variable name "k" stays usable.
 *
 * "ns" and "us" are units only in values written outside a pragma
 * (configuration files, policy and simulator options, `iosig explain`, the
 * string form "5 us" inside a pragma): no signature needs them, and inside a
 * pragma they stay usable as variable names.  iosig_unit_lookup() reports
 * the reserved words of pragmas, so not these two.
 */
#include <string.h>

#include "sig_internal.h"

#define KIB 1024.0
#define MIB (KIB * 1024.0)
#define GIB (MIB * 1024.0)
#define TIB (GIB * 1024.0)
#define PIB (TIB * 1024.0)
#define DAY 86400.0

static const struct sigp_unit units[] = {
	{ "B", 1, IOSIG_DIM_SIZE, "bytes" },
	{ "KiB", KIB, IOSIG_DIM_SIZE, "kibibytes (1024 bytes)" },
	{ "MiB", MIB, IOSIG_DIM_SIZE, "mebibytes (2^20 bytes)" },
	{ "GiB", GIB, IOSIG_DIM_SIZE, "gibibytes (2^30 bytes)" },
	{ "TiB", TIB, IOSIG_DIM_SIZE, "tebibytes (2^40 bytes)" },
	{ "PiB", PIB, IOSIG_DIM_SIZE, "pebibytes (2^50 bytes)" },
	{ "K", KIB, IOSIG_DIM_SIZE, "kibibytes (1024 bytes)" },
	{ "KB", KIB, IOSIG_DIM_SIZE, "kibibytes (1024 bytes)" },
	{ "M", MIB, IOSIG_DIM_SIZE, "mebibytes (2^20 bytes)" },
	{ "MB", MIB, IOSIG_DIM_SIZE, "mebibytes (2^20 bytes)" },
	{ "G", GIB, IOSIG_DIM_SIZE, "gibibytes (2^30 bytes)" },
	{ "GB", GIB, IOSIG_DIM_SIZE, "gibibytes (2^30 bytes)" },
	{ "T", TIB, IOSIG_DIM_SIZE, "tebibytes (2^40 bytes)" },
	{ "TB", TIB, IOSIG_DIM_SIZE, "tebibytes (2^40 bytes)" },
	{ "ns", 1e-9, IOSIG_DIM_TIME, "nanoseconds", true },
	{ "us", 1e-6, IOSIG_DIM_TIME, "microseconds", true },
	{ "ms", 1e-3, IOSIG_DIM_TIME, "milliseconds" },
	{ "s", 1, IOSIG_DIM_TIME, "seconds" },
	{ "min", 60, IOSIG_DIM_TIME, "minutes" },
	{ "h", 3600, IOSIG_DIM_TIME, "hours" },
	{ "d", DAY, IOSIG_DIM_TIME, "days" },
	{ "w", 7 * DAY, IOSIG_DIM_TIME, "weeks" },
	{ "mo", 30 * DAY, IOSIG_DIM_TIME, "months (30 days)" },
	{ "y", 365 * DAY, IOSIG_DIM_TIME, "years (365 days)" },
	{ "ppm", 1e-6, IOSIG_DIM_FRACTION, "parts per million" },
};

#define NUNITS (sizeof(units) / sizeof(units[0]))

const struct sigp_unit *sigp_unit_find(const char *s, size_t n, bool in_value)
{
	for (size_t i = 0; i < NUNITS; i++)
		if (strlen(units[i].name) == n && memcmp(units[i].name, s, n) == 0 &&
		    (in_value || !units[i].value_only))
			return &units[i];
	return NULL;
}

const char *sigp_unit_suggest(const char *s, size_t n, bool in_value)
{
	const char *cands[NUNITS];
	size_t k = 0;

	for (size_t i = 0; i < NUNITS; i++)
		if (in_value || !units[i].value_only)
			cands[k++] = units[i].name;
	return sigp_suggest(s, n, cands, k);
}

bool iosig_unit_lookup(const char *name, double *ret_value, enum iosig_dim *ret_dim)
{
	const struct sigp_unit *u;

	if (!name)
		return false;
	u = sigp_unit_find(name, strlen(name), false);
	if (!u)
		return false;
	if (ret_value)
		*ret_value = u->value;
	if (ret_dim)
		*ret_dim = u->dim;
	return true;
}
