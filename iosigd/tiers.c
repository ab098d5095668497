/* SPDX-License-Identifier: MIT */
/*
 * tiers.c - the engine's side of tiers (docs/tiers.md).
 *
 * A device whose configuration gives it a tier runs a tier-using policy
 * with two devices: 0 the home filesystem (addresses from FIEMAP), 1 the
 * tier's store.  The policy decides where and when; this file does what
 * each request it issues means for the data, by the contract of policy.h
 * (dev/offset name the home range a request concerns):
 *
 *   workload write issued to the tier   payload into the store at the
 *                                       policy's place, DATA record
 *   workload write issued home          the home file (plain, or with a
 *                                       HOME record due if it covers data
 *                                       whose newest copy was in the tier)
 *   any read                            the newest copy of every byte,
 *                                       wherever the policy sent it
 *   internal write issued home          that home range made current from
 *                                       the tier (write-back, migration)
 *   internal write issued to the tier   that home range's newest data put
 *                                       there (GC: DATA; a fill: FILL)
 *   internal read                       loaded (kept for the write after it)
 *   padding, FLUSH                      zeros and a PAD record; a store sync
 *   a piece (parent set)                as above, with the parent's bytes
 *
 * Per file, `loc` maps ranges to their copy in the tier (tag: sequence <<
 * 1 | clean); a DIRTY copy is the newest data, a CLEAN one equals home.
 * `due` holds ranges written home over data whose newest copy was in the
 * tier: a HOME record is due once the home file is durable.  Per tier,
 * `occ` maps the data area's bytes to their owner: LIVE copies, and places
 * not to be reused yet (PEND_SYNC: superseded by a copy not yet synced;
 * PEND_HOME: superseded by home data whose HOME is not written yet).
 *
 * The rules that keep a crash from losing acknowledged data (and that
 * test_tier_recover's simulated crashes checked):
 *  - a write never overwrites another range's live copy, nor a place not
 *    reusable yet (it goes home instead: a fallback the policy does not
 *    see);
 *  - a record goes into the journal before its payload (a kill -9
 *    between them must not leave a sector shared with another copy's
 *    acknowledged bytes matching no record); a write into a sector holding
 *    bytes a store sync may have made durable also syncs in between
 *    (tstore_log_data's `ordered`);
 *  - a HOME record is written only after the home file was fsync'ed, and
 *    a workload write covering tiered data completes only once its HOME is
 *    written (a daemon killed before that leaves the write to the client,
 *    whose take-over replays it after recovery);
 *  - fsync completes once the store is synced, the home file fsync'ed and
 *    the HOME records that made durable are synced too.
 * Syncs are batched in rounds per device (settle()).
 *
 * A store that fails (a write, a sync, a record: tier_fail()) is `failed`:
 * nothing more goes to it, what it holds is copied home at once (its
 * pages are still in memory, and a device that fails writes may still
 * read) and the next round makes that durable; its syncs' errors are the
 * tier's, never a workload request's (TAG_STORE).  Once all of it is
 * home, its store is emptied so that a restart recovers nothing older
 * than the home files - or, when it cannot be written any more, the
 * daemon says to remove it (tier_invalidate()).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "iosigd.h"
#include "json.h"
#include "tier_recover.h"
#include "tier_store.h"
#include "tiers.h"

#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x00000020
#endif

#define TAG_CMD 5u                 /* user_data: a struct tcmd */
#define TAG_ROUND 6u               /* user_data: a device's sync round (struct dtiers) */
#define TAG_STORE 7u               /* user_data: a sync of a store for a struct tcmd (a
                                      command's, or a round's): its error fails the tier */
/* A range's pages written and waited for - those under write-back already
 * too (without WAIT_BEFORE a page dirtied again during an earlier write-back
 * of it, a record next to another in one page, is skipped). */
#define SFR_WRITE_WAIT (SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | \
			SYNC_FILE_RANGE_WAIT_AFTER)
#define CACHE_MAX 64               /* internal reads kept for the write after them */
#define CHUNK (1u << 20)
#define DRAIN_AT 2                 /* journal more than 1/DRAIN_AT full: drain the tier */
#define SYNC_FDS 16                /* descriptions of a store kept for commands' syncs */

enum { ST_DIRTY = 0, ST_CLEAN = 1 };
enum { OC_LIVE = 0, OC_PEND_SYNC = 1, OC_PEND_HOME = 2, OC_CLEAN = 3 };

/* What each tier policy needs of its two devices: the policies pick their
 * devices by class (first SSD, first HDD, first memory device), so the
 * home filesystem and the tier must have the classes that make the pick
 * come out right. */
static const struct {
	const char *policy;
	unsigned home, tier;         /* bit sets of enum iosig_class */
	const char *what;
} policy_devices[] = {
#define CL(c) (1u << IOSIG_CLASS_##c)
	{ "bid-hybrid", ~(CL(SSD) | CL(NVM)), CL(SSD) | CL(NVM),
	  "an HDD (any class but ssd and nvm) with an ssd or nvm tier" },
	{ "mios-d", CL(SSD), CL(HDD), "an ssd with an hdd tier" },
	{ "mios-e", CL(SSD), CL(HDD), "an ssd with an hdd tier" },
	{ "nvcache", ~(CL(RAM) | CL(NVM)), CL(RAM) | CL(NVM),
	  "a block device (any class but ram and nvm) with a ram or nvm tier" },
#undef CL
};

/* Daemon defaults of the tier policies: what a tier on real files needs
 * (docs/tiers.md); the configuration's options come after and win. */
static const struct {
	const char *policy, *opts;
} policy_defaults[] = {
	{ "bid-hybrid", "migrate_at=0.5,migrate_idle=1s,bulky_home=1,max_merge=4MiB" },
	{ "nvcache", "seq_bypass=1MiB" },
};

/* One configured tier: its store, open from start to exit. */
struct dtier {
	const struct dcfg_tier *cfg;
	struct tstore *st;
	struct ddev *owner;        /* device whose policy uses it */
	struct policy_dev_info info;
	unsigned inflight;
	bool is_volatile;          /* on memory: lost at reboot */
	bool failed;               /* an I/O error: nothing more goes to it */
	bool evacuate;             /* failed: its data still to be copied home (evacuate()) */
	int invalid;               /* failed: 1 its store emptied since, -errno it could not be */
	bool draining;             /* journal filling: everything home, then reset */
	struct pol_extmap occ;     /* data area: tdev = OC_*, toff = file offset, tag = fid << 32 | epoch */
	uint64_t epoch;            /* 1 + syncs started (a record is of the epoch it was written in) */
	uint64_t synced;           /* epoch at which the last completed sync started */
	struct pol_extmap pins;    /* places being read (tag = readers): not to be written */
	unsigned pin_over;         /* commands pinning more than they could note: no writes */
	uint64_t unsynced;         /* records since the last sync started */
	int sync_fds[SYNC_FDS];    /* descriptions of the store free for commands (cmd_store_fd()) */
	unsigned nsync_fds;
	/* counters */
	uint64_t written, read, homed, fallbacks, conflicts, pads, fills, resets, drains, errors;
	uint64_t lost;             /* bytes only it held that could not be read back home */
	uint64_t records_total;
};

struct tierset {
	struct dtier *t;
	size_t n;
	uint64_t seq;              /* the last record sequence used */
	uint64_t start_ns;
};

struct tfile;

/*
 * An internal read's data, for the write that follows it.  Any write to
 * the same bytes drops it (a fill must never install older data).
 *
 * A home read of one file's range names the file by its fid, never by its
 * struct tfile: that is freed when the file goes (a last close), a load
 * outlives it, and the next file's struct often comes back at the same
 * address - with a wgen as low as the load's (0 for a file only read), so
 * a load of the old file passed for the new one's, and its fill installed
 * the old file's bytes as a clean copy of the new one (nvcache's fills:
 * dwork's reads after close got other records' bytes, torn and stale).  A
 * fid is never reused.
 */
struct tcache {
	unsigned dev;              /* device it was read from */
	uint64_t off, len;         /* there */
	uint32_t fid;              /* a home read of one file's range: which (0: not) */
	uint64_t foff;
	uint64_t wgen;             /* the file's wgen when the read was issued */
	uint8_t *buf;
	uint64_t age;
};

/* A device with a tier. */
struct dtiers {
	struct daemon *d;
	struct ddev *dv;
	struct dtier *t;
	struct policy_dev_info devs[2];    /* the policy's: home, tier */
	struct pol_extmap addr;            /* home address -> toff = file offset, tag = fid */
	struct pol_map fids;               /* fid -> struct tfile */
	uint32_t next_fid;
	bool defer_close;
	struct policy_list files;          /* struct tfile, link */
	struct policy_list done;           /* struct tcmd finished without io_uring */
	struct policy_list waits;          /* struct twait */
	/* sync rounds */
	uint64_t round, done_round;        /* started, completed (numbered from 2: a file's
	                                      round_for names a round it needs one after,
	                                      and 0 there means none) */
	unsigned round_pending;
	int round_phase;                   /* 0 idle, 1 homes and store, 2 store again */
	bool round_durable;                /* a waiter needs the HOME records synced */
	uint64_t round_epoch;              /* the store's epoch the round's sync started at */
	uint64_t home_writes;              /* writes home over tier data so far (tags of `due`) */
	uint64_t round_homes;              /* home_writes when the round's fsyncs started */
	struct tcache cache[CACHE_MAX];
	uint64_t cache_age;
	/* counters */
	uint64_t rounds, homes, fences, fallback_writes, redirected_reads;
};

/* The tier side of a file of such a device. */
struct tfile {
	struct dfile *f;
	struct dtiers *td;
	struct policy_list link;
	uint32_t fid;
	uint64_t logged_gen;               /* generation its FILE record is in, 0 = none */
	struct pol_extmap loc;             /* file range -> tdev 1, toff = place, tag = seq << 1 | state */
	struct pol_extmap due;             /* file range -> tag = its home write's number (home_writes) */
	int wfd;                           /* a writable descriptor of the file, -1 = none yet */
	uint64_t home_size;                /* size of the home file as far as we know */
	uint64_t round_for;                /* wants a round numbered above this (0 = no) */
	bool again;                        /* in the running round, and wants the next one too */
	bool flush;                        /* everything home, then a FENCE, at the next round */
	uint64_t flush_seq;                /* the last sequence when the flush copied it home */
	uint64_t flush_during;             /* the round running when it was flushed, 0 = none */
	bool released;                     /* no registration left: destroy once home */
	bool stuck;                        /* a HOME could not be written (journal full) */
	unsigned busy;                     /* commands in flight touching it */
	uint64_t wgen;                     /* writes issued to it (a load older than one is stale) */
	uint64_t rec_epoch;                /* store epoch of its newest DATA, HOME or FENCE record */
	/* The home file as a completed fsync left it, grown by extend_home()
	 * only since (tiers_sync_start()): valid while f->home_mods is
	 * known_mods.  pend_*: taken as the newest full fsync started. */
	bool known;
	uint64_t known_mods, pend_mods, pend_gen;
	struct stat known_st, pend_st;
};

/* An op waiting for a sync round of its device. */
struct twait {
	struct policy_list link;
	struct dop *op;
	uint64_t round;                    /* wake when done_round >= this */
	int kind;                          /* W_FINISH, W_CONTINUE */
};

enum { W_FINISH, W_CONTINUE };

/* A copy a command moved within the store (GC), kept until the move's sync
 * is done: if the sync fails, it goes home from here (rescue()). */
struct tmove {
	struct tmove *next;
	uint32_t fid;
	uint64_t foff, len;
	uint64_t tag;                      /* its tf->loc tag: DATA record seq << 1 */
	uint8_t data[];
};

/* One command a tier policy issued (a chain of up to MEMBERS requests). */
struct tmember {
	struct policy_req *r;
	int err;
	uint64_t bytes;                    /* reads: bytes the program gets */
	uint64_t round;                    /* finish after this round (HOME due), 0 = at once */
	bool in_tier;                      /* a workload write put in the store (write_to_tier()) */
};

struct tcmd {
	struct dtiers *td;
	bool round;                        /* only a round's sync of the store (no requests) */
	unsigned dev;                      /* device index it occupies */
	unsigned pending;                  /* io_uring completions due */
	struct policy_list link;           /* in dtiers.done */
	uint8_t *buf;                      /* internal reads */
	uint64_t buflen;
	uint64_t pin_loc[8], pin_len[8];   /* store places its reads pin */
	unsigned npins;
	bool pin_over;                     /* more places than pin_loc holds: none can be written */
	int sfd;                           /* its description of the store, -1 (cmd_store_fd()) */
	struct tmove *moves;               /* copies it moved within the store */
	uint32_t buf_fid;                  /* a home read of one file's range, all of it (fid) */
	bool buf_raced;                    /* a write of it was in flight: not a fill's source */
	uint64_t buf_foff;
	uint64_t buf_wgen;
	uint64_t buf_covered;              /* bytes of the range resolved to files */
	unsigned buf_pieces;
	unsigned n;
	struct tmember m[];
};

static void cache_drop(struct dtiers *td, struct tfile *tf, uint64_t foff, uint64_t len,
		       uint64_t loc, uint64_t llen);
struct tcmd;
static void unpin(struct tcmd *c, struct dtier *t);

static struct tierset *T(struct daemon *d)
{
	return d->tiers;
}

/* Clears the extents of m (home 0) that drop(e, arg) selects.  A table's
 * extents move when it changes (pol_util.h), so each step looks up the
 * first extent after the last one seen again. */
static void clear_where(struct pol_extmap *m, bool (*drop)(const struct pol_ext *e, uint64_t arg),
			uint64_t arg)
{
	struct pol_ext *e;

	for (uint64_t at = 0; at < UINT64_MAX && (e = pol_extmap_first(m, 0, at, UINT64_MAX - at));) {
		uint64_t off = pol_ext_off(e), len = e->len;

		at = off + len;
		if (drop(e, arg))
			pol_extmap_clear(m, 0, off, len);
	}
}

static bool tagged(const struct pol_ext *e, uint64_t tag)
{
	return e->tag == tag;
}

/*
 * A place not in use any more whose epoch is before `epoch` (UINT64_MAX:
 * any epoch): a superseded copy's (OC_PEND_SYNC, OC_PEND_HOME), never a
 * clean copy's.  An OC_CLEAN place is in use - its file reads it - and its
 * entry is what lets drop_clean_at() tell that file when another write
 * takes the place.  Cleared here (at every round's end, before), the file
 * kept a copy whose place the next write there took: its reads got that
 * write's bytes, and retiring or dropping the copy later cleared the new
 * owner's LIVE entry, so that a third write could take the place of
 * acknowledged data.
 */
