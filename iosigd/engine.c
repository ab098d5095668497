/* SPDX-License-Identifier: MIT */
/*
 * engine.c - iosigd's one thread: an epoll loop over the listener, the
 * sessions' sockets and kick eventfds, io_uring's completions, a timerfd
 * for the policies' wake-ups and a signalfd; the devices with their
 * policies; the files and the order of their operations.
 *
 * One turn of the loop:
 *   1. events: new clients, messages, kicks, completions, signals;
 *   2. ticks that are due;
 *   3. ingest: every session's new ring entries are copied out and checked
 *      (session.c); when one of them is waited for (a read, an fsync ...)
 *      every ring is looked at once more, so that what another process
 *      published before it - and told this one about - is in the same
 *      round.  The round is admitted in order, entries nobody waits for
 *      first (those waited for were published concurrently with the rest);
 *   4. admission gives each op a global sequence number and the newest
 *      earlier op of its file it must follow (dep_seq): an overlapping
 *      write or read, any write for fsync and barriers, everything for
 *      truncate and fallocate.  An op goes ahead when no op of its file
 *      with a number <= dep_seq is left (conservative, and cheap: the
 *      oldest outstanding op of a file is the head of its list);
 *   5. a ready write goes into the page cache at once (an io_uring WRITE
 *      from the ring's data area); when it is there its entry completes
 *      (ring space is free again, the file's next ops may go) and its
 *      write-back - contiguous ones of a process coalesced up to 4 MiB -
 *      waits, as the kernel's own does, until the daemon's dirty bytes
 *      pass a threshold, it ages, or the file is synced or closed; then
 *      it goes to the device's policy; ready reads go to the policy (struct iosig_req,
 *      physical address from FIEMAP); the others run at once: fsync
 *      through io_uring, truncate directly, barriers complete.  On a
 *      device whose policy keeps data in a tier (tiers.c) a write goes to
 *      the policy with its data instead, which may put it in the tier;
 *   6. dispatch(): a policy issues commands through env->issue(); a
 *      write-back becomes an io_uring SYNC_FILE_RANGE (WAIT_BEFORE|WRITE|
 *      WAIT_AFTER: done means on the device; a failure is reported by the
 *      file's next fsync or barrier), a read a READ into the ring's data
 *      area, a tiered device's write issued home a WRITE linked to such a
 *      SYNC_FILE_RANGE;
 *   7. completions go back into the rings (and futex wake-ups to waiting
 *      clients); closed sessions with nothing left are freed.
 * A program waiting for an op held back by a policy (an fsync behind
 * staged writes, a full ring) gets those ops expedited (policy.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/falloc.h>

#include "iosigd.h"
#include "tiers.h"

#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x00000020   /* Linux 6.9: ignore O_APPEND for this write */
#endif

#define URING_ENTRIES 256
#define TAG_IO 0u                  /* user_data low bits: the op's main I/O */
#define TAG_SYNC 1u                /* a write-back's sync_file_range */
#define TAG_PROBE 2u               /* start-up probe, not an op */
#define TAG_GROUP 3u               /* a group's READV (struct dgroup) */
#define TAG_GSYNC 4u               /* a group's sync_file_range (write-backs) */
#define GROUP_MAX 256              /* requests in one vectored command */
#define WB_RUN_MAX (4ull << 20)     /* bytes one write-back request may coalesce */
#define SFR_ALL (SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER)

