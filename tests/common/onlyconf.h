/* SPDX-License-Identifier: MIT */
/*
 * onlyconf.h - a catalog configuration for tests that leaves out every
 * mount of the machine but the ones the test made, so that selection only
 * ever chooses between those.
 */
#ifndef IOSIG_TEST_ONLYCONF_H
#define IOSIG_TEST_ONLYCONF_H

/*
 * Writes to `path` a configuration whose `mounts:` ignore "/" and every
 * mount up to 12 levels deep, then take the NULL-terminated `entries`, each
 * one line of it such as "\"/t/a\": { ignore: false, data_dir: \"/t/a/dd\" }"
 * (later entries win, so these are used).  0 or -errno.
 */
int tconf_only(const char *path, const char *const *entries);

#endif /* IOSIG_TEST_ONLYCONF_H */
