/* SPDX-License-Identifier: MIT */
/*
 * preload.c - libiosig-preload.so, the LD_PRELOAD library of
 * iosig-redirect (docs/redirect.md).  It interposes the calls that open
 * files by name (open, open64, __open_2, __open64_2, openat, openat64,
 * __openat_2, __openat64_2, creat, creat64, fopen, fopen64, freopen,
 * freopen64) and those that remove them (unlink, unlinkat, remove); a call
 * whose path matches a rule of $IOSIG_REDIRECT_RULES goes to libiosig's
 * redirection (rd_openat, rd_fopen, rd_freopen) with the rule's signature,
 * every other call goes to the next definition (libc), and then to links.c
 * when the path is a link the runtime made (an open that refused it with
 * O_NOFOLLOW, an unlink of it: links.h).  links.c, linked in here too,
 * holds the other calls on links (lstat, readlink, rename ...).  This
 * library holds only the matcher and needs nothing but libc; the runtime
 * is in libiosig-preload-core.so, loaded by the first call that matches
 * (preload_core.h), so a program whose opens match no rule never loads the
 * catalog, libmount or libyaml.
 *
 * Cost of a call that matches nothing: a thread-local load, an atomic load
 * and rules_quick_reject() (a strlen, a bitmap test and, when the last byte
 * could end a rule's pattern, a comparison per rule); no allocation and no
 * system call besides the real one.  Only a path that could match is made
 * absolute (getcwd or /proc/self/fd) and matched in full.
 *
 * Recursion: libiosig itself opens files (configuration, mount table, data
 * directories, the decision log).  Every call into libiosig runs with the
 * thread-local iosig_real_busy raised (realfn.h: shared with a libiosig.so
 * the program links), and an interposer that sees it goes to the real
 * function at once.  Both halves are linked from their own copies
 * of libiosig's objects with hidden visibility, -Bsymbolic and a version
 * script exporting only the interposers (the core: only `pl_core`), so
 * libiosig's references inside them never leave them (not even to a
 * libiosig.so the program links).
 *
 * Fork: no lock is held between calls (the runtime's own locks are taken
 * around fork by pthread_atfork), and a program with threads loads the core
 * before it forks (see before_fork).  vfork children must only exec: an
 * open that matches a rule in a vfork child runs libiosig in the parent's
 * memory.
 */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/single_threaded.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"
#include "interpose.h"
#include "links.h"
#include "preload_core.h"
#include "realfn.h"
#include "redirect.h"
#include "rules.h"

#define PL_EXPORT __attribute__((visibility("default")))

/* libc declares these only for _FORTIFY_SOURCE builds. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* The rules: `unloaded` until the first look, then NULL (none) or the set.
 * Published once with a compare-and-swap and never freed. */
static const struct rules unloaded_mark;
#define UNLOADED (&unloaded_mark)
static const struct rules *_Atomic active = UNLOADED;

/* ------------------------------------------------------------------------
 * The real functions
 * ---------------------------------------------------------------------- */

typedef int (*open_fn)(const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*openat2_fn)(int, const char *, int);
typedef int (*creat_fn)(const char *, mode_t);
typedef FILE *(*fopen_fn)(const char *, const char *);
typedef FILE *(*freopen_fn)(const char *, const char *, FILE *);

enum real_id {
	R_OPEN, R_OPEN64, R_OPEN_2, R_OPEN64_2, R_OPENAT, R_OPENAT64, R_OPENAT_2, R_OPENAT64_2,
	R_CREAT, R_CREAT64, R_FOPEN, R_FOPEN64, R_FREOPEN, R_FREOPEN64, R_UNLINK, R_UNLINKAT,
	R_REMOVE, R_COUNT
};

static const char *const real_names[R_COUNT] = {
	"open", "open64", "__open_2", "__open64_2", "openat", "openat64", "__openat_2",
	"__openat64_2", "creat", "creat64", "fopen", "fopen64", "freopen", "freopen64",
	"unlink", "unlinkat", "remove",
};

static void *_Atomic reals[R_COUNT];

/* The next definition of a function after this library (libc's).  A
 * lookup that fails (no such symbol: cannot happen with glibc) returns
 * NULL and the caller fails with ENOSYS. */
