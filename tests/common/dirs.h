/* SPDX-License-Identifier: MIT */
/*
 * dirs.h - what the tests ask of a directory after the code under test ran
 * in it: how many entries are left.
 */
#ifndef IOSIG_TEST_DIRS_H
#define IOSIG_TEST_DIRS_H

/*
 * Number of entries in dir besides "." and ".." and the names in `ignore`
 * (a NULL-terminated list, or NULL); -1 when dir cannot be read.
 */
long tdir_entries(const char *dir, const char *const *ignore);

#endif /* IOSIG_TEST_DIRS_H */