uint64_t dnow(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * POLICY_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static bool is_data_op(unsigned op)
{
	return op == IOSD_OP_WRITE || op == IOSD_OP_APPEND || op == IOSD_OP_READ;
}

static bool is_write_op(unsigned op)
{
	return op == IOSD_OP_WRITE || op == IOSD_OP_APPEND;
}

/* The file and the descriptor of an op's I/O: a write-back has outlived
 * its registration and uses the file's own descriptor. */
static struct dfile *op_file(const struct dop *op)
{
	return op->reg ? op->reg->file : op->file;
}

static int op_fd(const struct dop *op)
{
	return op->reg ? op->reg->fd : op->file->fd;
}

/* Whether a write goes to its device's policy with its data: on a device
 * whose policy keeps data in a tier (the policy may put it there:
 * tiers.c).  Elsewhere a write goes into the page cache at once and only
 * its write-back (op->wb) goes to the policy. */
static bool write_via_policy(const struct dop *op)
{
	return !op->wb && !op->taken && op_file(op)->dev->tiers;
}

int engine_watch(struct daemon *d, int fd, struct dwatch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

void engine_unwatch(struct daemon *d, int fd)
{
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* ------------------------------------------------------------------------
 * ops
 * ---------------------------------------------------------------------- */

static struct dop *op_of(struct policy_req *r)
{
	return pol_container_of(r, struct dop, req);
}

struct dop *engine_op_new(struct daemon *d)
{
	struct dop *op;

	if (!pol_list_empty(&d->free_ops)) {
		op = pol_container_of(d->free_ops.next, struct dop, blink);
		pol_list_del(&op->blink);
	} else {
		op = malloc(sizeof(*op));
		if (!op) {
			dlog(DLOG_WARN, "out of memory for an operation; retrying");
			return NULL;
		}
	}
	memset(op, 0, sizeof(*op));
	pol_list_init(&op->flink);
	pol_list_init(&op->blink);
	pol_list_init(&op->slink);
	op->req.engine_data = d;
	return op;
}

void engine_op_free(struct daemon *d, struct dop *op)
{
	pol_list_add_tail(&d->free_ops, &op->blink);
}

/* ------------------------------------------------------------------------
 * files
 * ---------------------------------------------------------------------- */

static void file_reset_ranges(struct dfile *f)
{
	f->w_lo = f->a_lo = UINT64_MAX;
	f->w_hi = f->a_hi = 0;
	f->waited_dep = 0;
}

struct dfile *engine_file(struct daemon *d, struct ddev *dev, uint64_t st_dev, uint64_t ino,
			  int fd)
{
	struct dfile *f;
	struct stat st;

	for (struct policy_list *l = d->files.next; l != &d->files; l = l->next) {
		f = pol_container_of(l, struct dfile, link);
		if (f->st_dev == st_dev && f->ino == ino) {
			f->refs++;
			if (f->tier)
				tiers_file_fd(d, f, fd);
			return f;
		}
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (f->fd < 0) {
		free(f);
		return NULL;
	}
	f->st_dev = st_dev;
	f->ino = ino;
	f->dev = dev;
	f->refs = 1;
	pol_list_init(&f->ops);
	pol_list_init(&f->blocked);
	pol_list_init(&f->wbs);
	pol_list_init(&f->wb_waiters);
	file_reset_ranges(f);
	if (fstat(f->fd, &st) == 0)
		f->logical_end = (uint64_t)st.st_size;
	if (dev->tiers) {
		if (tiers_file_new(d, f) < 0) {
			close(f->fd);
			free(f);
			return NULL;
		}
		tiers_file_fd(d, f, fd);
	}
	pol_list_add_tail(&d->files, &f->link);
	return f;
}

void engine_file_destroy(struct daemon *d, struct dfile *f)
{
	pol_list_del(&f->link);
	tiers_file_free(f);
	close(f->fd);
	extmap_free(&f->map);
	free(f);
}

static void wb_start_file(struct daemon *d, struct dfile *f, bool waited);

void engine_file_put(struct daemon *d, struct dfile *f)
{
	/* Every op holds its registration, which holds a reference: the
	 * last one goes when the file has no op left (its tier data home
	 * first: tiers.c keeps it until then).  When only its write-backs
	 * are left (its last registration went: a client killed before its
	 * close) they start, so the file is not held open. */
	if (--f->refs) {
		if (f->refs == f->nwb)
			wb_start_file(d, f, false);
		return;
	}
	if (f->tier && tiers_file_release(d, f))
		return;
	engine_file_destroy(d, f);
}

/* Moves the file's blocked ops whose turn came to the ready list. */
static void unblock(struct daemon *d, struct dfile *f)
{
	uint64_t first;

	if (pol_list_empty(&f->ops)) {
		file_reset_ranges(f);
		first = UINT64_MAX;
	} else {
		first = pol_container_of(f->ops.next, struct dop, flink)->seq;
	}
	for (struct policy_list *l = f->blocked.next, *n; l != &f->blocked; l = n) {
		struct dop *b = pol_container_of(l, struct dop, blink);

		n = l->next;
		if (first > b->dep_seq) {
			pol_list_del(&b->blink);
			b->state = OP_READY;
			pol_list_add_tail(&d->ready, &b->blink);
		}
	}
}

static void wb_finish(struct daemon *d, struct dop *op);

/* op leaves its file's order - the next ones of the file may go - and its
 * entry is completed with op->result (which may free its registration and,
 * with the last one, the file: nothing looks at either afterwards). */
static void op_answer(struct daemon *d, struct dop *op)
{
	struct dfile *f = op->reg->file;
	bool was_first = f->ops.next == &op->flink;

	pol_list_del(&op->flink);
	d->ops_total++;
	if (was_first || pol_list_empty(&f->ops))
		unblock(d, f);
	session_op_done(d, op);
}

/* An op is finished: answered, then freed. */
void engine_op_finish(struct daemon *d, struct dop *op)
{
	struct dfile *f;

	if (op->wb) {
		wb_finish(d, op);
		return;
	}
	f = op->reg->file;
	if (op->home_sync)
		tiers_sync_done(f, op->sync_gen, f->wb_err ? f->wb_err : (int)op->result);
	/* A failed write-back reaches the program by the file's next fsync
	 * or barrier (close, fstat), as the kernel's write-back errors do;
	 * it happened first, so it goes before the sync's own error (the
	 * kernel's fsync reports the failed write-back too, a journal aborted
	 * by it at the next fsync).  The older write-backs finished before the
	 * sync started (wb_wait()). */
	if (f->wb_err &&
	    (op->op == IOSD_OP_FSYNC || op->op == IOSD_OP_FDATASYNC || op->op == IOSD_OP_SYNC_RANGE ||
	     op->op == IOSD_OP_BARRIER)) {
		op->result = f->wb_err;
		f->wb_err = 0;
	}
	op->state = OP_DONE;
	op_answer(d, op);
	engine_op_free(d, op);
}

/* ------------------------------------------------------------------------
 * devices and the environment their policies see
 * ---------------------------------------------------------------------- */

static struct ddev *env_dev(struct policy_env *env)
{
	return env->ctx;
}

static uint64_t env_now(struct policy_env *env)
{
	return dnow();
}

static unsigned env_inflight(struct policy_env *env, unsigned dev)
{
	return dev == 0 ? env_dev(env)->inflight : 0;
}

struct io_uring_sqe *engine_sqe(struct daemon *d)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->uring);

	if (!sqe) {
		/* The submission queue is full: hand it to the kernel. */
		io_uring_submit(&d->uring);
		d->uring_pending = 0;
		sqe = io_uring_get_sqe(&d->uring);
	}
	if (sqe)
		d->uring_pending++;
	return sqe;
}

/* Submits an op's I/O (the rest of a write after a short one). */
static int op_submit_io(struct daemon *d, struct dop *op)
{
	struct io_uring_sqe *sqe, *sync;
	int fd = op_fd(op);
	void *buf;

	/* A write through its policy and its sync are linked: both or
	 * neither fit. */
	if (is_write_op(op->op) && write_via_policy(op) && io_uring_sq_space_left(&d->uring) < 2) {
		io_uring_submit(&d->uring);
		d->uring_pending = 0;
	}
	sqe = engine_sqe(d);
	if (!sqe)
		return -EBUSY;
	switch (op->op) {
	case IOSD_OP_WRITE:
	case IOSD_OP_APPEND:
		if (op->wb) {
			/* Its write-back: the device does the work now. */
			io_uring_prep_sync_file_range(sqe, fd, (unsigned)op->len, op->foff, SFR_ALL);
			io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)op | TAG_SYNC);
			op->cqes = 1;
			return 0;
		}
		buf = op->s->ring.data + op->data_off + op->done;
		op->reg->file->home_mods++;
		io_uring_prep_write(sqe, fd, buf, (unsigned)(op->len - op->done), op->foff + op->done);
		if (d->noappend)
			sqe->rw_flags = RWF_NOAPPEND;
		if (!write_via_policy(op))
			break;   /* into the page cache: cached() */
		/* Issued by its policy: done means on the device. */
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)op | TAG_IO);
		sync = engine_sqe(d);
		if (!sync)
			return -EBUSY;
		io_uring_prep_sync_file_range(sync, fd, (unsigned)(op->len - op->done),
					      op->foff + op->done, SFR_ALL);
		io_uring_sqe_set_data64(sync, (uint64_t)(uintptr_t)op | TAG_SYNC);
		op->cqes = 2;
		return 0;
	case IOSD_OP_READ:
		io_uring_prep_read(sqe, fd, op->s->ring.data + op->data_off, (unsigned)op->len,
				   op->foff);
		break;
	case IOSD_OP_FSYNC:
	case IOSD_OP_FDATASYNC:
		if (op->reg->file->tier) {
			op->home_sync = true;
			if (tiers_sync_start(op->reg->file, &op->sync_gen)) {
				/* Only sizes a tier's durable records restore changed
				 * since the last one: the file's dirty pages, no
				 * journal commit (tiers.c). */
				op->reg->file->dev->syncs_covered++;
				io_uring_prep_sync_file_range(sqe, fd, 0, 0, SFR_ALL);
				break;
			}
		}
		io_uring_prep_fsync(sqe, fd, op->op == IOSD_OP_FDATASYNC ? IORING_FSYNC_DATASYNC : 0);
		break;
	case IOSD_OP_SYNC_RANGE:
		io_uring_prep_sync_file_range(sqe, fd, (unsigned)op->len, op->foff, (int)op->aux);
		break;
	case IOSD_OP_FALLOCATE:
		op->reg->file->home_mods++;
		io_uring_prep_fallocate(sqe, fd, (int)op->aux, op->foff, op->len);
		break;
	default:
		return -EINVAL;
	}
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)op | TAG_IO);
	op->cqes = 1;
	return 0;
}

static void command_done(struct daemon *d, struct dop *head);

/*
 * A run of a merged chain that continues itself in one file through one
 * descriptor: one READV, one SYNC_FILE_RANGE (write-backs) or, on a tiered
 * device, one WRITEV linked to one SYNC_FILE_RANGE for all of it, as the
 * policy meant by merging.  What goes wrong with it (an error, a short
 * transfer) is sorted out per request.
 */
struct dgroup {
	unsigned n, cqes;
	int err;
	uint64_t done;                 /* bytes transferred */
	struct dop *op[GROUP_MAX];
	struct iovec iov[GROUP_MAX];
};

static void member_done(struct daemon *d, struct dop *op);

/* Submits the group of ops[0..n) (contiguous, one registration). */
static int group_submit(struct daemon *d, struct dop **ops, unsigned n)
{
	struct dgroup *g = malloc(sizeof(*g));
	struct io_uring_sqe *sqe, *sync;
	struct dop *first = ops[0];
	uint64_t total = 0;
	bool read = first->op == IOSD_OP_READ, data = read || write_via_policy(first);

	if (!g)
		return -ENOMEM;
	g->n = n;
	g->err = 0;
	g->done = 0;
	if (data && !read)
		first->reg->file->home_mods++;
	for (unsigned i = 0; i < n; i++) {
		g->op[i] = ops[i];
		if (data) {
			g->iov[i].iov_base = ops[i]->s->ring.data + ops[i]->data_off;
			g->iov[i].iov_len = ops[i]->len;
		}
		total += ops[i]->len;
	}
	if (!read && total > UINT32_MAX) {
		free(g);
		return -EINVAL;   /* one by one */
	}
	/* A WRITEV and its sync are linked: both or neither fit. */
	if (!read && data && io_uring_sq_space_left(&d->uring) < 2) {
		io_uring_submit(&d->uring);
		d->uring_pending = 0;
	}
	sqe = engine_sqe(d);
	if (!sqe) {
		free(g);
		return -EBUSY;
	}
	g->cqes = 1;
	if (read) {
		io_uring_prep_readv(sqe, op_fd(first), g->iov, n, first->foff);
		io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)g | TAG_GROUP);
		return 0;
	}
	if (!data) {
		/* Write-backs: the data is in the page cache. */
		io_uring_prep_sync_file_range(sqe, op_fd(first), (unsigned)total, first->foff, SFR_ALL);
		io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)g | TAG_GSYNC);
		return 0;
	}
	io_uring_prep_writev(sqe, op_fd(first), g->iov, n, first->foff);
	if (d->noappend)
		sqe->rw_flags = RWF_NOAPPEND;
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)g | TAG_GROUP);
	sync = engine_sqe(d);
	io_uring_prep_sync_file_range(sync, op_fd(first), (unsigned)total, first->foff, SFR_ALL);
	io_uring_sqe_set_data64(sync, (uint64_t)(uintptr_t)g | TAG_GSYNC);
	g->cqes = 2;
	return 0;
}

