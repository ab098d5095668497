/* SPDX-License-Identifier: MIT */
/* Trace readers: valid input of every format, and malformed input with the
 * exact "file:line: what" messages. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trace.h"

/* Opens text as a trace named "t" of the given format. */
static struct sim_source *open_text(const char *text, const char *format)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	struct sim_source *src = NULL;
	char err[256];

	assert_non_null(fp);
	assert_int_equal(sim_trace_open_fp(fp, "t", true, format, &src, err, sizeof(err)), 0);
	return src;
}

/* Reads every request of text; returns the count, the error message (or
 * "") in err and the last return code in *ret_code. */
static int read_all(const char *text, const char *format, struct sim_io *out, int max,
		    char *err, size_t errlen, int *ret_code)
{
	struct sim_source *src = open_text(text, format);
	struct sim_io io;
	int n = 0, r;

	while ((r = sim_source_next(src, &io)) > 0) {
		if (n < max)
			out[n] = io;
		n++;
	}
	snprintf(err, errlen, "%s", r < 0 ? src->err : "");
	*ret_code = r;
	sim_source_destroy(src);
	return n;
}

static void expect_error(const char *text, const char *format, const char *msg)
{
	struct sim_io io[4];
	char err[SIM_ERR_MAX];
	int code;

	read_all(text, format, io, 4, err, sizeof(err), &code);
	assert_int_equal(code, -EINVAL);
	assert_string_equal(err, msg);
}

static void test_numbers(void **state)
{
	uint64_t v;

	assert_true(sim_parse_u64("18446744073709551615", &v));
	assert_true(v == UINT64_MAX);
	assert_false(sim_parse_u64("18446744073709551616", &v));
	assert_false(sim_parse_u64("-1", &v));
	assert_false(sim_parse_u64("", &v));
	assert_false(sim_parse_u64("12a", &v));
	assert_true(sim_parse_fixed("0.000001850", 9, &v));
	assert_int_equal(v, 1850);
	assert_true(sim_parse_fixed("13.191135", 6, &v));
	assert_int_equal(v, 13191135);
	assert_true(sim_parse_fixed("14095.370", 3, &v));
	assert_int_equal(v, 14095370);
	assert_true(sim_parse_fixed("1.23456", 3, &v));   /* rounds to nearest */
	assert_int_equal(v, 1235);
	assert_true(sim_parse_fixed(".5", 1, &v));
	assert_int_equal(v, 5);
	assert_true(sim_parse_fixed("7", 3, &v));
	assert_int_equal(v, 7000);
	assert_false(sim_parse_fixed("1.2.3", 3, &v));
	assert_false(sim_parse_fixed(".", 3, &v));
	assert_false(sim_parse_fixed("1e3", 3, &v));
	assert_false(sim_parse_fixed("99999999999999999999", 0, &v));
}

static const char blk_ok[] =
	"  8,16   5        1     0.000000000 18615  A   R 1444645666 + 256 <- (8,17) 1444645632\n"
	"  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]\n"
	"  8,16   5        0     0.000012990     0  m   N cfq18615S / insert_request\n"
	"  8,16   5        6     0.000031865 18615  D   R 1444645666 + 256 [java]\n"
	"  8,16   2    41139     9.378427326 16766  Q  WS 3428327338 + 8 [flush-8:16]\n"
	"  8,16   5        4     9.5 18615  P   N [java]\n"
	"  8,16   1      100    10.000000000  1199  Q FWS [jbd2/sdb1-8]\n"
	"  8,16   1      101    10.000000001  1199  Q   D 100 + 8 [fstrim]\n"
	"  8,16   5       15    10.000356669     0  C   R 1444645666 + 256 [0]\n"
	"\n"
	"CPU0 (8,16):\n"
	" Reads Queued:           1,      128KiB\n";

static void test_blkparse_ok(void **state)
{
	struct sim_io io[8];
	char err[SIM_ERR_MAX];
	int code, n = read_all(blk_ok, "blkparse", io, 8, err, sizeof(err), &code);

	assert_int_equal(code, 0);
	assert_int_equal(n, 3);   /* two data Q events and the flush; A, m, D, P, C and discard skipped */
	assert_int_equal(io[0].arrival_ns, 1850);
	assert_int_equal(io[0].op, POLICY_OP_READ);
	assert_true(io[0].flags & POLICY_REQ_SYNC);
	assert_true(io[0].offset == 1444645666ull * 512);
	assert_int_equal(io[0].len, 256 * 512);
	assert_int_equal(io[0].stream, 18615);
	assert_int_equal(io[0].dev, (8u << 20) | 16);
	assert_true(io[1].arrival_ns == 9378427326ull);
	assert_int_equal(io[1].op, POLICY_OP_WRITE);
	assert_true(io[1].flags & POLICY_REQ_SYNC);
	assert_int_equal(io[1].len, 4096);
	assert_int_equal(io[1].stream, 16766);
	assert_int_equal(io[2].op, POLICY_OP_FLUSH);
	assert_int_equal(io[2].len, 0);
}

