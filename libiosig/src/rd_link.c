/* SPDX-License-Identifier: MIT */
/*
 * rd_link.c - the links the runtime makes, told apart from every other link
 * (rd_link.h).  The data directory of a link's target is validated by the
 * walk that validates a new data directory (datadir.c), so a link is
 * trusted exactly as far as a directory the runtime would create data in.
 */
#include "rd_link.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "redirect.h"

/* Length of the prefix of a data file's name before the original name
 * ("L-<16 hex>-", "G-<32 hex>-"), or 0 when `name` is not one. */
static size_t data_name_prefix(const char *name)
{
	size_t hex;

	if (name[0] == 'L' && name[1] == '-')
		hex = 16;
	else if (name[0] == 'G' && name[1] == '-')
		hex = 32;
	else
		return 0;
	for (size_t i = 2; i < 2 + hex; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	if (name[2 + hex] != '-' || !name[3 + hex])
		return 0;
	return 3 + hex;
}

static int classify(struct rd_link *ret, int kind, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Sets the verdict and its reason; returns the kind. */
static int classify(struct rd_link *ret, int kind, int err, const char *fmt, ...)
{
	va_list ap;

	ret->kind = kind;
	ret->err = err;
	va_start(ap, fmt);
	vsnprintf(ret->why, sizeof(ret->why), fmt, ap);
	va_end(ap);
	return kind;
}

int rd_link_check(const struct iosig_catalog *cat, int dirfd, const char *path, unsigned flags,
		  struct rd_link *ret)
{
	char dir[PATH_MAX], norm[PATH_MAX];
	struct iosig_error err;
	char *slash;
	ssize_t n;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->ddfd = -1;
	ret->uid = geteuid();
	if (fstatat(dirfd, path, &ret->link, AT_SYMLINK_NOFOLLOW) || !S_ISLNK(ret->link.st_mode))
		return classify(ret, RD_LINK_NONE, -ENOENT, "not a symbolic link");
	if ((flags & RD_LINK_ANY_USER) && ret->uid == 0)
		ret->uid = ret->link.st_uid;
	if (ret->link.st_uid != ret->uid)
		return classify(ret, RD_LINK_FOREIGN, -EPERM,
				"the link belongs to uid %u, not to uid %u: not one the runtime made for this user",
				(unsigned)ret->link.st_uid, (unsigned)ret->uid);
	n = readlinkat(dirfd, path, ret->target, sizeof(ret->target) - 1);
	if (n <= 0)
		return classify(ret, RD_LINK_FOREIGN, n < 0 ? -errno : -EINVAL,
				"cannot read the link: %s", n < 0 ? strerror(errno) : "empty");
	ret->target[n] = '\0';
	slash = strrchr(ret->target, '/');
	if (ret->target[0] != '/' || rd_path_normalise(ret->target, norm, sizeof(norm)) ||
	    strcmp(norm, ret->target) || slash == ret->target || !data_name_prefix(slash + 1)) {
		return classify(ret, RD_LINK_FOREIGN, -EPERM,
				"the link does not point to a data file of the runtime (<data directory>/L-... or G-...)");
	}
	ret->name = slash + 1;
	memcpy(dir, ret->target, (size_t)(slash - ret->target));
	dir[slash - ret->target] = '\0';

	/* From here on it claims to be the user's redirected file: its data is
	 * trusted only as far as a new data directory would be. */
	ret->mount = cat ? cat_catalog_find_lexical(cat, dir) : NULL;
	if (!ret->mount)
		return classify(ret, RD_LINK_STALE, -EXDEV,
				"the data directory %s is on no mount of the catalog", dir);
	memset(&err, 0, sizeof(err));
	r = cat_datadir_open_existing(ret->mount, dir, ret->uid, &ret->ddfd, &err);
	if (r < 0) {
		ret->ddfd = -1;
		return classify(ret, RD_LINK_STALE, r, "the data directory cannot be trusted: %s",
				err.msg[0] ? err.msg : strerror(-r));
	}
	if (fstatat(ret->ddfd, ret->name, &ret->data, AT_SYMLINK_NOFOLLOW)) {
		r = -errno;
		rd_link_release(ret);
		return classify(ret, RD_LINK_STALE, r, "the data file %s is gone (%s)", ret->target,
				strerror(-r));
	}
	if (!S_ISREG(ret->data.st_mode) || ret->data.st_uid != ret->uid) {
		rd_link_release(ret);
		return classify(ret, RD_LINK_STALE, -EPERM,
				"the data file %s is not a regular file of uid %u", ret->target,
				(unsigned)ret->uid);
	}
	return classify(ret, RD_LINK_OWN, 0, "%s", "");
}

void rd_link_release(struct rd_link *link)
{
	if (link->ddfd >= 0)
		close(link->ddfd);
	link->ddfd = -1;
}

bool rd_link_sole(const struct rd_link *link, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t pre, len;

	if (link->kind != RD_LINK_OWN || link->data.st_nlink != 1)
		return false;
	base = base ? base + 1 : path;
	len = strnlen(base, RD_NAME_BASE_MAX);
	pre = data_name_prefix(link->name);
	return pre && strlen(link->name + pre) == len && !memcmp(link->name + pre, base, len);
}
