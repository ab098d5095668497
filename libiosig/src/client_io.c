/* SPDX-License-Identifier: MIT */
/*
 * client_io.c - what an interposed call does on a descriptor the daemon
 * handles (docs/daemon.md "Semantics"): the struct cl_ops the interposers
 * call.
 *
 *   write/pwrite(v)   copied into the ring and published; returns at once.
 *                     write() reserves its range with lseek(n, SEEK_CUR)
 *                     so descriptors shared by dup or fork keep one
 *                     position; O_APPEND writes are placed by the daemon
 *                     and write() waits for the offset to set the position
 *   read/pread(v)     through the ring (the daemon orders it after every
 *                     overlapping write, from any process), copied out
 *   fsync/fdatasync   wait for every earlier write, then the sync; a write
 *   sync_file_range   error not reported yet is returned here
 *   ftruncate         after every earlier operation of the file
 *   fallocate
 *   barrier           fstat, lseek(SEEK_END/DATA/HOLE), unlocking
 *   release           close and dup2 onto it: the last descriptor of the
 *                     file waits for its writes, then unregisters
 *   detach            mmap, O_DIRECT, sendfile...: barrier, then plain
 * Writes larger than the ring allows in one entry go in pieces.  When the
 * session dies in the middle, what was published is written by the
 * take-over and the rest of the call is done plainly here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "client_internal.h"

static size_t iov_total(const struct iovec *iov, int cnt, bool *ret_bad)
{
	size_t total = 0;

	*ret_bad = cnt < 0 || cnt > IOV_MAX;
	for (int i = 0; !*ret_bad && i < cnt; i++) {
		if (iov[i].iov_len > (size_t)SSIZE_MAX - total)
			*ret_bad = true;
		else
			total += iov[i].iov_len;
	}
	return total;
}

/* Copies n bytes starting `skip` bytes into the iovecs to/from buf. */
static void iov_copy(const struct iovec *iov, int cnt, size_t skip, void *buf, size_t n,
		     bool to_iov)
{
	char *p = buf;

	for (int i = 0; i < cnt && n; i++) {
		size_t len = iov[i].iov_len, k;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		k = len - skip < n ? len - skip : n;
		if (to_iov)
			memcpy((char *)iov[i].iov_base + skip, p, k);
		else
			memcpy(p, (const char *)iov[i].iov_base + skip, k);
		p += k;
		n -= k;
		skip = 0;
	}
}

/* The rest of a call done plainly (the session died under it): iovecs
 * from `skip` bytes on, at off (-1: at the position / append). */
static ssize_t plain_rest(int fd, const struct iovec *iov, int cnt, size_t skip, off_t off,
			  bool write)
{
	struct iovec v[64];
	int n = 0;

	for (int i = 0; i < cnt && n < 64; i++) {
		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		v[n].iov_base = (char *)iov[i].iov_base + skip;
		v[n].iov_len = iov[i].iov_len - skip;
		skip = 0;
		n++;
	}
	if (!n)
		return 0;
	if (off >= 0 && n == 1)
		return syscall(write ? SYS_pwrite64 : SYS_pread64, fd, v[0].iov_base, v[0].iov_len, (long)off);
	if (off < 0)
		return syscall(write ? SYS_writev : SYS_readv, fd, v, n);
	return syscall(write ? SYS_pwritev : SYS_preadv, fd, v, n, (long)off, 0L);
}

/*
 * Enters a call on fd: its file and live session with references taken
 * and the lock held, or NULL (lock not held) for a plain call: not ours
 * any more, our own descriptor, the daemon gone, or a vfork child running
 * in our memory.
 */
static struct cl_file *enter(void *fv, int fd)
{
	struct cl_file *f;

	if (fv == CL_INTERNAL)
		return NULL;
	cl_lock();
	f = C.host->get(fd);
	if (!f || f == CL_INTERNAL || f->gone || f->s->dead || f->s->pid != getpid()) {
		cl_unlock();
		return NULL;
	}
	f->refs++;
	f->s->users++;
	return f;
}