static void test_blkparse_errors(void **state)
{
	expect_error("  8,16   5   1  0.1  18615  Q   R 1444645666 + 256 [java]\nfoo bar\n", "blkparse",
		     "t:2: 'foo' is not a device 'major,minor': expected a blkparse event line "
		     "'maj,min cpu seq time pid action rwbs ...'");
	expect_error("8,16 5 1 0.1 18615\n", "blkparse",
		     "t:1: 5 fields, a blkparse event needs at least 6 (maj,min cpu seq time pid action)");
	expect_error("8,16 x 1 0.1 18615 Q R 1 + 8 [a]\n", "blkparse", "t:1: cpu 'x' is not a number");
	expect_error("8,16 5 1 0.1s 18615 Q R 1 + 8 [a]\n", "blkparse",
		     "t:1: time '0.1s' is not seconds.nanoseconds");
	expect_error("8,16 5 1 0.1 -3 Q R 1 + 8 [a]\n", "blkparse", "t:1: pid '-3' is not a number");
	expect_error("8,16 5 1 0.1 3 Q r 1 + 8 [a]\n", "blkparse",
		     "t:1: rwbs 'r' is not made of capital letters (R, W, D, F, S ...)");
	expect_error("8,16 5 1 0.1 3 Q R 1 - 8 [a]\n", "blkparse",
		     "t:1: Q event: expected 'sector + blocks' after rwbs 'R'");
	expect_error("8,16 5 1 0.1 3 Q R 1x + 8 [a]\n", "blkparse",
		     "t:1: sector '1x' is not a sector number");
	expect_error("8,16 5 1 0.1 3 Q R 1 + y [a]\n", "blkparse",
		     "t:1: block count 'y' is not a number of sectors");
	expect_error("8,16 5 1 0.1 3 Q R 1 + 0 [a]\n", "blkparse", "t:1: R request of 0 blocks");
	expect_error("8,16 5 1 0.1 3 QQQ R 1 + 8 [a]\n", "blkparse",
		     "t:1: action 'QQQ' is not a blktrace action (Q, G, I, D, C ...)");
	expect_error("8,16 5 1 0.1 3 Q\n", "blkparse", "t:1: Q event without rwbs field");
}

static void test_disksim_ascii(void **state)
{
	static const char ok[] = "13.191135\t30\t0\t5\t1\n17.829285\t20\t576560\t6\t0\n"
				 "17.5\t20\t8\t6\t0\n";
	struct sim_io io[4];
	char err[SIM_ERR_MAX];
	int code, n = read_all(ok, "disksim", io, 4, err, sizeof(err), &code);
	struct sim_source *src;

	assert_int_equal(code, 0);
	assert_int_equal(n, 3);
	assert_int_equal(io[0].arrival_ns, 13191135);
	assert_int_equal(io[0].dev, 30);
	assert_int_equal(io[0].op, POLICY_OP_READ);
	assert_int_equal(io[0].len, 2560);
	assert_int_equal(io[1].op, POLICY_OP_WRITE);
	assert_true(io[1].offset == 576560ull * 512);
	/* An arrival earlier than the previous one is moved forward and counted. */
	assert_int_equal(io[2].arrival_ns, 17829285);
	src = open_text(ok, "disksim");
	while (sim_source_next(src, &io[3]) > 0)
		;
	assert_int_equal(src->clamped, 1);
	sim_source_destroy(src);

	expect_error("1 2 3 4\n", "disksim",
		     "t:1: 4 fields, expected 5: arrival_ms devno blkno bcount flags");
	expect_error("1 2 3 4 5\n-1 2 3 4 5\n", "disksim",
		     "t:2: arrival time '-1' is not a non-negative number of milliseconds");
	expect_error("1 x 3 4 5\n", "disksim", "t:1: device number 'x' is not a number");
	expect_error("1 2 3z 4 5\n", "disksim", "t:1: block number '3z' is not a block number");
	expect_error("1 2 3 0 5\n", "disksim",
		     "t:1: block count '0' is not a positive number of blocks");
	expect_error("1 2 3 4 0x1\n", "disksim", "t:1: flags '0x1' is not a number (bit 0 = read)");
}

