/* SPDX-License-Identifier: MIT */
/*
 * client.c - the process's session with iosigd (docs/daemon.md): finding
 * and trusting the daemon, the handshake with the ring, registering tagged
 * descriptors, the ring producer and waiting, the watcher thread and the
 * take-over when the daemon dies, fork and exit.  What each interposed
 * call does with the ring is in client_io.c.
 *
 * Locking: one mutex (C.lock) orders the producers and guards the session,
 * its files and the interposers' table; it is never held while waiting
 * for the daemon's completions (a waiter holds the entry instead, so its
 * result and data are not reclaimed under it).  It is held across the
 * short socket round trips of REGISTER, which only annotated opens do.
 *
 * Descriptors of the client itself (socket, eventfd, the private duplicate
 * of each registered file) sit at numbers >= RT_FD_BASE with FD_CLOEXEC,
 * and in the interposers' table as CL_INTERNAL, so that a program closing
 * them ends the session cleanly instead of pulling them from under it.
 * Every system call on a program's descriptor is made with syscall(2): the
 * client runs beneath the interposers and must not enter them again.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"
#include "daemon_socket.h"
#include "declog.h"
#include "env.h"
#include "runtime.h"
#include "stream.h"

#define CL_RING_ENTRIES 4096u
#define CL_RING_DATA (8ull << 20)
#define CL_RETRY_NS (5ull * 1000000000ull)   /* after a failed connect */
#define CL_TIER_WAIT_NS (60ull * 1000000000ull)  /* for a restarted daemon (tiers) */
#define CL_ANSWER_MS 5000                    /* the daemon answers within this */

struct cl_state C = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ------------------------------------------------------------------------
 * small helpers
 * ---------------------------------------------------------------------- */

uint64_t cl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cl_lock(void)
{
	pthread_mutex_lock(&C.lock);
}

void cl_unlock(void)
{
	pthread_mutex_unlock(&C.lock);
}

long cl_sys_close(int fd)
{
	return syscall(SYS_close, fd);
}

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A warning for the decision log (IOSIG_LOG); the library never prints. */
static void warn(const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (!declog_enabled())
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	declog_event("warning", NULL, msg, NULL);
}

/* A descriptor of the client's own, moved out of the program's way. */
static int own_fd(int fd)
{
	return fd < 0 ? fd : rt_fd_high(fd);
}

/* ------------------------------------------------------------------------
 * messages
 * ---------------------------------------------------------------------- */

