/* SPDX-License-Identifier: MIT */
/*
 * log.c - the daemon's one place that prints: "iosigd: message" lines on
 * stderr (the journal when systemd runs it), filtered by verbosity.
 */
#include <stdarg.h>
#include <stdio.h>

#include "iosigd.h"

static enum dlog_level max_level = DLOG_INFO;

void dlog_set_level(enum dlog_level level)
{
	max_level = level;
}

bool dlog_enabled(enum dlog_level level)
{
	return level <= max_level;
}

void dlog(enum dlog_level level, const char *fmt, ...)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };
	char line[1024];
	va_list ap;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per line, so lines of concurrent writers never mix. */
	fprintf(stderr, "iosigd: %s%s\n", prefix[level], line);
}