static void test_validate(void **state)
{
	static const char ok[] = "R Hit    2992396   4  13670.00000  35942.00000\n"
				 "W Doub 1194877    15     17221.000     21894.380\n";
	struct sim_io io[4];
	char err[SIM_ERR_MAX];
	int code, n = read_all(ok, "validate", io, 4, err, sizeof(err), &code);
	struct sim_source *src = open_text(ok, "validate");

	assert_true(src->closed_loop);
	sim_source_destroy(src);
	assert_int_equal(code, 0);
	assert_int_equal(n, 2);
	assert_int_equal(io[0].op, POLICY_OP_READ);
	assert_true(io[0].offset == 2992396ull * 512);
	assert_int_equal(io[0].len, 2048);
	assert_int_equal(io[0].measured_ns, 13670000);
	assert_int_equal(io[0].think_ns, 35942000);
	assert_int_equal(io[1].op, POLICY_OP_WRITE);
	assert_int_equal(io[1].think_ns, 21894380);

	expect_error("X Hit 1 4 1 1\n", "validate", "t:1: operation 'X' is neither R nor W");
	expect_error("R Hot 1 4 1 1\n", "validate",
		     "t:1: buffer action 'Hot' is not Hit, Miss, Doub or Trip");
	expect_error("R Hit 1 0 1 1\n", "validate",
		     "t:1: block count '0' is not a positive number of blocks");
	expect_error("R Hit 1 4 -1 1\n", "validate",
		     "t:1: service time '-1' is not a non-negative number of microseconds");
	expect_error("R Hit 1 4 1 x\n", "validate",
		     "t:1: next inter-arrival time 'x' is not a non-negative number of microseconds");
	expect_error("R Hit 1 4 1\n", "validate",
		     "t:1: 5 fields, expected 6: R|W Hit|Miss|Doub|Trip blkno blocks service_us "
		     "next_interarrival_us");
}

static void test_mqsim(void **state)
{
	static const char ok[] = "938513000 4 264719034 16 0\n938828000 3 197570570 16 1\n";
	struct sim_io io[4];
	char err[SIM_ERR_MAX];
	int code, n = read_all(ok, "mqsim", io, 4, err, sizeof(err), &code);

	assert_int_equal(code, 0);
	assert_int_equal(n, 2);
	assert_int_equal(io[0].arrival_ns, 938513000);
	assert_int_equal(io[0].dev, 4);
	assert_int_equal(io[0].op, POLICY_OP_WRITE);
	assert_int_equal(io[0].len, 8192);
	assert_int_equal(io[1].op, POLICY_OP_READ);

	expect_error("1 2 3 4 2\n", "mqsim", "t:1: type '2' is neither 0 (write) nor 1 (read)");
	expect_error("1.5 2 3 4 0\n", "mqsim", "t:1: arrival time '1.5' is not a number of nanoseconds");
	expect_error("1 2 3 0 0\n", "mqsim", "t:1: size '0' is not a positive number of sectors");
	expect_error("1 2 3 4\n", "mqsim",
		     "t:1: 4 fields, expected 5: arrival_ns device lba_sectors size_sectors type");
}