static void leave(struct cl_file *f)
{
	struct cl_session *s = f->s;

	cl_file_put(f);
	cl_session_put(s);
	cl_unlock();
}

/* Records the errors of f's writes published before pos (they are done:
 * pos waited for them) that reclaim has not seen yet. */
static void collect_errors(struct cl_session *s, struct cl_file *f, uint32_t pos)
{
	for (uint32_t p = s->prod.reclaim; p != pos; p++) {
		const struct iosd_entry *e = iosd_ring_entry(&s->ring, p);

		if (e->handle == f->handle && (e->op == IOSD_OP_WRITE || e->op == IOSD_OP_APPEND) &&
		    iosd_entry_state(e) == IOSD_ST_DONE && e->result < 0 && !f->err)
			f->err = (int)-e->result;
	}
	cl_reclaim(s);
}

/* Publishes one waited entry of f and waits for it (lock held on entry
 * and exit).  Returns its result, or -ENOTCONN when the session was dead
 * before it could be published. */
static int64_t round_trip(struct cl_file *f, uint16_t op, uint64_t off, uint64_t len, uint32_t aux,
			  uint32_t *ret_pos)
{
	struct cl_session *s = f->s;
	struct iosd_entry *e;
	uint64_t doff;
	uint32_t pos;
	int64_t res;
	int r = cl_reserve(s, 0, &e, &doff);

	if (r < 0)
		return r;
	e->op = op;
	e->flags = IOSD_EF_WAITED;
	e->handle = f->handle;
	e->offset = off;
	e->length = len;
	e->data_off = 0;
	e->aux = aux;
	pos = cl_publish(s, true);
	cl_unlock();
	cl_wait(s, pos, IOSD_ST_DONE);
	cl_lock();
	res = iosd_ring_entry(&s->ring, pos)->result;
	cl_release_entry(s, pos);
	if (ret_pos)
		*ret_pos = pos;
	return res;
}

/* Whether a write, truncate or fallocate this process published is not
 * done yet: a write done here directly could be overtaken by it.  The scan
 * resumes where the last one stopped (s->change_scan: every entry before
 * it is no change, or a done one, which stays done until reclaimed), so a
 * stream of large writes costs one look per entry, not a walk of every
 * entry not reclaimed yet at each call. */
static bool change_pending(struct cl_session *s)
{
	uint32_t p = s->change_scan;

	if ((int32_t)(p - s->prod.reclaim) < 0)
		p = s->prod.reclaim;
	for (; p != s->prod.tail; p++) {
		const struct iosd_entry *e = iosd_ring_entry(&s->ring, p);

		if ((e->op == IOSD_OP_WRITE || e->op == IOSD_OP_APPEND || e->op == IOSD_OP_TRUNCATE ||
		     e->op == IOSD_OP_FALLOCATE) && iosd_entry_state(e) != IOSD_ST_DONE)
			break;
	}
	s->change_scan = p;
	return p != s->prod.tail;
}

/*
 * Whether a large write of tiered f may go into the page cache here: the
 * newest of f's writes said IOSD_R2_HOME, and nothing of the process but
 * f's own WRITTEN entries is pending (done entries of other files wait to
 * be reclaimed behind pending ones: no matter).  f->home is the newest reclaimed
 * write's (note_done() in client.c); the entries not reclaimed yet are looked at
 * here, in ring order, as the daemon does (session_op_done()).  Its writes
 * are published faster than the daemon completes them, so one is nearly
 * always pending: while the grant stands and what is pending is f's own
 * writes (their policy sends them home at once: a short wait), the call
 * waits for them; behind anything else it goes through the ring.  Lock
 * held, released while waiting.
 */
