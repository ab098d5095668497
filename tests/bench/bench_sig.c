/* SPDX-License-Identifier: MIT */
/*
 * bench_sig.c - cost of the signature language on its hot and warm paths,
 * in ns per call: iosig_sig_parse() of canonical text (run at annotated
 * open() calls whose values changed), iosig_sig_format(), iosig_parse_value()
 * (tools and configuration), and iosig_pragma_parse() + canonical text (the
 * compiler plugins, once per pragma).  Prints one JSON object.
 *
 * Each figure is the median over BATCHES batches of the per-call time of a
 * batch; slot values rotate so no call can be hoisted out of the loop.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "iosig.h"
#include "json.h"

#define BATCHES 21
#define CALLS 5000

static const char canon_int[] = "persist sequential_access size_per_io(67108864) totalsize($0) "
				"min_mttdl(630720000) name(\"checkpoint\")";
static const char canon_float[] = "tmp random_access size_per_io($0) min_mttdl(0.5) "
				  "availability(0.0001)";
static const char pragma[] = "sig name(\"checkpoint\") persist sequential_access "
			     "size_per_io(64*MiB) min_mttdl(20*y) totalsize(nranks * 4*GiB)";

static double call_sig_parse_int(unsigned i)
{
	double v = 4096.0 * (1 + (i & 7));
	struct iosig_sig s;

	if (iosig_sig_parse(canon_int, NULL, &v, 1, &s, NULL) != 0)
		return -1;
	return (double)s.totalsize;
}

static double call_sig_parse_float(unsigned i)
{
	double v = 4096.0 * (1 + (i & 7));
	struct iosig_sig s;

	if (iosig_sig_parse(canon_float, NULL, &v, 1, &s, NULL) != 0)
		return -1;
	return s.availability + (double)s.size_per_io;
}

static double call_sig_format(unsigned i)
{
	struct iosig_sig s = { .set = IOSIG_HAS(IOSIG_P_SIZE_PER_IO) |
				      IOSIG_HAS(IOSIG_P_MIN_MTTDL) |
				      IOSIG_HAS(IOSIG_P_AVAILABILITY) | IOSIG_HAS(IOSIG_P_PERSIST),
			       .size_per_io = 4096u << (i & 7), .min_mttdl = 630720000.0,
			       .availability = 1e-4 * (1 + (i & 3)) };
	char buf[256];

	return iosig_sig_format(&s, buf, sizeof(buf));
}

static double call_parse_value(unsigned i)
{
	static const char *const texts[] = { "1.5 GiB", "64MiB", "4096", "(1+2)*GiB" };
	double v = 0;

	if (iosig_parse_value(texts[i & 3], IOSIG_DIM_SIZE, &v, NULL) != 0)
		return -1;
	return v;
}

static double call_pragma_canonical(unsigned i)
{
	const struct iosig_expr *slots[IOSIG_P_COUNT];
	struct iosig_pragma *p;
	char buf[256];
	unsigned n = 0;

	if (iosig_pragma_parse(pragma, sizeof(pragma) - 1 - (i & 1), &p, NULL) != 0)
		return -1;
	if (iosig_pragma_canonical(p, buf, sizeof(buf), slots, IOSIG_P_COUNT, &n) != 0)
		n = 0;
	iosig_pragma_free(p);
	return n;
}

int main(void)
{
	static const struct {
		const char *name;
		double (*call)(unsigned);
	} cases[] = {
		{ "sig_parse_canonical_int", call_sig_parse_int },
		{ "sig_parse_canonical_float", call_sig_parse_float },
		{ "sig_format", call_sig_format },
		{ "parse_value", call_parse_value },
		{ "pragma_parse_and_canonical", call_pragma_canonical },
	};
	struct json_writer w;

	/* every case must work, or its timing is of the error path */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (cases[i].call(0) < 0) {
			fprintf(stderr, "bench_sig: case %s fails\n", cases[i].name);
			return 1;
		}
	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "benchmark", "sig");
	json_obj_begin(&w, "ns_per_call");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		json_num(&w, cases[i].name,
			 round(bench_ns_per_call(cases[i].call, BATCHES, CALLS) * 10) / 10);
	json_obj_end(&w);
	json_obj_end(&w);
	return json_finish(&w) ? 1 : 0;
}
