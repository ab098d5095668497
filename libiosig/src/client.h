/* SPDX-License-Identifier: MIT */
/*
 * client.h - the daemon client (docs/daemon.md): a session with iosigd per
 * process, the ring producer, and what the interposed calls do on a
 * descriptor the daemon handles.  Private.
 *
 * Two halves meet here.  The interposers (interpose.c: write(), read(),
 * fsync(), close() ...) own the table of handled descriptors - a struct
 * fdtab they look at without locks, so that an untagged descriptor costs
 * one lookup.  The client (client.c, client_io.c) fills that table through
 * the host functions the interposers give it, and the interposers call the
 * client through struct cl_ops for descriptors in it.  libiosig.so links
 * both halves; iosig-redirect's preload keeps the interposers in its libc-only
 * front library and the client in the core it loads when a rule first
 * matches (preload_core.h), so the front learns which descriptors are
 * tagged without loading anything: only the core puts them in the table.
 */
#ifndef IOSIG_CLIENT_H
#define IOSIG_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "iosig.h"

/* Bumped whenever struct cl_host or struct cl_ops changes. */
#define CL_VERSION 1

/* A table value that is not a file: a descriptor of the client itself
 * (its socket, eventfd, private duplicates).  Data calls on it are plain;
 * closing or replacing it ends the session (the program closed it). */
#define CL_INTERNAL ((void *)1)

/* What the interposers give the client: their table. */
struct cl_host {
	unsigned version;                           /* CL_VERSION */
	/* Sets fd's value (NULL: plain again); 0 or -errno.  Called with
	 * the client's lock held. */
	int (*set)(int fd, void *val);
	void *(*get)(int fd);
	/* Clears every entry (after fork in the child, after a take-over). */
	void (*clear_all)(void);
	/* Clears every entry whose value is val (a detached file). */
	void (*clear_value)(void *val);
};

/* Kinds of data calls. */
enum cl_kind {
	CL_AT_POS,       /* write/read/writev/readv: at the file position */
	CL_AT_OFF,       /* pwrite/pread and the vector forms: at an offset */
};

/*
 * What the client does for a handled descriptor.  Each returns true when it
 * handled the call (*ret set, errno set when *ret is -1), false when the
 * caller must do the plain call itself (the daemon died, the descriptor
 * became plain, a vfork child).  `f` is the table value of fd.
 */
struct cl_ops {
	unsigned version;   /* CL_VERSION */
	bool (*write)(void *f, int fd, const struct iovec *iov, int cnt, off_t off,
		      enum cl_kind kind, ssize_t *ret);
	bool (*read)(void *f, int fd, const struct iovec *iov, int cnt, off_t off,
		     enum cl_kind kind, ssize_t *ret);
	/* fsync (datasync false) or fdatasync */
	bool (*sync)(void *f, int fd, bool datasync, int *ret);
	bool (*sync_range)(void *f, int fd, off_t off, off_t len, unsigned flags, int *ret);
	bool (*truncate)(void *f, int fd, off_t len, int *ret);
	/* fallocate(2) semantics (-1/errno) */
	bool (*fallocate)(void *f, int fd, int mode, off_t off, off_t len, int *ret);
	/* Every earlier write of the file done (fstat, lseek SEEK_END, an
	 * unlock): 0, or an error the program must see (none here). */
	void (*barrier)(void *f, int fd);
	/* fd is about to be closed or replaced (dup2 onto it): untags it and,
	 * for the file's last descriptor, waits for its writes and forgets it.
	 * Returns 0 or the write error close() must report. */
	int (*release)(void *f, int fd);
	/* newfd is a duplicate of oldfd (dup, dup2, fcntl F_DUPFD...). */
	void (*dup)(int oldfd, int newfd);
	/* fd's file leaves the daemon (mmap, O_DIRECT, sendfile ...): its
	 * writes done, every descriptor of it plain from now on. */
	void (*detach)(void *f, int fd);
	/* Waits until everything this process published is done (exec, spawn). */
	void (*drain)(void);
};

/* The client's side of the handshake (client_io.c): records the host and
 * returns the operations.  libiosig.so: interpose.c's constructor calls it;
 * the preload: its front, when it loads the core. */
const struct cl_ops *client_attach(const struct cl_host *host);

/*
 * After an annotated open returned fd (open flags `flags`, evaluated
 * signature `sig`): registers it with the daemon when one is reachable
 * and the interposers are there to honour it.  Never fails the open:
 * anything that goes wrong leaves fd plain.  True when the daemon took fd
 * (its calls now go through the interposers to the ring).
 */
bool client_register(int fd, int flags, const struct iosig_sig *sig);

#endif /* IOSIG_CLIENT_H */
