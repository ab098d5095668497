/* SPDX-License-Identifier: MIT */
/*
 * test_catalog_mounts.c - discovery on real mounts the test makes in a
 * private mount namespace: a tmpfs (class ram, volatile, its size), ext4 on
 * a loop device whose image lies on that tmpfs (class of the backing file's
 * filesystem: ram; block size; ext4's file size limit), xfs on a loop device
 * backed by a file on the disk (the class of that disk), a read-only mount,
 * a bind mount, proc and an over-mount, ext4 on a partition of a loop
 * device (looked up on its disk); data directories created on them;
 * the probe cache key telling a reformatted filesystem from the old one;
 * the user's probe cache over the system's.
 *
 * Needs root, mount namespaces and loop devices; exits 77 with the reason
 * otherwise.  The namespace is private: every mount disappears with the
 * process even if it crashes, and loop devices are set to auto-clear.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/loop.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog_internal.h"
#include "dirs.h"
#include "mounts.h"

#define MiB (1024ull * 1024)

static char base[] = "/tmp/iosig-mnt-XXXXXX";
static bool have_xfs;
static struct iosig_catalog *cat;

static const char *at(const char *rel)
{
	return tdir_path(base, rel);
}

/* mount(2) at base/rel. */
static int do_mount(const char *src, const char *rel, const char *type, unsigned long flags,
		    const char *data)
{
	return tmnt_mount(src, at(rel), type, flags, data);
}

/* Attaches `img` to a loop device and mounts it at base/rel. */
static int loop_mount(const char *img, const char *rel, const char *type)
{
	return tmnt_loop_mount(img, 0, at(rel), type, 0, NULL, NULL, 0);
}

static void build(void)
{
	struct iosig_catalog_opts opts = { .config = "", .probe_cache = "" };
	struct iosig_error err = { 0 };

	iosig_catalog_free(cat);
	cat = NULL;
	if (iosig_catalog_new(&opts, &cat, &err) < 0)
		fail_msg("%s: %s", err.file, err.msg);
}

static const struct iosig_mount *mount_at(const char *path)
{
	for (size_t i = 0; i < iosig_catalog_size(cat); i++)
		if (!strcmp(iosig_catalog_mount(cat, i)->path, path))
			return iosig_catalog_mount(cat, i);
	return NULL;
}

static int setup(void **state)
{
	const char *why = tmnt_unavailable(true);
	int r;

	if (why)
		tskip(why);
	if (tmnt_private() < 0)
		tskip("cannot create a private mount namespace");
	if (!mkdtemp(base))
		return -1;
	if (do_mount("iosig-test-ram", "ram", "tmpfs", 0, "size=128m,mode=1777") < 0)
		return -1;
	if (mkdir(at("ram/sub"), 0755) < 0)
		return -1;
	if (tmnt_mkfs(at("ram/ext4.img"), 48 * MiB, "ext4", "-q -F -b 4096 -E nodiscard") < 0)
		return -1;
	r = loop_mount(at("ram/ext4.img"), "ext4", "ext4");
	if (r < 0) {
		fprintf(stderr, "loop mount: %s\n", strerror(-r));
		tskip("cannot attach and mount a loop device");
	}
	have_xfs = tmnt_mkfs(at("xfs.img"), 320 * MiB, "xfs", "-q -f -K") == 0 &&
		   loop_mount(at("xfs.img"), "xfs", "xfs") == 0;
	if (!have_xfs)
		printf("note: no xfs on a loop device here; that part is skipped\n");
	if (do_mount("iosig-test-ro", "ro", "tmpfs", MS_RDONLY, "size=1m") < 0 ||
	    do_mount(at("ram/sub"), "bind", NULL, MS_BIND, NULL) < 0 ||
	    do_mount("proc", "proc", "proc", 0, NULL) < 0 ||
	    do_mount("cover-first", "cover", "tmpfs", 0, "size=1m") < 0 ||
	    do_mount("cover-second", "cover", "tmpfs", 0, "size=2m") < 0)
		return -1;
	build();
	return 0;
}

static int teardown(void **state)
{
	iosig_catalog_free(cat);
	tmnt_umount_all();
	return tmnt_sh("rm -rf '%s'", base) == 0 ? 0 : -1;
}

