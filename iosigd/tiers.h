/* SPDX-License-Identifier: MIT */
/*
 * tiers.h - the engine's side of tiers (docs/tiers.md): the tier stores a
 * daemon opens at start (recovered, then reset), the devices whose policy
 * puts data on them, and the files such a device holds: where the newest
 * copy of every byte is, and what must reach a store or the home file
 * before an operation may complete.
 *
 * The policy decides where and when (policy.h); tiers.c does what each
 * request it issues means for the data, so reads always get the newest
 * copy and nothing is lost even when a policy's bookkeeping is wrong.
 * engine.c calls in at a few places; everything else is here.
 */
#ifndef IOSIGD_TIERS_H
#define IOSIGD_TIERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct daemon;
struct ddev;
struct dfile;
struct dop;
struct json_writer;

/* At start, before any client: opens every configured store (creating
 * what is missing), recovers what a previous daemon left, resets them.
 * 0, or -errno with a message in err (the daemon must not start). */
int tiers_open(struct daemon *d, char *err, size_t errlen);
/* At exit: closes the stores (after tiers_shutdown() wrote everything home). */
void tiers_close(struct daemon *d);

/*
 * A device is being set up: if its configuration gives it tiers, its
 * environment gets them (devices 1.., callbacks) and *spec becomes the
 * policy spec with the daemon's defaults for tier policies first (in
 * specbuf).  0 (with or without tiers), or -errno with a reason in err.
 */
int tiers_device(struct daemon *d, struct ddev *dv, const char **spec, char *specbuf,
		 size_t specsize, char *err, size_t errlen);
void tiers_device_free(struct daemon *d, struct ddev *dv);

/* A file of a device with tiers was opened (first registration): 0 or
 * -ENOMEM. */
int tiers_file_new(struct daemon *d, struct dfile *f);
/* A registration of it through fd (every one): a writable descriptor is
 * kept for writing tier data home. */
void tiers_file_fd(struct daemon *d, struct dfile *f, int fd);
/* The file's last registration went: true when tiers keeps it (its data
 * is still to be written home; it calls engine_file_destroy() later). */
bool tiers_file_release(struct daemon *d, struct dfile *f);
void tiers_file_free(struct dfile *f);
/* Whether (dev, ino) is a tier store (never registered as a home file). */
bool tiers_is_store(struct daemon *d, dev_t dev, ino_t ino);

/* An op of a file with tiers starts (fsync, barriers, truncate,
 * fallocate): true when tiers took it; it calls engine_op_continue() or
 * finishes it itself. */
bool tiers_prestart(struct daemon *d, struct dop *op);
/* A workload write its policy sends home as it is (POLICY_REQ_HOME) goes
 * into the home file's page cache now - true when nothing of the range
 * waits for a record (a DIRTY copy, a HOME not written); its clean copies
 * and loads go.  tiers_home_write(): the caller writes it, at once;
 * tiers_write_now() writes it. */
bool tiers_home_write(struct dfile *f, uint64_t foff, uint64_t len);
bool tiers_write_now(struct daemon *d, struct dfile *f, const void *buf, uint64_t foff,
		     uint64_t len);
/* Nothing of f in its tier nor on its way (a client may then write it
 * itself: IOSD_R2_HOME). */
bool tiers_holds_nothing(struct dfile *f);
/* A client wrote [foff, +len) of f itself (WRITTEN): the tier's copies of
 * the range and loads of it are stale. */
void tiers_written(struct dfile *f, uint64_t foff, uint64_t len);
/* A truncate or fallocate of a file with tiers was done (or failed: it
 * may have changed the file all the same): its clean copies and loads
 * are of the file as it was. */
void tiers_file_reshaped(struct dfile *f);
/*
 * An fsync or fdatasync of f (a file with a tier) starts, its round (if
 * it needed one) done: true when every change of the home file since the
 * last one completed is a size the tier's durable records restore, so
 * that writing the file's dirty pages is all that is left - no journal
 * commit behind other writers' data.  *gen is for tiers_sync_done(), when
 * it completed with result.
 */
bool tiers_sync_start(struct dfile *f, uint64_t *gen);
void tiers_sync_done(struct dfile *f, uint64_t gen, int result);
/* io_uring user_data tags (low 3 bits) that are tiers': engine.c hands
 * their completions to tiers_cqe() with the whole user_data. */
#define TIERS_TAG_MIN 5u
#define TIERS_TAG_MAX 7u
void tiers_cqe(struct daemon *d, void *obj, int res);
/* Each turn of the loop, after dispatch: completions without I/O, syncs
 * of stores and home files, HOME records, drains, resets. */
void tiers_run(struct daemon *d);
/* Nothing for tiers_run() to do until an event. */
bool tiers_idle(struct daemon *d);
/* SIGTERM, sessions drained: writes everything home; true once done. */
bool tiers_shutdown(struct daemon *d);

/* The "tiers" of a device's STATUS object. */
void tiers_status(struct daemon *d, struct ddev *dv, struct json_writer *w);

#endif /* IOSIGD_TIERS_H */
