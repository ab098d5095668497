/* SPDX-License-Identifier: MIT */
/*
 * iosigd.h - the daemon's parts and what they share (docs/daemon.md):
 *
 *   main.c      command line, start-up, the signal that ends it
 *   dconfig.c   the `daemon:` section of the configuration file
 *   log.c       one place that prints
 *   listener.c  the Unix socket, accept and SO_PEERCRED
 *   session.c   one client: its messages, its ring, its registrations
 *   engine.c    the loop: epoll, io_uring, devices and their policies,
 *               files and the ordering of their operations
 *   device.c    a file's device: the catalog's mount as the policies see
 *               it (policy_dev_from_mount()), the policies iosigd runs
 *   extmap.c    FIEMAP: where a file's bytes lie on the device
 *   status.c    the STATUS answer (JSON)
 *   systemd.c   socket activation and readiness (libsystemd)
 *
 * One thread does everything; nothing here is locked.
 */
#ifndef IOSIGD_H
#define IOSIGD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>

#include <liburing.h>

#include "dconfig.h"
#include "iosig.h"
#include "pol_hist.h"   /* latency histograms, shared with iosig-sim */
#include "pol_util.h"   /* lists (pol_list_*), shared with the policies */
#include "policy.h"
#include "proto.h"
#include "ring.h"

/* ---- log.c ---- */

enum dlog_level { DLOG_ERR, DLOG_WARN, DLOG_INFO, DLOG_DEBUG };

