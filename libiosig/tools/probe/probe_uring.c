/* SPDX-License-Identifier: MIT */
/*
 * probe_uring.c - queued reads and writes through io_uring: the bandwidth
 * and IOPS phases of a probe (probe.h).  Keeps `qd` I/Os in flight until the
 * deadline or the byte limit, then waits for what is in flight, so a phase
 * overruns its deadline by at most one queue's worth of I/O.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prng.h"
#include "probe.h"

/* How long one wait for completions may block before the loop looks at the
 * cancel flag and the deadline again. */
#define WAIT_NS 50000000ll

static void report(const struct prb_uring_job *job, double t0, uint64_t bytes, double *last)
{
	double now, done;

	if (!job->tick)
		return;
	now = prb_now();
	if (now - *last < 0.05)
		return;
	*last = now;
	done = job->deadline > t0 ? (now - t0) / (job->deadline - t0) : 1.0;
	if (job->max_bytes && (double)bytes / (double)job->max_bytes > done)
		done = (double)bytes / (double)job->max_bytes;
	job->tick(job->tick_ctx, done > 1.0 ? 1.0 : done);
}

int prb_uring_run(const struct prb_uring_job *job, struct prb_uring_stats *ret)
{
	uint64_t slots = job->bs ? job->span / job->bs : 0;
	uint64_t next = job->start, submitted = 0;
	struct io_uring ring;
	unsigned inflight = 0;
	bool stop = false;
	double t0, last = 0;
	unsigned *free_slots, nfree;
	char *bufs;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (!slots || !job->qd)
		return -EINVAL;
	if (next + job->bs > job->span)
		next = 0;
	r = io_uring_queue_init(job->qd, &ring, 0);
	if (r < 0)
		return r == -EPERM ? -ENOSYS : r;
	/* One buffer per slot of the queue (reads must not share one). */
	bufs = prb_buffer((size_t)job->bs * job->qd, job->rng ? *job->rng : 1);
	if (!bufs) {
		r = -ENOMEM;
		goto out_exit_ring;
	}
	free_slots = malloc(job->qd * sizeof(*free_slots));
	if (!free_slots) {
		r = -ENOMEM;
		goto out_free_bufs;
	}
	for (nfree = 0; nfree < job->qd; nfree++)
		free_slots[nfree] = nfree;

	t0 = prb_now();
	for (;;) {
		struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = WAIT_NS };
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		int w;

		while (!stop && inflight < job->qd) {
			struct io_uring_sqe *sqe;
			uint64_t off;
			unsigned slot;

			if (job->cancel && *job->cancel) {
				stop = true;
				r = -ECANCELED;
				break;
			}
			if ((job->max_bytes && submitted >= job->max_bytes) ||
			    prb_now() >= job->deadline) {
				stop = true;
				break;
			}
			sqe = io_uring_get_sqe(&ring);
			if (!sqe)
				break;
			if (job->random) {
				off = prng_splitmix64(job->rng) % slots * job->bs;
			} else {
				off = next;
				next += job->bs;
				if (next + job->bs > job->span)
					next = 0;
			}
			/* user_data says which buffer an I/O holds; it returns to
			 * the free list when the I/O completes. */
			slot = free_slots[--nfree];
			if (job->write)
				io_uring_prep_write(sqe, job->fd, bufs + (size_t)slot * job->bs,
						    job->bs, off);
			else
				io_uring_prep_read(sqe, job->fd, bufs + (size_t)slot * job->bs,
						   job->bs, off);
			io_uring_sqe_set_data64(sqe, slot);
			inflight++;
			submitted += job->bs;
		}
		if (!inflight)
			break;
		io_uring_submit(&ring);
		w = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);

		if (w < 0 && w != -ETIME && w != -EINTR && w != -EAGAIN) {
			/* The ring itself failed: nothing more will complete. */
			if (!r)
				r = w;
			break;
		}
		io_uring_for_each_cqe(&ring, head, cqe) {
			seen++;
			inflight--;
			free_slots[nfree++] = (unsigned)cqe->user_data;
			if (cqe->res < 0) {
				if (!r || r == -ECANCELED)
					r = cqe->res;
				stop = true;
			} else if ((uint32_t)cqe->res != job->bs) {
				/* A short write means the filesystem ran out of room; a
				 * short read inside the written range is an I/O error. */
				if (!r)
					r = job->write ? -ENOSPC : -EIO;
				stop = true;
			} else {
				ret->ops++;
				ret->bytes += (uint64_t)cqe->res;
			}
		}
		io_uring_cq_advance(&ring, seen);
		report(job, t0, ret->bytes, &last);
	}
	if (job->write && job->sync_at_end && r == 0) {
		while (fdatasync(job->fd) < 0) {
			if (errno != EINTR) {
				r = -errno;
				break;
			}
		}
	}
	ret->elapsed = prb_now() - t0;
	ret->next = next;
	free(free_slots);
out_free_bufs:
	free(bufs);
out_exit_ring:
	io_uring_queue_exit(&ring);
	return r;
}