static bool home_settled(struct cl_session *s, struct cl_file *f)
{
	for (;;) {
		uint32_t seen = iosd_ring_cq_seq(&s->ring), mine = s->prod.tail - f->since;
		bool home, pending = false;

		cl_reclaim(s);
		home = f->home;
		for (uint32_t p = s->prod.reclaim; p != s->prod.tail; p++) {
			const struct iosd_entry *e = iosd_ring_entry(&s->ring, p);
			bool done = iosd_entry_state(e) == IOSD_ST_DONE;

			if (e->handle != f->handle || p - f->since >= mine) {
				if (!done)
					return false;   /* another file's, or another registration's */
			} else if (e->op == IOSD_OP_WRITE && !done) {
				pending = true;
			} else if (e->op == IOSD_OP_WRITE || e->op == IOSD_OP_APPEND) {
				home = e->op == IOSD_OP_WRITE && e->result >= 0 && (e->result2 & IOSD_R2_HOME);
			} else if (e->op != IOSD_OP_WRITTEN && !done) {
				return false;
			}
		}
		if (s->dead || f->gone || !home)
			return false;   /* (no grant yet: a wait would hold the writer) */
		if (!pending)
			return true;
		cl_unlock();
		cl_wait_seq(s, seen);
		cl_lock();
	}
}

/*
 * home_settled(), the ring not shared (looked at after the wait: another
 * process may have registered a file of ours meanwhile), and the WRITTEN
 * entry reserved before the write: no entry of another thread (a write of
 * the handle that goes to the tier) can come between the data and its
 * entry in ring order, which the daemon takes for their order.  One entry:
 * at most IOSD_WRITTEN_MAX.
 */
static bool direct_home(struct cl_session *s, struct cl_file *f, size_t total,
			struct iosd_entry **ret_entry)
{
	uint64_t doff;

	return total <= IOSD_WRITTEN_MAX && home_settled(s, f) &&
	       !(atomic_load_explicit(&s->ring.hdr->flags, memory_order_acquire) & IOSD_RING_SHARED) &&
	       iosd_prod_reserve(&s->prod, 0, ret_entry, &doff) == 0;
}

/*
 * A large write at a known offset with nothing of ours pending that it
 * could overtake: the call itself puts the data into the page cache (one
 * copy, as a plain write), then a WRITTEN entry hands its write-back to
 * the daemon (pre: its entry, reserved already - direct_home(); a failed
 * write publishes it as a BARRIER, which changes nothing).  Returns what
 * write() returns (errno set on -1).
 */
static ssize_t write_direct(struct cl_file *f, int fd, const struct iovec *iov, int cnt, off_t off,
			    enum cl_kind kind, size_t total, struct iosd_entry *pre)
{
	struct cl_session *s = f->s;
	ssize_t r = plain_rest(fd, iov, cnt, 0, off, true);
	int saved = errno;

	if (pre && r <= 0) {
		pre->op = IOSD_OP_BARRIER;
		pre->offset = 0;
		pre->length = 0;
		pre->data_off = 0;
		pre->flags = 0;
		pre->handle = f->handle;
		pre->aux = 0;
		cl_publish_lazy(s, 0);
	}
	for (uint64_t done = 0; r > 0 && done < (uint64_t)r;) {
		uint64_t n = (uint64_t)r - done < IOSD_WRITTEN_MAX ? (uint64_t)r - done : IOSD_WRITTEN_MAX;
		struct iosd_entry *e = pre;
		uint64_t doff;

		pre = NULL;
		if (!e && cl_reserve(s, 0, &e, &doff) < 0)
			break;   /* the session died: the data is in the file */
		e->op = IOSD_OP_WRITTEN;
		e->flags = 0;
		e->handle = f->handle;
		e->offset = (uint64_t)off + done;
		e->length = n;
		e->data_off = 0;
		e->aux = 0;
		cl_publish_lazy(s, n);
		done += n;
	}
	/* The position was reserved for all of it. */
	if (kind == CL_AT_POS && (r < 0 || (size_t)r < total))
		syscall(SYS_lseek, fd, (long)(off + (r > 0 ? r : 0)), SEEK_SET);
	errno = saved;
	return r;
}

