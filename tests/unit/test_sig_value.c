/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for iosig_parse_value(): the one parser of sizes, times,
 * fractions and rates with units used by the tools, the catalog
 * configuration, the policies' and the simulator's options and the string
 * forms inside pragmas.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "iosig.h"

static void test_valid(void **state)
{
	static const struct {
		const char *text;
		enum iosig_dim dim;
		double value;
	} cases[] = {
		{ "64*MiB", IOSIG_DIM_SIZE, 67108864.0 },
		{ "64MiB", IOSIG_DIM_SIZE, 67108864.0 },
		{ "64 MiB", IOSIG_DIM_SIZE, 67108864.0 },
		{ "  64\tMiB \n", IOSIG_DIM_SIZE, 67108864.0 },
		{ "1.5 GiB", IOSIG_DIM_SIZE, 1610612736.0 },
		{ "1.5GiB", IOSIG_DIM_SIZE, 1610612736.0 },
		{ "4096", IOSIG_DIM_SIZE, 4096.0 },
		{ "(1+2)*GiB", IOSIG_DIM_SIZE, 3221225472.0 },
		{ "1 GiB + 512 MiB", IOSIG_DIM_SIZE, 1610612736.0 },
		{ "2 KiB * 3", IOSIG_DIM_SIZE, 6144.0 },
		{ "0x10 KiB", IOSIG_DIM_SIZE, 16384.0 },
		{ "0x1B", IOSIG_DIM_SIZE, 27.0 }, /* hex digits win over the unit B */
		{ "0B", IOSIG_DIM_SIZE, 0.0 },
		{ "1e3B", IOSIG_DIM_SIZE, 1000.0 },
		{ "\"1GiB\"", IOSIG_DIM_SIZE, 1073741824.0 },
		{ "8 K", IOSIG_DIM_SIZE, 8192.0 },
		{ "8KB", IOSIG_DIM_SIZE, 8192.0 },
		{ "2M + 2MB", IOSIG_DIM_SIZE, 4194304.0 },
		{ "1G", IOSIG_DIM_SIZE, 1073741824.0 },
		{ "1T", IOSIG_DIM_SIZE, 1099511627776.0 },
		{ "1 TB", IOSIG_DIM_SIZE, 1099511627776.0 },
		{ "2PiB", IOSIG_DIM_SIZE, 2251799813685248.0 },
		{ "20*y", IOSIG_DIM_TIME, 630720000.0 },
		{ "20y", IOSIG_DIM_TIME, 630720000.0 },
		{ "1.5 h", IOSIG_DIM_TIME, 5400.0 },
		{ "90min", IOSIG_DIM_TIME, 5400.0 },
		{ "250ms", IOSIG_DIM_TIME, 0.25 },
		{ "3 d", IOSIG_DIM_TIME, 259200.0 },
		{ "2w", IOSIG_DIM_TIME, 1209600.0 },
		{ "1mo", IOSIG_DIM_TIME, 2592000.0 },
		{ "30 s", IOSIG_DIM_TIME, 30.0 },
		{ "3600", IOSIG_DIM_TIME, 3600.0 },
		{ "250us", IOSIG_DIM_TIME, 250e-6 },
		{ "1.5 us", IOSIG_DIM_TIME, 1.5e-6 },
		{ "300ns", IOSIG_DIM_TIME, 300e-9 },
		{ "430MiB/s", IOSIG_DIM_RATE, 450887680.0 },
		{ "2 MB / s", IOSIG_DIM_RATE, 2097152.0 },
		{ "1GiB/ms", IOSIG_DIM_RATE, 1073741824000.0 },
		{ "1048576", IOSIG_DIM_RATE, 1048576.0 },
		{ "100ppm", IOSIG_DIM_FRACTION, 1e-4 },
		{ "100 * ppm", IOSIG_DIM_FRACTION, 1e-4 },
		{ "0.001", IOSIG_DIM_FRACTION, 0.001 },
		{ "1e-6", IOSIG_DIM_FRACTION, 1e-6 },
		{ "42", IOSIG_DIM_NONE, 42.0 },
		{ "-5", IOSIG_DIM_NONE, -5.0 }, /* sign checks are the caller's */
		{ "7/2", IOSIG_DIM_NONE, 3.0 }, /* C integer division */
		{ "7.0/2", IOSIG_DIM_NONE, 3.5 },
		{ "GiB/MiB", IOSIG_DIM_NONE, 1024.0 },
		{ "-0", IOSIG_DIM_NONE, 0.0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_error err;
		double v = -12345;
		int r = iosig_parse_value(cases[i].text, cases[i].dim, &v, &err);

		if (r != 0)
			fail_msg("'%s': %d %s", cases[i].text, r, err.msg);
		if (v != cases[i].value)
			fail_msg("'%s': got %.17g, want %.17g", cases[i].text, v, cases[i].value);
		assert_false(signbit(v) && v == 0);
	}
}

static void test_invalid(void **state)
{
	static const struct {
		const char *text;
		enum iosig_dim dim;
		int ret;
		int column;
		size_t length;
		const char *msg;
	} cases[] = {
		{ "", IOSIG_DIM_SIZE, -EINVAL, 1, 0, "empty value: write a number with an optional unit" },
		{ "   ", IOSIG_DIM_SIZE, -EINVAL, 1, 3, "empty value" },
		{ "20y", IOSIG_DIM_SIZE, -EINVAL, 3, 1, "expected a size, but '20y' is a time; 'y' is the unit 'years (365 days)' here" },
		{ "64 MiB", IOSIG_DIM_TIME, -EINVAL, 4, 3, "expected a time, but '64 MiB' is a size" },
		{ "5 ms", IOSIG_DIM_FRACTION, -EINVAL, 3, 2, "expected a fraction" },
		{ "64 MiB", IOSIG_DIM_NONE, -EINVAL, 4, 3, "expected a plain number without a unit, but '64 MiB' is a size" },
		{ "64 Mib", IOSIG_DIM_SIZE, -EINVAL, 4, 3, "unknown unit 'Mib'; did you mean 'MiB'?" },
		{ "64 kb", IOSIG_DIM_SIZE, -EINVAL, 4, 2, "unknown unit 'kb'; did you mean 'KB'?" },
		{ "64k", IOSIG_DIM_SIZE, -EINVAL, 3, 1, "unknown unit 'k'; did you mean 'K'?" },
		{ "5 sec", IOSIG_DIM_TIME, -EINVAL, 3, 3, "unknown unit 'sec'" },
		{ "1e", IOSIG_DIM_SIZE, -EINVAL, 2, 1, "unknown unit 'e'" },
		{ "x", IOSIG_DIM_SIZE, -EINVAL, 1, 1, "'x' is not a constant: values must be constants here (a number with an optional unit such as 64*MiB)" },
		{ "$0", IOSIG_DIM_SIZE, -EINVAL, 1, 2, "'$0' is not allowed here: write a constant value" },
		{ "64 MiB MiB", IOSIG_DIM_SIZE, -EINVAL, 8, 3, "expected the end of the value before 'MiB'" },
		{ "64 MiB 3", IOSIG_DIM_SIZE, -EINVAL, 8, 1, "expected the end of the value before '3'" },
		{ "(64", IOSIG_DIM_SIZE, -EINVAL, 4, 0, "expected ')' to close the '(' at line 1, column 1 before end of text" },
		{ "1/0", IOSIG_DIM_NONE, -EINVAL, 1, 3, "division by zero in '1/0'" },
		{ "MiB*MiB", IOSIG_DIM_SIZE, -EINVAL, 1, 7, "cannot multiply a size by a size" },
		{ "1e999", IOSIG_DIM_NONE, -ERANGE, 1, 5, "floating constant '1e999' is out of range" },
		{ "1e308*10", IOSIG_DIM_NONE, -ERANGE, 1, 8, "overflow in constant expression" },
		{ "99999999999999999999", IOSIG_DIM_NONE, -ERANGE, 1, 20, "too large" },
		{ "9223372036854775807 + 1", IOSIG_DIM_NONE, -ERANGE, 1, 23, "integer overflow" },
		{ "1 = 2", IOSIG_DIM_NONE, -EINVAL, 3, 1, "'=' is not allowed" },
		{ "64 MiB\n+ h", IOSIG_DIM_SIZE, -EINVAL, 3, 1, "cannot add a size and a time" },
		{ "2MB", IOSIG_DIM_RATE, -EINVAL, 2, 2, "expected a rate, but '2MB' is a size" },
		{ "2MB/s", IOSIG_DIM_SIZE, -EINVAL, 5, 1, "cannot divide a size by a time" },
		{ "2/s", IOSIG_DIM_RATE, -EINVAL, 3, 1, "cannot divide a plain number by a time" },
		{ "5 usec", IOSIG_DIM_TIME, -EINVAL, 3, 4, "unknown unit 'usec'" },
		{ "5 sec", IOSIG_DIM_TIME, -EINVAL, 3, 3, "times: ns us ms s min h d w mo y" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_error err;
		double v = -12345;
		int r;

		memset(&err, 0, sizeof(err));
		r = iosig_parse_value(cases[i].text, cases[i].dim, &v, &err);
		if (r != cases[i].ret || err.column != cases[i].column ||
		    err.length != cases[i].length || !strstr(err.msg, cases[i].msg))
			fail_msg("'%s': got %d col %d len %zu '%s', want %d col %d len %zu '%s'",
				 cases[i].text, r, err.column, err.length, err.msg, cases[i].ret,
				 cases[i].column, cases[i].length, cases[i].msg);
		assert_true(v == -12345); /* untouched */
	}
	/* the last case is on line 2 */
	{
		struct iosig_error err;
		double v;

		assert_int_equal(iosig_parse_value("64 MiB\n+ h", IOSIG_DIM_SIZE, &v, &err),
				 -EINVAL);
		assert_int_equal(err.line, 2);
		assert_int_equal(err.offset, 9);
	}
	assert_int_equal(iosig_parse_value(NULL, IOSIG_DIM_SIZE, &(double){ 0 }, NULL), -EINVAL);
	assert_int_equal(iosig_parse_value("1", IOSIG_DIM_SIZE, NULL, NULL), -EINVAL);
	assert_int_equal(iosig_parse_value("1", (enum iosig_dim)9, &(double){ 0 }, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
