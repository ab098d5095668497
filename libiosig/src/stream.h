/* SPDX-License-Identifier: MIT */
/*
 * stream.h - stdio streams whose I/O goes through the interposed calls
 * (docs/daemon.md "Semantics", stdio).  Private.
 *
 * glibc's stdio reads and writes a FILE's descriptor through its own
 * internal calls, which no interposer sees.  An annotated fopen whose
 * descriptor iosigd took therefore hands the program a cookie stream
 * (fopencookie) instead, whose read, write, seek and close functions call
 * read(), write(), lseek() and close() on that descriptor - the
 * interposers, hence the ring.  It has the plain stream's mode, buffer
 * size and descriptor (fileno()).
 *
 * The order keeps the descriptor plain whenever anything fails:
 * stream_new() before the registration (it can fail; nothing is decided
 * yet), then stream_adopt() once the daemon took the descriptor (cannot
 * fail), or stream_discard() when it did not.
 */
#ifndef IOSIG_STREAM_H
#define IOSIG_STREAM_H

#include <stdio.h>

struct rd_stream;

/* A cookie stream ready to take over fp (just opened, no I/O done on it
 * yet); NULL when it cannot (no memory, a C library whose FILE it does not
 * know, a stream that was already used): fp then stays as it is. */
struct rd_stream *stream_new(FILE *fp);

/* The cookie stream for fp's descriptor; fp is freed, its descriptor is
 * not closed. */
FILE *stream_adopt(struct rd_stream *st, FILE *fp);

/* Frees a stream that stream_adopt() did not take. */
void stream_discard(struct rd_stream *st);

/* freopen of fp: glibc never closes a cookie it reopens.  Before the call,
 * takes fp's handed-over stream (NULL: fp is not one), to be freed by
 * stream_reopened() after it. */
struct rd_stream *stream_reopening(FILE *fp);
void stream_reopened(struct rd_stream *st);

/* At exit, before the client waits for the ring: writes what the streams
 * a program did not close still buffer (exit() flushes them only after the
 * libraries' destructors).  Nothing when no stream was handed over. */
void stream_flush_all(void);

#endif /* IOSIG_STREAM_H */