static bool op_write(void *fv, int fd, const struct iovec *iov, int cnt, off_t off,
		     enum cl_kind kind, ssize_t *ret)
{
	struct cl_file *f;
	struct cl_session *s;
	struct iosd_entry *pre = NULL;
	bool bad, append, waited;
	size_t total = iov_total(iov, cnt, &bad), done = 0, chunk;
	uint64_t max;
	uint32_t pos = 0;

	if (bad || !total || (kind == CL_AT_OFF && off < 0))
		return false;   /* the kernel's answer (EINVAL, 0) */
	f = enter(fv, fd);
	if (!f)
		return false;
	if ((f->flags & O_ACCMODE) == O_RDONLY) {
		leave(f);
		return false;   /* EBADF from the kernel */
	}
	s = f->s;
	append = f->flags & O_APPEND;
	waited = append && kind == CL_AT_POS;
	if (!append && kind == CL_AT_POS) {
		/* Reserve the range: one position for every descriptor of it. */
		off_t end = (off_t)syscall(SYS_lseek, fd, (long)total, SEEK_CUR);

		if (end < 0) {
			*ret = -1;
			leave(f);
			return true;
		}
		off = end - (off_t)total;
	}
	/* (Not on a tiered device, where the policy places every write -
	 * unless the daemon said that the handle's writes go home as they
	 * are (IOSD_R2_HOME, looked at by change_pending()); nor when another
	 * process has one of our files registered: a write of its it told us
	 * about may still be in its ring.) */
	if (!append && total >= IOSD_WRITTEN_MIN && cnt <= 64 &&
	    (f->tiered ? direct_home(s, f, total, &pre) :
			 !(atomic_load_explicit(&s->ring.hdr->flags, memory_order_acquire) &
			   IOSD_RING_SHARED) && !change_pending(s))) {
		ssize_t r = write_direct(f, fd, iov, cnt, off, kind, total, pre);
		int saved = errno;

		leave(f);
		errno = saved;
		*ret = r;
		return true;
	}
	max = iosd_ring_max_io(s->ring.data_bytes);
	while (done < total) {
		struct iosd_entry *e;
		uint64_t doff;

		chunk = total - done < max ? total - done : (size_t)max;
		if (cl_reserve(s, chunk, &e, &doff) < 0) {
			/* The session died: what was published is written;
			 * the rest plainly, where it belongs. */
			ssize_t r = plain_rest(fd, iov, cnt, done, append ? -1 : off + (off_t)done, true);

			leave(f);
			*ret = r < 0 ? (done ? (ssize_t)done : -1) : (ssize_t)(done + (size_t)r);
			return true;
		}
		iov_copy(iov, cnt, done, s->ring.data + doff, chunk, false);
		e->op = append ? IOSD_OP_APPEND : IOSD_OP_WRITE;
		e->offset = append ? 0 : (uint64_t)off + done;
		e->length = chunk;
		e->data_off = doff;
		e->handle = f->handle;
		e->aux = 0;
		/* write() on O_APPEND waits for the place of its last piece. */
		e->flags = waited && done + chunk == total ? IOSD_EF_WAITED : 0;
		pos = cl_publish(s, e->flags != 0);
		done += chunk;
	}
	if (waited) {
		struct iosd_entry *e = iosd_ring_entry(&s->ring, pos);

		cl_unlock();
		cl_wait(s, pos, IOSD_ST_INGESTED);
		cl_lock();
		/* The position after an append is the end of what it wrote. */
		syscall(SYS_lseek, fd, (long)(e->result2 + e->length), SEEK_SET);
		cl_release_entry(s, pos);
	}
	leave(f);
	*ret = (ssize_t)total;
	return true;
}

static bool op_read(void *fv, int fd, const struct iovec *iov, int cnt, off_t off,
		    enum cl_kind kind, ssize_t *ret)
{
	struct cl_file *f;
	struct cl_session *s;
	bool bad;
	size_t total = iov_total(iov, cnt, &bad), got = 0;
	uint64_t max;