static bool retired_before(const struct pol_ext *e, uint64_t epoch)
{
	return (e->tdev == OC_PEND_SYNC || e->tdev == OC_PEND_HOME) &&
	       (epoch == UINT64_MAX || (e->tag & 0xffffffffu) < epoch);
}

static struct dop *op_of(struct policy_req *r)
{
	return pol_container_of(r, struct dop, req);
}

static bool is_op(struct daemon *d, const struct policy_req *r)
{
	return r && r->engine_data == d && !(r->flags & POLICY_REQ_INTERNAL);
}

/* The workload request r is or is a piece of, or NULL. */
static struct policy_req *workload_of(struct daemon *d, struct policy_req *r)
{
	return is_op(d, r) ? r : (r->parent && is_op(d, r->parent) ? r->parent : NULL);
}

/* Whether r is (a piece of) a write-back: a write already home in the
 * page cache (tiers_write_now()), with no registration. */
static bool is_wb(struct daemon *d, struct policy_req *r)
{
	struct policy_req *w = workload_of(d, r);

	return w && op_of(w)->wb;
}

static uint64_t next_seq(struct daemon *d)
{
	return ++T(d)->seq;
}

/* ------------------------------------------------------------------------
 * start and stop
 * ---------------------------------------------------------------------- */

/* Whether a tier policy (spec) can run on a home of class `home` with tier
 * t; -EINVAL with what to do in err. */
static int check_classes(const char *spec, const char *mount, enum iosig_class home,
			 const struct dtier *t, char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);

	for (size_t i = 0; i < sizeof(policy_devices) / sizeof(policy_devices[0]); i++) {
		if (strlen(policy_devices[i].policy) != nlen ||
		    strncmp(spec, policy_devices[i].policy, nlen))
			continue;
		if (!(policy_devices[i].home & (1u << home)) ||
		    !(policy_devices[i].tier & (1u << t->info.cls))) {
			snprintf(err, errlen, "%s runs on %s; here %s is %s and tier %s is %s: set the classes (mounts: %s: class:, and the tier's class:)",
				 policy_devices[i].policy, policy_devices[i].what, mount,
				 iosig_class_name(home), t->cfg->name, iosig_class_name(t->info.cls),
				 mount);
			return -EINVAL;
		}
	}
	return 0;
}

/* The configured devices with tiers whose mount is here: their classes
 * must suit their policies (a refusal now rather than at the first open). */
static int check_devices(struct daemon *d, char *err, size_t errlen)
{
	for (size_t i = 0; i < d->cfg.ndevices; i++) {
		const struct dcfg_device *c = &d->cfg.devices[i];
		struct policy_dev_info info;
		char name[IOSD_NAME_MAX];
		const char *spec;
		struct stat st;
		bool passthrough;   /* not used: a tier's mount is the daemon's own */

		if (!c->ntiers || stat(c->pattern, &st) < 0)
			continue;
		device_describe(d, st.st_dev, name, sizeof(name), &spec, &info, &passthrough);
		if (strcmp(name, c->pattern))
			continue;   /* not a mount point (yet) */
		for (size_t k = 0; k < d->cfg.ntiers; k++)
			if (!strcmp(d->cfg.tiers[k].name, c->tiers[0]) &&
			    check_classes(spec, name, info.cls, &T(d)->t[k], err, errlen) < 0)
				return -EINVAL;
	}
	return 0;
}

static void note(void *ctx, const char *msg)
{
	dlog(DLOG_INFO, "recovery: %s", msg);
}

/* The catalog's class of the mount holding path (its directory, if the
 * store does not exist yet), and that mount's BCW profile (its `bcw`
 * setting or `iosig probe`'s measurement in the probe cache; zeros when
 * neither is known). */
static enum iosig_class class_of_path(struct daemon *d, const char *path, bool *ret_volatile,
				      struct iosig_bcw *ret_bcw)
{
	char dir[PATH_MAX], *slash;
	struct stat st;
	struct policy_dev_info info;
	char name[IOSD_NAME_MAX];
	const char *spec;
	bool passthrough;

	snprintf(dir, sizeof(dir), "%s", path);
	while (stat(dir, &st) < 0 && (slash = strrchr(dir, '/')) && slash != dir)
		*slash = '\0';
	if (stat(dir, &st) < 0)
		st.st_dev = 0;
	device_describe(d, S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev, name, sizeof(name), &spec,
			&info, &passthrough);
	*ret_volatile = info.cls == IOSIG_CLASS_RAM;
	*ret_bcw = info.bcw;
	return info.cls;
}

/* Whether path is the root of a mount (statx's STATX_ATTR_MOUNT_ROOT,
 * Linux 5.8; before it: a device other than its parent's). */
static bool mounted(const char *path)
{
	struct statx sx, up;
	char parent[PATH_MAX];

	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &sx) < 0)
		return false;
	if (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
		return sx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
	if ((size_t)snprintf(parent, sizeof(parent), "%s/..", path) >= sizeof(parent) ||
	    statx(AT_FDCWD, parent, 0, STATX_BASIC_STATS, &up) < 0)
		return false;
	return sx.stx_dev_major != up.stx_dev_major || sx.stx_dev_minor != up.stx_dev_minor ||
	       sx.stx_ino == up.stx_ino;
}

