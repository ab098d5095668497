/* SPDX-License-Identifier: MIT */
/*
 * discover.c - what the machine says about its storage (docs/design.md §5.1,
 * source 2): the mount table through libmount, the block layer through sysfs
 * and each filesystem through stat/statfs.
 *
 * Rules (docs/catalog.md "Discovery"):
 *  - pseudo filesystems (proc, sysfs, cgroup, devtmpfs ...) and everything
 *    mounted under /proc or /sys are not candidates;
 *  - a mount covered by a later mount on the same path, or lying inside a
 *    covered one, is hidden: no path reaches it;
 *  - the class comes from the filesystem type (tmpfs/ramfs: ram; network
 *    types) or from the block device: zram -> ram, pmem or DAX -> nvm, md ->
 *    raid (level and members give the layout), device-mapper -> its
 *    members, loop -> the class of the filesystem holding the backing file,
 *    else rotational -> hdd, non-rotational -> ssd; partitions are looked up
 *    on their disk;
 *  - sysfs is read once per block device, whatever the number of mounts.
 */
#include "catalog_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libmount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Never candidates: kernel interfaces and special-purpose mounts. */
static const char *const pseudo_fs[] = {
	"anon_inodefs", "apparmorfs", "autofs", "bdev", "binder", "binfmt_misc", "bpf",
	"cgroup", "cgroup2", "configfs", "cpuset", "debugfs", "devpts", "devtmpfs", "dmabuf",
	"efivarfs", "fuse.gvfsd-fuse", "fuse.lxcfs", "fuse.portal", "fusectl", "hugetlbfs",
	"mqueue", "nfsd", "nsfs", "pipefs", "proc", "pstore", "resctrl", "rootfs",
	"rpc_pipefs", "securityfs", "selinuxfs", "smackfs", "sockfs", "sysfs", "tracefs",
};

/* Network and parallel filesystems; `global` = shared by the nodes of a job.
 * 9p and virtiofs share a host directory with one VM, sshfs is a per-user
 * mount of one remote: network-like performance, but not global. */
static const struct {
	const char *name;
	bool global;
} netfs[] = {
	{ "9p", false },        { "afs", true },        { "beegfs", true },
	{ "ceph", true },       { "cifs", true },       { "fuse.ceph", true },
	{ "fuse.ceph-fuse", true }, { "fuse.glusterfs", true }, { "fuse.sshfs", false },
	{ "glusterfs", true },  { "gpfs", true },       { "lustre", true },
	{ "nfs", true },        { "nfs4", true },       { "orangefs", true },
	{ "pvfs2", true },      { "smb3", true },       { "smbfs", true },
	{ "virtiofs", false },
};

bool cat_fstype_is_pseudo(const char *fstype)
{
	for (size_t i = 0; i < sizeof(pseudo_fs) / sizeof(pseudo_fs[0]); i++)
		if (!strcmp(fstype, pseudo_fs[i]))
			return true;
	return false;
}

bool cat_fstype_network(const char *fstype, bool *ret_global)
{
	for (size_t i = 0; i < sizeof(netfs) / sizeof(netfs[0]); i++) {
		if (!strcmp(fstype, netfs[i].name)) {
			if (ret_global)
				*ret_global = netfs[i].global;
			return true;
		}
	}
	return false;
}

static bool fstype_is_ram(const char *fstype)
{
	return !strcmp(fstype, "tmpfs") || !strcmp(fstype, "ramfs");
}

/* ---- mount table -------------------------------------------------------- */

static int parser_errcb(struct libmnt_table *tb, const char *filename, int line)
{
	/* A malformed line is skipped; the rest of the table is still used. */
	return 1;
}

/* The user_id option of a FUSE mount (who mounted it), -1 if none. */
static long fuse_owner(const char *fstype, const char *fso)
{
	char *val = NULL, buf[24], *end;
	size_t len = 0;
	long uid;

	if (strncmp(fstype, "fuse.", 5) || !fso ||
	    mnt_optstr_get_option(fso, "user_id", &val, &len) != 0 || !val || !len ||
	    len >= sizeof(buf))
		return -1;
	memcpy(buf, val, len);
	buf[len] = '\0';
	uid = strtol(buf, &end, 10);
	return *end || uid < 0 ? -1 : uid;
}

