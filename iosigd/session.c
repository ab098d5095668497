/* SPDX-License-Identifier: MIT */
/*
 * session.c - one client process: its control messages (HELLO, REGISTER,
 * UNREGISTER, STATUS), its ring (copied out and validated entry by entry)
 * and its registrations.
 *
 * Nothing a client sends is trusted: messages are decoded strictly
 * (proto.c), descriptors are checked for what they claim to be (a sealed
 * memfd of the announced size, a non-blocking eventfd, a regular file with
 * the announced identity), ring entries are copied out of the shared
 * mapping before they are validated, and every handle is looked up.  A
 * violation closes the session with a logged reason and an ERROR message;
 * the operations it already queued still complete (their completions go
 * to a ring nobody reads), then everything is freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iosigd.h"
#include "tiers.h"

#define MAX_FDS_IN 4    /* descriptors one message may bring (more is an error) */

struct dsession *session_new(struct daemon *d, int sock, pid_t pid, uid_t uid, gid_t gid)
{
	struct dsession *s = calloc(1, sizeof(*s));

	if (!s) {
		dlog(DLOG_WARN, "out of memory: connection from pid %d refused", pid);
		return NULL;
	}
	s->d = d;
	s->id = ++d->next_session;
	s->sock = sock;
	s->pid = pid;
	s->uid = uid;
	s->gid = gid;
	s->kick_fd = -1;
	pol_list_init(&s->ops);
	s->wsock = (struct dwatch){ .kind = DW_SOCK, .obj = s };
	s->wkick = (struct dwatch){ .kind = DW_KICK, .obj = s };
	if (engine_watch(d, sock, &s->wsock, EPOLLIN | EPOLLRDHUP) < 0) {
		free(s);
		return NULL;
	}
	pol_list_add_tail(&d->sessions, &s->link);
	d->nsessions++;
	dlog(DLOG_DEBUG, "session %u (pid %d, uid %u): connected", s->id, pid, uid);
	return s;
}

int session_send(struct dsession *s, unsigned type, const void *body, size_t len,
		 const void *extra, size_t elen, uint32_t seq)
{
	uint8_t buf[IOSD_MSG_MAX];
	int n = iosd_encode(buf, sizeof(buf), s->version ? s->version : IOSD_VERSION, type, seq,
			    body, len, extra, elen);

	if (n < 0)
		return n;
	if (s->sock < 0)
		return -ENOTCONN;
	/* Never block on a client that does not read its socket. */
	if (send(s->sock, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
		return errno ? -errno : -EIO;
	return 0;
}

/* Stops reading s's socket and kick descriptor. */
static void close_sock(struct daemon *d, struct dsession *s)
{
	if (s->sock >= 0) {
		engine_unwatch(d, s->sock);
		close(s->sock);
		s->sock = -1;
	}
	if (s->kick_fd >= 0) {
		engine_unwatch(d, s->kick_fd);
		close(s->kick_fd);
		s->kick_fd = -1;
	}
}

void session_fail(struct daemon *d, struct dsession *s, int err, const char *fmt, ...)
{
	struct iosd_error e = { .error = err < 0 ? err : -EPROTO };
	char why[IOSD_TEXT_MAX];
	va_list ap;

	if (s->dead)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	dlog(DLOG_WARN, "session %u (pid %d, uid %u): %s; session closed", s->id, s->pid, s->uid,
	     why);
	iosd_strfield(e.message, sizeof(e.message), why);
	session_send(s, IOSD_ERROR, &e, sizeof(e), NULL, 0, 0);
	s->dead = true;
	close_sock(d, s);
}

static void close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
}

/* True if fd is an eventfd (anon inode) in non-blocking mode. */
static bool is_nonblocking_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;
	int fl = fcntl(fd, F_GETFL);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[eventfd]") && fl >= 0 && (fl & O_NONBLOCK);
}