int tiers_open(struct daemon *d, char *err, size_t errlen)
{
	struct tierset *ts;
	struct tstore **st;
	struct trecover rec;
	int r = 0;

	if (!d->cfg.ntiers)
		return 0;
	ts = calloc(1, sizeof(*ts));
	st = calloc(d->cfg.ntiers, sizeof(*st));
	if (!ts || !st || !(ts->t = calloc(d->cfg.ntiers, sizeof(*ts->t)))) {
		free(ts);
		free(st);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->tiers = ts;
	ts->start_ns = dnow();
	for (size_t i = 0; i < d->cfg.ntiers; i++) {
		const struct dcfg_tier *c = &d->cfg.tiers[i];
		struct dtier *t = &ts->t[i];
		bool vol = false;
		struct iosig_bcw bcw;
		enum iosig_class cls = class_of_path(d, c->path, &vol, &bcw);
		struct tstore_cfg sc = { .name = c->name, .path = c->path, .size = c->size,
					 .journal = c->journal, .mkdir_parent = c->mount != NULL };
		char why[600];

		if (c->mount && !mounted(c->mount)) {
			/* Its store would land on the filesystem below, and a
			 * previous daemon's records there would never be applied. */
			snprintf(err, errlen, "tier %s: %s is not a mount point (its filesystem is not mounted): mount it, or remove the tier from the configuration once nothing of its data is needed; the daemon does not start without it",
				 c->name, c->mount);
			r = -ENODEV;
			goto out;
		}
		if (c->cls >= 0)
			cls = (enum iosig_class)c->cls;
		t->cfg = c;
		/* Epochs from 1: synced 0 is "no sync completed yet" (a record
		 * of epoch 0 looked durable before any). */
		t->epoch = 1;
		t->is_volatile = cls == IOSIG_CLASS_RAM || vol;
		sc.is_volatile = t->is_volatile;
		r = tstore_open(&sc, &t->st, why, sizeof(why));
		if (r < 0) {
			snprintf(err, errlen, "tier %s: %s", c->name, why);
			goto out;
		}
		if (!t->st->blockdev && !c->size) {
			snprintf(err, errlen, "tier %s: %s is a file: give the tier a size:", c->name,
				 c->path);
			r = -EINVAL;
			goto out;
		}
		st[i] = t->st;
		r = pol_extmap_init(&t->occ, 1);
		if (r == 0)
			r = pol_extmap_init(&t->pins, 1);
		if (r < 0) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		t->info.cls = cls;
		t->info.name = c->name;
		/* MIOS's write-state predictor reads an HDD tier's profile. */
		t->info.bcw = bcw;
		if (cls == IOSIG_CLASS_HDD && bcw.wf >= 1)
			dlog(DLOG_INFO, "tier %s: BCW profile of its mount: W_f %.0f B, W_m %.0f B, L_f %.3g s, L_m %.3g s, L_s %.3g s (a policy option set in the configuration wins)",
			     c->name, bcw.wf, bcw.wm, bcw.lf, bcw.lm, bcw.ls);
		else if (cls == IOSIG_CLASS_HDD)
			dlog(DLOG_INFO, "tier %s: no BCW profile of its mount (run 'iosig probe' on it, or set bcw: in its catalog entry): MIOS predicts with its options w_fast, w_mid, slow_lat or their defaults 16 MiB, 8 MiB, 2 ms",
			     c->name);
		dlog(DLOG_INFO, "tier %s: %s (%s%s), %" PRIu64 " MiB of data, %" PRIu64 " MiB of journal, generation %" PRIu64 "%s",
		     c->name, c->path, iosig_class_name(cls), t->is_volatile ? ", volatile" : "",
		     t->st->sb.data_bytes >> 20, t->st->sb.journal_bytes >> 20, t->st->sb.generation,
		     t->st->created ? ", new" : "");
	}
	r = check_devices(d, err, errlen);
	if (r < 0)
		goto out;
	memset(&rec, 0, sizeof(rec));
	r = trecover_run(st, (unsigned)d->cfg.ntiers, geteuid() == 0, note, NULL, &rec, err, errlen);
	if (r < 0)
		goto out;
	if (rec.records)
		dlog(DLOG_INFO, "recovery: %" PRIu64 " records, %" PRIu64 " files, %" PRIu64 " bytes written home; rejected: %" PRIu64 " torn or corrupt stretches, %" PRIu64 " out of sequence, %" PRIu64 " out of place, %" PRIu64 " torn sectors, %" PRIu64 " records of files not found",
		     rec.records, rec.files, rec.copied_bytes, rec.corrupt, rec.stale_seq,
		     rec.out_of_area, rec.torn_sectors, rec.orphan_records);
	ts->seq = rec.max_seq;
	for (size_t i = 0; i < d->cfg.ntiers; i++) {
		struct dtier *t = &ts->t[i];
		char why[600];

		if (t->st->sb.seq_base > ts->seq)
			ts->seq = t->st->sb.seq_base;
		/* Everything is home and durable: a new generation, the
		 * configured size if it changed. */
		r = tstore_reset(t->st, ts->seq + 1, t->st->blockdev ? 0 : t->cfg->size,
				 t->cfg->journal, why, sizeof(why));
		if (r < 0) {
			snprintf(err, errlen, "tier %s: %s", t->cfg->name, why);
			goto out;
		}
		t->info.capacity = t->st->sb.data_bytes;
		t->info.block_size = 4096;
		t->info.queue_depth = t->cfg->queue_depth ? t->cfg->queue_depth :
				      t->info.cls == IOSIG_CLASS_HDD ? 4 :
				      t->info.cls == IOSIG_CLASS_SSD ? 32 : 64;
	}
	ts->seq++;
out:
	free(st);
	return r;
}

void tiers_close(struct daemon *d)
{
	struct tierset *ts = T(d);

	if (!ts)
		return;
	for (size_t i = 0; i < ts->n || i < d->cfg.ntiers; i++) {
		if (i >= d->cfg.ntiers)
			break;
		while (ts->t[i].nsync_fds)
			close(ts->t[i].sync_fds[--ts->t[i].nsync_fds]);
		tstore_close(ts->t[i].st);
		pol_extmap_free(&ts->t[i].occ);
		pol_extmap_free(&ts->t[i].pins);
	}
	free(ts->t);
	free(ts);
	d->tiers = NULL;
}

bool tiers_is_store(struct daemon *d, dev_t dev, ino_t ino)
{
	struct tierset *ts = T(d);

	for (size_t i = 0; ts && i < d->cfg.ntiers; i++)
		if (ts->t[i].st && ts->t[i].st->st_dev == dev && ts->t[i].st->st_ino == ino)
			return true;
	return false;
}

/* ------------------------------------------------------------------------
 * devices
 * ---------------------------------------------------------------------- */

static unsigned tenv_inflight(struct policy_env *env, unsigned dev);
static int tenv_issue(struct policy_env *env, struct policy_req *req, unsigned dev, uint64_t off);
static void tenv_finish(struct policy_env *env, struct policy_req *req, int status);

int tiers_device(struct daemon *d, struct ddev *dv, const char **spec, char *specbuf,
		 size_t specsize, char *err, size_t errlen)
{
	const struct dcfg_device *c = dconfig_device_for(&d->cfg, dv->name);
	struct dtiers *td;
	struct dtier *t = NULL;
	const char *colon;
	size_t nlen;

	if (!c || !c->ntiers)
		return 0;
	for (size_t i = 0; T(d) && i < d->cfg.ntiers; i++)
		if (!strcmp(d->cfg.tiers[i].name, c->tiers[0]))
			t = &T(d)->t[i];
	if (!t || !t->st) {
		snprintf(err, errlen, "tier %s is not open", c->tiers[0]);
		return -ENODEV;
	}
	if (t->owner) {
		snprintf(err, errlen, "tier %s already belongs to %s", c->tiers[0], t->owner->name);
		return -EBUSY;
	}
	td = calloc(1, sizeof(*td));
	if (!td || pol_extmap_init(&td->addr, 1) < 0) {
		free(td);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	td->d = d;
	td->dv = dv;
	td->t = t;
	td->defer_close = c->defer_close;
	/* Round 1 counts as done: a file written before the first round
	 * wants one after it (round_for 1), not "none" (round_for 0) - which
	 * made the first round skip the file and finish its home writes'
	 * waiters without their HOME records (a kill then lost them). */
	td->round = td->done_round = 1;
	pol_map_init(&td->fids);
	pol_list_init(&td->files);
	pol_list_init(&td->done);
	pol_list_init(&td->waits);
	td->devs[0] = dv->info;
	td->devs[1] = t->info;
	td->devs[1].name = t->cfg->name;
	if (check_classes(*spec, dv->name, dv->info.cls, t, err, errlen) < 0) {
		pol_extmap_free(&td->addr);
		free(td);
		return -EINVAL;
	}
	colon = strchr(*spec, ':');
	nlen = colon ? (size_t)(colon - *spec) : strlen(*spec);
	/* The policy's devices: the home filesystem, then the tier. */
	dv->env.ndev = 2;
	dv->env.dev = td->devs;
	dv->env.inflight = tenv_inflight;
	dv->env.issue = tenv_issue;
	dv->env.finish = tenv_finish;
	dv->tiers = td;
	t->owner = dv;
	/* Daemon defaults of the policy, the configuration's options after. */
	for (size_t i = 0; i < sizeof(policy_defaults) / sizeof(policy_defaults[0]); i++) {
		if (strlen(policy_defaults[i].policy) != nlen ||
		    strncmp(*spec, policy_defaults[i].policy, nlen))
			continue;
		snprintf(specbuf, specsize, "%.*s:%s%s%s", (int)nlen, *spec, policy_defaults[i].opts,
			 colon && colon[1] ? "," : "", colon && colon[1] ? colon + 1 : "");
		*spec = specbuf;
	}
	return 0;
}

void tiers_device_free(struct daemon *d, struct ddev *dv)
{
	struct dtiers *td = dv->tiers;

	if (!td)
		return;
	for (unsigned i = 0; i < CACHE_MAX; i++)
		free(td->cache[i].buf);
	while (!pol_list_empty(&td->waits)) {
		struct twait *w = pol_container_of(td->waits.next, struct twait, link);

		pol_list_del(&w->link);
		free(w);
	}
	pol_map_free(&td->fids);
	pol_extmap_free(&td->addr);
	if (td->t)
		td->t->owner = NULL;
	free(td);
	dv->tiers = NULL;
}

/* ------------------------------------------------------------------------
 * files
 * ---------------------------------------------------------------------- */

int tiers_file_new(struct daemon *d, struct dfile *f)
{
	struct dtiers *td = f->dev->tiers;
	struct tfile *tf = calloc(1, sizeof(*tf));
	struct stat st;

	if (!tf)
		return -ENOMEM;
	if (pol_extmap_init(&tf->loc, 1) < 0 || pol_extmap_init(&tf->due, 1) < 0) {
		pol_extmap_free(&tf->loc);
		free(tf);
		return -ENOMEM;
	}
	tf->f = f;
	tf->td = td;
	tf->wfd = -1;
	tf->fid = ++td->next_fid;
	tf->home_size = fstat(f->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	if (pol_map_put(&td->fids, tf->fid, tf) < 0) {
		pol_extmap_free(&tf->loc);
		pol_extmap_free(&tf->due);
		free(tf);
		return -ENOMEM;
	}
	pol_list_add_tail(&td->files, &tf->link);
	f->tier = tf;
	return 0;
}

void tiers_file_fd(struct daemon *d, struct dfile *f, int fd)
{
	struct tfile *tf = f->tier;
	int fl = fcntl(fd, F_GETFL);

	if (tf->wfd < 0 && fl >= 0 && (fl & O_ACCMODE) != O_RDONLY)
		tf->wfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	tf->released = false;
}

static uint64_t dirty_bytes(struct tfile *tf)
{
	uint64_t n = 0;

	for (struct pol_ext *e = pol_extmap_first(&tf->loc, 0, 0, UINT64_MAX); e;
	     e = pol_extmap_next(&tf->loc, 0, e))
		if ((e->tag & 1) == ST_DIRTY)
			n += e->len;
	return n;
}

/* Forgets every tier copy of tf (the file is home, fenced or closed): the
 * places become free. */
static void drop_copies(struct tfile *tf)
{
	struct dtier *t = tf->td->t;

	for (struct pol_ext *e = pol_extmap_first(&tf->loc, 0, 0, UINT64_MAX); e;
	     e = pol_extmap_next(&tf->loc, 0, e))
		pol_extmap_clear(&t->occ, 0, e->toff, e->len);
	pol_extmap_clear(&tf->loc, 0, 0, UINT64_MAX);
}

void tiers_file_free(struct dfile *f)
{
	struct tfile *tf = f->tier;

	if (!tf)
		return;
	drop_copies(tf);
	/* The address index may still point at the file: forget those. */
	clear_where(&tf->td->addr, tagged, tf->fid);
	pol_map_del(&tf->td->fids, tf->fid);
	pol_list_del(&tf->link);
	pol_extmap_free(&tf->loc);
	pol_extmap_free(&tf->due);
	if (tf->wfd >= 0)
		close(tf->wfd);
	free(tf);
	f->tier = NULL;
}

static void want_round(struct tfile *tf)
{
	struct dtiers *td = tf->td;

	/* Fsync'ed by the running round (round_start took it): that round's
	 * end writes the HOMEs of what went home before it; what comes now
	 * needs the next round too.  Raising round_for here would make the
	 * round's end skip the file, and its waiters - finished at that end
	 * - would be told their write is home without its HOME record. */
	if (td->round_phase && tf->round_for && tf->round_for < td->round) {
		tf->again = true;
		return;
	}
	if (!tf->round_for || tf->round_for < td->round)
		tf->round_for = td->round;
}

static struct twait *wait_round(struct dtiers *td, struct dop *op, struct tfile *tf, int kind)
{
	struct twait *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->op = op;
	w->kind = kind;
	/* The round must start after now: the one after any in flight. */
	w->round = td->round + 1;
	pol_list_add_tail(&td->waits, &w->link);
	if (tf)
		want_round(tf);
	return w;
}

static void flush_file(struct tfile *tf);

bool tiers_file_release(struct daemon *d, struct dfile *f)
{
	struct tfile *tf = f->tier;

	if (!tf || (pol_extmap_first(&tf->loc, 0, 0, UINT64_MAX) == NULL &&
		    pol_extmap_first(&tf->due, 0, 0, UINT64_MAX) == NULL && !tf->busy))
		return false;
	/* Its data goes home first; a round then destroys it (round_end). */
	tf->released = true;
	flush_file(tf);
	return true;
}

/* Whether the home file is as it was when known_st was taken (what a
 * change by anyone changes: size, blocks, ctime). */
static bool home_as_known(struct tfile *tf, const struct stat *st)
{
	return st->st_size == tf->known_st.st_size && st->st_blocks == tf->known_st.st_blocks &&
	       st->st_ctim.tv_sec == tf->known_st.st_ctim.tv_sec &&
	       st->st_ctim.tv_nsec == tf->known_st.st_ctim.tv_nsec;
}

/* The file's size at home grows to at least end (a tier write past it):
 * fallocate never shrinks, whatever other writes do meanwhile.  Not a
 * change an fsync must commit: the write's DATA record, durable before
 * the fsync completes, restores it (tiers_sync_start()). */
static void extend_home(struct tfile *tf, uint64_t end)
{
	int fd = tf->wfd >= 0 ? tf->wfd : tf->f->fd;
	struct stat st;
	bool known;

	if (end <= tf->home_size)
		return;
	known = tf->known && tf->known_mods == tf->f->home_mods && fstat(fd, &st) == 0 &&
		home_as_known(tf, &st);
	if (fallocate(fd, 0, (off_t)end - 1, 1) < 0) {
		/* No fallocate here: extend with ftruncate only if it is still
		 * shorter (the engine's own writes complete before it is read). */
		if (fstat(fd, &st) == 0 && (uint64_t)st.st_size < end && ftruncate(fd, (off_t)end) < 0)
			dlog(DLOG_WARN, "cannot extend a file of %s to %" PRIu64 " bytes: %s",
			     tf->f->dev->name, end, strerror(errno));
	}
	tf->home_size = end;
	/* Still as the last fsync left it but for this: known again. */
	tf->known = known && fstat(fd, &tf->known_st) == 0;
}

/* ------------------------------------------------------------------------
 * helpers: writes home, store bookkeeping
 * ---------------------------------------------------------------------- */

/* Writes buf at off of the home file, whole (never appending). */
static int home_pwrite(struct daemon *d, struct tfile *tf, const void *buf, uint64_t len,
		       uint64_t off)
{
	const char *p = buf;
	int fd = tf->wfd;

	if (fd < 0)
		return -EBADF;
	while (len) {
		struct iovec iov = { .iov_base = (void *)p, .iov_len = len };
		ssize_t n = pwritev2(fd, &iov, 1, (off_t)off, d->noappend ? RWF_NOAPPEND : 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
		tf->f->home_mods++;
	}
	if (off > tf->home_size)
		tf->home_size = off;
	return 0;
}

/* Whether [loc, +len) of the data area may take a write of (fid, foff):
 * 0 yes (ordered: must put its record first), -EBUSY another range's
 * copy or a place not reusable yet is there. */
static int place_ok(struct dtier *t, uint32_t fid, uint64_t foff, uint64_t loc, uint64_t len,
		    bool *ret_ordered)
{
	uint64_t lo = loc / TIER_SECTOR * TIER_SECTOR;
	uint64_t hi = (loc + len + TIER_SECTOR - 1) / TIER_SECTOR * TIER_SECTOR;
	bool ordered = false;

	if (t->pin_over || pol_extmap_first(&t->pins, 0, loc, len))
		return -EBUSY;   /* being read */
	for (struct pol_ext *e = pol_extmap_first(&t->occ, 0, lo, hi - lo);
	     e && pol_ext_off(e) < hi; e = pol_extmap_next(&t->occ, 0, e)) {
		uint64_t es = pol_ext_off(e), ee = es + e->len;
		bool inside = es < loc + len && ee > loc;   /* overlaps the write itself */
		uint64_t epoch = e->tag & 0xffffffffu;

		if (inside) {
			/* Only the same bytes of the same file, rewritten. */
			uint64_t s = es > loc ? es : loc;

			if (e->tdev == OC_PEND_HOME ||
			    (e->tdev == OC_LIVE &&
			     ((e->tag >> 32) != fid || e->toff + (s - es) != foff + (s - loc))))
				return -EBUSY;
		}
		/* A neighbour in a shared sector, or the old bytes themselves:
		 * if a sync may have made them durable, the record goes first
		 * (a clean copy or a volatile tier needs nothing of them). */
		if (!t->is_volatile && e->tdev != OC_CLEAN &&
		    (epoch < (t->epoch & 0xffffffffu) || e->tdev != OC_LIVE))
			ordered = true;
	}
	*ret_ordered = ordered;
	return 0;
}

/* The copy of [foff, +len) of tf moved on (a newer copy, or home): its
 * old places are not reusable until `state` says. */
static void retire_copies(struct tfile *tf, uint64_t foff, uint64_t len, unsigned state)
{
	struct dtier *t = tf->td->t;

	for (struct pol_ext *e = pol_extmap_first(&tf->loc, 0, foff, len);
	     e && pol_ext_off(e) < foff + len; e = pol_extmap_next(&tf->loc, 0, e)) {
		uint64_t s = pol_ext_off(e) > foff ? pol_ext_off(e) : foff;
		uint64_t x = pol_ext_off(e) + e->len < foff + len ? pol_ext_off(e) + e->len : foff + len;
		uint64_t place = e->toff + (s - pol_ext_off(e));

		if ((e->tag & 1) == ST_CLEAN || t->is_volatile)
			pol_extmap_clear(&t->occ, 0, place, x - s);   /* nothing to keep it for */
		else
			pol_extmap_put(&t->occ, 0, place, x - s, state, s,
				       (uint64_t)tf->fid << 32 | (t->epoch & 0xffffffffu));
	}
	pol_extmap_clear(&tf->loc, 0, foff, len);
}

/* Clean copies at the places [loc, +len) are overwritten: their files
 * forget them. */
static void drop_clean_at(struct dtiers *td, uint64_t loc, uint64_t len)
{
	for (struct pol_ext *e = pol_extmap_first(&td->t->occ, 0, loc, len), *n;
	     e && pol_ext_off(e) < loc + len; e = n) {
		uint64_t s = pol_ext_off(e) > loc ? pol_ext_off(e) : loc;
		uint64_t x = pol_ext_off(e) + e->len < loc + len ? pol_ext_off(e) + e->len : loc + len;
		struct tfile *other = pol_map_get(&td->fids, (uint32_t)(e->tag >> 32));

		n = pol_extmap_next(&td->t->occ, 0, e);
		if (e->tdev == OC_CLEAN && other)
			pol_extmap_clear(&other->loc, 0, e->toff + (s - pol_ext_off(e)), x - s);
	}
}

/* Whether [foff, +len) holds data whose latest record is DATA: a DIRTY
 * copy, or a home write whose HOME is not written yet. */
static bool covers_records(struct tfile *tf, uint64_t foff, uint64_t len)
{
	for (struct pol_ext *e = pol_extmap_first(&tf->loc, 0, foff, len);
	     e && pol_ext_off(e) < foff + len; e = pol_extmap_next(&tf->loc, 0, e))
		if ((e->tag & 1) == ST_DIRTY)
			return true;
	return pol_extmap_first(&tf->due, 0, foff, len) != NULL;
}

/* A FILE record of tf in the store's current generation, if not yet. */
static int log_file(struct daemon *d, struct tfile *tf)
{
	struct dtier *t = tf->td->t;
	struct tier_file_id id;
	int r;

	if (tf->logged_gen == t->st->sb.generation)
		return 0;
	r = tier_file_id_of(tf->f->fd, &id);
	if (r < 0)
		return r;
	r = tstore_log_file(t->st, next_seq(d), tf->fid, &id);
	if (r == 0) {
		tf->logged_gen = t->st->sb.generation;
		t->unsynced++;
		t->records_total++;
	}
	return r;
}

/* Journal room left for DATA: under DRAIN_AT of it, the tier drains. */
static bool journal_room(struct dtier *t)
{
	return tstore_journal_free(t->st) > t->st->sb.journal_bytes - t->st->sb.journal_bytes / DRAIN_AT;
}

/* The store failed under us (`what` failed with err): nothing more goes to
 * it, and its data goes home at the next turn (evacuate(): not here, in
 * the middle of an issue or a round).  A sync's error counts too: a
 * write-back the device failed leaves the data in memory only, and is
 * reported once (the next sync of the store would succeed). */
static void tier_fail(struct dtier *t, const char *what, int err)
{
	t->errors++;
	if (t->failed)
		return;
	dlog(DLOG_ERR, "tier %s: %s: %s: %s; its data goes home now, and all writes from now on",
	     t->cfg->name, t->st->path, what, strerror(-err));
	t->failed = true;
	t->evacuate = true;
}

/* Puts len bytes of buf - [foff, +len) of tf - at loc in the tier as
 * `type` (DATA or FILL).  0, or -errno when the tier cannot take it
 * (the caller writes home instead). */
static int tier_put(struct daemon *d, struct tfile *tf, uint16_t type, const void *buf,
		    uint64_t foff, uint64_t len, uint64_t loc, uint64_t home_addr)
{
	struct dtier *t = tf->td->t;
	uint64_t seq;
	bool ordered;
	int r;

	if (t->failed || t->draining || !journal_room(t))
		return -ENOSPC;
	if (loc > t->st->sb.data_bytes || len > t->st->sb.data_bytes - loc)
		return -EINVAL;
	if (place_ok(t, tf->fid, foff, loc, len, &ordered) < 0) {
		t->conflicts++;
		return -EBUSY;
	}
	r = log_file(d, tf);
	if (r < 0)
		goto out_err;
	seq = next_seq(d);
	r = tstore_log_data(t->st, seq, type, tf->fid, foff, buf, len, loc, ordered);
	if (r < 0)
		goto out_err;
	t->unsynced++;
	t->records_total++;
	if (ordered) {
		/* Its sync covered everything before its payload, not that:
		 * the record's epoch is the next one. */
		t->synced = t->epoch;
		t->epoch++;
	}
	if (type == TIER_REC_DATA)
		tf->rec_epoch = t->epoch;   /* (a FILL is never applied) */
	cache_drop(tf->td, tf, type == TIER_REC_DATA ? foff : 0, type == TIER_REC_DATA ? len : 0,
		   loc, len);
	/* The new copy; older ones of the range are superseded (reusable once
	 * a store sync makes the new one durable). */
	retire_copies(tf, foff, len, OC_PEND_SYNC);
	drop_clean_at(tf->td, loc, len);
	pol_extmap_put(&tf->loc, 0, foff, len, 1, loc, seq << 1 | (type == TIER_REC_FILL));
	pol_extmap_put(&t->occ, 0, loc, len, type == TIER_REC_FILL ? OC_CLEAN : OC_LIVE, foff,
		       (uint64_t)tf->fid << 32 | (t->epoch & 0xffffffffu));
	if (type == TIER_REC_DATA) {
		pol_extmap_clear(&tf->due, 0, foff, len);   /* newer than any home write */
		pol_extmap_put(&tf->td->addr, 0, home_addr, len, 0, foff, tf->fid);
		t->written += len;
	} else {
		t->fills += len;
	}
	return 0;
out_err:
	if (r != -ENOSPC)
		tier_fail(t, "a write", r);
	return r;
}

/* ------------------------------------------------------------------------
 * commands
 * ---------------------------------------------------------------------- */

static struct tcmd *cmd_new(struct dtiers *td, unsigned dev, unsigned n)
{
	struct tcmd *c = calloc(1, sizeof(*c) + n * sizeof(c->m[0]));

	if (!c)
		return NULL;
	c->td = td;
	c->dev = dev;
	c->sfd = -1;
	pol_list_init(&c->link);
	return c;
}

/*
 * The command's own description of the store, for the syncs of what it
 * writes there; -1 when none can be had (the caller writes home instead).
 * The kernel reports a write-back error of a file once per open file
 * description (errseq): with one description for all, a sync that checks
 * first takes the error of another's write - a round's fsync, which then
 * waits for the journal a while (traced in tiers_test.py tiererror, fill:
 * it completed with EIO after a write's sync_file_range had returned 0) -
 * and the write would be acknowledged with its data in pages the device
 * refused.  A description taken before the command writes sees every
 * error from then on.  Recycled: once its syncs are done it has seen
 * every error up to then, and reports the later ones to the next command.
 */
static int cmd_store_fd(struct tcmd *c)
{
	struct dtier *t = c->td->t;
	char path[40];

	if (c->sfd >= 0)
		return c->sfd;
	if (t->nsync_fds) {
		c->sfd = t->sync_fds[--t->nsync_fds];
		return c->sfd;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", t->st->fd);
	c->sfd = open(path, O_RDWR | O_CLOEXEC);
	if (c->sfd < 0)
		dlog(DLOG_WARN, "tier %s: cannot open %s again for a sync (%s): writes go home",
		     t->cfg->name, t->st->path, strerror(errno));
	return c->sfd;
}

/* The command is done with its store description (and its moves). */
static void cmd_release(struct tcmd *c)
{
	struct dtier *t = c->td->t;

	if (c->sfd >= 0) {
		if (t->nsync_fds < SYNC_FDS)
			t->sync_fds[t->nsync_fds++] = c->sfd;
		else
			close(c->sfd);
		c->sfd = -1;
	}
	while (c->moves) {
		struct tmove *mv = c->moves;

		c->moves = mv->next;
		free(mv);
	}
}

static unsigned *inflight_of(struct dtiers *td, unsigned dev)
{
	return dev == 0 ? &td->dv->inflight : &td->t->inflight;
}

static struct io_uring_sqe *sqe_for(struct daemon *d, void *obj, unsigned tag)
{
	struct io_uring_sqe *sqe = engine_sqe(d);

	if (sqe)
		io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)obj | tag);
	return sqe;
}

static void store_synced(struct daemon *d, struct tcmd *c, int res);

/* The device works on [off, +len) of fd now: a write's data reaches it
 * when the policy said, not at the kernel's write-back.  The store's (fd
 * is the command's description of it, cmd_store_fd()) error is the
 * tier's (TAG_STORE): the request's data is still in memory, and goes
 * home. */
static void sub_sync_range(struct daemon *d, struct tcmd *c, int fd, uint64_t off, uint64_t len)
{
	bool store = fd == c->sfd && fd >= 0;
	struct io_uring_sqe *sqe = sqe_for(d, c, store ? TAG_STORE : TAG_CMD);

	if (!sqe) {
		/* No room at all: here and now. */
		int r = sync_file_range(fd, (off_t)off, (off_t)len, SFR_WRITE_WAIT) < 0 ? -errno : 0;

		if (store)
			store_synced(d, c, r);
		else if (r < 0 && !c->m[0].err)
			c->m[0].err = r;
		return;
	}
	io_uring_prep_sync_file_range(sqe, fd, (unsigned)len, off, SFR_WRITE_WAIT);
	c->pending++;
}

static void sub_read(struct daemon *d, struct tcmd *c, int fd, void *buf, uint64_t len,
		     uint64_t off)
{
	struct io_uring_sqe *sqe = sqe_for(d, c, TAG_CMD);

	if (!sqe) {
		if (pread(fd, buf, len, (off_t)off) < 0)
			c->m[0].err = -errno;
		return;
	}
	io_uring_prep_read(sqe, fd, buf, (unsigned)len, off);
	c->pending++;
}

/* An fsync of fd: 1 when queued (a completion for obj is due), 0 when no
 * SQE was to be had and it was done here and now. */
static unsigned sub_fsync(struct daemon *d, void *obj, unsigned tag, int fd, bool datasync)
{
	struct io_uring_sqe *sqe = sqe_for(d, obj, tag);

	if (!sqe) {
		if ((datasync ? fdatasync(fd) : fsync(fd)) < 0)
			dlog(DLOG_ERR, "a sync of tier data failed: %s", strerror(errno));
		return 0;
	}
	io_uring_prep_fsync(sqe, fd, datasync ? IORING_FSYNC_DATASYNC : 0);
	return 1;
}

/* A sync of the store for c (TAG_STORE): 1 when queued, 0 when no SQE was
 * to be had and it was done here and now. */
static unsigned sub_store_sync(struct daemon *d, struct tcmd *c)
{
	struct dtier *t = c->td->t;
	struct io_uring_sqe *sqe = sqe_for(d, c, TAG_STORE);
	int r;

	if (sqe) {
		io_uring_prep_fsync(sqe, t->st->fd, IORING_FSYNC_DATASYNC);
		return 1;
	}
	r = tstore_sync(t->st);
	if (r < 0)
		tier_fail(t, "a sync", r);
	return 0;
}

/* A round's sync of the store: 1 when one is due to complete (counted in
 * round_pending), 0 when it was done here and now. */
static unsigned round_store_sync(struct daemon *d, struct dtiers *td)
{
	struct tcmd *c = cmd_new(td, 1, 0);
	int r;

	if (c) {
		c->round = true;
		c->pending = sub_store_sync(d, c);
		if (c->pending)
			return 1;
		free(c);
		return 0;
	}
	r = tstore_sync(td->t->st);   /* out of memory: here and now */
	if (r < 0)
		tier_fail(td->t, "a sync", r);
	return 0;
}

/* A request of the command is done: the policy hears of it, and a
 * workload request's entry completes (now, or after its HOME). */
static void member_done(struct daemon *d, struct tcmd *c, struct tmember *m)
{
	struct ddev *dv = c->td->dv;
	struct policy_req *r = m->r;

	r->status = m->err;
	dv->pol->ops->complete(dv->pol, r);
	if (!is_op(d, r))
		return;
	/* (A write-back's bytes were counted when they went home.) */
	engine_req_counted(dv, r, !op_of(r)->wb, dnow());
	if (op_of(r)->wb)
		op_of(r)->err = m->err;
	op_of(r)->result = m->err ? m->err : (int64_t)(r->op == POLICY_OP_READ ? m->bytes : r->len);
	if (m->round && !m->err) {
		struct twait *w = calloc(1, sizeof(*w));

		if (w) {
			w->op = op_of(r);
			w->kind = W_FINISH;
			w->round = m->round;
			pol_list_add_tail(&c->td->waits, &w->link);
			return;
		}
		/* Out of memory: finish now (a kill before its HOME leaves the
		 * write to the client's take-over, which replays only what is
		 * not complete: so complete it after all, as plain I/O would). */
	}
	engine_op_finish(d, op_of(r));
}

static void cmd_done(struct daemon *d, struct tcmd *c)
{
	struct dtiers *td = c->td;

	(*inflight_of(td, c->dev))--;
	td->dv->dirty = true;
	unpin(c, td->t);
	for (unsigned i = 0; i < c->n; i++)
		if (c->m[i].r && !(c->m[i].r->flags & POLICY_REQ_INTERNAL) && is_op(d, c->m[i].r) &&
		    !op_of(c->m[i].r)->wb) {
			struct tfile *tf = op_of(c->m[i].r)->reg->file->tier;

			if (tf && tf->busy)
				tf->busy--;
			if (tf && tf->released && !tf->busy)
				want_round(tf);
		}
	/* Complete in chain order, with the links still as issued. */
	for (unsigned i = 0; i < c->n; i++)
		member_done(d, c, &c->m[i]);
	if (c->buf) {
		/* An internal read: keep what it read for the write after it. */
		struct tcache *slot = &td->cache[0];

		for (unsigned i = 1; i < CACHE_MAX; i++)
			if (td->cache[i].age < slot->age)
				slot = &td->cache[i];
		free(slot->buf);
		*slot = (struct tcache){ .dev = c->m[0].r->issued_dev,
					 .off = c->m[0].r->issued_dev ? c->m[0].r->issued_off :
									 c->m[0].r->offset,
					 .len = c->buflen, .buf = c->buf, .age = ++td->cache_age,
					 .fid = c->buf_pieces == 1 && c->buf_covered == c->buflen &&
							!c->buf_raced ? c->buf_fid : 0,
					 .foff = c->buf_foff, .wgen = c->buf_wgen };
		if (c->m[0].err || (!slot->dev && !slot->fid)) {
			free(slot->buf);
			memset(slot, 0, sizeof(*slot));
		}
		c->buf = NULL;
	}
	cmd_release(c);
	free(c);
}

/* A command with nothing to wait for completes in this turn, after
 * dispatch (never inside it). */
static void cmd_submitted(struct daemon *d, struct tcmd *c)
{
	if (!c->pending)
		pol_list_add_tail(&c->td->done, &c->link);
}

/*
 * The store's sync of a command's writes failed: its workload writes to
 * the tier go home too, from their data - still in the clients' rings, as
 * the writes are not complete - before they complete, and what it moved
 * within the store goes home from the copy it kept, where that copy is
 * still the newest.  Their pages in the store failed their write-back,
 * and the kernel may drop such pages before the failed tier's data is
 * copied home (evacuate()): read back then, they are zeros (caught by the
 * sector sums: `lost_bytes`, EIO to the program).
 */
static struct tfile *file_of(struct daemon *d, struct policy_req *r, uint64_t *ret_foff,
			     uint8_t **ret_data);
static uint64_t write_home(struct daemon *d, struct tcmd *c, struct tfile *tf, const void *buf,
			   uint64_t foff, uint64_t len, int *ret_err);

static void rescue(struct daemon *d, struct tcmd *c)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->n; i++) {
		struct tmember *m = &c->m[i];
		uint8_t *data;
		uint64_t foff;
		struct tfile *tf;

		if (!m->in_tier || m->err)
			continue;
		m->in_tier = false;
		tf = file_of(d, m->r, &foff, &data);
		if (tf) {
			c->td->t->fallbacks++;
			m->round = write_home(d, c, tf, data, foff, m->r->len, &m->err);
			n++;
		}
	}
	while (c->moves) {
		struct tmove *mv = c->moves;
		struct tfile *tf = NULL;
		int err = 0;

		c->moves = mv->next;

		for (struct policy_list *l = c->td->files.next; l != &c->td->files && !tf; l = l->next)
			if (pol_container_of(l, struct tfile, link)->fid == mv->fid)
				tf = pol_container_of(l, struct tfile, link);
		for (uint64_t at = mv->foff, end = mv->foff + mv->len; tf && at < end;) {
			struct pol_ext *e = pol_extmap_first(&tf->loc, 0, at, end - at);
			uint64_t s, k;

			if (!e)
				break;
			s = pol_ext_off(e) > at ? pol_ext_off(e) : at;
			k = (pol_ext_off(e) + e->len < end ? pol_ext_off(e) + e->len : end) - s;
			at = s + k;
			if (e->tag != mv->tag)
				continue;   /* written again since */
			write_home(d, c, tf, mv->data + (s - mv->foff), s, k, &err);
			n++;
		}
		free(mv);
	}
	if (n)
		dlog(DLOG_WARN, "device %s: %u writes whose sync to tier %s failed written home",
		     c->td->dv->name, n, c->td->t->cfg->name);
}

/*
 * A sync of what c wrote to the store returned res.  Its writes are in the
 * store only if it succeeded, the tier has not failed meanwhile (another
 * sync may have seen an error first: a round's, on its own description),
 * and the store's filesystem is still writable (ext4 that aborted its
 * journal fails the conversion of the extents just written, and says so
 * only in the kernel log).  Otherwise they go home before they complete.
 */
static void store_synced(struct daemon *d, struct tcmd *c, int res)
{
	struct dtier *t = c->td->t;
	struct statvfs sv;

	if (res < 0 && res != -ECANCELED)
		tier_fail(t, "a sync", res);
	else if (!t->failed && fstatvfs(t->st->fd, &sv) == 0 && (sv.f_flag & ST_RDONLY))
		tier_fail(t, "a sync (its filesystem is read-only now)", -EROFS);
	if (t->failed)
		rescue(d, c);
}

void tiers_cqe(struct daemon *d, void *obj, int res)
{
	uint64_t ud = (uint64_t)(uintptr_t)obj;
	unsigned tag = (unsigned)(ud & 7);

	obj = (void *)(uintptr_t)(ud & ~7ull);
	if (tag == TAG_STORE) {
		struct tcmd *c = obj;
		struct dtiers *td = c->td;

		store_synced(d, c, res);
		if (--c->pending)
			return;
		if (c->round) {
			td->round_pending--;
			free(c);
		} else {
			cmd_done(d, c);
		}
		return;
	}
	if (tag == TAG_ROUND) {
		struct dtiers *td = obj;

		if (res < 0 && !td->round_phase)
			res = 0;
		if (res < 0)
			dlog(DLOG_ERR, "device %s: a sync of tier data failed: %s", td->dv->name,
			     strerror(-res));
		td->round_pending--;
		return;
	}
	{
		struct tcmd *c = obj;

		if (res < 0 && res != -ECANCELED && !c->m[0].err)
			c->m[0].err = res;
		if (--c->pending == 0)
			cmd_done(d, c);
	}
}

/* ------------------------------------------------------------------------
 * what a request means for the data
 * ---------------------------------------------------------------------- */

/* The file and offset a workload request or piece is about. */
static struct tfile *file_of(struct daemon *d, struct policy_req *r, uint64_t *ret_foff,
			     uint8_t **ret_data)
{
	struct policy_req *w = workload_of(d, r);
	struct dop *op;

	if (!w || op_of(w)->wb)
		return NULL;   /* (a write-back: its data is home) */
	op = op_of(w);
	*ret_foff = op->foff + (r->offset - w->offset);
	if (ret_data)
		*ret_data = op->s->ring.data + op->data_off + (r->offset - w->offset);
	return op->reg->file->tier;
}

/* A read of the store's [loc, +len) is in flight: nothing may be written
 * there until it completed (an asynchronous read would see the new bytes). */
static void pin(struct tcmd *c, struct dtier *t, uint64_t loc, uint64_t len)
{
	for (uint64_t o = loc; o < loc + len;) {
		struct pol_ext *e = pol_extmap_first(&t->pins, 0, o, loc + len - o);
		uint64_t s = e && pol_ext_off(e) > o ? pol_ext_off(e) : o;
		uint64_t x;

		if (!e || pol_ext_off(e) >= loc + len) {
			pol_extmap_put(&t->pins, 0, o, loc + len - o, 0, 0, 1);
			break;
		}
		if (s > o)
			pol_extmap_put(&t->pins, 0, o, s - o, 0, 0, 1);
		x = pol_ext_off(e) + e->len < loc + len ? pol_ext_off(e) + e->len : loc + len;
		pol_extmap_put(&t->pins, 0, s, x - s, 0, 0, e->tag + 1);
		o = x;
	}
	if (c->npins < 8) {
		c->pin_loc[c->npins] = loc;
		c->pin_len[c->npins++] = len;
	} else if (!c->pin_over) {
		c->pin_over = true;
		t->pin_over++;
	}
}

static void unpin(struct tcmd *c, struct dtier *t)
{
	for (unsigned i = 0; i < c->npins; i++) {
		uint64_t loc = c->pin_loc[i], len = c->pin_len[i];

		struct pol_ext *e;

		/* Looked up again after each change (the table's extents move). */
		for (uint64_t at = loc; at < loc + len &&
		     (e = pol_extmap_first(&t->pins, 0, at, loc + len - at)) && pol_ext_off(e) < loc + len;) {
			uint64_t s = pol_ext_off(e) > at ? pol_ext_off(e) : at;
			uint64_t x = pol_ext_off(e) + e->len < loc + len ? pol_ext_off(e) + e->len : loc + len;
			uint64_t tag = e->tag;

			at = x;
			if (tag > 1)
				pol_extmap_put(&t->pins, 0, s, x - s, 0, 0, tag - 1);
			else
				pol_extmap_clear(&t->pins, 0, s, x - s);
		}
	}
	if (c->pin_over)
		t->pin_over--;
	c->npins = 0;
}

/* Reads [foff, +len) of tf, newest copy of each byte, into buf: tier
 * copies from the store, the rest from the home file (zeros past its
 * end).  Bytes the program gets back: up to the file's logical end. */
static uint64_t read_newest(struct daemon *d, struct tcmd *c, struct tfile *tf, uint8_t *buf,
			    uint64_t foff, uint64_t len)
{
	struct dtier *t = tf->td->t;
	uint64_t pos = foff, end = foff + len, lend = tf->f->logical_end;

	for (struct pol_ext *e = pol_extmap_first(&tf->loc, 0, foff, len);
	     pos < end; e = e ? pol_extmap_next(&tf->loc, 0, e) : NULL) {
		uint64_t es = e && pol_ext_off(e) < end ? pol_ext_off(e) : end;

		if (es > pos) {
			/* From home; what lies past its end reads as zeros. */
			memset(buf + (pos - foff), 0, es - pos);
			sub_read(d, c, tf->f->fd, buf + (pos - foff), es - pos, pos);
			pos = es;
		}
		if (!e || pol_ext_off(e) >= end)
			break;
		{
			uint64_t s = pos, x = pol_ext_off(e) + e->len < end ? pol_ext_off(e) + e->len : end;

			pin(c, t, e->toff + (s - pol_ext_off(e)), x - s);
			sub_read(d, c, t->st->fd, buf + (s - foff), x - s,
				 tstore_data_pos(t->st, e->toff + (s - pol_ext_off(e))));
			t->read += x - s;
			pos = x;
		}
	}
	if (pos < end) {
		memset(buf + (pos - foff), 0, end - pos);
		sub_read(d, c, tf->f->fd, buf + (pos - foff), end - pos, pos);
	}
	return foff >= lend ? 0 : lend - foff < len ? lend - foff : len;
}

/* A write home of [foff, +len) of tf (a workload write or piece, or a
 * fallback): in the page cache now, on the device by the command's end.
 * Returns the round after which it may complete (0: at once). */
static uint64_t write_home(struct daemon *d, struct tcmd *c, struct tfile *tf, const void *buf,
			   uint64_t foff, uint64_t len, int *ret_err)
{
	bool rec = covers_records(tf, foff, len);
	int r;

	r = home_pwrite(d, tf, buf, len, foff);
	if (r < 0) {
		*ret_err = r;
		return 0;
	}
	cache_drop(tf->td, tf, foff, len, 0, 0);
	sub_sync_range(d, c, tf->wfd, foff, len);
	/* Older copies in the tier: stale now (places free once the HOME
	 * that says so is written). */
	retire_copies(tf, foff, len, OC_PEND_HOME);
	if (!rec)
		return 0;
	pol_extmap_put(&tf->due, 0, foff, len, 0, 0, ++tf->td->home_writes);
	want_round(tf);
	return tf->td->round + 1;
}

/*
 * A workload write goes into the home file's page cache now, past the
 * tier: its policy sends it home as it is (POLICY_REQ_HOME).  Not where a
 * byte of it has data whose latest record is DATA: such a write home needs
 * its HOME record before it completes (write_home()), so it goes the long
 * way.  A clean copy of the range goes (retire_copies() frees it at once),
 * loads of it are stale (wgen).  The write itself is the caller's
 * (tiers_write_now(), or the engine's io_uring write: env_home()), at
 * once: until it completes it is an op of the file in flight
 * (write_in_flight()).
 */
static void home_changed(struct tfile *tf, uint64_t foff, uint64_t len)
{
	tf->wgen++;
	cache_drop(tf->td, tf, foff, len, 0, 0);
	retire_copies(tf, foff, len, OC_PEND_HOME);
	if (foff + len > tf->home_size)
		tf->home_size = foff + len;
}

bool tiers_home_write(struct dfile *f, uint64_t foff, uint64_t len)
{
	struct tfile *tf = f->tier;

	if (!tf || tf->wfd < 0 || covers_records(tf, foff, len))
		return false;
	home_changed(tf, foff, len);
	return true;
}

/* ... written here (POLICY_REQ_HOME at submit: home_now() in engine.c,
 * which lets the request stand for its write-back). */
bool tiers_write_now(struct daemon *d, struct dfile *f, const void *buf, uint64_t foff,
		     uint64_t len)
{
	struct tfile *tf = f->tier;

	if (!tf || tf->wfd < 0 || covers_records(tf, foff, len))
		return false;
	/* (Failed: the long way writes it again and reports the error.) */
	if (home_pwrite(d, tf, buf, len, foff) < 0)
		return false;
	home_changed(tf, foff, len);
	return true;
}

static bool needs_round(struct tfile *tf, bool sync);

/* Nothing of f in the tier, nothing of it on its way there or home. */
bool tiers_holds_nothing(struct dfile *f)
{
	return f->tier && f->tier->wfd >= 0 && !needs_round(f->tier, false) && !f->tier->busy;
}

/*
 * A client wrote [foff, +len) of f into the page cache itself (WRITTEN,
 * under IOSD_R2_HOME: the tier held nothing of f when it was granted).  As
 * for a write home of ours: clean copies of the range go, loads of it are
 * stale.  Should a copy with a record be there after all (another process
 * wrote the file through the tier in the microseconds between the client's
 * look at its ring and its write), it is older than home now: retired with
 * a HOME record at the next round, as write_home() does - until that round
 * a recovery would still apply it (docs/tiers.md).
 */
void tiers_written(struct dfile *f, uint64_t foff, uint64_t len)
{
	struct tfile *tf = f->tier;
	bool rec = covers_records(tf, foff, len);

	home_changed(tf, foff, len);
	if (!rec)
		return;
	pol_extmap_put(&tf->due, 0, foff, len, 0, 0, ++tf->td->home_writes);
	want_round(tf);
}

/* A workload write (or a piece of one) issued to the tier. */
static void write_to_tier(struct daemon *d, struct tcmd *c, struct tmember *m, uint64_t loc)
{
	struct dtiers *td = c->td;
	struct policy_req *r = m->r;
	uint8_t *data;
	uint64_t foff;
	struct tfile *tf = file_of(d, r, &foff, &data);
	int e;

	if (!tf) {
		m->err = -EINVAL;
		return;
	}
	e = !td->t->is_volatile && cmd_store_fd(c) < 0 ? -ENOSPC :
	    tier_put(d, tf, TIER_REC_DATA, data, foff, r->len, loc, r->offset);
	if (e == 0) {
		m->in_tier = true;
		extend_home(tf, foff + r->len);
		if (!td->t->is_volatile)
			sub_sync_range(d, c, c->sfd, tstore_data_pos(td->t->st, loc), r->len);
		return;
	}
	/* The tier cannot take it: home, as if the policy had sent it there. */
	td->t->fallbacks++;
	td->fallback_writes++;
	m->round = write_home(d, c, tf, data, foff, r->len, &m->err);
}

/* A read (workload request or piece), wherever it was issued. */
static void read_request(struct daemon *d, struct tcmd *c, struct tmember *m)
{
	struct policy_req *r = m->r;
	uint8_t *data;
	uint64_t foff;
	struct tfile *tf = file_of(d, r, &foff, &data);

	if (!tf) {
		m->err = -EINVAL;
		return;
	}
	m->bytes = read_newest(d, c, tf, data, foff, r->len);
	if (r->issued_dev != 0 && pol_extmap_first(&tf->loc, 0, foff, r->len) == NULL)
		c->td->redirected_reads++;   /* the policy thought it was in the tier */
}

/* The pieces (file, file offset, length) the home range [addr, +len)
 * stands for: the address index (data that went to the tier), else where
 * the files' extents lie (FIEMAP).  fn(ctx, tf, foff, addr, len). */
typedef void (*resolve_fn)(struct daemon *d, void *ctx, struct tfile *tf, uint64_t foff,
			   uint64_t addr, uint64_t len);

static void resolve(struct daemon *d, struct dtiers *td, uint64_t addr, uint64_t len, bool fiemap,
		    resolve_fn fn, void *ctx)
{
	uint64_t pos = addr, end = addr + len;
	struct pol_ext *e;

	/* fn may change the index (a move to the tier): looked up again after
	 * each piece. */
	while (pos < end && (e = pol_extmap_first(&td->addr, 0, pos, end - pos)) &&
	       pol_ext_off(e) < end) {
		uint64_t s = pol_ext_off(e) > pos ? pol_ext_off(e) : pos;
		uint64_t x = pol_ext_off(e) + e->len < end ? pol_ext_off(e) + e->len : end;
		uint64_t foff = e->toff + (s - pol_ext_off(e));
		struct tfile *tf = pol_map_get(&td->fids, (uint32_t)e->tag);

		if (tf)
			fn(d, ctx, tf, foff, s, x - s);
		pos = x;
	}
	if (pos > addr || !fiemap)
		return;
	/* Not data we placed: a range of some file by its extents. */
	for (struct policy_list *l = td->files.next; l != &td->files; l = l->next) {
		struct tfile *tf = pol_container_of(l, struct tfile, link);
		const struct dextmap *m = &tf->f->map;

		for (unsigned i = 0; i < m->n; i++) {
			const struct dextent *x = &m->ext[i];

			if (addr >= x->physical && addr < x->physical + x->length) {
				uint64_t n = x->physical + x->length - addr < len ?
					     x->physical + x->length - addr : len;

				fn(d, ctx, tf, x->logical + (addr - x->physical), addr, n);
				return;
			}
		}
		if (m->unsupported) {
			uint64_t base = (tf->f->ino & 0xffff) << 36;

			if (addr >= base && addr - base < (1ull << 36)) {
				fn(d, ctx, tf, addr - base, addr, len);
				return;
			}
		}
	}
}

/* Data of [off, +len) of device dev a recent internal read loaded, or NULL. */
static const uint8_t *cached(struct dtiers *td, unsigned dev, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < CACHE_MAX; i++) {
		struct tcache *x = &td->cache[i];

		if (x->buf && x->dev == dev && off >= x->off && off + len <= x->off + x->len)
			return x->buf + (off - x->off);
	}
	return NULL;
}

