/* SPDX-License-Identifier: MIT */
/*
 * interpose.h - what the module that links interpose.c (libiosig.so, the
 * iosig-redirect preload's front) uses of it.  Private.
 */
#ifndef IOSIG_INTERPOSE_H
#define IOSIG_INTERPOSE_H

#include <stdio.h>

#include "client.h"

/* The interposers' table, for client_attach(). */
extern const struct cl_host interpose_host;

/* Hands the interposers the client's operations (once attached). */
void interpose_set_client(const struct cl_ops *ops);

/*
 * Before fstatat(64), __fxstatat(64) or statx of dirfd/path with `flags`:
 * when that names a descriptor the client handles ("" with AT_EMPTY_PATH),
 * waits until its queued writes are done, so the status includes them.
 * Called by links.c's interposers of those calls, which are the ones the
 * program reaches.
 */
void interpose_stat_self(int dirfd, const char *path, int flags);

/*
 * Before freopen of `stream`: glibc closes or replaces its descriptor with
 * its own internal calls, so a tagged one leaves the daemon first (detach:
 * its writes done, plain from now on).  libiosig.so's freopen interposers
 * and the preload front's call it.
 */
void interpose_stream_leaving(FILE *stream);

#endif /* IOSIG_INTERPOSE_H */
