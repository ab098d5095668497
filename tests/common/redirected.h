/* SPDX-License-Identifier: MIT */
/*
 * redirected.h - a file redirected by the runtime, as an iosig-redirect
 * rule would redirect it, for the tests of what comes after (links,
 * anchors, gc).
 */
#ifndef IOSIG_TEST_REDIRECTED_H
#define IOSIG_TEST_REDIRECTED_H

#include <stddef.h>

/*
 * Creates `path` through rd_openat() with signature `sig` (O_CREAT|
 * O_WRONLY|O_TRUNC, mode 0600), writes `text` into it, and puts where its
 * link points (the data file) into target[size]; "" when the runtime did
 * not redirect it.  0 or -errno.
 */
int tredir_create(const char *path, const char *sig, const char *text, char *target,
		  size_t size);

#endif /* IOSIG_TEST_REDIRECTED_H */
