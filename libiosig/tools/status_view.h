/* SPDX-License-Identifier: MIT */
/*
 * status_view.h - iosigd's status as `iosig status` prints it: the daemon,
 * its clients and its devices as text tables, or the JSON as it came.
 */
#ifndef IOSIG_STATUS_VIEW_H
#define IOSIG_STATUS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Prints the daemon's status JSON `text` (NUL-terminated) to fp: as it is
 * (json) or as text.  0, or -EINVAL with why in err when text is not JSON
 * or has no "daemon" object (nothing printed then).
 */
int status_view_print(const char *text, bool json, FILE *fp, char *err, size_t errlen);

#endif /* IOSIG_STATUS_VIEW_H */
