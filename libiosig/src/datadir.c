/* SPDX-License-Identifier: MIT */
/*
 * datadir.c - where redirected files go on each mount (docs/design.md §5.1
 * and §5.4), and the secure creation of that directory.
 *
 * The rule (docs/catalog.md "Data directories"), first match wins:
 *   1. `data_dir` from the configuration (${USER}, ${UID}, ${HOME},
 *      ${MOUNT} and ~ expanded);
 *   2. <mnt>/iosig/<user> when <mnt>/iosig exists (provisioned by an admin);
 *   3. $XDG_CACHE_HOME/iosig/data (~/.cache/iosig/data) when that lies on
 *      the mount;
 *   4. /var/tmp/iosig-<uid>, then /tmp/iosig-<uid>, when on the mount;
 *   5. <mnt>/iosig-<uid> when the user may create it in the mount root
 *      (a sticky world-writable root like /dev/shm, or one the user owns).
 * A candidate is taken when it exists and is safe, or when it can be
 * created safely; building a catalog never creates anything.  A candidate
 * that exists but is not safe (another user occupied the predictable name)
 * gives way to "<candidate>-<16 hex>" next to it (occupied_alternative).
 *
 * Safety (the same walk checks and creates): every component below the mount
 * point is opened relative to its parent with O_NOFOLLOW, so no symbolic link
 * is ever followed; each must be a directory on the mount's filesystem; a
 * directory we pass through must belong to root or the user and, if others
 * may write it, be sticky (else they could rename our directory away); the
 * data directory itself must belong to the user and not be writable by
 * group or others.  Missing components are created 0700; a concurrent
 * creator's EEXIST is fine as long as the result passes the same checks.
 */
#include "catalog_internal.h"
#include "env.h"
#include "hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WHY_MAX 300

/* True if `mnt` is the deepest visible mount point containing `path`. */
static bool on_mount(const struct cat_datadir_ctx *ctx, const char *path, const char *mnt)
{
	size_t len = strlen(mnt);

	if (!cat_path_under(path, mnt))
		return false;
	for (size_t i = 0; i < ctx->nmount_paths; i++) {
		const char *p = ctx->mount_paths[i];

		if (strlen(p) > len && cat_path_under(p, mnt) && cat_path_under(path, p))
			return false;
	}
	return true;
}

/* realpath() of the longest existing prefix of `path`, with the rest
 * appended; "" if path is not absolute. */
static void resolve_prefix(const char *path, char *out, size_t size)
{
	char buf[PATH_MAX], real[PATH_MAX];
	size_t cut;

	out[0] = '\0';
	if (path[0] != '/' || strlen(path) >= sizeof(buf))
		return;
	snprintf(buf, sizeof(buf), "%s", path);
	cut = strlen(buf);
	for (;;) {
		if (realpath(buf, real)) {
			const char *rest = path + cut;

			if (strcmp(real, "/") == 0 && rest[0] == '/')
				snprintf(out, size, "%s", rest);
			else
				snprintf(out, size, "%s%s", real, rest);
			return;
		}
		while (cut > 0 && buf[cut - 1] != '/')
			cut--;
		if (cut <= 1)
			return;
		buf[--cut] = '\0';
	}
}

void cat_datadir_ctx_init(struct cat_datadir_ctx *ctx, const char *const *mount_paths, size_t n)
{
	const char *home = env_get("HOME");
	const char *xdg = env_get("XDG_CACHE_HOME");
	char tmp[PATH_MAX];

	memset(ctx, 0, sizeof(*ctx));
	ctx->uid = geteuid();
	ctx->mount_paths = mount_paths;
	ctx->nmount_paths = n;
	if (home && home[0] == '/')
		resolve_prefix(home, ctx->home, sizeof(ctx->home));
	if (xdg && xdg[0] == '/') {
		resolve_prefix(xdg, ctx->cache_home, sizeof(ctx->cache_home));
	} else if (ctx->home[0]) {
		if (cat_fmt(tmp, sizeof(tmp), "%s/.cache", ctx->home))
			resolve_prefix(tmp, ctx->cache_home, sizeof(ctx->cache_home));
	}
}

