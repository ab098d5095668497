/* SPDX-License-Identifier: MIT */
/*
 * redirect.c - run-time redirection (docs/design.md §5.4): the compiler-generated
 * entry points and the create-elsewhere-and-link mechanism.
 *
 * An annotated call that creates a file whose path does not exist yet:
 *   1. evaluate the site's signature (cached per site and values);
 *   2. open the directory of the path (O_PATH) and check, without following
 *      it, that the last component does not exist;
 *   3. select a mount on the process-wide catalog;
 *   4. if that mount is the path's own filesystem, or in a dry run, do the
 *      plain call;
 *   5. create the data file in the mount's data directory with openat(2)
 *      on the directory's descriptor: O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC,
 *      an unpredictable name (a deterministic one for `global` files, see
 *      below), the caller's other flags and mode (so the umask applies);
 *   6. symlinkat(2) the data file's absolute path at the original name,
 *      relative to the directory descriptor of step 2: never following or
 *      replacing anything at that name.  If the link cannot be made, the
 *      data file is removed and the plain call is done.
 * Every other case, and every failure inside libiosig, ends in the plain
 * call, whose result and errno reach the program unchanged.
 *
 * `global` files get the name "G-<hash(job id, absolute path)>-<base>" so
 * that every rank of a job computes the same destination without talking.
 * Several ranks creating it at once: the first O_EXCL create wins, the
 * others open that file (O_NOFOLLOW, must be a regular file of ours); the
 * first symlinkat wins and the others find the same link (readlinkat) and
 * keep their descriptor.  A rank that finds something else at the path
 * undoes what it created and does the plain call.
 */
#include "redirect.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "client.h"
#include "declog.h"
#include "hash.h"
#include "rd_link.h"
#include "realfn.h"
#include "runtime.h"
#include "stream.h"
#include "tag.h"

/* ------------------------------------------------------------------------
 * Site cache: the evaluated signature per site and run-time values
 * ---------------------------------------------------------------------- */

#define SITE_BUCKETS 512

struct site_entry {
	struct site_entry *next;
	const struct iosig_site *site;
	const char *text;              /* site->sig when cached: a reused address misses */
	bool bad;                      /* the text does not parse: never retried */
	bool warned;                   /* this site's one warning was logged */
	bool have;                     /* sig is valid for values[0..nvalues) */
	unsigned nvalues;
	double values[RD_MAX_VALUES];
	struct iosig_sig sig;
	char why[200];                 /* bad: the parser's message */
};

/* Guarded by the runtime lock; entries live as long as the process. */
static struct site_entry *site_table[SITE_BUCKETS];

static bool site_ok(const struct iosig_site *site)
{
	return site && site->abi == IOSIG_SITE_ABI && site->sig;
}

static size_t site_hash(const struct iosig_site *site)
{
	uintptr_t p = (uintptr_t)site;

	return (size_t)((p >> 4) ^ (p >> 13)) % SITE_BUCKETS;
}

/* Called with the runtime lock held. */
static struct site_entry *site_find(const struct iosig_site *site, size_t h)
{
	for (struct site_entry *e = site_table[h]; e; e = e->next) {
		if (e->site == site && e->text == site->sig)
			return e;
	}
	return NULL;
}

/* "jobwide lifetime(...)": the parser knows `sig`, not the jobwide keyword. */
static const char *skip_jobwide(const char *text)
{
	while (*text == ' ' || *text == '\t')
		text++;
	if (!strncmp(text, "jobwide", 7) && (text[7] == ' ' || text[7] == '\t' || !text[7]))
		return text + 7;
	return text;
}

/*
 * Evaluates the signature of `req` into *ret_sig.  0, or a negative errno
 * with the reason in `why`: -EINVAL (bad site or text), -ERANGE (values
 * make no sense), -E2BIG (too many values).  The first failure of a site is
 * logged as its one warning.
 */
static int sig_eval(const struct rd_req *req, struct iosig_sig *ret_sig, char *why, size_t wsize)
{
	const struct iosig_site *site = req->site;
	struct iosig_error err;
	struct site_entry *e;
	struct iosig_sig sig;
	bool warn = false;
	char msg[400];
	size_t h;
	int r;

	if (req->sig) {
		*ret_sig = *req->sig;
		return 0;
	}
	if (!site_ok(site)) {
		snprintf(why, wsize, "site descriptor %s (ABI %u, this library speaks %u): rebuild with the matching plugin",
			 site ? "of another ABI" : "missing", site ? site->abi : 0, IOSIG_SITE_ABI);
		return -EINVAL;
	}
	if (req->nvalues > RD_MAX_VALUES) {
		snprintf(why, wsize, "site passes %u values, at most %u are supported",
			 req->nvalues, RD_MAX_VALUES);
		return -E2BIG;
	}
	h = site_hash(site);
	rt_lock();
	e = site_find(site, h);
	if (e && e->bad) {
		snprintf(why, wsize, "%s", e->why);
		rt_unlock();
		return -EINVAL;
	}
	if (e && e->have && e->nvalues == req->nvalues &&
	    !memcmp(e->values, req->values, req->nvalues * sizeof(double))) {
		*ret_sig = e->sig;
		rt_unlock();
		return 0;
	}
	rt_unlock();

	memset(&err, 0, sizeof(err));
	r = iosig_sig_parse(skip_jobwide(site->sig), NULL, req->values, req->nvalues, &sig, &err);
	if (r < 0)
		snprintf(why, wsize, "%s", err.msg[0] ? err.msg : strerror(-r));

	rt_lock();
	e = site_find(site, h);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (e) {
			e->site = site;
			e->text = site->sig;
			e->next = site_table[h];
			site_table[h] = e;
		}
	}
	if (r == 0 && e) {
		e->have = true;
		e->nvalues = req->nvalues;
		memcpy(e->values, req->values, req->nvalues * sizeof(double));
		e->sig = sig;
	} else if (r < 0) {
		if (e && r != -ERANGE) {
			/* The text itself is wrong: it will not get better. */
			e->bad = true;
			snprintf(e->why, sizeof(e->why), "%s", why);
		}
		warn = !e || !e->warned;
		if (e)
			e->warned = true;
	}
	rt_unlock();
	if (warn) {
		snprintf(msg, sizeof(msg), "signature ignored: %s; the file is opened as written", why);
		declog_event("warning", site, msg, NULL);
	}
	if (r == 0)
		*ret_sig = sig;
	return r;
}

/* ------------------------------------------------------------------------
 * Data directories: one validated O_DIRECTORY descriptor per mount, and
 * the anchors directory inside it (rd_link.h)
 * ---------------------------------------------------------------------- */

#define DDIR_MAX 128

/* A descriptor of ours, and what it must still be. */
struct rt_dirfd {
	int fd;         /* ours, >= RT_FD_BASE when possible, O_CLOEXEC; -1: none */
	dev_t dev;      /* identity: a descriptor the program closed is never used */
	ino_t ino;
};

struct ddir {
	const struct iosig_mount *mount;
	struct rt_dirfd data;      /* the data directory */
	struct rt_dirfd anchors;   /* its anchors directory, once asked for */
};

/* Guarded by the runtime lock. */
static struct ddir ddirs[DDIR_MAX];
static unsigned nddirs;

/* True if d->fd is still the descriptor we opened (the program may have
 * closed it and reused the number). */
static bool dirfd_ours(const struct rt_dirfd *d)
{
	struct stat st;

	return d->fd >= 0 && !fstat(d->fd, &st) && st.st_dev == d->dev && st.st_ino == d->ino;
}

/* Records fd (moved high) as ours in *d; false if it cannot be stat'ed
 * (then fd is closed). */
static bool dirfd_keep(struct rt_dirfd *d, int fd)
{
	struct stat st;

	fd = rt_fd_high(fd);
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		errno = e;
		return false;
	}
	d->fd = fd;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	return true;
}

/* Closes d's descriptor if it is still ours. */
static void dirfd_drop(struct rt_dirfd *d)
{
	if (dirfd_ours(d))
		close(d->fd);
	d->fd = -1;
}

/*
 * Called with the runtime lock held: the cache entry of m, or NULL.  The
 * data directory's descriptor must still be ours, and m's mount point must
 * still show the catalogued filesystem: a descriptor keeps a lazily
 * unmounted filesystem alive, and a link to a file on it would dangle.  A
 * network filesystem whose client died answers ENOTCONN to both checks.
 */
static struct ddir *ddir_cached(const struct iosig_mount *m)
{
	struct stat mst;

