/* SPDX-License-Identifier: MIT */
/*
 * env.h - the one way libiosig, the preload library and the tools read the
 * environment (docs/security.md, "Privileged programs").  Private.
 *
 * A privileged process - set-user-ID, set-group-ID, or with file
 * capabilities: what the kernel marks AT_SECURE - runs with an environment
 * its less privileged caller chose.  There every variable reads as unset:
 * the IOSIG_* paths and switches, the job identity, HOME and XDG_*, PATH.
 * Such a process uses the system configuration and the documented defaults,
 * never a file, a switch or a name its caller picked.
 */
#ifndef IOSIG_ENV_H
#define IOSIG_ENV_H

#include <stdbool.h>

/* The value of `name`, or NULL when it is unset or the process is
 * privileged (secure_getenv(3)). */
const char *env_get(const char *name);

/* A switch: false when env_get() gives NULL, "", "0", "no", "false" or
 * "off" (any case), true for any other value. */
bool env_flag(const char *name);

#endif /* IOSIG_ENV_H */
