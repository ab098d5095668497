/* SPDX-License-Identifier: MIT */
/*
 * fmt.h - human-readable numbers for tables and explanations: sizes in
 * binary units, rates, durations, counts; a text form and a compact form for
 * narrow table columns.  Private; shared by library and tools.
 */
#ifndef IOSIG_FMT_H
#define IOSIG_FMT_H

#include <stddef.h>

/* "64 MiB", "1.5 GiB", "512 B".  Returns buf. */
char *fmt_bytes(double bytes, char *buf, size_t size);
/* "1.2 GiB/s", "430 MiB/s".  Returns buf. */
char *fmt_rate(double bytes_per_s, char *buf, size_t size);
/* "150 ms", "3.2 d", "12.9 y" (y = 365 d, mo = 30 d).  Returns buf. */
char *fmt_duration(double seconds, char *buf, size_t size);

/* Compact forms, for tables that must fit 80 columns: 2-3 digits and a
 * one-letter unit, no space. */
/* "512", "1.5T", "23G" (the next unit from 1000 on); "-" when negative or
 * not finite.  Returns buf. */
char *fmt_bytes_compact(double bytes, char *buf, size_t size);
/* "1us", "150ms", "20s", "3.2h", "10y" (no "mo"); "0" for 0 or less, "inf",
 * "-" for NaN.  Returns buf. */
char *fmt_duration_compact(double seconds, char *buf, size_t size);
/* "10", "6000", "800k", "1.2M".  Returns buf. */
char *fmt_count_compact(double n, char *buf, size_t size);

#endif /* IOSIG_FMT_H */
