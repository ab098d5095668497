/* SPDX-License-Identifier: MIT */
/* fmt.c - human-readable sizes, rates, durations and counts (see fmt.h). */
#include "fmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

/* Binary multiples: the text form's unit, the compact form's letter is its
 * first character ("K" of "KiB"). */
static const char *const byte_units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
#define NBYTE_UNITS (sizeof(byte_units) / sizeof(byte_units[0]))

/* Duration units, largest first; "mo" only in the text form (a compact
 * column keeps to units everyone reads at a glance). */
static const struct {
	double secs;
	const char *unit;
	bool compact;
} steps[] = {
	{ 365.0 * 86400, "y", true }, { 30.0 * 86400, "mo", false }, { 86400, "d", true },
	{ 3600, "h", true }, { 60, "min", true }, { 1, "s", true }, { 1e-3, "ms", true },
	{ 1e-6, "us", true }, { 1e-9, "ns", true },
};
#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

/* Divides *v by 1024 while it is at least `limit`; returns the unit index. */
static unsigned scale_binary(double *v, double limit)
{
	unsigned i = 0;

	while (fabs(*v) >= limit && i + 1 < NBYTE_UNITS) {
		*v /= 1024;
		i++;
	}
	return i;
}

/* The largest unit (of the form's) that s is at least one of, by the
 * quotient that is printed; the smallest when s is below them all. */
static size_t duration_step(double s, bool compact)
{
	for (size_t i = 0; i < NSTEPS; i++)
		if ((steps[i].compact || !compact) && fabs(s) / steps[i].secs >= 1)
			return i;
	return NSTEPS - 1;
}

/* Prints v with 3 significant digits at most, without trailing zeros. */
static void sig3(double v, const char *unit, char *buf, size_t size)
{
	if (v >= 100 || v == floor(v))
		snprintf(buf, size, "%.0f %s", v, unit);
	else if (v >= 10)
		snprintf(buf, size, "%.1f %s", v, unit);
	else
		snprintf(buf, size, "%.2f %s", v, unit);
}

char *fmt_bytes(double bytes, char *buf, size_t size)
{
	unsigned i;

	if (!isfinite(bytes)) {
		snprintf(buf, size, "%s", bytes > 0 ? "inf" : "n/a");
		return buf;
	}
	i = scale_binary(&bytes, 1024);
	sig3(bytes, byte_units[i], buf, size);
	return buf;
}

char *fmt_rate(double bps, char *buf, size_t size)
{
	char tmp[32];

	fmt_bytes(bps, tmp, sizeof(tmp));
	snprintf(buf, size, "%s/s", tmp);
	return buf;
}

char *fmt_duration(double s, char *buf, size_t size)
{
	size_t i;

	if (!isfinite(s)) {
		snprintf(buf, size, "%s", s > 0 ? "inf" : "n/a");
		return buf;
	}
	if (s == 0) {
		snprintf(buf, size, "0 s");
		return buf;
	}
	i = duration_step(s, false);
	sig3(s / steps[i].secs, steps[i].unit, buf, size);
	return buf;
}

char *fmt_bytes_compact(double bytes, char *buf, size_t size)
{
	unsigned i;

	if (!isfinite(bytes) || bytes < 0) {
		snprintf(buf, size, "-");
		return buf;
	}
	/* From 1000 on the next unit: never four digits ("1000K" is "1.0M"). */
	i = scale_binary(&bytes, 1000);
	if (i == 0)
		snprintf(buf, size, "%.0f", bytes);
	else if (bytes < 9.95)
		snprintf(buf, size, "%.1f%c", bytes, byte_units[i][0]);
	else
		snprintf(buf, size, "%.0f%c", bytes, byte_units[i][0]);
	return buf;
}

char *fmt_duration_compact(double s, char *buf, size_t size)
{
	size_t i;
	double v;

	if (!isfinite(s)) {
		snprintf(buf, size, s > 0 ? "inf" : "-");
		return buf;
	}
	if (s <= 0) {
		snprintf(buf, size, "0");
		return buf;
	}
	i = duration_step(s, true);
	v = s / steps[i].secs;
	if (v < 9.95 && v != floor(v))
		snprintf(buf, size, "%.1f%s", v, steps[i].unit);
	else if (v < 1e5)
		snprintf(buf, size, "%.0f%s", v, steps[i].unit);
	else
		snprintf(buf, size, "%.0e%s", v, steps[i].unit);
	return buf;
}

char *fmt_count_compact(double n, char *buf, size_t size)
{
	if (n < 10000)
		snprintf(buf, size, "%.0f", n);
	else if (n < 1e6)
		snprintf(buf, size, "%.0fk", n / 1e3);
	else
		snprintf(buf, size, "%.1fM", n / 1e6);
	return buf;
}
