/* SPDX-License-Identifier: MIT */
/*
 * harness.h - a tiny deterministic engine for testing one policy in
 * isolation: scripted submissions, devices with a simple service-time model
 * (fixed overhead + distance-proportional seek + transfer time), timers,
 * and a log of every command the policy issued.
 */
#ifndef IOSIG_TEST_HARNESS_H
#define IOSIG_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

#define HX_MAX_DEV 4

/* Units of the policy tests: times in ns, sizes in bytes. */
#define US POLICY_NS_PER_US
#define MS POLICY_NS_PER_MS
#define KiB 1024ull
#define MiB (1024ull * 1024)
#define GiB (1024ull * MiB)

/* The disk most tests schedule for: "hdd0", 1 TiB, one command at a time,
 * 512-byte blocks. */
extern const struct policy_dev_info hx_hdd;

/* Service time of one command = overhead + seek_ns_per_gib * |distance| /
 * GiB + len / bw (hx_set_latency_fn() overrides it per device). */
struct hx_model {
	uint64_t overhead_ns;
	uint64_t seek_ns_per_gib;
	uint64_t bytes_per_s;         /* 0 = infinitely fast transfer */
};

/* One command the policy issued. */
struct hx_cmd {
	uint64_t t;          /* issue time */
	uint64_t done;       /* completion time */
	unsigned dev;
	uint64_t off, len;   /* on the device */
	unsigned nreq;       /* requests merged into it */
	uint64_t first_id;   /* id of the head request */
	uint8_t op, flags;   /* of the head request */
	uint32_t stream;
	/* the home range the head request concerns (policy.h) */
	unsigned hdev;
	uint64_t hoff, hlen;
	/* a piece: its parent (a workload request) */
	bool piece;
	uint64_t parent_id, parent_off, parent_len;
	uint8_t parent_op;
	bool parent_workload;
};

/* A workload request and what became of it. */
struct hx_req {
	struct policy_req r;
	uint64_t submit_t;
	uint64_t done_t;     /* UINT64_MAX while outstanding */
	int status;
	bool submitted;
	int submit_ret;
	bool issued;         /* the policy issued it */
	bool expedited;      /* hx_expedite() found it held and expedited it */
	unsigned homed;      /* env->home() calls for it (held, not issued, HOME set) */
	bool taken;          /* env->home() took it back (hx_take_home()): done then */
};

struct hx;

/* A harness with ndev devices (info copied, queue_depth etc. as given). */
struct hx *hx_new(unsigned ndev, const struct policy_dev_info *info, const struct hx_model *model);
void hx_free(struct hx *h);
/* Creates the policy ("name:opts"); 0 or -errno with the message in err. */
int hx_policy(struct hx *h, const char *spec, char *err, size_t errlen);
struct policy *hx_pol(struct hx *h);
/* Scripts a workload request at time t; returns its index. */
unsigned hx_add(struct hx *h, uint64_t t, uint32_t stream, unsigned dev, uint8_t op,
		uint64_t off, uint64_t len, uint8_t flags);
/* Same with a signature hint. */
unsigned hx_add_hint(struct hx *h, uint64_t t, uint32_t stream, unsigned dev, uint8_t op,
		     uint64_t off, uint64_t len, uint8_t flags, uint64_t hint_size,
		     uint8_t hint_pattern);
/* Scripts a program starting to wait for request i at time t: if the
 * policy holds it then (submitted, not issued, not finished), the harness
 * sets POLICY_REQ_SYNC and calls the policy's expedite hook, as iosigd does. */
void hx_expedite(struct hx *h, uint64_t t, unsigned i);
/* Runs events up to and including time t (UINT64_MAX = until quiet). */
void hx_run(struct hx *h, uint64_t t);
uint64_t hx_now(const struct hx *h);
/* Results. */
struct hx_req *hx_r(struct hx *h, unsigned i);
unsigned hx_nreq(const struct hx *h);
unsigned hx_ncmd(const struct hx *h);
const struct hx_cmd *hx_cmd(const struct hx *h, unsigned i);
unsigned hx_ticks(const struct hx *h);
/* env->home() takes the writes offered before time `until` back (done at
 * once, as an engine that writes them itself; default: none). */
void hx_take_home(struct hx *h, uint64_t until);
/* Forces a device's in-flight count as seen by the policy (fake queue
 * pressure); -1 = use the real count. */
void hx_fake_inflight(struct hx *h, unsigned dev, int n);
/* Latency override for the next commands on dev: if set (non-zero), every
 * command on dev takes exactly this long (used to script BCW F/M/S). */
void hx_set_latency_fn(struct hx *h, unsigned dev,
		       uint64_t (*fn)(void *ctx, const struct hx_cmd *c), void *ctx);
/* Value reported by the policy's report() under key, or NaN. */
double hx_report(struct hx *h, const char *key);
/* Outstanding workload requests. */
unsigned hx_outstanding(const struct hx *h);

#endif /* IOSIG_TEST_HARNESS_H */