static void test_tmpfs(void **state)
{
	const struct iosig_mount *m = mount_at(at("ram"));
	char want[400];

	assert_non_null(m);
	assert_null(m->ineligible);
	assert_string_equal(m->fstype, "tmpfs");
	assert_string_equal(m->source, "iosig-test-ram");
	assert_int_equal(m->cls, IOSIG_CLASS_RAM);
	assert_int_equal(m->src[IOSIG_F_CLASS], IOSIG_SRC_DISCOVERED);
	assert_true(m->volatile_);
	assert_false(m->global);
	assert_true(m->capacity == 128 * MiB);
	assert_true(m->free <= m->capacity && m->free > 64 * MiB);
	assert_int_equal(m->src[IOSIG_F_CAPACITY], IOSIG_SRC_DISCOVERED);
	/* A sticky world-writable root: <mnt>/iosig-<uid>. */
	snprintf(want, sizeof(want), "%s/iosig-0", at("ram"));
	assert_string_equal(m->data_dir, want);
	assert_true(iosig_mount_mttdl(m, 1e9) == 0);
}

static void test_ext4_on_ram(void **state)
{
	const struct iosig_mount *m = mount_at(at("ext4"));

	assert_non_null(m);
	assert_null(m->ineligible);
	assert_string_equal(m->fstype, "ext4");
	assert_true(!strncmp(m->source, "/dev/loop", 9));
	/* The image lies on the tmpfs: it is RAM, and gone at reboot. */
	assert_int_equal(m->cls, IOSIG_CLASS_RAM);
	assert_int_equal(m->src[IOSIG_F_CLASS], IOSIG_SRC_DISCOVERED);
	assert_true(m->volatile_);
	assert_int_equal(m->block_size, 4096);
	assert_int_equal(m->src[IOSIG_F_BLOCK_SIZE], IOSIG_SRC_DISCOVERED);
	assert_true(m->max_filesize == 4096ull << 32);
	assert_int_equal(m->src[IOSIG_F_MAX_FILESIZE], IOSIG_SRC_DISCOVERED);
	assert_true(m->capacity > 30 * MiB && m->capacity <= 48 * MiB);
	assert_ptr_equal(iosig_catalog_find(cat, at("ext4/new/file")), m);
}

static void test_xfs_on_disk(void **state)
{
	const struct iosig_mount *m, *holder;

	if (!have_xfs)
		skip();
	m = mount_at(at("xfs"));
	holder = iosig_catalog_find(cat, at("xfs.img"));
	assert_non_null(m);
	assert_non_null(holder);
	assert_string_equal(m->fstype, "xfs");
	if (holder->src[IOSIG_F_CLASS] == IOSIG_SRC_NONE) {
		/* The disk holding the image could not be classified: the
		 * loop device inherits that. */
		assert_non_null(m->ineligible);
		return;
	}
	assert_null(m->ineligible);
	assert_int_equal(m->cls, holder->cls);
	assert_int_equal(m->volatile_, holder->volatile_);
	assert_int_equal(m->rotational, holder->rotational);
	assert_true(m->block_size >= 4096);
}

static void test_ineligible_and_absent(void **state)
{
	const struct iosig_mount *m;
	char want[400];
	unsigned covers = 0;

	m = mount_at(at("ro"));
	assert_non_null(m);
	assert_string_equal(m->ineligible, "mounted read-only");
	m = mount_at(at("bind"));
	assert_non_null(m);
	snprintf(want, sizeof(want), "same filesystem as %s (a bind mount): files go there",
		 at("ram"));
	assert_string_equal(m->ineligible, want);
	assert_null(mount_at(at("proc")));
	for (size_t i = 0; i < iosig_catalog_size(cat); i++) {
		const struct iosig_mount *x = iosig_catalog_mount(cat, i);

		assert_false(cat_fstype_is_pseudo(x->fstype));
		if (!strcmp(x->path, at("cover"))) {
			covers++;
			assert_string_equal(x->source, "cover-second");
		}
	}
	assert_int_equal(covers, 1);
	assert_null(iosig_catalog_find(cat, at("proc/self/status")));
}