/* The user's login name, looked up once; false if the uid has none. */
static bool user_name(struct cat_datadir_ctx *ctx)
{
	struct passwd pw, *res = NULL;
	char buf[16384];

	if (!ctx->user_looked_up) {
		ctx->user_looked_up = true;
		if (getpwuid_r(ctx->uid, &pw, buf, sizeof(buf), &res) == 0 && res &&
		    res->pw_name[0] && !strchr(res->pw_name, '/'))
			cat_fmt(ctx->user, sizeof(ctx->user), "%s", res->pw_name);
	}
	return ctx->user[0] != '\0';
}

/* ---- templates ------------------------------------------------------------ */

static const char *const vars[] = { "USER", "UID", "HOME", "MOUNT" };

/* Length of the variable reference at s ("${USER}" -> 7), 0 if none; *idx
 * is the variable or -1 if unknown. */
static size_t var_at(const char *s, int *idx)
{
	const char *end;

	*idx = -1;
	if (s[0] != '$')
		return 0;
	if (s[1] != '{') {
		size_t n = 1;

		while ((s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= 'a' && s[n] <= 'z') || s[n] == '_')
			n++;
		return n > 1 ? n : 0;
	}
	end = strchr(s, '}');
	if (!end)
		return strlen(s);
	for (int i = 0; i < 4; i++)
		if ((size_t)(end - s - 2) == strlen(vars[i]) && !strncmp(s + 2, vars[i], strlen(vars[i])))
			*idx = i;
	return (size_t)(end - s) + 1;
}

bool cat_datadir_template_ok(const char *tmpl, char *bad, size_t size)
{
	for (const char *s = tmpl; *s; s++) {
		int idx;
		size_t n = var_at(s, &idx);

		if (n && idx < 0) {
			snprintf(bad, size, "%.*s", (int)(n > 40 ? 40 : n), s);
			return false;
		}
		if (n)
			s += n - 1;
	}
	return true;
}