static void on_hello(struct daemon *d, struct dsession *s, const struct iosd_msg *m, int *fds)
{
	const struct iosd_hello *h = &m->u.hello;
	const struct dcfg_limits *lim = &d->cfg.limits;
	struct iosd_welcome w = { 0 };
	struct stat st;
	int seals;
	void *map;

	if (s->version) {
		session_fail(d, s, -EPROTO, "HELLO after the handshake");
		goto out_close;
	}
	if (!iosd_ring_geometry_ok(h->ring_entries, h->ring_data) ||
	    h->ring_bytes != iosd_ring_bytes(h->ring_entries, h->ring_data)) {
		session_fail(d, s, -EINVAL, "HELLO: ring of %u entries and %llu bytes is not a valid geometry",
			     h->ring_entries, (unsigned long long)h->ring_data);
		goto out_close;
	}
	if (h->ring_entries > lim->ring_entries || h->ring_data > lim->ring_size) {
		session_fail(d, s, -E2BIG, "HELLO: ring of %u entries and %llu bytes exceeds the limits (%u, %llu)",
			     h->ring_entries, (unsigned long long)h->ring_data, lim->ring_entries,
			     (unsigned long long)lim->ring_size);
		goto out_close;
	}
	if (fstat(fds[0], &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != h->ring_bytes) {
		session_fail(d, s, -EINVAL, "HELLO: the ring descriptor is not a file of %llu bytes",
			     (unsigned long long)h->ring_bytes);
		goto out_close;
	}
	/* Sealed against shrinking: the client cannot make our mapping fault. */
	seals = fcntl(fds[0], F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		session_fail(d, s, -EINVAL, "HELLO: the ring memfd is not sealed against shrinking");
		goto out_close;
	}
	if (!is_nonblocking_eventfd(fds[1])) {
		session_fail(d, s, -EINVAL, "HELLO: the kick descriptor is not a non-blocking eventfd");
		goto out_close;
	}
	map = mmap(NULL, h->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (map == MAP_FAILED) {
		session_fail(d, s, -errno, "HELLO: cannot map the ring: %s", strerror(errno));
		goto out_close;
	}
	close(fds[0]);
	s->map = map;
	s->map_size = h->ring_bytes;
	iosd_ring_view(&s->ring, map, h->ring_bytes, h->ring_entries, h->ring_data);
	s->kick_fd = fds[1];
	s->head = 0;
	s->version = h->ver_max < IOSD_VERSION ? h->ver_max : IOSD_VERSION;
	if (engine_watch(d, s->kick_fd, &s->wkick, EPOLLIN) < 0) {
		session_fail(d, s, -ENOMEM, "cannot watch the kick descriptor");
		return;
	}
	w.version = (uint16_t)s->version;
	w.session = s->id;
	w.max_fds = lim->fds_per_client;
	w.max_queued = lim->queued_bytes;
	if (session_send(s, IOSD_WELCOME, &w, sizeof(w), NULL, 0, m->hdr.seq) < 0) {
		session_fail(d, s, -EIO, "cannot send WELCOME");
		return;
	}
	dlog(DLOG_DEBUG, "session %u (pid %d, uid %u): ring of %u entries, %llu bytes", s->id,
	     s->pid, s->uid, h->ring_entries, (unsigned long long)h->ring_data);
	return;

out_close:
	close_fds(fds, 2);
}

static void reg_free(struct dreg *reg)
{
	close(reg->fd);
	engine_file_put(reg->s->d, reg->file);
	free(reg->sig);
	free(reg);
}

/* Answers a REGISTER that is well formed but cannot be honoured: the
 * client does plain I/O on that descriptor. */
static void refuse(struct daemon *d, struct dsession *s, const struct iosd_msg *m, int err,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void refuse(struct daemon *d, struct dsession *s, const struct iosd_msg *m, int err,
		   const char *fmt, ...)
{
	struct iosd_registered r = { .handle = m->u.reg.handle, .error = err };
	char msg[IOSD_TEXT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	iosd_strfield(r.message, sizeof(r.message), msg);
	dlog(DLOG_DEBUG, "session %u (pid %d): handle %u not registered: %s", s->id, s->pid,
	     r.handle, r.message);
	if (session_send(s, IOSD_REGISTERED, &r, sizeof(r), NULL, 0, m->hdr.seq) < 0)
		session_fail(d, s, -EIO, "cannot send REGISTERED");
}

/*
 * Another session has f registered too (or s has a tiered f twice): both
 * rings say so (IOSD_RING_SHARED, for good), before s hears REGISTERED.  A
 * client writes large writes itself (WRITTEN) only while its ring does not
 * say so: the ring orders one process's writes, and a write of another
 * process it was told about may still be in that process's ring
 * (docs/daemon.md "The ring").
 */
static void mark_shared(struct daemon *d, struct dsession *s, struct dfile *f)
{
	bool shared = false;

	if (f->refs - f->nwb <= 1)
		return;   /* only this registration holds it */
	/* A tiered file twice in one session (the new registration is in
	 * s->regs already): a grant of one handle (IOSD_R2_HOME) would not
	 * see the other's tier writes. */
	for (unsigned h = 0, n = 0; f->tier && h < s->nregs_cap && !shared; h++)
		shared = s->regs[h] && s->regs[h]->file == f && ++n > 1;
	for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next) {
		struct dsession *o = pol_container_of(l, struct dsession, link);

		if (o == s || !o->version || o->dead)
			continue;
		for (unsigned h = 0; h < o->nregs_cap; h++) {
			if (o->regs[h] && o->regs[h]->file == f) {
				atomic_fetch_or_explicit(&o->ring.hdr->flags, IOSD_RING_SHARED,
							 memory_order_release);
				shared = true;
				break;
			}
		}
	}
	if (shared)
		atomic_fetch_or_explicit(&s->ring.hdr->flags, IOSD_RING_SHARED, memory_order_release);
}

static void on_register(struct daemon *d, struct dsession *s, const struct iosd_msg *m, int fd)
{
	const struct iosd_register *rm = &m->u.reg;
	unsigned max = d->cfg.limits.fds_per_client;
	struct iosd_registered ok = { .handle = rm->handle };
	char why[160];
	struct dreg *reg;
	struct ddev *dev;
	struct stat st;
	int fl;

	if (!s->version) {
		session_fail(d, s, -EPROTO, "REGISTER before HELLO");
		goto out_close;
	}
	if (rm->handle >= max) {
		session_fail(d, s, -EINVAL, "REGISTER: handle %u beyond the limit of %u", rm->handle, max);
		goto out_close;
	}
	if (rm->handle < s->nregs_cap && s->regs[rm->handle]) {
		session_fail(d, s, -EEXIST, "REGISTER: handle %u is registered already", rm->handle);
		goto out_close;
	}
	if (s->nregs >= max) {
		refuse(d, s, m, -EMFILE, "%u descriptors registered (limits: fds_per_client)", s->nregs);
		goto out_close;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		refuse(d, s, m, -EBADF, "not a regular file");
		goto out_close;
	}
	if ((uint64_t)st.st_dev != rm->dev || (uint64_t)st.st_ino != rm->ino) {
		refuse(d, s, m, -ESTALE, "the descriptor is not the file the message names");
		goto out_close;
	}
	if (tiers_is_store(d, st.st_dev, st.st_ino)) {
		refuse(d, s, m, -EPERM, "a tier store of this daemon");
		goto out_close;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_PATH)) {
		refuse(d, s, m, -EBADF, "the descriptor cannot do I/O");
		goto out_close;
	}
	if (fl & O_DIRECT) {
		refuse(d, s, m, -EINVAL, "O_DIRECT descriptors do their own I/O");
		goto out_close;
	}
	if ((fl & O_APPEND) && !d->noappend) {
		refuse(d, s, m, -EOPNOTSUPP, "O_APPEND needs RWF_NOAPPEND (Linux 6.9)");
		goto out_close;
	}
	dev = engine_device(d, (uint64_t)st.st_dev, why, sizeof(why));
	if (!dev) {
		refuse(d, s, m, -ENODEV, "%s", why);
		goto out_close;
	}
	if (dev->passthrough) {
		dev->passed_through++;
		refuse(d, s, m, -EREMOTE,
		       "%s is global (a network filesystem): its files do their own I/O unless "
		       "daemon: devices: %s: schedule: true", dev->name, dev->name);
		goto out_close;
	}
	if (rm->handle >= s->nregs_cap) {
		unsigned ncap = s->nregs_cap ? s->nregs_cap : 16;
		struct dreg **n;

		while (ncap <= rm->handle)
			ncap *= 2;
		if (ncap > max)
			ncap = max;
		n = realloc(s->regs, ncap * sizeof(*n));
		if (!n) {
			refuse(d, s, m, -ENOMEM, "out of memory");
			goto out_close;
		}
		memset(n + s->nregs_cap, 0, (ncap - s->nregs_cap) * sizeof(*n));
		s->regs = n;
		s->nregs_cap = ncap;
	}
	reg = calloc(1, sizeof(*reg));
	if (reg)
		reg->sig = strdup(m->text);
	if (!reg || !reg->sig) {
		free(reg);
		refuse(d, s, m, -ENOMEM, "out of memory");
		goto out_close;
	}
	reg->file = engine_file(d, dev, (uint64_t)st.st_dev, (uint64_t)st.st_ino, fd);
	if (!reg->file) {
		free(reg->sig);
		free(reg);
		refuse(d, s, m, -ENOMEM, "out of memory");
		goto out_close;
	}
	reg->handle = rm->handle;
	reg->fd = fd;
	reg->s = s;
	reg->open_flags = (uint32_t)fl;
	reg->size_per_io = rm->size_per_io;
	reg->pattern = rm->pattern;
	s->regs[rm->handle] = reg;
	s->nregs++;
	iosd_strfield(ok.device, sizeof(ok.device), dev->name);
	iosd_strfield(ok.policy, sizeof(ok.policy), dev->policy_spec);
	if (dev->tiers)
		ok.flags |= IOSD_REG_TIERED;
	mark_shared(d, s, reg->file);
	if (session_send(s, IOSD_REGISTERED, &ok, sizeof(ok), NULL, 0, m->hdr.seq) < 0)
		session_fail(d, s, -EIO, "cannot send REGISTERED");
	dlog(DLOG_DEBUG, "session %u (pid %d): handle %u = inode %llu on %s (%s)", s->id, s->pid,
	     rm->handle, (unsigned long long)st.st_ino, dev->name, dev->policy_spec);
	return;

out_close:
	close(fd);
}

static void on_unregister(struct daemon *d, struct dsession *s, const struct iosd_msg *m)
{
	uint32_t h = m->u.unregister.handle;
	struct dreg *reg = h < s->nregs_cap ? s->regs[h] : NULL;

	if (!reg) {
		session_fail(d, s, -ENOENT, "UNREGISTER of handle %u, which is not registered", h);
		return;
	}
	s->regs[h] = NULL;
	s->nregs--;
	reg->unregistered = true;
	if (!reg->outstanding)
		reg_free(reg);
}

static void on_status(struct daemon *d, struct dsession *s, const struct iosd_msg *m)
{
	char *json = status_json(d);
	size_t len = json ? strlen(json) : 0, off = 0;

	if (!json) {
		session_fail(d, s, -ENOMEM, "out of memory for the status");
		return;
	}
	do {
		struct iosd_status_reply r = { 0 };
		size_t n = len - off > IOSD_STATUS_CHUNK ? IOSD_STATUS_CHUNK : len - off;

		r.len = (uint32_t)n;
		r.flags = off + n < len ? IOSD_STATUS_MORE : 0;
		if (session_send(s, IOSD_STATUS_REPLY, &r, sizeof(r), json + off, n, m->hdr.seq) < 0) {
			session_fail(d, s, -EIO, "cannot send the status");
			break;
		}
		off += n;
	} while (off < len);
	free(json);
}

/* One message from the socket: 1 handled, 0 nothing more now, -1 closed. */
static int recv_one(struct daemon *d, struct dsession *s)
{
	static uint8_t buf[IOSD_MSG_MAX + 1];
	union {
		char b[CMSG_SPACE(MAX_FDS_IN * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.b,
			     .msg_controllen = sizeof(cbuf.b) };
	int fds[MAX_FDS_IN];
	unsigned nfds = 0;
	const char *why = NULL;
	struct iosd_msg m;
	ssize_t n;

	n = recvmsg(s->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (nfds < MAX_FDS_IN)
					fds[nfds++] = fd;
				else
					close(fd);
			}
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		close_fds(fds, nfds);
		session_fail(d, s, -EMSGSIZE, "message or its descriptors larger than the protocol allows");
		return -1;
	}
	if (iosd_decode(buf, (size_t)n, s->version, &m, &why) < 0) {
		close_fds(fds, nfds);
		session_fail(d, s, -EBADMSG, "malformed message (%zd bytes): %s", n, why);
		return -1;
	}
	if (nfds != iosd_type_fds(m.hdr.type)) {
		close_fds(fds, nfds);
		session_fail(d, s, -EBADMSG, "%s with %u descriptors, expected %u",
			     iosd_type_name(m.hdr.type), nfds, iosd_type_fds(m.hdr.type));
		return -1;
	}
	switch (m.hdr.type) {
	case IOSD_HELLO:
		on_hello(d, s, &m, fds);
		break;
	case IOSD_REGISTER:
		on_register(d, s, &m, fds[0]);
		break;
	case IOSD_UNREGISTER:
		on_unregister(d, s, &m);
		break;
	case IOSD_STATUS:
		on_status(d, s, &m);
		break;
	default:
		session_fail(d, s, -EPROTO, "%s is not a message clients send", iosd_type_name(m.hdr.type));
		break;
	}
	return s->dead ? -1 : 1;
}

/* The client hung up: what it published still gets done (as the kernel
 * writes back a dead process's dirty pages), nothing after it. */
static void hang_up(struct daemon *d, struct dsession *s)
{
	dlog(DLOG_DEBUG, "session %u (pid %d): client gone", s->id, s->pid);
	s->hup = true;
	if (s->version && !s->capped) {
		s->capped = true;
		s->cap_tail = atomic_load_explicit(&s->ring.hdr->sq_tail, memory_order_acquire);
	}
	close_sock(d, s);
}

void session_on_sock(struct daemon *d, struct dsession *s, uint32_t events)
{
	int r = 1;

	/* Bounded: one client cannot keep the loop to itself. */
	for (unsigned i = 0; i < 64 && r > 0 && !s->dead && !s->hup; i++)
		r = recv_one(d, s);
	if (r < 0 && !s->dead)
		hang_up(d, s);
	else if (r == 0 && (events & (EPOLLHUP | EPOLLERR)) && !s->dead && !s->hup)
		hang_up(d, s);
}

bool session_ingest(struct daemon *d, struct dsession *s, struct policy_list *round,
		    bool *ret_waited)
{
	uint32_t pending, n = 0;

	if (!s->version || s->dead)
		return false;
	pending = iosd_ring_pending(&s->ring, s->head);
	if (pending == UINT32_MAX) {
		session_fail(d, s, -EPROTO, "ring: the producer index is beyond the ring");
		return false;
	}
	if (s->capped && pending > s->cap_tail - s->head)
		pending = s->cap_tail - s->head;
	for (; n < pending; n++) {
		struct iosd_entry e;
		const char *why = NULL;
		struct dreg *reg;
		struct dop *op;

		/* Back-pressure: the rest waits in the ring. */
		if (!session_may_ingest(d, s))
			break;
		iosd_ring_copy(&s->ring, s->head, &e);
		if (iosd_entry_check(&s->ring, &e, s->head, &why) < 0) {
			session_fail(d, s, -EBADMSG, "ring entry %u (%s): %s", s->head, iosd_op_name(e.op), why);
			break;
		}
		reg = e.handle < s->nregs_cap ? s->regs[e.handle] : NULL;
		if (!reg) {
			session_fail(d, s, -EBADMSG, "ring entry %u (%s) names handle %u, which is not registered",
				     s->head, iosd_op_name(e.op), e.handle);
			break;
		}
		/* A tiered device's writes go to its policy with their data
		 * (REGISTERED said IOSD_REG_TIERED) - but while the handle's
		 * newest done write said IOSD_R2_HOME (engine.c, home_now()). */
		if (e.op == IOSD_OP_WRITTEN && reg->file->dev->tiers && !reg->home_grant) {
			session_fail(d, s, -EBADMSG,
				     "ring entry %u (WRITTEN) names handle %u, whose device keeps data in a tier: its writes must carry their data (no IOSD_R2_HOME)",
				     s->head, e.handle);
			break;
		}
		op = engine_op_new(d);
		if (!op)
			break;   /* out of memory: retried at the next round */
		op->s = s;
		op->reg = reg;
		op->pos = s->head;
		op->op = e.op;
		op->flags = e.flags;
		op->aux = e.aux;
		op->foff = e.offset;
		op->len = e.length;
		op->data_off = e.data_off;
		reg->outstanding++;
		s->outstanding++;
		if (e.op == IOSD_OP_WRITE || e.op == IOSD_OP_APPEND || e.op == IOSD_OP_READ) {
			s->queued += e.length;
			s->bytes_in += e.length;
		}
		pol_list_add_tail(&s->ops, &op->slink);
		pol_list_add_tail(round, &op->blink);
		if (e.flags & IOSD_EF_WAITED)
			*ret_waited = true;
		s->head++;
		s->ingested++;
	}
	if (n)
		iosd_ring_set_head(&s->ring, s->head);
	return n > 0;
}

void session_op_done(struct daemon *d, struct dop *op)
{
	struct dsession *s = op->s;
	struct dreg *reg = op->reg;

	iosd_ring_complete(&s->ring, op->pos, op->result,
			   op->op == IOSD_OP_APPEND ? op->foff : op->r2_home ? IOSD_R2_HOME : 0);
	/* What the client knows of the handle's grant: its newest done write
	 * in ring order (not seq: waited entries are admitted after the
	 * others of their round; a grant_pos out of the ring's window is
	 * older than any entry in it). */
	if ((op->op == IOSD_OP_WRITE || op->op == IOSD_OP_APPEND) &&
	    (!reg->granted_any || s->head - reg->grant_pos > s->ring.mask + 1 ||
	     (int32_t)(op->pos - reg->grant_pos) > 0)) {
		reg->granted_any = true;
		reg->grant_pos = op->pos;
		reg->home_grant = op->r2_home && op->result >= 0;
	}
	s->notify = true;
	s->completed++;
	if (op->op == IOSD_OP_WRITE || op->op == IOSD_OP_APPEND || op->op == IOSD_OP_READ)
		s->queued -= op->len;
	s->outstanding--;
	pol_list_del(&op->slink);
	if (--reg->outstanding == 0 && reg->unregistered)
		reg_free(reg);
}

bool session_reap(struct daemon *d, struct dsession *s)
{
	if (!(s->hup || s->dead) || s->outstanding)
		return false;
	if (s->capped && !s->dead && s->head != s->cap_tail)
		return false;   /* published entries left to ingest */
	session_free(d, s);
	return true;
}

void session_free(struct daemon *d, struct dsession *s)
{
	close_sock(d, s);
	for (unsigned h = 0; h < s->nregs_cap; h++)
		if (s->regs[h])
			reg_free(s->regs[h]);
	free(s->regs);
	if (s->map)
		munmap(s->map, s->map_size);
	pol_list_del(&s->link);
	d->nsessions--;
	dlog(DLOG_DEBUG, "session %u (pid %d): closed after %llu operations", s->id, s->pid,
	     (unsigned long long)s->completed);
	free(s);
}