static char *xstrdup(const char *s)
{
	return strdup(s ? s : "");
}

int cat_discover_table(const char *mountinfo, struct cat_disc_table *ret_table,
		       struct iosig_error *err)
{
	const char *file = mountinfo ? mountinfo : "/proc/self/mountinfo";
	struct libmnt_table *tb;
	struct libmnt_iter *it;
	struct libmnt_fs *fs;
	struct cat_disc_table t = { 0 };
	size_t cap = 0;
	int r;

	tb = mnt_new_table();
	if (!tb) {
		cat_error(err, file, 0, 0, "out of memory");
		return -ENOMEM;
	}
	mnt_table_set_parser_errcb(tb, parser_errcb);
	if (access(file, R_OK) < 0) {
		r = -errno;
		cat_error(err, file, 0, 0, "cannot read the mount table: %s", strerror(errno));
		goto out_unref_table;
	}
	r = mnt_table_parse_file(tb, file);
	if (r < 0) {
		cat_error(err, file, 0, 0, "cannot parse the mount table: %s", strerror(-r));
		goto out_unref_table;
	}
	it = mnt_new_iter(MNT_ITER_FORWARD);
	if (!it) {
		r = -ENOMEM;
		cat_error(err, file, 0, 0, "out of memory");
		goto out_unref_table;
	}
	while (mnt_table_next_fs(tb, it, &fs) == 0) {
		struct cat_disc *d;
		const char *target = mnt_fs_get_target(fs);
		const char *vfs = mnt_fs_get_vfs_options(fs);
		const char *fso = mnt_fs_get_fs_options(fs);

		if (!target || target[0] != '/')
			continue;
		if (t.n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct cat_disc *n = realloc(t.fs, ncap * sizeof(*n));

			if (!n) {
				r = -ENOMEM;
				cat_error(err, file, 0, 0, "out of memory");
				goto out_free_iter;
			}
			t.fs = n;
			cap = ncap;
		}
		d = &t.fs[t.n];
		memset(d, 0, sizeof(*d));
		d->v.reserve_pct = -1;
		d->member_cls = -1;
		d->path = xstrdup(target);
		d->source = xstrdup(mnt_fs_get_source(fs));
		d->fstype = xstrdup(mnt_fs_get_fstype(fs));
		d->root = xstrdup(mnt_fs_get_root(fs));
		t.n++;
		if (!d->path || !d->source || !d->fstype || !d->root) {
			r = -ENOMEM;
			cat_error(err, file, 0, 0, "out of memory");
			goto out_free_iter;
		}
		d->id = mnt_fs_get_id(fs);
		d->parent_id = mnt_fs_get_parent_id(fs);
		d->devno = mnt_fs_get_devno(fs);
		d->fuse_uid = fuse_owner(d->fstype, fso);
		d->readonly = (vfs && mnt_optstr_get_option(vfs, "ro", NULL, NULL) == 0) ||
			      (fso && mnt_optstr_get_option(fso, "ro", NULL, NULL) == 0);
		d->pseudo = cat_fstype_is_pseudo(d->fstype) || cat_path_under(d->path, "/proc") ||
			    cat_path_under(d->path, "/sys");
	}
	/* A later mount on the same path covers an earlier one; whatever was
	 * mounted inside a covered mount is unreachable too. */
	for (size_t i = 0; i < t.n; i++)
		for (size_t j = i + 1; j < t.n && !t.fs[i].hidden; j++)
			if (!strcmp(t.fs[i].path, t.fs[j].path))
				t.fs[i].hidden = true;
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t i = 0; i < t.n; i++) {
			if (t.fs[i].hidden)
				continue;
			for (size_t j = 0; j < t.n; j++) {
				/* Mounted inside a covered mount - unless it is
				 * the mount that covers it (same path). */
				if (j != i && t.fs[j].hidden && t.fs[j].id == t.fs[i].parent_id &&
				    t.fs[i].id != t.fs[i].parent_id &&
				    strcmp(t.fs[j].path, t.fs[i].path)) {
					t.fs[i].hidden = true;
					changed = true;
					break;
				}
			}
		}
	}
	*ret_table = t;
	t.fs = NULL;
	t.n = 0;
	r = 0;