	if (bad || !total || (kind == CL_AT_OFF && off < 0))
		return false;
	f = enter(fv, fd);
	if (!f)
		return false;
	if ((f->flags & O_ACCMODE) == O_WRONLY) {
		leave(f);
		return false;
	}
	s = f->s;
	if (kind == CL_AT_POS) {
		off = (off_t)syscall(SYS_lseek, fd, 0L, SEEK_CUR);
		if (off < 0) {
			*ret = -1;
			leave(f);
			return true;
		}
	}
	max = iosd_ring_max_io(s->ring.data_bytes);
	while (got < total) {
		size_t chunk = total - got < max ? total - got : (size_t)max;
		struct iosd_entry *e;
		uint64_t doff;
		uint32_t pos;
		int64_t res;

		if (cl_reserve(s, chunk, &e, &doff) < 0)
			goto plain;
		e->op = IOSD_OP_READ;
		e->flags = IOSD_EF_WAITED;
		e->offset = (uint64_t)off + got;
		e->length = chunk;
		e->data_off = doff;
		e->handle = f->handle;
		e->aux = 0;
		pos = cl_publish(s, true);
		cl_unlock();
		cl_wait(s, pos, IOSD_ST_DONE);
		cl_lock();
		res = e->result;
		if (res == -ECANCELED && s->dead) {
			cl_release_entry(s, pos);
			goto plain;
		}
		if (res < 0) {
			cl_release_entry(s, pos);
			if (!got) {
				errno = (int)-res;
				*ret = -1;
				leave(f);
				return true;
			}
			break;
		}
		if ((uint64_t)res > chunk)
			res = (int64_t)chunk;
		iov_copy(iov, cnt, got, s->ring.data + doff, (size_t)res, true);
		cl_release_entry(s, pos);
		got += (size_t)res;
		if ((size_t)res < chunk)
			break;   /* the end of the file */
	}
	if (kind == CL_AT_POS && got)
		syscall(SYS_lseek, fd, (long)(off + (off_t)got), SEEK_SET);
	leave(f);
	*ret = (ssize_t)got;
	return true;

plain:
	/* The daemon died: every write before this read is in the file now. */
	{
		ssize_t r = plain_rest(fd, iov, cnt, got, off + (off_t)got, false);

		if (kind == CL_AT_POS && r > 0)
			syscall(SYS_lseek, fd, (long)(off + (off_t)got + r), SEEK_SET);
		leave(f);
		*ret = r < 0 ? (got ? (ssize_t)got : -1) : (ssize_t)(got + (size_t)r);
		return true;
	}
}

/* A waited operation with a 0/-1 result (fsync, ftruncate ...).  `errs`:
 * report a write error of the file not reported yet. */
static bool simple(void *fv, int fd, uint16_t op, uint64_t off, uint64_t len, uint32_t aux,
		   bool errs, int *ret)
{
	struct cl_file *f = enter(fv, fd);
	uint32_t pos = 0;
	int64_t res;
	int err;

	if (!f)
		return false;
	res = round_trip(f, op, off, len, aux, &pos);
	if (res == -ENOTCONN) {
		leave(f);
		return false;   /* dead before it was published: plain */
	}
	err = res < 0 ? (int)-res : 0;
	if (errs) {
		collect_errors(f->s, f, pos);
		if (f->err) {
			err = f->err;
			f->err = 0;
		}
	}
	leave(f);
	if (err)
		errno = err;
	*ret = err ? -1 : 0;
	return true;
}

static bool op_sync(void *fv, int fd, bool datasync, int *ret)
{
	return simple(fv, fd, datasync ? IOSD_OP_FDATASYNC : IOSD_OP_FSYNC, 0, 0, 0, true, ret);
}

static bool op_sync_range(void *fv, int fd, off_t off, off_t len, unsigned flags, int *ret)
{
	if (off < 0 || len < 0 || (flags & ~7u))
		return false;
	return simple(fv, fd, IOSD_OP_SYNC_RANGE, (uint64_t)off, (uint64_t)len, flags,
		      (flags & SYNC_FILE_RANGE_WAIT_AFTER) != 0, ret);
}

