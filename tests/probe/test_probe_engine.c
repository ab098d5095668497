/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the probe's session, synchronous and queued engines
 * (probe_session.c, probe_sync.c, probe_uring.c) in a scratch directory of
 * $TMPDIR (no root needed): budgets, anonymous files, clean removal, the
 * access patterns, cancellation and bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <cmocka.h>

#include "dirs.h"
#include "probe.h"

#define MiB (1024ull * 1024)

static char scratch[4096];

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(scratch, sizeof(scratch), "%s/iosig-probe-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(scratch) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(scratch);
}

static void test_session_budget_and_cleanup(void **state)
{
	struct prb_session *s = NULL;
	const struct prb_fsinfo *fi;
	struct iosig_error err;
	struct statvfs vfs;
	char dir[4096];
	int fd = -1;

	(void)state;
	assert_int_equal(statvfs(scratch, &vfs), 0);
	if ((double)vfs.f_bavail * vfs.f_frsize * PRB_SPACE_SHARE < 16.0 * MiB)
		skip();
	assert_int_equal(prb_session_open(scratch, 16 * MiB, &s, &err), 0);
	fi = prb_session_info(s);
	assert_int_equal(fi->budget, 16 * MiB);
	assert_true(fi->free > 0);
	assert_true(fi->blksize > 0);
	snprintf(dir, sizeof(dir), "%s", prb_session_dir(s));
	assert_int_equal(strncmp(dir, scratch, strlen(scratch)), 0);
	assert_int_equal(tdir_entries(scratch, NULL), 1); /* the private directory */
	assert_int_equal(prb_session_file(s, false, &fd), 0);
	assert_int_equal(pwrite(fd, "x", 1, 0), 1);
	/* Anonymous: nothing in the directory names it. */
	assert_int_equal(tdir_entries(dir, NULL), 0);
	close(fd);
	prb_session_close(s);
	assert_int_equal(tdir_entries(scratch, NULL), 0);
	prb_session_close(NULL);
}

