/* SPDX-License-Identifier: MIT */
/*
 * policy.h - the contract between an I/O scheduling policy and the engine
 * that drives it (iosigd on real devices, iosig-sim on modelled ones).
 *
 * A policy is a versioned ops table (the shape of fio's ioengine_ops and
 * SQLite's sqlite3_vfs.iVersion) plus an option table (fio_option: name,
 * type, offset, default, bounds, help).  A policy makes no system call and
 * has no #ifdef: time, devices, timers and dispatch are injected through
 * struct policy_env, so the daemon and the simulator run the same code.
 *
 * Units: offsets and lengths are BYTES relative to the start of a device
 * (not 512-byte sectors: the memory tier is byte addressed, and a sector
 * count is one division away); times are NANOSECONDS on the engine's clock.
 *
 * Life of a request (see docs/policies.md for the full contract):
 *
 *   engine: submit(req) -> policy queues it (its own lists, in req's
 *   policy-owned links) -> dispatch() -> policy calls env->issue(req, dev,
 *   off) when the device has room -> device serves it -> engine: complete(req).
 *   A user request is finished by its device completion, or - when the
 *   policy served it without issuing it (e.g. through internal sub-requests)
 *   - by the policy calling env->finish(req).  While the policy holds it, a
 *   program may start waiting for it: the engine then calls expedite(req).
 *
 * Threading: every hook of one policy instance is called from one thread,
 * never concurrently and never re-entered: env callbacks do not call hooks
 * (a completion is always a later, separate event).  Engine time never goes
 * backwards.
 */
#ifndef POLICY_H
#define POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iosig.h"   /* the catalog's device class and BCW profile */

/* Bumped whenever a hook, struct policy_req, struct policy_env or the option
 * table changes incompatibly.  Registration rejects any other value.
 * 2: the optional expedite hook.  3: policy_req.parent (pieces). */
#define POLICY_OPS_VERSION 3
/* Version of struct policy_env; policy_create() rejects any other value.
 * 2: env->home returns whether the engine took the request back. */
#define POLICY_ENV_VERSION 2

#define POLICY_NS_PER_US 1000ull
#define POLICY_NS_PER_MS 1000000ull
#define POLICY_NS_PER_S 1000000000ull

enum policy_op {
	POLICY_OP_READ = 0,
	POLICY_OP_WRITE = 1,
	POLICY_OP_FLUSH = 2,  /* drain the device's volatile write cache; len 0 */
};

enum policy_req_flag {
	POLICY_REQ_SYNC = 1u << 0,    /* a process blocks on it (reads, O_SYNC/O_DIRECT writes) */
	POLICY_REQ_INTERNAL = 1u << 1, /* made by the policy (write-back, read-ahead, GC, padding);
	                                  not a workload request: no latency sample */
	POLICY_REQ_PAD = 1u << 2,     /* padding: non-user bytes written to keep a device in a
	                                  known state (BCW); always also INTERNAL */
	POLICY_REQ_HOME = 1u << 3,    /* set by submit() (or later, with env->home()) on a
	                                  write it will issue to the
	                                  request's own device as it is - not split, not to
	                                  another device - and of whose bytes it keeps no copy
	                                  elsewhere: an engine may then put the data in the
	                                  page cache at once and let the request stand for its
	                                  write-back (iosigd: docs/daemon.md); a hint, which an
	                                  engine may ignore */
};

/* Declared access pattern of the stream (the signature's sequential/random). */
enum policy_pattern {
	POLICY_PATTERN_UNKNOWN = 0,
	POLICY_PATTERN_SEQUENTIAL = 1,
	POLICY_PATTERN_RANDOM = 2,
};

/* Intrusive doubly linked list node (circular; a head is a node too). */
struct policy_list {
	struct policy_list *next, *prev;
};

/* Intrusive search-tree node (the policies' ordered sets are treaps keyed
 * by (key, key2)); filled and read only by the policy. */
struct policy_tnode {
	struct policy_tnode *left, *right;
	uint64_t key, key2;
	uint32_t prio;
};

