/* SPDX-License-Identifier: MIT */
/*
 * mounts.h - real filesystems for the tests and benchmarks that need them
 * (root only): a private mount namespace, tmpfs and other mount(2) mounts,
 * ext4/xfs images on loop devices, and one teardown for all of them; plus
 * the shell helper those programs use around them.
 *
 * In the private namespace every mount disappears with the process, even
 * when it crashes, and no other test sees it; loop devices are attached
 * with auto-clear, so they detach when their filesystem is unmounted.
 * Functions return 0 or -errno (the library's convention) and print nothing.
 */
#ifndef IOSIG_TEST_MOUNTS_H
#define IOSIG_TEST_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

/* Runs a shell command made from a printf format; its exit status, or -1
 * when it could not run or did not exit. */
int tmnt_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Absolute path of a system tool (PATH, then /usr/sbin and /sbin, which a
 * root shell has but ctest's environment may not); NULL when absent.  The
 * string is valid until the fourth call after this one. */
const char *tmnt_tool(const char *name);

/* Why this process cannot make mounts (not root; with `loops`, no loop
 * devices or no mkfs.ext4), or NULL when it can. */
const char *tmnt_unavailable(bool loops);

/* Moves the process into a new mount namespace whose mounts do not
 * propagate anywhere.  Children inherit it. */
int tmnt_private(void);

/* mount(2) at dir (created 0755 if missing); remembered for
 * tmnt_umount_all(). */
int tmnt_mount(const char *src, const char *dir, const char *type, unsigned long flags,
	       const char *data);

/* Runs mkfs.<fstype> ARGS on path (quietly), after creating path as a sparse
 * file of `size` bytes when size > 0 (else path is an existing device).
 * -ENOENT when there is no mkfs.<fstype>, -EIO when it fails. */
int tmnt_mkfs(const char *path, unsigned long long size, const char *fstype, const char *args);

/* Attaches img to a free loop device, with LO_FLAGS_AUTOCLEAR and `flags`
 * (LO_FLAGS_DIRECT_IO, LO_FLAGS_PARTSCAN ...); the device's name goes to
 * dev[size] and an open descriptor to *ret_fd (the device stays attached
 * while it or a mount holds it). */
int tmnt_loop_attach(const char *img, unsigned flags, char *dev, size_t size, int *ret_fd);

/* Attaches img (loop flags as above) and mounts it at dir with type,
 * mount(2) flags and data; the loop device's name goes to dev[size] when
 * dev is not NULL.  Unmounting detaches the device. */
int tmnt_loop_mount(const char *img, unsigned loop_flags, const char *dir, const char *type,
		    unsigned long flags, const char *data, char *dev, size_t size);

/* Unmounts dir (not lazily: -EBUSY when it is in use) and forgets it. */
int tmnt_umount(const char *dir);

/* Unmounts everything mounted through this file, the newest first (lazily
 * when busy).  Safe to call more than once. */
void tmnt_umount_all(void);

#endif /* IOSIG_TEST_MOUNTS_H */
