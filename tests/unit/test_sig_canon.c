/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the canonical signature text (the ABI between compiler
 * plugins and libiosig): iosig_pragma_canonical(), iosig_sig_parse() with
 * slot values, iosig_sig_format(), and their round trip.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "comma_locale.h"
#include "iosig.h"
#include "pragma_ok.h"

static struct iosig_sig sig_ok(const char *text, const double *values, unsigned n)
{
	struct iosig_sig sig;
	struct iosig_error err;
	int r;

	memset(&sig, 0xaa, sizeof(sig));
	r = iosig_sig_parse(text, NULL, values, n, &sig, &err);
	if (r != 0)
		fail_msg("'%s': %d %s", text, r, err.msg);
	return sig;
}

static void test_canonical_strings(void **state)
{
	static const struct {
		const char *pragma;
		const char *canon;
		unsigned nslots;
	} cases[] = {
		{ "sig", "", 0 },
		{ "sig random persist global", "global persist random_access", 0 },
		{ "sig tamperproof archive temp local sequential",
		  "local tmp sequential_access archive tamper", 0 },
		{ "sigdef name(\"checkpoint\") persist sequential_access size_per_io(64*MiB) "
		  "min_mttdl(20*y)",
		  "persist sequential_access size_per_io(67108864) min_mttdl(630720000) "
		  "name(\"checkpoint\")", 0 },
		{ "sig MTTDL(0.5*s) availability(1e-9) size_per_IO(chunk)",
		  "size_per_io($0) min_mttdl(0.5) availability(1e-09)", 1 },
		{ "sig availability(1/3.0)", "availability(0.3333333333333333)", 0 },
		{ "sig availability(0.1)", "availability(0.1)", 0 },
		{ "sig min_mttdl(1e20)", "min_mttdl(1e+20)", 0 },
		{ "sig min_mttdl(123456789012345678)", "min_mttdl(1.2345678901234568e+17)", 0 },
		{ "sig min_mttdl(12345678901234567)", "min_mttdl(12345678901234568)", 0 },
		{ "sig min_mttdl(1.5*ms)", "min_mttdl(0.0015)", 0 },
		{ "sig name(\"q\\\"uo\\\\te\")", "name(\"q\\\"uo\\\\te\")", 0 },
		{ "jobwide name(\"job\") lifetime(hours * h)", "lifetime($0) name(\"job\")", 1 },
		{ "sig totalsize(a) size_per_io(b) min_mttdl(c) availability(d2)",
		  "size_per_io($0) totalsize($1) min_mttdl($2) availability($3)", 4 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_pragma *p = parse_ok(cases[i].pragma);
		const struct iosig_expr *slots[IOSIG_P_COUNT];
		unsigned n = 99;
		char buf[256];

		assert_int_equal(iosig_pragma_canonical(p, buf, sizeof(buf), slots,
							IOSIG_P_COUNT, &n), 0);
		assert_string_equal(buf, cases[i].canon);
		assert_int_equal(n, cases[i].nslots);
		iosig_pragma_free(p);
	}
}

static void test_canonical_nospace(void **state)
{
	struct iosig_pragma *p = parse_ok("sig persist size_per_io(x) totalsize(z)");
	const struct iosig_expr *slots[2] = { NULL, NULL };
	unsigned n = 77;
	char buf[64];

	/* exactly fitting buffer: strlen + NUL */
	assert_int_equal(iosig_pragma_canonical(p, buf, 38, slots, 2, &n), 0);
	assert_string_equal(buf, "persist size_per_io($0) totalsize($1)");
	assert_int_equal(n, 2);
	assert_string_equal(slots[0]->text, "x");
	assert_string_equal(slots[1]->text, "z");
	/* one byte short */
	n = 77;
	slots[0] = slots[1] = NULL;
	assert_int_equal(iosig_pragma_canonical(p, buf, 37, slots, 2, &n), -ENOSPC);
	assert_int_equal(n, 77);
	assert_null(slots[0]);
	/* too few slots */
	assert_int_equal(iosig_pragma_canonical(p, buf, sizeof(buf), slots, 1, &n), -ENOSPC);
	assert_int_equal(iosig_pragma_canonical(p, buf, sizeof(buf), NULL, 0, &n), -ENOSPC);
	assert_int_equal(n, 77);
	assert_null(slots[0]);
	assert_int_equal(iosig_pragma_canonical(p, NULL, 0, slots, 2, &n), -ENOSPC);
	assert_int_equal(iosig_pragma_canonical(p, NULL, 5, slots, 2, &n), -EINVAL);
	assert_int_equal(iosig_pragma_canonical(NULL, buf, sizeof(buf), slots, 2, &n), -EINVAL);
	iosig_pragma_free(p);
	/* constant pragmas need no slot array */
	p = parse_ok("sig random");
	assert_int_equal(iosig_pragma_canonical(p, buf, sizeof(buf), NULL, 0, NULL), 0);
	assert_string_equal(buf, "random_access");
	iosig_pragma_free(p);
}

static void test_sig_parse_values(void **state)
{
	const double values[] = { 4096, 3.5, 0.25, 86400 };
	struct iosig_sig s;

	s = sig_ok("persist random_access size_per_io($0) totalsize($1) min_mttdl(630720000) "
		   "availability($2) name(\"ckpt\")", values, 4);
	assert_int_equal(s.set, IOSIG_HAS(IOSIG_P_PERSIST) | IOSIG_HAS(IOSIG_P_RANDOM) |
				IOSIG_HAS(IOSIG_P_SIZE_PER_IO) | IOSIG_HAS(IOSIG_P_TOTALSIZE) |
				IOSIG_HAS(IOSIG_P_MIN_MTTDL) | IOSIG_HAS(IOSIG_P_AVAILABILITY) |
				IOSIG_HAS(IOSIG_P_NAME));
	assert_int_equal(s.size_per_io, 4096);
	assert_int_equal(s.totalsize, 4); /* 3.5 bytes: nearest byte */
	assert_true(s.min_mttdl == 630720000.0);
	assert_true(s.availability == 0.25);
	assert_true(s.lifetime == 0);
	assert_string_equal(s.name, "ckpt");
	assert_int_equal(s.reserved0, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(s.reserved[i], 0);
	/* leading keyword optional; units and juxtaposition as users type them */
	s = sig_ok("sig size_per_io(64MiB) totalsize(1.5 GiB) min_mttdl(\"20y\")", NULL, 0);
	assert_int_equal(s.size_per_io, 64ull << 20);
	assert_int_equal(s.totalsize, 3ull << 29);
	assert_true(s.min_mttdl == 630720000.0);
	/* a jobwide text (canonical text drops the keyword) */
	s = sig_ok("lifetime($3) name(\"job\")", values, 4);
	assert_int_equal(s.set, IOSIG_HAS(IOSIG_P_LIFETIME) | IOSIG_HAS(IOSIG_P_NAME));
	assert_true(s.lifetime == 86400.0);
	s = sig_ok("jobwide lifetime(2 d)", NULL, 0);
	assert_true(s.lifetime == 172800.0);
	/* slots inside expressions */
	s = sig_ok("size_per_io($0 * 2 + 1 KiB)", values, 1);
	assert_int_equal(s.size_per_io, 9216);
	/* empty */
	s = sig_ok("", NULL, 0);
	assert_int_equal(s.set, 0);
	s = sig_ok("  sig  ", NULL, 0);
	assert_int_equal(s.set, 0);
}

static void test_sig_parse_errors(void **state)
{
	static const struct {
		const char *text;
		unsigned nvalues;
		double v0;
		int ret;
		int column;
		const char *msg;
	} cases[] = {
		{ "size_per_io(chunk)", 0, 0, -EINVAL, 13, "'chunk' is not a constant: values must be constants here (a number with an optional unit such as 64*MiB, or $N for a value given at run time)" },
		{ "size_per_io(64 Mib)", 0, 0, -EINVAL, 16, "unknown unit 'Mib'; did you mean 'MiB'?" },
		{ "size_per_io(64 bytes)", 0, 0, -EINVAL, 16, "unknown unit 'bytes'; sizes: B KiB MiB" },
		{ "size_per_io($1)", 1, 0, -EINVAL, 13, "slot '$1' has no value: 1 value is given" },
		{ "size_per_io($0)", 0, 0, -EINVAL, 13, "slot '$0' has no value: 0 values are given" },
		{ "sigdef name(\"x\")", 0, 0, -EINVAL, 1, "a sigdef only defines a signature" },
		{ "sig lifetime(1)", 0, 0, -EINVAL, 5, "'lifetime' is only allowed in '#pragma io jobwide'" },
		{ "jobwide random", 0, 0, -EINVAL, 9, "not allowed in '#pragma io jobwide'" },
		{ "random sequential", 0, 0, -EINVAL, 8, "contradicts" },
		{ "size_per_io(3*h)", 0, 0, -EINVAL, 15, "'size_per_io' expects a size" },
		/* nonsensical values */
		{ "size_per_io($0)", 1, -1, -ERANGE, 13, "size_per_io must be between 0 and 2^63 bytes (8 EiB), not -1" },
		{ "totalsize($0)", 1, NAN, -ERANGE, 11, "totalsize must be between 0 and 2^63" },
		{ "totalsize($0)", 1, INFINITY, -ERANGE, 11, "totalsize must be between 0 and 2^63" },
		{ "totalsize($0)", 1, 1.8446744073709552e19, -ERANGE, 11, "between 0 and 2^63" },
		{ "min_mttdl($0)", 1, -5, -ERANGE, 11, "min_mttdl must be a finite, non-negative time" },
		{ "min_mttdl($0 * y)", 1, INFINITY, -ERANGE, 11, "overflow" },
		{ "lifetime($0)", 1, NAN, -ERANGE, 10, "lifetime must be a finite, non-negative time" },
		{ "availability($0)", 1, 1.5, -ERANGE, 14, "availability is a probability of loss and must be between 0 and 1" },
		{ "availability($0)", 1, -1e-9, -ERANGE, 14, "between 0 and 1" },
		{ "size_per_io(KiB / $0)", 1, 0, -ERANGE, 13, "division by zero" },
		{ "size_per_io(-1)", 0, 0, -ERANGE, 13, "size_per_io must be between 0 and 2^63" },
		{ "size_per_io(1024*1024*1024*1024*1024*1024*1024*TiB)", 0, 0, -ERANGE, 13, "integer overflow" },
		{ "size_per_io(1e999)", 0, 0, -ERANGE, 13, "out of range" },
		{ "availability(2)", 0, 0, -ERANGE, 14, "between 0 and 1" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_sig s;
		struct iosig_error err;
		double v[1] = { cases[i].v0 };
		int r;

		memset(&s, 0x5a, sizeof(s));
		r = iosig_sig_parse(cases[i].text, NULL, v, cases[i].nvalues, &s, &err);
		if (r != cases[i].ret || err.column != cases[i].column || err.line != 1 ||
		    !strstr(err.msg, cases[i].msg))
			fail_msg("'%s': got %d at column %d '%s', want %d at %d '%s'",
				 cases[i].text, r, err.column, err.msg, cases[i].ret,
				 cases[i].column, cases[i].msg);
		assert_int_equal(s.set, 0x5a5a5a5a); /* untouched */
	}
	assert_int_equal(iosig_sig_parse(NULL, NULL, NULL, 0, &(struct iosig_sig){ 0 }, NULL),
			 -EINVAL);
	assert_int_equal(iosig_sig_parse("persist", NULL, NULL, 0, NULL, NULL), -EINVAL);
}

static void test_sig_format(void **state)
{
	struct iosig_sig s;
	char buf[256];
	int n;

	memset(&s, 0, sizeof(s));
	assert_int_equal(iosig_sig_format(&s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	s.set = IOSIG_HAS(IOSIG_P_GLOBAL) | IOSIG_HAS(IOSIG_P_TMP) | IOSIG_HAS(IOSIG_P_ARCHIVE) |
		IOSIG_HAS(IOSIG_P_SIZE_PER_IO) | IOSIG_HAS(IOSIG_P_MIN_MTTDL) |
		IOSIG_HAS(IOSIG_P_AVAILABILITY) | IOSIG_HAS(IOSIG_P_LIFETIME) |
		IOSIG_HAS(IOSIG_P_NAME) | IOSIG_HAS(IOSIG_P_TOTALSIZE);
	s.size_per_io = 1ull << 63;
	s.totalsize = 12345;
	s.min_mttdl = 0.1;
	s.availability = 1e-6;
	s.lifetime = 86400;
	strcpy(s.name, "a\"b");
	n = iosig_sig_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "global tmp archive size_per_io(9223372036854775808) "
				 "totalsize(12345) min_mttdl(0.1) availability(1e-06) "
				 "lifetime(86400) name(\"a\\\"b\")");
	assert_int_equal(n, (int)strlen(buf));
	/* snprintf semantics */
	assert_int_equal(iosig_sig_format(&s, NULL, 0), n);
	assert_int_equal(iosig_sig_format(&s, buf, 10), n);
	assert_string_equal(buf, "global tm");
	/* invalid signatures */
	s.size_per_io = (1ull << 63) + 1;
	assert_int_equal(iosig_sig_format(&s, buf, sizeof(buf)), -ERANGE);
	s.size_per_io = 1;
	s.availability = 2;
	assert_int_equal(iosig_sig_format(&s, buf, sizeof(buf)), -ERANGE);
	s.availability = 0;
	s.min_mttdl = NAN;
	assert_int_equal(iosig_sig_format(&s, buf, sizeof(buf)), -ERANGE);
	s.min_mttdl = 1;
	s.name[0] = '\0';
	assert_int_equal(iosig_sig_format(&s, buf, sizeof(buf)), -EINVAL);
	strcpy(s.name, "tab\there");
	assert_int_equal(iosig_sig_format(&s, buf, sizeof(buf)), -EINVAL);
	memset(s.name, 'x', sizeof(s.name));
	assert_int_equal(iosig_sig_format(&s, buf, sizeof(buf)), -EINVAL);
	s.set = 1u << IOSIG_P_COUNT;
	assert_int_equal(iosig_sig_format(&s, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(iosig_sig_format(NULL, buf, sizeof(buf)), -EINVAL);
}

/*
 * Round trip: pragma -> canonical text (+ slot values computed here) ->
 * iosig_sig_parse -> struct, and the struct formats back to the same text
 * when every value was constant.
 */
static void test_round_trip(void **state)
{
	static const struct {
		const char *pragma;
		double values[4];
		const char *formatted;
	} cases[] = {
		{ "sig persist sequential size_per_io(64*MiB) min_mttdl(20*y) "
		  "availability(100*ppm) totalsize(3*GiB + 512*MiB) global archive tamper",
		  { 0 },
		  "global persist sequential_access archive tamper size_per_io(67108864) "
		  "totalsize(3758096384) min_mttdl(630720000) availability(0.0001)" },
		{ "sig size_per_io(chunk * KiB) totalsize(n * GiB) min_mttdl(3.25*d) random tmp",
		  { 8192, 4294967296.0 },
		  "tmp random_access size_per_io(8192) totalsize(4294967296) min_mttdl(280800)" },
		{ "sig name(\"x y\") availability(1.0/7) MTTDL(1e-3)", { 0 },
		  "min_mttdl(0.001) availability(0.14285714285714285) name(\"x y\")" },
		{ "jobwide lifetime(days * d)", { 1.5 * 86400 }, "lifetime(129600)" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iosig_pragma *p = parse_ok(cases[i].pragma);
		const struct iosig_expr *slots[IOSIG_P_COUNT];
		struct iosig_sig s;
		char canon[256], back[256];
		unsigned n;

		assert_int_equal(iosig_pragma_canonical(p, canon, sizeof(canon), slots,
							IOSIG_P_COUNT, &n), 0);
		s = sig_ok(canon, cases[i].values, n);
		assert_true(iosig_sig_format(&s, back, sizeof(back)) > 0);
		assert_string_equal(back, cases[i].formatted);
		if (n == 0)
			assert_string_equal(back, canon);
		/* and the formatted text parses to the same struct */
		{
			struct iosig_sig again = sig_ok(back, NULL, 0);

			assert_memory_equal(&again, &s, sizeof(s));
		}
		iosig_pragma_free(p);
	}
}

/* Switches to a locale with a decimal comma (comma_locale.h); when none can
 * be had the tests still run in the C locale and say so. */
static void set_comma_locale(void)
{
	if (!comma_locale_set())
		print_message("no locale with a decimal comma available; checking the C locale only\n");
}

/* The canonical text must not depend on the process locale. */
static void test_locale_independent(void **state)
{
	struct iosig_pragma *p;
	struct iosig_sig s;
	char buf[128];
	double v;

	set_comma_locale();
	p = parse_ok("sig availability(0.5) min_mttdl(1.25)");
	assert_int_equal(iosig_pragma_canonical(p, buf, sizeof(buf), NULL, 0, NULL), 0);
	assert_string_equal(buf, "min_mttdl(1.25) availability(0.5)");
	iosig_pragma_free(p);
	s = sig_ok("availability(0.5) min_mttdl(1.25)", NULL, 0);
	assert_true(s.availability == 0.5);
	assert_true(s.min_mttdl == 1.25);
	assert_int_equal(iosig_sig_format(&s, buf, sizeof(buf)), 33);
	assert_string_equal(buf, "min_mttdl(1.25) availability(0.5)");
	assert_int_equal(iosig_parse_value("1.5 GiB", IOSIG_DIM_SIZE, &v, NULL), 0);
	assert_true(v == 1610612736.0);
	setlocale(LC_ALL, "C");
}

/* Threads parse and format at once, in a comma locale: every result must
 * be the single-threaded one. */
struct worker {
	pthread_t tid;
	unsigned seed;
	int failures;
};

static void *work(void *arg)
{
	static const char *const texts[8] = { "0", "0.125", "0.25", "0.375", "0.5", "0.625",
					      "0.75", "0.875" };
	struct worker *w = arg;

	for (unsigned i = 0; i < 2000; i++) {
		unsigned k = (w->seed + i) % 8;
		double v = 0.125 * k, got = -1;
		struct iosig_sig s;
		char want[128], buf[128];

		snprintf(want, sizeof(want), "min_mttdl(%s) availability(1e-06)", texts[k]);
		if (iosig_sig_parse("min_mttdl($0) availability(ppm)", NULL, &v, 1, &s, NULL) != 0 ||
		    iosig_sig_format(&s, buf, sizeof(buf)) < 0 || strcmp(buf, want) != 0 ||
		    iosig_parse_value("1.5 KiB", IOSIG_DIM_SIZE, &got, NULL) != 0 || got != 1536)
			w->failures++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct worker w[4];

	set_comma_locale();
	for (unsigned i = 0; i < 4; i++) {
		w[i].seed = i;
		w[i].failures = 0;
		assert_int_equal(pthread_create(&w[i].tid, NULL, work, &w[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(w[i].tid, NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	setlocale(LC_ALL, "C");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical_strings),
		cmocka_unit_test(test_canonical_nospace),
		cmocka_unit_test(test_sig_parse_values),
		cmocka_unit_test(test_sig_parse_errors),
		cmocka_unit_test(test_sig_format),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_locale_independent),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, comma_locale_group_setup, comma_locale_group_teardown);
}
