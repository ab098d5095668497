/* SPDX-License-Identifier: MIT */
/* fmt.c - human-readable sizes, rates and durations (see fmt.h). */
#include "fmt.h"

#include <math.h>
#include <stdio.h>

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
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned i = 0;

	if (!isfinite(bytes)) {
		snprintf(buf, size, "%s", bytes > 0 ? "inf" : "n/a");
		return buf;
	}
	while (fabs(bytes) >= 1024 && i + 1 < sizeof(units) / sizeof(units[0])) {
		bytes /= 1024;
		i++;
	}
	sig3(bytes, units[i], buf, size);
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
	static const struct {
		double secs;
		const char *unit;
	} steps[] = {
		{ 365.0 * 86400, "y" }, { 30.0 * 86400, "mo" }, { 86400, "d" },
		{ 3600, "h" }, { 60, "min" }, { 1, "s" }, { 1e-3, "ms" }, { 1e-6, "us" },
		{ 1e-9, "ns" },
	};

	if (!isfinite(s)) {
		snprintf(buf, size, "%s", s > 0 ? "inf" : "n/a");
		return buf;
	}
	if (s == 0) {
		snprintf(buf, size, "0 s");
		return buf;
	}
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (fabs(s) >= steps[i].secs || i + 1 == sizeof(steps) / sizeof(steps[0])) {
			sig3(s / steps[i].secs, steps[i].unit, buf, size);
			return buf;
		}
	}
	return buf;
}
