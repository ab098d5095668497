/* SPDX-License-Identifier: MIT */
/*
 * declog.c - the decision log (see declog.h).  A record is rendered into
 * memory with the project's JSON writer and written with one write(2) on an
 * O_APPEND descriptor: on a regular file each record lands whole, whatever
 * other processes append at the same time.
 */
#include "declog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "runtime.h"

/* The log descriptor we opened (RT_LOG_FILE) and its identity, so that a
 * descriptor the program closed and reused is never written to.  Guarded by
 * the runtime lock. */
static int log_fd = -1;
static dev_t log_dev;
static ino_t log_ino;
static bool log_failed;   /* opening failed: do not retry on every call */

bool declog_enabled(void)
{
	return rt_env()->log_kind != RT_LOG_NONE;
}

/* Says once, on standard error, that IOSIG_LOG cannot be used: the one
 * thing the library prints without being asked, since it was asked for a
 * log. */
static void warn_unusable(const char *path, const char *why)
{
	char msg[PATH_MAX + 400];
	int n = snprintf(msg, sizeof(msg), "iosig: IOSIG_LOG=%s: %s; no decision log\n", path, why);

	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

/* Descriptor to write to, or -1.  Called with the runtime lock held. */
static int log_fd_get(void)
{
	const struct rt_env *e = rt_env();
	char why[200];
	struct stat st;
	int fd;

	if (e->log_kind == RT_LOG_STDERR)
		return STDERR_FILENO;
	if (e->log_kind != RT_LOG_FILE)
		return -1;
	if (log_fd >= 0) {
		if (!fstat(log_fd, &st) && st.st_dev == log_dev && st.st_ino == log_ino)
			return log_fd;
		/* The program closed our descriptor (and maybe reused the number):
		 * it is not ours any more, never close or write it. */
		log_fd = -1;
	}
	if (log_failed)
		return -1;
	if (declog_open(e->log_path, &fd, why, sizeof(why)) < 0) {
		log_failed = true;
		warn_unusable(e->log_path, why);
		return -1;
	}
	fd = rt_fd_high(fd);
	if (fstat(fd, &st)) {
		close(fd);
		log_failed = true;
		return -1;
	}
	log_fd = fd;
	log_dev = st.st_dev;
	log_ino = st.st_ino;
	return fd;
}

void declog_reset(void)
{
	struct stat st;

	rt_lock();
	if (log_fd >= 0 && !fstat(log_fd, &st) && st.st_dev == log_dev && st.st_ino == log_ino)
		close(log_fd);
	log_fd = -1;
	log_failed = false;
	rt_unlock();
}

/* Writes the whole buffer: one write(2) unless interrupted part-way. */
static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void emit(char *buf, size_t len)
{
	int fd;

	rt_lock();
	fd = log_fd_get();
	if (fd >= 0)
		write_all(fd, buf, len);
	rt_unlock();
}

/* Common head of every record: event, time, pid, host. */
static void rec_head(struct json_writer *w, const char *event)
{
	struct timespec ts;
	char host[256];

	clock_gettime(CLOCK_REALTIME, &ts);
	if (gethostname(host, sizeof(host)))
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	json_str(w, "event", event);
	json_num(w, "time", (double)ts.tv_sec + (double)(ts.tv_nsec / 1000) * 1e-6);
	json_int(w, "pid", getpid());
	json_str(w, "host", host);
}

static void rec_site(struct json_writer *w, const struct iosig_site *site)
{
	if (!site) {
		json_null(w, "site");
		return;
	}
	json_obj_begin(w, "site");
	json_str(w, "file", site->abi == IOSIG_SITE_ABI ? site->file : NULL);
	json_uint(w, "line", site->abi == IOSIG_SITE_ABI ? site->line : 0);
	json_uint(w, "column", site->abi == IOSIG_SITE_ABI ? site->column : 0);
	json_str(w, "call", site->abi == IOSIG_SITE_ABI ? site->call : NULL);
	json_uint(w, "abi", site->abi);
	json_obj_end(w);
}

/* Canonical text of an evaluated signature into buf ("" on failure). */
static void sig_text(const struct iosig_sig *sig, char *buf, size_t size)
{
	int n = iosig_sig_format(sig, buf, size);

	if (n < 0)
		buf[0] = '\0';
}

static const struct {
	int flag;
	const char *name;
} flag_names[] = {
	{ O_CREAT, "O_CREAT" },       { O_EXCL, "O_EXCL" },
	{ O_TRUNC, "O_TRUNC" },       { O_APPEND, "O_APPEND" },
	{ O_NOFOLLOW, "O_NOFOLLOW" }, { O_CLOEXEC, "O_CLOEXEC" },
	{ O_NONBLOCK, "O_NONBLOCK" }, { O_SYNC, "O_SYNC" },
	{ O_DSYNC, "O_DSYNC" },       { O_DIRECT, "O_DIRECT" },
	{ O_NOATIME, "O_NOATIME" },   { O_NOCTTY, "O_NOCTTY" },
	{ O_PATH, "O_PATH" },
};

char *declog_flags(int flags, char *buf, size_t size)
{
	size_t len;
	int acc = flags & O_ACCMODE;

	snprintf(buf, size, "%s",
		 acc == O_RDONLY ? "O_RDONLY" : acc == O_WRONLY ? "O_WRONLY" :
		 acc == O_RDWR ? "O_RDWR" : "O_ACCMODE");
	if ((flags & O_TMPFILE) == O_TMPFILE) {
		len = strlen(buf);
		snprintf(buf + len, size - len, "|O_TMPFILE");
		flags &= ~O_TMPFILE;
	} else if (flags & O_DIRECTORY) {
		len = strlen(buf);
		snprintf(buf + len, size - len, "|O_DIRECTORY");
	}
	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++) {
		/* O_SYNC contains O_DSYNC's bit: name only what is fully set. */
		if ((flags & flag_names[i].flag) != flag_names[i].flag)
			continue;
		if (flag_names[i].flag == O_DSYNC && (flags & O_SYNC) == O_SYNC)
			continue;
		len = strlen(buf);
		snprintf(buf + len, size - len, "|%s", flag_names[i].name);
	}
	return buf;
}