static void *real(enum real_id id)
{
	void *p = atomic_load_explicit(&reals[id], memory_order_acquire);

	if (unlikely(!p)) {
		real_enter();
		p = dlsym(RTLD_NEXT, real_names[id]);
		real_leave();
		atomic_store_explicit(&reals[id], p, memory_order_release);
	}
	return p;
}

/* ------------------------------------------------------------------------
 * The core (preload_core.h), loaded by the first call that matches
 * ---------------------------------------------------------------------- */

static const struct pl_core_ops *_Atomic core_ops;
static atomic_bool core_failed;

/*
 * Loads libiosig-preload-core.so from the directory this library was loaded
 * from.  NULL if it cannot be (then no rule applies: the program runs as
 * without iosig-redirect; iosig-redirect checks at start that it is there).
 */
static const struct pl_core_ops *load_core(void)
{
	const struct pl_core_ops *ops = NULL;
	char path[PATH_MAX];
	const char *slash;
	Dl_info info;
	void *h;

	real_enter();
	if (dladdr((void *)load_core, &info) && info.dli_fname &&
	    (slash = strrchr(info.dli_fname, '/')) &&
	    (size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - info.dli_fname),
			     info.dli_fname, PL_CORE_NAME) < sizeof(path)) {
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		ops = h ? dlsym(h, PL_CORE_SYMBOL) : NULL;
		if (ops && ops->version != PL_CORE_VERSION)
			ops = NULL;
	}
	if (ops) {
		/* The daemon client takes our table of tagged descriptors. */
		interpose_set_client(ops->client_attach(&interpose_host));
		atomic_store_explicit(&core_ops, ops, memory_order_release);
	}
	else
		atomic_store(&core_failed, true);
	real_leave();
	return ops;
}

/* The core, loaded if need be; NULL if it cannot be.  Called inside the
 * runtime (real_enter()). */
static const struct pl_core_ops *core(void)
{
	const struct pl_core_ops *ops = atomic_load_explicit(&core_ops, memory_order_acquire);

	if (likely(ops) || atomic_load(&core_failed))
		return ops;
	return load_core();
}

/*
 * Before fork in a program with several threads: load the core now.  A
 * child must never dlopen it: if another thread was inside the dynamic
 * loader at the fork, the loader's lock stays taken in the child (glibc
 * before 2.38).  Single-threaded programs (and every program until it
 * matches a rule or forks with threads) never pay for loading it.
 */
static void before_fork(void)
{
	int saved = errno;

	if (!__libc_single_threaded && !atomic_load_explicit(&core_ops, memory_order_acquire) &&
	    !atomic_load(&core_failed))
		load_core();
	errno = saved;
}

/* ------------------------------------------------------------------------
 * Rules
 * ---------------------------------------------------------------------- */

/* Decodes $IOSIG_REDIRECT_RULES once; a broken value is logged (IOSIG_LOG)
 * and means "no rules": the program runs as without iosig-redirect. */
static const struct rules *load_rules(void)
{
	const struct rules *expected = UNLOADED;
	struct iosig_error err;
	struct rules *rs = NULL;
	const char *env;
	int saved = errno;

	real_enter();
	env = env_get(RULES_ENV);
	if (env && *env) {
		rs = rules_new();
		memset(&err, 0, sizeof(err));
		if (rs && rules_decode(rs, env, strlen(env), &err) < 0) {
			char msg[400];

			snprintf(msg, sizeof(msg), "%s: %s; no rule applies in this process", RULES_ENV,
				 err.msg);
			if (core())
				core()->warn(msg);
			rules_free(rs);
			rs = NULL;
		}
		if (rs && !rs->n) {
			rules_free(rs);
			rs = NULL;
		}
	}
	if (!atomic_compare_exchange_strong(&active, &expected, rs)) {
		/* Another thread was first. */
		rules_free(rs);
		rs = (struct rules *)expected;
	}
	real_leave();
	errno = saved;
	return rs;
}

/* Read the rules at start-up, before the program can change its
 * environment; interposers called earlier (constructors of other
 * libraries) load them themselves. */
__attribute__((constructor)) static void preload_init(void)
{
	const struct rules *rs = atomic_load_explicit(&active, memory_order_acquire);

	if (rs == UNLOADED)
		rs = load_rules();
	if (rs)
		pthread_atfork(before_fork, NULL, NULL);
}