/*
 * One I/O request.  The engine owns workload requests (memory, id, the
 * "in" fields); the policy owns the requests it makes itself (INTERNAL).
 * Fields marked "policy" are scratch space for whichever policy holds the
 * request, valid from submit until complete; the engine never reads them.
 *
 * dev/offset/len name the HOME range a request concerns - the bytes of
 * home device `dev` whose data it reads or writes - and issued_dev /
 * issued_off say where it went.  That holds for the requests a policy makes
 * itself too, so an engine that keeps real data (iosigd) knows which data
 * each one moves: an internal write issued to the home device (write-back,
 * migration) makes that home range current there; an internal write issued
 * to another device (GC, a read-ahead fill) puts the newest data of that
 * home range there; an internal read loads that home range's data from
 * where it was issued.  PAD writes and FLUSH concern no home range (their
 * dev/offset are not looked at).  A request that carries part of a workload
 * request's own data - a piece of a split read or write - is INTERNAL with
 * `parent` set: its bytes are the parent's from offset - parent->offset,
 * and the policy finishes the parent with env->finish() once its pieces
 * completed (docs/policies.md, docs/tiers.md).
 */
struct policy_req {
	/* in: set by whoever creates the request, constant afterwards */
	uint64_t id;            /* unique among outstanding requests */
	uint64_t offset;        /* bytes from the start of device `dev` (home location) */
	uint64_t len;           /* bytes; > 0 except for POLICY_OP_FLUSH */
	uint64_t arrival_ns;    /* when the workload submitted it */
	uint64_t hint_size;     /* signature prior: declared size_per_io of the stream, 0 = none */
	struct policy_req *parent;   /* a piece: the workload request whose data it carries */
	uint32_t stream;        /* process / stream / VM that submitted it */
	uint16_t dev;           /* home device index: where the data lives */
	uint8_t op;             /* enum policy_op */
	uint8_t flags;          /* enum policy_req_flag bits */
	uint8_t hint_pattern;   /* signature prior: enum policy_pattern */

	/* set by env->issue() */
	uint16_t issued_dev;    /* device it was sent to (may differ from dev: tiering) */
	uint64_t issued_off;    /* byte offset on issued_dev */
	uint64_t issue_ns;      /* when it was issued */
	/* set by the engine before complete() */
	int status;             /* 0 or -errno */

	/* policy: requests contiguous on the target device, same op, served as
	 * one device command together with this one (see env->issue) */
	struct policy_req *merge_next;
	/* policy: scratch links and data */
	struct policy_list link;
	struct policy_list link2;
	struct policy_tnode tnode;
	uint64_t pdata[2];
	void *pptr;

	/* engine: private to the engine (e.g. back pointer to its own record) */
	void *engine_data;
};

/*
 * Static description of one device the policy may use.  The class and the
 * buffered-write profile are the catalog's own types (iosig.h), so a
 * device described by the catalog becomes a policy device through
 * policy_dev_from_mount() and nothing else.
 */
struct policy_dev_info {
	const char *name;              /* for messages ("hdd0", "/dev/sdb") */
	enum iosig_class cls;          /* IOSIG_CLASS_HDD, _SSD, _NVM (byte-addressable
	                                  persistent memory), _RAM (volatile memory tier);
	                                  policies treat RAID and NETWORK as block devices
	                                  of no particular kind */
	uint64_t capacity;             /* bytes */
	uint32_t queue_depth;          /* max requests in flight at the device, >= 1 */
	uint32_t block_size;           /* logical block in bytes (512, 4096) */
	/* HDD buffered-write profile (BCW paper Table 2) in the catalog's units,
	 * bytes and seconds, from `iosig probe`, the configuration or a device
	 * model; all zero = unknown, the policy then uses its options.  Policies
	 * take the latencies on their clock with policy_s_to_ns(). */
	struct iosig_bcw bcw;
};

/* Seconds (the catalog's unit of time) as nanoseconds (the engine's),
 * rounded to the nearest; 0 for a value that is not positive. */
static inline uint64_t policy_s_to_ns(double s)
{
	return s > 0 ? (uint64_t)(s * (double)POLICY_NS_PER_S + 0.5) : 0;
}

/*
 * Describes catalog mount m as policy device *ret: class, capacity, block
 * size and buffered-write profile from the catalog, `name` and
 * `queue_depth` (>= 1: how many commands the engine keeps in flight at it,
 * which the catalog does not know) from the caller; a NULL name means the
 * mount point.  The one conversion between the catalog's and the policies'
 * description of a device (policy_dev.c).  0, or -EINVAL (queue_depth 0, a
 * class outside the catalog's, a block size above 4 GiB) and *ret untouched.
 */
int policy_dev_from_mount(const struct iosig_mount *m, const char *name, uint32_t queue_depth,
			  struct policy_dev_info *ret);