out_free_iter:
	mnt_free_iter(it);
out_unref_table:
	mnt_unref_table(tb);
	cat_discover_table_free(&t);
	return r;
}

void cat_discover_table_free(struct cat_disc_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->fs[i].path);
		free(t->fs[i].source);
		free(t->fs[i].fstype);
		free(t->fs[i].root);
		free(t->fs[i].why);
		free(t->fs[i].layout_origin);
		free(t->fs[i].layout_why);
	}
	free(t->fs);
	t->fs = NULL;
	t->n = 0;
}

/* ---- block devices ------------------------------------------------------ */

/* What sysfs says about one block device (cached per device number). */
struct devinfo {
	dev_t devno;
	int state;               /* 1 = being classified (cycle guard), 2 = done */
	int cls;                 /* enum iosig_class, -1 unknown */
	int member_cls;          /* md/dm: class of the members if all alike, else -1 */
	int rot;                 /* queue/rotational, -1 unknown */
	uint32_t pbs;            /* physical block size, 0 unknown */
	bool has_layout;
	bool on_network;         /* loop device backed by a file on a network fs */
	struct iosig_layout layout;
	char why[200];           /* cls unknown: why */
};

struct disc_ctx {
	struct cat_disc_table *t;
	struct devinfo *dev;
	size_t ndev, cap;
};