/*
 * Names of directory descriptors, per thread.  Naming a descriptor through
 * /proc/self/fd costs several times an open; programs that walk trees
 * (tar, cp -r) open every file relative to the descriptor of its
 * directory.  An entry is used only while fstat still shows the same
 * directory (st_dev, st_ino), and only to reject: a path that matches is
 * named afresh before it is redirected.  A directory renamed while open
 * keeps its old name here, so a file opened in it after the rename may be
 * left where the program puts it.
 */
#define DIRCACHE_SLOTS 4
#define DIRCACHE_PATH 512

struct dircache_entry {
	int fd;                       /* -1: empty */
	dev_t dev;
	ino_t ino;
	char path[DIRCACHE_PATH];     /* absolute, as /proc/self/fd names it */
};

static __thread struct dircache_entry dircache[DIRCACHE_SLOTS]
	__attribute__((tls_model("initial-exec")));
static __thread unsigned dircache_next __attribute__((tls_model("initial-exec")));
static __thread bool dircache_ready __attribute__((tls_model("initial-exec")));

/* The name of directory descriptor dirfd into dir (size PATH_MAX), from
 * the cache when fstat shows the directory is the same.  *ret_cached says
 * where it came from.  0 or -errno. */
static int dir_name(int dirfd, char *dir, bool *ret_cached)
{
	struct dircache_entry *e = NULL;
	struct stat st;
	int r;

	*ret_cached = false;
	if (!dircache_ready) {
		for (unsigned i = 0; i < DIRCACHE_SLOTS; i++)
			dircache[i].fd = -1;
		dircache_ready = true;
	}
	if (fstat(dirfd, &st))
		return -errno;
	for (unsigned i = 0; i < DIRCACHE_SLOTS; i++) {
		if (dircache[i].fd == dirfd) {
			e = &dircache[i];
			break;
		}
	}
	if (e && e->dev == st.st_dev && e->ino == st.st_ino) {
		strcpy(dir, e->path);
		*ret_cached = true;
		return 0;
	}
	r = rules_dir_path(dirfd, dir, PATH_MAX);
	if (r < 0)
		return r;
	if (!e)
		e = &dircache[dircache_next++ % DIRCACHE_SLOTS];
	e->fd = -1;
	if (strlen(dir) < sizeof(e->path)) {
		strcpy(e->path, dir);
		e->dev = st.st_dev;
		e->ino = st.st_ino;
		e->fd = dirfd;
	}
	return 0;
}

/* The first rule matching `path` relative to dirfd, or NULL. */
static const struct rules_rule *match_path(const struct rules *rs, int dirfd, const char *path)
{
	const struct rules_rule *rule;
	char dir[PATH_MAX], abs[PATH_MAX];
	bool cached;

	if (path[0] == '/' || dirfd == AT_FDCWD)
		return rules_abs_path(dirfd, path, abs, sizeof(abs)) == 0 ? rules_match(rs, abs) : NULL;
	if (dir_name(dirfd, dir, &cached) || rules_abs_join(dir, path, abs, sizeof(abs)))
		return NULL;
	rule = rules_match(rs, abs);
	if (!rule || !cached)
		return rule;
	/* Confirm with the directory's current name. */
	return rules_abs_path(dirfd, path, abs, sizeof(abs)) == 0 ? rules_match(rs, abs) : NULL;
}

/*
 * The rule for a file opened as `path` relative to dirfd, or NULL (no
 * rules, inside libiosig, nothing matches).  Keeps errno.
 */
static const struct rules_rule *find_rule(int dirfd, const char *path)
{
	const struct rules *rs;
	const struct rules_rule *rule;
	int saved;

	if (real_inside())
		return NULL;
	rs = atomic_load_explicit(&active, memory_order_acquire);
	if (unlikely(rs == UNLOADED))
		rs = load_rules();
	if (!rs || rules_quick_reject(rs, path))
		return NULL;
	saved = errno;
	real_enter();
	rule = match_path(rs, dirfd, path);
	real_leave();
	errno = saved;
	return rule;
}