	for (unsigned i = 0; i < nddirs; i++) {
		struct ddir *d = &ddirs[i];

		if (d->mount != m)
			continue;
		if (dirfd_ours(&d->data) && !stat(m->path, &mst) && (uint64_t)mst.st_dev == m->dev)
			return d;
		/* Closed (and maybe reused) by the program: not ours any more;
		 * or ours, but its filesystem is no longer at m->path. */
		dirfd_drop(&d->data);
		dirfd_drop(&d->anchors);
		*d = ddirs[--nddirs];
		return NULL;
	}
	return NULL;
}

/*
 * Descriptor of the data directory of m.  *ret_owned is set when the
 * descriptor could not be cached and the caller must close it.
 */
static int ddir_get(const struct iosig_mount *m, bool *ret_owned, char *why, size_t wsize)
{
	struct iosig_error err;
	struct rt_dirfd fresh;
	struct ddir *d;
	int fd, r;

	*ret_owned = false;
	rt_lock();
	d = ddir_cached(m);
	fd = d ? d->data.fd : -1;
	rt_unlock();
	if (fd >= 0)
		return fd;

	memset(&err, 0, sizeof(err));
	r = cat_datadir_open(m, &fd, &err);
	if (r < 0) {
		snprintf(why, wsize, "data directory of %s: %s", m->path,
			 err.msg[0] ? err.msg : strerror(-r));
		return r;
	}
	if (!dirfd_keep(&fresh, fd)) {
		r = -errno;
		snprintf(why, wsize, "data directory of %s: %s", m->path, strerror(-r));
		return r;
	}
	rt_lock();
	d = ddir_cached(m);
	if (d) {
		/* Another thread cached it meanwhile. */
		close(fresh.fd);
		fd = d->data.fd;
	} else if (nddirs < DDIR_MAX) {
		ddirs[nddirs].mount = m;
		ddirs[nddirs].data = fresh;
		ddirs[nddirs].anchors.fd = -1;
		nddirs++;
		fd = fresh.fd;
	} else {
		fd = fresh.fd;
		*ret_owned = true;
	}
	rt_unlock();
	return fd;
}

/*
 * Descriptor of the anchors directory in the data directory of m, created
 * when missing (rd_anchor_dir_at()), or -1.  *ret_owned as for ddir_get().
 */
static int anchors_get(const struct iosig_mount *m, bool *ret_owned)
{
	struct rt_dirfd fresh;
	char why[400];
	bool dd_owned;
	struct ddir *d;
	int ddfd, fd;

	*ret_owned = false;
	/* A descriptor of ours is enough: the link was just made on this
	 * filesystem, and an anchors directory of an unmounted instance of it
	 * would only make linkat fail with EXDEV. */
	rt_lock();
	fd = -1;
	for (unsigned i = 0; i < nddirs && fd < 0; i++)
		if (ddirs[i].mount == m && dirfd_ours(&ddirs[i].anchors))
			fd = ddirs[i].anchors.fd;
	rt_unlock();
	if (fd >= 0)
		return fd;

	ddfd = ddir_get(m, &dd_owned, why, sizeof(why));
	if (ddfd < 0)
		return -1;
	if (rd_anchor_dir_at(ddfd, true, &fd) < 0 || !dirfd_keep(&fresh, fd)) {
		if (dd_owned)
			close(ddfd);
		return -1;
	}
	if (dd_owned)
		close(ddfd);
	rt_lock();
	d = ddir_cached(m);
	if (d && dirfd_ours(&d->anchors)) {
		close(fresh.fd);
		fd = d->anchors.fd;
	} else if (d) {
		d->anchors = fresh;
		fd = fresh.fd;
	} else {
		fd = fresh.fd;
		*ret_owned = true;
	}
	rt_unlock();
	return fd;
}

void rd_reset(void)
{
	rt_lock();
	for (unsigned i = 0; i < nddirs; i++) {
		dirfd_drop(&ddirs[i].data);
		dirfd_drop(&ddirs[i].anchors);
	}
	nddirs = 0;
	for (size_t h = 0; h < SITE_BUCKETS; h++) {
		struct site_entry *e = site_table[h];

		while (e) {
			struct site_entry *next = e->next;

			free(e);
			e = next;
		}
		site_table[h] = NULL;
	}
	rt_unlock();
}

/* ------------------------------------------------------------------------
 * Paths and names
 * ---------------------------------------------------------------------- */

