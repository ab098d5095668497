/* SPDX-License-Identifier: MIT */
/*
 * select_defaults.h - documented defaults for descriptive values a signature
 * leaves out (docs/selection.md).  Private.
 */
#ifndef IOSIG_SELECT_DEFAULTS_H
#define IOSIG_SELECT_DEFAULTS_H

/* size_per_io when not declared: 1 MiB, a typical HPC transfer size and the
 * size above which Eq. 3 is dominated by bandwidth on every device class, so
 * an undeclared stream is placed by bandwidth rather than by latency. */
#define SELECT_DEFAULT_SIZE_PER_IO (1024.0 * 1024.0)

/* Job lifetime for availability(p) when no jobwide lifetime is known: 1 day. */
#define SELECT_DEFAULT_LIFETIME (86400.0)

/* File size assumed when totalsize is not declared: 1 GiB.  Its
 * reliability is judged (MTTDL depends on the size through h = size x
 * UBER), and a mount must have room for it beyond its reserve, so that a
 * file of unknown size does not go where a write the original path would
 * take fails with ENOSPC (issue 10).  Declare totalsize to place a larger
 * file, or a small one on a small mount. */
#define SELECT_DEFAULT_FILE_SIZE (1024.0 * 1024.0 * 1024.0)

#endif /* IOSIG_SELECT_DEFAULTS_H */