/* A request for libiosig from a matching rule. */
static void rule_req(struct rd_req *req, const struct rules_rule *rule, const char *call,
		     int dirfd, const char *path, int flags, mode_t mode, const char *fmode)
{
	memset(req, 0, sizeof(*req));
	req->site = &rule->site;
	req->sig = &rule->sig;
	req->call = call;
	req->dirfd = dirfd;
	req->path = path;
	req->flags = flags;
	req->mode = mode;
	req->fmode = fmode;
	req->nofollow_ok = true;
}

static int redirect_open(const struct rules_rule *rule, const char *call, int dirfd,
			 const char *path, int flags, mode_t mode)
{
	const struct pl_core_ops *ops;
	struct rd_req req;
	int fd;

	rule_req(&req, rule, call, dirfd, path, flags, mode, NULL);
	real_enter();
	ops = core();
	if (ops)
		ops->matched(rule);
	fd = ops ? ops->openat(&req) : openat(dirfd, path, flags, mode);
	real_leave();
	return fd;
}

static FILE *redirect_fopen(const struct rules_rule *rule, const char *call, const char *path,
			    const char *mode, FILE *stream, bool large)
{
	const struct pl_core_ops *ops;
	struct rd_req req;
	FILE *fp;

	rule_req(&req, rule, call, AT_FDCWD, path, 0, 0, mode);
	real_enter();
	ops = core();
	if (ops) {
		ops->matched(rule);
		fp = stream ? ops->freopen(&req, stream, large) : ops->fopen(&req, large);
	} else {
		fp = stream ? freopen(path, mode, stream) : fopen(path, mode);
	}
	real_leave();
	return fp;
}

/* ------------------------------------------------------------------------
 * open(2) family
 * ---------------------------------------------------------------------- */

static int no_real(void)
{
	errno = ENOSYS;
	return -1;
}

/*
 * Every open-like interposer: the rule's redirection when the path matches
 * one, else the real function `id` with the arguments it takes.  `lfs` is
 * added to the flags of a redirected call (O_LARGEFILE for the *64 calls).
 */
static int open_any(enum real_id id, const char *call, int dirfd, const char *path, int flags,
		    mode_t mode, int lfs)
{
	const struct rules_rule *rule = NULL;
	bool fortify = id == R_OPEN_2 || id == R_OPEN64_2 || id == R_OPENAT_2 || id == R_OPENAT64_2;
	int saved = errno, fd;
	void *fn;

	/* The _FORTIFY_SOURCE variants have no mode: with O_CREAT they abort
	 * in libc, which is left to do so. */
	if (!fortify || !__OPEN_NEEDS_MODE(flags))
		rule = find_rule(dirfd, path);
	if (rule)
		return redirect_open(rule, call, dirfd, path, flags | lfs, mode);
	fn = real(id);
	if (!fn)
		return no_real();
	switch (id) {
	case R_OPEN_2:
	case R_OPEN64_2:
		fd = ((open2_fn)fn)(path, flags);
		break;
	case R_OPENAT:
	case R_OPENAT64:
		fd = ((openat_fn)fn)(dirfd, path, flags, mode);
		break;
	case R_OPENAT_2:
	case R_OPENAT64_2:
		fd = ((openat2_fn)fn)(dirfd, path, flags);
		break;
	case R_CREAT:
	case R_CREAT64:
		return ((creat_fn)fn)(path, mode);
	default:
		fd = ((open_fn)fn)(path, flags, mode);
		break;
	}
	/* An O_NOFOLLOW open that refused a link the runtime made: its data. */
	return links_open_result(fd, saved, dirfd, path, flags);
}

PL_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	return open_any(R_OPEN, "open", AT_FDCWD, path, flags, mode, 0);
}

PL_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	return open_any(R_OPEN64, "open64", AT_FDCWD, path, flags, mode, O_LARGEFILE);
}

PL_EXPORT int __open_2(const char *path, int flags)
{
	return open_any(R_OPEN_2, "__open_2", AT_FDCWD, path, flags, 0, 0);
}

PL_EXPORT int __open64_2(const char *path, int flags)
{
	return open_any(R_OPEN64_2, "__open64_2", AT_FDCWD, path, flags, 0, O_LARGEFILE);
}

PL_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	return open_any(R_OPENAT, "openat", dirfd, path, flags, mode, 0);
}