/*
 * What the engine gives a policy.  All callbacks get the env back; `ctx`
 * is the engine's.  None of them calls a policy hook.
 */
struct policy_env {
	unsigned version;                       /* POLICY_ENV_VERSION */
	void *ctx;                              /* engine private */
	unsigned ndev;                          /* number of devices */
	const struct policy_dev_info *dev;      /* ndev descriptions, index = device id */

	/* Current time in ns. */
	uint64_t (*now)(struct policy_env *env);
	/* Requests issued to `dev` and not yet completed (merged chains count
	 * as one command). */
	unsigned (*inflight)(struct policy_env *env, unsigned dev);
	/*
	 * Sends req (and its merge_next chain) to device `dev` at byte `offset`;
	 * the chain members follow contiguously (member i at offset + the sum of
	 * the earlier lengths) and must all have req's op.  Sets issued_dev,
	 * issued_off and issue_ns of every member.  Returns 0, -EBUSY if the
	 * device already has queue_depth commands in flight, -EINVAL for a bad
	 * device, range or chain (nothing is issued then).
	 */
	int (*issue)(struct policy_env *env, struct policy_req *req, unsigned dev, uint64_t offset);
	/* Finishes a workload request the policy served without issuing it
	 * (e.g. through internal sub-requests); status 0 or -errno. */
	void (*finish)(struct policy_env *env, struct policy_req *req, int status);
	/*
	 * Asks for a tick() at or after when_ns.  Requests merge to the
	 * earliest one; a tick consumes it, so a policy re-arms from tick() for
	 * its next deadline.  Ticks may also come early or spuriously.
	 */
	void (*wake_at)(struct policy_env *env, uint64_t when_ns);
	/*
	 * Optional (NULL: as if it returned false).  The policy will send req,
	 * a workload write with POLICY_REQ_HOME that it is submitting or holds
	 * (not issued), to its own device as it is.  The engine may take it
	 * back: true = req is the engine's again - the policy must not hold it
	 * when it calls (in submit(): not staged yet, submit() returns 0;
	 * later: unlinked first) and forgets it; the engine writes it itself
	 * and may submit its data's write-back later as a new request.  false
	 * = the policy keeps req and issues it.  Called from the policy's own
	 * callbacks; the engine calls none of the policy's hooks from it.
	 */
	bool (*home)(struct policy_env *env, struct policy_req *req);
};

/* ---- options ---- */

enum policy_opt_type {
	POLICY_OPT_BOOL,   /* bool field; 0/1, true/false, yes/no, on/off */
	POLICY_OPT_UINT,   /* uint64_t field; decimal integer */
	POLICY_OPT_DOUBLE, /* double field; finite number */
	POLICY_OPT_SIZE,   /* uint64_t bytes; 4096, 4K, 64KiB, 2MB (K/M/G/T are powers of 1024) */
	POLICY_OPT_TIME,   /* uint64_t ns; 500ms, 5s, 100us, 250ns, 2min */
	POLICY_OPT_RATE,   /* uint64_t bytes per second; 2MB/s, 512KiB/s */
	POLICY_OPT_ENUM,   /* unsigned field = index into choices */
};

/* One option of a policy (a NULL name ends the table). */
struct policy_opt {
	const char *name;
	enum policy_opt_type type;
	size_t off;                   /* offsetof() in the policy's options struct */
	const char *def;              /* default, written as a user would write it */
	uint64_t min, max;            /* inclusive bounds, integer types (in base units) */
	double fmin, fmax;            /* inclusive bounds, POLICY_OPT_DOUBLE */
	const char *const *choices;   /* POLICY_OPT_ENUM: NULL-terminated names */
	const char *help;             /* one line; cite the paper's parameter name */
};

/* ---- policies ---- */

struct policy;

/* Callback through which report() hands out its counters. */
typedef void (*policy_report_fn)(void *ctx, const char *key, double value);

struct policy_ops {
	unsigned version;                 /* POLICY_OPS_VERSION */
	const char *name;                 /* "bid-hdd"; [a-z0-9-], unique */
	const char *summary;              /* one line for listings */
	const struct policy_opt *opts;    /* option table, or NULL for none */
	size_t opts_size;                 /* size of the options struct (0 if none) */