bool rd_path_split(const char *path, char *dir, size_t size, const char **ret_base)
{
	size_t len = strlen(path);
	const char *slash, *base;

	if (len == 0 || path[len - 1] == '/')
		return false;
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	if (!strcmp(base, ".") || !strcmp(base, "..") || strlen(base) > NAME_MAX)
		return false;
	if (!slash) {
		snprintf(dir, size, ".");
	} else if (slash == path) {
		snprintf(dir, size, "/");
	} else {
		size_t n = (size_t)(slash - path);

		if (n >= size)
			return false;
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	*ret_base = base;
	return true;
}

/*
 * Absolute, normalised path of the directory open as pfd (named `dir`
 * relative to dirfd): the kernel's own name through /proc, else a lexical
 * normalisation when the name is absolute or relative to the working
 * directory.
 */
static int dir_abs_path(int pfd, const char *dir, int dirfd, char *buf, size_t size)
{
	static const char deleted[] = " (deleted)";
	char proc[64], tmp[PATH_MAX * 2];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	n = readlink(proc, buf, size - 1);
	if (n > 0 && buf[0] == '/' && (size_t)n < size - 1) {
		buf[n] = '\0';
		if ((size_t)n < sizeof(deleted) || strcmp(buf + n - (sizeof(deleted) - 1), deleted))
			return 0;
		return -ENOENT;
	}
	if (dir[0] == '/')
		return rd_path_normalise(dir, buf, size);
	if (dirfd != AT_FDCWD || !getcwd(tmp, PATH_MAX))
		return -ENOENT;
	if (strlen(tmp) + 1 + strlen(dir) + 1 > sizeof(tmp))
		return -ENAMETOOLONG;
	strcat(tmp, "/");
	strcat(tmp, dir);
	return rd_path_normalise(tmp, buf, size);
}

/* "L-<16 hex random>-<base>": unpredictable, and readable for humans. */
static void name_local(char *buf, size_t size, const char *base)
{
	snprintf(buf, size, "L-%016llx-%.*s", (unsigned long long)hash_random64(), RD_NAME_BASE_MAX, base);
}

/* "G-<32 hex of hash(job, path)>-<base>": the same on every rank of a job. */
static void name_global(char *buf, size_t size, const char *job, const char *abs_path,
			const char *base)
{
	uint64_t h1 = hash_fnv1a(abs_path, hash_fnv1a(job, 0xcbf29ce484222325ull) ^ 0x2f);
	uint64_t h2 = hash_fnv1a(abs_path, hash_fnv1a(job, 0x84222325cbf29ce4ull) ^ 0x5c);

	snprintf(buf, size, "G-%016llx%016llx-%.*s", (unsigned long long)hash_mix64(h1),
		 (unsigned long long)hash_mix64(h2 ^ h1), RD_NAME_BASE_MAX, base);
}

/* ------------------------------------------------------------------------
 * The decision
 * ---------------------------------------------------------------------- */

enum rd_outcome {
	RD_PLAIN,     /* do the plain call */
	RD_DONE,      /* data file created and linked: c->fd is open (O_CLOEXEC) */
	RD_OPENED,    /* the path is the user's own runtime link: c->fd is its data file,
			 opened through the validated data directory (O_CLOEXEC) */
	RD_REFUSE,    /* strict mode and no mount qualifies */
	RD_FAIL,      /* the call fails with -c->err, nothing done: a stale link that
			 must not be followed and cannot be replaced */
	RD_CONTINUE,  /* (look_at_path) nothing at the path: decide where to create it */
};

/* State of one decision, from request to outcome. */
struct rd_ctx {
	const struct rd_req *req;            /* what the program asked */
	bool timed;                          /* logging: measure elapsed time */
	struct timespec t0;                  /* when the call entered libiosig */
	struct iosig_sig sig;                /* evaluated signature (have_sig) */
	bool have_sig;                       /* sig is valid: tag and log it */
	char dir[PATH_MAX];                  /* directory part of the path */
	const char *base;                    /* last component (points into req->path) */
	int pfd;                             /* O_PATH descriptor of dir, or -1 */
	char abs_path[PATH_MAX];             /* absolute path of the file, "" if unknown */
	const struct iosig_catalog *catalog; /* the process-wide catalog, once asked */
	struct iosig_candidate *cands;       /* every mount's verdict (logging only) */
	size_t ncands;                       /* entries in cands */
	struct iosig_choice choice;          /* what selection returned */
	const struct iosig_mount *chosen;    /* selected mount, NULL if none */
	const struct iosig_mount *placed;    /* mount the data is on, when known */
	struct rt_job job;                   /* job identity (global signatures) */
	bool global_name;                    /* deterministic name used */
	int ddfd;                            /* data directory descriptor or -1 */
	bool ddfd_owned;                     /* close ddfd when done */
	char name[NAME_MAX + 1];             /* data file name in the data directory */
	char data_path[PATH_MAX];            /* absolute path of the data file, "" if none */
	bool created;                        /* we created the data file (undo removes it) */
	bool linked;                         /* we created the link (undo removes it) */
	int afd;                             /* anchors directory of the path's filesystem, or -1 */
	bool afd_owned;                      /* close afd when done */
	bool anchored;                       /* we made the link's anchor (undo removes it) */
	int lockfd;                          /* shared lock on afd (global names), or -1 */
	int fd;                              /* data file descriptor (RD_DONE) */
	const char *action;                  /* for the log: see docs/runtime.md */
	char reason[480];                    /* fallback reason, "" if none */
	int err;                             /* negative errno of a failed internal step */
	bool prepare;                        /* rd_prepare, an opener: open nothing, not even
						an existing file */
	char stale[PATH_MAX + 480];          /* a stale link replaced: "target: why", "" if none */
};

static void ctx_init(struct rd_ctx *c, const struct rd_req *req)
{
	c->req = req;
	c->timed = declog_enabled();
	if (c->timed)
		clock_gettime(CLOCK_MONOTONIC, &c->t0);
	c->have_sig = false;
	c->base = NULL;
	c->pfd = -1;
	c->abs_path[0] = '\0';
	c->catalog = NULL;
	c->cands = NULL;
	c->ncands = 0;
	c->chosen = NULL;
	c->placed = NULL;
	c->job.id[0] = '\0';
	c->job.source = NULL;
	c->global_name = false;
	c->ddfd = -1;
	c->ddfd_owned = false;
	c->name[0] = '\0';
	c->data_path[0] = '\0';
	c->created = false;
	c->linked = false;
	c->afd = -1;
	c->afd_owned = false;
	c->anchored = false;
	c->lockfd = -1;
	c->fd = -1;
	c->action = "plain";
	c->reason[0] = '\0';
	c->err = 0;
	c->prepare = false;
	c->stale[0] = '\0';
}

/* Closes the directory descriptor and the lock, so that the descriptor the
 * program gets is the lowest free number (rd_undo reopens the directory if
 * needed; the lock is only needed until the anchor is made). */
static void ctx_close_dir(struct rd_ctx *c)
{
	if (c->pfd >= 0)
		close(c->pfd);
	c->pfd = -1;
	if (c->lockfd >= 0)
		close(c->lockfd);
	c->lockfd = -1;
}

/* Releases everything the decision holds except a data descriptor handed
 * over to the program; call after logging (the log reads the candidates). */
static void ctx_done(struct rd_ctx *c)
{
	ctx_close_dir(c);
	if (c->ddfd_owned && c->ddfd >= 0)
		close(c->ddfd);
	c->ddfd = -1;
	c->ddfd_owned = false;
	if (c->lockfd >= 0)
		close(c->lockfd);
	c->lockfd = -1;
	if (c->afd_owned && c->afd >= 0)
		close(c->afd);
	c->afd = -1;
	c->afd_owned = false;
	free(c->cands);
	c->cands = NULL;
}

/* Records why the call falls back; err is the failing step's -errno. */
static int fallback(struct rd_ctx *c, const char *action, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fallback(struct rd_ctx *c, const char *action, int err, const char *fmt, ...)
{
	va_list ap;

	c->action = action;
	c->err = err;
	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	return RD_PLAIN;
}

/* Removes the link and the data file this decision created. */
static void rd_undo(struct rd_ctx *c)
{
	char buf[PATH_MAX];
	ssize_t n;

	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->linked && c->pfd < 0)
		c->pfd = openat(c->req->dirfd, c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->linked && c->pfd >= 0) {
		/* Only our own link: the name may have been replaced meanwhile. */
		n = readlinkat(c->pfd, c->base, buf, sizeof(buf) - 1);
		if (n >= 0) {
			buf[n] = '\0';
			if (!strcmp(buf, c->data_path))
				unlinkat(c->pfd, c->base, 0);
		}
	}
	c->linked = false;
	if (c->anchored)
		unlinkat(c->afd, c->name, 0);
	c->anchored = false;
	if (c->created && c->ddfd >= 0)
		unlinkat(c->ddfd, c->name, 0);
	c->created = false;
}

/* The caller's flags for the data file: ours for creation and links. */
static int data_flags(int flags)
{
	flags &= ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_TMPFILE | O_DIRECTORY | O_PATH);
	return flags | O_NOFOLLOW | O_CLOEXEC;
}

/*
 * Creates (or, for a global name another rank created, opens) the data
 * file.  Returns 0 with c->fd set, or a negative errno with the reason.
 */
