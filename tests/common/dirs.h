/* SPDX-License-Identifier: MIT */
/*
 * dirs.h - the tests' scratch directories: paths under one, and what the
 * tests ask of a directory after the code under test ran in it (how many
 * entries are left); and skipping a whole test.
 */
#ifndef IOSIG_TEST_DIRS_H
#define IOSIG_TEST_DIRS_H

/*
 * Number of entries in dir besides "." and ".." and the names in `ignore`
 * (a NULL-terminated list, or NULL); -1 when dir cannot be read.
 */
long tdir_entries(const char *dir, const char *const *ignore);

/* base/rel in one of 16 buffers used in turn (enough for the paths of one
 * call); cut at 400 bytes. */
const char *tdir_path(const char *base, const char *rel);

/* Prints "skipped: why" and exits 77 (CTest's skip). */
__attribute__((noreturn)) void tskip(const char *why);

#endif /* IOSIG_TEST_DIRS_H */