static void test_datadir_on_mounts(void **state)
{
	const struct iosig_mount *m = mount_at(at("ext4"));
	struct iosig_mount other;
	struct iosig_error err;
	struct stat st;
	char want[600];
	int fd = -1;

	assert_int_equal(cat_datadir_open(m, &fd, &err), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_true((uint64_t)st.st_dev == m->dev);
	close(fd);
	/* A data directory path that crosses into another filesystem. */
	assert_int_equal(do_mount("inner", "ext4/inner", "tmpfs", 0, "size=1m"), 0);
	other = *m;
	other.data_dir = at("ext4/inner/d");
	fd = -1;
	assert_int_equal(cat_datadir_open(&other, &fd, &err), -EXDEV);
	snprintf(want, sizeof(want), "data directory %s: %s is on another filesystem",
		 at("ext4/inner/d"), at("ext4/inner"));
	assert_string_equal(err.msg, want);
	assert_int_equal(tmnt_umount(at("ext4/inner")), 0);
}

/* The probe cache keys entries by filesystem: a new filesystem at the same
 * mount point does not inherit the old one's measurements. */
static void test_probe_key(void **state)
{
	struct iosig_catalog_opts opts = { .config = "" };
	struct cat_probe_record rec;
	char cache[300];
	struct iosig_error err;
	struct iosig_catalog *c2 = NULL;
	const struct iosig_mount *m = mount_at(at("ext4"));

	snprintf(cache, sizeof(cache), "%s", at("probe.yaml"));
	opts.probe_cache = cache;
	cat_probe_record_init(&rec, m);
	assert_true(rec.fsid != 0);
	rec.set = CAT_BIT(IOSIG_F_SEQ_WRITE_BW);
	rec.seq_write_bw = 12345678;
	assert_int_equal(cat_probe_store(cache, &rec, &err), 0);
	assert_int_equal(iosig_catalog_new(&opts, &c2, &err), 0);
	for (size_t i = 0; i < iosig_catalog_size(c2); i++) {
		const struct iosig_mount *x = iosig_catalog_mount(c2, i);

		if (!strcmp(x->path, at("ext4"))) {
			assert_true(x->seq_write_bw == 12345678);
			assert_int_equal(x->src[IOSIG_F_SEQ_WRITE_BW], IOSIG_SRC_PROBED);
		}
	}
	iosig_catalog_free(c2);

	/* Reformat: same path, same kind of device, a new filesystem. */
	assert_int_equal(tmnt_umount(at("ext4")), 0);
	assert_int_equal(tmnt_mkfs(at("ram/ext4.img"), 48 * MiB, "ext4", "-q -F -b 4096 -E nodiscard"),
			 0);
	assert_int_equal(loop_mount(at("ram/ext4.img"), "ext4", "ext4"), 0);
	assert_int_equal(iosig_catalog_new(&opts, &c2, &err), 0);
	for (size_t i = 0; i < iosig_catalog_size(c2); i++) {
		const struct iosig_mount *x = iosig_catalog_mount(c2, i);

		if (!strcmp(x->path, at("ext4")))
			assert_int_equal(x->src[IOSIG_F_SEQ_WRITE_BW], IOSIG_SRC_DEFAULT);
	}
	assert_int_equal(cat_catalog_notes(c2), 1);
	if (!strstr(cat_catalog_note(c2, 0), "is mounted there: ignored"))
		fail_msg("note: %s", cat_catalog_note(c2, 0));
	iosig_catalog_free(c2);
	build();
}

/* A filesystem on a partition: sysfs attributes are looked up on the
 * partition's disk (here a loop device whose image is on the tmpfs: ram). */
static void test_partition(void **state)
{
	unsigned char mbr[512] = { 0 };
	const unsigned long long size = 40 * MiB, start = 2048;
	unsigned long long sectors = size / 512 - start;
	char dev[64], part[80];
	const struct iosig_mount *m;
	struct stat st;
	int fd, lfd = -1, tries;

	/* One Linux partition from 1 MiB to the end, in an MBR. */
	mbr[446 + 4] = 0x83;
	for (int i = 0; i < 4; i++) {
		mbr[446 + 8 + i] = (unsigned char)(start >> (8 * i));
		mbr[446 + 12 + i] = (unsigned char)(sectors >> (8 * i));
	}
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	fd = open(at("ram/part.img"), O_CREAT | O_TRUNC | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, mbr, sizeof(mbr)), sizeof(mbr));
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
	assert_int_equal(tmnt_loop_attach(at("ram/part.img"), LO_FLAGS_PARTSCAN, dev, sizeof(dev),
					  &lfd),
			 0);
	snprintf(part, sizeof(part), "%sp1", dev);
	for (tries = 0; tries < 50 && stat(part, &st) < 0; tries++)
		usleep(20000);
	if (tries == 50) {
		close(lfd);
		printf("skipped: the kernel made no partition device %s\n", part);
		skip();
	}
	assert_int_equal(tmnt_mkfs(part, 0, "ext4", "-q -F -b 4096 -E nodiscard"), 0);
	assert_int_equal(do_mount(part, "part", "ext4", 0, NULL), 0);
	close(lfd);
	build();
	m = mount_at(at("part"));
	assert_non_null(m);
	assert_null(m->ineligible);
	assert_string_equal(m->source, part);
	assert_int_equal(m->cls, IOSIG_CLASS_RAM);
	assert_int_equal(m->src[IOSIG_F_CLASS], IOSIG_SRC_DISCOVERED);
	assert_int_equal(m->block_size, 4096);
}