/* Writes to [foff, +len) of tf, or to tier places [loc, +llen): loads of
 * them are stale. */
static void cache_drop(struct dtiers *td, struct tfile *tf, uint64_t foff, uint64_t len,
		       uint64_t loc, uint64_t llen)
{
	for (unsigned i = 0; i < CACHE_MAX; i++) {
		struct tcache *x = &td->cache[i];
		bool stale;

		if (!x->buf)
			continue;
		stale = x->dev == 1 ? llen && x->off < loc + llen && loc < x->off + x->len :
			!x->fid || (tf && x->fid == tf->fid && x->foff < foff + len && foff < x->foff + x->len);
		if (stale) {
			free(x->buf);
			memset(x, 0, sizeof(*x));
		}
	}
}

/* The newest data of [foff, +len) of tf when it is in the tier, into buf
 * (from an internal read that loaded it, else from the store).  0, or
 * -ENOENT when some of it is not DIRTY in the tier. */
static int tier_data(struct dtiers *td, struct tfile *tf, uint64_t foff, uint64_t len, uint8_t *buf)
{
	uint64_t pos = foff;

	for (struct pol_ext *e = pol_extmap_first(&tf->loc, 0, foff, len);
	     e && pol_ext_off(e) < foff + len; e = pol_extmap_next(&tf->loc, 0, e)) {
		uint64_t s = pol_ext_off(e) > foff ? pol_ext_off(e) : foff;
		uint64_t x = pol_ext_off(e) + e->len < foff + len ? pol_ext_off(e) + e->len : foff + len;
		uint64_t place = e->toff + (s - pol_ext_off(e));
		const uint8_t *p;

		if (s != pos || (e->tag & 1) != ST_DIRTY)
			return -ENOENT;
		p = cached(td, 1, place, x - s);
		if (p)
			memcpy(buf + (s - foff), p, x - s);
		else if (tstore_read_data(td->t->st, buf + (s - foff), x - s, place) < 0)
			return -EIO;
		pos = x;
	}
	return pos == foff + len ? 0 : -ENOENT;
}

