/* SPDX-License-Identifier: MIT */
/*
 * interpose.h - what the module that links interpose.c (libiosig.so, the
 * iosig-redirect preload's front) uses of it.  Private.
 */
#ifndef IOSIG_INTERPOSE_H
#define IOSIG_INTERPOSE_H

#include "client.h"

/* The interposers' table, for client_attach(). */
extern const struct cl_host interpose_host;

/* Hands the interposers the client's operations (once attached). */
void interpose_set_client(const struct cl_ops *ops);

/* The next definition of `name` after the calling object's (dlsym
 * RTLD_NEXT): libc's function beneath an interposer. */
void *interpose_next(const char *name);

#endif /* IOSIG_INTERPOSE_H */