	/* Allocates pol->priv from pol->opts and pol->env.  0 or -errno; on
	 * failure writes a reason to pol->err.  Required. */
	int (*init)(struct policy *pol);
	/* A workload request arrives.  0 = the policy holds it now; -errno =
	 * rejected (the engine completes it with that status).  Required. */
	int (*submit)(struct policy *pol, struct policy_req *req);
	/* Devices may have room: issue what should go now.  Called after each
	 * batch of submit/complete/tick events of one instant.  Required. */
	void (*dispatch)(struct policy *pol);
	/* A request the policy issued has been served (req->status set).  For
	 * a merged chain, called once per member in chain order, with the
	 * merge_next links still as issued.  Required. */
	void (*complete)(struct policy *pol, struct policy_req *req);
	/* A wake-up requested through env->wake_at() is due.  Required. */
	void (*tick)(struct policy *pol);
	/* Frees pol->priv and every internal request.  Required. */
	void (*fini)(struct policy *pol);
	/* Optional: hands policy counters (e.g. "padding_bytes") to emit(). */
	void (*report)(struct policy *pol, policy_report_fn emit, void *ctx);
	/*
	 * Optional: a program now waits for req (an fsync or a read behind it,
	 * a full ring), which the policy holds - submitted, neither issued nor
	 * finished.  Serve it as the policy serves a request a process blocks
	 * on: the engine has set POLICY_REQ_SYNC in req->flags, and dispatch()
	 * follows in the same instant.  Without the hook the engine only sets
	 * the flag, which policies read at submit.
	 */
	void (*expedite)(struct policy *pol, struct policy_req *req);
};

#define POLICY_ERR_MAX 256

/* One running policy instance. */
struct policy {
	const struct policy_ops *ops;
	struct policy_env *env;
	void *opts;                       /* ops->opts_size bytes, parsed and validated */
	void *priv;                       /* the policy's state, owned by init/fini */
	char err[POLICY_ERR_MAX];         /* why init failed */
};

/* ---- registry ---- */

/* Checks an ops table: version, name, required hooks, option table
 * (defaults parse and lie within bounds).  0 or -EINVAL with a reason. */
int policy_ops_check(const struct policy_ops *ops, char *err, size_t errlen);
/* Adds a policy to the registry (at start-up, not thread safe).  0,
 * -EINVAL (see policy_ops_check), -EEXIST (name taken), -ENOSPC. */
int policy_register(const struct policy_ops *ops, char *err, size_t errlen);
/* The registered policy called name (built-ins included), or NULL. */
const struct policy_ops *policy_find(const char *name);
/* Number of registered policies and the i-th (registration order,
 * built-ins first); NULL when i is out of range. */
size_t policy_count(void);
const struct policy_ops *policy_at(size_t i);

/*
 * Creates an instance from a spec "NAME" or "NAME:opt=val,opt=val" for env:
 * defaults, then the options in order, then init().  On failure returns
 * -errno (-ENOENT unknown policy, -EINVAL bad option or init refusal,
 * -ENOMEM) with a message in err, and leaves *ret_pol untouched.
 */
int policy_create(const char *spec, struct policy_env *env, struct policy **ret_pol,
		  char *err, size_t errlen);
/* Same, from an ops table and an option string (may be NULL or ""). */
int policy_create_ops(const struct policy_ops *ops, const char *optstr,
		      struct policy_env *env, struct policy **ret_pol, char *err, size_t errlen);
/* fini() and free; NULL is fine. */
void policy_destroy(struct policy *pol);

/* ---- option tables ---- */

/* Writes every default of tab into opts.  0 or -EINVAL (a bad table). */
int policy_opts_defaults(const struct policy_opt *tab, void *opts, char *err, size_t errlen);
/* Sets one option from its text.  0, -ENOENT (unknown name), -EINVAL
 * (bad value or out of range); the message names option, value and the
 * accepted form.  opts is untouched on failure. */
int policy_opts_set(const struct policy_opt *tab, void *opts, const char *name, const char *value,
		    char *err, size_t errlen);
/* Applies "opt=val,opt=val" (NULL or "" = nothing).  0 or the first error
 * of policy_opts_set; options before the bad one stay applied. */
int policy_opts_parse(const struct policy_opt *tab, void *opts, const char *str, char *err,
		      size_t errlen);
/* Formats one option's current value in opts ("500ms", "64KiB"). */
int policy_opts_format(const struct policy_opt *opt, const void *opts, char *buf, size_t size);
/* Writes the --help text of one policy (name, summary, options with type,
 * default, range and help) to fp.  0 or -EIO. */
int policy_help(const struct policy_ops *ops, FILE *fp);

#endif /* POLICY_H */