static char *why_dup(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *why_dup(const char *fmt, ...)
{
	char buf[WHY_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return strdup(buf);
}

/* Collapses "//" and refuses "." and ".." components; false if refused. */
static bool clean_path(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (*r == '/' && w > s && w[-1] == '/')
			continue;
		*w++ = *r;
	}
	*w = '\0';
	if (w - s > 1 && w[-1] == '/')
		w[-1] = '\0';
	for (char *c = strchr(s, '/'); c; c = strchr(c + 1, '/')) {
		if ((c[1] == '.' && (c[2] == '/' || !c[2])) ||
		    (c[1] == '.' && c[2] == '.' && (c[3] == '/' || !c[3])))
			return false;
	}
	return true;
}

char *cat_datadir_expand(struct cat_datadir_ctx *ctx, const char *tmpl, const char *mnt_path,
			 char **ret_why)
{
	char out[PATH_MAX];
	size_t o = 0;
	const char *s = tmpl;

	*ret_why = NULL;
	if (s[0] == '~' && (s[1] == '/' || !s[1])) {
		if (!ctx->home[0]) {
			*ret_why = why_dup("data_dir %s: $HOME is not set", tmpl);
			return NULL;
		}
		if (!cat_fmt(out, sizeof(out), "%s", ctx->home))
			o = sizeof(out);
		else
			o = strlen(out);
		s++;
	}
	for (; *s && o < sizeof(out) - 1; s++) {
		/* o == sizeof(out) after a truncation: caught below. */
		int idx;
		size_t n = var_at(s, &idx);
		char num[32];
		const char *val = NULL;

		if (!n) {
			out[o++] = *s;
			continue;
		}
		switch (idx) {
		case 0:
			if (!user_name(ctx)) {
				*ret_why = why_dup("data_dir %s: uid %u has no user name", tmpl,
						   (unsigned)ctx->uid);
				return NULL;
			}
			val = ctx->user;
			break;
		case 1:
			snprintf(num, sizeof(num), "%u", (unsigned)ctx->uid);
			val = num;
			break;
		case 2:
			if (!ctx->home[0]) {
				*ret_why = why_dup("data_dir %s: $HOME is not set", tmpl);
				return NULL;
			}
			val = ctx->home;
			break;
		case 3:
			val = mnt_path;
			break;
		default:
			*ret_why = why_dup("data_dir %s: unknown variable", tmpl);
			return NULL;
		}
		if (!cat_fmt(out + o, sizeof(out) - o, "%s", val))
			o = sizeof(out);
		else
			o += strlen(out + o);
		s += n - 1;
	}
	if (o >= sizeof(out) - 1) {
		*ret_why = why_dup("data_dir %.100s...: too long", tmpl);
		return NULL;
	}
	out[o] = '\0';
	if (out[0] != '/' || !clean_path(out)) {
		*ret_why = why_dup("data_dir %s: expands to '%s', not an absolute path without . or ..",
				   tmpl, out);
		return NULL;
	}
	return strdup(out);
}

/* ---- the walk ------------------------------------------------------------- */

enum walk_mode {
	WALK_CHECK,    /* stop at the first missing component: could it be created? */
	WALK_OPEN,     /* open what exists, create nothing (-ENOENT if missing) */
	WALK_CREATE,   /* create what is missing, open */
};

/*
 * Walks from the mount point `mnt` (st_dev `dev`) to `dir` below it, as
 * described at the top of the file.  CHECK stops at the first missing
 * component and tells whether it could be created; OPEN and CREATE return
 * an O_RDONLY|O_DIRECTORY fd in *ret_fd.  0 or -errno with `why`.
 */
static int walk(const char *mnt, dev_t dev, const char *dir, enum walk_mode mode, uid_t uid,
		int *ret_fd, char *why, size_t whysz)
{
	char prefix[PATH_MAX];
	const char *rel;
	struct stat st;
	int cur, r;

	if (!cat_path_under(dir, mnt)) {
		cat_fmt(why, whysz, "%s is not on %s", dir, mnt);
		return -EXDEV;
	}
	rel = dir + strlen(mnt);
	if (!cat_fmt(prefix, sizeof(prefix), "%s", mnt))
		return -ENAMETOOLONG;
	cur = open(mnt, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0) {
		r = -errno;
		cat_fmt(why, whysz, "cannot open %s: %s", mnt, strerror(-r));
		return r;
	}
	if (fstat(cur, &st) < 0 || st.st_dev != dev) {
		cat_fmt(why, whysz, "%s is no longer the filesystem of the catalog", mnt);
		r = -EXDEV;
		goto out_close_cur;
	}
	for (;;) {
		char comp[NAME_MAX + 1];
		size_t len;
		int next;

		while (*rel == '/')
			rel++;
		if (!*rel)
			break;
		len = strcspn(rel, "/");
		if (len > NAME_MAX) {
			cat_fmt(why, whysz, "a component of %s is too long", dir);
			r = -ENAMETOOLONG;
			goto out_close_cur;
		}
		memcpy(comp, rel, len);
		comp[len] = '\0';
		rel += len;
		/* `cur` is a directory we pass through. */
		if (st.st_uid != 0 && st.st_uid != uid) {
			cat_fmt(why, whysz, "%s belongs to uid %u: it could replace what lies below",
				 prefix, (unsigned)st.st_uid);
			r = -EPERM;
			goto out_close_cur;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
			cat_fmt(why, whysz, "%s is writable by others and not sticky", prefix);
			r = -EPERM;
			goto out_close_cur;
		}
		next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && mode == WALK_OPEN) {
			cat_fmt(why, whysz, "%s%s%s does not exist", prefix, strcmp(prefix, "/") ? "/" : "",
				comp);
			r = -ENOENT;
			goto out_close_cur;
		}
		if (next < 0 && errno == ENOENT) {
			if (mode == WALK_CHECK) {
				if (faccessat(AT_FDCWD, prefix, W_OK | X_OK, AT_EACCESS) < 0) {
					cat_fmt(why, whysz, "%s is not writable: cannot create %s", prefix,
						 dir);
					r = -EACCES;
				} else {
					r = 0;
				}
				goto out_close_cur;
			}
			if (mkdirat(cur, comp, 0700) < 0 && errno != EEXIST) {
				r = -errno;
				cat_fmt(why, whysz, "cannot create %s/%s: %s", prefix, comp,
					 strerror(-r));
				goto out_close_cur;
			}
			/* Ours, or a concurrent creator's: checked below. */
			next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		cat_fmt(prefix + strlen(prefix), sizeof(prefix) - strlen(prefix), "%s%s",
		       strcmp(prefix, "/") ? "/" : "", comp);
		if (next < 0) {
			struct stat lst;

			r = -errno;
			if (fstatat(cur, comp, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode)) {
				cat_fmt(why, whysz, "%s is a symbolic link", prefix);
				r = -ELOOP;
			} else if (r == -ENOTDIR) {
				cat_fmt(why, whysz, "%s is not a directory", prefix);
			} else {
				cat_fmt(why, whysz, "cannot open %s: %s", prefix, strerror(-r));
			}
			goto out_close_cur;
		}
		close(cur);
		cur = next;
		if (fstat(cur, &st) < 0 || !S_ISDIR(st.st_mode)) {
			cat_fmt(why, whysz, "%s is not a directory", prefix);
			r = -ENOTDIR;
			goto out_close_cur;
		}
		if (st.st_dev != dev) {
			cat_fmt(why, whysz, "%s is on another filesystem", prefix);
			r = -EXDEV;
			goto out_close_cur;
		}
	}
	if (st.st_uid != uid) {
		cat_fmt(why, whysz, "%s belongs to uid %u, not to uid %u", dir, (unsigned)st.st_uid,
			 (unsigned)uid);
		r = -EPERM;
		goto out_close_cur;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		cat_fmt(why, whysz, "%s is writable by group or others (mode %04o)", dir,
			 (unsigned)(st.st_mode & 07777));
		r = -EPERM;
		goto out_close_cur;
	}
	if (mode == WALK_CHECK) {
		r = 0;
		goto out_close_cur;
	}
	{
		struct stat st2;
		int fd = openat(cur, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0) {
			r = -errno;
			cat_fmt(why, whysz, "cannot open %s: %s", dir, strerror(-r));
			goto out_close_cur;
		}
		if (fstat(fd, &st2) < 0 || st2.st_ino != st.st_ino || st2.st_dev != st.st_dev) {
			close(fd);
			cat_fmt(why, whysz, "%s changed while it was opened", dir);
			r = -EAGAIN;
			goto out_close_cur;
		}
		*ret_fd = fd;
		r = 0;
	}
out_close_cur:
	close(cur);
	return r;
}

/* True if name is base + "-" + 16 lowercase hex digits. */
static bool is_alternative(const char *name, const char *base, size_t blen)
{
	if (strncmp(name, base, blen) || name[blen] != '-' || strlen(name) != blen + 17)
		return false;
	for (const char *p = name + blen + 1; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

/*
 * The candidate `cand` exists and is not safe: most often another user made
 * a directory (or anything else) at that predictable name to keep this user
 * off the mount.  The user's data directory is then "<cand>-<16 hex>" in the
 * same parent: the first such name, in byte order, that is already a safe
 * directory of the user's, else a new unpredictable one.  Only the user can
 * own a directory that passes the checks, so the name needs no record
 * anywhere: every process of the user finds the same one.  0 with the path
 * in out, or -errno.
 */
static int occupied_alternative(struct cat_datadir_ctx *ctx, const char *mnt, dev_t dev,
				const char *cand, char *out, size_t size)
{
	const char *slash = strrchr(cand, '/');
	char parent[PATH_MAX], best[NAME_MAX + 1] = "", path[PATH_MAX], why[WHY_MAX];
	size_t blen;
	struct dirent *e;
	DIR *d;

	if (!slash || slash == cand || (size_t)(slash - cand) >= sizeof(parent))
		return -EINVAL;
	memcpy(parent, cand, (size_t)(slash - cand));
	parent[slash - cand] = '\0';
	blen = strlen(slash + 1);
	d = opendir(parent);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!is_alternative(e->d_name, slash + 1, blen) ||
		    (best[0] && strcmp(e->d_name, best) >= 0) ||
		    !cat_fmt(path, sizeof(path), "%s/%s", parent, e->d_name))
			continue;
		if (walk(mnt, dev, path, WALK_CHECK, ctx->uid, NULL, why, sizeof(why)) == 0)
			snprintf(best, sizeof(best), "%s", e->d_name);
	}
	closedir(d);
	if (best[0])
		return cat_fmt(out, size, "%s/%s", parent, best) ? 0 : -ENAMETOOLONG;
	if (!cat_fmt(path, sizeof(path), "%s-%016llx", cand, (unsigned long long)hash_random64()))
		return -ENAMETOOLONG;
	if (walk(mnt, dev, path, WALK_CHECK, ctx->uid, NULL, why, sizeof(why)) < 0)
		return -EACCES;
	return cat_fmt(out, size, "%s", path) ? 0 : -ENAMETOOLONG;
}

int cat_datadir_choose(struct cat_datadir_ctx *ctx, const char *mnt_path, dev_t dev,
		       const char *configured, char **ret_dir, char **ret_why)
{
	char cands[4][PATH_MAX];
	char why[WHY_MAX], first_bad[WHY_MAX] = "", tried[WHY_MAX] = "";
	const char *sep = strcmp(mnt_path, "/") ? "/" : "";
	unsigned n = 0;
	struct stat st;
	char probe[PATH_MAX], alt[PATH_MAX];

	if (configured) {
		if (!on_mount(ctx, configured, mnt_path)) {
			*ret_why = why_dup("configured data_dir %s is not on this mount", configured);
			return -ENOENT;
		}
		if (walk(mnt_path, dev, configured, WALK_CHECK, ctx->uid, NULL, why, sizeof(why)) < 0) {
			*ret_why = why_dup("configured data_dir: %s", why);
			return -ENOENT;
		}
		*ret_dir = strdup(configured);
		return *ret_dir ? 0 : -ENOMEM;
	}
	if (cat_fmt(probe, sizeof(probe), "%s%siosig", mnt_path, sep) && lstat(probe, &st) == 0 &&
	    S_ISDIR(st.st_mode)) {
		if (user_name(ctx) ? cat_fmt(cands[n], PATH_MAX, "%s/%s", probe, ctx->user) :
				     cat_fmt(cands[n], PATH_MAX, "%s/%u", probe, (unsigned)ctx->uid))
			n++;
	}
	if (ctx->cache_home[0] && on_mount(ctx, ctx->cache_home, mnt_path) &&
	    cat_fmt(cands[n], PATH_MAX, "%s/iosig/data", ctx->cache_home))
		n++;
	if (on_mount(ctx, "/var/tmp", mnt_path))
		n += cat_fmt(cands[n], PATH_MAX, "/var/tmp/iosig-%u", (unsigned)ctx->uid);
	else if (on_mount(ctx, "/tmp", mnt_path))
		n += cat_fmt(cands[n], PATH_MAX, "/tmp/iosig-%u", (unsigned)ctx->uid);
	n += cat_fmt(cands[n], PATH_MAX, "%s%siosig-%u", mnt_path, sep, (unsigned)ctx->uid);
	for (unsigned i = 0; i < n; i++) {
		int r = walk(mnt_path, dev, cands[i], WALK_CHECK, ctx->uid, NULL, why, sizeof(why));
		size_t tl = strlen(tried);

		if (r == 0 || (r != -EACCES && occupied_alternative(ctx, mnt_path, dev, cands[i], alt,
								    sizeof(alt)) == 0)) {
			*ret_dir = strdup(r == 0 ? cands[i] : alt);
			return *ret_dir ? 0 : -ENOMEM;
		}
		/* Something that exists but is unsafe is worth reporting
		 * first; "not writable" is the ordinary case. */
		if (!first_bad[0] && r != -EACCES)
			cat_fmt(first_bad, sizeof(first_bad), "%s", why);
		cat_fmt(tried + tl, sizeof(tried) - tl, "%s%s", tl ? ", " : "", cands[i]);
	}
	if (first_bad[0])
		*ret_why = why_dup("no safe data directory (%s); set data_dir for %s in the config",
				   first_bad, mnt_path);
	else
		*ret_why = why_dup("no data directory the user may create (tried %s); set data_dir for %s in the config",
				   tried, mnt_path);
	return -ENOENT;
}

int cat_datadir_open_existing(const struct iosig_mount *mount, const char *dir, uid_t uid,
			      int *ret_fd, struct iosig_error *err)
{
	char why[WHY_MAX];
	int fd = -1, r;

	r = walk(mount->path, (dev_t)mount->dev, dir, WALK_OPEN, uid, &fd, why, sizeof(why));
	if (r < 0) {
		cat_error(err, "", 0, 0, "%s", why);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int cat_datadir_open(const struct iosig_mount *mount, int *ret_fd, struct iosig_error *err)
{
	char why[WHY_MAX];
	int fd = -1, r;

	if (!mount || !mount->data_dir) {
		cat_error(err, "", 0, 0, "%s has no data directory%s%s",
			  mount ? mount->path : "(null)", mount && mount->ineligible ? ": " : "",
			  mount && mount->ineligible ? mount->ineligible : "");
		return -ENOENT;
	}
	r = walk(mount->path, (dev_t)mount->dev, mount->data_dir, WALK_CREATE, geteuid(), &fd, why,
		 sizeof(why));
	if (r < 0) {
		cat_error(err, "", 0, 0, "data directory %s: %s", mount->data_dir, why);
		return r;
	}
	*ret_fd = fd;
	return 0;
}