static void test_session_errors(void **state)
{
	struct prb_session *s = (void *)0x1;
	struct iosig_error err;
	char path[4200];

	(void)state;
	snprintf(path, sizeof(path), "%s/missing", scratch);
	assert_int_equal(prb_session_open(path, 0, &s, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "does not exist"));
	assert_ptr_equal(s, (void *)0x1);
	/* A budget below the minimum is refused with what to do. */
	assert_int_equal(prb_session_open(scratch, 1 * MiB, &s, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--max-space"));
	assert_ptr_equal(s, (void *)0x1);
	assert_int_equal(tdir_entries(scratch, NULL), 0);
}

static void test_sync_patterns(void **state)
{
	struct prb_session *s;
	struct prb_sync_stats st;
	struct iosig_error err;
	double times[64];
	uint64_t rng = 7;
	struct stat sb;
	void *buf = prb_buffer(64 * 1024, 3);
	int fd;
	struct prb_sync_job job = {
		.ds = 4096, .pattern = PRB_APPEND, .span = 16 * 4096, .fsync = true,
		.min_ops = 40, .max_ops = 40, .deadline = 0, .rng = &rng, .times = times,
	};

	(void)state;
	assert_non_null(buf);
	assert_int_equal(prb_session_open(scratch, 16 * MiB, &s, &err), 0);
	assert_int_equal(prb_session_file(s, false, &fd), 0);
	job.fd = fd;
	job.buf = buf;

	/* Append: 40 ops, the file never exceeds its span (truncated to 0 when full). */
	assert_int_equal(prb_sync_run(&job, &st), 0);
	assert_int_equal(st.ops, 40);
	assert_int_equal(st.bytes, 40 * 4096);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(sb.st_size, 8 * 4096); /* 40 = 2 x 16 + 8 */
	assert_true(st.median > 0 && st.p25 <= st.median && st.median <= st.p75);
	for (int i = 0; i < 40; i++)
		assert_true(times[i] > 0);

	/* Sequential overwrite wraps at span and reports where it stopped. */
	job.pattern = PRB_SEQ;
	job.fsync = false;
	job.start = 14 * 4096;
	job.min_ops = job.max_ops = 5;
	assert_int_equal(prb_sync_run(&job, &st), 0);
	assert_int_equal(st.next, 3 * 4096);

	/* Random multiples of ds inside span: the file does not grow past it. */
	job.pattern = PRB_RANDOM;
	job.ds = 3000;
	job.span = 64 * 4096;
	job.min_ops = job.max_ops = 64;
	assert_int_equal(prb_sync_run(&job, &st), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_true(sb.st_size <= 64 * 4096);

	/* Reads of what was written. */
	job.read = true;
	job.ds = 4096;
	job.span = 8 * 4096;
	assert_int_equal(prb_sync_run(&job, &st), 0);
	assert_int_equal(st.bytes, 64 * 4096);

	close(fd);
	prb_session_close(s);
	free(buf);
}

static void test_sync_limits(void **state)
{
	volatile sig_atomic_t stop = 1;
	struct prb_session *s;
	struct prb_sync_stats st;
	struct iosig_error err;
	uint64_t rng = 1;
	void *buf = prb_buffer(4096, 3);
	int fd;
	struct prb_sync_job job = {
		.buf = buf, .ds = 4096, .pattern = PRB_SEQ, .span = 1 * MiB,
		.min_ops = 0, .max_ops = 1000000, .rng = &rng,
	};
	double t0;

	(void)state;
	assert_int_equal(prb_session_open(scratch, 16 * MiB, &s, &err), 0);
	assert_int_equal(prb_session_file(s, false, &fd), 0);
	job.fd = fd;

	/* The deadline stops the job (after min_ops). */
	t0 = prb_now();
	job.deadline = t0 + 0.05;
	assert_int_equal(prb_sync_run(&job, &st), 0);
	assert_true(prb_now() - t0 < 1.0);
	assert_true(st.ops > 0 && st.ops < 1000000);

	/* A set cancel flag stops it before the first op. */
	job.cancel = &stop;
	job.deadline = t0 + 100;
	assert_int_equal(prb_sync_run(&job, &st), -ECANCELED);
	assert_int_equal(st.ops, 0);

	/* Bad jobs. */
	job.cancel = NULL;
	job.ds = 0;
	assert_int_equal(prb_sync_run(&job, &st), -EINVAL);
	job.ds = 2 * MiB; /* larger than span */
	assert_int_equal(prb_sync_run(&job, &st), -EINVAL);
	job.ds = 4096;
	job.read = true;
	job.pattern = PRB_APPEND;
	assert_int_equal(prb_sync_run(&job, &st), -EINVAL);

	close(fd);
	prb_session_close(s);
	free(buf);
}

static void test_uring(void **state)
{
	volatile sig_atomic_t stop = 0;
	struct prb_session *s;
	struct prb_uring_stats st;
	struct iosig_error err;
	uint64_t rng = 3;
	struct stat sb;
	int fd, r;
	struct prb_uring_job job = {
		.write = true, .bs = 64 * 1024, .qd = 4, .span = 1 * MiB, .max_bytes = 4 * MiB,
		.rng = &rng, .cancel = &stop,
	};

	(void)state;
	assert_int_equal(prb_session_open(scratch, 16 * MiB, &s, &err), 0);
	assert_int_equal(prb_session_file(s, true, &fd), 0);
	job.fd = fd;
	job.deadline = prb_now() + 30;
	r = prb_uring_run(&job, &st);
	if (r == -ENOSYS) {
		close(fd);
		prb_session_close(s);
		skip(); /* io_uring disabled on this machine */
	}
	assert_int_equal(r, 0);
	/* Exactly the byte limit, sequentially wrapping at span. */
	assert_int_equal(st.bytes, 4 * MiB);
	assert_int_equal(st.ops, 64);
	assert_int_equal(st.next, 0);
	assert_true(st.elapsed > 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(sb.st_size, 1 * MiB);

	job.write = false;
	job.random = true;
	job.max_bytes = 2 * MiB;
	assert_int_equal(prb_uring_run(&job, &st), 0);
	assert_int_equal(st.bytes, 2 * MiB);

	/* Reads beyond the written range are short: an error, not a hang. */
	job.span = 2 * MiB;
	job.random = false;
	job.start = 1 * MiB;
	assert_int_equal(prb_uring_run(&job, &st), -EIO);

	stop = 1;
	job.span = 1 * MiB;
	job.start = 0;
	assert_int_equal(prb_uring_run(&job, &st), -ECANCELED);
	assert_int_equal(st.ops, 0);
	job.bs = 0;
	assert_int_equal(prb_uring_run(&job, &st), -EINVAL);

	close(fd);
	prb_session_close(s);
}

/* A whole probe with a small budget on $TMPDIR: bounded in time and space,
 * plausible values, nothing left behind. */
static void test_run_small(void **state)
{
	struct prb_session *s;
	struct prb_result res;
	struct iosig_error err;
	struct prb_opts o = { .time_budget = 1.5, .rotational = true, .seed = 11 };
	double t0;
	int r;

	(void)state;
	assert_int_equal(prb_session_open(scratch, 16 * MiB, &s, &err), 0);
	t0 = prb_now();
	r = prb_run(s, &o, &res, &err);
	assert_int_equal(r, 0);
	assert_true(prb_now() - t0 < 1.5 * 2 + 1);
	assert_true(res.peak_usage <= 16 * MiB);
	assert_true(res.have & (1u << PRB_V_LATENCY));
	assert_true(res.have & (1u << PRB_V_SEQ_WRITE_BW));
	assert_true(res.latency > 0 && res.latency <= res.latency_raw);
	assert_true(res.seq_write_bw > 1e6);
	assert_true(res.block_size >= 512);
	prb_session_close(s);
	assert_int_equal(tdir_entries(scratch, NULL), 0);

	/* Cancelled before it starts: -ECANCELED, still cleaned up. */
	{
		volatile sig_atomic_t stop = 1;

		o.cancel = &stop;
		assert_int_equal(prb_session_open(scratch, 16 * MiB, &s, &err), 0);
		assert_int_equal(prb_run(s, &o, &res, &err), -ECANCELED);
		prb_session_close(s);
		assert_int_equal(tdir_entries(scratch, NULL), 0);
	}
	o.cancel = NULL;
	o.time_budget = 0;
	assert_int_equal(prb_session_open(scratch, 16 * MiB, &s, &err), 0);
	assert_int_equal(prb_run(s, &o, &res, &err), -EINVAL);
	prb_session_close(s);
}

/* Two sessions side by side: both get a latency; a run given the latency
 * skips its own phase and keeps the value. */
static void test_latency_joint(void **state)
{
	struct prb_session *s[2];
	struct prb_result res;
	struct iosig_error err;
	volatile sig_atomic_t stop = 0;
	double raw[2] = { -1, -1 };
	int status[2] = { 1, 1 };
	struct prb_opts o = { .time_budget = 0.5, .latency_raw = 0.0123, .seed = 3 };

	(void)state;
	assert_int_equal(prb_session_open(scratch, 16 * MiB, &s[0], &err), 0);
	assert_int_equal(prb_session_open(scratch, 16 * MiB, &s[1], &err), 0);
	assert_int_equal(prb_latency_joint(s, 2, 0.2, &stop, NULL, NULL, raw, status), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(status[i], 0);
		assert_true(raw[i] > 0 && raw[i] < 1);
	}
	stop = 1;
	assert_int_equal(prb_latency_joint(s, 2, 0.2, &stop, NULL, NULL, raw, status),
			 -ECANCELED);
	assert_int_equal(prb_run(s[0], &o, &res, &err), 0);
	assert_true(res.have & (1u << PRB_V_LATENCY));
	assert_float_equal(res.latency_raw, 0.0123, 0);
	assert_true(res.latency <= 0.0123 && res.latency >= 0.0123 / 4);
	assert_true(prb_latency_weight(true) < prb_latency_weight(false));
	assert_true(prb_latency_weight(false) > 0 && prb_latency_weight(false) < 0.2);
	prb_session_close(s[0]);
	prb_session_close(s[1]);
	assert_int_equal(tdir_entries(scratch, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_budget_and_cleanup),
		cmocka_unit_test(test_session_errors),
		cmocka_unit_test(test_sync_patterns),
		cmocka_unit_test(test_sync_limits),
		cmocka_unit_test(test_uring),
		cmocka_unit_test(test_run_small),
		cmocka_unit_test(test_latency_joint),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
