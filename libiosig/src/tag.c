/* SPDX-License-Identifier: MIT */
/*
 * tag.c - the fd tagging table (see tag.h).
 *
 * An fdtab (fdtab.h) of record pointers.  Readers asking "is this fd
 * tagged?" do acquire loads and no locking; records are replaced and freed
 * only under tag_mutex, and tag_get() copies a record under the same lock,
 * so no reader ever sees freed memory.
 */
#include "tag.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A stored tag: the fixed part plus the two paths in one allocation, so a
 * tagged descriptor costs a few hundred bytes, not two PATH_MAX buffers. */
struct tag_rec {
	struct iosig_sig sig;
	const struct iosig_mount *mount;
	bool redirected;
	uint64_t dev;
	uint64_t ino;
	size_t orig_len;    /* the paths follow in text[]: orig, NUL, data, NUL */
	char text[];
};

static struct fdtab table;
static pthread_mutex_t tag_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t tag_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
	pthread_mutex_lock(&tag_mutex);
}

static void fork_release(void)
{
	pthread_mutex_unlock(&tag_mutex);
}

static void tag_init(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_release);
}

static void lock(void)
{
	pthread_once(&tag_once, tag_init);
	pthread_mutex_lock(&tag_mutex);
}

static void unlock(void)
{
	pthread_mutex_unlock(&tag_mutex);
}

bool tag_lookup(int fd)
{
	return fdtab_get(&table, fd) != NULL;
}

int tag_set(int fd, const struct iosig_sig *sig, const struct iosig_mount *mount,
	    const char *orig_path, const char *data_path)
{
	size_t olen = orig_path ? strnlen(orig_path, PATH_MAX - 1) : 0;
	size_t dlen = data_path ? strnlen(data_path, PATH_MAX - 1) : 0;
	struct tag_rec *rec;
	void *old;
	struct stat st;
	int r;

	if (fd < 0 || fd >= TAG_MAX_FD || fstat(fd, &st))
		return -EBADF;
	rec = malloc(sizeof(*rec) + olen + dlen + 2);
	if (!rec)
		return -ENOMEM;
	rec->sig = *sig;
	rec->mount = mount;
	rec->redirected = data_path != NULL;
	rec->dev = st.st_dev;
	rec->ino = st.st_ino;
	rec->orig_len = olen;
	memcpy(rec->text, orig_path ? orig_path : "", olen);
	rec->text[olen] = '\0';
	memcpy(rec->text + olen + 1, data_path ? data_path : "", dlen);
	rec->text[olen + 1 + dlen] = '\0';
	lock();
	r = fdtab_set(&table, fd, rec, &old);
	unlock();
	if (r < 0) {
		free(rec);
		return r;
	}
	free(old);
	return 0;
}

void tag_clear(int fd)
{
	void *old;

	if (!fdtab_get(&table, fd))
		return;
	lock();
	fdtab_set(&table, fd, NULL, &old);
	unlock();
	free(old);
}

int tag_get(int fd, unsigned flags, struct tag_info *ret_info)
{
	struct tag_rec *rec;
	struct stat st;
	void *old;

	if (!fdtab_get(&table, fd))
		return -ENOENT;
	if ((flags & TAG_VERIFY) && fstat(fd, &st))
		st.st_ino = 0, st.st_dev = 0;
	lock();
	rec = fdtab_get(&table, fd);
	if (!rec) {
		unlock();
		return -ENOENT;
	}
	if ((flags & TAG_VERIFY) && (rec->dev != (uint64_t)st.st_dev || rec->ino != (uint64_t)st.st_ino)) {
		fdtab_set(&table, fd, NULL, &old);
		unlock();
		free(rec);
		return -ESTALE;
	}
	ret_info->sig = rec->sig;
	ret_info->mount = rec->mount;
	ret_info->redirected = rec->redirected;
	ret_info->dev = rec->dev;
	ret_info->ino = rec->ino;
	memcpy(ret_info->orig_path, rec->text, rec->orig_len + 1);
	strcpy(ret_info->data_path, rec->text + rec->orig_len + 1);
	unlock();
	return 0;
}

static void drop(void *ctx, int fd, void *val)
{
	void *old;

	fdtab_set(ctx, fd, NULL, &old);
	free(old);
}

void tag_clear_all(void)
{
	lock();
	fdtab_each(&table, drop, &table);
	unlock();
}