/* A group's completions: requests fully transferred are done; after a
 * short transfer the rest go one by one (a read short at the end of the
 * file ends there). */
static void on_group_cqe(struct daemon *d, struct dgroup *g, unsigned tag, int res)
{
	uint64_t left;

	if (tag == TAG_GROUP) {
		if (res < 0)
			g->err = res;
		else
			g->done = (uint64_t)res;
	} else if (res < 0 && res != -ECANCELED && !g->err) {
		g->err = res;
	}
	if (--g->cqes)
		return;
	left = g->done;
	for (unsigned i = 0; i < g->n; i++) {
		struct dop *op = g->op[i];
		uint64_t k = left < op->len ? left : op->len;

		left -= k;
		op->done = k;
		if (g->err) {
			op->err = g->err;
		} else if (write_via_policy(op) && k < op->len) {
			if (op_submit_io(d, op) == 0)
				continue;
			op->err = -EIO;
		}
		member_done(d, op);
	}
	free(g);
}

/* One request of a command has its data on the device (or failed). */
static void member_done(struct daemon *d, struct dop *op)
{
	struct dop *head = op->head;

	if (--head->members_left == 0)
		command_done(d, head);
}

static int env_issue(struct policy_env *env, struct policy_req *req, unsigned dev, uint64_t offset)
{
	if (dev != 0)
		return -EINVAL;
	return engine_issue_home(env_dev(env), req, offset);
}

int engine_issue_home(struct ddev *dv, struct policy_req *req, uint64_t offset)
{
	struct daemon *d = dv->d;
	struct dop *head;
	uint64_t now = dnow(), off = offset;
	unsigned n = 0;

	if (!req)
		return -EINVAL;
	if (dv->inflight >= dv->info.queue_depth)
		return -EBUSY;
	for (struct policy_req *m = req; m; m = m->merge_next) {
		if (m->engine_data != d || op_of(m)->state != OP_QUEUED || m->op != req->op ||
		    m->op == POLICY_OP_FLUSH || ++n > (1u << 20))
			return -EINVAL;
	}
	head = op_of(req);
	head->members_left = n;
	dv->inflight++;
	dv->commands++;
	{
		struct dop *run[GROUP_MAX];
		unsigned k = 0;

		for (struct policy_req *m = req; ; m = m->merge_next) {
			struct dop *op = m ? op_of(m) : NULL;

			/* A run ends where the next request does not continue it in
			 * the same file through the same registration. */
			if (k && (!op || k == GROUP_MAX || op_fd(op) != op_fd(run[k - 1]) ||
				  op->foff != run[k - 1]->foff + run[k - 1]->len)) {
				int r = k > 1 ? group_submit(d, run, k) : -1;

				for (unsigned i = 0; r < 0 && i < k; i++) {
					if (op_submit_io(d, run[i]) < 0) {
						/* Cannot happen with an SQ drained above; fail
						 * it cleanly, as a later event (the policy
						 * is inside dispatch()). */
						run[i]->err = -EBUSY;
						run[i]->cqes = 0;
						pol_list_add_tail(&d->failed, &run[i]->blink);
					}
				}
				k = 0;
			}
			if (!op)
				break;
			m->issued_dev = 0;
			m->issued_off = off;
			m->issue_ns = now;
			off += m->len;
			op->state = OP_ISSUED;
			op->head = head;
			op->done = 0;
			run[k++] = op;
		}
	}
	return 0;
}

static void env_finish(struct policy_env *env, struct policy_req *req, int status)
{
	struct ddev *dv = env_dev(env);
	struct dop *op;

	if (!req || req->engine_data != dv->d || op_of(req)->state != OP_QUEUED)
		return;   /* not a request of ours held by the policy: ignore */
	op = op_of(req);
	/* A home-device policy finishes a request without issuing it only
	 * when it refuses it: its data did not reach the file. */
	op->result = status < 0 ? status : -EIO;
	if (status >= 0)
		dlog(DLOG_ERR, "policy %s finished a request without issuing it", dv->policy_spec);
	engine_op_finish(dv->d, op);
}

static bool env_home(struct policy_env *env, struct policy_req *req);

static void env_wake_at(struct policy_env *env, uint64_t when)
{
	struct ddev *dv = env_dev(env);

	if (when < dv->wake)
		dv->wake = when;
}

struct ddev *engine_device(struct daemon *d, uint64_t st_dev, char *err, size_t errlen)
{
	char specbuf[IOSD_NAME_MAX * 2];
	struct ddev *dv;
	const char *spec;
	int r;

	for (struct policy_list *l = d->devs.next; l != &d->devs; l = l->next) {
		dv = pol_container_of(l, struct ddev, link);
		if (dv->st_dev == st_dev)
			return dv;
	}
	dv = calloc(1, sizeof(*dv));
	if (!dv) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	device_describe(d, st_dev, dv->name, sizeof(dv->name), &spec, &dv->info, &dv->passthrough);
	dv->info.name = dv->name;
	dv->d = d;
	dv->st_dev = st_dev;
	dv->wake = UINT64_MAX;
	pol_hist_init(&dv->lat);
	dv->env = (struct policy_env){
		.version = POLICY_ENV_VERSION, .ctx = dv, .ndev = 1, .dev = &dv->info,
		.now = env_now, .inflight = env_inflight, .issue = env_issue, .finish = env_finish,
		.wake_at = env_wake_at, .home = env_home,
	};
	/* A device with a tier: its policy gets it as device 1 (tiers.c). */
	r = tiers_device(d, dv, &spec, specbuf, sizeof(specbuf), err, errlen);
	if (r < 0) {
		dlog(DLOG_ERR, "device %s: %s", dv->name, err);
		free(dv);
		return NULL;
	}
	snprintf(dv->policy_spec, sizeof(dv->policy_spec), "%s", spec);
	r = policy_create(spec, &dv->env, &dv->pol, err, errlen);
	if (r < 0) {
		dlog(DLOG_ERR, "device %s: policy %s: %s", dv->name, spec, err);
		tiers_device_free(d, dv);
		free(dv);
		return NULL;
	}
	pol_list_add_tail(&d->devs, &dv->link);
	dlog(DLOG_INFO, "device %s: policy %s, queue depth %u", dv->name, spec, dv->info.queue_depth);
	return dv;
}

/* A command (a merged chain) is done: the policy hears of each member in
 * chain order, then their entries complete. */
void engine_req_counted(struct ddev *dv, const struct policy_req *r, bool written, uint64_t now)
{
	if (r->op == POLICY_OP_READ)
		dv->bytes_read += r->len;
	else if (written)
		dv->bytes_written += r->len;
	/* A histogram that cannot get its buckets (ENOMEM) only loses this
	 * sample from the status. */
	(void)pol_hist_add(&dv->lat, now - r->arrival_ns);
}

static void command_done(struct daemon *d, struct dop *head)
{
	struct ddev *dv = op_file(head)->dev;
	struct policy_req *m, *next;
	uint64_t now = dnow();

	dv->inflight--;
	dv->dirty = true;
	for (m = &head->req; m; m = next) {
		struct dop *op = op_of(m);

		next = m->merge_next;
		m->status = op->err;
		dv->pol->ops->complete(dv->pol, m);
		engine_req_counted(dv, m, write_via_policy(op), now);
	}
	/* Second walk: complete() may have looked at later members. */
	for (m = &head->req; m; m = next) {
		struct dop *op = op_of(m);

		next = m->merge_next;
		op->result = op->err ? op->err : (int64_t)(op->op == IOSD_OP_READ ? op->done : op->len);
		engine_op_finish(d, op);
	}
}

/* ------------------------------------------------------------------------
 * admission: order, then start
 * ---------------------------------------------------------------------- */

static bool overlaps(uint64_t a, uint64_t alen, uint64_t lo, uint64_t hi)
{
	return a < hi && lo < a + alen;
}

/* The newest outstanding op of f before op that op must follow by range:
 * writes follow overlapping reads and writes, reads overlapping writes. */
static uint64_t range_dep(const struct dfile *f, const struct dop *op, bool write)
{
	uint64_t lo = write ? f->a_lo : f->w_lo, hi = write ? f->a_hi : f->w_hi;

	if (lo >= hi || !overlaps(op->foff, op->len, lo, hi))
		return 0;
	for (struct policy_list *l = f->ops.prev; l != &f->ops; l = l->prev) {
		const struct dop *o = pol_container_of(l, struct dop, flink);

		if (!is_data_op(o->op) || (!write && o->op == IOSD_OP_READ))
			continue;
		if (overlaps(op->foff, op->len, o->foff, o->foff + o->len))
			return o->seq;
	}
	return 0;
}