struct move_ctx {
	struct tcmd *c;
	uint64_t loc;                  /* tier place of the range's first byte (to the tier) */
	uint64_t addr0;                /* the request's home address */
	uint8_t *tmp;
	uint64_t moved;
};

/* Internal write issued home: the range made current at home from the
 * tier (write-back, migration). */
static void move_home(struct daemon *d, void *vctx, struct tfile *tf, uint64_t foff,
		      uint64_t addr, uint64_t len)
{
	struct move_ctx *x = vctx;
	struct dtiers *td = tf->td;
	uint64_t done = 0;

	/* Piece by piece: only what is DIRTY in the tier moves. */
	while (done < len) {
		uint64_t pos = foff + done, n = len - done < CHUNK ? len - done : CHUNK;
		struct pol_ext *e = pol_extmap_first(&tf->loc, 0, pos, n);
		uint64_t s, k;
		int err = 0;

		if (!e)
			break;
		s = pol_ext_off(e) > pos ? pol_ext_off(e) : pos;
		k = pol_ext_off(e) + e->len < pos + n ? pol_ext_off(e) + e->len - s : pos + n - s;
		if ((e->tag & 1) == ST_DIRTY && tier_data(td, tf, s, k, x->tmp) == 0) {
			write_home(d, x->c, tf, x->tmp, s, k, &err);
			if (err == 0) {
				td->t->homed += k;
				x->moved += k;
			}
		}
		done = s + k - foff;
	}
}

