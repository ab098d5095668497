/* SPDX-License-Identifier: MIT */
/*
 * client_internal.h - what client.c (the session) and client_io.c (the
 * calls) share.  Private to the client.
 */
#ifndef IOSIG_CLIENT_INTERNAL_H
#define IOSIG_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "client.h"
#include "proto.h"
#include "ring.h"

struct cl_session;

/* One registered file: a handle of the session. */
struct cl_file {
	struct cl_session *s;
	uint32_t handle;
	int priv;              /* our duplicate, for the take-over; -1 when gone */
	unsigned nfds;         /* program descriptors in the table for it */
	unsigned refs;         /* the table's (while nfds > 0) + calls using it */
	int flags;             /* file status flags (O_APPEND, access mode) */
	int err;               /* errno of a failed write, for the next fsync/close */
	bool gone;             /* unregistered, detached or taken over: plain */
	bool tiered;           /* its device keeps data in a tier (IOSD_REG_TIERED) */
	bool home;             /* tiered: its newest reclaimed WRITE/APPEND said IOSD_R2_HOME */
	uint32_t since;        /* ring position at its registration (older entries: another
	                          registration's with the same handle) */
};

/* The process's session with iosigd. */
struct cl_session {
	int sock;              /* SOCK_SEQPACKET to the daemon */
	int kick;              /* eventfd: "kick daemon" */
	int stop;              /* eventfd: stops the watcher */
	unsigned version;      /* negotiated protocol version */
	uint32_t id;           /* the daemon's session id */
	uint32_t seq;          /* our message counter */
	uint32_t max_fds;      /* registrations allowed */
	void *map;             /* the ring */
	size_t map_size;
	struct iosd_ring ring;
	struct iosd_prod prod;
	uint64_t *slot_end;
	uint8_t *hold;
	struct cl_file **files;   /* by handle */
	uint32_t nfiles_cap, handle_hint;
	unsigned users;        /* calls (and the watcher) using it */
	bool dead;             /* taken over: plain I/O */
	bool watching;         /* the watcher runs */
	pthread_t watcher;
	pid_t pid;             /* the process it belongs to */
	pid_t daemon_pid;      /* the daemon's (SO_PEERCRED), 0 = unknown */
	uint32_t change_scan;  /* change_pending(): no entry before it is a pending change */
	unsigned unkicked;     /* entries published to a sleeping daemon without a kick */
	uint64_t unkicked_bytes; /* and their bytes */
};

/* Process-wide state. */
struct cl_state {
	pthread_mutex_t lock;
	const struct cl_host *host;   /* NULL: no interposers, never register */
	struct cl_session *s;         /* the current session, NULL = none */
	bool failed;                  /* the last connect failed (at last_fail) */
	uint64_t last_fail;
	bool atfork;                  /* handlers installed */
};

extern struct cl_state C;

uint64_t cl_now(void);
void cl_lock(void);
void cl_unlock(void);
long cl_sys_close(int fd);
/* A call no longer uses s (lock held). */
void cl_session_put(struct cl_session *s);
void cl_file_put(struct cl_file *f);
/* Unregisters f and drops the table's reference (lock held); nothing if
 * it is gone already (a take-over dropped that reference). */
void cl_file_forget(struct cl_file *f);
/* Reclaims done entries (lock held). */
void cl_reclaim(struct cl_session *s);
/* Reserves an entry and data, waiting for space (the lock is released
 * while waiting).  0, -ENOTCONN (the session died), -EINVAL (too long). */
int cl_reserve(struct cl_session *s, uint64_t len, struct iosd_entry **ret_entry,
	       uint64_t *ret_data_off);
/* Publishes the reserved entry; `hold` keeps it for a waiter (release it
 * with cl_release_entry()).  Returns its position (lock held). */
uint32_t cl_publish(struct cl_session *s, bool hold);
/* Publishes an entry nobody waits for and whose handling may wait (a
 * WRITTEN: the data is in the page cache already): a sleeping daemon is
 * kicked only every CL_LAZY_KICKS such entries or CL_LAZY_KICK_BYTES of
 * their bytes, or by the next cl_publish
 * (every waited entry, a full ring). */
void cl_publish_lazy(struct cl_session *s, uint64_t len);
void cl_release_entry(struct cl_session *s, uint32_t pos);
/* Waits (lock not held) until entry pos reaches `state` (INGESTED, DONE);
 * a dead session completes every entry, so this always returns. */
int cl_wait(struct cl_session *s, uint32_t pos, uint32_t state);
void cl_wait_seq(struct cl_session *s, uint32_t seen);
/* The daemon is gone: writes what the ring holds, makes everything plain
 * (lock held). */
void cl_takeover(struct cl_session *s, const char *why);
/* Everything published so far done (exec, spawn). */
void cl_drain(void);

#endif /* IOSIG_CLIENT_INTERNAL_H */