/* A program waits for o: if its policy holds it (and was not told yet),
 * it serves it as it serves a process that blocks. */
static void expedite(struct ddev *dv, struct dop *o)
{
	if (o->state != OP_QUEUED || (o->req.flags & POLICY_REQ_SYNC))
		return;
	o->req.flags |= POLICY_REQ_SYNC;
	if (dv->pol->ops->expedite)
		dv->pol->ops->expedite(dv->pol, &o->req);
	dv->expedited++;
	dv->dirty = true;
}

/* Every op of f up to dep is now waited for. */
static void expedite_deps(struct daemon *d, struct dfile *f, uint64_t dep)
{
	struct ddev *dv = f->dev;

	if (dep > f->waited_dep)
		f->waited_dep = dep;
	for (struct policy_list *l = f->ops.next; l != &f->ops; l = l->next) {
		struct dop *o = pol_container_of(l, struct dop, flink);

		if (o->seq > dep)
			break;
		expedite(dv, o);
	}
}

void engine_session_expedite(struct daemon *d, struct dsession *s)
{
	for (struct policy_list *l = s->ops.next; l != &s->ops; l = l->next) {
		struct dop *o = pol_container_of(l, struct dop, slink);

		expedite(o->reg->file->dev, o);
	}
}

static void cached(struct daemon *d, struct dop *op);

/* Gives op its place in its file's order. */
static void admit(struct daemon *d, struct dop *op)
{
	struct dfile *f = op->reg->file;
	uint64_t dep = f->barrier_seq;
	struct stat st;

	op->seq = ++d->op_seq;
	if (op->op == IOSD_OP_WRITTEN) {
		/* The client wrote it itself, after its own earlier writes were
		 * done: it is in the page cache; only its write-back is left.
		 * (Not trusted for the file's end: an APPEND looks at the
		 * file's size, which that write made.) */
		op->done = op->len;
		f->home_mods++;
		if (f->tier) {
			/* Under IOSD_R2_HOME (session.c): its clean copies and
			 * loads go, as for a write home of ours; the file's end
			 * is the reads' end there (tiers.c serves them), up to
			 * what the kernel says the file has. */
			tiers_written(f, op->foff, op->len);
			f->dev->writes_direct++;
			if (op->foff + op->len > f->logical_end && fstat(f->fd, &st) == 0) {
				uint64_t end = (uint64_t)st.st_size < op->foff + op->len ?
					       (uint64_t)st.st_size : op->foff + op->len;

				if (end > f->logical_end)
					f->logical_end = end;
			}
		}
		cached(d, op);
		return;
	}
	switch (op->op) {
	case IOSD_OP_APPEND:
		/* The end as this daemon knows it, or as the file is when a
		 * plain writer made it longer. */
		if (fstat(f->fd, &st) == 0 && (uint64_t)st.st_size > f->logical_end)
			f->logical_end = (uint64_t)st.st_size;
		op->foff = f->logical_end;
		iosd_ring_assign(&op->s->ring, op->pos, op->foff);
		op->s->notify = true;
		/* fall through */
	case IOSD_OP_WRITE: {
		uint64_t r = range_dep(f, op, true);

		if (r > dep)
			dep = r;
		if (op->foff + op->len > f->logical_end)
			f->logical_end = op->foff + op->len;
		f->w_lo = op->foff < f->w_lo ? op->foff : f->w_lo;
		f->w_hi = op->foff + op->len > f->w_hi ? op->foff + op->len : f->w_hi;
		f->a_lo = op->foff < f->a_lo ? op->foff : f->a_lo;
		f->a_hi = op->foff + op->len > f->a_hi ? op->foff + op->len : f->a_hi;
		f->last_write_seq = op->seq;
		break;
	}
	case IOSD_OP_READ: {
		uint64_t r = range_dep(f, op, false);

		if (r > dep)
			dep = r;
		f->a_lo = op->foff < f->a_lo ? op->foff : f->a_lo;
		f->a_hi = op->foff + op->len > f->a_hi ? op->foff + op->len : f->a_hi;
		break;
	}
	case IOSD_OP_FSYNC:
	case IOSD_OP_FDATASYNC:
	case IOSD_OP_SYNC_RANGE:
	case IOSD_OP_BARRIER:
		if (f->last_write_seq > dep)
			dep = f->last_write_seq;
		break;
	case IOSD_OP_TRUNCATE:
	case IOSD_OP_FALLOCATE:
		dep = op->seq - 1;
		f->barrier_seq = op->seq;
		/* The end it makes (undone by reshaped() if it fails). */
		if (op->op == IOSD_OP_TRUNCATE)
			f->logical_end = op->foff;
		else if (op->aux & FALLOC_FL_COLLAPSE_RANGE)
			/* The range cut out (it may not reach the end). */
			f->logical_end -= op->foff + op->len < f->logical_end ? op->len : 0;
		else if (op->aux & FALLOC_FL_INSERT_RANGE)
			f->logical_end += op->foff < f->logical_end ? op->len : 0;
		else if (!(op->aux & FALLOC_FL_KEEP_SIZE) && op->foff + op->len > f->logical_end)
			f->logical_end = op->foff + op->len;
		break;
	}
	op->dep_seq = dep;
	pol_list_add_tail(&f->ops, &op->flink);
	if (pol_container_of(f->ops.next, struct dop, flink)->seq > dep) {
		op->state = OP_READY;
		pol_list_add_tail(&d->ready, &op->blink);
		return;
	}
	op->state = OP_BLOCKED;
	pol_list_add_tail(&f->blocked, &op->blink);
	if (op->flags & IOSD_EF_WAITED)
		expedite_deps(d, f, dep);
}

void engine_ops_admit(struct daemon *d, struct policy_list *round)
{
	/* Entries nobody waits for first, then the waited ones (published
	 * concurrently with them: any order is one the program could see). */
	for (int pass = 0; pass < 2; pass++) {
		for (struct policy_list *l = round->next, *n; l != round; l = n) {
			struct dop *op = pol_container_of(l, struct dop, blink);

			n = l->next;
			if (!!(op->flags & IOSD_EF_WAITED) != pass)
				continue;
			pol_list_del(&op->blink);
			admit(d, op);
		}
	}
}

/*
 * A write-back of f (a new one, or a write home_now() made one) joins the
 * file's and the daemon's write-backs: f->wbs in seq order, which
 * wb_wait() and wb_finish() rely on (a new one has the newest seq; one of
 * home_now() keeps its write's, and writes of a file may start out of
 * order).
 */
static void wb_track(struct daemon *d, struct dfile *f, struct dop *wb)
{
	struct policy_list *at = f->wbs.prev;

	while (at != &f->wbs && pol_container_of(at, struct dop, flink)->seq > wb->seq)
		at = at->prev;
	pol_list_add_head(at, &wb->flink);   /* after at */
	f->refs++;
	f->nwb++;
	d->wb_ops++;
	pol_list_add_tail(&d->writeback, &wb->slink);
}

/*
 * Whether the client may write the next large writes of op's handle itself
 * (IOSD_R2_HOME on op's completion; the handle's WRITTEN entries are then
 * allowed: session.c): op went into the page cache as it is, the file has
 * one registration (with two, the other's writes may go to the tier; a
 * second one later marks the ring shared: mark_shared()), no change of it
 * published before op is outstanding (one after it completes after it for
 * the client too, and decides then), and the tier holds nothing of it.
 * Its policy still gets every write-back and decides when the device does
 * the work; such a write costs a copy into the page cache, as without the
 * daemon - through the ring it went to the daemon's one thread first
 * (docs/results.md, the useless tier).
 */
static bool home_only(struct dfile *f, const struct dop *op)
{
	if (f->refs - f->nwb != 1 || !tiers_holds_nothing(f))
		return false;
	for (struct policy_list *l = f->ops.next; l != &f->ops; l = l->next) {
		const struct dop *o = pol_container_of(l, struct dop, flink);

		if (o != op && (o->s != op->s || (int32_t)(o->pos - op->pos) < 0) &&
		    o->op != IOSD_OP_READ && o->op != IOSD_OP_BARRIER && o->op != IOSD_OP_FSYNC &&
		    o->op != IOSD_OP_FDATASYNC && o->op != IOSD_OP_SYNC_RANGE)
			return false;
	}
	return true;
}