/* Sends a message with descriptors; 0 or -errno. */
static int send_msg(struct cl_session *s, unsigned type, const void *body, size_t blen,
		    const void *extra, size_t elen, const int *fds, unsigned nfds)
{
	uint8_t buf[IOSD_MSG_MAX];
	union {
		char b[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int n = iosd_encode(buf, sizeof(buf), s->version ? s->version : IOSD_VERSION, type,
			    ++s->seq, body, blen, extra, elen);

	if (n < 0)
		return n;
	iov.iov_base = buf;
	iov.iov_len = (size_t)n;
	if (nfds) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.b;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	for (;;) {
		ssize_t r = sendmsg(s->sock, &mh, MSG_NOSIGNAL);

		if (r == n)
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -errno : -EIO;
	}
}

/* Receives the answer of type `want` to the last message; 0 or -errno
 * (the daemon's ERROR, a timeout, a malformed or unexpected message). */
static int recv_answer(struct cl_session *s, unsigned want, struct iosd_msg *m,
		       uint8_t buf[IOSD_MSG_MAX + 1])
{
	struct pollfd pfd = { .fd = s->sock, .events = POLLIN };
	const char *why;
	ssize_t n;
	int r;

	for (;;) {
		r = poll(&pfd, 1, CL_ANSWER_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? -ETIMEDOUT : -errno;
		n = recv(s->sock, buf, IOSD_MSG_MAX + 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n == 0 ? -ECONNRESET : -errno;
		break;
	}
	if (iosd_decode(buf, (size_t)n, s->version, m, &why) < 0) {
		warn("iosigd: malformed answer (%s); I/O goes on without the daemon", why);
		return -EPROTO;
	}
	if (m->hdr.type == IOSD_ERROR) {
		warn("iosigd closed the session: %s; I/O goes on without the daemon",
		     m->u.error.message);
		return m->u.error.error;
	}
	if (m->hdr.type != want || m->hdr.seq != s->seq)
		return -EPROTO;
	return 0;
}

/* ------------------------------------------------------------------------
 * the session
 * ---------------------------------------------------------------------- */

/* The process at the other end of a daemon socket, 0 when unknown. */
static pid_t peer_pid(int sock)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ? 0 : cred.pid;
}

/* Connects to the first daemon that answers and may see our data
 * (daemon_socket.h: the candidates, root's or our own uid); -1 when none. */
static int connect_daemon(void)
{
	char paths[DSOCK_MAX][DSOCK_PATH_MAX], why[DSOCK_PATH_MAX + 100];
	unsigned n = dsock_candidates(paths);

	for (unsigned i = 0; i < n; i++) {
		int fd = dsock_connect(paths[i], true, NULL, why, sizeof(why));

		if (fd >= 0)
			return own_fd(fd);
		if (fd == -EPERM)
			warn("%s", why);
	}
	return -1;
}

static void *watcher_main(void *arg);

/* Closes the session's socket and eventfds that are still open. */
static void close_own(struct cl_session *s)
{
	int *fds[] = { &s->sock, &s->kick, &s->stop };

	for (unsigned i = 0; i < 3; i++) {
		if (*fds[i] >= 0)
			cl_sys_close(*fds[i]);
		*fds[i] = -1;
	}
}

static void session_free(struct cl_session *s)
{
	if (s->map)
		munmap(s->map, s->map_size);
	free(s->slot_end);
	free(s->hold);
	free(s->files);
	free(s);
}

/* Drops a dead session once no call uses it any more (lock held). */
void cl_session_put(struct cl_session *s)
{
	if (--s->users == 0 && s->dead && s != C.s)
		session_free(s);
}

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

/* Opens a session: connect, the ring, HELLO/WELCOME, the watcher.  NULL
 * when there is no daemon to talk to (lock held). */
static struct cl_session *session_open(void)
{
	uint64_t bytes = iosd_ring_bytes(CL_RING_ENTRIES, CL_RING_DATA);
	struct iosd_hello h = { .ver_min = IOSD_VERSION_MIN, .ver_max = IOSD_VERSION,
				.pid = (uint32_t)getpid(), .ring_entries = CL_RING_ENTRIES,
				.ring_data = CL_RING_DATA, .ring_bytes = bytes };
	uint8_t buf[IOSD_MSG_MAX + 1];
	struct cl_session *s;
	struct iosd_msg m;
	sigset_t all, old;
	int memfd = -1, fds[2], r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->sock = s->kick = s->stop = -1;
	s->sock = connect_daemon();
	if (s->sock < 0)
		goto out_free;
	memfd = memfd_create("iosig-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, (off_t)bytes) < 0 ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto out_close;
	s->map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (s->map == MAP_FAILED) {
		s->map = NULL;
		goto out_close;
	}
	s->map_size = bytes;
	iosd_ring_init(&s->ring, s->map, CL_RING_ENTRIES, CL_RING_DATA);
	s->slot_end = calloc(CL_RING_ENTRIES, sizeof(*s->slot_end));
	s->hold = calloc(CL_RING_ENTRIES, sizeof(*s->hold));
	if (!s->slot_end || !s->hold)
		goto out_close;
	iosd_prod_init(&s->prod, &s->ring, s->slot_end, s->hold);
	s->kick = own_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	s->stop = own_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (s->kick < 0 || s->stop < 0)
		goto out_close;
	fds[0] = memfd;
	fds[1] = s->kick;
	r = send_msg(s, IOSD_HELLO, &h, sizeof(h), NULL, 0, fds, 2);
	if (r == 0)
		r = recv_answer(s, IOSD_WELCOME, &m, buf);
	if (r < 0)
		goto out_close;
	cl_sys_close(memfd);
	memfd = -1;
	s->version = m.u.welcome.version;
	s->id = m.u.welcome.session;
	s->max_fds = m.u.welcome.max_fds;
	s->pid = getpid();
	s->daemon_pid = peer_pid(s->sock);
	/* The watcher takes no signal: they are the program's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&s->watcher, NULL, watcher_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		goto out_close;
	pthread_detach(s->watcher);
	s->watching = true;
	s->users++;   /* the watcher's */
	C.host->set(s->sock, CL_INTERNAL);
	C.host->set(s->kick, CL_INTERNAL);
	C.host->set(s->stop, CL_INTERNAL);
	if (!C.atfork) {
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		C.atfork = true;
	}
	return s;

out_close:
	if (memfd >= 0)
		cl_sys_close(memfd);
	close_own(s);
out_free:
	session_free(s);
	return NULL;
}

/* The live session of this process, opened if need be (at most one
 * connect per CL_RETRY_NS after a failure); NULL for plain I/O.  Lock held. */
static struct cl_session *session_get(void)
{
	struct cl_session *s = C.s;
	uint64_t now;

	if (s && !s->dead)
		return s;
	now = cl_now();
	if (C.failed && now - C.last_fail < CL_RETRY_NS)
		return NULL;
	s = session_open();
	if (!s) {
		C.failed = true;
		C.last_fail = now;
		return NULL;
	}
	if (C.s && !C.s->users)
		session_free(C.s);
	C.s = s;
	C.failed = false;
	return s;
}

/* ------------------------------------------------------------------------
 * registration
 * ---------------------------------------------------------------------- */

static int handle_alloc(struct cl_session *s)
{
	uint32_t cap = s->nfiles_cap;

	for (uint32_t i = 0; i < cap; i++) {
		uint32_t h = (s->handle_hint + i) % cap;

		if (!s->files[h]) {
			s->handle_hint = h + 1;
			return (int)h;
		}
	}
	if (cap >= s->max_fds)
		return -EMFILE;
	cap = cap ? cap * 2 : 64;
	if (cap > s->max_fds)
		cap = s->max_fds;
	{
		struct cl_file **n = realloc(s->files, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		memset(n + s->nfiles_cap, 0, (cap - s->nfiles_cap) * sizeof(*n));
		s->files = n;
	}
	s->handle_hint = s->nfiles_cap + 1;
	s->nfiles_cap = cap;
	return (int)(s->handle_hint - 1);
}

bool client_register(int fd, int flags, const struct iosig_sig *sig)
{
	struct iosd_register rm = { 0 };
	char text[IOSD_SIG_MAX];
	uint8_t buf[IOSD_MSG_MAX + 1];
	struct cl_session *s;
	struct cl_file *f;
	struct iosd_msg m;
	struct stat st;
	int saved = errno, h, fl, r, n;
	bool done = false;

	if (!C.host || (flags & (O_PATH | O_DIRECT)) || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto out_errno;
	cl_lock();
	if (C.s && C.s->pid != getpid())
		goto out_unlock;   /* a vfork child: the parent's session is not ours */
	if (C.host->get(fd))
		goto out_unlock;
	s = session_get();
	if (!s)
		goto out_unlock;
	fl = (int)syscall(SYS_fcntl, fd, F_GETFL);
	if (fl < 0 || (fl & O_DIRECT))
		goto out_unlock;
	h = handle_alloc(s);
	if (h < 0)
		goto out_unlock;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto out_unlock;
	f->priv = own_fd((int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3));
	if (f->priv < 0) {
		free(f);
		goto out_unlock;
	}
	n = iosig_sig_format(sig, text, sizeof(text));
	if (n < 0 || (size_t)n >= sizeof(text))
		text[0] = '\0';
	rm.handle = (uint32_t)h;
	rm.open_flags = (uint32_t)fl;
	rm.dev = st.st_dev;
	rm.ino = st.st_ino;
	rm.stream = (uint64_t)getpid();
	rm.size_per_io = (sig->set & IOSIG_HAS(IOSIG_P_SIZE_PER_IO)) ? sig->size_per_io : 0;
	rm.pattern = (sig->set & IOSIG_HAS(IOSIG_P_SEQUENTIAL)) ? IOSD_PATTERN_SEQUENTIAL :
		     (sig->set & IOSIG_HAS(IOSIG_P_RANDOM)) ? IOSD_PATTERN_RANDOM :
							      IOSD_PATTERN_UNKNOWN;
	rm.sig_len = (uint32_t)strlen(text) + 1;
	r = send_msg(s, IOSD_REGISTER, &rm, sizeof(rm), text, rm.sig_len, &fd, 1);
	if (r == 0)
		r = recv_answer(s, IOSD_REGISTERED, &m, buf);
	if (r < 0 || m.u.registered.handle != (uint32_t)h) {
		/* The daemon is gone or confused: everything goes plain. */
		cl_sys_close(f->priv);
		free(f);
		cl_takeover(s, "no answer to REGISTER");
		goto out_unlock;
	}
	if (m.u.registered.error) {
		cl_sys_close(f->priv);
		free(f);
		if (declog_enabled())
			warn("iosigd does not take descriptor %d: %s", fd, m.u.registered.message);
		goto out_unlock;
	}
	f->s = s;
	f->handle = (uint32_t)h;
	f->flags = fl;
	f->refs = 1;
	f->nfds = 1;
	f->tiered = m.u.registered.flags & IOSD_REG_TIERED;
	f->since = s->prod.tail;
	s->files[h] = f;
	C.host->set(f->priv, CL_INTERNAL);
	if (C.host->set(fd, f) < 0) {
		/* The interposers cannot see it: it stays plain. */
		C.host->set(f->priv, NULL);
		cl_file_forget(f);
	} else {
		done = true;
	}
out_unlock:
	cl_unlock();
out_errno:
	errno = saved;
	return done;
}

/* Unregisters f (its last descriptor is gone or it is detached) and drops
 * the table's reference (lock held; f's writes are done). */
void cl_file_forget(struct cl_file *f)
{
	struct cl_session *s = f->s;

	if (!f->gone) {
		struct iosd_unregister u = { .handle = f->handle };

		f->gone = true;
		if (!s->dead && send_msg(s, IOSD_UNREGISTER, &u, sizeof(u), NULL, 0, NULL, 0) < 0)
			cl_takeover(s, "cannot send UNREGISTER");
		if (s->files[f->handle] == f)
			s->files[f->handle] = NULL;
		if (f->priv >= 0) {
			C.host->set(f->priv, NULL);
			cl_sys_close(f->priv);
			f->priv = -1;
		}
		cl_file_put(f);
	}
	/* Gone already: whatever made it so (a take-over) dropped the
	 * registration's reference. */
}

void cl_file_put(struct cl_file *f)
{
	if (--f->refs == 0)
		free(f);
}

/* ------------------------------------------------------------------------
 * the producer
 * ---------------------------------------------------------------------- */

/*
 * An entry reclaimed (each once, in ring order): a tiered handle's newest
 * write says whether its large writes may go into the page cache here
 * (IOSD_R2_HOME; the daemon keeps the same and refuses a WRITTEN entry
 * otherwise).  Entries before the handle's registration were another's.
 */
static void note_done(struct cl_session *s, const struct iosd_entry *e)
{
	struct cl_file *f;

	if ((e->op != IOSD_OP_WRITE && e->op != IOSD_OP_APPEND) || e->handle >= s->nfiles_cap ||
	    !(f = s->files[e->handle]) || !f->tiered || e->seq - f->since >= s->prod.tail - f->since)
		return;
	f->home = e->op == IOSD_OP_WRITE && e->result >= 0 && (e->result2 & IOSD_R2_HOME);
}

/* A write's error, seen when its entry is reclaimed, waits for the file's
 * next fsync or close. */
static void on_reclaim(void *ctx, const struct iosd_entry *e)
{
	struct cl_session *s = ctx;
	struct cl_file *f;

	note_done(s, e);
	if (e->result >= 0 || (e->op != IOSD_OP_WRITE && e->op != IOSD_OP_APPEND))
		return;
	f = e->handle < s->nfiles_cap ? s->files[e->handle] : NULL;
	if (f && !f->err)
		f->err = (int)-e->result;
}

void cl_reclaim(struct cl_session *s)
{
	iosd_prod_reclaim(&s->prod, on_reclaim, s);
}

/* Rings the daemon's doorbell; nothing published is unkicked then. */
static void kick(struct cl_session *s)
{
	uint64_t one = 1;

	syscall(SYS_write, s->kick, &one, sizeof(one));
	s->unkicked = 0;
	s->unkicked_bytes = 0;
}

/* Waits for completions after `seen` (read before the caller looked), the
 * daemon expediting what its policies hold of ours (lock held, released
 * while waiting). */
static void wait_expedited(struct cl_session *s, uint32_t seen)
{
	atomic_fetch_add(&s->ring.hdr->space_waiters, 1);
	kick(s);
	cl_unlock();
	cl_wait_seq(s, seen);
	cl_lock();
	atomic_fetch_sub(&s->ring.hdr->space_waiters, 1);
}

int cl_reserve(struct cl_session *s, uint64_t len, struct iosd_entry **ret_entry,
	       uint64_t *ret_data_off)
{
	for (;;) {
		uint32_t seen = iosd_ring_cq_seq(&s->ring);
		int r;

		if (s->dead)
			return -ENOTCONN;
		cl_reclaim(s);
		r = iosd_prod_reserve(&s->prod, len, ret_entry, ret_data_off);
		if (r != -EAGAIN)
			return r;
		/* Full: the daemon expedites what its policies hold of ours. */
		wait_expedited(s, seen);
	}
}

uint32_t cl_publish(struct cl_session *s, bool hold)
{
	uint32_t pos;
	bool need_kick;

	pos = iosd_prod_publish(&s->prod, &need_kick);
	if (hold)
		s->hold[pos & s->ring.mask] = 1;
	if (need_kick || s->unkicked) {
		kick(s);
	}
	return pos;
}

/* Lazy entries between kicks of a sleeping daemon: a writer of large
 * writes wakes it once per 32 MiB (or 1024 calls) rather than at each (an
 * eventfd write and a wake-up of the daemon's thread, which competes with
 * the writer for the CPU: at 64 calls, a 64 KiB writer lost 1 % of its
 * bandwidth to it), while the daemon still learns of the data well before
 * the ring fills (4096 entries) and within a small part of its write-back
 * threshold (daemon: writeback: dirty, at least 16 MiB). */
#define CL_LAZY_KICKS 1024u
#define CL_LAZY_KICK_BYTES (32u << 20)

void cl_publish_lazy(struct cl_session *s, uint64_t len)
{
	bool need_kick;

	iosd_prod_publish(&s->prod, &need_kick);
	if (!need_kick)
		return;
	s->unkicked_bytes += len;
	if (++s->unkicked >= CL_LAZY_KICKS || s->unkicked_bytes >= CL_LAZY_KICK_BYTES)
		kick(s);
}

/* Whether the daemon's end of the session is gone (no waiting). */
static bool daemon_gone(struct cl_session *s)
{
	struct pollfd p = { .fd = s->sock, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL));
}

/* Waits for a completion after `seen`, noticing a dead daemon (the watcher
 * wakes everyone; the timeout is a second line). */
void cl_wait_seq(struct cl_session *s, uint32_t seen)
{
	iosd_ring_wait(&s->ring, seen, 1000);
	if (!s->dead && iosd_ring_cq_seq(&s->ring) == seen && daemon_gone(s)) {
		cl_lock();
		cl_takeover(s, "the daemon's socket closed");
		cl_unlock();
	}
}

int cl_wait(struct cl_session *s, uint32_t pos, uint32_t state)
{
	struct iosd_entry *e = iosd_ring_entry(&s->ring, pos);

	for (;;) {
		uint32_t seen = iosd_ring_cq_seq(&s->ring);

		if (iosd_entry_state(e) >= state)
			return 0;
		cl_wait_seq(s, seen);
	}
}

void cl_release_entry(struct cl_session *s, uint32_t pos)
{
	s->hold[pos & s->ring.mask] = 0;
}

/* ------------------------------------------------------------------------
 * take-over: the daemon died
 * ---------------------------------------------------------------------- */

#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x00000020
#endif

/* Writes len bytes at off on fd whatever its O_APPEND; 0 or -errno. */
static int write_at(int fd, const void *buf, uint64_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		struct iovec iov = { .iov_base = (void *)p, .iov_len = len };
		long n = syscall(SYS_pwritev2, fd, &iov, 1, (long)off, 0L, RWF_NOAPPEND);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EOPNOTSUPP || errno == EINVAL))
			n = syscall(SYS_pwrite64, fd, p, len, (long)off);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Does one published entry the daemon did not finish; returns its result. */
static int64_t replay(struct cl_session *s, struct iosd_entry *e, uint64_t *ret_result2)
{
	struct cl_file *f = e->handle < s->nfiles_cap ? s->files[e->handle] : NULL;
	uint32_t state = iosd_entry_state(e);
	int fd = f ? f->priv : -1;
	long r;

	*ret_result2 = e->result2;
	if (fd < 0)
		return -EBADF;
	switch (e->op) {
	case IOSD_OP_APPEND:
		if (state != IOSD_ST_INGESTED) {
			/* Not placed yet: at the end of the file now. */
			struct stat st;

			if (syscall(SYS_fstat, fd, &st) < 0)
				return -errno;
			*ret_result2 = (uint64_t)st.st_size;
		}
		r = write_at(fd, s->ring.data + e->data_off, e->length, *ret_result2);
		return r < 0 ? r : (int64_t)e->length;
	case IOSD_OP_WRITE:
		r = write_at(fd, s->ring.data + e->data_off, e->length, e->offset);
		return r < 0 ? r : (int64_t)e->length;
	case IOSD_OP_READ:
		return -ECANCELED;   /* the reader does it plainly */
	case IOSD_OP_FSYNC:
		r = syscall(SYS_fsync, fd);
		break;
	case IOSD_OP_FDATASYNC:
		r = syscall(SYS_fdatasync, fd);
		break;
	case IOSD_OP_SYNC_RANGE:
		r = syscall(SYS_sync_file_range, fd, (long)e->offset, (long)e->length, (long)e->aux);
		break;
	case IOSD_OP_TRUNCATE:
		r = syscall(SYS_ftruncate, fd, (long)e->offset);
		break;
	case IOSD_OP_FALLOCATE:
		r = syscall(SYS_fallocate, fd, (long)e->aux, (long)e->offset, (long)e->length);
		break;
	default:
		r = 0;
		break;
	}
	return r < 0 ? -errno : 0;
}

/* The daemon died while it may have kept the newest data of some of our
 * files in a tier: plain I/O on them must wait until a restarted daemon
 * (another process on the same socket, as systemd's Restart= makes it)
 * has put that data home (it listens only once its recovery is done), at
 * most CL_TIER_WAIT_NS.  Not when the daemon stopped cleanly (it wrote
 * everything home first and said so in the ring). */
static void wait_for_recovery(struct cl_session *s)
{
	uint64_t t0 = cl_now();
	bool tiered = false;

	for (uint32_t h = 0; h < s->nfiles_cap && !tiered; h++)
		tiered = s->files[h] && s->files[h]->tiered && !s->files[h]->gone;
	if (!tiered || (atomic_load_explicit(&s->ring.hdr->flags, memory_order_acquire) &
			IOSD_RING_HOME))
		return;
	while (cl_now() - t0 < CL_TIER_WAIT_NS) {
		int fd = connect_daemon();

		/* Not the dying daemon: it may still take a connection while
		 * the kernel closes its descriptors. */
		if (fd >= 0 && s->daemon_pid && peer_pid(fd) == s->daemon_pid) {
			cl_sys_close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			cl_sys_close(fd);
			warn("iosigd is back after %.1f s: what it kept in a tier is home",
			     (double)(cl_now() - t0) / 1e9);
			return;
		}
		usleep(50 * 1000);
	}
	warn("iosigd did not come back within %u s: data it kept in a tier for this process's files is home only once it runs again; going on without it",
	     (unsigned)(CL_TIER_WAIT_NS / 1000000000ull));
}

void cl_takeover(struct cl_session *s, const char *why)
{
	uint64_t t0;
	unsigned n = 0;

	if (s->dead)
		return;
	t0 = cl_now();
	s->dead = true;
	wait_for_recovery(s);
	/* Every entry published and not done, in ring order: what the
	 * program was told is written is written, in the order it was. */
	for (uint32_t pos = s->prod.reclaim; pos != s->prod.tail; pos++) {
		struct iosd_entry *e = iosd_ring_entry(&s->ring, pos);
		uint64_t r2;
		int64_t r;

		if (iosd_entry_state(e) == IOSD_ST_DONE)
			continue;
		r = replay(s, e, &r2);
		iosd_ring_complete(&s->ring, pos, r, r2);
		n++;
	}
	iosd_ring_wake_all(&s->ring);
	/* Every descriptor is plain from now on; files still in use are
	 * freed by their last call. */
	C.host->clear_all();
	for (uint32_t h = 0; h < s->nfiles_cap; h++) {
		struct cl_file *f = s->files[h];

		if (!f)
			continue;
		f->gone = true;
		s->files[h] = NULL;
		if (f->priv >= 0) {
			cl_sys_close(f->priv);
			f->priv = -1;
		}
		cl_file_put(f);
	}
	if (s->watching && !pthread_equal(pthread_self(), s->watcher)) {
		uint64_t one = 1;

		syscall(SYS_write, s->stop, &one, sizeof(one));
	}
	cl_sys_close(s->sock);
	cl_sys_close(s->kick);
	s->sock = s->kick = -1;
	C.failed = true;
	C.last_fail = cl_now();
	warn("iosigd session %u ended (%s): %u operations done here in %.3f ms; I/O goes on without the daemon",
	     s->id, why, n, (double)(cl_now() - t0) / 1e6);
}

/* The watcher: notices at once that the daemon is gone, even while no
 * call is waiting, and writes what the ring still holds. */
static void *watcher_main(void *arg)
{
	struct cl_session *s = arg;
	struct pollfd p[2] = { { .fd = s->sock, .events = POLLRDHUP },
			       { .fd = s->stop, .events = POLLIN } };

	for (;;) {
		int r = poll(p, 2, -1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (p[1].revents & POLLIN))
			break;
		if (p[0].revents & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL)) {
			cl_lock();
			cl_takeover(s, "the daemon's socket closed");
			cl_unlock();
			break;
		}
	}
	cl_lock();
	C.host->set(s->stop, NULL);
	cl_sys_close(s->stop);
	s->stop = -1;
	s->watching = false;
	cl_session_put(s);
	cl_unlock();
	return NULL;
}

/* ------------------------------------------------------------------------
 * drain, fork, exit
 * ---------------------------------------------------------------------- */

/* Publishes, for every file whose device keeps data in a tier, a barrier
 * that writes that data home: whoever reads the file plainly after the
 * drain (a forked child, an exec'd image, a process after our exit) must
 * find it there (lock held; released while the ring is full). */
static void publish_home_barriers(struct cl_session *s)
{
	for (uint32_t h = 0; h < s->nfiles_cap && !s->dead; h++) {
		struct cl_file *f = s->files[h];
		struct iosd_entry *e;
		uint64_t doff;

		if (!f || !f->tiered || f->gone)
			continue;
		f->refs++;
		if (cl_reserve(s, 0, &e, &doff) == 0) {
			e->op = IOSD_OP_BARRIER;
			e->flags = IOSD_EF_WAITED;
			e->handle = f->handle;
			e->offset = 0;
			e->length = 0;
			e->data_off = 0;
			e->aux = IOSD_BARRIER_HOME;
			cl_publish(s, false);
		}
		cl_file_put(f);
	}
}

/* Waits until everything published so far is done, tier data home (lock
 * held on entry and exit, released while waiting). */
static void drain_locked(void)
{
	struct cl_session *s = C.s;
	uint32_t end, pos;

	/* No pid check: a vfork child about to exec waits in its parent's
	 * memory, which is what it shares the files with. */
	if (!s || s->dead)
		return;
	s->users++;
	publish_home_barriers(s);
	/* What was published lazily is waited for now. */
	if (s->unkicked)
		kick(s);
	end = s->prod.tail;
	pos = s->prod.reclaim;
	while (!s->dead && pos != end) {
		/* Entries reclaimed meanwhile are done (and maybe reused). */
		if ((int32_t)(s->prod.reclaim - pos) > 0)
			pos = s->prod.reclaim;
		if ((int32_t)(end - pos) <= 0)
			break;
		if (iosd_entry_state(iosd_ring_entry(&s->ring, pos)) == IOSD_ST_DONE) {
			pos++;
			continue;
		}
		cl_unlock();
		cl_wait(s, pos, IOSD_ST_DONE);
		cl_lock();
	}
	/* A daemon that died while nothing was pending: the watcher may not
	 * have run yet (an exit or exec would end the process first), so the
	 * take-over - and its line in the decision log - happens here. */
	if (!s->dead && daemon_gone(s))
		cl_takeover(s, "the daemon's socket closed");
	cl_reclaim(s);
	cl_session_put(s);
}

void cl_drain(void)
{
	if (!C.s)
		return;
	cl_lock();
	drain_locked();
	cl_unlock();
}

static void atfork_prepare(void)
{
	int saved = errno;

	cl_lock();
	drain_locked();
	errno = saved;
}

static void atfork_parent(void)
{
	cl_unlock();
}

/* The child starts with no session: its inherited tagged descriptors do
 * plain I/O (the parent drained them), a new annotated open connects. */
static void atfork_child(void)
{
	struct cl_session *s = C.s;

	if (s) {
		C.host->clear_all();
		for (uint32_t h = 0; h < s->nfiles_cap; h++)
			if (s->files[h] && s->files[h]->priv >= 0)
				cl_sys_close(s->files[h]->priv);
		close_own(s);
		/* The files and the session are the parent's: their memory is
		 * left alone (freeing it would race nothing, but the parent's
		 * threads may have been inside calls using them). */
		munmap(s->map, s->map_size);
		C.s = NULL;
	}
	C.failed = false;
	pthread_mutex_init(&C.lock, NULL);
}

/* At exit: what the program wrote reaches the file before it is gone
 * (a process killed by a signal leaves it to the daemon), also what its
 * unclosed streams still buffer. */
__attribute__((destructor)) static void at_exit(void)
{
	if (C.s && !C.s->dead && C.s->pid == getpid()) {
		stream_flush_all();
		cl_drain();
	}
}