/* Reads a small sysfs attribute relative to dirfd; strips the newline. */
static int read_attr(int dirfd, const char *name, char *buf, size_t size)
{
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

static long attr_long(int dirfd, const char *name, long dflt)
{
	char buf[32], *end;
	long v;

	if (read_attr(dirfd, name, buf, sizeof(buf)) < 0)
		return dflt;
	v = strtol(buf, &end, 10);
	return end == buf ? dflt : v;
}

static int classify_dev(struct disc_ctx *c, dev_t devno, int depth);
static int mount_class(struct disc_ctx *c, size_t i, int depth, int *ret_dev);

/* "8:1" -> dev_t */
static bool parse_devno(const char *s, dev_t *ret)
{
	unsigned ma, mi;

	if (sscanf(s, "%u:%u", &ma, &mi) != 2)
		return false;
	*ret = makedev(ma, mi);
	return true;
}

/* Classifies the members of an md or dm device (slaves/). */
static void classify_members(struct disc_ctx *c, int diskfd, int depth, unsigned *ret_n,
			     int *ret_cls, int *ret_idx)
{
	int fd = openat(diskfd, "slaves", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir;
	struct dirent *e;
	unsigned n = 0;
	int cls = -2, idx = -1;

	*ret_n = 0;
	*ret_cls = -1;
	*ret_idx = -1;
	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while ((e = readdir(dir))) {
		char rel[300], buf[32];
		dev_t m;
		int k;

		if (e->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "%s/dev", e->d_name);
		if (read_attr(dirfd(dir), rel, buf, sizeof(buf)) < 0 || !parse_devno(buf, &m))
			continue;
		n++;
		k = classify_dev(c, m, depth + 1);
		idx = k;
		if (k < 0 || c->dev[k].cls < 0)
			cls = -1;
		else if (cls == -2)
			cls = c->dev[k].cls;
		else if (cls != c->dev[k].cls)
			cls = -1;
	}
	closedir(dir);
	*ret_n = n;
	*ret_cls = cls < 0 ? -1 : cls;
	*ret_idx = n == 1 ? idx : -1;
}

bool cat_md_layout(int diskfd, struct iosig_layout *ret_layout)
{
	char level[32];
	long disks = attr_long(diskfd, "md/raid_disks", 0);
	struct iosig_layout l = { 0 };

	if (read_attr(diskfd, "md/level", level, sizeof(level)) < 0 || disks < 1 || disks > 65535)
		return false;
	l.disks = (uint16_t)disks;
	if (!strcmp(level, "raid1"))
		l.kind = IOSIG_LAYOUT_RAID1;
	else if (!strcmp(level, "raid10"))
		/* md also stripes mirrored chunks over an odd number of disks,
		 * which are no pairs: modelled as a code that survives one
		 * failure of the d disks (what md guarantees; pessimistic). */
		l.kind = disks % 2 ? IOSIG_LAYOUT_ERASURE : IOSIG_LAYOUT_RAID10;
	else if (!strcmp(level, "raid4") || !strcmp(level, "raid5"))
		l.kind = IOSIG_LAYOUT_RAID5; /* one parity device either way */
	else if (!strcmp(level, "raid6"))
		l.kind = IOSIG_LAYOUT_RAID6;
	else if (!strcmp(level, "raid0") || !strcmp(level, "linear"))
		l.kind = disks > 1 ? IOSIG_LAYOUT_RAID0 : IOSIG_LAYOUT_SINGLE;
	else
		return false; /* container, multipath, faulty ...: leave the default */
	cat_layout_fix(&l);
	if (l.kind == IOSIG_LAYOUT_ERASURE)
		l.tolerated = 1;
	*ret_layout = l;
	return true;
}

/* Index of the mount whose filesystem has st_dev `dev`, or -1. */
static long mount_by_stdev(struct disc_ctx *c, dev_t dev)
{
	for (size_t i = 0; i < c->t->n; i++)
		if (c->t->fs[i].stated && c->t->fs[i].st_dev == dev)
			return (long)i;
	return -1;
}

/* Loop device: the class of the filesystem holding its backing file. */
static void classify_loop(struct disc_ctx *c, size_t k, int diskfd, int depth)
{
	char file[4096];
	struct stat st;
	char *del;
	long mi;
	int cls = -1, sub = -1;

	if (read_attr(diskfd, "loop/backing_file", file, sizeof(file)) < 0) {
		cat_fmt(c->dev[k].why, sizeof(c->dev[k].why), "loop device without a backing file");
		return;
	}
	del = strstr(file, " (deleted)");
	if (del && del[10] == '\0')
		*del = '\0';
	if (stat(file, &st) < 0) {
		cat_fmt(c->dev[k].why, sizeof(c->dev[k].why),
			 "cannot find the backing file of the loop device: %.150s", file);
		return;
	}
	mi = mount_by_stdev(c, st.st_dev);
	if (mi >= 0) {
		cls = mount_class(c, (size_t)mi, depth + 1, &sub);
		if (cls == IOSIG_CLASS_NETWORK)
			c->dev[k].on_network = true;
	} else if (major(st.st_dev) != 0) {
		sub = classify_dev(c, st.st_dev, depth + 1);
		cls = sub >= 0 ? c->dev[sub].cls : -1;
	}
	if (cls < 0) {
		cat_fmt(c->dev[k].why, sizeof(c->dev[k].why),
			 "cannot tell the class of the filesystem holding %.150s", file);
		return;
	}
	c->dev[k].cls = cls;
	/* The loop device's own queue/rotational says nothing about the
	 * storage below it. */
	c->dev[k].rot = -1;
	if (sub >= 0) {
		c->dev[k].member_cls = c->dev[sub].member_cls;
		c->dev[k].rot = c->dev[sub].rot;
		if (c->dev[sub].has_layout) {
			c->dev[k].has_layout = true;
			c->dev[k].layout = c->dev[sub].layout;
		}
	}
}

/* Classifies a block device and returns its index in c->dev (or -1 on
 * allocation failure).  Recursion (loop, md, dm) is bounded by depth. */
static int classify_dev(struct disc_ctx *c, dev_t devno, int depth)
{
	char link[4096], path[64], *name, *slash;
	struct devinfo *d;
	size_t k;
	ssize_t n;
	int devfd = -1, diskfd = -1;

	for (k = 0; k < c->ndev; k++)
		if (c->dev[k].devno == devno)
			return (int)k;
	if (c->ndev == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct devinfo *nd = realloc(c->dev, cap * sizeof(*nd));

		if (!nd)
			return -1;
		c->dev = nd;
		c->cap = cap;
	}
	k = c->ndev++;
	d = &c->dev[k];
	memset(d, 0, sizeof(*d));
	d->devno = devno;
	d->state = 1;
	d->cls = -1;
	d->member_cls = -1;
	d->rot = -1;
	if (depth > 8) {
		cat_fmt(d->why, sizeof(d->why), "block devices nested too deeply");
		goto out_done;
	}
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(devno), minor(devno));
	n = readlink(path, link, sizeof(link) - 1);
	devfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (n <= 0 || devfd < 0) {
		cat_fmt(d->why, sizeof(d->why), "no sysfs entry for block device %u:%u",
			 major(devno), minor(devno));
		goto out_done;
	}
	link[n] = '\0';
	/* A partition's attributes (queue/, md/ ...) live on its disk. */
	if (faccessat(devfd, "partition", F_OK, 0) == 0) {
		diskfd = openat(devfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		slash = strrchr(link, '/');
		if (slash)
			*slash = '\0';
	} else {
		diskfd = dup(devfd);
	}
	if (diskfd < 0) {
		cat_fmt(d->why, sizeof(d->why), "cannot open the sysfs entry of %u:%u",
			 major(devno), minor(devno));
		goto out_done;
	}
	slash = strrchr(link, '/');
	name = slash ? slash + 1 : link;
	d = &c->dev[k];
	d->rot = (int)attr_long(diskfd, "queue/rotational", -1);
	d->pbs = (uint32_t)attr_long(diskfd, "queue/physical_block_size", 0);
	if (!strncmp(name, "zram", 4)) {
		d->cls = IOSIG_CLASS_RAM;
	} else if (!strncmp(name, "loop", 4)) {
		classify_loop(c, k, diskfd, depth);
	} else if (!strncmp(name, "md", 2) && faccessat(diskfd, "md", F_OK, 0) == 0) {
		unsigned nm;
		int mcls, one;
		struct iosig_layout l;
		bool ok = cat_md_layout(diskfd, &l);

		classify_members(c, diskfd, depth, &nm, &mcls, &one);
		d = &c->dev[k];
		d->cls = IOSIG_CLASS_RAID;
		d->member_cls = mcls;
		d->has_layout = ok;
		if (ok)
			d->layout = l;
	} else if (!strncmp(name, "dm-", 3)) {
		unsigned nm;
		int mcls, one;

		classify_members(c, diskfd, depth, &nm, &mcls, &one);
		d = &c->dev[k];
		if (nm == 1 && one >= 0) {
			/* LVM on one device, dm-crypt ...: what is below. */
			struct devinfo *s = &c->dev[one];

			d->cls = s->cls;
			d->member_cls = s->member_cls;
			d->has_layout = s->has_layout;
			d->layout = s->layout;
			d->on_network = s->on_network;
			if (s->cls < 0)
				memcpy(d->why, s->why, sizeof(d->why));
		} else if (nm > 1 && mcls >= 0) {
			/* Spanned or striped over several devices: losing any
			 * one loses data, like RAID0. */
			d->cls = mcls;
			d->has_layout = true;
			d->layout.kind = IOSIG_LAYOUT_RAID0;
			d->layout.disks = (uint16_t)(nm > 65535 ? 65535 : nm);
			cat_layout_fix(&d->layout);
		} else {
			cat_fmt(d->why, sizeof(d->why),
				 "device-mapper device %s over devices of different or unknown classes",
				 name);
		}
	} else if (!strncmp(name, "pmem", 4) || attr_long(diskfd, "queue/dax", 0) == 1) {
		d->cls = IOSIG_CLASS_NVM;
	} else if (d->rot == 1) {
		d->cls = IOSIG_CLASS_HDD;
	} else if (d->rot == 0) {
		d->cls = IOSIG_CLASS_SSD;
	} else {
		cat_fmt(d->why, sizeof(d->why), "sysfs does not say whether %s is rotational", name);
	}
out_done:
	if (diskfd >= 0)
		close(diskfd);
	if (devfd >= 0)
		close(devfd);
	c->dev[k].state = 2;
	return (int)k;
}

/* Class of the filesystem of mount i; *ret_dev receives the devinfo index
 * (-1 if not a block device). */
static int mount_class(struct disc_ctx *c, size_t i, int depth, int *ret_dev)
{
	struct cat_disc *m = &c->t->fs[i];
	struct stat st;
	int k;

	*ret_dev = -1;
	if (fstype_is_ram(m->fstype))
		return IOSIG_CLASS_RAM;
	if (cat_fstype_network(m->fstype, NULL))
		return IOSIG_CLASS_NETWORK;
	if (major(m->devno) != 0) {
		k = classify_dev(c, m->devno, depth);
	} else if (!strncmp(m->source, "/dev/", 5) && stat(m->source, &st) == 0 &&
		   S_ISBLK(st.st_mode)) {
		/* btrfs and others show an anonymous device number. */
		k = classify_dev(c, st.st_rdev, depth);
	} else {
		return -1;
	}
	*ret_dev = k;
	return k >= 0 ? c->dev[k].cls : -1;
}

/* Largest file the filesystem type allows, 0 if unlimited or unknown.
 * vfat: 4 GiB - 1 (FAT32 directory entries hold a 32-bit size); ext2/ext3:
 * 16 GiB, 256 GiB, 2 TiB for 1, 2, >= 4 KiB blocks (kernel
 * Documentation/filesystems/ext2.rst); ext4 with extents: 2^32 blocks. */
static uint64_t fs_max_filesize(const char *fstype, uint64_t bsize)
{
	if (!strcmp(fstype, "vfat") || !strcmp(fstype, "msdos"))
		return 4294967295ull;
	if (!strcmp(fstype, "ext2") || !strcmp(fstype, "ext3")) {
		if (bsize <= 1024)
			return 16ull << 30;
		if (bsize <= 2048)
			return 256ull << 30;
		return 2ull << 40;
	}
	if (!strcmp(fstype, "ext4") && bsize >= 1024 && bsize <= 65536)
		return bsize << 32;
	return 0;
}

/* A distributed filesystem that tells its redundancy (discover_dfs.c):
 * the layout, and where it was read; or why it could not be. */
static void dfs_layout(struct cat_disc *m)
{
	struct cat_dfs_layout l;
	char why[300];
	int r;

	/* A FUSE filesystem another user mounted says what its owner wants
	 * it to say. */
	if (m->fuse_uid > 0 && (uid_t)m->fuse_uid != geteuid()) {
		if (!strcmp(m->fstype, "fuse.glusterfs"))
			m->layout_why = strdup("mounted through FUSE by another user: its layout is not taken");
		return;
	}
	r = cat_dfs_layout(m->path, m->fstype, &l, why, sizeof(why));
	if (r == -EOPNOTSUPP)
		return;
	if (r < 0) {
		m->layout_why = strdup(why);
		return;
	}
	m->layout_origin = strdup(l.origin);
	if (!m->layout_origin)
		return;
	m->v.layout = l.layout;
	m->v.set |= CAT_BIT(IOSIG_F_LAYOUT);
}

void cat_discover_probe(struct cat_disc_table *t, const bool *skip)
{
	struct disc_ctx c = { .t = t };

	/* First stat every candidate: loop devices are classified by the
	 * filesystem (st_dev) holding their backing file. */
	for (size_t i = 0; i < t->n; i++) {
		struct cat_disc *m = &t->fs[i];
		struct statfs sf;
		struct stat st;
		uint64_t bs;

		if (m->pseudo || m->hidden || (skip && skip[i]))
			continue;
		if (stat(m->path, &st) < 0) {
			m->stat_err = -errno;
			continue;
		}
		m->stated = true;
		m->st_dev = st.st_dev;
		m->is_dir = S_ISDIR(st.st_mode);
		if (!m->is_dir || statfs(m->path, &sf) < 0)
			continue;
		if (sf.f_flags & ST_RDONLY)
			m->readonly = true;
		m->fsid = ((uint64_t)(uint32_t)sf.f_fsid.__val[0] << 32) |
			  (uint32_t)sf.f_fsid.__val[1];
		bs = sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize;
		m->v.capacity = (uint64_t)sf.f_blocks * bs;
		m->v.free = (uint64_t)sf.f_bavail * bs;
		m->v.set |= CAT_BIT(IOSIG_F_CAPACITY) | CAT_BIT(IOSIG_F_FREE);
		if (!strcmp(m->fstype, "ramfs")) {
			/* ramfs has no size limit and reports 0 blocks: the
			 * memory is the limit. */
			struct sysinfo si;

			if (sysinfo(&si) == 0) {
				m->v.capacity = (uint64_t)si.totalram * si.mem_unit;
				m->v.free = (uint64_t)si.freeram * si.mem_unit;
			}
		}
		/* A network filesystem reports its transfer size (rsize or
		 * wsize, often 1 MiB), not a read-modify-write unit: only a
		 * probe tells its block size. */
		if (!cat_fstype_network(m->fstype, NULL) && bs) {
			m->v.block_size = bs;
			m->v.set |= CAT_BIT(IOSIG_F_BLOCK_SIZE);
		}
		m->v.max_filesize = fs_max_filesize(m->fstype, bs);
		if (m->v.max_filesize)
			m->v.set |= CAT_BIT(IOSIG_F_MAX_FILESIZE);
	}
	for (size_t i = 0; i < t->n; i++) {
		struct cat_disc *m = &t->fs[i];
		bool global;
		int cls, k;

		if (!m->stated || !m->is_dir)
			continue;
		cls = mount_class(&c, i, 0, &k);
		if (cls < 0) {
			char buf[300];

			if (k >= 0 && c.dev[k].why[0])
				cat_fmt(buf, sizeof(buf), "%s", c.dev[k].why);
			else
				cat_fmt(buf, sizeof(buf), "cannot tell the storage class of %s on %s",
					 m->fstype, m->source);
			m->why = strdup(buf);
			continue;
		}
		m->v.cls = (uint8_t)cls;
		m->v.set |= CAT_BIT(IOSIG_F_CLASS);
		if (cat_fstype_network(m->fstype, &global)) {
			m->v.global = global;
			m->v.set |= CAT_BIT(IOSIG_F_GLOBAL);
			dfs_layout(m);
		}
		if (k < 0)
			continue;
		if (c.dev[k].on_network) {
			/* A filesystem image on a network filesystem, mounted
			 * through a local loop device, is this node's alone. */
			m->v.global = false;
			m->v.set |= CAT_BIT(IOSIG_F_GLOBAL);
		}
		if (c.dev[k].rot >= 0 && cls != IOSIG_CLASS_RAM && cls != IOSIG_CLASS_NETWORK) {
			m->v.rotational = c.dev[k].rot == 1;
			m->v.set |= CAT_BIT(IOSIG_F_ROTATIONAL);
		}
		if (c.dev[k].pbs > m->v.block_size && (m->v.set & CAT_BIT(IOSIG_F_BLOCK_SIZE)))
			m->v.block_size = c.dev[k].pbs;
		if (c.dev[k].has_layout) {
			m->v.layout = c.dev[k].layout;
			m->v.set |= CAT_BIT(IOSIG_F_LAYOUT);
		}
		m->member_cls = c.dev[k].member_cls;
	}
	free(c.dev);
}