/*
 * A write its tier policy sends home as it is (POLICY_REQ_HOME, set at
 * submit): its data goes into the page cache now (tiers_write_now()), its
 * entry completes, and the request the policy holds becomes its
 * write-back - as on a device without a tier.  Otherwise such a write
 * completed only once the device had it, so a writer could run at most
 * its ring ahead of its device: large sequential writers on a device with
 * a useless tier advanced in lockstep, each finishing at the end (-31 %
 * per writer against noop; docs/results.md).  Not for a write a program
 * waits for (it is served as the policy serves those), nor beyond the
 * daemon's write-back limit.
 */
static void home_now(struct daemon *d, struct dop *op)
{
	struct dfile *f = op->reg->file;

	if (!(op->req.flags & POLICY_REQ_HOME) || (op->req.flags & POLICY_REQ_SYNC) ||
	    op->state != OP_QUEUED || (op->op != IOSD_OP_WRITE && op->op != IOSD_OP_APPEND) ||
	    d->wb_ops >= DAEMON_WB_OPS_MAX ||
	    !tiers_write_now(d, f, op->s->ring.data + op->data_off, op->foff, op->len))
		return;
	f->dev->bytes_written += op->len;
	f->dev->writes_home_cached++;
	op->result = (int64_t)op->len;
	op->r2_home = op->op == IOSD_OP_WRITE && home_only(f, op);
	op_answer(d, op);
	op->wb = true;
	op->reg = NULL;
	op->s = NULL;
	op->file = f;
	op->dirtied_ns = dnow();
	wb_track(d, f, op);
}

/*
 * env->home(): the policy will send req, a workload write it is submitting
 * or holds, home as it is.  The daemon takes it back: it becomes a write
 * into the page cache (run_taken(), once the policy's callback returned),
 * whose write-back reaches the policy later, at the kernel's moments
 * (cached()) - as on a device without a tier.  A write the policy kept has
 * its write-back at the policy from the start, which starts it while the
 * writers still write: with several large sequential writers their files
 * went to the device interleaved, each writer done near the end
 * (docs/results.md, the useless tier).  Not a write a program waits for
 * (the policy serves those), nor one over data a tier record holds
 * (tiers_home_write()).
 */
static bool env_home(struct policy_env *env, struct policy_req *req)
{
	struct ddev *dv = env_dev(env);
	struct daemon *d = dv->d;
	struct dop *op;

	if (!dv->tiers || req->engine_data != d ||
	    (req->flags & (POLICY_REQ_INTERNAL | POLICY_REQ_SYNC)) || req->op != POLICY_OP_WRITE)
		return false;
	op = pol_container_of(req, struct dop, req);
	if (op->wb || op->state != OP_QUEUED || !tiers_home_write(op->reg->file, op->foff, op->len))
		return false;
	op->taken = true;
	op->state = OP_ISSUED;   /* (the policy has it no more) */
	pol_list_add_tail(&d->taken, &op->blink);
	return true;
}

/* Writes taken back from their policies (env_home()) go into the page
 * cache, through io_uring as every write there; on_cqe() then hands them
 * to cached(). */
static void run_taken(struct daemon *d)
{
	while (!pol_list_empty(&d->taken)) {
		struct dop *op = pol_container_of(d->taken.next, struct dop, blink);
		int r;

		pol_list_del(&op->blink);
		op->reg->file->dev->writes_home_cached++;
		op->done = 0;
		r = op_submit_io(d, op);
		if (r < 0) {
			op->err = r;
			cached(d, op);
		}
	}
}

/* Hands a read or a write-back to its device's policy. */
static void to_policy(struct daemon *d, struct dop *op, bool waited)
{
	struct dfile *f = op_file(op);
	struct ddev *dv = f->dev;
	uint64_t now = dnow(), addr = extmap_addr(f, op->foff, now);
	int r;

	if (dv->info.capacity > op->len && addr > dv->info.capacity - op->len)
		addr = dv->info.capacity - op->len;
	op->req.id = ++d->req_id;
	op->req.offset = addr;
	op->req.len = op->len;
	op->req.arrival_ns = now;
	op->req.dev = 0;
	op->req.op = op->op == IOSD_OP_READ ? POLICY_OP_READ : POLICY_OP_WRITE;
	/* Reads are synchronous; so is anything a program already waits
	 * for (its own flag, or an op admitted later depends on it). */
	op->req.flags = op->op == IOSD_OP_READ || waited ? POLICY_REQ_SYNC : 0;
	op->state = OP_QUEUED;
	op->queued_ns = now;
	dv->requests++;
	dv->dirty = true;
	r = dv->pol->ops->submit(dv->pol, &op->req);
	if (r < 0) {
		op->result = r;
		engine_op_finish(d, op);
		return;
	}
	if (!op->wb && dv->tiers)
		home_now(d, op);
	/* The flag at submit is not enough for every policy (BID stages
	 * writes whatever their flags): a waited request is expedited. */
	if (waited && op->state == OP_QUEUED && dv->pol->ops->expedite) {
		dv->pol->ops->expedite(dv->pol, &op->req);
		dv->expedited++;
	}
}

/*
 * A write is in the page cache (or failed): its write-back is a new op of
 * its own, which holds the file (not the registration, which the client
 * may drop meanwhile); contiguous writes of one process extend one
 * write-back up to 4 MiB while it has not started.  It starts - goes to
 * the policy - when the daemon's dirty bytes pass wb_dirty_max or it is
 * wb_expire_ns old (wb_due()), or when the file is synced or closed
 * (wb_wait()), as the kernel starts its own write-back; the policy then
 * decides when the device does the work.  Then the write's entry
 * completes: its ring space is free and the file's next ops may go - they
 * see the page cache, as with plain I/O.
 */
static void cached(struct daemon *d, struct dop *op)
{
	struct dfile *f = op->reg->file;
	struct dop *wb = f->wb_open;

	/* A write taken back from its policy: the handle's next ones may be
	 * written by the client (IOSD_R2_HOME, home_only()). */
	if (op->taken)
		op->r2_home = op->op == IOSD_OP_WRITE && !op->err && home_only(f, op);
	op->result = op->err ? op->err : (int64_t)op->len;
	if (!op->err)
		f->dev->bytes_written += op->len;
	if (!op->err && wb && wb->foff + wb->len == op->foff && wb->req.stream == (uint32_t)op->s->pid &&
	    wb->len + op->len <= WB_RUN_MAX) {
		wb->len += op->len;
		d->wb_pending_bytes += op->len;
	} else if (!op->err && (wb = engine_op_new(d))) {
		/* (Out of memory: the kernel writes it back.) */
		wb->wb = true;
		wb->op = IOSD_OP_WRITE;
		wb->seq = ++d->op_seq;
		wb->foff = op->foff;
		wb->len = op->len;
		wb->file = f;
		wb->dirtied_ns = dnow();
		wb->req.hint_size = op->reg->size_per_io;
		wb->req.hint_pattern = op->reg->pattern;
		wb->req.stream = (uint32_t)op->s->pid;
		wb_track(d, f, wb);
		f->wb_open = wb;
		wb->state = OP_NEW;
		pol_list_add_tail(&d->wb_pending, &wb->blink);
		d->wb_npending++;
		d->wb_pending_bytes += wb->len;
	}
	engine_op_finish(d, op);
}

/* A write-back not started yet goes to its policy (waited: a program
 * waits for it, it is served as SYNC). */
static void wb_start(struct daemon *d, struct dop *wb, bool waited)
{
	struct dfile *f = wb->file;

	pol_list_del(&wb->blink);
	d->wb_npending--;
	d->wb_pending_bytes -= wb->len;
	if (f->wb_open == wb)
		f->wb_open = NULL;
	to_policy(d, wb, waited);
}

/* Starts every write-back of f not started yet; when waited, those at
 * the policy are expedited too. */
static void wb_start_file(struct daemon *d, struct dfile *f, bool waited)
{
	for (struct policy_list *l = f->wbs.next, *n; l != &f->wbs; l = n) {
		struct dop *o = pol_container_of(l, struct dop, flink);

		n = l->next;
		if (o->state == OP_NEW)
			wb_start(d, o, waited);
		else if (waited)
			expedite(f->dev, o);
	}
}

/* Write-backs whose time came: the oldest while the daemon's dirty bytes
 * are beyond the threshold (or its write-backs beyond half their limit),
 * those dirty for wb_expire_ns, and all of them when draining. */