static void test_csv(void **state)
{
	static const char ok[] = "# a comment\n"
				 "time_ms, op, offset, bytes, stream, sync\n"
				 "0.125,W,1048576,65536,7,1\n"
				 "\n"
				 "1,read,0,4096,8,0\n"
				 "2,F,0,0,8,0\n";
	static const char ok2[] = "lba,sectors,op,time_ns,dev\n10,8,R,5,3\n";
	struct sim_io io[4];
	char err[SIM_ERR_MAX];
	int code, n = read_all(ok, "csv", io, 4, err, sizeof(err), &code);

	assert_int_equal(code, 0);
	assert_int_equal(n, 3);
	assert_int_equal(io[0].arrival_ns, 125000);
	assert_int_equal(io[0].op, POLICY_OP_WRITE);
	assert_int_equal(io[0].offset, 1048576);
	assert_int_equal(io[0].len, 65536);
	assert_int_equal(io[0].stream, 7);
	assert_true(io[0].flags & POLICY_REQ_SYNC);
	assert_int_equal(io[1].op, POLICY_OP_READ);
	assert_true(io[1].flags & POLICY_REQ_SYNC);
	assert_int_equal(io[2].op, POLICY_OP_FLUSH);
	n = read_all(ok2, "csv", io, 4, err, sizeof(err), &code);
	assert_int_equal(n, 1);
	assert_int_equal(io[0].offset, 5120);
	assert_int_equal(io[0].len, 4096);
	assert_int_equal(io[0].arrival_ns, 5);
	assert_int_equal(io[0].dev, 3);

	expect_error("time_s,op,offset,bytes,colour\n", "csv",
		     "t:1: header: unknown column 'colour' (known: time_s, time_ms, time_us, time_ns, "
		     "op, offset, lba, bytes, len, sectors, stream, pid, dev, sync)");
	expect_error("time_s,op,offset\n", "csv", "t:1: header: no bytes, len or sectors column");
	expect_error("time_s,op,offset,lba,bytes\n", "csv", "t:1: header: column 'lba' repeats 'offset'");
	expect_error("time_s,op,offset,bytes\n1,W,0\n", "csv", "t:2: 3 fields, the header has 4");
	expect_error("time_s,op,offset,bytes\n1,X,0,1\n", "csv",
		     "t:2: op 'X' is not R, W, F, read, write or flush");
	expect_error("time_s,op,offset,bytes\n1,W,0,0\n", "csv", "t:2: size 0 for a write");
	expect_error("time_s,op,offset,bytes\n-1,W,0,8\n", "csv",
		     "t:2: time '-1' is not a non-negative decimal number");
	expect_error("time_s,op,offset,bytes,sync\n1,W,0,8,2\n", "csv", "t:2: sync '2' is neither 0 nor 1");
}

static void test_limits(void **state)
{
	char *big = malloc(SIM_TRACE_LINE_MAX + 100);
	static const char nul[] = "1 2 3 4 1\n1 2\0 3 4 1\n";
	struct sim_source *src;
	struct sim_io io;
	char err[256];
	FILE *fp;

	assert_non_null(big);
	memset(big, '1', SIM_TRACE_LINE_MAX + 50);
	big[SIM_TRACE_LINE_MAX + 50] = '\n';
	big[SIM_TRACE_LINE_MAX + 51] = '\0';
	expect_error(big, "mqsim", "t:1: line longer than 4096 characters");
	free(big);

	fp = fmemopen((void *)nul, sizeof(nul) - 1, "r");
	assert_int_equal(sim_trace_open_fp(fp, "t", true, "disksim", &src, err, sizeof(err)), 0);
	assert_int_equal(sim_source_next(src, &io), 1);
	assert_int_equal(sim_source_next(src, &io), -EINVAL);
	assert_string_equal(src->err, "t:2: contains a NUL byte: is this a text trace?");
	sim_source_destroy(src);

	assert_int_equal(sim_trace_open("/nonexistent/x", "csv", &src, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "cannot open trace /nonexistent/x: No such file or directory");
	assert_int_equal(sim_trace_open("/dev/null", "spc", &src, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "unknown trace format 'spc' (known: blkparse, disksim, validate, "
				 "mqsim, csv)");
}

/* The shared traces parse to the end (skipped without the shared data). */
static void test_shared_traces(void **state)
{
	static const struct { const char *file, *format; int n; } t[] = {
		{ "hadoop/java-blkparse.txt", "blkparse", 15524 },
		{ "disksim/ascii.trace", "disksim", 100000 },
		{ "disksim/barracuda.trace", "validate", 10000 },
		{ "disksim/hp_c2247a.trace", "validate", 9999 },
		{ "mqsim/tpcc-small.trace", "mqsim", 6999 },
		{ "mqsim/wsrch-small.trace", "mqsim", 24783 },   /* last line has no newline */
	};
	const char *dir = getenv("IOSIG_SIM_TRACES");

	if (!dir || !*dir) {
		skip();
		return;
	}
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct sim_source *src;
		struct sim_io io;
		char path[1024], err[256];
		int n = 0, r;

		snprintf(path, sizeof(path), "%s/%s", dir, t[i].file);
		assert_int_equal(sim_trace_open(path, t[i].format, &src, err, sizeof(err)), 0);
		while ((r = sim_source_next(src, &io)) > 0)
			n++;
		if (r < 0)
			fail_msg("%s", src->err);
		assert_int_equal(n, t[i].n);
		sim_source_destroy(src);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_blkparse_ok),
		cmocka_unit_test(test_blkparse_errors),
		cmocka_unit_test(test_disksim_ascii),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_mqsim),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_shared_traces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
