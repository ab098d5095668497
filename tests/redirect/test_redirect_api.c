/* SPDX-License-Identifier: MIT */
/*
 * The compiler-generated entry points, called directly with hand-written
 * site descriptors (the real ABI): every form, errno parity with the plain
 * calls, existing paths, IOSIG_DISABLE / DRYRUN / STRICT / LOG, the tagging
 * table, prepare, openers, jobwide, threads and fork.
 *
 * The catalog keeps two mounts: the filesystem of the scratch directory
 * (class hdd) and /dev/shm (class ram), so that "tmp" signatures go to
 * /dev/shm and "persist" ones stay.  Tests that need the redirect skip when
 * /dev/shm is not a separate tmpfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "declog.h"
#include "dirs.h"
#include "files.h"
#include "iosig.h"
#include "jsonl.h"
#include "redirect.h"
#include "rtenv.h"
#include "runtime.h"
#include "tag.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

static struct {
	char work[1024];          /* scratch directory (on the "hdd" mount) */
	char work_dd[1100];       /* data directory of the scratch mount */
	char shm_dd[256];         /* data directory on /dev/shm */
	char log[1100];           /* decision log */
	bool have_shm;            /* /dev/shm is a tmpfs of its own */
} T;

#define SITE(name, sigtext, n, callname)                                              \
	static const struct iosig_site name = { IOSIG_SITE_ABI, n, sigtext, __FILE__, \
						__LINE__, 3, callname }

SITE(site_tmp, "tmp random_access size_per_io($0)", 1, "open");
SITE(site_tmp_f, "tmp sequential_access size_per_io($0)", 1, "fopen");
SITE(site_persist, "persist sequential_access size_per_io($0) totalsize($1)", 2, "open");
SITE(site_tamper, "tamperproof size_per_io(4096)", 0, "open");
SITE(site_neg, "tmp size_per_io($0)", 1, "open");
SITE(site_badtext, "size_per_io(", 0, "open");
SITE(site_jobwide, "lifetime($0) name(\"job-from-pragma\")", 1, "jobwide");
SITE(site_opener, "tmp size_per_io($0)", 1, "wrapper");
SITE(site_opener2, "tmp", 0, "inner_wrapper");