/* Internal write issued to the tier: that home range's newest data put
 * there - moved within the tier (GC: DATA), or a clean copy of home data
 * an internal read just loaded (a fill: FILL). */
static void move_to_tier(struct daemon *d, void *vctx, struct tfile *tf, uint64_t foff,
			 uint64_t addr, uint64_t len)
{
	struct move_ctx *x = vctx;
	struct dtiers *td = tf->td;
	uint64_t loc = x->loc + (addr - x->addr0);
	const uint8_t *home;
	struct pol_ext *e;

	if (len > CHUNK)
		return;
	if (tier_data(td, tf, foff, len, x->tmp) == 0) {
		/* Kept until the move's sync is done (rescue()). */
		struct tmove *mv = td->t->is_volatile ? NULL : malloc(sizeof(*mv) + len);

		if (!td->t->is_volatile && !mv)
			return;   /* out of memory: not moved */
		if (tier_put(d, tf, TIER_REC_DATA, x->tmp, foff, len, loc, addr) < 0) {
			free(mv);
			return;
		}
		x->moved += len;
		if (mv) {
			*mv = (struct tmove){ .next = x->c->moves, .fid = tf->fid, .foff = foff, .len = len,
					      .tag = pol_extmap_first(&tf->loc, 0, foff, len)->tag };
			memcpy(mv->data, x->tmp, len);
			x->c->moves = mv;
		}
		return;
	}
	/*
	 * A fill: only when no byte's newest copy is in the tier, from a read
	 * of that very range that no write, truncate or fallocate has
	 * overtaken since (wgen, tiers_file_reshaped()).  Testing found torn
	 * and stale records with the fills, then stale reads after a
	 * truncate: clean copies of another file's load (struct tcache),
	 * clean copies whose place another write had taken (retired_before()),
	 * and clean copies of bytes a truncate or fallocate had removed; all
	 * three are fixed (docs/tiers.md).
	 */
	for (e = pol_extmap_first(&tf->loc, 0, foff, len); e && pol_ext_off(e) < foff + len;
	     e = pol_extmap_next(&tf->loc, 0, e))
		if ((e->tag & 1) == ST_DIRTY)
			return;
	home = NULL;
	for (unsigned i = 0; i < CACHE_MAX && !home; i++) {
		struct tcache *k = &td->cache[i];

		if (k->buf && k->dev == 0 && k->fid == tf->fid && k->wgen == tf->wgen &&
		    foff >= k->foff && foff + len <= k->foff + k->len)
			home = k->buf + (foff - k->foff);
	}
	if (home && tier_put(d, tf, TIER_REC_FILL, home, foff, len, loc, addr) == 0)
		x->moved += len;
}

/* Internal read: loaded into the command's buffer (kept afterwards for
 * the write that follows it). */
struct load_ctx {
	struct tcmd *c;
	uint64_t addr0;
};

/*
 * Whether a write of [foff, +len) of tf is in flight: issued (so its wgen
 * is counted) but not complete.  A workload write issued home plainly
 * goes by io_uring, which does not order it before a read issued after it:
 * the read may load the older bytes, and a fill of them would be a clean
 * copy older than home with the file's current wgen.
 */
static bool write_in_flight(struct tfile *tf, uint64_t foff, uint64_t len)
{
	for (struct policy_list *l = tf->f->ops.next; l != &tf->f->ops; l = l->next) {
		const struct dop *o = pol_container_of(l, struct dop, flink);

		if (o->state == OP_ISSUED && (o->op == IOSD_OP_WRITE || o->op == IOSD_OP_APPEND) &&
		    o->foff < foff + len && foff < o->foff + o->len)
			return true;
	}
	return false;
}

static void load_home(struct daemon *d, void *vctx, struct tfile *tf, uint64_t foff,
		      uint64_t addr, uint64_t len)
{
	struct load_ctx *x = vctx;

	if (write_in_flight(tf, foff, len))
		x->c->buf_raced = true;
	read_newest(d, x->c, tf, x->c->buf + (addr - x->addr0), foff, len);
	x->c->buf_fid = tf->fid;
	x->c->buf_foff = foff - (addr - x->addr0);
	x->c->buf_wgen = tf->wgen;
	x->c->buf_covered += len;
	x->c->buf_pieces++;
}

static void internal_request(struct daemon *d, struct tcmd *c, struct tmember *m, unsigned dev,
			     uint64_t off)
{
	struct dtiers *td = c->td;
	struct policy_req *r = m->r;

	if (r->op == POLICY_OP_FLUSH) {
		if (dev == 1 && !td->t->is_volatile && !td->t->failed)
			c->pending += sub_store_sync(d, c);
		return;
	}
	if (r->flags & POLICY_REQ_PAD) {
		bool ordered;
		int e;

		/* Padding: zeros where nothing lives (a PAD record keeps the
		 * sectors' states); over live data it is skipped. */
		if (dev != 1 || td->t->failed || !journal_room(td->t) ||
		    place_ok(td->t, 0, 0, off, r->len, &ordered) < 0 ||
		    pol_extmap_first(&td->t->occ, 0, off, r->len) ||
		    (!td->t->is_volatile && cmd_store_fd(c) < 0))
			return;
		e = tstore_log_data(td->t->st, next_seq(d), TIER_REC_PAD, 0, 0, NULL, r->len, off,
				    ordered);
		if (e < 0 && e != -ENOSPC)
			tier_fail(td->t, "a write", e);
		if (e == 0) {
			td->t->unsynced++;
			td->t->records_total++;
			td->t->pads += r->len;
			cache_drop(td, NULL, 0, 0, off, r->len);
			if (ordered) {
				td->t->synced = td->t->epoch;
				td->t->epoch++;
			}
			if (!td->t->is_volatile)
				sub_sync_range(d, c, c->sfd, tstore_data_pos(td->t->st, off), r->len);
		}
		return;
	}
	if (r->op == POLICY_OP_READ) {
		/* A failed tier's places are not read: its data went home
		 * (evacuate()), so the write that follows moves nothing - and a
		 * device gone fails every read, which the policy would retry for
		 * ever (bid-hybrid's migration did: the daemon never drained). */
		if (dev == 1 && td->t->failed)
			return;
		/* Loaded from where it was issued: the tier's bytes there, or
		 * home. */
		c->buf = malloc(r->len ? r->len : 1);
		c->buflen = r->len;
		if (!c->buf)
			return;
		if (dev == 1) {
			if (off <= td->t->st->sb.data_bytes && r->len <= td->t->st->sb.data_bytes - off) {
				pin(c, td->t, off, r->len);
				sub_read(d, c, td->t->st->fd, c->buf, r->len,
					 tstore_data_pos(td->t->st, off));
			}
		} else {
			struct load_ctx x = { .c = c, .addr0 = r->offset };

			memset(c->buf, 0, r->len);
			resolve(d, td, r->offset, r->len, true, load_home, &x);
		}
		return;
	}
	{
		struct move_ctx x = { .c = c, .loc = off, .addr0 = r->offset };

		x.tmp = malloc(r->len < CHUNK ? r->len : CHUNK);
		if (!x.tmp)
			return;
		if (dev == 0)
			resolve(d, td, r->offset, r->len, false, move_home, &x);
		else if (td->t->is_volatile || cmd_store_fd(c) >= 0)
			resolve(d, td, r->offset, r->len, true, move_to_tier, &x);
		if (dev == 1 && x.moved && !td->t->is_volatile)
			sub_sync_range(d, c, c->sfd, tstore_data_pos(td->t->st, off), r->len);
		free(x.tmp);
	}
}

/* Whether a chain issued home is plain home I/O for the engine: workload
 * requests only, none touching tier state. */
static bool plain_home(struct daemon *d, struct policy_req *req)
{
	for (struct policy_req *m = req; m; m = m->merge_next) {
		struct tfile *tf;

		if (!is_op(d, m))
			return false;
		if (op_of(m)->wb)
			continue;   /* a write-back: plain */
		tf = op_of(m)->reg->file->tier;
		if (!tf || pol_extmap_first(&tf->loc, 0, op_of(m)->foff, m->len) ||
		    pol_extmap_first(&tf->due, 0, op_of(m)->foff, m->len))
			return false;
	}
	return true;
}

static unsigned tenv_inflight(struct policy_env *env, unsigned dev)
{
	struct ddev *dv = env->ctx;

	return dev == 0 ? dv->inflight : dev == 1 ? dv->tiers->t->inflight : 0;
}

static int tenv_issue(struct policy_env *env, struct policy_req *req, unsigned dev, uint64_t off)
{
	struct ddev *dv = env->ctx;
	struct daemon *d = dv->d;
	struct dtiers *td = dv->tiers;
	uint64_t now = dnow(), pos = off;
	unsigned n = 0;
	struct tcmd *c;

	if (!req || dev > 1)
		return -EINVAL;
	if (*inflight_of(td, dev) >= td->devs[dev].queue_depth)
		return -EBUSY;
	for (struct policy_req *m = req; m; m = m->merge_next) {
		if (m->op != req->op || ++n > 4096)
			return -EINVAL;
		if (is_op(d, m) && op_of(m)->state != OP_QUEUED)
			return -EINVAL;
	}
	/* Every write makes older loads of its file stale (fills). */
	for (struct policy_req *m = req; m; m = m->merge_next) {
		uint64_t foff;
		struct tfile *tf = m->op == POLICY_OP_WRITE ? file_of(d, m, &foff, NULL) : NULL;

		if (tf)
			tf->wgen++;
	}
	if (dev == 0 && plain_home(d, req))
		return engine_issue_home(dv, req, off);
	c = cmd_new(td, dev, n);
	if (!c)
		return -EBUSY;
	(*inflight_of(td, dev))++;
	dv->commands++;
	for (struct policy_req *m = req; m; m = m->merge_next) {
		struct tmember *x = &c->m[c->n++];

		x->r = m;
		m->issued_dev = (uint16_t)dev;
		m->issued_off = pos;
		m->issue_ns = now;
		if (is_op(d, m)) {
			struct tfile *tf = op_of(m)->wb ? NULL : op_of(m)->reg->file->tier;

			op_of(m)->state = OP_ISSUED;
			if (tf)
				tf->busy++;
		}
		if (m->op == POLICY_OP_WRITE && is_wb(d, m)) {
			/* A write home already (tiers_write_now()): its write-back,
			 * wherever the policy sent it. */
			struct policy_req *w = workload_of(d, m);

			sub_sync_range(d, c, op_of(w)->file->fd, op_of(w)->foff + (m->offset - w->offset),
				       m->len);
		} else if (m->op == POLICY_OP_READ && (is_op(d, m) || m->parent)) {
			read_request(d, c, x);
		} else if (m->op == POLICY_OP_WRITE && (is_op(d, m) || m->parent)) {
			if (dev == 1) {
				write_to_tier(d, c, x, pos);
			} else {
				uint8_t *data;
				uint64_t foff;
				struct tfile *tf = file_of(d, m, &foff, &data);

				if (tf)
					x->round = write_home(d, c, tf, data, foff, m->len, &x->err);
				else
					x->err = -EINVAL;
			}
		} else {
			internal_request(d, c, x, dev, pos);
		}
		pos += m->len;
	}
	cmd_submitted(d, c);
	return 0;
}

static void tenv_finish(struct policy_env *env, struct policy_req *req, int status)
{
	struct ddev *dv = env->ctx;
	struct daemon *d = dv->d;
	struct dop *op;
	uint64_t foff;
	struct tfile *tf;

	if (!is_op(d, req) || op_of(req)->state != OP_QUEUED)
		return;   /* not a request of ours held by the policy: ignore */
	op = op_of(req);
	if (op->wb) {
		/* A write-back its policy needs no more (or refused). */
		op->err = status < 0 ? status : 0;
		op->state = OP_ISSUED;
		engine_op_finish(d, op);
		return;
	}
	tf = op->reg->file->tier;
	if (status < 0) {
		op->result = status;
	} else if (req->op == POLICY_OP_READ) {
		/* Served by its pieces: the program gets up to the file's end. */
		foff = op->foff;
		op->result = !tf || foff >= tf->f->logical_end ? 0 :
			     (int64_t)(tf->f->logical_end - foff < op->len ? tf->f->logical_end - foff :
									     op->len);
	} else {
		op->result = (int64_t)op->len;
		/* A piece that went home over tiered data: its HOME first. */
		if (tf && pol_extmap_first(&tf->due, 0, op->foff, op->len)) {
			struct twait *w = calloc(1, sizeof(*w));

			if (w) {
				op->state = OP_ISSUED;
				w->op = op;
				w->kind = W_FINISH;
				w->round = tf->td->round + 1;
				want_round(tf);
				pol_list_add_tail(&tf->td->waits, &w->link);
				return;
			}
		}
	}
	op->state = OP_ISSUED;
	engine_op_finish(d, op);
}