static void wb_due(struct daemon *d, uint64_t now)
{
	while (!pol_list_empty(&d->wb_pending)) {
		struct dop *o = pol_container_of(d->wb_pending.next, struct dop, blink);

		if (!d->draining && d->wb_pending_bytes <= d->wb_dirty_max &&
		    d->wb_npending <= DAEMON_WB_OPS_MAX / 2 && now - o->dirtied_ns < d->wb_expire_ns)
			break;
		wb_start(d, o, d->draining);
	}
}

/*
 * fsync, fdatasync, sync_file_range(WRITE) and the last close (a HOME
 * barrier) start the file's write-backs, so that its policy orders the
 * device work they need; fsync, fdatasync, sync_file_range(WAIT_AFTER)
 * and the close also wait for those older than themselves (a write-back
 * error then reaches them, and the IORING_OP_FSYNC after it has only the
 * metadata and the device's cache left).  True when op now waits (in
 * f->wb_waiters; wb_finish() makes it ready again).
 */
static bool wb_wait(struct daemon *d, struct dfile *f, struct dop *op)
{
	bool start, wait;

	switch (op->op) {
	case IOSD_OP_FSYNC:
	case IOSD_OP_FDATASYNC:
		start = wait = true;
		break;
	case IOSD_OP_SYNC_RANGE:
		start = op->aux & SYNC_FILE_RANGE_WRITE;
		wait = op->aux & SYNC_FILE_RANGE_WAIT_AFTER;
		break;
	case IOSD_OP_BARRIER:
		start = wait = op->aux & IOSD_BARRIER_HOME;
		break;
	default:
		return false;
	}
	if (pol_list_empty(&f->wbs))
		return false;
	if (!op->wb_upto) {
		op->wb_upto = d->op_seq;
		if (start)
			wb_start_file(d, f, wait);
	}
	if (!wait || pol_list_empty(&f->wbs) ||
	    pol_container_of(f->wbs.next, struct dop, flink)->seq > op->wb_upto)
		return false;
	op->state = OP_BLOCKED;
	pol_list_add_tail(&f->wb_waiters, &op->blink);
	return true;
}

/* A write-back is done (on the device, or failed: the file's next fsync
 * or barrier reports it); the ops that waited for it may go on. */
static void wb_finish(struct daemon *d, struct dop *op)
{
	struct dfile *f = op->file;
	uint64_t oldest;

	if (op->err && !f->wb_err)
		f->wb_err = op->err;
	if (f->wb_open == op)
		f->wb_open = NULL;
	if (op->state == OP_NEW) {
		pol_list_del(&op->blink);   /* (never started: engine_fini) */
		d->wb_npending--;
		d->wb_pending_bytes -= op->len;
	}
	pol_list_del(&op->slink);
	pol_list_del(&op->flink);
	f->nwb--;
	d->wb_ops--;
	oldest = pol_list_empty(&f->wbs) ? UINT64_MAX :
		 pol_container_of(f->wbs.next, struct dop, flink)->seq;
	for (struct policy_list *l = f->wb_waiters.next, *n; l != &f->wb_waiters; l = n) {
		struct dop *w = pol_container_of(l, struct dop, blink);

		n = l->next;
		if (w->wb_upto < oldest) {
			pol_list_del(&w->blink);
			w->state = OP_READY;
			pol_list_add_tail(&d->ready, &w->blink);
		}
	}
	engine_file_put(d, f);
	engine_op_free(d, op);
}

/*
 * A truncate or fallocate of f was done: where its data lies, and what its
 * tiers hold of it, is of the file as it was.  If it failed, the end its
 * admission assumed is not the file's: the file's size as the kernel has
 * it (the op was a barrier: every op before it is done, none after it
 * started), or past it the end of a write admitted since.  (An append
 * admitted since took its offset from the assumed end already.)
 */
static void reshaped(struct dop *op)
{
	struct dfile *f = op->reg->file;
	struct stat st;

	extmap_invalidate(&f->map);
	tiers_file_reshaped(f);
	if (op->result >= 0 || fstat(f->fd, &st) < 0)
		return;
	f->logical_end = (uint64_t)st.st_size;
	for (struct policy_list *l = f->ops.next; l != &f->ops; l = l->next) {
		const struct dop *o = pol_container_of(l, struct dop, flink);

		if (o->seq > op->seq && (o->op == IOSD_OP_WRITE || o->op == IOSD_OP_APPEND) &&
		    o->foff + o->len > f->logical_end)
			f->logical_end = o->foff + o->len;
	}
}

/* Starts an op whose turn came. */
static void start(struct daemon *d, struct dop *op)
{
	struct dfile *f = op_file(op);
	int r;

	if (wb_wait(d, f, op))
		return;
	/* A file with tier data: an fsync, a closing barrier, a truncate
	 * or fallocate need its data durable or home first. */
	if (f->tier && tiers_prestart(d, op))
		return;
	switch (op->op) {
	case IOSD_OP_WRITE:
	case IOSD_OP_APPEND:
	case IOSD_OP_READ:
		/* A write on a tiered device goes to its policy with its data;
		 * elsewhere into the page cache, below. */
		if (op->op != IOSD_OP_READ && !write_via_policy(op))
			break;
		op->req.hint_size = op->reg->size_per_io;
		op->req.hint_pattern = op->reg->pattern;
		op->req.stream = (uint32_t)op->s->pid;
		to_policy(d, op, (op->flags & IOSD_EF_WAITED) || op->seq <= f->waited_dep);
		return;
	case IOSD_OP_BARRIER:
		op->result = 0;
		engine_op_finish(d, op);
		return;
	case IOSD_OP_TRUNCATE:
		f->home_mods++;
		op->result = ftruncate(op->reg->fd, (off_t)op->foff) < 0 ? -errno : 0;
		reshaped(op);
		engine_op_finish(d, op);
		return;
	default:
		break;
	}
	/* Writes into the page cache, fsync, sync_file_range, fallocate:
	 * through io_uring at once. */
	op->state = OP_ISSUED;
	op->done = 0;
	r = op_submit_io(d, op);
	if (r < 0) {
		op->result = r;
		engine_op_finish(d, op);
	}
}

void engine_op_continue(struct daemon *d, struct dop *op)
{
	start(d, op);
}

/* Requests whose issue failed complete now, outside dispatch(). */
static void run_failed(struct daemon *d)
{
	while (!pol_list_empty(&d->failed)) {
		struct dop *op = pol_container_of(d->failed.next, struct dop, blink);

		pol_list_del(&op->blink);
		member_done(d, op);
	}
}

static void run_ready(struct daemon *d)
{
	while (!pol_list_empty(&d->ready)) {
		struct dop *op = pol_container_of(d->ready.next, struct dop, blink);

		pol_list_del(&op->blink);
		start(d, op);
	}
}

/* ------------------------------------------------------------------------
 * completions
 * ---------------------------------------------------------------------- */

static void on_cqe(struct daemon *d, const struct io_uring_cqe *cqe)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);
	struct dop *op = (struct dop *)(uintptr_t)(ud & ~7ull);
	unsigned tag = (unsigned)(ud & 7);
	int res = cqe->res;

	if (tag == TAG_PROBE || !op)
		return;
	if (tag >= TIERS_TAG_MIN && tag <= TIERS_TAG_MAX) {
		tiers_cqe(d, (void *)(uintptr_t)ud, res);
		return;
	}
	if (tag == TAG_GROUP || tag == TAG_GSYNC) {
		on_group_cqe(d, (struct dgroup *)(void *)op, tag, res);
		return;
	}
	op->cqes--;
	if (op->wb) {
		if (res < 0 && res != -ECANCELED && !op->err)
			op->err = res;   /* write-back failed: the kernel's EIO/ENOSPC */
		member_done(d, op);
		return;
	}
	if (is_write_op(op->op) && write_via_policy(op)) {
		/* Issued by its policy: the WRITE and its linked sync. */
		if (tag == TAG_IO) {
			if (res < 0 && !op->err)
				op->err = res;
			else if (res >= 0)
				op->done += (uint64_t)res;
		} else if (res < 0 && res != -ECANCELED && !op->err) {
			op->err = res;   /* write-back failed: the kernel's EIO/ENOSPC */
		}
		if (op->cqes)
			return;
		if (!op->err && op->done < op->len) {
			/* Short write: the link broke before the sync; go on with
			 * the rest (no progress at all is an error). */
			if (res == 0 && tag == TAG_IO)
				op->err = -EIO;
			else if (op_submit_io(d, op) == 0)
				return;
			else
				op->err = -EIO;
		}
		member_done(d, op);
		return;
	}
	if (is_write_op(op->op)) {
		/* Into the page cache. */
		if (res < 0)
			op->err = res;
		else
			op->done += (uint64_t)res;
		if (!op->err && op->done < op->len) {
			/* Short write: go on with the rest (no progress at all is
			 * an error). */
			if (res > 0 && op_submit_io(d, op) == 0)
				return;
			op->err = -EIO;
		}
		cached(d, op);
		return;
	}
	if (op->cqes)
		return;
	if (op->op == IOSD_OP_READ) {
		if (res < 0)
			op->err = res;
		else
			op->done = (uint64_t)res;
		member_done(d, op);
		return;
	}
	op->result = res;
	if (op->op == IOSD_OP_FALLOCATE)
		reshaped(op);
	engine_op_finish(d, op);
}