static char *wpath(const char *name)
{
	static __thread char buf[4][PATH_MAX];
	static __thread int k;
	char *p = buf[k++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", T.work, name);
	return p;
}

static void need_shm(void)
{
	if (!T.have_shm)
		skip();
}

/* Entries in both data directories: a fallback must leave them alone. */
static long data_entries(void)
{
	long a = tdir_entries(T.work_dd, NULL), b = T.have_shm ? tdir_entries(T.shm_dd, NULL) : 0;

	return (a < 0 ? 0 : a) + (b < 0 ? 0 : b);
}

static void log_reset(void)
{
	assert_int_equal(truncate(T.log, 0), 0);
}

/* The records of the decision log. */
struct recs {
	struct jv *v[64];
	int n;
};

/* Parses the log into r; every line must be valid JSON. */
static void log_read(struct recs *r)
{
	char *text = tfile_read(T.log), *save = NULL;

	r->n = 0;
	assert_non_null(text);
	assert_true(jv_each_line(T.log, NULL, NULL) >= 0);
	for (char *line = strtok_r(text, "\n", &save); line && r->n < 64;
	     line = strtok_r(NULL, "\n", &save)) {
		r->v[r->n] = jv_parse(line);
		assert_non_null(r->v[r->n]);
		r->n++;
	}
	free(text);
}

static void recs_free(struct recs *r)
{
	for (int i = 0; i < r->n; i++)
		jv_free(r->v[i]);
	r->n = 0;
}

/* The last record of the log with event `event`. */
static const struct jv *last_event(const struct recs *r, const char *event)
{
	for (int i = r->n - 1; i >= 0; i--)
		if (jv_str(r->v[i], "event") && !strcmp(jv_str(r->v[i], "event"), event))
			return r->v[i];
	return NULL;
}

/* ---- errno parity --------------------------------------------------------- */

enum form { F_OPEN, F_OPEN64, F_OPENAT, F_CREAT, F_FOPEN, F_FOPEN64, F_FREOPEN };

struct outcome {
	int ret;      /* fd, or 0/-1 for streams */
	int err;
};

/* Runs one form plainly or through libiosig; closes what it opened. */
static struct outcome run_form(enum form f, bool annotated, int dirfd, const char *path,
			       int flags, const char *fmode)
{
	struct outcome o = { -1, 0 };
	FILE *fp = NULL, *base;

	errno = 0;
	switch (f) {
	case F_OPEN:
		o.ret = annotated ? iosig_open(&site_tmp, path, flags, 0644, 4096.0) :
				    open(path, flags, 0644);
		break;
	case F_OPEN64:
		o.ret = annotated ? iosig_open64(&site_tmp, path, flags, 0644, 4096.0) :
				    open64(path, flags, 0644);
		break;
	case F_OPENAT:
		o.ret = annotated ? iosig_openat(&site_tmp, dirfd, path, flags, 0644, 4096.0) :
				    openat(dirfd, path, flags, 0644);
		break;
	case F_CREAT:
		o.ret = annotated ? iosig_creat(&site_tmp, path, 0644, 4096.0) : creat(path, 0644);
		break;
	case F_FOPEN:
		fp = annotated ? iosig_fopen(&site_tmp_f, path, fmode, 65536.0) : fopen(path, fmode);
		break;
	case F_FOPEN64:
		fp = annotated ? iosig_fopen64(&site_tmp_f, path, fmode, 65536.0) :
				 fopen64(path, fmode);
		break;
	case F_FREOPEN:
		base = fopen("/dev/null", "r");
		assert_non_null(base);
		fp = annotated ? iosig_freopen(&site_tmp_f, path, fmode, base, 65536.0) :
				 freopen(path, fmode, base);
		break;
	}
	o.err = errno;
	if (f >= F_FOPEN) {
		o.ret = fp ? 0 : -1;
		if (fp)
			fclose(fp);
	} else if (o.ret >= 0) {
		close(o.ret);
		o.ret = 0;
	}
	if (o.ret == 0)
		o.err = 0;
	return o;
}

struct errcase {
	const char *what;
	enum form form;
	const char *path;     /* relative to the scratch directory unless absolute */
	int flags;
	const char *fmode;
	int dirfd_kind;       /* 0: scratch dir fd, 1: a bad descriptor */
	int expect;           /* errno the plain call gives */
};

static const struct errcase errcases[] = {
	{ "missing directory", F_OPEN, "nodir/x", O_CREAT | O_WRONLY, NULL, 0, ENOENT },
	{ "missing directory", F_OPEN64, "nodir/x", O_CREAT | O_WRONLY, NULL, 0, ENOENT },
	{ "missing directory", F_CREAT, "nodir/x", 0, NULL, 0, ENOENT },
	{ "missing directory", F_FOPEN, "nodir/x", 0, "w", 0, ENOENT },
	{ "missing directory", F_FOPEN64, "nodir/x", 0, "a+", 0, ENOENT },
	{ "empty path", F_OPEN, "", O_CREAT | O_WRONLY, NULL, 0, ENOENT },
	{ "not a directory", F_OPEN, "afile/x", O_CREAT | O_WRONLY, NULL, 0, ENOTDIR },
	{ "not a directory", F_FOPEN, "afile/x", 0, "w", 0, ENOTDIR },
	{ "O_EXCL on existing", F_OPEN, "afile", O_CREAT | O_EXCL | O_WRONLY, NULL, 0, EEXIST },
	{ "O_EXCL on existing", F_OPENAT, "afile", O_CREAT | O_EXCL | O_RDWR, NULL, 0, EEXIST },
	{ "'x' on existing", F_FOPEN, "afile", 0, "wx", 0, EEXIST },
	{ "directory for writing", F_OPEN, "adir", O_CREAT | O_WRONLY, NULL, 0, EISDIR },
	{ "directory for writing", F_FOPEN, "adir", 0, "w", 0, EISDIR },
	{ "trailing slash", F_OPEN, "newdir/", O_CREAT | O_WRONLY, NULL, 0, EISDIR },
	{ "trailing slash", F_CREAT, "newdir/", 0, NULL, 0, EISDIR },
	{ "O_NOFOLLOW on a link", F_OPEN, "alink", O_CREAT | O_NOFOLLOW | O_WRONLY, NULL, 0, ELOOP },
	{ "bad fopen mode", F_FOPEN, "newfile", 0, "z", 0, EINVAL },
	{ "bad dirfd", F_OPENAT, "rel", O_CREAT | O_WRONLY, NULL, 1, EBADF },
	{ "name too long", F_OPEN,
	  "x123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890"
	  "123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890"
	  "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
	  O_CREAT | O_WRONLY, NULL, 0, ENAMETOOLONG },
};

/* Runs every error case plainly and annotated; returns mismatches. */
static int errno_parity_all(bool verbose)
{
	int bad = 0;
	int dfd = open(T.work, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; i < sizeof(errcases) / sizeof(errcases[0]); i++) {
		const struct errcase *c = &errcases[i];
		const char *path = c->path[0] == '/' || !c->path[0] ? c->path :
				   c->form == F_OPENAT ? c->path : wpath(c->path);
		int dirfd = c->dirfd_kind ? 9999 : dfd;
		long before = data_entries();
		struct outcome p = run_form(c->form, false, dirfd, path, c->flags, c->fmode);
		struct outcome a = run_form(c->form, true, dirfd, path, c->flags, c->fmode);

		if (p.ret != a.ret || p.err != a.err || data_entries() != before) {
			bad++;
			if (verbose)
				fprintf(stderr, "%s (form %d): plain %d/%s, iosig %d/%s\n", c->what,
					c->form, p.ret, strerror(p.err), a.ret, strerror(a.err));
		}
	}
	close(dfd);
	return bad;
}

static void test_errno_parity(void **state)
{
	(void)state;
	assert_int_equal(tfile_write(wpath("afile"), "data"), 0);
	mkdir(wpath("adir"), 0755);
	unlink(wpath("alink"));
	assert_int_equal(symlink("afile", wpath("alink")), 0);
	assert_int_equal(errno_parity_all(true), 0);
	/* The plain calls really failed the way the table says. */
	for (size_t i = 0; i < sizeof(errcases) / sizeof(errcases[0]); i++) {
		const struct errcase *c = &errcases[i];
		int dfd = open(T.work, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		const char *path = !c->path[0] || c->form == F_OPENAT ? c->path : wpath(c->path);
		struct outcome p = run_form(c->form, false, c->dirfd_kind ? 9999 : dfd, path,
					    c->flags, c->fmode);

		close(dfd);
		if (p.err != c->expect)
			fprintf(stderr, "%s: plain errno %s\n", c->what, strerror(p.err));
		assert_int_equal(p.err, c->expect);
	}
}

/*
 * freopen failing: glibc keeps the closed FILE allocated, so these cases run
 * in a child that leaves with _exit (no leak report for glibc's object).
 */
static void test_errno_parity_freopen(void **state)
{
	static const struct {
		const char *path;
		const char *mode;
		int expect;
	} cases[] = {
		{ "nodir/x", "w", ENOENT },
		{ "afile", "w+x", EEXIST },
		{ "adir", "a", EISDIR },
		{ "newfile", "q", EINVAL },
	};
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(tfile_write(wpath("afile"), "data"), 0);
	mkdir(wpath("adir"), 0755);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		long before = data_entries();

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct outcome p = run_form(F_FREOPEN, false, AT_FDCWD, wpath(cases[i].path), 0,
						    cases[i].mode);
			struct outcome a = run_form(F_FREOPEN, true, AT_FDCWD, wpath(cases[i].path), 0,
						    cases[i].mode);

			if (p.err != cases[i].expect || a.ret != p.ret || a.err != p.err) {
				fprintf(stderr, "freopen %s %s: plain %s, iosig %s\n", cases[i].path,
					cases[i].mode, strerror(p.err), strerror(a.err));
				_exit(1);
			}
		}
		_exit(data_entries() == before ? 0 : 2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* EACCES: as an unprivileged user in a directory it may not write. */
static void test_errno_eacces(void **state)
{
	char dir[PATH_MAX];
	struct outcome p, a;
	pid_t pid;
	int status;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/ro", T.work);
	mkdir(dir, 0755);
	chmod(dir, 0555);
	snprintf(dir, sizeof(dir), "%s/ro/new", T.work);
	if (geteuid() != 0) {
		p = run_form(F_OPEN, false, AT_FDCWD, dir, O_CREAT | O_WRONLY, NULL);
		a = run_form(F_OPEN, true, AT_FDCWD, dir, O_CREAT | O_WRONLY, NULL);
		assert_int_equal(p.err, EACCES);
		assert_int_equal(a.ret, p.ret);
		assert_int_equal(a.err, p.err);
		return;
	}
	/* root writes anywhere: drop to nobody in a child. */
	chmod(T.work, 0755);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(3);
		p = run_form(F_OPEN, false, AT_FDCWD, dir, O_CREAT | O_WRONLY, NULL);
		a = run_form(F_OPEN, true, AT_FDCWD, dir, O_CREAT | O_WRONLY, NULL);
		if (p.err != EACCES && p.err != ENOENT)
			_exit(4);
		_exit(a.ret == p.ret && a.err == p.err ? 0 : 5);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- existing paths ----------------------------------------------------- */

static void test_existing_untouched(void **state)
{
	char buf[64], target[PATH_MAX];
	struct stat a, b;
	FILE *fp;
	int fd;

	(void)state;
	assert_int_equal(tfile_write(wpath("keep"), "keep me"), 0);
	assert_int_equal(lstat(wpath("keep"), &a), 0);
	fd = iosig_open(&site_tmp, wpath("keep"), O_CREAT | O_WRONLY, 0600, 4096.0);
	assert_true(fd >= 0);
	close(fd);
	fp = iosig_fopen(&site_tmp_f, wpath("keep"), "a", 4096.0);
	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(lstat(wpath("keep"), &b), 0);
	assert_true(S_ISREG(b.st_mode));
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_mode, b.st_mode);
	assert_int_equal(rt_read_file(wpath("keep"), buf, sizeof(buf)), 7);
	assert_string_equal(buf, "keep me");

	/* A dangling symbolic link is "existing": the plain call follows it. */
	unlink(wpath("dangling"));
	assert_int_equal(symlink("dangling-target", wpath("dangling")), 0);
	fd = iosig_open(&site_tmp, wpath("dangling"), O_CREAT | O_WRONLY, 0644, 4096.0);
	assert_true(fd >= 0);
	close(fd);
	assert_true(rt_is_regular(wpath("dangling-target")));

	/* An iosig link is simply followed: same data file, not moved. */
	if (!T.have_shm)
		return;
	fd = iosig_open(&site_tmp, wpath("linked"), O_CREAT | O_WRONLY | O_TRUNC, 0644, 4096.0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	assert_true(rt_is_link_into(wpath("linked"), T.shm_dd));
	assert_true(readlink(wpath("linked"), target, sizeof(target)) > 0);
	fd = iosig_open(&site_tmp, wpath("linked"), O_CREAT | O_WRONLY | O_APPEND, 0644, 4096.0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "def", 3), 3);
	assert_int_equal(fstat(fd, &a), 0);
	close(fd);
	assert_int_equal(rt_read_file(wpath("linked"), buf, sizeof(buf)), 6);
	assert_string_equal(buf, "abcdef");
	assert_int_equal(stat(wpath("linked"), &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
}

/* ---- the redirect and its forms ----------------------------------------- */

static void check_redirected(const char *path, const char *content)
{
	char buf[256];

	assert_true(rt_is_link_into(path, T.shm_dd));
	assert_int_equal(rt_dev_of(path), rt_dev_of(T.shm_dd));
	assert_true(rt_read_file(path, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, content);
}

static void test_redirect_open_forms(void **state)
{
	struct stat st;
	mode_t old;
	int fd, dfd, a, b, c;

	(void)state;
	need_shm();
	/* open: mode after umask, the lowest free descriptor, no FD_CLOEXEC. */
	old = umask(027);
	a = open("/dev/null", O_RDONLY);
	b = open("/dev/null", O_RDONLY);
	c = open("/dev/null", O_RDONLY);
	close(b);
	fd = iosig_open(&site_tmp, wpath("o1"), O_CREAT | O_WRONLY | O_TRUNC, 0604, 4096.0);
	umask(old);
	assert_int_equal(fd, b);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(write(fd, "o1", 2), 2);
	close(fd);
	close(a);
	close(c);
	check_redirected(wpath("o1"), "o1");

	/* O_CLOEXEC asked: set. */
	fd = iosig_open64(&site_tmp, wpath("o2"), O_CREAT | O_RDWR | O_CLOEXEC, 0600, 4096.0);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(write(fd, "o2", 2), 2);
	close(fd);
	check_redirected(wpath("o2"), "o2");

	/* openat with a directory descriptor and a relative path. */
	mkdir(wpath("sub"), 0755);
	dfd = open(wpath("sub"), O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	fd = iosig_openat(&site_tmp, dfd, "o3", O_CREAT | O_WRONLY | O_EXCL, 0644, 4096.0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "o3", 2), 2);
	close(fd);
	close(dfd);
	check_redirected(wpath("sub/o3"), "o3");

	/* A path relative to the working directory. */
	assert_int_equal(chdir(wpath("sub")), 0);
	fd = iosig_creat(&site_tmp, "o4", 0644, 4096.0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "o4", 2), 2);
	close(fd);
	assert_int_equal(chdir(T.work), 0);
	check_redirected(wpath("sub/o4"), "o4");

	/* "a/./b" and "a//b" name the same place. */
	fd = iosig_open(&site_tmp, wpath("sub/.//o5"), O_CREAT | O_WRONLY, 0644, 4096.0);
	assert_true(fd >= 0);
	close(fd);
	assert_true(rt_is_link_into(wpath("sub/o5"), T.shm_dd));
}

static void test_redirect_stream_forms(void **state)
{
	char buf[64];
	FILE *fp;
	int fl;

	(void)state;
	need_shm();
	fp = iosig_fopen(&site_tmp_f, wpath("s1"), "w", 65536.0);
	assert_non_null(fp);
	fputs("s1", fp);
	fclose(fp);
	check_redirected(wpath("s1"), "s1");

	/* 'e' sets FD_CLOEXEC; 'x' on a new path creates it. */
	fp = iosig_fopen(&site_tmp_f, wpath("s2"), "wxe", 65536.0);
	assert_non_null(fp);
	assert_int_equal(fcntl(fileno(fp), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	fputs("s2", fp);
	fclose(fp);
	check_redirected(wpath("s2"), "s2");

	/* "a+": append and read back through the stream. */
	fp = iosig_fopen64(&site_tmp_f, wpath("s3"), "a+", 65536.0);
	assert_non_null(fp);
	fl = fcntl(fileno(fp), F_GETFL);
	assert_true(fl & O_APPEND);
	assert_int_equal(fl & O_ACCMODE, O_RDWR);
	fputs("s3", fp);
	fflush(fp);
	rewind(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	assert_string_equal(buf, "s3");
	fclose(fp);
	check_redirected(wpath("s3"), "s3");

	/* freopen on an existing stream keeps the FILE object. */
	fp = fopen("/dev/null", "w");
	assert_non_null(fp);
	assert_ptr_equal(iosig_freopen(&site_tmp_f, wpath("s4"), "w", fp, 65536.0), fp);
	fputs("s4", fp);
	fclose(fp);
	check_redirected(wpath("s4"), "s4");

	/* freopen without a path changes the mode: plain. */
	fp = iosig_fopen(&site_tmp_f, wpath("s5"), "w+", 65536.0);
	assert_non_null(fp);
	fp = iosig_freopen(&site_tmp_f, NULL, "r", fp, 65536.0);
	assert_non_null(fp);
	fclose(fp);

	/* ",ccs=" is left to fopen: a plain regular file.  In a child: glibc's
	 * converter cache stays allocated for the life of the process. */
	{
		int status;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			fp = iosig_fopen(&site_tmp_f, wpath("s6"), "w,ccs=UTF-8", 65536.0);
			if (fp)
				fclose(fp);
			_exit(fp ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_true(rt_is_regular(wpath("s6")));
}

static void test_not_redirected_kinds(void **state)
{
	long before = data_entries();
	int fd;

	(void)state;
	need_shm();
	/* O_TMPFILE: an unnamed file in the directory asked for. */
	fd = iosig_open(&site_tmp, T.work, O_TMPFILE | O_RDWR, 0600, 4096.0);
	if (fd < 0)
		assert_int_equal(errno, EOPNOTSUPP);
	else
		close(fd);
	/* O_DIRECTORY on an existing directory. */
	fd = iosig_open(&site_tmp, T.work, O_DIRECTORY | O_RDONLY, 0, 4096.0);
	assert_true(fd >= 0);
	close(fd);
	/* O_NOFOLLOW on a new path: the caller refuses links, so no link. */
	fd = iosig_open(&site_tmp, wpath("nofollow"), O_CREAT | O_WRONLY | O_NOFOLLOW, 0644,
			4096.0);
	assert_true(fd >= 0);
	close(fd);
	assert_true(rt_is_regular(wpath("nofollow")));
	/* Opening without O_CREAT never redirects. */
	fd = iosig_open(&site_tmp, wpath("nofollow"), O_RDONLY, 0, 4096.0);
	assert_true(fd >= 0);
	close(fd);
	/* persist: the ram mount is volatile, the scratch mount is chosen and it
	 * is the path's own filesystem: direct. */
	fd = iosig_open(&site_persist, wpath("direct"), O_CREAT | O_WRONLY, 0644, 65536.0, 1e6);
	assert_true(fd >= 0);
	close(fd);
	assert_true(rt_is_regular(wpath("direct")));
	assert_int_equal(data_entries(), before);
}

/* ---- environment switches ----------------------------------------------- */

static void test_disable(void **state)
{
	struct stat st;
	FILE *fp;
	int fd;

	(void)state;
	need_shm();
	log_reset();
	rt_setenv("IOSIG_DISABLE", "1");
	fd = iosig_open(&site_tmp, wpath("d1"), O_CREAT | O_WRONLY, 0644, 4096.0);
	assert_true(fd >= 0);
	assert_false(tag_lookup(fd));
	close(fd);
	fp = iosig_fopen(&site_tmp_f, wpath("d2"), "w", 1.0);
	assert_non_null(fp);
	fclose(fp);
	rt_setenv("IOSIG_DISABLE", NULL);
	assert_true(rt_is_regular(wpath("d1")));
	assert_true(rt_is_regular(wpath("d2")));
	/* Pure pass-through: nothing logged. */
	assert_int_equal(stat(T.log, &st), 0);
	assert_int_equal(st.st_size, 0);
	/* "0" and "no" mean off. */
	rt_setenv("IOSIG_DISABLE", "no");
	fd = iosig_open(&site_tmp, wpath("d3"), O_CREAT | O_WRONLY, 0644, 4096.0);
	close(fd);
	rt_setenv("IOSIG_DISABLE", NULL);
	assert_true(rt_is_link_into(wpath("d3"), T.shm_dd));
}

static void test_dryrun(void **state)
{
	struct recs r;
	const struct jv *rec;
	long before = data_entries();
	int fd;

	(void)state;
	need_shm();
	log_reset();
	rt_setenv("IOSIG_DRYRUN", "1");
	fd = iosig_open(&site_tmp, wpath("dry"), O_CREAT | O_WRONLY, 0644, 4096.0);
	rt_setenv("IOSIG_DRYRUN", NULL);
	assert_true(fd >= 0);
	close(fd);
	assert_true(rt_is_regular(wpath("dry")));
	assert_int_equal(data_entries(), before);
	log_read(&r);
	rec = last_event(&r, "decision");
	assert_non_null(rec);
	assert_string_equal(jv_str(rec, "action"), "dryrun");
	assert_string_equal(jv_str(rec, "chosen"), "/dev/shm");
	assert_null(jv_str(rec, "data_path"));
	recs_free(&r);
}

static void test_strict(void **state)
{
	struct recs r;
	const struct jv *rec;
	FILE *fp;
	int fd;

	(void)state;
	/* Nothing is labelled tamperproof: without STRICT the file stays. */
	log_reset();
	fd = iosig_open(&site_tamper, wpath("t1"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_true(rt_is_regular(wpath("t1")));
	log_read(&r);
	rec = last_event(&r, "decision");
	assert_non_null(rec);
	assert_string_equal(jv_str(rec, "action"), "fallback");
	assert_non_null(jv_str(rec, "fallback"));
	recs_free(&r);

	log_reset();
	rt_setenv("IOSIG_STRICT", "1");
	errno = 0;
	fd = iosig_open(&site_tamper, wpath("t2"), O_CREAT | O_WRONLY, 0644);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, RD_STRICT_ERRNO);
	fp = iosig_fopen(&site_tamper, wpath("t3"), "w");
	assert_null(fp);
	assert_int_equal(errno, RD_STRICT_ERRNO);
	assert_int_equal(iosig_prepare(&site_tamper, AT_FDCWD, wpath("t4"), O_CREAT | O_WRONLY),
			 -RD_STRICT_ERRNO);
	/* An existing path is opened whatever the signature. */
	fd = iosig_open(&site_tamper, wpath("t1"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	rt_setenv("IOSIG_STRICT", NULL);
	assert_int_equal(access(wpath("t2"), F_OK), -1);
	assert_int_equal(access(wpath("t3"), F_OK), -1);
	assert_int_equal(access(wpath("t4"), F_OK), -1);
	log_read(&r);
	rec = last_event(&r, "decision");
	assert_string_equal(jv_str(rec, "action"), "existing");
	rec = r.v[0];
	assert_string_equal(jv_str(rec, "action"), "strict");
	assert_int_equal((int)jv_num(rec, "errno", 0), RD_STRICT_ERRNO);
	assert_non_null(strstr(jv_str(rec, "fallback"), "no mount satisfies"));
	recs_free(&r);
}

/* Every documented member of a decision record, for a redirect. */
static void test_log_record(void **state)
{
	const struct jv *rec, *site, *cands, *vals;
	struct recs r;
	bool saw_shm = false;
	int fd;

	(void)state;
	need_shm();
	log_reset();
	fd = iosig_open(&site_tmp, wpath("logged"), O_CREAT | O_WRONLY | O_TRUNC, 0640, 8192.0);
	assert_true(fd >= 0);
	close(fd);
	log_read(&r);
	assert_int_equal(r.n, 1);
	rec = r.v[0];
	assert_string_equal(jv_str(rec, "event"), "decision");
	site = jv_get(rec, "site");
	assert_non_null(site);
	assert_string_equal(jv_str(site, "file"), __FILE__);
	assert_int_equal((int)jv_num(site, "line", 0), site_tmp.line);
	assert_int_equal((int)jv_num(site, "column", 0), 3);
	assert_string_equal(jv_str(site, "call"), "open");
	assert_string_equal(jv_str(rec, "call"), "open");
	assert_string_equal(jv_str(rec, "sig"), site_tmp.sig);
	vals = jv_get(rec, "values");
	assert_non_null(vals);
	assert_int_equal(vals->kind, JV_ARR);
	assert_int_equal(vals->n, 1);
	assert_true(vals->items[0].num == 8192.0);
	assert_non_null(strstr(jv_str(rec, "evaluated"), "size_per_io(8192)"));
	assert_string_equal(jv_str(rec, "path"), wpath("logged"));
	assert_string_equal(jv_str(rec, "abs_path"), wpath("logged"));
	assert_string_equal(jv_str(rec, "flags"), "O_WRONLY|O_CREAT|O_TRUNC");
	assert_string_equal(jv_str(rec, "mode"), "0640");
	cands = jv_get(rec, "candidates");
	assert_non_null(cands);
	assert_int_equal(cands->kind, JV_ARR);
	assert_true(cands->n >= 2);
	for (size_t i = 0; i < cands->n; i++) {
		const char *m = jv_str(&cands->items[i], "mount");

		assert_non_null(m);
		assert_non_null(jv_str(&cands->items[i], "verdict"));
		assert_non_null(jv_str(&cands->items[i], "why"));
		if (!strcmp(m, "/dev/shm")) {
			saw_shm = true;
			assert_string_equal(jv_str(&cands->items[i], "verdict"), "ok");
		}
	}
	assert_true(saw_shm);
	assert_string_equal(jv_str(rec, "chosen"), "/dev/shm");
	assert_string_equal(jv_str(rec, "action"), "redirected");
	assert_non_null(jv_str(rec, "data_path"));
	assert_true(!strncmp(jv_str(rec, "data_path"), T.shm_dd, strlen(T.shm_dd)));
	assert_true(rt_is_link_into(wpath("logged"), jv_str(rec, "data_path")));
	assert_null(jv_str(rec, "fallback"));
	assert_int_equal((int)jv_num(rec, "result", -2), fd);
	assert_int_equal((int)jv_num(rec, "errno", -1), 0);
	assert_true(jv_num(rec, "elapsed_us", -1) >= 0);
	assert_true(jv_num(rec, "pid", 0) == getpid());
	recs_free(&r);
}

/* Nonsensical values: the open happens, one warning per site. */
static void test_nonsense_values(void **state)
{
	struct recs r;
	int warnings = 0, fd;

	(void)state;
	log_reset();
	for (int i = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "neg%d", i);
		fd = iosig_open(&site_neg, wpath(name), O_CREAT | O_WRONLY, 0644, -4096.0);
		assert_true(fd >= 0);
		close(fd);
		assert_true(rt_is_regular(wpath(name)));
	}
	/* A text that does not parse: the same, never retried. */
	fd = iosig_open(&site_badtext, wpath("badtext"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	fd = iosig_open(&site_badtext, wpath("badtext2"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	log_read(&r);
	for (int i = 0; i < r.n; i++) {
		const char *ev = jv_str(r.v[i], "event");

		if (!strcmp(ev, "warning"))
			warnings++;
		else
			assert_string_equal(jv_str(r.v[i], "action"), "ignored");
	}
	assert_int_equal(warnings, 2);
	assert_int_equal(r.n, 7);
	recs_free(&r);
}

/* A descriptor of another ABI, or none: the plain call, nothing read. */
static void test_bad_site(void **state)
{
	static const struct iosig_site future = { 99, 3, "tmp", "x.c", 1, 1, "open" };
	int fd;

	(void)state;
	fd = iosig_open(&future, wpath("abi"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_true(rt_is_regular(wpath("abi")));
	fd = iosig_open(NULL, wpath("nosite"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_true(rt_is_regular(wpath("nosite")));
}

/* ---- tags --------------------------------------------------------------- */

static void test_tags(void **state)
{
	static struct tag_info info;
	int fd, fd2, d;

	(void)state;
	need_shm();
	/* Earlier tests closed tagged descriptors: start from a clean table. */
	tag_clear_all();
	fd = iosig_open(&site_tmp, wpath("tagged"), O_CREAT | O_RDWR, 0644, 4096.0);
	assert_true(fd >= 0);
	assert_true(tag_lookup(fd));
	assert_int_equal(tag_get(fd, TAG_VERIFY, &info), 0);
	assert_true(info.redirected);
	assert_string_equal(info.orig_path, wpath("tagged"));
	assert_true(!strncmp(info.data_path, T.shm_dd, strlen(T.shm_dd)));
	assert_non_null(info.mount);
	assert_string_equal(info.mount->path, "/dev/shm");
	assert_int_equal(info.sig.size_per_io, 4096);
	assert_true(info.sig.set & IOSIG_HAS(IOSIG_P_TMP));
	/* dup is not tagged: the runtime only knows what it opened. */
	d = dup(fd);
	assert_false(tag_lookup(d));
	assert_int_equal(tag_get(d, TAG_VERIFY, &info), -ENOENT);
	close(d);
	/* Closed and reused by a plain open: the stale tag is detected. */
	close(fd);
	fd2 = open("/dev/null", O_RDONLY);
	assert_int_equal(fd2, fd);
	assert_true(tag_lookup(fd2));
	assert_int_equal(tag_get(fd2, TAG_VERIFY, &info), -ESTALE);
	assert_false(tag_lookup(fd2));
	close(fd2);
	/* An annotated open of the link the runtime made opens its data file
	 * through the checked data directory: tagged with where the data is. */
	fd = iosig_open(&site_tmp, wpath("tagged"), O_RDONLY, 0, 4096.0);
	assert_int_equal(tag_get(fd, 0, &info), 0);
	assert_true(info.redirected);
	assert_true(!strncmp(info.data_path, T.shm_dd, strlen(T.shm_dd)));
	close(fd);
	/* An existing file is tagged, not redirected. */
	assert_int_equal(tfile_write(wpath("plain-tagged"), "x"), 0);
	fd = iosig_open(&site_tmp, wpath("plain-tagged"), O_RDONLY, 0, 4096.0);
	assert_int_equal(tag_get(fd, 0, &info), 0);
	assert_false(info.redirected);
	assert_string_equal(info.data_path, "");
	close(fd);
	/* Reused by a pass-through call: the tag is dropped. */
	rt_setenv("IOSIG_DISABLE", "1");
	fd2 = iosig_open(&site_tmp, wpath("tagged"), O_RDONLY, 0, 4096.0);
	rt_setenv("IOSIG_DISABLE", NULL);
	assert_int_equal(fd2, fd);
	assert_false(tag_lookup(fd2));
	close(fd2);
	/* Streams are tagged by their descriptor. */
	{
		FILE *fp = iosig_fopen(&site_tmp_f, wpath("tagged-stream"), "w", 65536.0);

		assert_non_null(fp);
		assert_int_equal(tag_get(fileno(fp), TAG_VERIFY, &info), 0);
		assert_int_equal(info.sig.size_per_io, 65536);
		fclose(fp);
	}
	assert_false(tag_lookup(-1));
	assert_false(tag_lookup(TAG_MAX_FD + 5));
}

/* ---- prepare and jobwide ------------------------------------------------ */

static void test_prepare(void **state)
{
	char buf[16];
	int fd;

	(void)state;
	need_shm();
	assert_int_equal(iosig_prepare(&site_tmp, AT_FDCWD, wpath("prep"), O_CREAT | O_WRONLY | O_TRUNC,
				       4096.0), 0);
	assert_true(rt_is_link_into(wpath("prep"), T.shm_dd));
	/* The program's own open follows the link. */
	fd = open(wpath("prep"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "pp", 2), 2);
	close(fd);
	check_redirected(wpath("prep"), "pp");
	/* Existing path: nothing to do. */
	assert_int_equal(iosig_prepare(&site_tmp, AT_FDCWD, wpath("prep"), O_CREAT | O_WRONLY,
				       4096.0), 0);
	/* O_EXCL: the program's open must create it. */
	assert_int_equal(iosig_prepare(&site_tmp, AT_FDCWD, wpath("prep2"),
				       O_CREAT | O_EXCL | O_WRONLY, 4096.0), 0);
	assert_int_equal(access(wpath("prep2"), F_OK), -1);
	/* Not creating: nothing to do. */
	assert_int_equal(iosig_prepare(&site_tmp, AT_FDCWD, wpath("prep3"), O_RDONLY, 4096.0), 0);
	assert_int_equal(access(wpath("prep3"), F_OK), -1);
	/* A missing directory: the internal failure is reported, nothing made. */
	assert_true(iosig_prepare(&site_tmp, AT_FDCWD, wpath("nodir/p"), O_CREAT | O_WRONLY,
				  4096.0) <= 0);
	(void)buf;
}

/* Writes `content` into a new file at path the way a wrapper would. */
static void wrapper_writes(const char *path, const char *fmode, const char *content)
{
	FILE *fp = fopen(path, fmode);

	assert_non_null(fp);
	assert_true(fputs(content, fp) >= 0);
	assert_int_equal(fclose(fp), 0);
}

static void test_opener(void **state)
{
	const char *p;
	struct recs r;
	const struct jv *rec;
	long before;
	int fd, dfd;

	(void)state;
	need_shm();
	log_reset();
	/* A wrapper that opens the path it is given ("w"): the link comes
	 * first, the wrapper's fopen creates the data file through it. */
	errno = 1234;
	p = iosig_opener_begin(&site_opener, AT_FDCWD, wpath("op1"), 0, "w", 4096.0);
	assert_int_equal(errno, 1234);
	assert_string_equal(p, wpath("op1"));
	assert_true(rt_is_link_into(wpath("op1"), T.shm_dd));
	wrapper_writes(p, "w", "o1");
	iosig_opener_end(&site_opener);
	assert_int_equal(errno, 1234);
	check_redirected(wpath("op1"), "o1");
	log_read(&r);
	rec = last_event(&r, "decision");
	assert_non_null(rec);
	assert_string_equal(jv_str(rec, "call"), "opener");
	assert_string_equal(jv_str(rec, "action"), "linked");
	assert_string_equal(jv_str(jv_get(rec, "site"), "call"), "wrapper");
	recs_free(&r);

	/* Exclusive (bzip2's "x", gzip's O_EXCL relative to a directory):
	 * the wrapper gets the data file's own path. */
	p = iosig_opener_begin(&site_opener, AT_FDCWD, wpath("op2"), 0, "wx", 4096.0);
	assert_string_not_equal(p, wpath("op2"));
	assert_int_equal(strncmp(p, T.shm_dd, strlen(T.shm_dd)), 0);
	wrapper_writes(p, "wx", "o2");
	iosig_opener_end(&site_opener);
	check_redirected(wpath("op2"), "o2");
	dfd = open(T.work, O_RDONLY | O_DIRECTORY);
	p = iosig_opener_begin(&site_opener, dfd, "op3", O_WRONLY | O_CREAT | O_EXCL, NULL, 4096.0);
	assert_int_equal(p[0], '/');
	fd = openat(dfd, p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "o3", 2), 2);
	close(fd);
	iosig_opener_end(&site_opener);
	close(dfd);
	check_redirected(wpath("op3"), "o3");

	/* A wrapper that opens nothing (sqlite3's "stdout"): the link goes. */
	log_reset();
	before = data_entries();
	p = iosig_opener_begin(&site_opener, AT_FDCWD, wpath("op4"), 0, "w", 4096.0);
	assert_true(rt_is_link_into(wpath("op4"), T.shm_dd));
	iosig_opener_end(&site_opener);
	assert_int_equal(access(wpath("op4"), F_OK), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(data_entries(), before);
	log_read(&r);
	assert_non_null(last_event(&r, "unlinked"));
	recs_free(&r);

	/* An existing path, an open that creates nothing, a bad mode: the
	 * path as it is, nothing made. */
	p = iosig_opener_begin(&site_opener, AT_FDCWD, wpath("op1"), 0, "w", 4096.0);
	assert_string_equal(p, wpath("op1"));
	iosig_opener_end(&site_opener);
	p = iosig_opener_begin(&site_opener, AT_FDCWD, wpath("op5"), O_RDONLY, NULL, 4096.0);
	iosig_opener_end(&site_opener);
	p = iosig_opener_begin(&site_opener, AT_FDCWD, wpath("op6"), 0, "q", 4096.0);
	iosig_opener_end(&site_opener);
	assert_int_equal(access(wpath("op5"), F_OK), -1);
	assert_int_equal(access(wpath("op6"), F_OK), -1);
	assert_int_equal(data_entries(), before);
	/* An end without its begin changes nothing. */
	iosig_opener_end(&site_opener2);
	check_redirected(wpath("op1"), "o1");
}

/* A call of an opener inside the call of another (deeper on the stack). */
static __attribute__((noinline)) void nested_opener(void)
{
	const char *p = iosig_opener_begin(&site_opener2, AT_FDCWD, wpath("in"), 0, "w");

	wrapper_writes(p, "w", "in");
	iosig_opener_end(&site_opener2);
}

static void test_opener_nesting(void **state)
{
	const char *p;

	(void)state;
	need_shm();
	/* Nested: the outer call's link stays while the inner one runs. */
	p = iosig_opener_begin(&site_opener, AT_FDCWD, wpath("out"), 0, "w", 1.0);
	nested_opener();
	assert_true(rt_is_link_into(wpath("out"), T.shm_dd));
	wrapper_writes(p, "w", "out");
	iosig_opener_end(&site_opener);
	check_redirected(wpath("in"), "in");
	check_redirected(wpath("out"), "out");
	/* A call left by an exception or a longjmp (no end): the next call
	 * from the same frame finishes it; its link (to no file) goes. */
	(void)iosig_opener_begin(&site_opener, AT_FDCWD, wpath("left"), 0, "w", 1.0);
	assert_true(rt_is_link_into(wpath("left"), T.shm_dd));
	p = iosig_opener_begin(&site_opener, AT_FDCWD, wpath("next"), 0, "w", 1.0);
	assert_int_equal(access(wpath("left"), F_OK), -1);
	assert_false(rt_is_link_into(wpath("left"), T.shm_dd));
	wrapper_writes(p, "w", "next");
	iosig_opener_end(&site_opener);
	check_redirected(wpath("next"), "next");
	/* IOSIG_DISABLE: the path, nothing else. */
	rt_setenv("IOSIG_DISABLE", "1");
	p = iosig_opener_begin(&site_opener, AT_FDCWD, wpath("off"), 0, "w", 1.0);
	iosig_opener_end(&site_opener);
	rt_setenv("IOSIG_DISABLE", NULL);
	assert_string_equal(p, wpath("off"));
	assert_int_equal(access(wpath("off"), F_OK), -1);
}

static void test_jobwide(void **state)
{
	struct iosig_sig sig;
	struct rt_job job;
	struct recs r;

	(void)state;
	rt_jobwide_reset();
	unsetenv("IOSIG_JOB_ID");
	log_reset();
	iosig_jobwide(&site_jobwide, 7200.0);
	log_read(&r);
	assert_non_null(last_event(&r, "jobwide"));
	recs_free(&r);
	/* The job name is the job identity when no launcher names the job. */
	rt_job_identity(&job);
	if (!getenv("SLURM_JOB_ID") && !getenv("PBS_JOBID") && !getenv("PMIX_NAMESPACE") &&
	    !getenv("OMPI_MCA_ess_base_jobid") && !getenv("LSB_JOBID") && !getenv("FLUX_JOB_ID") &&
	    !getenv("COBALT_JOBID") && !getenv("PMI_KVSNAME") && !getenv("SLURM_JOBID")) {
		assert_string_equal(job.id, "job-from-pragma");
		assert_string_equal(job.source, "jobwide name");
	}
	/* An explicit IOSIG_JOB_ID wins; launchers win over the pragma. */
	setenv("IOSIG_JOB_ID", "explicit-7", 1);
	rt_job_identity(&job);
	assert_string_equal(job.id, "explicit-7");
	unsetenv("IOSIG_JOB_ID");
	setenv("SLURM_JOB_ID", "4242", 1);
	rt_job_identity(&job);
	assert_string_equal(job.id, "4242");
	assert_string_equal(job.source, "SLURM_JOB_ID");
	unsetenv("SLURM_JOB_ID");
	/* The lifetime becomes the default of later signatures. */
	memset(&sig, 0, sizeof(sig));
	rt_jobwide_apply(&sig);
	assert_true(sig.set & IOSIG_HAS(IOSIG_P_LIFETIME));
	assert_true(sig.lifetime == 7200.0);
	sig.lifetime = 10;
	rt_jobwide_apply(&sig);
	assert_true(sig.lifetime == 10);
	rt_jobwide_reset();
}

/* ---- threads and fork --------------------------------------------------- */

#define NTHREADS 4
#define PER_THREAD 40

static void *opener(void *arg)
{
	long t = (long)arg;
	static struct tag_info info[NTHREADS];
	long bad = 0;

	for (int i = 0; i < PER_THREAD; i++) {
		char name[64], text[64], buf[64];
		int fd;

		snprintf(name, sizeof(name), "thr-%ld-%d", t, i);
		snprintf(text, sizeof(text), "%ld:%d", t, i);
		fd = iosig_open(&site_tmp, wpath(name), O_CREAT | O_WRONLY | O_EXCL, 0644,
				(double)(4096 * (i % 3 + 1)));
		if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
			bad++;
			continue;
		}
		if (tag_get(fd, TAG_VERIFY, &info[t]) || strcmp(info[t].orig_path, wpath(name)) ||
		    info[t].sig.size_per_io != (uint64_t)(4096 * (i % 3 + 1)))
			bad++;
		close(fd);
		if (!rt_is_link_into(wpath(name), T.shm_dd) ||
		    rt_read_file(wpath(name), buf, sizeof(buf)) < 0 || strcmp(buf, text))
			bad++;
	}
	return (void *)bad;
}

static void test_threads(void **state)
{
	pthread_t th[NTHREADS];
	long total = 0;

	(void)state;
	need_shm();
	for (long t = 0; t < NTHREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, opener, (void *)t), 0);
	for (int t = 0; t < NTHREADS; t++) {
		void *r;

		pthread_join(th[t], &r);
		total += (long)r;
	}
	assert_int_equal(total, 0);
}

static volatile int spin_stop;

static void *spinner(void *arg)
{
	long i = 0;

	(void)arg;
	while (!spin_stop) {
		char name[64];
		int fd;

		snprintf(name, sizeof(name), "spin-%ld", i++ % 8);
		unlink(wpath(name));
		fd = iosig_open(&site_tmp, wpath(name), O_CREAT | O_WRONLY, 0644, 4096.0);
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

/* fork while another thread is inside libiosig: the child never deadlocks. */
static void test_fork(void **state)
{
	pthread_t th;

	(void)state;
	spin_stop = 0;
	assert_int_equal(pthread_create(&th, NULL, spinner, NULL), 0);
	for (int i = 0; i < 20; i++) {
		int status;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			char name[64];
			int fd;

			alarm(10);
			snprintf(name, sizeof(name), "child-%d", i);
			fd = iosig_open(&site_tmp, wpath(name), O_CREAT | O_WRONLY, 0644, 4096.0);
			_exit(fd >= 0 ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	spin_stop = 1;
	pthread_join(th, NULL);
}

/* ---- setup -------------------------------------------------------------- */

static void cleanup(void)
{
	rt_rmtree(T.work);
	if (T.have_shm)
		rt_rmtree(T.shm_dd);
}

int main(void)
{
	static const char *const hdd[] = { "class: hdd", "volatile: false", NULL };
	static const char *const ram[] = { "class: ram", "volatile: true", NULL };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errno_parity),
		cmocka_unit_test(test_errno_parity_freopen),
		cmocka_unit_test(test_errno_eacces),
		cmocka_unit_test(test_existing_untouched),
		cmocka_unit_test(test_redirect_open_forms),
		cmocka_unit_test(test_redirect_stream_forms),
		cmocka_unit_test(test_not_redirected_kinds),
		cmocka_unit_test(test_disable),
		cmocka_unit_test(test_dryrun),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_log_record),
		cmocka_unit_test(test_nonsense_values),
		cmocka_unit_test(test_bad_site),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_opener),
		cmocka_unit_test(test_opener_nesting),
		cmocka_unit_test(test_jobwide),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_fork),
	};
	struct rt_mount_cfg mounts[2];
	char cwd[900], mnt[PATH_MAX], cfg[1100];
	struct statfs sf;
	int rc;

	if (!getcwd(cwd, sizeof(cwd)))
		return 1;
	rt_scratch(cwd, "rt-api", T.work, sizeof(T.work));
	snprintf(T.work_dd, sizeof(T.work_dd), "%s/dd", T.work);
	snprintf(T.log, sizeof(T.log), "%s/decisions.jsonl", T.work);
	snprintf(cfg, sizeof(cfg), "%s/config.yaml", T.work);
	rt_mount_of(T.work, mnt, sizeof(mnt));
	mounts[0] = (struct rt_mount_cfg){ mnt, T.work_dd, hdd };
	T.have_shm = !statfs("/dev/shm", &sf) && sf.f_type == TMPFS_MAGIC &&
		     rt_dev_of("/dev/shm") != rt_dev_of(T.work) && access("/dev/shm", W_OK) == 0;
	snprintf(T.shm_dd, sizeof(T.shm_dd), "/dev/shm/iosig-rt-api-%d", (int)getpid());
	mounts[1] = (struct rt_mount_cfg){ "/dev/shm", T.shm_dd, ram };
	rt_write_config(cfg, mounts, T.have_shm ? 2 : 1);
	/* Ours from the start: a child that drops privileges must not be the
	 * one that creates them. */
	mkdir(T.work_dd, 0700);
	if (T.have_shm)
		mkdir(T.shm_dd, 0700);
	if (!T.have_shm)
		fprintf(stderr, "note: /dev/shm is not a separate writable tmpfs: redirect cases skip\n");
	setenv("IOSIG_LOG", T.log, 1);
	unsetenv("IOSIG_DISABLE");
	unsetenv("IOSIG_DRYRUN");
	unsetenv("IOSIG_STRICT");
	rt_env_reload();
	declog_reset();
	if (tfile_write(T.log, "") || chdir(T.work)) {
		perror(T.log);
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (chdir(cwd))
		return 1;
	if (!getenv("IOSIG_TEST_KEEP"))
		cleanup();
	return rc;
}