/* ------------------------------------------------------------------------
 * flushing a file home, sync rounds
 * ---------------------------------------------------------------------- */

/* Every DIRTY byte of tf written home now (page cache); the next round
 * makes it durable and writes a FENCE. */
static void flush_file(struct tfile *tf)
{
	struct daemon *d = tf->td->d;
	uint8_t *buf = malloc(CHUNK);

	tf->flush = true;
	tf->flush_seq = T(d)->seq;
	tf->flush_during = tf->td->round_phase ? tf->td->round : 0;
	want_round(tf);
	if (!buf)
		return;
	for (struct pol_ext *e = pol_extmap_first(&tf->loc, 0, 0, UINT64_MAX), *n; e; e = n) {
		uint64_t off = pol_ext_off(e), len = e->len, place = e->toff;

		n = pol_extmap_next(&tf->loc, 0, e);
		if ((e->tag & 1) != ST_DIRTY)
			continue;
		for (uint64_t done = 0; done < len;) {
			uint64_t k = len - done < CHUNK ? len - done : CHUNK;
			int r = tstore_read_data(tf->td->t->st, buf, k, place + done);

			if (r < 0) {
				/* Its only copy is unreadable: lost.  The program hears
				 * of it at its next fsync or close, as of a failed
				 * write-back. */
				dlog(DLOG_ERR, "device %s: %" PRIu64 " bytes of a file only tier %s held cannot be read (%s): lost",
				     tf->f->dev->name, len - done, tf->td->t->cfg->name,
				     r == -EBADMSG ? "its device returns other bytes than were written" : strerror(-r));
				tf->td->t->lost += len - done;
				tier_fail(tf->td->t, "a read", r);
			} else {
				r = home_pwrite(d, tf, buf, k, off + done);
				if (r < 0)
					dlog(DLOG_ERR, "device %s: cannot write tier data home: %s",
					     tf->f->dev->name, strerror(-r));
			}
			if (r < 0) {
				if (!tf->f->wb_err)
					tf->f->wb_err = r == -ENOSPC || r == -EDQUOT ? r : -EIO;
				break;
			}
			tf->td->t->homed += k;
			done += k;
		}
		/* The copy equals home now; the FENCE retires it. */
		pol_extmap_put(&tf->due, 0, off, len, 0, 0, ++tf->td->home_writes);
	}
	free(buf);
}

/* Whether tf has a copy in the tier newer than sequence seq. */
static bool newer_than(struct tfile *tf, uint64_t seq)
{
	for (struct pol_ext *e = pol_extmap_first(&tf->loc, 0, 0, UINT64_MAX); e;
	     e = pol_extmap_next(&tf->loc, 0, e))
		if ((e->tag >> 1) > seq)
			return true;
	return false;
}

/* tf's copies of sequence seq or older are superseded by home data (a
 * flush wrote them there): retired until a HOME record says so. */
static void retire_upto(struct tfile *tf, uint64_t seq)
{
	struct pol_ext *e;

	for (uint64_t at = 0; at < UINT64_MAX && (e = pol_extmap_first(&tf->loc, 0, at, UINT64_MAX - at));) {
		uint64_t off = pol_ext_off(e), len = e->len;

		at = off + len;
		if ((e->tag >> 1) <= seq)
			retire_copies(tf, off, len, OC_PEND_HOME);
	}
}

/* A failed tier's data, all of it, written home now (page cache; the next
 * round fsyncs it and forgets the copies): read while it still can be - a
 * store whose write-back failed still has those pages in memory, and a
 * device that fails writes may still read what it stored. */
static void evacuate(struct dtiers *td)
{
	if (!td->t->evacuate)
		return;
	td->t->evacuate = false;
	for (struct policy_list *l = td->files.next; l != &td->files; l = l->next) {
		struct tfile *tf = pol_container_of(l, struct tfile, link);

		/* No HOME will be written for it: not stuck on one any more. */
		tf->stuck = false;
		if (pol_extmap_first(&tf->loc, 0, 0, UINT64_MAX) ||
		    pol_extmap_first(&tf->due, 0, 0, UINT64_MAX))
			flush_file(tf);
	}
}

/* Starts a round when one is wanted and none runs. */
static void round_start(struct daemon *d, struct dtiers *td)
{
	struct dtier *t = td->t;
	bool any = false;

	if (td->round_phase)
		return;
	for (struct policy_list *l = td->files.next; l != &td->files; l = l->next) {
		struct tfile *tf = pol_container_of(l, struct tfile, link);

		if (tf->round_for && tf->round_for <= td->round)
			any = true;
	}
	if (!any && pol_list_empty(&td->waits))
		return;
	td->round++;
	td->round_phase = 1;
	td->round_pending = 0;
	td->round_durable = false;
	for (struct policy_list *l = td->waits.next; l != &td->waits; l = l->next)
		if (pol_container_of(l, struct twait, link)->kind == W_CONTINUE)
			td->round_durable = true;   /* an fsync */
	/* Every file that wants it: fsync'ed (writes done before now) when
	 * the round's end writes a HOME or FENCE for what went home - the
	 * ranges `due`, a flush.  An fsync waiting for the round alone gets
	 * its own after it (tiers_sync_start()). */
	for (struct policy_list *l = td->files.next; l != &td->files; l = l->next) {
		struct tfile *tf = pol_container_of(l, struct tfile, link);

		if (!tf->round_for || tf->round_for >= td->round)
			continue;
		if (!tf->flush && !pol_extmap_first(&tf->due, 0, 0, UINT64_MAX))
			continue;
		td->round_pending += sub_fsync(d, td, TAG_ROUND, tf->wfd >= 0 ? tf->wfd : tf->f->fd,
					       true);
	}
	td->round_homes = td->home_writes;
	/* The store: what was written to it so far, durable. */
	td->round_epoch = t->epoch;
	if (t->unsynced && !t->is_volatile && !t->failed)
		td->round_pending += round_store_sync(d, td);
	t->epoch++;
	t->unsynced = 0;
	td->rounds++;
}

/* The round's syncs are done: HOME records (and FENCEs) for what they
 * made durable, reusable places, waiters. */
static void round_end(struct daemon *d, struct dtiers *td)
{
	struct dtier *t = td->t;
	bool logged = false;

	/* The store failed during the round (its sync, maybe): what it held
	 * goes home before any waiter goes on - an fsync's own sync of the
	 * file then makes it durable - and the next round fsyncs the rest. */
	evacuate(td);
	t->synced = td->round_epoch;   /* phase 2: the HOME records' sync */
	if (td->round_phase == 1) {
		for (struct policy_list *l = td->files.next, *nx; l != &td->files; l = nx) {
			struct tfile *tf = pol_container_of(l, struct tfile, link);
			uint64_t at = 0;

			nx = l->next;
			if (!tf->round_for || tf->round_for >= td->round)
				continue;
			/* Written home again during the round: the next one too. */
			tf->round_for = tf->again ? td->round : 0;
			tf->again = false;
			if (tf->flush && tf->flush_during == td->round) {
				/* Flushed after this round's fsync began: its FENCE once
				 * the next round made the copies durable.  The HOMEs of
				 * what went home before the fsync are written now (below):
				 * their writes' waiters finish at this round's end. */
				tf->round_for = td->round;
			} else if (tf->flush && newer_than(tf, tf->flush_seq)) {
				/* Written to the tier again since the flush copied it
				 * home (another process's descriptor): no FENCE - it
				 * would retire those copies.  What the flush copied is
				 * `due` (a HOME record below), its copies retired. */
				retire_upto(tf, tf->flush_seq);
				tf->flush = false;
			}
			if (tf->flush && tf->flush_during != td->round &&
			    tf->logged_gen == t->st->sb.generation && !t->failed) {
				/* Everything of it was home before this round's fsync. */
				int r = tstore_log_fence(t->st, next_seq(d), tf->fid);

				if (r == 0) {
					td->fences++;
					tf->rec_epoch = t->epoch;
					logged = true;
				} else if (r != -ENOSPC) {
					tier_fail(t, "a record", r);
				}
				pol_extmap_clear(&tf->due, 0, 0, UINT64_MAX);
				drop_copies(tf);
				tf->flush = false;
				continue;
			}
			if (tf->flush && tf->flush_during != td->round) {
				pol_extmap_clear(&tf->due, 0, 0, UINT64_MAX);
				drop_copies(tf);
				tf->flush = false;
				continue;
			}
			/* HOME for what went home before the round's fsync (a newer
			 * copy in the tier took its range out of `due`); what went
			 * home since waits for the next round. */
			tf->stuck = false;
			for (struct pol_ext *e; (e = pol_extmap_first(&tf->due, 0, at, UINT64_MAX - at));) {
				uint64_t off = pol_ext_off(e), len = e->len;

				at = off + len;
				if (e->tag > td->round_homes) {
					tf->round_for = td->round;
					continue;
				}
				if (tf->logged_gen == t->st->sb.generation && !t->failed) {
					int r = tstore_log_home(t->st, next_seq(d), tf->fid, off, len);

					if (r == -ENOSPC) {
						/* Journal full: its writers wait for the drain's
						 * new generation (drain()). */
						tf->stuck = true;
						break;
					}
					if (r < 0) {
						/* A failed store takes no more records; its
						 * writers wait for the next round, which
						 * needs none (the range is home and fsync'ed,
						 * the store emptied or to be removed). */
						tier_fail(t, "a record", r);
						tf->round_for = td->round;
						break;
					}
					td->homes++;
					tf->rec_epoch = t->epoch;
					logged = true;
				}
				pol_extmap_clear(&tf->due, 0, off, len);
			}
		}
		/* Places retired before the round are free now. */
		clear_where(&t->occ, retired_before, (td->round_epoch & 0xffffffffu) + 1);
		if (logged) {
			t->unsynced++;
			t->records_total++;
		}
		if (logged && td->round_durable && !t->is_volatile && !t->failed) {
			/* An fsync waits: the HOME records themselves durable. */
			td->round_phase = 2;
			td->round_epoch = t->epoch;
			td->round_pending = round_store_sync(d, td);
			t->epoch++;
			return;
		}
	}
	evacuate(td);   /* failed just now, writing a record */
	td->round_phase = 0;
	td->done_round = td->round;
	for (struct policy_list *l = td->waits.next, *nx; l != &td->waits; l = nx) {
		struct twait *w = pol_container_of(l, struct twait, link);
		struct tfile *wtf = w->op->reg->file->tier;

		nx = l->next;
		if (w->round > td->done_round)
			continue;
		if (wtf && (wtf->stuck || (w->kind == W_FINISH &&
					   pol_extmap_first(&wtf->due, 0, w->op->foff, w->op->len)))) {
			/* Its HOME is not written yet (journal full; or a round
			 * that did not cover its write): not acknowledged before
			 * it is, or a kill would let recovery copy the older
			 * tier data over it. */
			w->round = td->round + 1;
			if (!wtf->stuck)
				want_round(wtf);
			continue;
		}
		pol_list_del(&w->link);
		if (w->kind == W_FINISH) {
			engine_op_finish(d, w->op);
		} else {
			w->op->tier_step = 1;
			engine_op_continue(d, w->op);
		}
		free(w);
	}
	/* Files nobody holds any more, whose data is all home: gone.  One
	 * written to the tier during its flush flushes again. */
	for (struct policy_list *l = td->files.next, *nx; l != &td->files; l = nx) {
		struct tfile *tf = pol_container_of(l, struct tfile, link);

		nx = l->next;
		if (!tf->released || tf->f->refs || tf->busy || tf->flush || tf->round_for)
			continue;
		if (dirty_bytes(tf))
			flush_file(tf);
		else if (!pol_extmap_first(&tf->due, 0, 0, UINT64_MAX))
			engine_file_destroy(d, tf->f);   /* clean copies go with it */
	}
}

/* A tier whose journal filled past DRAIN_AT: everything home, then a new
 * generation. */
static void drain(struct daemon *d, struct dtiers *td)
{
	struct dtier *t = td->t;
	char err[600] = "its sync failed";   /* tstore_reset() says why otherwise */

	if (t->failed) {
		t->draining = false;   /* tier_invalidate() instead */
		return;
	}
	if (!t->draining && journal_room(t))
		return;
	if (!t->draining) {
		t->draining = true;
		t->drains++;
		dlog(DLOG_INFO, "tier %s: journal %" PRIu64 " of %" PRIu64 " MiB used: writing its data home, then starting it afresh",
		     t->cfg->name, t->st->jhead >> 20, t->st->sb.journal_bytes >> 20);
		for (struct policy_list *l = td->files.next; l != &td->files; l = l->next)
			flush_file(pol_container_of(l, struct tfile, link));
		return;
	}
	/* Reset once nothing of the old generation is needed any more. */
	if (td->round_phase || t->inflight)
		return;
	for (struct policy_list *l = td->files.next; l != &td->files; l = l->next) {
		struct tfile *tf = pol_container_of(l, struct tfile, link);

		/* Home and fsync'ed; a HOME not written for want of room needs
		 * no writing once the generation it would cover is gone. */
		if (tf->flush || tf->busy || tf->round_for || dirty_bytes(tf) ||
		    (pol_extmap_first(&tf->due, 0, 0, UINT64_MAX) && !tf->stuck))
			return;
	}
	if (tstore_sync(t->st) < 0 ||
	    tstore_reset(t->st, next_seq(d) + 1, 0, 0, err, sizeof(err)) < 0) {
		dlog(DLOG_ERR, "tier %s: cannot start afresh (%s)", t->cfg->name, err);
		/* Not again at every turn: the tier failed (tier_invalidate()
		 * tries once more and says what to do). */
		t->draining = false;
		tier_fail(t, "a reset", -EIO);
		return;
	}
	T(d)->seq++;
	/* Nothing of the old generation is needed: every place is free but
	 * the clean copies, which stay valid (no record needed). */
	clear_where(&t->occ, retired_before, UINT64_MAX);
	for (struct policy_list *l = td->files.next; l != &td->files; l = l->next) {
		struct tfile *tf = pol_container_of(l, struct tfile, link);

		pol_extmap_clear(&tf->due, 0, 0, UINT64_MAX);
		tf->stuck = false;
	}
	t->draining = false;
	t->resets++;
	t->unsynced = 0;
}