PL_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	return open_any(R_OPENAT64, "openat64", dirfd, path, flags, mode, O_LARGEFILE);
}

PL_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return open_any(R_OPENAT_2, "__openat_2", dirfd, path, flags, 0, 0);
}

PL_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return open_any(R_OPENAT64_2, "__openat64_2", dirfd, path, flags, 0, O_LARGEFILE);
}

PL_EXPORT int creat(const char *path, mode_t mode)
{
	return open_any(R_CREAT, "creat", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, 0);
}

PL_EXPORT int creat64(const char *path, mode_t mode)
{
	return open_any(R_CREAT64, "creat64", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode,
			O_LARGEFILE);
}

/* ------------------------------------------------------------------------
 * Streams
 * ---------------------------------------------------------------------- */

/*
 * Every stream interposer: fopen when stream is NULL, else freopen.
 * freopen(NULL, mode, stream) changes the mode of the open stream: not an
 * open by name, passed through.
 */
static FILE *fopen_any(enum real_id id, const char *call, const char *path, const char *mode,
		       FILE *stream, bool large)
{
	const struct rules_rule *rule = path ? find_rule(AT_FDCWD, path) : NULL;
	void *fn;

	if (stream)
		interpose_stream_leaving(stream);
	if (rule)
		return redirect_fopen(rule, call, path, mode, stream, large);
	fn = real(id);
	if (!fn) {
		errno = ENOSYS;
		return NULL;
	}
	if (id == R_FREOPEN || id == R_FREOPEN64)
		return ((freopen_fn)fn)(path, mode, stream);
	return ((fopen_fn)fn)(path, mode);
}

PL_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return fopen_any(R_FOPEN, "fopen", path, mode, NULL, false);
}

PL_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return fopen_any(R_FOPEN64, "fopen64", path, mode, NULL, true);
}

PL_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	return fopen_any(R_FREOPEN, "freopen", path, mode, stream, false);
}

PL_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	return fopen_any(R_FREOPEN64, "freopen64", path, mode, stream, true);
}

/* ------------------------------------------------------------------------
 * Removing a redirected file removes its data
 * ---------------------------------------------------------------------- */

/* unlink/unlinkat/remove of a path a rule matches: when it is an iosig
 * link, the data file goes with it. */
static int unlink_common(const struct rules_rule *rule, const char *call, int dirfd,
			 const char *path, int flags)
{
	const struct pl_core_ops *ops;
	struct pl_linked *ld;
	bool linked;
	int r, e;

	real_enter();
	ops = core();
	ld = ops ? malloc(sizeof(*ld)) : NULL;
	linked = ld && !(flags & AT_REMOVEDIR) && ops->find_linked(dirfd, path, ld);
	if (!strcmp(call, "remove"))
		r = remove(path);
	else
		r = unlinkat(dirfd, path, flags);
	e = errno;
	if (linked)
		ops->after_unlink(rule, call, dirfd, path, ld, r == 0);
	free(ld);
	real_leave();
	errno = e;
	return r;
}

/* Every removing interposer: unlink_common for a path a rule matches (which
 * logs), else links_remove(): the next definition, and the data of a link
 * the runtime made with it. */
static int unlink_any(enum real_id id, const char *call, int dirfd, const char *path, int flags)
{
	const struct rules_rule *rule = find_rule(dirfd, path);

	if (rule)
		return unlink_common(rule, call, dirfd, path, flags);
	return links_remove(id == R_UNLINKAT ? LINKS_UNLINKAT : id == R_REMOVE ? LINKS_REMOVE :
			    LINKS_UNLINK, dirfd, path, flags);
}

/* The runtime's side of links.c: the core's, loaded if need be. */
const struct links_ops *links_backend(void)
{
	const struct pl_core_ops *ops;

	real_enter();
	ops = core();
	real_leave();
	return ops ? ops->links : NULL;
}

PL_EXPORT int unlink(const char *path)
{
	return unlink_any(R_UNLINK, "unlink", AT_FDCWD, path, 0);
}

PL_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	return unlink_any(R_UNLINKAT, "unlinkat", dirfd, path, flags);
}

PL_EXPORT int remove(const char *path)
{
	return unlink_any(R_REMOVE, "remove", AT_FDCWD, path, 0);
}