static void rec_cands(struct json_writer *w, const struct declog_rec *r)
{
	if (!r->cands) {
		json_null(w, "candidates");
		return;
	}
	json_arr_begin(w, "candidates");
	for (size_t i = 0; i < r->ncands; i++) {
		const struct iosig_candidate *c = &r->cands[i];

		json_obj_begin(w, NULL);
		json_str(w, "mount", c->mount ? c->mount->path : NULL);
		json_str(w, "fstype", c->mount ? c->mount->fstype : NULL);
		json_str(w, "class", c->mount ? iosig_class_name(c->mount->cls) : NULL);
		json_str(w, "verdict", iosig_verdict_name(c->verdict));
		json_str(w, "why", c->why);
		json_num(w, "throughput", c->throughput);
		json_num(w, "mttdl", c->mttdl);
		json_num(w, "p_loss", c->p_loss);
		json_obj_end(w);
	}
	json_arr_end(w);
}

/* A record being rendered into memory. */
struct rec {
	char *buf;
	size_t len;
	FILE *fp;
	struct json_writer w;
};

/* Starts a record of `event` (false when memory is short: no record). */
static bool rec_begin(struct rec *rc, const char *event)
{
	rc->buf = NULL;
	rc->len = 0;
	rc->fp = open_memstream(&rc->buf, &rc->len);
	if (!rc->fp)
		return false;
	json_init(&rc->w, rc->fp, false);
	json_obj_begin(&rc->w, NULL);
	rec_head(&rc->w, event);
	return true;
}

/* Ends the record and writes it as one line with one write(2). */
static void rec_end(struct rec *rc)
{
	json_obj_end(&rc->w);
	json_finish(&rc->w);
	fputc('\n', rc->fp);
	if (fclose(rc->fp) == 0 && rc->w.err == 0)
		emit(rc->buf, rc->len);
	free(rc->buf);
}

static void rec_sig(struct json_writer *w, const struct iosig_sig *sig)
{
	char tmp[1024];

	if (!sig) {
		json_null(w, "evaluated");
		return;
	}
	sig_text(sig, tmp, sizeof(tmp));
	json_str(w, "evaluated", tmp);
}

void declog_decision(const struct declog_rec *r)
{
	int saved = errno;
	char tmp[1024];
	struct rec rc;
	struct json_writer *w = &rc.w;

	if (!declog_enabled() || !rec_begin(&rc, "decision"))
		goto out_errno;
	rec_site(w, r->site);
	json_str(w, "call", r->call);
	json_str(w, "sig", r->site && r->site->abi == IOSIG_SITE_ABI ? r->site->sig : NULL);
	json_arr_begin(w, "values");
	for (unsigned i = 0; i < r->nvalues; i++)
		json_num(w, NULL, r->values[i]);
	json_arr_end(w);
	rec_sig(w, r->sig);
	json_str(w, "path", r->path);
	if (r->dirfd >= 0)
		json_int(w, "dirfd", r->dirfd);
	json_str(w, "abs_path", r->abs_path);
	json_str(w, "flags", declog_flags(r->flags, tmp, sizeof(tmp)));
	snprintf(tmp, sizeof(tmp), "0%o", (unsigned)r->mode & 07777);
	json_str(w, "mode", tmp);
	if (r->fmode)
		json_str(w, "fmode", r->fmode);
	rec_cands(w, r);
	json_str(w, "chosen", r->chosen ? r->chosen->path : NULL);
	if (r->chosen)
		json_num(w, "throughput", r->throughput);
	json_str(w, "job", r->job);
	json_str(w, "action", r->action);
	json_str(w, "data_path", r->data_path);
	json_str(w, "fallback", r->reason);
	json_str(w, "stale_link", r->stale_link);
	json_int(w, "result", r->result);
	json_int(w, "errno", r->err);
	json_num(w, "elapsed_us", r->elapsed * 1e6);
	rec_end(&rc);
out_errno:
	errno = saved;
}

void declog_event(const char *event, const struct iosig_site *site, const char *msg,
		  const struct iosig_sig *sig)
{
	int saved = errno;
	struct rec rc;

	if (!declog_enabled() || !rec_begin(&rc, event))
		goto out_errno;
	rec_site(&rc.w, site);
	json_str(&rc.w, "sig", site && site->abi == IOSIG_SITE_ABI ? site->sig : NULL);
	if (sig)
		rec_sig(&rc.w, sig);
	if (msg)
		json_str(&rc.w, "message", msg);
	rec_end(&rc);
out_errno:
	errno = saved;
}
