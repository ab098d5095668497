/* SPDX-License-Identifier: MIT */
/*
 * model_tput.c - the throughput model of the IOSIG paper (Eq. 3, docs/design.md
 * §5.2): how many bytes per second a stream of I/Os of one size gets
 * from a mount, given its latency, seek time, bandwidths, IOPS limit and the
 * read-modify-write of partial chunks.  docs/models.md has the derivation.
 */
#include <math.h>
#include <stdatomic.h>
#include <unistd.h>

#include "iosig.h"

/* Page size used when sysconf() cannot tell (it always can on Linux). */
#define TPUT_FALLBACK_PAGE_SIZE 4096

/* The OS page size, asked once: selection evaluates Eq. 3 for every mount of
 * the catalog and must stay cheap.  Racing first callers store the same
 * value, so a relaxed atomic suffices. */
static uint64_t page_size(void)
{
	static _Atomic uint64_t cached;
	uint64_t ps = atomic_load_explicit(&cached, memory_order_relaxed);

	if (!ps) {
		long v = sysconf(_SC_PAGESIZE);

		ps = v > 0 ? (uint64_t)v : TPUT_FALLBACK_PAGE_SIZE;
		atomic_store_explicit(&cached, ps, memory_order_relaxed);
	}
	return ps;
}

/* A bandwidth the formula divides by: finite or infinite, but > 0. */
static bool bw_ok(double bw)
{
	return bw > 0;
}

/*
 * Writes (Eq. 3):
 *   t = min(1 / (l + ceil(ds/cs) cs/wbw + d cs/rbw), max_iops / (d + 1)) ds
 * Reads (no read-modify-write; every chunk touched is read whole):
 *   t = min(1 / (l + ceil(ds/cs) cs/rbw), max_iops) ds
 * with cs = max(page size, block size), d = (ds mod cs != 0), l = operation
 * latency + seek latency (seek only for random access on a rotational
 * device), rbw/wbw the random bandwidths when `random` and known, else the
 * sequential ones; max_iops == 0 means no IOPS limit.
 *
 * Returns 0 when the model cannot say anything sensible: no mount, ds == 0,
 * a bandwidth the formula needs that is zero, negative or NaN, a negative or
 * NaN latency or IOPS.  Returns +inf only for a device with no latency,
 * infinite bandwidth and no IOPS limit.  Never NaN.
 */
double iosig_throughput(const struct iosig_mount *mount, uint64_t ds, bool random,
			enum iosig_op op)
{
	uint64_t cs, chunks;
	double rbw, wbw, lat, t_io, ops;
	bool partial;

	if (!mount || ds == 0)
		return 0;
	if (!(mount->latency >= 0) || !(mount->seek >= 0) || !(mount->iops >= 0))
		return 0;

	cs = page_size();
	if (mount->block_size > cs)
		cs = mount->block_size;
	chunks = ds / cs + (ds % cs != 0);
	partial = ds % cs != 0;

	rbw = random && mount->rand_read_bw > 0 ? mount->rand_read_bw : mount->seq_read_bw;
	wbw = random && mount->rand_write_bw > 0 ? mount->rand_write_bw : mount->seq_write_bw;
	lat = mount->latency + (random && mount->rotational ? mount->seek : 0);

	if (op == IOSIG_OP_READ) {
		if (!bw_ok(rbw))
			return 0;
		t_io = lat + (double)chunks * (double)cs / rbw;
		ops = 1 / t_io;
		if (mount->iops > 0 && mount->iops < ops)
			ops = mount->iops;
	} else {
		if (!bw_ok(wbw) || (partial && !bw_ok(rbw)))
			return 0;
		t_io = lat + (double)chunks * (double)cs / wbw + (partial ? (double)cs / rbw : 0);
		ops = 1 / t_io;
		if (mount->iops > 0 && mount->iops / (partial + 1) < ops)
			ops = mount->iops / (partial + 1);
	}
	return ops * (double)ds;
}
