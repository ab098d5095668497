/* SPDX-License-Identifier: MIT */
/*
 * probe_sync.c - synchronous chunked writes, one at a time and individually
 * timed: the IOSIG paper's dd experiment (Sect. 7.1: "write + flush" per
 * chunk) and the small synchronous writes of the latency, seek, block-size
 * and BCW phases of a probe (probe.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prng.h"
#include "probe.h"

/* One whole pwrite() or pread(); a read that hits the end of the file is an
 * error (the caller reads only what was written). */
static int io_full(int fd, bool rd, const void *buf, uint64_t len, uint64_t off)
{
	char *p = (char *)buf;

	while (len) {
		ssize_t n = rd ? pread(fd, p, len, (off_t)off) : pwrite(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return rd ? -EIO : -ENOSPC;
		p += n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* fsync() retried on EINTR. */
static int sync_fd(int fd)
{
	while (fsync(fd) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* Truncates to 0 and commits it: on ext4 mounted with `discard` the freed
 * blocks are discarded at the next journal commit, which the first timed
 * fsync would otherwise pay for. */
static int empty_file(int fd)
{
	if (ftruncate(fd, 0) < 0)
		return -errno;
	return sync_fd(fd);
}

int prb_sync_run(const struct prb_sync_job *job, struct prb_sync_stats *ret)
{
	uint64_t slots = job->ds ? job->span / job->ds : 0;
	uint64_t off = job->start, size = 0;
	double *times = job->times;
	double *own = NULL;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	if (!job->ds || !slots || !job->max_ops || job->min_ops > job->max_ops ||
	    (job->read && job->pattern == PRB_APPEND))
		return -EINVAL;
	if (!times) {
		own = malloc(job->max_ops * sizeof(*own));
		if (!own)
			return -ENOMEM;
		times = own;
	}
	if (job->pattern == PRB_APPEND) {
		size = job->start;
		/* A fresh start empties the file first, as dd does. */
		if (size == 0 || size + job->ds > job->span) {
			r = empty_file(job->fd);
			if (r < 0)
				goto out_free;
			size = 0;
		}
	} else if (job->pattern == PRB_SEQ && off + job->ds > job->span) {
		off = 0;
	}
	if (job->drop_cache) {
		/* Written pages must reach the device before they can be dropped. */
		r = sync_fd(job->fd);
		if (r < 0)
			goto out_free;
		posix_fadvise(job->fd, 0, 0, POSIX_FADV_DONTNEED);
	}

	while (ret->ops < job->max_ops) {
		double t0, dt;

		if (job->cancel && *job->cancel) {
			r = -ECANCELED;
			break;
		}
		if (ret->ops >= job->min_ops && prb_now() >= job->deadline)
			break;
		switch (job->pattern) {
		case PRB_APPEND:
			if (size + job->ds > job->span) {
				/* Untimed: keeps the file inside its share of the budget. */
				r = empty_file(job->fd);
				if (r < 0)
					goto out_stats;
				size = 0;
			}
			off = size;
			break;
		case PRB_SEQ:
			if (off + job->ds > job->span)
				off = 0;
			break;
		case PRB_RANDOM:
			off = prng_splitmix64(job->rng) % slots * job->ds;
			break;
		}
		t0 = job->cpu_time ? prb_cpu_now() : prb_now();
		r = io_full(job->fd, job->read, job->buf, job->ds, off);
		if (r == 0 && job->fsync && !job->read)
			r = sync_fd(job->fd);
		dt = (job->cpu_time ? prb_cpu_now() : prb_now()) - t0;
		if (r < 0)
			break;
		times[ret->ops++] = dt;
		ret->total += dt;
		ret->bytes += job->ds;
		off += job->ds;
		if (job->pattern == PRB_APPEND)
			size = off;
	}

out_stats:
	ret->next = job->pattern == PRB_APPEND ? size : off;
	if (ret->ops) {
		ret->median = prb_quantile_of(times, ret->ops, 0.5);
		ret->p25 = prb_quantile_of(times, ret->ops, 0.25);
		ret->p75 = prb_quantile_of(times, ret->ops, 0.75);
		if (isnan(ret->median) && r == 0)
			r = -ENOMEM;
	}
out_free:
	free(own);
	return r;
}