/* Default probe caches: the system's (written by root) under the user's
 * (written by the user), field by field.  /var/cache is a tmpfs of this
 * private namespace, so the machine's own cache is not touched. */
static int user_layering(void)
{
	struct iosig_catalog_opts opts = { .config = "" };
	struct cat_probe_record rec;
	struct iosig_catalog *c = NULL;
	struct iosig_error err;
	const struct iosig_mount *m = NULL;

	unsetenv("IOSIG_PROBE_CACHE");
	setenv("XDG_CACHE_HOME", at("ram/xdg"), 1);
	if (iosig_catalog_new(&opts, &c, &err) < 0)
		return 1;
	for (size_t i = 0; i < iosig_catalog_size(c); i++)
		if (!strcmp(iosig_catalog_mount(c, i)->path, at("ram")))
			m = iosig_catalog_mount(c, i);
	if (!m || m->seq_read_bw != 1e9 || m->iops != 1000 ||
	    m->src[IOSIG_F_SEQ_READ_BW] != IOSIG_SRC_PROBED)
		return 2;
	cat_probe_record_init(&rec, m);
	rec.set = CAT_BIT(IOSIG_F_IOPS);
	rec.iops = 2000;
	if (cat_probe_store(NULL, &rec, &err) < 0) {
		fprintf(stderr, "user store: %s: %s\n", err.file, err.msg);
		return 3;
	}
	if (access(at("ram/xdg/iosig/probe.yaml"), R_OK) < 0)
		return 4;
	iosig_catalog_free(c);
	c = NULL;
	if (iosig_catalog_new(&opts, &c, &err) < 0)
		return 5;
	for (size_t i = 0; i < iosig_catalog_size(c); i++)
		if (!strcmp(iosig_catalog_mount(c, i)->path, at("ram")))
			m = iosig_catalog_mount(c, i);
	if (m->seq_read_bw != 1e9 || m->iops != 2000 || m->src[IOSIG_F_IOPS] != IOSIG_SRC_PROBED)
		return 6;
	iosig_catalog_free(c);
	return 0;
}

static void test_probe_layers(void **state)
{
	struct cat_probe_record rec;
	struct iosig_error err;
	pid_t pid;
	int status;

	assert_int_equal(tmnt_mount("iosig-test-cache", "/var/cache", "tmpfs", 0, "size=4m"), 0);
	unsetenv("IOSIG_PROBE_CACHE");
	cat_probe_record_init(&rec, mount_at(at("ram")));
	rec.set = CAT_BIT(IOSIG_F_SEQ_READ_BW) | CAT_BIT(IOSIG_F_IOPS);
	rec.seq_read_bw = 1e9;
	rec.iops = 1000;
	assert_int_equal(cat_probe_store(NULL, &rec, &err), 0);
	assert_int_equal(access(CAT_SYSTEM_PROBE_CACHE, R_OK), 0);
	assert_int_equal(chmod(base, 0755), 0);
	assert_int_equal(mkdir(at("ram/xdg"), 0700), 0);
	assert_int_equal(chown(at("ram/xdg"), 65534, 65534), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(10);
		_exit(user_layering());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status))
		fail_msg("check %d failed as nobody", WEXITSTATUS(status));
	assert_int_equal(tmnt_umount("/var/cache"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tmpfs),
		cmocka_unit_test(test_ext4_on_ram),
		cmocka_unit_test(test_xfs_on_disk),
		cmocka_unit_test(test_ineligible_and_absent),
		cmocka_unit_test(test_datadir_on_mounts),
		cmocka_unit_test(test_probe_key),
		cmocka_unit_test(test_probe_layers),
		cmocka_unit_test(test_partition),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