static void reap_cqes(struct daemon *d)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	io_uring_for_each_cqe(&d->uring, head, cqe) {
		on_cqe(d, cqe);
		n++;
	}
	io_uring_cq_advance(&d->uring, n);
}

/* ------------------------------------------------------------------------
 * set-up
 * ---------------------------------------------------------------------- */

/* Whether io_uring writes take RWF_NOAPPEND (they must, to write an
 * O_APPEND file at the offsets the daemon assigned): a write at offset 0
 * into an O_APPEND memfd that already holds 4 bytes must land at 0. */
static bool probe_noappend(struct daemon *d)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	char path[64], back[4] = { 0 };
	bool ok = false;
	struct stat st;
	int mfd, fd;

	mfd = memfd_create("iosigd-probe", MFD_CLOEXEC);
	if (mfd < 0)
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		goto out_mfd;
	if (write(fd, "abcd", 4) != 4)
		goto out_fd;
	sqe = io_uring_get_sqe(&d->uring);
	if (!sqe)
		goto out_fd;
	io_uring_prep_write(sqe, fd, "xy", 2, 0);
	sqe->rw_flags = RWF_NOAPPEND;
	io_uring_sqe_set_data64(sqe, TAG_PROBE);
	if (io_uring_submit_and_wait(&d->uring, 1) < 1 || io_uring_wait_cqe(&d->uring, &cqe) < 0)
		goto out_fd;
	ok = cqe->res == 2;
	io_uring_cqe_seen(&d->uring, cqe);
	ok = ok && fstat(fd, &st) == 0 && st.st_size == 4 && pread(mfd, back, 4, 0) == 4 &&
	     !memcmp(back, "xycd", 4);
out_fd:
	close(fd);
out_mfd:
	close(mfd);
	return ok;
}

/* A descriptor the loop watches (fd < 0: its creation failed): stored
 * in *ret_fd, or closed on failure.  0 or -errno. */
static int watch_new(struct daemon *d, int fd, int *ret_fd, struct dwatch *w, enum dwatch_kind kind)
{
	int r;

	if (fd < 0)
		return -errno;
	*w = (struct dwatch){ .kind = kind };
	r = engine_watch(d, fd, w, EPOLLIN);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* A number from a /proc/sys file, or `dflt`. */
static uint64_t sysctl_u64(const char *path, uint64_t dflt)
{
	unsigned long long v;
	FILE *fp = fopen(path, "re");
	int n;

	if (!fp)
		return dflt;
	n = fscanf(fp, "%llu", &v);
	fclose(fp);
	return n == 1 ? (uint64_t)v : dflt;
}

/* MemAvailable in bytes, or 0. */
static uint64_t mem_available(void)
{
	unsigned long long kib = 0;
	char line[256];
	FILE *fp = fopen("/proc/meminfo", "re");

	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(fp);
	return (uint64_t)kib << 10;
}

/*
 * When write-backs start (docs/daemon.md "Write-back"): the configuration's
 * `writeback:`, else half of what the kernel's flusher waits for - dirty
 * bytes of vm.dirty_background_bytes, or vm.dirty_background_ratio percent
 * of the available memory (at least 16 MiB), and half of
 * vm.dirty_expire_centisecs - so that the policy, not the flusher, orders
 * the device work, but none is done much earlier than without the daemon.
 */
static void wb_limits(struct daemon *d)
{
	uint64_t bytes = sysctl_u64("/proc/sys/vm/dirty_background_bytes", 0);
	uint64_t cs = sysctl_u64("/proc/sys/vm/dirty_expire_centisecs", 3000);

	if (!bytes)
		bytes = mem_available() / 100 * sysctl_u64("/proc/sys/vm/dirty_background_ratio", 10);
	bytes /= 2;
	if (bytes < (16ull << 20))
		bytes = 16ull << 20;
	if (!cs)
		cs = 3000;
	d->wb_dirty_max = d->cfg.writeback.dirty ? d->cfg.writeback.dirty : bytes;
	d->wb_expire_ns = d->cfg.writeback.expire_ns ? d->cfg.writeback.expire_ns :
			  cs * (POLICY_NS_PER_S / 100) / 2;
	dlog(DLOG_INFO, "write-back: a policy gets dirty data beyond %" PRIu64 " MiB or after %.1f s%s",
	     d->wb_dirty_max >> 20, (double)d->wb_expire_ns / 1e9,
	     d->cfg.writeback.dirty || d->cfg.writeback.expire_ns ? " (configured)" : "");
}

int engine_init(struct daemon *d)
{
	struct io_uring_params p = { .flags = IORING_SETUP_CQSIZE, .cq_entries = 4 * URING_ENTRIES };
	sigset_t mask;
	int r;

	pol_list_init(&d->sessions);
	pol_list_init(&d->devs);
	pol_list_init(&d->files);
	pol_list_init(&d->ready);
	pol_list_init(&d->failed);
	pol_list_init(&d->taken);
	pol_list_init(&d->free_ops);
	pol_list_init(&d->writeback);
	pol_list_init(&d->wb_pending);
	wb_limits(d);
	d->listen_fd = d->timer_fd = d->signal_fd = -1;
	d->timer_armed = UINT64_MAX;
	d->start_ns = dnow();
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0) {
		r = -errno;
		dlog(DLOG_ERR, "epoll_create1: %s", strerror(-r));
		return r;
	}
	r = io_uring_queue_init_params(URING_ENTRIES, &d->uring, &p);
	if (r < 0) {
		dlog(DLOG_ERR, "io_uring_queue_init: %s (io_uring disabled? see /proc/sys/kernel/io_uring_disabled)",
		     strerror(-r));
		goto out_epoll;
	}
	d->noappend = probe_noappend(d);
	if (!d->noappend)
		dlog(DLOG_INFO, "this kernel has no RWF_NOAPPEND: descriptors opened with O_APPEND stay plain");
	d->wuring = (struct dwatch){ .kind = DW_URING };
	r = engine_watch(d, d->uring.ring_fd, &d->wuring, EPOLLIN);
	if (r < 0)
		goto out_uring;
	r = watch_new(d, timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK), &d->timer_fd,
		      &d->wtimer, DW_TIMER);
	if (r < 0)
		goto out_uring;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = watch_new(d, signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK), &d->signal_fd, &d->wsignal,
		      DW_SIGNAL);
	if (r < 0)
		goto out_timer;
	return 0;

out_timer:
	close(d->timer_fd);
out_uring:
	io_uring_queue_exit(&d->uring);
out_epoll:
	close(d->epfd);
	dlog(DLOG_ERR, "cannot set up the event loop: %s", strerror(-r));
	return r;
}

void engine_fini(struct daemon *d)
{
	while (!pol_list_empty(&d->sessions))
		session_free(d, pol_container_of(d->sessions.next, struct dsession, link));
	while (!pol_list_empty(&d->files))
		engine_file_destroy(d, pol_container_of(d->files.next, struct dfile, link));
	while (!pol_list_empty(&d->devs)) {
		struct ddev *dv = pol_container_of(d->devs.next, struct ddev, link);

		pol_list_del(&dv->link);
		policy_destroy(dv->pol);
		tiers_device_free(d, dv);
		pol_hist_free(&dv->lat);
		free(dv);
	}
	/* Write-backs: after the policies, which may hold them (their files
	 * went above). */
	while (!pol_list_empty(&d->writeback)) {
		struct dop *op = pol_container_of(d->writeback.next, struct dop, slink);

		pol_list_del(&op->slink);
		free(op);
	}
	tiers_close(d);
	while (!pol_list_empty(&d->free_ops)) {
		struct dop *op = pol_container_of(d->free_ops.next, struct dop, blink);

		pol_list_del(&op->blink);
		free(op);
	}
	listener_close(d);
	device_fini(d);
	io_uring_queue_exit(&d->uring);
	close(d->signal_fd);
	close(d->timer_fd);
	close(d->epfd);
}