static bool op_truncate(void *fv, int fd, off_t len, int *ret)
{
	if (len < 0)
		return false;
	return simple(fv, fd, IOSD_OP_TRUNCATE, (uint64_t)len, 0, 0, false, ret);
}

static bool op_fallocate(void *fv, int fd, int mode, off_t off, off_t len, int *ret)
{
	/* What the ring cannot carry, the kernel answers (EINVAL, EOPNOTSUPP). */
	if (off < 0 || len <= 0 || (uint64_t)off > (uint64_t)INT64_MAX - (uint64_t)len ||
	    mode < 0 || !iosd_fallocate_mode_ok((uint32_t)mode))
		return false;
	return simple(fv, fd, IOSD_OP_FALLOCATE, (uint64_t)off, (uint64_t)len, (uint32_t)mode,
		      false, ret);
}

static void op_barrier(void *fv, int fd)
{
	struct cl_file *f = enter(fv, fd);

	if (!f)
		return;
	round_trip(f, IOSD_OP_BARRIER, 0, 0, 0, NULL);
	leave(f);
}

/* The program closed (or replaced) one of the client's own descriptors:
 * the session cannot go on (lock held). */
static void internal_closed(int fd)
{
	struct cl_session *s = C.s;

	C.host->set(fd, NULL);
	if (s && !s->dead && s->pid == getpid())
		cl_takeover(s, "the program closed a descriptor of the client");
}

static int op_release(void *fv, int fd)
{
	struct cl_session *s;
	struct cl_file *f;
	uint32_t pos = 0;
	int err;

	cl_lock();
	f = C.host->get(fd);
	if (f == CL_INTERNAL) {
		internal_closed(fd);
		cl_unlock();
		return 0;
	}
	if (!f || (f->s->pid != getpid() && !f->s->dead)) {
		cl_unlock();
		return 0;   /* gone meanwhile, or a vfork child */
	}
	C.host->set(fd, NULL);
	if (--f->nfds) {
		cl_unlock();
		return 0;
	}
	/* The file's last descriptor: complete on disk when close returns
	 * (data the daemon keeps in a tier included). */
	s = f->s;
	f->refs++;
	s->users++;
	if (!f->gone && !s->dead &&
	    round_trip(f, IOSD_OP_BARRIER, 0, 0, IOSD_BARRIER_HOME, &pos) != -ENOTCONN)
		collect_errors(s, f, pos);
	err = f->err;
	f->err = 0;
	cl_file_forget(f);
	cl_file_put(f);
	cl_session_put(s);
	cl_unlock();
	return err;
}

static void op_dup(int oldfd, int newfd)
{
	struct cl_file *f;

	if (oldfd == newfd)
		return;
	cl_lock();
	f = C.host->get(oldfd);
	if (f && f != CL_INTERNAL && !f->gone && f->s->pid == getpid() && C.host->set(newfd, f) == 0)
		f->nfds++;
	cl_unlock();
}

static void op_detach(void *fv, int fd)
{
	struct cl_file *f = enter(fv, fd);

	if (!f)
		return;
	/* Plain from now on: the file complete at home first. */
	round_trip(f, IOSD_OP_BARRIER, 0, 0, IOSD_BARRIER_HOME, NULL);
	if (!f->gone) {
		C.host->clear_value(f);
		f->nfds = 0;
		cl_file_forget(f);
	}
	leave(f);
}

static void op_drain(void)
{
	cl_drain();
}

static const struct cl_ops cl_io_ops = {
	.version = CL_VERSION,
	.write = op_write,
	.read = op_read,
	.sync = op_sync,
	.sync_range = op_sync_range,
	.truncate = op_truncate,
	.fallocate = op_fallocate,
	.barrier = op_barrier,
	.release = op_release,
	.dup = op_dup,
	.detach = op_detach,
	.drain = op_drain,
};

const struct cl_ops *client_attach(const struct cl_host *host)
{
	if (!host || host->version != CL_VERSION)
		return NULL;
	C.host = host;
	return &cl_io_ops;
}
