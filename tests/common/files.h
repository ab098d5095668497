/* SPDX-License-Identifier: MIT */
/*
 * files.h - whole small files for tests: write one from a string, read one
 * back into a string.
 */
#ifndef IOSIG_TEST_FILES_H
#define IOSIG_TEST_FILES_H

/* Writes text to path (created 0644, truncated).  0 or -errno. */
int tfile_write(const char *path, const char *text);

/* The whole file, NUL-terminated (free() it); NULL when it cannot be read. */
char *tfile_read(const char *path);

#endif /* IOSIG_TEST_FILES_H */
