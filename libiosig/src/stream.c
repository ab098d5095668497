/* SPDX-License-Identifier: MIT */
/*
 * stream.c - cookie streams on a descriptor iosigd handles (stream.h).
 *
 * The cookie functions make the calls a plain glibc FILE makes on its
 * descriptor, but through the exported read(), write(), lseek() and close()
 * - libiosig.so's interposers, or the preload front's (the core that links
 * this file binds these names to the first definition in the process) - so
 * a handled descriptor's stream reaches the ring.  What glibc does above
 * those calls is the same code for both kinds of stream (the cookie jump
 * table is the file one with these four calls), and the rest is set up
 * here as fopen would have set it:
 *
 *   mode          from the descriptor's access mode and O_APPEND, which
 *                 fopen/fdopen derived from the fopen mode ("r", "w", "a",
 *                 "r+", "a+": what fopencookie distinguishes);
 *   buffer        the size _IO_file_doallocate picks: st_blksize when it is
 *                 below BUFSIZ, else BUFSIZ (fopencookie's would always be
 *                 BUFSIZ: its stat fails);
 *   fileno()      the descriptor: a cookie FILE has _fileno -2 ("no
 *                 descriptor, still a file"); glibc reads _fileno only for
 *                 fileno(), for its own calls on a file's descriptor (which
 *                 the cookie jump table replaces), to ask whether the stream
 *                 is open (it is) and for freopen;
 *   freopen       works: glibc makes the stream a plain file stream again
 *                 without closing its cookie, which libiosig.so's freopen
 *                 frees after it (stream_reopening);
 *   the plain FILE  freed without closing its descriptor: fclose of a FILE
 *                 whose _fileno is -1 unlinks and frees it and skips the
 *                 close (_IO_file_close_it and _IO_file_finish only close
 *                 an open one).  Nothing was buffered in it yet.
 *
 * Write errors follow the plain FILE: a short count with errno set, the
 * stream's error indicator on, never -1 (glibc's callers count bytes).
 */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct rd_stream {
	struct rd_stream *next;   /* the live handed-over streams (stream_reopening) */
	FILE *fp;              /* the cookie stream */
	int fd;                /* -1 until adopted (then closing closes nothing) */
	size_t bufsize;
	char buf[BUFSIZ];      /* the stream's buffer, as a user buffer */
};

/* A stream was handed over in this process (stream_flush_all). */
static atomic_bool adopted;

/* The handed-over streams, so that a freopen can free its cookie (a
 * program has a handful open: a list). */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rd_stream *live;

/* Takes st (adopted) off the list, if it is on it. */
static void live_remove(struct rd_stream *st)
{
	struct rd_stream **pp;

	pthread_mutex_lock(&live_lock);
	for (pp = &live; *pp; pp = &(*pp)->next) {
		if (*pp == st) {
			*pp = st->next;
			break;
		}
	}
	pthread_mutex_unlock(&live_lock);
}

struct rd_stream *stream_reopening(FILE *fp)
{
	struct rd_stream **pp, *st = NULL;

	pthread_mutex_lock(&live_lock);
	for (pp = &live; *pp; pp = &(*pp)->next) {
		if ((*pp)->fp == fp) {
			st = *pp;
			*pp = st->next;
			break;
		}
	}
	pthread_mutex_unlock(&live_lock);
	return st;
}

void stream_reopened(struct rd_stream *st)
{
	free(st);
}

void stream_flush_all(void)
{
	int saved = errno;

	if (atomic_load_explicit(&adopted, memory_order_relaxed))
		fflush(NULL);
	errno = saved;
}

#ifdef __GLIBC__

static ssize_t st_read(void *cookie, char *buf, size_t n)
{
	struct rd_stream *st = cookie;

	return read(st->fd, buf, n);
}

static ssize_t st_write(void *cookie, const char *buf, size_t n)
{
	struct rd_stream *st = cookie;
	size_t done = 0;
	ssize_t r;

	/* _IO_new_file_write: until all is written or a call fails. */
	while (done < n) {
		r = write(st->fd, buf + done, n - done);
		if (r < 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static int st_seek(void *cookie, off64_t *pos, int whence)
{
	struct rd_stream *st = cookie;
	off_t r = lseek(st->fd, (off_t)*pos, whence);

	if (r < 0)
		return -1;
	*pos = r;
	return 0;
}

static int st_close(void *cookie)
{
	struct rd_stream *st = cookie;
	int r = st->fd >= 0 ? close(st->fd) : 0;

	if (st->fd >= 0)
		live_remove(st);
	free(st);
	return r;
}

struct rd_stream *stream_new(FILE *fp)
{
	static const cookie_io_functions_t fns = {
		.read = st_read, .write = st_write, .seek = st_seek, .close = st_close,
	};
	int fd = fileno(fp), fl, saved = errno;
	struct rd_stream *st;
	const char *mode;
	struct stat sb;

	/* Only a stream nothing was done on (no buffer, nothing pushed back). */
	if (fd < 0 || fp->_IO_buf_base || fp->_IO_save_base)
		return NULL;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fstat(fd, &sb) < 0)
		goto fail;
	switch (fl & O_ACCMODE) {
	case O_RDONLY: mode = "r"; break;
	case O_WRONLY: mode = (fl & O_APPEND) ? "a" : "w"; break;
	case O_RDWR: mode = (fl & O_APPEND) ? "a+" : "r+"; break;
	default: goto fail;
	}
	st = malloc(sizeof(*st));
	if (!st)
		goto fail;
	st->fd = -1;
	st->bufsize = sb.st_blksize > 0 && sb.st_blksize < BUFSIZ ? (size_t)sb.st_blksize : BUFSIZ;
	st->fp = fopencookie(st, mode, fns);
	if (!st->fp) {
		free(st);
		goto fail;
	}
	errno = saved;
	return st;
fail:
	errno = saved;
	return NULL;
}

FILE *stream_adopt(struct rd_stream *st, FILE *fp)
{
	FILE *r = st->fp;
	int saved = errno;

	st->fd = fileno(fp);
	r->_fileno = st->fd;
	/* A byte stream's wide data is (void *)-1 ("crash if used"), but
	 * glibc's freopen sets the wide vtable of any stream whose wide data is
	 * not NULL: NULL, so that freopen works as on a plain stream (it makes
	 * it a plain file stream; the descriptor left the daemon before,
	 * interpose_stream_leaving). */
	r->_wide_data = NULL;
	setvbuf(r, st->buf, _IOFBF, st->bufsize);
	fp->_fileno = -1;
	fclose(fp);
	pthread_mutex_lock(&live_lock);
	st->next = live;
	live = st;
	pthread_mutex_unlock(&live_lock);
	atomic_store_explicit(&adopted, true, memory_order_relaxed);
	errno = saved;
	return r;
}

void stream_discard(struct rd_stream *st)
{
	int saved = errno;

	fclose(st->fp);    /* st_close frees st; fd -1: closes nothing */
	errno = saved;
}

#else /* not glibc: its FILE is not known here, streams stay plain */

struct rd_stream *stream_new(FILE *fp)
{
	(void)fp;
	return NULL;
}

FILE *stream_adopt(struct rd_stream *st, FILE *fp)
{
	(void)st;
	return fp;
}

void stream_discard(struct rd_stream *st)
{
	(void)st;
}

#endif
