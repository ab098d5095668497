/* SPDX-License-Identifier: MIT */
/*
 * fmt.h - human-readable numbers for tables and explanations: sizes in
 * binary units, rates, durations.  Private; shared by library and tools.
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

#endif /* IOSIG_FMT_H */
