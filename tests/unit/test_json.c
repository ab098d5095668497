/* SPDX-License-Identifier: MIT */
/* Unit tests for the shared JSON writer and the human-readable formatters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "comma_locale.h"
#include "fmt.h"
#include "json.h"

/* Runs fn on a memstream writer and returns the text (caller frees). */
static char *render(void (*fn)(struct json_writer *), bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct json_writer w;

	assert_non_null(fp);
	json_init(&w, fp, pretty);
	fn(&w);
	assert_int_equal(json_finish(&w), 0);
	fclose(fp);
	return buf;
}

static void doc(struct json_writer *w)
{
	json_obj_begin(w, NULL);
	json_str(w, "s", "a\"b\\c\n\x01");
	json_num(w, "pi", 3.25);
	json_num(w, "tenth", 0.1);
	json_num(w, "big", 1e20);
	json_num(w, "nan", NAN);
	json_int(w, "neg", -5);
	json_uint(w, "u", 18446744073709551615ull);
	json_bool(w, "t", true);
	json_null(w, "n");
	json_arr_begin(w, "a");
	json_int(w, NULL, 1);
	json_obj_begin(w, NULL);
	json_obj_end(w);
	json_arr_begin(w, NULL);
	json_arr_end(w);
	json_arr_end(w);
	json_obj_end(w);
}

static void test_compact(void **state)
{
	char *s = render(doc, false);

	assert_string_equal(s, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"pi\":3.25,\"tenth\":0.1,"
			       "\"big\":1e+20,\"nan\":null,\"neg\":-5,\"u\":18446744073709551615,"
			       "\"t\":true,\"n\":null,\"a\":[1,{},[]]}");
	free(s);
}

static void test_pretty(void **state)
{
	char *s = render(doc, true);

	assert_non_null(strstr(s, "{\n  \"s\": "));
	assert_non_null(strstr(s, "\n  \"a\": [\n    1,\n    {},\n    []\n  ]\n}\n"));
	free(s);
}

static void deep(struct json_writer *w)
{
	for (int i = 0; i < JSON_MAX_DEPTH + 4; i++)
		json_arr_begin(w, NULL);
}

static void test_too_deep(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct json_writer w;

	json_init(&w, fp, false);
	deep(&w);
	assert_int_not_equal(json_finish(&w), 0);
	fclose(fp);
	free(buf);
}

static void bytes(struct json_writer *w)
{
	json_arr_begin(w, NULL);
	/* well-formed: 2, 3 and 4 byte sequences pass through */
	json_str(w, NULL, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe");
	/* a stray byte, a truncated sequence, an overlong '/', a surrogate,
	 * a code point above U+10FFFF: each ill-formed byte is U+FFFD */
	json_str(w, NULL, "/mnt/\xff/x");
	json_str(w, NULL, "a\xc3");
	json_str(w, NULL, "\xc0\xaf");
	json_str(w, NULL, "\xed\xa0\x80");
	json_str(w, NULL, "\xf4\x90\x80\x80");
	json_arr_end(w);
}

/* Paths are bytes, JSON is UTF-8: whatever a mount point is called, the
 * document must parse. */
static void test_utf8(void **state)
{
	char *s = render(bytes, false);

	assert_string_equal(s, "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe\","
			       "\"/mnt/\\ufffd/x\",\"a\\ufffd\",\"\\ufffd\\ufffd\","
			       "\"\\ufffd\\ufffd\\ufffd\",\"\\ufffd\\ufffd\\ufffd\\ufffd\"]");
	free(s);
}

static void numbers(struct json_writer *w)
{
	json_arr_begin(w, NULL);
	json_num(w, NULL, 0.5);
	json_num(w, NULL, 1.25e-7);
	json_num(w, NULL, 3.0);
	json_arr_end(w);
}

/* The decision log is written inside programs that may have called
 * setlocale(): numbers keep a decimal point. */
static void test_locale(void **state)
{
	char *s;

	if (!comma_locale_set())
		print_message("no locale with a decimal comma available; checking the C locale only\n");
	s = render(numbers, false);
	setlocale(LC_ALL, "C");
	assert_string_equal(s, "[0.5,1.25e-07,3]");
	free(s);
}

static void test_fmt(void **state)
{
	char b[32];

	assert_string_equal(fmt_bytes(512, b, sizeof(b)), "512 B");
	assert_string_equal(fmt_bytes(64.0 * 1048576, b, sizeof(b)), "64 MiB");
	assert_string_equal(fmt_bytes(1.5 * 1073741824, b, sizeof(b)), "1.50 GiB");
	assert_string_equal(fmt_rate(430.0 * 1048576, b, sizeof(b)), "430 MiB/s");
	assert_string_equal(fmt_duration(0.15, b, sizeof(b)), "150 ms");
	assert_string_equal(fmt_duration(12.5 * 365 * 86400, b, sizeof(b)), "12.5 y");
	assert_string_equal(fmt_duration(15 * 30 * 86400.0, b, sizeof(b)), "1.23 y");
	assert_string_equal(fmt_duration(INFINITY, b, sizeof(b)), "inf");
	assert_string_equal(fmt_duration(0, b, sizeof(b)), "0 s");
	/* The text form has months, the compact one does not. */
	assert_string_equal(fmt_duration(100 * 86400.0, b, sizeof(b)), "3.33 mo");
}

/* The compact forms of `iosig devices`' 80-column table. */
static void test_fmt_compact(void **state)
{
	static const struct {
		double v;
		const char *bytes, *dur, *count;
	} cases[] = {
		{ 0, "0", "0", "0" },
		{ 512, "512", "8.5min", "512" },
		{ 999, "999", "17min", "999" },
		{ 1000, "1.0K", "17min", "1000" },
		{ 10 * 1024, "10K", "2.8h", "10k" },
		{ 1.5 * 1099511627776.0, "1.5T", "52298y", "1649267.4M" },
		{ 0.15, "0", "150ms", "0" },
		{ 1e-6, "0", "1us", "0" },
		{ 100 * 86400.0, "8.2M", "100d", "8.6M" },
		{ 10 * 365 * 86400.0, "301M", "10y", "315.4M" },
		{ -1, "-", "0", "-1" },
		{ 1e6 * 365 * 86400.0, "29T", "1e+06y", "31536000.0M" },
		{ INFINITY, "-", "inf", NULL },
		{ NAN, "-", "-", NULL },
	};
	char b[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_string_equal(fmt_bytes_compact(cases[i].v, b, sizeof(b)), cases[i].bytes);
		assert_string_equal(fmt_duration_compact(cases[i].v, b, sizeof(b)), cases[i].dur);
		if (cases[i].count) /* IOPS: always finite */
			assert_string_equal(fmt_count_compact(cases[i].v, b, sizeof(b)), cases[i].count);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_pretty),
		cmocka_unit_test(test_too_deep),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_locale),
		cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_fmt_compact),
	};

	return cmocka_run_group_tests(tests, comma_locale_group_setup, comma_locale_group_teardown);
}
