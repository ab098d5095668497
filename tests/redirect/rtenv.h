/* SPDX-License-Identifier: MIT */
/*
 * rtenv.h - what the redirection tests share: a scratch directory, a
 * catalog configuration that leaves out every mount but the ones a test
 * names, the decision log, and small file helpers.
 */
#ifndef IOSIG_TEST_RTENV_H
#define IOSIG_TEST_RTENV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "iosig.h"

/* One mount a test configuration keeps, with its settings as YAML lines
 * ("class: ram", "global: true" ...), NULL-terminated. */
struct rt_mount_cfg {
	const char *path;           /* mount point */
	const char *data_dir;       /* data directory to configure */
	const char *const *settings;
};

/* Creates a scratch directory "<base>/<prefix>.XXXXXX" into buf. */
void rt_scratch(const char *base, const char *prefix, char *buf, size_t size);

/* Removes a tree (no symlink is followed).  Ignores errors. */
void rt_rmtree(const char *path);

/*
 * Writes a configuration to `file` that ignores every mount (patterns for
 * depths 1..12 and "/") except those in `mounts`, which get their data
 * directory and settings.  Sets IOSIG_CONFIG to it.
 */
void rt_write_config(const char *file, const struct rt_mount_cfg *mounts, size_t n);

/* The mount point holding `path` (walking up until st_dev changes). */
void rt_mount_of(const char *path, char *buf, size_t size);

/* Sets (value != NULL) or clears an IOSIG_* variable and re-reads the
 * runtime's environment. */
void rt_setenv(const char *name, const char *value);

/* Reads a whole small file into buf (NUL-terminated); -1 on error. */
ssize_t rt_read_file(const char *path, char *buf, size_t size);

/* True if path is a symbolic link whose target starts with `prefix`. */
bool rt_is_link_into(const char *path, const char *prefix);

/* True if path exists as a regular file (not following a link). */
bool rt_is_regular(const char *path);

/* st_dev of a path (following links), 0 on error. */
dev_t rt_dev_of(const char *path);

#endif /* IOSIG_TEST_RTENV_H */