static int create_data(struct rd_ctx *c)
{
	const struct rd_req *req = c->req;
	int flags = data_flags(req->flags);
	struct stat st;
	int fd, e;

	fd = openat(c->ddfd, c->name, flags | O_CREAT | O_EXCL, req->mode);
	if (fd >= 0) {
		c->created = true;
		c->fd = fd;
		return 0;
	}
	e = errno;
	if (e != EEXIST || !c->global_name) {
		/* A file system may create the file and then refuse the open
		 * (O_DIRECT on tmpfs before Linux 6.6): remove what the failed
		 * O_EXCL call left, which nobody else can have opened under an
		 * unpredictable name. */
		if (e != EEXIST && !c->global_name)
			unlinkat(c->ddfd, c->name, 0);
		fallback(c, "fallback", -e, "cannot create the data file %s: %s", c->data_path,
			 strerror(e));
		return -e;
	}
	/* Another rank of the job created the shared file first. */
	if (req->flags & O_EXCL) {
		fallback(c, "fallback", -EEXIST,
			 "the job's shared data file %s exists and the call asked O_EXCL: the plain call decides",
			 c->data_path);
		return -EEXIST;
	}
	fd = openat(c->ddfd, c->name, flags & ~O_CREAT, req->mode);
	if (fd < 0) {
		e = errno;
		fallback(c, "fallback", -e, "cannot open the job's shared data file %s: %s",
			 c->data_path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		fallback(c, "fallback", -EPERM,
			 "the job's shared data file %s is not a regular file of this user", c->data_path);
		return -EPERM;
	}
	c->fd = fd;
	return 0;
}

void (*rd_fault_before_link)(int dirfd, const char *name, const char *target);

/* Links the data file at the original name.  0 or a negative errno. */
static int make_link(struct rd_ctx *c)
{
	char buf[PATH_MAX];
	ssize_t n;
	int e;

	if (rd_fault_before_link)
		rd_fault_before_link(c->pfd, c->base, c->data_path);
	if (!symlinkat(c->data_path, c->pfd, c->base)) {
		c->linked = true;
		return 0;
	}
	e = errno;
	if (e == EEXIST && c->global_name) {
		/* Another rank linked first: fine if it is the same file. */
		n = readlinkat(c->pfd, c->base, buf, sizeof(buf) - 1);
		if (n >= 0) {
			buf[n] = '\0';
			if (!strcmp(buf, c->data_path))
				return 0;
		}
	}
	fallback(c, "fallback", -e, "cannot create the link %s -> %s: %s",
		 c->abs_path[0] ? c->abs_path : c->req->path, c->data_path, strerror(e));
	return -e;
}

/* The process-wide catalog into c->catalog; false (with the reason) if it
 * cannot be built. */
static bool get_catalog(struct rd_ctx *c)
{
	struct iosig_error err;

	memset(&err, 0, sizeof(err));
	c->catalog = cat_default(&err);
	if (!c->catalog)
		fallback(c, "fallback", -EIO, "catalog: %s", err.msg[0] ? err.msg : "cannot be built");
	return c->catalog != NULL;
}

/* True if c's signature asks for global and no eligible mount of the
 * catalog is global: the reason nothing qualifies, whatever else. */
static bool global_missing(const struct rd_ctx *c)
{
	if (!(c->sig.set & IOSIG_HAS(IOSIG_P_GLOBAL)))
		return false;
	for (size_t i = 0; i < iosig_catalog_size(c->catalog); i++) {
		const struct iosig_mount *m = iosig_catalog_mount(c->catalog, i);

		if (!m->ineligible && m->global)
			return false;
	}
	return true;
}

/*
 * The path exists and is a symbolic link (st: its lstat): is it one the
 * runtime made for this user (rd_link.h)?  Another link is followed as the
 * plain call follows it.  The user's own, with trusted data: opened through
 * the validated data directory, never through the link (RD_OPENED; nothing
 * is opened for prepare or O_EXCL, whose plain call fails with EEXIST
 * without following).  The user's own whose data cannot be trusted (its
 * data directory vanished and someone else made one at that name ...) is
 * never followed: an open that does not create fails with ENOENT, as for a
 * dangling link; one that creates removes the stale link and goes on as if
 * the path were free (RD_CONTINUE).
 */
static int existing_link(struct rd_ctx *c, bool creating)
{
	const struct rd_req *req = c->req;
	struct rd_link lk;
	char buf[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, r;

	c->catalog = cat_default(NULL);
	if (!c->catalog)
		return RD_PLAIN;   /* no catalog: nothing can be the runtime's */
	switch (rd_link_check(c->catalog, c->pfd, c->base, 0, &lk)) {
	case RD_LINK_OWN:
		if (c->prepare || (req->flags & O_EXCL)) {
			rd_link_release(&lk);
			return RD_PLAIN;
		}
		fd = openat(lk.ddfd, lk.name, data_flags(req->flags), 0);
		if (fd < 0) {
			/* What following the link would have met: the same errno. */
			r = -errno;
			rd_link_release(&lk);
			fallback(c, c->action, r, "cannot open the data file %s: %s", lk.target,
				 strerror(-r));
			return RD_FAIL;
		}
		if (fstat(fd, &st) || st.st_dev != lk.data.st_dev || st.st_ino != lk.data.st_ino) {
			/* Replaced meanwhile, by the user alone (the directory is the
			 * user's): what is there now is what the plain call meets. */
			close(fd);
			rd_link_release(&lk);
			return RD_PLAIN;
		}
		c->fd = fd;
		snprintf(c->data_path, sizeof(c->data_path), "%s", lk.target);
		c->placed = lk.mount;
		rd_link_release(&lk);
		return RD_OPENED;
	case RD_LINK_STALE:
		break;
	default:
		rd_link_release(&lk);
		return RD_PLAIN;
	}
	snprintf(c->stale, sizeof(c->stale), "%s: %s", lk.target, lk.why);
	if (!creating) {
		fallback(c, "stale", -ENOENT, "the link's data cannot be trusted, not followed: %s",
			 c->stale);
		return RD_FAIL;
	}
	if (req->flags & O_EXCL)
		return RD_PLAIN;   /* fails with EEXIST without following */
	/* Remove it if it is still the link that was checked. */
	n = readlinkat(c->pfd, c->base, buf, sizeof(buf) - 1);
	if (n < 0 || (buf[n] = '\0', strcmp(buf, lk.target)) ||
	    fstatat(c->pfd, c->base, &st, AT_SYMLINK_NOFOLLOW) || st.st_ino != lk.link.st_ino ||
	    st.st_dev != lk.link.st_dev) {
		fallback(c, "stale", -EAGAIN, "the stale link %s changed while it was replaced",
			 c->stale);
		return RD_FAIL;
	}
	if (unlinkat(c->pfd, c->base, 0)) {
		r = -errno;
		fallback(c, "stale", r, "cannot remove the stale link (%s): %s", strerror(-r),
			 c->stale);
		return RD_FAIL;
	}
	return RD_CONTINUE;
}

/*
 * Opens the directory of the path (c->pfd) and looks at its last component
 * without following it: RD_CONTINUE when a file is to be created there and
 * nothing is there; RD_PLAIN (plain call), RD_OPENED or RD_FAIL otherwise
 * (existing_link).
 */
static int look_at_path(struct rd_ctx *c, bool creating)
{
	const struct rd_req *req = c->req;
	struct stat st;
	int r;

	c->action = creating ? "existing" : "open";
	/* An open that does not create needs the directory only for a link:
	 * one system call for everything else. */
	if (!creating && (!req->path || fstatat(req->dirfd, req->path, &st, AT_SYMLINK_NOFOLLOW) ||
			  !S_ISLNK(st.st_mode)))
		return RD_PLAIN;
	if (!req->path || !rd_path_split(req->path, c->dir, sizeof(c->dir), &c->base))
		return creating ? fallback(c, "plain", 0,
					   "the path cannot name a new file (empty, trailing slash, '.', '..' or too long)") :
				  RD_PLAIN;
	c->pfd = openat(req->dirfd, c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->pfd < 0)
		return creating ? fallback(c, "plain", 0, "cannot open the directory '%s': %s", c->dir,
					   strerror(errno)) :
				  RD_PLAIN;
	if (!fstatat(c->pfd, c->base, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!S_ISLNK(st.st_mode))
			return RD_PLAIN;
		r = existing_link(c, creating);
		if (r != RD_CONTINUE)
			return r;
	} else if (errno != ENOENT) {
		return creating ? fallback(c, "plain", 0, "cannot look at '%s': %s", req->path,
					   strerror(errno)) :
				  RD_PLAIN;
	}
	if (!creating)
		return RD_PLAIN;   /* the plain call fails with ENOENT */
	c->action = "plain";
	return RD_CONTINUE;
}

/*
 * Decides what to do with req and, for RD_DONE, creates the data file and
 * the link.  Leaves c->pfd open for the caller (ctx_close_dir / rd_undo).
 */
static int rd_decide(struct rd_ctx *c)
{
	const struct rd_req *req = c->req;
	const struct rt_env *env = rt_env();
	const struct iosig_mount *am;
	bool creating = req->flags & O_CREAT;
	char why[400], ignored[sizeof(why) + 32] = "";
	struct stat st;
	size_t len;
	int r;

	/* A signature that cannot be used makes the call plain, but an
	 * existing link is still looked at: a stale one is never followed. */
	if (sig_eval(req, &c->sig, why, sizeof(why)) < 0)
		snprintf(ignored, sizeof(ignored), "signature ignored: %s", why);
	else
		c->have_sig = true;
	if (c->have_sig)
		rt_jobwide_apply(&c->sig);

	if ((req->flags & O_TMPFILE) == O_TMPFILE)
		return fallback(c, ignored[0] ? "ignored" : "plain", 0, "%s",
				ignored[0] ? ignored : "O_TMPFILE creates an unnamed file: not redirected");
	if (req->flags & (O_DIRECTORY | O_PATH))
		return fallback(c, ignored[0] ? "ignored" : "plain", 0, "%s",
				ignored[0] ? ignored : "O_DIRECTORY/O_PATH open no regular file to create");
	if ((req->flags & O_NOFOLLOW) && (!creating || !req->nofollow_ok)) {
		/* The plain call follows no link; but the user's own link is the
		 * file it stands for (links.h), whose data is opened.  Any other
		 * link, a stale one included, is refused by the plain call. */
		r = look_at_path(c, false);
		if (r == RD_OPENED)
			return r;
		if (r == RD_FAIL) {
			c->err = 0;
			return RD_PLAIN;
		}
		if (ignored[0])
			return fallback(c, "ignored", 0, "%s", ignored);
		if (!creating) {
			c->action = "open";
			return RD_PLAIN;
		}
		return fallback(c, "plain", 0, "O_NOFOLLOW: the caller refuses a symbolic link at the path");
	}
	r = look_at_path(c, creating);
	if (ignored[0] && (r == RD_PLAIN || r == RD_CONTINUE))
		return fallback(c, "ignored", 0, "%s", ignored);
	if (r != RD_CONTINUE)
		return r;

	r = dir_abs_path(c->pfd, c->dir, req->dirfd, c->abs_path, sizeof(c->abs_path));
	len = strlen(c->abs_path);
	if (r < 0 || len + 1 + strlen(c->base) + 1 > sizeof(c->abs_path)) {
		c->abs_path[0] = '\0';
		return fallback(c, "fallback", r < 0 ? r : -ENAMETOOLONG,
				"cannot resolve the directory of '%s'", req->path);
	}
	if (len > 1)
		c->abs_path[len++] = '/';
	strcpy(c->abs_path + len, c->base);

	if (!get_catalog(c))
		return RD_PLAIN;
	if (declog_enabled()) {
		c->ncands = iosig_catalog_size(c->catalog);
		c->cands = c->ncands ? calloc(c->ncands, sizeof(*c->cands)) : NULL;
		if (!c->cands)
			c->ncands = 0;
	}
	r = iosig_select(c->catalog, &c->sig, c->abs_path, c->cands, &c->choice);
	if (r < 0)
		return fallback(c, "fallback", r, "selection failed: %s", strerror(-r));
	if (c->choice.index < 0 || !c->choice.mount) {
		if (env->strict) {
			c->action = "strict";
			snprintf(c->reason, sizeof(c->reason),
				 "%s (%u candidates, see their verdicts); IOSIG_STRICT fails the call with %s",
				 global_missing(c) ?
					 "the signature asks for global and no eligible mount here is shared between nodes" :
					 "no mount satisfies the signature",
				 (unsigned)iosig_catalog_size(c->catalog), strerror(RD_STRICT_ERRNO));
			return RD_REFUSE;
		}
		return fallback(c, "fallback", 0, "%s: the file stays where the program asked",
				global_missing(c) ?
					"the signature asks for global and no eligible mount here is shared between nodes (a network filesystem, or one set global in the configuration)" :
					"no mount satisfies the signature");
	}
	c->chosen = c->choice.mount;

	if (fstat(c->pfd, &st))
		return fallback(c, "fallback", -errno, "cannot stat the directory of '%s'", req->path);
	if ((uint64_t)st.st_dev == c->chosen->dev) {
		c->placed = c->chosen;
		c->action = "direct";
		return RD_PLAIN;
	}
	if (env->dryrun) {
		c->action = "dryrun";
		return RD_PLAIN;
	}
	if (!c->chosen->data_dir || c->chosen->data_dir[0] != '/')
		return fallback(c, "fallback", -ENOENT, "mount %s has no absolute data directory",
				c->chosen->path);

	c->ddfd = ddir_get(c->chosen, &c->ddfd_owned, why, sizeof(why));
	if (c->ddfd < 0) {
		r = c->ddfd;
		c->ddfd = -1;
		return fallback(c, "fallback", r, "%s", why);
	}
	if (c->sig.set & IOSIG_HAS(IOSIG_P_GLOBAL)) {
		rt_job_identity(&c->job);
		c->global_name = c->job.id[0] != '\0';
	}
	if (c->global_name)
		name_global(c->name, sizeof(c->name), c->job.id, c->abs_path, c->base);
	else
		name_local(c->name, sizeof(c->name), c->base);
	if ((size_t)snprintf(c->data_path, sizeof(c->data_path), "%s/%s", c->chosen->data_dir,
			     c->name) >= sizeof(c->data_path)) {
		c->data_path[0] = '\0';
		return fallback(c, "fallback", -ENAMETOOLONG, "data path too long under %s",
				c->chosen->data_dir);
	}

	/* The link's anchor goes into the anchors directory of the path's own
	 * filesystem (rd_link.h); none when that filesystem has no data
	 * directory. */
	am = rd_anchor_mount(c->catalog, st.st_dev);
	if (am)
		c->afd = anchors_get(am, &c->afd_owned);
	if (c->global_name && c->afd >= 0) {
		/* The job's data file may exist, its earlier link removed by a
		 * program without libiosig: gc must not free it while it is
		 * linked anew. */
		c->lockfd = rd_anchor_lock(c->afd, false);
		if (c->lockfd < 0)
			c->lockfd = -1;
	}
	r = req->link_only ? 0 : create_data(c);
	if (r < 0) {
		c->data_path[0] = '\0';
		return RD_PLAIN;
	}
	/* A setgid directory gives new files its group: keep that promise
	 * (st is still the directory's). */
	if ((st.st_mode & S_ISGID) && c->created)
		(void)!fchown(c->fd, (uid_t)-1, st.st_gid);
	r = make_link(c);
	if (r < 0) {
		rd_undo(c);
		c->data_path[0] = '\0';
		return RD_PLAIN;
	}
	/* Best effort: a link without an anchor works, it is only never
	 * collected by gc and follows the name rule when removed. */
	if (c->linked && c->afd >= 0 && rd_anchor_make(c->pfd, c->base, c->afd, c->name) == 0)
		c->anchored = true;
	c->placed = c->chosen;
	c->action = "redirected";
	return RD_DONE;
}

/* ------------------------------------------------------------------------
 * Finishing a call: descriptor number, tag, log
 * ---------------------------------------------------------------------- */

/*
 * Tags fd (>= 0) after an annotated call, or clears a stale tag, and hands
 * fd to iosigd when one runs.  A stream's descriptor only when `reg`: stdio
 * writes through libc's internal calls, which bypass the interposers, so
 * only a stream that is about to be replaced by one that makes its calls
 * through them (stream.h) may be registered.  True when the daemon took fd.
 */
static bool tag_fd(int fd, const struct iosig_sig *sig, const struct iosig_mount *placed,
		   const char *path, const char *data_path, int flags, bool reg)
{
	if (fd < 0)
		return false;
	if (!sig) {
		tag_clear(fd);
		return false;
	}
	if (tag_set(fd, sig, placed, path, data_path)) {
		tag_clear(fd);
		return false;
	}
	return reg && !rt_env()->dryrun && client_register(fd, flags, sig);
}

static bool tag_result(const struct rd_ctx *c, int fd, bool reg)
{
	return tag_fd(fd, c->have_sig ? &c->sig : NULL, c->placed,
		      c->abs_path[0] ? c->abs_path : c->req->path,
		      c->data_path[0] ? c->data_path : NULL, c->req->flags, reg);
}

/* A plain stream just opened on a file with signature sig (NULL: none):
 * tagged, and replaced by one whose I/O reaches the daemon when it takes
 * the descriptor (stream.h).  The stream to give the program. */
static FILE *tag_stream(FILE *fp, const struct iosig_sig *sig, const struct iosig_mount *placed,
			const char *path, const char *data_path, int flags)
{
	struct rd_stream *st = sig && !rt_env()->dryrun ? stream_new(fp) : NULL;

	if (tag_fd(fileno(fp), sig, placed, path, data_path, flags, st != NULL))
		return stream_adopt(st, fp);
	if (st)
		stream_discard(st);
	return fp;
}

static void log_result(struct rd_ctx *c, int result, int err)
{
	const struct rd_req *req = c->req;
	struct declog_rec rec;
	struct timespec t1;

	if (!c->timed)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	memset(&rec, 0, sizeof(rec));
	rec.site = req->site;
	rec.call = req->call;
	rec.path = req->path;
	rec.dirfd = req->dirfd;
	rec.abs_path = c->abs_path[0] ? c->abs_path : NULL;
	rec.flags = req->flags;
	rec.mode = req->mode;
	rec.fmode = req->fmode;
	rec.values = req->values;
	rec.nvalues = req->nvalues <= RD_MAX_VALUES ? req->nvalues : RD_MAX_VALUES;
	rec.sig = c->have_sig ? &c->sig : NULL;
	rec.cands = c->cands;
	rec.ncands = c->ncands;
	rec.chosen = c->chosen;
	rec.throughput = c->chosen ? c->choice.throughput : 0;
	rec.job = c->global_name ? c->job.id : NULL;
	rec.action = c->action;
	rec.data_path = c->data_path[0] ? c->data_path : NULL;
	rec.reason = c->reason[0] ? c->reason : NULL;
	rec.stale_link = c->stale[0] ? c->stale : NULL;
	rec.result = result;
	rec.err = err;
	rec.elapsed = (double)(t1.tv_sec - c->t0.tv_sec) + (double)(t1.tv_nsec - c->t0.tv_nsec) * 1e-9;
	declog_decision(&rec);
}

/*
 * Ends a call that returns a descriptor: tags it, logs the decision,
 * releases the decision and leaves errno as the plain call would (the
 * caller's value on success, `err` on failure).  Returns fd.
 */
static int finish_fd(struct rd_ctx *c, int fd, int err, int saved)
{
	tag_result(c, fd, true);
	log_result(c, fd, fd < 0 ? err : 0);
	ctx_done(c);
	errno = fd < 0 ? err : saved;
	return fd;
}

/*
 * The same for a call that returns a stream.  With `handover` (fopen, not
 * freopen: its stream is the caller's FILE, which cannot become another)
 * a stream whose descriptor the daemon takes is replaced by one whose
 * I/O reaches it (stream.h); a stream it does not take stays as it is.
 */
static FILE *finish_stream(struct rd_ctx *c, FILE *fp, int err, int saved, bool handover)
{
	if (fp && handover)
		fp = tag_stream(fp, c->have_sig ? &c->sig : NULL, c->placed,
				c->abs_path[0] ? c->abs_path : c->req->path,
				c->data_path[0] ? c->data_path : NULL, c->req->flags);
	else if (fp)
		tag_result(c, fileno(fp), false);
	log_result(c, fp ? fileno(fp) : -1, fp ? 0 : err);
	ctx_done(c);
	errno = fp ? saved : err;
	return fp;
}

/* Strict mode refused the call: log it, release, set errno. */
static void finish_refused(struct rd_ctx *c)
{
	log_result(c, -1, RD_STRICT_ERRNO);
	ctx_done(c);
	errno = RD_STRICT_ERRNO;
}

/* The plain call the program wrote. */
static int plain_openat(const struct rd_req *req)
{
	return openat(req->dirfd, req->path, req->flags, req->mode);
}

static int openat_req(const struct rd_req *req)
{
	int saved = errno;
	struct rd_ctx c;
	int fd;

	if (rt_env()->disable) {
		fd = plain_openat(req);
		if (fd >= 0)
			tag_clear(fd);
		return fd;
	}
	ctx_init(&c, req);
	switch (rd_decide(&c)) {
	case RD_DONE:
	case RD_OPENED:
		ctx_close_dir(&c);
		fd = rt_fd_low(c.fd, req->flags & O_CLOEXEC);
		c.fd = -1;
		return finish_fd(&c, fd, 0, saved);
	case RD_REFUSE:
		finish_refused(&c);
		return -1;
	case RD_FAIL:
		return finish_fd(&c, -1, -c.err, saved);
	default:
		break;
	}
	/* Close first: the plain call must get the lowest free number. */
	ctx_close_dir(&c);
	fd = plain_openat(req);
	return finish_fd(&c, fd, errno, saved);
}

int rd_openat(const struct rd_req *req)
{
	int r;

	/* The runtime sees links as they are (realfn.h). */
	real_enter();
	r = openat_req(req);
	real_leave();
	return r;
}

/*
 * What iosig_prepare decided, for the stream's own open that follows it
 * (a C++ stream: libstdc++'s filebuf opens with fopen64 and then reads,
 * writes and seeks its descriptor with read/write/writev/lseek64, which the
 * interposers see).  The next fopen/fopen64 of the thread takes it; it is
 * used when it opens the very path the program prepared.
 */
struct rd_prepared {
	struct iosig_sig sig;
	const struct iosig_mount *placed;
	int flags;
	char *path;            /* as the program gave it */
	char *abs_path;        /* for the tag; NULL: path */
	char *data_path;       /* NULL: not redirected */
};

/* initial-exec as rd_openers below: 8 bytes of static TLS. */
static __thread struct rd_prepared *rd_pending __attribute__((tls_model("initial-exec")));

static void prepared_free(struct rd_prepared *p)
{
	if (!p)
		return;
	free(p->path);
	free(p->abs_path);
	free(p->data_path);
	free(p);
}

/* Records c's decision for the thread's next stream open (NULL: none). */
static void prepared_set(const struct rd_ctx *c)
{
	struct rd_prepared *p;

	prepared_free(rd_pending);
	rd_pending = NULL;
	if (!c || !c->have_sig || !c->req->path || rt_env()->dryrun)
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->sig = c->sig;
	p->placed = c->placed;
	p->flags = c->req->flags;
	p->path = strdup(c->req->path);
	p->abs_path = c->abs_path[0] ? strdup(c->abs_path) : NULL;
	p->data_path = c->data_path[0] ? strdup(c->data_path) : NULL;
	if (!p->path || (c->abs_path[0] && !p->abs_path) || (c->data_path[0] && !p->data_path)) {
		prepared_free(p);
		return;
	}
	rd_pending = p;
}

bool rd_prepared_pending(void)
{
	return rd_pending != NULL;
}

FILE *rd_prepared_fopen(const char *path, const char *mode,
			FILE *(*open_fn)(const char *, const char *))
{
	struct rd_prepared *p = rd_pending;
	int saved;
	FILE *fp;

	rd_pending = NULL;
	fp = open_fn(path, mode);
	if (fp && p && path && !strcmp(path, p->path)) {
		saved = errno;
		fp = tag_stream(fp, &p->sig, p->placed, p->abs_path ? p->abs_path : p->path,
				p->data_path, p->flags);
		errno = saved;
	}
	prepared_free(p);
	return fp;
}

static int prepare_req(const struct rd_req *req, struct rd_result *ret_result)
{
	int saved = errno;
	struct rd_ctx c;
	int r;

	if (rt_env()->disable) {
		if (ret_result) {
			memset(ret_result, 0, sizeof(*ret_result));
			ret_result->action = "plain";
			snprintf(ret_result->reason, sizeof(ret_result->reason),
				 "IOSIG_DISABLE is set");
		}
		return 0;
	}
	ctx_init(&c, req);
	if (req->flags & O_EXCL) {
		/* The program's own open must be the one that creates the file. */
		fallback(&c, "plain", 0, "O_EXCL: the program's own open creates the file");
		r = 0;
		goto out_log;
	}
	c.prepare = true;
	switch (rd_decide(&c)) {
	case RD_DONE:
		close(c.fd);
		c.fd = -1;
		c.action = "prepared";
		r = 0;
		break;
	case RD_REFUSE:
		r = -RD_STRICT_ERRNO;
		break;
	default:
		r = c.err;
		break;
	}
out_log:
	ctx_close_dir(&c);
	log_result(&c, -1, r < 0 ? -r : 0);
	/* Last: nothing of the runtime opens a stream before the program's. */
	prepared_set(r == 0 ? &c : NULL);
	if (ret_result) {
		ret_result->action = c.action;
		ret_result->chosen = c.chosen;
		snprintf(ret_result->data_path, sizeof(ret_result->data_path), "%s", c.data_path);
		snprintf(ret_result->reason, sizeof(ret_result->reason), "%s", c.reason);
	}
	ctx_done(&c);
	errno = saved;
	return r;
}

int rd_prepare(const struct rd_req *req, struct rd_result *ret_result)
{
	int r;

	/* The runtime sees links as they are (realfn.h). */
	real_enter();
	r = prepare_req(req, ret_result);
	real_leave();
	return r;
}

/* ------------------------------------------------------------------------
 * Streams
 * ---------------------------------------------------------------------- */

/*
 * open(2) flags of an fopen mode as glibc reads it (first character, then
 * up to six modifiers).  False for a mode fopen rejects.  *ret_ccs is set
 * for ",ccs=" (wide-character encodings), which only fopen itself handles.
 */
static bool fmode_flags(const char *mode, int *ret_flags, bool *ret_ccs)
{
	int flags;

	if (!mode)
		return false;
	switch (mode[0]) {
	case 'r': flags = O_RDONLY; break;
	case 'w': flags = O_WRONLY | O_CREAT | O_TRUNC; break;
	case 'a': flags = O_WRONLY | O_CREAT | O_APPEND; break;
	default: return false;
	}
	for (int i = 1; i < 7 && mode[i]; i++) {
		switch (mode[i]) {
		case '+': flags = (flags & ~O_ACCMODE) | O_RDWR; break;
		case 'x': flags |= O_EXCL; break;
		case 'e': flags |= O_CLOEXEC; break;
		default: break;   /* b, m, c and unknown characters: no open flag */
		}
	}
	*ret_flags = flags;
	*ret_ccs = strstr(mode, ",ccs=") != NULL;
	return true;
}

/* The mode for fdopen/freopen of the file we created: without 'x' (the
 * exclusive creation already happened). */
static void fmode_no_excl(const char *mode, char *buf, size_t size)
{
	size_t j = 0;

	for (size_t i = 0; mode[i] && j + 1 < size; i++) {
		if (mode[i] != 'x' || i >= 7)
			buf[j++] = mode[i];
	}
	buf[j] = '\0';
}

static FILE *plain_fopen(const char *path, const char *mode, bool large)
{
	return large ? fopen64(path, mode) : fopen(path, mode);
}

/* Reads the site's run-time values (doubles) from the variadic arguments;
 * returns how many the site declares. */
static unsigned collect_values(const struct iosig_site *site, va_list ap, double *values)
{
	unsigned n;

	if (!site_ok(site))
		return 0;
	n = site->nvalues < RD_MAX_VALUES ? site->nvalues : RD_MAX_VALUES;
	for (unsigned i = 0; i < n; i++)
		values[i] = va_arg(ap, double);
	return site->nvalues;
}

/* Completes a stream request from its fopen mode: flags and creation mode.
 * *ret_ok is false for a mode fopen rejects or a ",ccs=" mode (both are left
 * to the plain call), *ret_why then says which. */
static void stream_prep(struct rd_req *req, bool *ret_ok, const char **ret_why)
{
	bool ccs = false;
	int flags = 0;

	*ret_ok = fmode_flags(req->fmode, &flags, &ccs) && !ccs;
	*ret_why = ccs ? "',ccs=' modes are left to fopen" : "not a mode fopen accepts";
	req->dirfd = AT_FDCWD;
	req->flags = flags;
	req->mode = 0666;      /* what fopen passes to open(2) */
}

/* The request of a compiled call site: the call's arguments (fmode NULL
 * for open-like calls; a stream's flags and mode are filled in from its
 * fmode by stream_prep) and the site's values. */
static void site_req(struct rd_req *req, const struct iosig_site *site, const char *call,
		     int dirfd, const char *path, int flags, mode_t mode, const char *fmode,
		     const double *values, unsigned n)
{
	memset(req, 0, sizeof(*req));
	req->site = site;
	req->call = call;
	req->dirfd = dirfd;
	req->path = path;
	req->flags = flags;
	req->mode = mode;
	req->fmode = fmode;
	req->values = values;
	req->nvalues = n;
}

/* A stream call that is done plainly whatever the signature (bad mode,
 * ",ccs=", no path): evaluated for the tag and the log only. */
static void stream_plain(struct rd_ctx *c, const char *why)
{
	char buf[400];

	if (!sig_eval(c->req, &c->sig, buf, sizeof(buf)))
		c->have_sig = true;
	fallback(c, "plain", 0, "%s", why);
}

static FILE *plain_freopen(const char *path, const char *mode, FILE *stream, bool large)
{
	return large ? freopen64(path, mode, stream) : freopen(path, mode, stream);
}

static FILE *fopen_req(const struct rd_req *in, bool large)
{
	struct rd_req req = *in;
	const char *path = in->path, *mode = in->fmode;
	int saved = errno;
	const char *why;
	char buf[400];
	struct rd_ctx c;
	bool ok;
	FILE *fp;
	int fd, err;

	if (rt_env()->disable) {
		fp = plain_fopen(path, mode, large);
		if (fp)
			tag_clear(fileno(fp));
		return fp;
	}
	stream_prep(&req, &ok, &why);
	ctx_init(&c, &req);
	if (!ok || !path) {
		stream_plain(&c, path ? why : "no path");
	} else {
		switch (rd_decide(&c)) {
		case RD_DONE:
		case RD_OPENED:
			ctx_close_dir(&c);
			fd = rt_fd_low(c.fd, req.flags & O_CLOEXEC);
			c.fd = -1;
			fmode_no_excl(mode, buf, sizeof(buf));
			/* fopen starts a write-only append stream at the end
			 * (ftell before the first write says so); fdopen does not. */
			if ((req.flags & (O_ACCMODE | O_APPEND)) == (O_WRONLY | O_APPEND))
				lseek(fd, 0, SEEK_END);
			fp = fdopen(fd, buf);
			if (fp)
				return finish_stream(&c, fp, 0, saved, true);
			err = errno;
			c.fd = fd;
			rd_undo(&c);
			c.data_path[0] = '\0';
			c.placed = NULL;
			fallback(&c, "fallback", -err, "fdopen: %s", strerror(err));
			break;
		case RD_REFUSE:
			finish_refused(&c);
			return NULL;
		case RD_FAIL:
			return finish_stream(&c, NULL, -c.err, saved, false);
		default:
			break;
		}
	}
	ctx_close_dir(&c);
	fp = plain_fopen(path, mode, large);
	return finish_stream(&c, fp, errno, saved, ok && path);
}

FILE *rd_fopen(const struct rd_req *in, bool large)
{
	FILE *r;

	/* The runtime sees links as they are (realfn.h). */
	real_enter();
	r = fopen_req(in, large);
	real_leave();
	return r;
}

static FILE *fopen_common(const struct iosig_site *site, const char *call, const char *path,
			  const char *mode, va_list ap, bool large)
{
	double values[RD_MAX_VALUES];
	unsigned n = collect_values(site, ap, values);
	struct rd_req req;

	site_req(&req, site, call, AT_FDCWD, path, 0, 0, mode, values, n);
	return rd_fopen(&req, large);
}

/*
 * True if the owner may open the file we created (fstat of fd) the way
 * `flags` ask: freopen reopens it by name, so a umask that removed the
 * owner's bits would make that fail where the plain call would not.
 */
static bool owner_can_reopen(int fd, int flags)
{
	int acc = flags & O_ACCMODE;
	struct stat st;

	if (fstat(fd, &st))
		return false;
	if (geteuid() == 0)
		return true;
	if ((acc == O_RDONLY || acc == O_RDWR) && !(st.st_mode & S_IRUSR))
		return false;
	if ((acc == O_WRONLY || acc == O_RDWR) && !(st.st_mode & S_IWUSR))
		return false;
	return true;
}

static FILE *freopen_req(const struct rd_req *in, FILE *stream, bool large)
{
	struct rd_req req = *in;
	const char *path = in->path, *mode = in->fmode;
	int saved = errno;
	const char *why;
	char fdmode[64];
	struct rd_ctx c;
	bool ok;
	FILE *fp;

	if (rt_env()->disable) {
		fp = plain_freopen(path, mode, stream, large);
		if (fp)
			tag_clear(fileno(fp));
		return fp;
	}
	stream_prep(&req, &ok, &why);
	ctx_init(&c, &req);
	fmode_no_excl(mode ? mode : "", fdmode, sizeof(fdmode));
	if (!ok || !path) {
		stream_plain(&c, path ? why : "no path: freopen changes the mode of the stream");
	} else {
		switch (rd_decide(&c)) {
		case RD_DONE:
			if (!owner_can_reopen(c.fd, req.flags)) {
				rd_undo(&c);
				c.data_path[0] = '\0';
				c.placed = NULL;
				fallback(&c, "fallback", -EACCES,
					 "the umask leaves the owner no access to reopen the file by name");
				break;
			}
			close(c.fd);
			c.fd = -1;
			ctx_close_dir(&c);
			/* Reopen through the link: freopen must keep the FILE object.
			 * Without 'x': the exclusive creation already happened. */
			fp = plain_freopen(path, fdmode, stream, large);
			return finish_stream(&c, fp, errno, saved, false);
		case RD_OPENED:
			/* The user's own link, checked: freopen reopens it by name. */
			close(c.fd);
			c.fd = -1;
			break;
		case RD_REFUSE:
			finish_refused(&c);
			/* freopen closes the original stream whatever happens. */
			fclose(stream);
			errno = RD_STRICT_ERRNO;
			return NULL;
		case RD_FAIL:
			fclose(stream);
			return finish_stream(&c, NULL, -c.err, saved, false);
		default:
			break;
		}
	}
	ctx_close_dir(&c);
	fp = plain_freopen(path, mode, stream, large);
	return finish_stream(&c, fp, errno, saved, false);
}

FILE *rd_freopen(const struct rd_req *in, FILE *stream, bool large)
{
	FILE *r;

	/* The runtime sees links as they are (realfn.h). */
	real_enter();
	r = freopen_req(in, stream, large);
	real_leave();
	return r;
}

FILE *iosig_freopen(const struct iosig_site *site, const char *path, const char *mode,
		    FILE *stream, ...)
{
	double values[RD_MAX_VALUES];
	struct rd_req req;
	va_list ap;
	unsigned n;

	va_start(ap, stream);
	n = collect_values(site, ap, values);
	va_end(ap);
	site_req(&req, site, "freopen", AT_FDCWD, path, 0, 0, mode, values, n);
	return rd_freopen(&req, stream, false);
}

FILE *iosig_fopen(const struct iosig_site *site, const char *path, const char *mode, ...)
{
	va_list ap;
	FILE *fp;

	va_start(ap, mode);
	fp = fopen_common(site, "fopen", path, mode, ap, false);
	va_end(ap);
	return fp;
}

FILE *iosig_fopen64(const struct iosig_site *site, const char *path, const char *mode, ...)
{
	va_list ap;
	FILE *fp;

	va_start(ap, mode);
	fp = fopen_common(site, "fopen64", path, mode, ap, true);
	va_end(ap);
	return fp;
}

/* ------------------------------------------------------------------------
 * open(2)-like entry points
 * ---------------------------------------------------------------------- */

static int open_common(const struct iosig_site *site, const char *call, int dirfd,
		       const char *path, int flags, mode_t mode, va_list ap)
{
	double values[RD_MAX_VALUES];
	unsigned n = collect_values(site, ap, values);
	struct rd_req req;

	site_req(&req, site, call, dirfd, path, flags, mode, NULL, values, n);
	return rd_openat(&req);
}

int iosig_open(const struct iosig_site *site, const char *path, int flags, mode_t mode, ...)
{
	va_list ap;
	int fd;

	va_start(ap, mode);
	fd = open_common(site, "open", AT_FDCWD, path, flags, mode, ap);
	va_end(ap);
	return fd;
}

int iosig_open64(const struct iosig_site *site, const char *path, int flags, mode_t mode, ...)
{
	va_list ap;
	int fd;

	va_start(ap, mode);
	fd = open_common(site, "open64", AT_FDCWD, path, flags | O_LARGEFILE, mode, ap);
	va_end(ap);
	return fd;
}

int iosig_openat(const struct iosig_site *site, int dirfd, const char *path, int flags,
		 mode_t mode, ...)
{
	va_list ap;
	int fd;

	va_start(ap, mode);
	fd = open_common(site, "openat", dirfd, path, flags, mode, ap);
	va_end(ap);
	return fd;
}

int iosig_creat(const struct iosig_site *site, const char *path, mode_t mode, ...)
{
	va_list ap;
	int fd;

	va_start(ap, mode);
	fd = open_common(site, "creat", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, ap);
	va_end(ap);
	return fd;
}

int iosig_prepare_values(const struct iosig_site *site, const char *call, int dirfd,
			 const char *path, int flags, const double *values, unsigned nvalues)
{
	struct rd_req req;

	/* A site with another ABI is refused before its values are read. */
	site_req(&req, site, call ? call : "prepare", dirfd, path, flags,
		 0666 /* what C++ streams and MPI-IO pass to open(2) */, NULL, values,
		 site_ok(site) ? nvalues : 0);
	return rd_prepare(&req, NULL);
}

int iosig_prepare(const struct iosig_site *site, int dirfd, const char *path, int flags, ...)
{
	double values[RD_MAX_VALUES];
	unsigned n;
	va_list ap;

	va_start(ap, flags);
	n = collect_values(site, ap, values);
	va_end(ap);
	return iosig_prepare_values(site, "prepare", dirfd, path, flags, values, n);
}

/* ------------------------------------------------------------------------
 * Declared openers (#pragma io opener)
 * ---------------------------------------------------------------------- */

/* One call of a declared opener between iosig_opener_begin() and
 * iosig_opener_end(): the calling thread's stack of them. */
struct rd_opener {
	struct rd_opener *next;        /* the call around this one */
	uintptr_t frame;               /* the stack frame of its iosig_opener_begin() */
	const struct iosig_site *site;
	int dirfd;                     /* as the call gave it */
	char dir[PATH_MAX];            /* directory part of the path, relative to dirfd */
	char base[NAME_MAX + 1];       /* the link's name in it */
	char data_path[PATH_MAX];      /* what the link points to; "" when none was made */
};

/* Calls nested deeper than this are not redirected. */
#define RD_OPENER_DEPTH 8

/* initial-exec: the general model calls __tls_get_addr, which would make
 * libiosig.so (and the preload core, which links this file) need the
 * dynamic loader itself (tests/layout).  Programs load libiosig at start-up;
 * where it or the core is dlopen()ed, these 16 bytes come from the static
 * TLS space the C library keeps for such libraries. */
static __thread struct rd_opener *rd_openers __attribute__((tls_model("initial-exec")));
static __thread unsigned rd_nopeners __attribute__((tls_model("initial-exec")));

/* After the call of o: the link goes if the opener created no data file
 * (a name it does not open, such as sqlite3's "stdout"). */
static void opener_finish(const struct rd_opener *o);

/*
 * Finishes the calls that a longjmp or an exception left without their
 * iosig_opener_end(): a call of an opener is in progress only while the
 * stack is deeper than where it began (the stack grows down), so a new
 * iosig_opener_begin() at `frame` or above is not inside it.
 */
static void opener_abandoned(uintptr_t frame)
{
	struct rd_opener *o;

	while ((o = rd_openers) && frame >= o->frame) {
		rd_openers = o->next;
		rd_nopeners--;
		opener_finish(o);
		free(o);
	}
}

static void opener_finish(const struct rd_opener *o)
{
	char buf[PATH_MAX];
	struct stat st;
	ssize_t n;
	int pfd;

	if (!o->data_path[0] || !lstat(o->data_path, &st) || errno != ENOENT)
		return;
	pfd = openat(o->dirfd, o->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return;
	/* Only our own link: the name may have been replaced meanwhile. */
	n = readlinkat(pfd, o->base, buf, sizeof(buf) - 1);
	if (n >= 0) {
		buf[n] = '\0';
		if (!strcmp(buf, o->data_path) && !unlinkat(pfd, o->base, 0))
			declog_event("unlinked", o->site,
				     "the opener created no file: its link was removed", NULL);
	}
	close(pfd);
}

const char *iosig_opener_begin(const struct iosig_site *site, int dirfd, const char *path,
			       int flags, const char *fmode, ...)
{
	double values[RD_MAX_VALUES];
	int saved = errno;
	const char *ret = path;
	struct rd_opener *o;
	struct rd_req req;
	struct rd_ctx c;
	bool ok = true, ccs = false;
	va_list ap;
	unsigned n;

	va_start(ap, fmode);
	n = collect_values(site, ap, values);
	va_end(ap);
	if (rt_env()->disable || !path)
		return path;
	opener_abandoned((uintptr_t)__builtin_frame_address(0));
	if (rd_nopeners >= RD_OPENER_DEPTH)
		return path;
	o = calloc(1, sizeof(*o));
	if (!o)
		return path;
	site_req(&req, site, "opener", dirfd, path, flags, 0, fmode, values, n);
	req.link_only = true;
	if (fmode)
		ok = fmode_flags(fmode, &req.flags, &ccs) && !ccs;
	/* An exclusive or no-follow open would fail on the link: such an
	 * opener gets the data file's own path (and never follows the link). */
	req.nofollow_ok = req.flags & (O_EXCL | O_NOFOLLOW);
	ctx_init(&c, &req);
	/* What is at the path already is the function's own open's, as it is
	 * the C++ stream's after iosig_prepare: nothing is opened here. */
	c.prepare = true;
	if (!ok) {
		stream_plain(&c, ccs ? "',ccs=' modes are left to fopen" : "not a mode fopen accepts");
	} else {
		switch (rd_decide(&c)) {
		case RD_DONE:
			c.action = "linked";
			snprintf(o->dir, sizeof(o->dir), "%s", c.dir);
			snprintf(o->base, sizeof(o->base), "%s", c.base);
			snprintf(o->data_path, sizeof(o->data_path), "%s", c.data_path);
			if (req.nofollow_ok)
				ret = o->data_path;
			break;
		case RD_REFUSE:
			fallback(&c, "plain", 0,
				 "IOSIG_STRICT cannot refuse the call of an opener: it is made as written");
			break;
		default:
			break;
		}
	}
	ctx_close_dir(&c);
	log_result(&c, -1, 0);
	ctx_done(&c);
	o->site = site;
	o->frame = (uintptr_t)__builtin_frame_address(0);
	o->dirfd = dirfd;
	o->next = rd_openers;
	rd_openers = o;
	rd_nopeners++;
	errno = saved;
	return ret;
}

void iosig_opener_end(const struct iosig_site *site)
{
	int saved = errno;
	struct rd_opener *o;
	bool last;

	for (o = rd_openers; o && o->site != site; o = o->next)
		;
	if (!o)
		return; /* begin did nothing */
	/* Calls a longjmp or an exception left are finished with the one
	 * around them. */
	do {
		o = rd_openers;
		rd_openers = o->next;
		rd_nopeners--;
		last = o->site == site;
		opener_finish(o);
		free(o);
	} while (!last);
	errno = saved;
}

void iosig_jobwide(const struct iosig_site *site, ...)
{
	double values[RD_MAX_VALUES];
	int saved = errno;
	struct iosig_sig sig;
	struct rd_req req;
	char why[400];
	va_list ap;

	va_start(ap, site);
	memset(&req, 0, sizeof(req));
	req.nvalues = collect_values(site, ap, values);
	va_end(ap);
	if (rt_env()->disable)
		return;
	req.site = site;
	req.call = "jobwide";
	req.dirfd = AT_FDCWD;
	req.values = values;
	if (sig_eval(&req, &sig, why, sizeof(why)) == 0) {
		rt_jobwide_set(&sig);
		declog_event("jobwide", site, NULL, &sig);
	}
	errno = saved;
}