/* Prints "iosigd: message" to stderr when level <= the verbosity. */
void dlog(enum dlog_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dlog_set_level(enum dlog_level level);
bool dlog_enabled(enum dlog_level level);

/* ---- the engine's objects ---- */

struct daemon;
struct dsession;

/* What an epoll event points at. */
enum dwatch_kind { DW_LISTEN, DW_SOCK, DW_KICK, DW_URING, DW_TIMER, DW_SIGNAL };

struct dwatch {
	enum dwatch_kind kind;
	void *obj;                 /* struct dsession for DW_SOCK / DW_KICK */
};

/* One device (a mounted filesystem) with its policy instance (one device
 * per instance: the home-device policies keep per-device state only). */
struct ddev {
	struct policy_list link;    /* in daemon.devs */
	struct daemon *d;
	uint64_t st_dev;           /* of the filesystem */
	char name[IOSD_NAME_MAX];  /* the mount point */
	char policy_spec[IOSD_NAME_MAX * 2];
	struct policy_dev_info info;
	struct policy_env env;
	struct policy *pol;
	struct dtiers *tiers;      /* its tier (tiers.c), NULL = none */
	unsigned inflight;         /* commands issued, not completed */
	uint64_t wake;             /* tick wanted at (ns), UINT64_MAX = none */
	bool dirty;                /* dispatch() is due */
	bool passthrough;          /* global mount not scheduled: registrations refused */
	/* counters for status */
	uint64_t passed_through;   /* registrations refused as passthrough */
	uint64_t requests, bytes_read, bytes_written, commands, expedited;
	uint64_t writes_home_cached; /* tier policy's writes sent home into the page cache at once
	                               (home_now(), env_home()) */
	uint64_t writes_direct;    /* tiered: WRITTEN entries (a client's own writes, IOSD_R2_HOME) */
	uint64_t syncs_covered;    /* fsyncs of tiered files the tier's records covered */
	struct pol_hist lat;       /* arrival to completion of every request (ns) */
};

/* Where a file's bytes lie on its device (extmap.c). */
struct dextent {
	uint64_t logical, physical, length;
};

struct dextmap {
	struct dextent *ext;
	unsigned n, cap;
	uint64_t mapped_end;       /* logical end of the last extent */
	uint64_t fetched_ns;       /* 0 = never */
	bool unsupported;          /* FIEMAP fails here: synthetic addresses */
	bool stale;                /* refetch at the next lookup */
};

/* One open file (dev, ino), shared by the sessions that registered it. */
struct dfile {
	struct policy_list link;    /* in daemon.files */
	uint64_t st_dev, ino;
	struct ddev *dev;
	int fd;                    /* a descriptor of the file (FIEMAP, fstat) */
	unsigned refs;             /* registrations */
	struct policy_list ops;     /* outstanding ops, ingest (seq) order */
	struct policy_list blocked; /* ops waiting for earlier ones */
	uint64_t logical_end;      /* end of the file including ingested writes */
	uint64_t waited_dep;       /* ops with seq <= this are waited for (SYNC) */
	uint64_t barrier_seq;      /* newest TRUNCATE/FALLOCATE admitted */
	uint64_t last_write_seq;   /* newest write admitted */
	uint64_t w_lo, w_hi;       /* covers every outstanding write's range */
	uint64_t a_lo, a_hi;       /* covers every outstanding range op's range */
	int wb_err;                /* a write-back failed: for the next fsync/barrier */
	struct dop *wb_open;       /* its write-back not started yet that writes may still extend */
	struct policy_list wbs;     /* its write-backs, started or not (flink), oldest first */
	unsigned nwb;              /* how many (each holds a reference) */
	struct policy_list wb_waiters; /* ops waiting for its write-backs (blink): fsync, close */
	struct dextmap map;
	struct tfile *tier;        /* its copies in a tier (tiers.c), NULL = no tier */
	uint64_t home_mods;        /* changes of the file the daemon made (writes, truncates,
	                              fallocates; a tier's writes home), for tiers_sync_start() */
};

/* A session's registration of a file under a handle. */
struct dreg {
	uint32_t handle;
	int fd;                    /* the client's descriptor (our copy) */
	struct dfile *file;
	struct dsession *s;
	uint32_t open_flags;
	uint64_t size_per_io;
	uint8_t pattern;
	unsigned outstanding;      /* ops not finished */
	bool unregistered;         /* the client forgot it: free when idle */
	bool home_grant;           /* tiered: its newest done WRITE/APPEND in ring order
	                              (grant_pos) said IOSD_R2_HOME: WRITTEN is allowed */
	bool granted_any;          /* grant_pos is set */
	uint32_t grant_pos;
	char *sig;
};

enum dop_state { OP_NEW, OP_BLOCKED, OP_READY, OP_QUEUED, OP_ISSUED, OP_DONE };

/* One ingested ring entry. */
struct dop {
	struct policy_req req;      /* what the policy sees (WRITE, READ) */
	struct policy_list flink;   /* in dfile.ops */
	struct policy_list blink;   /* in dfile.blocked, daemon.ready or the free list */
	struct policy_list slink;   /* in dsession.ops, or daemon.writeback */
	/* (A write-back uses flink for dfile.wbs, and blink for
	 * daemon.wb_pending until it starts, then like any op.) */
	struct dsession *s;        /* NULL in write-back */
	struct dreg *reg;          /* NULL in write-back */
	struct dfile *file;        /* write-back: its file (holds a reference) */
	bool wb;                   /* a write in the page cache: its write-back */
	bool taken;                /* a write its tier policy gave back (env_home()):
	                              into the page cache, as without a tier */
	uint64_t seq;              /* global ingest order */
	uint64_t dep_seq;          /* ready when no op of the file with seq <= this is left */
	uint32_t pos;              /* ring position */
	uint16_t op, flags;        /* IOSD_OP_*, IOSD_EF_* */
	uint32_t aux;
	uint64_t foff, len, data_off;
	uint64_t done;             /* bytes written so far (short writes continue) */
	int64_t result;
	unsigned cqes;             /* io_uring completions still due */
	int err;                   /* first error of the I/O */
	uint8_t state;             /* enum dop_state */
	uint8_t tier_step;         /* tiers.c prepared it (fsync, barrier ...): start it plainly */
	uint64_t wb_upto;          /* fsync, close: waits for the write-backs with seq <= this */
	uint64_t dirtied_ns;       /* write-back: when its oldest byte went into the page cache */
	struct dop *head;          /* policy command: its head (chain) */
	unsigned members_left;     /* head: chain members not done yet */
	uint64_t queued_ns;        /* when it went to the policy */
	uint64_t sync_gen;         /* fsync, fdatasync of a tiered file: tiers_sync_start()'s */
	bool home_sync;            /* ... which it went through */
	bool r2_home;              /* WRITE: completes with IOSD_R2_HOME (home_now()) */
};

/* One client process. */
struct dsession {
	struct policy_list link;    /* in daemon.sessions */
	struct daemon *d;
	uint32_t id;
	int sock;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	unsigned version;          /* 0 until HELLO */
	uint32_t next_seq;         /* our message counter */
	void *map;                 /* the ring mapping */
	uint64_t map_size;
	struct iosd_ring ring;
	int kick_fd;
	uint32_t head;             /* next ring position to copy out */
	struct dreg **regs;        /* by handle */
	unsigned nregs_cap, nregs;
	uint64_t queued;           /* bytes ingested, not completed */
	unsigned outstanding;      /* ops not finished */
	struct policy_list ops;     /* its ops */
	bool hup;                  /* the client closed: ingest the rest, then free */
	bool capped;               /* ingest only up to cap_tail (hung up, or draining) */
	uint32_t cap_tail;
	bool dead;                 /* protocol error: ingest nothing more */
	bool notify;               /* entries completed since the last notify */
	bool sleeping;             /* NEED_WAKEUP set on its ring */
	bool space_expedited;      /* its held ops were expedited for a full ring */
	struct dwatch wsock, wkick;
	uint64_t ingested, completed, bytes_in;
};

struct daemon {
	struct dconfig cfg;
	struct iosig_catalog *cat;    /* built lazily (device.c) */
	uint64_t cat_built_ns;
	const char *mode;          /* "system", "user", "foreground" (status) */
	const char *socket_path;
	char socket_name[112];     /* an inherited socket's name ('@' + sun_path) */
	bool socket_owned;         /* we bound it: remove the name at exit */
	bool socket_activated;     /* systemd passed the listening socket */
	dev_t sock_dev;            /* the socket's name, to remove only our own */
	ino_t sock_ino;
	int epfd, listen_fd, timer_fd, signal_fd;
	struct dwatch wlisten, wuring, wtimer, wsignal;
	struct io_uring uring;
	unsigned uring_pending;    /* SQEs prepared, not submitted */
	bool draining;             /* SIGTERM: finish and stop */
	bool listening;
	unsigned only_uid_set;     /* serve only only_uid (per-user mode) */
	uid_t only_uid;
	struct policy_list sessions;
	unsigned nsessions;
	uint32_t next_session;
	struct policy_list devs;
	struct policy_list files;
	struct policy_list ready;   /* ops whose turn came (blink) */
	struct policy_list failed;  /* requests whose issue failed (blink) */
	struct policy_list taken;   /* writes taken back from their policies (blink) */
	struct policy_list free_ops;
	struct policy_list writeback; /* write-backs, started or not (slink) */
	unsigned wb_ops;           /* how many (at most DAEMON_WB_OPS_MAX) */
	struct policy_list wb_pending; /* write-backs not started yet, oldest first (blink) */
	unsigned wb_npending;      /* how many */
	uint64_t wb_pending_bytes; /* their bytes: dirty in the page cache, not at a policy */
	uint64_t wb_dirty_max;     /* start the oldest beyond this many bytes (engine_init) */
	uint64_t wb_expire_ns;     /* ... and those dirty for this long */
	uint64_t op_seq, req_id;
	uint64_t timer_armed;      /* timerfd set for, UINT64_MAX = not */
	bool noappend;             /* the kernel takes RWF_NOAPPEND */
	uint64_t start_ns;
	uint64_t ops_total, bytes_total;
	struct tierset *tiers;     /* the configured tier stores (tiers.c), NULL = none */
};

/* Write-backs (writes in the page cache, not yet on the device) at once:
 * beyond this many no ring is ingested until some are done (each costs
 * the daemon an op; the kernel's dirty limits bound their bytes).  Beyond
 * half of it the oldest not started yet start (so the limit is never
 * reached by write-backs that wait for a threshold). */
#define DAEMON_WB_OPS_MAX 8192u

/* ---- engine.c ---- */

uint64_t dnow(void);
/* Sets up epoll, io_uring, the timer; 0 or -errno (logged). */
int engine_init(struct daemon *d);
/* Runs until drained after SIGTERM/SIGINT; 0 or -errno. */
int engine_run(struct daemon *d);
void engine_fini(struct daemon *d);
int engine_watch(struct daemon *d, int fd, struct dwatch *w, uint32_t events);
void engine_unwatch(struct daemon *d, int fd);
/* The device of a filesystem (made with its policy on first use); NULL
 * with a reason in err. */
struct ddev *engine_device(struct daemon *d, uint64_t st_dev, char *err, size_t errlen);
/* The file (st_dev, ino) opened through fd (dup'ed on first use). */
struct dfile *engine_file(struct daemon *d, struct ddev *dev, uint64_t st_dev, uint64_t ino,
			  int fd);
void engine_file_put(struct daemon *d, struct dfile *f);
/* An entry copied out of s's ring becomes an op (ingest order). */
struct dop *engine_op_new(struct daemon *d);
void engine_op_free(struct daemon *d, struct dop *op);
/* Orders and starts the ops of one ingest round (non-waited first). */
void engine_ops_admit(struct daemon *d, struct policy_list *round);
/* Expedites every op s has in a policy (its ring is full). */
void engine_session_expedite(struct daemon *d, struct dsession *s);
/* For tiers.c: an SQE (the queue handed to the kernel when full), NULL if
 * none; a chain of workload requests issued home as plain I/O; an op
 * finished (entry completed, the next ones of its file may go); an op
 * tiers.c took at start, started now as it would have been; a file with
 * no registration left, freed. */
struct io_uring_sqe *engine_sqe(struct daemon *d);
int engine_issue_home(struct ddev *dv, struct policy_req *req, uint64_t offset);
void engine_op_finish(struct daemon *d, struct dop *op);
void engine_op_continue(struct daemon *d, struct dop *op);
void engine_file_destroy(struct daemon *d, struct dfile *f);
/* A device request the policy completed, in the device's status counters:
 * its bytes (a write's only if `written`: the page-cache path counts its
 * own) and its latency from arrival to `now`. */
void engine_req_counted(struct ddev *dv, const struct policy_req *r, bool written, uint64_t now);

/* ---- session.c ---- */

struct dsession *session_new(struct daemon *d, int sock, pid_t pid, uid_t uid, gid_t gid);
/* The socket is readable (or hung up). */
void session_on_sock(struct daemon *d, struct dsession *s, uint32_t events);
/* Copies new ring entries into ops (appended to round); false when none. */
bool session_ingest(struct daemon *d, struct dsession *s, struct policy_list *round,
		    bool *ret_waited);
/* Closes s for a protocol error: logs `why`, sends ERROR, stops reading. */
void session_fail(struct daemon *d, struct dsession *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* An op of s finished: its entry is complete. */
void session_op_done(struct daemon *d, struct dop *op);
/* Frees s when it is closed and has nothing outstanding; true if freed. */
bool session_reap(struct daemon *d, struct dsession *s);
/* Whether s's ring may be ingested now (back-pressure: its queued bytes,
 * the daemon's write-backs). */
static inline bool session_may_ingest(const struct daemon *d, const struct dsession *s)
{
	return s->queued < d->cfg.limits.queued_bytes && d->wb_ops < DAEMON_WB_OPS_MAX;
}
void session_free(struct daemon *d, struct dsession *s);
/* Sends one message; 0 or -errno (the caller fails the session). */
int session_send(struct dsession *s, unsigned type, const void *body, size_t len,
		 const void *extra, size_t elen, uint32_t seq);

/* ---- listener.c ---- */

/* Binds and listens on path (a stale socket is replaced, a live one is an
 * error); 0 or -errno with a message in err. */
int listener_open(struct daemon *d, const char *path, char *err, size_t errlen);
/* Listens on fd, a socket systemd bound (socket activation): checked to be
 * a listening Unix SOCK_SEQPACKET socket; its name is never removed.  0 or
 * -errno with a message in err. */
int listener_adopt(struct daemon *d, int fd, char *err, size_t errlen);
void listener_accept(struct daemon *d);
void listener_close(struct daemon *d);

/* ---- device.c ---- */

/*
 * The policy's description of the filesystem st_dev (the catalog's mount,
 * by policy_dev_from_mount()): the mount point goes to name[size], the
 * configured queue depth (else one by class) is used.  A filesystem the
 * catalog does not know makes it build again (a mount that appeared since),
 * at most every 2 s; if it still does not, a generic flash device.
 * *ret_passthrough: the mount is global (visible on every node) and the
 * configuration does not say `schedule: true` for it.
 */
void device_describe(struct daemon *d, uint64_t st_dev, char *name, size_t size,
		     const char **ret_spec, struct policy_dev_info *ret, bool *ret_passthrough);
void device_fini(struct daemon *d);

/* ---- extmap.c ---- */

/* The device address of file offset off (FIEMAP, cached). */
uint64_t extmap_addr(struct dfile *f, uint64_t off, uint64_t now_ns);
void extmap_invalidate(struct dextmap *m);
void extmap_free(struct dextmap *m);

/* ---- status.c ---- */

/* The daemon's state as JSON (malloc'ed, NUL-terminated); NULL when out
 * of memory. */
char *status_json(struct daemon *d);

/* ---- systemd.c ---- */

/*
 * The listening socket systemd passed (sd_listen_fds(3); the variables are
 * unset): -ENOENT when none was passed (bind one), the descriptor, or
 * another -errno with a message in err (more than one socket).
 */
int sysd_listen_fd(char *err, size_t errlen);
/* Tells systemd (sd_notify(3), when NOTIFY_SOCKET is set) that the daemon
 * serves: READY=1 and a STATUS= line. */
void sysd_ready(struct daemon *d);
/* Tells systemd that the daemon drains and stops: STOPPING=1, STATUS=. */
void sysd_stopping(struct daemon *d);

#endif /* IOSIGD_H */