/* A failed tier whose data is all home and fsync'ed: its store emptied (a
 * new generation), once, so that a restart's recovery does not copy its
 * records - older than the home files now - over newer data.  A store
 * that cannot be written any more (ext4 makes itself read-only after a
 * failed journal commit) keeps them: the daemon says so, with what to do.
 * Nor is a store emptied whose data could not all be read: it may be its
 * only copy, should the device read again. */
static void tier_invalidate(struct daemon *d, struct dtiers *td)
{
	struct dtier *t = td->t;
	uint64_t gen = t->st->sb.generation;
	char err[600] = "";

	if (!t->failed || t->invalid || t->evacuate || td->round_phase)
		return;
	for (struct policy_list *l = td->files.next; l != &td->files; l = l->next) {
		struct tfile *tf = pol_container_of(l, struct tfile, link);

		if (tf->flush || dirty_bytes(tf) || pol_extmap_first(&tf->due, 0, 0, UINT64_MAX))
			return;
	}
	if (t->lost) {
		t->invalid = -EIO;
		dlog(DLOG_ERR, "tier %s: %" PRIu64 " bytes only it held could not be read back: %s is left as it is (a restart applies what of it can be read, and could copy older records over newer data too); keep a copy of it, then remove it before iosigd starts again unless that data is needed more",
		     t->cfg->name, t->lost, t->st->path);
		return;
	}
	/* Its write-back error is reported once, maybe here: not the reset's. */
	(void)tstore_sync(t->st);
	if (tstore_reset(t->st, next_seq(d) + 1, 0, 0, err, sizeof(err)) == 0 ||
	    t->st->sb.generation != gen) {
		/* (A new superblock written and synced is enough: the old
		 * records are ignored whether the journal was cleared or not.) */
		T(d)->seq++;
		t->invalid = 1;
		t->resets++;
		dlog(DLOG_INFO, "tier %s: its data is home; %s is empty now (a restart recovers nothing from it); the tier stays failed until iosigd restarts",
		     t->cfg->name, t->st->path);
		return;
	}
	t->invalid = -EIO;
	dlog(DLOG_ERR, "tier %s: %s; everything it held is home and fsync'ed, so its records are older than the home files: remove %s before iosigd starts again (its recovery would copy them over newer data), once its filesystem is repaired",
	     t->cfg->name, err, t->st->path);
}

void tiers_run(struct daemon *d)
{
	for (struct policy_list *l = d->devs.next; l != &d->devs; l = l->next) {
		struct ddev *dv = pol_container_of(l, struct ddev, link);
		struct dtiers *td = dv->tiers;

		if (!td)
			continue;
		while (!pol_list_empty(&td->done)) {
			struct tcmd *c = pol_container_of(td->done.next, struct tcmd, link);

			pol_list_del(&c->link);
			cmd_done(d, c);
		}
		if (td->round_phase && !td->round_pending)
			round_end(d, td);
		drain(d, td);
		evacuate(td);
		round_start(d, td);
		if (td->round_phase && !td->round_pending)
			round_end(d, td);
		tier_invalidate(d, td);
	}
}

bool tiers_idle(struct daemon *d)
{
	for (struct policy_list *l = d->devs.next; l != &d->devs; l = l->next) {
		struct dtiers *td = pol_container_of(l, struct ddev, link)->tiers;

		if (!td)
			continue;
		if (!pol_list_empty(&td->done) || (td->round_phase && !td->round_pending))
			return false;
		if (!td->round_phase && !pol_list_empty(&td->waits))
			return false;
		for (struct policy_list *f = td->files.next; f != &td->files; f = f->next)
			if (pol_container_of(f, struct tfile, link)->round_for && !td->round_phase)
				return false;
		if (td->t->draining && !td->round_phase && !td->t->inflight)
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------------
 * ops of files with tiers: fsync, barriers, truncate, fallocate
 * ---------------------------------------------------------------------- */

/*
 * Whether an fsync or the last close of tf needs a sync round: a copy of
 * it in the tier, a write home whose HOME record is not written, a flush
 * under way, or a record of it the store has not made durable (recovery
 * could apply a DATA record over what the fsync acknowledged while the
 * HOME after it is not durable).  A file that once had a record and has
 * none of these took a round at each fsync and close (the store's sync,
 * on the HDD for MIOS, behind its padding): mios-e in bench_tiers' mios
 * scenario, 1 write redirected, makespan x16 of noop's on a quiet machine.
 * For an fsync (`sync`) a copy counts only in a volatile tier: one in a
 * persistent tier whose record is durable is durable - so was a file with
 * MIOS's one redirected write, whose every fsync until GC took it home
 * waited for a sync of the HDD's store behind MIOS's padding (mios-e:
 * makespan x10 of noop's).
 */
static bool needs_round(struct tfile *tf, bool sync)
{
	struct dtier *t = tf->td->t;

	return (sync ? t->is_volatile && dirty_bytes(tf) : !!pol_extmap_first(&tf->loc, 0, 0, UINT64_MAX)) ||
	       pol_extmap_first(&tf->due, 0, 0, UINT64_MAX) || tf->flush || tf->stuck ||
	       tf->round_for || (tf->logged_gen == t->st->sb.generation && tf->rec_epoch > t->synced);
}

/*
 * The home file of an fsync's file changed since the last fsync that
 * completed only by extend_home() (the daemon's other changes count in
 * f->home_mods; anyone's change moves its size, blocks or ctime): every
 * write before the fsync is in its page cache (written back by the
 * SYNC_FILE_RANGE that replaces the fsync) or in a durable record - its
 * round saw to that - whose recovery restores the size too.  The fsync's
 * journal commit would only wait, behind whatever other writers of the
 * file system have dirty: on ext4 with data=ordered their data
 * (bench_tiers bid: each small writer's fdatasync behind the bulky
 * writers').  Never with a volatile or failed tier (its records do not
 * last).  What a change by another program between the daemon's own
 * change and its look at the file (microseconds, one thread) would still
 * need is the commit; docs/tiers.md.
 */
bool tiers_sync_start(struct dfile *f, uint64_t *gen)
{
	struct tfile *tf = f->tier;
	struct dtier *t = tf->td->t;
	struct stat st;

	*gen = 0;
	if (fstat(f->fd, &st) < 0) {
		tf->known = false;
		return false;
	}
	if (tf->known && tf->known_mods == f->home_mods && !t->is_volatile && !t->failed &&
	    home_as_known(tf, &st))
		return true;
	/* A full one: what it commits is the file as it is now. */
	tf->pend_st = st;
	tf->pend_mods = f->home_mods;
	*gen = ++tf->pend_gen;
	return false;
}

void tiers_sync_done(struct dfile *f, uint64_t gen, int result)
{
	struct tfile *tf = f->tier;

	if (result < 0) {
		tf->known = false;
		return;
	}
	/* The newest full one, and nothing of ours came while it ran. */
	if (gen && gen == tf->pend_gen && tf->pend_mods == f->home_mods) {
		tf->known = true;
		tf->known_mods = tf->pend_mods;
		tf->known_st = tf->pend_st;
	}
}

bool tiers_prestart(struct daemon *d, struct dop *op)
{
	struct tfile *tf = op->reg->file->tier;
	struct dtiers *td = tf->td;
	bool has = needs_round(tf, false);

	if (op->tier_step)
		return false;
	switch (op->op) {
	case IOSD_OP_FSYNC:
	case IOSD_OP_FDATASYNC:
	case IOSD_OP_SYNC_RANGE:
		if (op->op == IOSD_OP_SYNC_RANGE && !(op->aux & SYNC_FILE_RANGE_WAIT_AFTER))
			return false;
		if (!needs_round(tf, true))
			return false;
		/* Durable somewhere: a volatile tier's data goes home first;
		 * then the store and the home file in one round, then the
		 * plain fsync (which finds little left to do). */
		if (td->t->is_volatile && dirty_bytes(tf))
			flush_file(tf);
		break;
	case IOSD_OP_BARRIER:
		if (!(op->aux & IOSD_BARRIER_HOME) || td->defer_close || !has)
			return false;
		flush_file(tf);   /* the last close: the file complete at home */
		break;
	case IOSD_OP_TRUNCATE:
	case IOSD_OP_FALLOCATE:
		if (!has)
			return false;
		/* Its sizes and offsets change: everything home first. */
		flush_file(tf);
		break;
	default:
		return false;
	}
	if (!wait_round(td, op, tf, W_CONTINUE)) {
		op->result = -ENOMEM;
		engine_op_finish(d, op);
	}
	return true;
}

/*
 * A truncate or fallocate changed the file's bytes without a write: a
 * clean copy or a load of them is of the file as it was.  The flush before
 * it (tiers_prestart()) dropped the copies made until then, but not a fill
 * that landed while its round ran (newer than the flush: no FENCE), nor a
 * load read before it and filled after it (the same wgen): reads got the
 * bytes a punch, a zeroing or a truncate had removed (tiers_test.py
 * reshape, with the fills: about 500 stale blocks in 12 s).  So, once it
 * is done: every clean copy of the file goes, with its loads, and a load
 * still in flight is no fill's source (wgen).  DIRTY copies stay: the
 * truncate's or fallocate's op came after their writes, which the flush
 * took home first; one written since is newer than it.
 */
void tiers_file_reshaped(struct dfile *f)
{
	struct tfile *tf = f->tier;
	struct pol_ext *e;

	if (!tf)
		return;
	tf->wgen++;
	cache_drop(tf->td, tf, 0, UINT64_MAX, 0, 0);
	for (uint64_t at = 0; at < UINT64_MAX && (e = pol_extmap_first(&tf->loc, 0, at, UINT64_MAX - at));) {
		uint64_t off = pol_ext_off(e), len = e->len;

		at = off + len;
		if ((e->tag & 1) == ST_CLEAN)
			retire_copies(tf, off, len, 0);
	}
}

/* ------------------------------------------------------------------------
 * shutdown
 * ---------------------------------------------------------------------- */

bool tiers_shutdown(struct daemon *d)
{
	bool done = true;

	for (struct policy_list *l = d->devs.next; l != &d->devs; l = l->next) {
		struct dtiers *td = pol_container_of(l, struct ddev, link)->tiers;

		if (!td)
			continue;
		for (struct policy_list *f = td->files.next; f != &td->files; f = f->next) {
			struct tfile *tf = pol_container_of(f, struct tfile, link);

			if (!tf->flush && (dirty_bytes(tf) || pol_extmap_first(&tf->due, 0, 0, UINT64_MAX) ||
					   tf->logged_gen == td->t->st->sb.generation)) {
				flush_file(tf);
				tf->logged_gen = tf->logged_gen ? tf->logged_gen : 0;
			}
			if (tf->flush || tf->busy || tf->round_for)
				done = false;
		}
		if (td->round_phase || td->t->inflight || !pol_list_empty(&td->done))
			done = false;
	}
	if (!done)
		return false;
	/* Everything is home and fenced: the stores start afresh (what a
	 * restart would otherwise recover is nothing). */
	for (size_t i = 0; T(d) && i < d->cfg.ntiers; i++) {
		struct dtier *t = &T(d)->t[i];
		char err[600];

		if (t->st && t->failed && t->owner) {
			tier_invalidate(d, t->owner->tiers);
			if (t->invalid < 0)
				dlog(DLOG_ERR, "tier %s: exiting with %s not emptied (see above what to do before iosigd starts again)",
				     t->cfg->name, t->st->path);
		}
		if (!t->st || t->failed)
			continue;
		if (tstore_sync(t->st) < 0 ||
		    tstore_reset(t->st, next_seq(d) + 1, 0, 0, err, sizeof(err)) < 0)
			dlog(DLOG_WARN, "tier %s: not reset at exit (%s); the next start recovers it",
			     t->cfg->name, err);
	}
	return true;
}

/* ------------------------------------------------------------------------
 * status
 * ---------------------------------------------------------------------- */

void tiers_status(struct daemon *d, struct ddev *dv, struct json_writer *w)
{
	struct dtiers *td = dv->tiers;
	struct dtier *t;
	uint64_t used = 0, dirty = 0, up;

	if (!td)
		return;
	t = td->t;
	for (struct pol_ext *e = pol_extmap_first(&t->occ, 0, 0, UINT64_MAX); e;
	     e = pol_extmap_next(&t->occ, 0, e))
		used += e->len;
	for (struct policy_list *l = td->files.next; l != &td->files; l = l->next)
		dirty += dirty_bytes(pol_container_of(l, struct tfile, link));
	up = dnow() - T(d)->start_ns;
	json_arr_begin(w, "tiers");
	json_obj_begin(w, NULL);
	json_str(w, "name", t->cfg->name);
	json_str(w, "store", t->st->path);
	json_str(w, "class", iosig_class_name(t->info.cls));
	json_bool(w, "volatile", t->is_volatile);
	json_bool(w, "failed", t->failed);
	json_bool(w, "draining", t->draining);
	json_uint(w, "size", t->st->sb.data_bytes);
	json_uint(w, "used", used);
	json_uint(w, "dirty_bytes", dirty);
	json_uint(w, "records", t->st->records);
	json_uint(w, "records_total", t->records_total);
	json_uint(w, "journal_used", t->st->jhead);
	json_uint(w, "journal_size", t->st->sb.journal_bytes);
	json_uint(w, "generation", t->st->sb.generation);
	json_uint(w, "inflight", t->inflight);
	json_uint(w, "written_bytes", t->written);
	json_uint(w, "read_bytes", t->read);
	json_uint(w, "writeback_bytes", t->homed);
	json_num(w, "writeback_rate", up ? (double)t->homed / ((double)up / 1e9) : 0);
	json_uint(w, "fill_bytes", t->fills);
	json_uint(w, "padding_bytes", t->pads);
	json_uint(w, "ordered_writes", t->st->ordered);
	json_uint(w, "fallbacks", t->fallbacks);
	json_uint(w, "conflicts", t->conflicts);
	json_uint(w, "drains", t->drains);
	json_uint(w, "resets", t->resets);
	json_uint(w, "errors", t->errors);
	json_uint(w, "lost_bytes", t->lost);
	json_uint(w, "sync_rounds", td->rounds);
	json_uint(w, "home_records", td->homes);
	json_uint(w, "fences", td->fences);
	json_uint(w, "reads_elsewhere", td->redirected_reads);
	json_obj_end(w);
	json_arr_end(w);
}