/* ------------------------------------------------------------------------
 * the loop
 * ---------------------------------------------------------------------- */

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			dlog(DLOG_INFO, "SIGHUP: reloading the configuration is not supported; restart iosigd");
			continue;
		}
		if (d->draining)
			continue;
		dlog(DLOG_INFO, "%s: finishing what clients queued, then exiting",
		     si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
		d->draining = true;
		sysd_stopping(d);
		listener_close(d);
		/* Ingest up to what is published now; what comes later the
		 * clients write themselves once the session closes. */
		for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next) {
			struct dsession *s = pol_container_of(l, struct dsession, link);

			if (s->version && !s->capped) {
				s->capped = true;
				s->cap_tail = atomic_load_explicit(&s->ring.hdr->sq_tail,
								   memory_order_acquire);
			}
		}
	}
}

static void ticks_due(struct daemon *d, uint64_t now)
{
	for (struct policy_list *l = d->devs.next; l != &d->devs; l = l->next) {
		struct ddev *dv = pol_container_of(l, struct ddev, link);

		if (dv->wake <= now) {
			dv->wake = UINT64_MAX;
			dv->pol->ops->tick(dv->pol);
			dv->dirty = true;
		}
	}
}

static void arm_timer(struct daemon *d)
{
	uint64_t when = UINT64_MAX;
	struct itimerspec its = { 0 };

	for (struct policy_list *l = d->devs.next; l != &d->devs; l = l->next) {
		struct ddev *dv = pol_container_of(l, struct ddev, link);

		if (dv->wake < when)
			when = dv->wake;
	}
	if (!pol_list_empty(&d->wb_pending)) {
		const struct dop *o = pol_container_of(d->wb_pending.next, struct dop, blink);

		if (o->dirtied_ns + d->wb_expire_ns < when)
			when = o->dirtied_ns + d->wb_expire_ns;
	}
	if (when == d->timer_armed)
		return;
	d->timer_armed = when;
	if (when != UINT64_MAX) {
		if (!when)
			when = 1;   /* 0 would disarm */
		its.it_value.tv_sec = (time_t)(when / POLICY_NS_PER_S);
		its.it_value.tv_nsec = (long)(when % POLICY_NS_PER_S);
	}
	timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* One ingest round over every session (see the head of the file). */
static void ingest(struct daemon *d)
{
	struct policy_list round;
	bool waited = false;

	pol_list_init(&round);
	for (int pass = 0; pass < 2; pass++) {
		for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next)
			session_ingest(d, pol_container_of(l, struct dsession, link), &round, &waited);
		if (!waited)
			break;
	}
	engine_ops_admit(d, &round);
}

/* Sessions whose client waits for ring space get their held ops
 * expedited, once per wait. */
static void space_waits(struct daemon *d)
{
	for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next) {
		struct dsession *s = pol_container_of(l, struct dsession, link);
		bool waits;

		if (!s->version)
			continue;
		waits = atomic_load_explicit(&s->ring.hdr->space_waiters, memory_order_acquire) != 0;
		if (waits && !s->space_expedited)
			engine_session_expedite(d, s);
		s->space_expedited = waits;
	}
}

static void expedite_all(struct daemon *d)
{
	for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next)
		engine_session_expedite(d, pol_container_of(l, struct dsession, link));
	for (struct policy_list *l = d->writeback.next; l != &d->writeback; l = l->next) {
		struct dop *o = pol_container_of(l, struct dop, slink);

		expedite(o->file->dev, o);
	}
}

/* True when the daemon may sleep: every ring set NEED_WAKEUP with nothing
 * new behind it. */
static bool prepare_sleep(struct daemon *d)
{
	if (!pol_list_empty(&d->ready) || !pol_list_empty(&d->failed) || !pol_list_empty(&d->taken) ||
	    io_uring_cq_ready(&d->uring) ||
	    !tiers_idle(d))
		return false;
	/* A completion after the dispatch (tiers_run()) made a device's
	 * dispatch due. */
	for (struct policy_list *l = d->devs.next; l != &d->devs; l = l->next)
		if (pol_container_of(l, struct ddev, link)->dirty)
			return false;
	for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next) {
		struct dsession *s = pol_container_of(l, struct dsession, link);

		if (!s->version || s->dead)
			continue;
		if (s->capped) {
			if (s->head != s->cap_tail && session_may_ingest(d, s))
				return false;
			continue;
		}
		if (iosd_ring_sleep_prepare(&s->ring, s->head)) {
			if (session_may_ingest(d, s))
				return false;
		} else {
			s->sleeping = true;
		}
	}
	return true;
}

static void wake_rings(struct daemon *d)
{
	for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next) {
		struct dsession *s = pol_container_of(l, struct dsession, link);

		if (s->sleeping) {
			iosd_ring_awake(&s->ring);
			s->sleeping = false;
		}
	}
}

/* Draining: done when every session has ingested up to its cap and has
 * nothing outstanding, and every write-back is done. */
static bool drained(struct daemon *d)
{
	if (d->wb_ops)
		return false;
	for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next) {
		struct dsession *s = pol_container_of(l, struct dsession, link);

		if (s->outstanding || (s->version && !s->dead && s->head != s->cap_tail))
			return false;
	}
	return true;
}

int engine_run(struct daemon *d)
{
	struct epoll_event evs[64];

	for (;;) {
		int n, timeout = prepare_sleep(d) ? -1 : 0;

		/* Drained: then the tiers' data goes home (tiers_shutdown()). */
		if (d->draining && drained(d) && tiers_shutdown(d))
			break;
		n = epoll_wait(d->epfd, evs, 64, timeout);
		wake_rings(d);
		if (n < 0 && errno != EINTR) {
			dlog(DLOG_ERR, "epoll_wait: %s", strerror(errno));
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			struct dwatch *w = evs[i].data.ptr;
			uint64_t v;

			switch (w->kind) {
			case DW_LISTEN:
				listener_accept(d);
				break;
			case DW_SOCK:
				session_on_sock(d, w->obj, evs[i].events);
				break;
			case DW_KICK:
				if (read(((struct dsession *)w->obj)->kick_fd, &v, sizeof(v)) < 0 &&
				    errno != EAGAIN)
					session_fail(d, w->obj, -EIO, "cannot read the kick eventfd");
				break;
			case DW_TIMER:
				if (read(d->timer_fd, &v, sizeof(v)) < 0)
					v = 0;
				d->timer_armed = UINT64_MAX;
				break;
			case DW_SIGNAL:
				on_signal(d);
				break;
			case DW_URING:
				break;
			}
		}
		reap_cqes(d);
		ticks_due(d, dnow());
		ingest(d);
		run_ready(d);
		wb_due(d, dnow());
		space_waits(d);
		if (d->draining)
			expedite_all(d);
		for (struct policy_list *l = d->devs.next; l != &d->devs; l = l->next) {
			struct ddev *dv = pol_container_of(l, struct ddev, link);

			if (dv->dirty) {
				dv->dirty = false;
				dv->pol->ops->dispatch(dv->pol);
			}
		}
		run_failed(d);
		tiers_run(d);
		run_taken(d);
		/* A dispatch may have finished ops (refusals) and made others
		 * ready; they start in the next turn, which comes at once. */
		if (d->uring_pending) {
			io_uring_submit(&d->uring);
			d->uring_pending = 0;
		}
		for (struct policy_list *l = d->sessions.next, *nx; l != &d->sessions; l = nx) {
			struct dsession *s = pol_container_of(l, struct dsession, link);

			nx = l->next;
			if (s->notify) {
				s->notify = false;
				iosd_ring_notify(&s->ring);
			}
			session_reap(d, s);
		}
		arm_timer(d);
	}
	/* Every byte of every file is home: clients need not wait for a
	 * recovery when they take over. */
	for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next) {
		struct dsession *s = pol_container_of(l, struct dsession, link);

		if (s->version)
			atomic_fetch_or_explicit(&s->ring.hdr->flags, IOSD_RING_HOME,
						 memory_order_release);
	}
	dlog(DLOG_INFO, "drained: %" PRIu64 " operations done; exiting", d->ops_total);
	return 0;
}
