/* SPDX-License-Identifier: MIT */
/*
 * The policy contract: registry and ops validation, option tables (parsing,
 * units, bounds, precise errors, help), instance creation, the shared
 * building blocks (treap, heap, map, pool), and the noop policy.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "harness.h"
#include "pol_util.h"
#include "policy.h"

/* ---- registry ---- */

static int dummy_init(struct policy *pol) { return 0; }
static int dummy_submit(struct policy *pol, struct policy_req *r) { return 0; }
static void dummy_void(struct policy *pol) { }
static void dummy_complete(struct policy *pol, struct policy_req *r) { }

struct dummy_opts {
	uint64_t n;
};

static const struct policy_opt dummy_opts[] = {
	{ .name = "n", .type = POLICY_OPT_UINT, .off = offsetof(struct dummy_opts, n), .def = "3",
	  .min = 1, .max = 10, .help = "a number" },
	{ .name = NULL },
};

static struct policy_ops dummy_ops(const char *name)
{
	return (struct policy_ops){
		.version = POLICY_OPS_VERSION, .name = name, .summary = "test",
		.opts = dummy_opts, .opts_size = sizeof(struct dummy_opts),
		.init = dummy_init, .submit = dummy_submit, .dispatch = dummy_void,
		.complete = dummy_complete, .tick = dummy_void, .fini = dummy_void,
	};
}

static void test_builtins_valid(void **state)
{
	char err[256];

	assert_true(policy_count() >= 1);
	assert_non_null(policy_find("noop"));
	assert_null(policy_find("no-such-policy"));
	assert_null(policy_find(NULL));
	assert_null(policy_at(policy_count()));
	for (size_t i = 0; i < policy_count(); i++) {
		const struct policy_ops *ops = policy_at(i);

		err[0] = '\0';
		if (policy_ops_check(ops, err, sizeof(err)) != 0)
			fail_msg("built-in policy %s: %s", ops->name, err);
		assert_ptr_equal(policy_find(ops->name), ops);
	}
}

static void test_register_rejects(void **state)
{
	static struct policy_ops ops[8];
	static const struct policy_opt bad_default[] = {
		{ .name = "n", .type = POLICY_OPT_UINT, .off = 0, .def = "11", .min = 1, .max = 10 },
		{ .name = NULL },
	};
	static const struct policy_opt outside[] = {
		{ .name = "n", .type = POLICY_OPT_UINT, .off = 8, .def = "1", .min = 1, .max = 10 },
		{ .name = NULL },
	};
	char err[256];

	ops[0] = dummy_ops("t-version");
	ops[0].version = POLICY_OPS_VERSION + 1;
	assert_int_equal(policy_register(&ops[0], err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ops version 4, this build needs 3"));

	ops[1] = dummy_ops("t-hook");
	ops[1].tick = NULL;
	assert_int_equal(policy_register(&ops[1], err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "policy 't-hook' lacks the required hook tick()");
	ops[1] = dummy_ops("t-hook");
	ops[1].submit = NULL;
	assert_int_equal(policy_register(&ops[1], err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "submit()"));

	ops[2] = dummy_ops("Bad Name");
	assert_int_equal(policy_register(&ops[2], err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not 1-32 characters"));

	ops[3] = dummy_ops("noop");
	assert_int_equal(policy_register(&ops[3], err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "already registered"));

	ops[4] = dummy_ops("t-default");
	ops[4].opts = bad_default;
	assert_int_equal(policy_register(&ops[4], err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "default of option 'n': 11 is out of range [1, 10]");

	ops[5] = dummy_ops("t-outside");
	ops[5].opts = outside;
	assert_int_equal(policy_register(&ops[5], err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "outside the options struct"));

	assert_int_equal(policy_register(NULL, err, sizeof(err)), -EINVAL);
	assert_null(policy_find("t-version"));
	assert_null(policy_find("t-hook"));

	ops[6] = dummy_ops("t-good");
	assert_int_equal(policy_register(&ops[6], err, sizeof(err)), 0);
	assert_ptr_equal(policy_find("t-good"), &ops[6]);
	assert_int_equal(policy_register(&ops[6], err, sizeof(err)), -EEXIST);
}

/* ---- options ---- */

struct all_opts {
	bool b;
	uint64_t u, size, time, rate;
	double d;
	unsigned e;
};

static const char *const colours[] = { "red", "green", "blue", NULL };

static const struct policy_opt all_tab[] = {
	{ .name = "b", .type = POLICY_OPT_BOOL, .off = offsetof(struct all_opts, b), .def = "off" },
	{ .name = "u", .type = POLICY_OPT_UINT, .off = offsetof(struct all_opts, u), .def = "8",
	  .min = 1, .max = 64, .help = "count" },
	{ .name = "size", .type = POLICY_OPT_SIZE, .off = offsetof(struct all_opts, size),
	  .def = "64KiB", .min = 512, .max = 1ull << 30 },
	{ .name = "time", .type = POLICY_OPT_TIME, .off = offsetof(struct all_opts, time),
	  .def = "500ms", .min = 0, .max = 3600 * POLICY_NS_PER_S },
	{ .name = "rate", .type = POLICY_OPT_RATE, .off = offsetof(struct all_opts, rate),
	  .def = "2MB/s", .min = 1, .max = UINT64_MAX },
	{ .name = "d", .type = POLICY_OPT_DOUBLE, .off = offsetof(struct all_opts, d), .def = "0.7",
	  .fmin = 0, .fmax = 1 },
	{ .name = "e", .type = POLICY_OPT_ENUM, .off = offsetof(struct all_opts, e), .def = "green",
	  .choices = colours },
	{ .name = NULL },
};

static void test_opts_defaults(void **state)
{
	struct all_opts o;
	char err[256];

	memset(&o, 0xff, sizeof(o));
	assert_int_equal(policy_opts_defaults(all_tab, &o, err, sizeof(err)), 0);
	assert_false(o.b);
	assert_int_equal(o.u, 8);
	assert_int_equal(o.size, 64 * KiB);
	assert_int_equal(o.time, 500 * MS);
	assert_int_equal(o.rate, 2 * MiB);
	assert_true(o.d > 0.69 && o.d < 0.71);
	assert_int_equal(o.e, 1);
}

static void test_opts_parse_units(void **state)
{
	struct all_opts o;
	char err[256];

	policy_opts_defaults(all_tab, &o, err, sizeof(err));
	assert_int_equal(policy_opts_parse(all_tab, &o,
					   "b=yes,u=64,size=4K,time=5s,rate=512KiB/s,d=0.25,e=BLUE",
					   err, sizeof(err)), 0);
	assert_true(o.b);
	assert_int_equal(o.u, 64);
	assert_int_equal(o.size, 4096);
	assert_int_equal(o.time, 5 * POLICY_NS_PER_S);
	assert_int_equal(o.rate, 512 * KiB);
	assert_true(o.d == 0.25);
	assert_int_equal(o.e, 2);

	assert_int_equal(policy_opts_set(all_tab, &o, "size", "1.5KiB", err, sizeof(err)), 0);
	assert_int_equal(o.size, 1536);
	assert_int_equal(policy_opts_set(all_tab, &o, "size", "2 MB", err, sizeof(err)), 0);
	assert_int_equal(o.size, 2 * MiB);
	assert_int_equal(policy_opts_set(all_tab, &o, "time", "100us", err, sizeof(err)), 0);
	assert_int_equal(o.time, 100 * POLICY_NS_PER_US);
	assert_int_equal(policy_opts_set(all_tab, &o, "time", "0", err, sizeof(err)), 0);
	assert_int_equal(o.time, 0);
	assert_int_equal(policy_opts_set(all_tab, &o, "time", "2min", err, sizeof(err)), 0);
	assert_int_equal(o.time, 120 * POLICY_NS_PER_S);
	assert_int_equal(policy_opts_set(all_tab, &o, "time", "250ns", err, sizeof(err)), 0);
	assert_int_equal(o.time, 250);
	assert_int_equal(policy_opts_set(all_tab, &o, "time", "1.5ms", err, sizeof(err)), 0);
	assert_int_equal(o.time, 1500 * POLICY_NS_PER_US);
	assert_int_equal(policy_opts_set(all_tab, &o, "size", "64*KiB", err, sizeof(err)), 0);
	assert_int_equal(o.size, 64 * KiB);
	assert_int_equal(policy_opts_set(all_tab, &o, "rate", "2MB/s", err, sizeof(err)), 0);
	assert_int_equal(o.rate, 2 * MiB);
	assert_int_equal(policy_opts_set(all_tab, &o, "rate", "1048576", err, sizeof(err)), 0);
	assert_int_equal(o.rate, MiB);
	assert_int_equal(policy_opts_parse(all_tab, &o, NULL, err, sizeof(err)), 0);
	assert_int_equal(policy_opts_parse(all_tab, &o, "", err, sizeof(err)), 0);
}

/* Each bad input gets a precise message; the value stays unchanged. */
static void test_opts_errors(void **state)
{
	static const struct {
		const char *str;
		int ret;
		const char *msg;
	} cases[] = {
		{ "u=65", -EINVAL, "option 'u': 65 is out of range [1, 64]" },
		{ "u=0", -EINVAL, "option 'u': 0 is out of range [1, 64]" },
		{ "u=abc", -EINVAL, "option 'u': 'abc' is not a valid int (expected a non-negative integer, e.g. 16)" },
		{ "u=-1", -EINVAL, "option 'u': '-1' is not a valid int" },
		{ "u=99999999999999999999999", -EINVAL, "option 'u': '99999999999999999999999' is too large" },
		{ "size=1.5B", -EINVAL, "option 'size': '1.5B' is not a valid size" },
		{ "size=4parsecs", -EINVAL, "option 'size': '4parsecs' is not a valid size" },
		/* the project's one unit parser: its names, its messages */
		{ "size=4k", -EINVAL, "option 'size': '4k' is not a valid size: unknown unit 'k'; did you mean 'K'?" },
		{ "size=5s", -EINVAL, "option 'size': '5s' is not a valid size: expected a size, but '5s' is a time" },
		{ "size=-4KiB", -EINVAL, "option 'size': '-4KiB' is not a valid size: it is negative" },
		{ "rate=2MB", -EINVAL, "option 'rate': '2MB' is not a valid rate: expected a rate, but '2MB' is a size" },
		{ "time=0.1ns", -EINVAL, "option 'time': '0.1ns' is not a valid time: it is not a whole number of nanoseconds" },
		{ "size=256", -EINVAL, "option 'size': 256 is out of range [512B, 1GiB]" },
		{ "time=5", -EINVAL, "option 'time': '5' needs a time unit (ns, us, ms, s, min, h), e.g. 5ms" },
		{ "time=2h", -EINVAL, "option 'time': 2h is out of range [0ns, 1h]" },
		{ "time=fast", -EINVAL, "option 'time': 'fast' is not a valid time" },
		{ "rate=0MB/s", -EINVAL, "option 'rate': 0MB/s is out of range [1B/s, unlimited]" },
		{ "d=1.5", -EINVAL, "option 'd': 1.5 is out of range [0, 1]" },
		{ "d=nan", -EINVAL, "option 'd': 'nan' is not a valid float" },
		{ "b=maybe", -EINVAL, "option 'b': 'maybe' is not a valid bool (expected 0/1, true/false, yes/no or on/off)" },
		{ "e=pink", -EINVAL, "option 'e': 'pink' is not one of: red, green, blue" },
		{ "zzz=1", -ENOENT, "unknown option 'zzz' (valid: b, u, size, time, rate, d, e)" },
		{ "u", -EINVAL, "'u' is not opt=value (in 'u')" },
		{ "u=", -EINVAL, "option 'u': missing value (expected a non-negative integer, e.g. 16)" },
		{ "u=2,,u=3", -EINVAL, "empty option in 'u=2,,u=3'" },
		{ "=3", -EINVAL, "'=3' is not opt=value" },
	};
	struct all_opts o, before;
	char err[256];

	policy_opts_defaults(all_tab, &o, err, sizeof(err));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		policy_opts_defaults(all_tab, &o, err, sizeof(err));
		before = o;
		err[0] = '\0';
		r = policy_opts_parse(all_tab, &o, cases[i].str, err, sizeof(err));
		if (r != cases[i].ret || !strstr(err, cases[i].msg))
			fail_msg("'%s': got %d '%s', want %d '%s'", cases[i].str, r, err, cases[i].ret,
				 cases[i].msg);
		if (strncmp(cases[i].str, "u=2", 3) != 0)
			assert_memory_equal(&o, &before, sizeof(o));
	}
	assert_int_equal(policy_opts_set(all_tab, &o, "nope", "1", err, sizeof(err)), -ENOENT);
	assert_int_equal(policy_opts_set(NULL, &o, "x", "1", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "unknown option 'x': this policy takes no options");
}

static void test_opts_format_and_help(void **state)
{
	struct all_opts o;
	struct policy_ops ops = dummy_ops("t-help");
	char err[256], buf[64];
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	policy_opts_defaults(all_tab, &o, err, sizeof(err));
	policy_opts_format(&all_tab[2], &o, buf, sizeof(buf));
	assert_string_equal(buf, "64KiB");
	policy_opts_format(&all_tab[3], &o, buf, sizeof(buf));
	assert_string_equal(buf, "500ms");
	policy_opts_format(&all_tab[4], &o, buf, sizeof(buf));
	assert_string_equal(buf, "2MiB/s");
	policy_opts_format(&all_tab[6], &o, buf, sizeof(buf));
	assert_string_equal(buf, "green");

	ops.opts = all_tab;
	ops.opts_size = sizeof(struct all_opts);
	fp = open_memstream(&text, &len);
	assert_int_equal(policy_help(&ops, fp), 0);
	fclose(fp);
	assert_non_null(strstr(text, "t-help - test\n"));
	assert_non_null(strstr(text, "count (default 8; range 1..64)"));
	assert_non_null(strstr(text, "(default 500ms; range 0ns..1h)"));
	assert_non_null(strstr(text, "one of red green blue"));
	free(text);

	/* Every built-in has help text for every option. */
	for (size_t i = 0; i < policy_count(); i++) {
		const struct policy_ops *p = policy_at(i);

		for (const struct policy_opt *op = p->opts; op && op->name; op++)
			if (!op->help || !op->help[0])
				fail_msg("%s: option %s has no help", p->name, op->name);
		assert_non_null(p->summary);
	}
}

/* ---- creation ---- */

static const struct hx_model hdd_model = { .overhead_ns = 100000, .seek_ns_per_gib = 1000000,
					   .bytes_per_s = 100 * MiB };

static void test_create(void **state)
{
	struct hx *h = hx_new(1, &hx_hdd, &hdd_model);
	char err[256];

	assert_int_equal(hx_policy(h, "nosuch", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "unknown policy 'nosuch' (known: noop"));
	assert_int_equal(hx_policy(h, "noop:bogus=1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "noop: unknown option 'bogus' (valid: max_merge)"));
	assert_int_equal(hx_policy(h, "noop:max_merge=2GiB", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "noop: option 'max_merge': 2GiB is out of range [0B, 1GiB]"));
	assert_int_equal(hx_policy(h, "", err, sizeof(err)), -EINVAL);
	assert_null(hx_pol(h));
	assert_int_equal(hx_policy(h, "noop:max_merge=0", err, sizeof(err)), 0);
	assert_non_null(hx_pol(h));
	hx_free(h);
}

static void test_create_env_checks(void **state)
{
	struct hx *h = hx_new(1, &hx_hdd, &hdd_model);
	struct policy *pol = NULL;
	struct policy_env env;
	struct policy_dev_info bad = hx_hdd;
	char err[256];

	/* Borrow a valid env from the harness and break it. */
	assert_int_equal(hx_policy(h, "noop", err, sizeof(err)), 0);
	env = *hx_pol(h)->env;
	env.version = 99;
	assert_int_equal(policy_create("noop", &env, &pol, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "environment version 99"));
	env = *hx_pol(h)->env;
	env.wake_at = NULL;
	assert_int_equal(policy_create("noop", &env, &pol, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "lacks a callback"));
	env = *hx_pol(h)->env;
	bad.queue_depth = 0;
	env.dev = &bad;
	assert_int_equal(policy_create("noop", &env, &pol, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "queue depth 0"));
	assert_null(pol);
	policy_destroy(NULL);
	hx_free(h);
}

/* ---- building blocks ---- */

static void test_treap(void **state)
{
	enum { N = 2000 };
	struct policy_tnode *nodes = calloc(N, sizeof(*nodes));
	struct policy_tnode *root = NULL, *n;
	uint64_t x = 12345, prev;
	unsigned count;

	for (unsigned i = 0; i < N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		nodes[i].key = (x >> 33) % 500;   /* many duplicate keys */
		nodes[i].key2 = i;
		pol_tree_insert(&root, &nodes[i]);
	}
	/* Remove every third node. */
	for (unsigned i = 0; i < N; i += 3)
		pol_tree_remove(&root, &nodes[i]);
	count = 0;
	prev = 0;
	for (n = pol_tree_first(root); n; n = pol_tree_next(root, n)) {
		uint64_t k = n->key * 4096 + n->key2;

		assert_true(count == 0 || k > prev);
		assert_true(n->key2 % 3 != 0);
		prev = k;
		count++;
	}
	assert_int_equal(count, N - (N + 2) / 3);
	n = pol_tree_lower_bound(root, 250, 0);
	assert_non_null(n);
	assert_true(n->key >= 250);
	assert_true(pol_tree_floor(root, 250, 0) == NULL || pol_tree_floor(root, 250, 0)->key < 250 ||
		    pol_tree_floor(root, 250, 0)->key2 == 0);
	assert_true(pol_tree_last(root)->key <= 499);
	assert_null(pol_tree_lower_bound(root, 500, 0));
	free(nodes);
}

static void test_heap_map_pool(void **state)
{
	struct pol_heap hp;
	struct pol_hnode a = { .idx = SIZE_MAX }, b = { .idx = SIZE_MAX }, c = { .idx = SIZE_MAX };
	struct pol_map m;
	struct pol_pool p;
	struct policy_req *r1, *r2;
	int vals[300];

	pol_heap_init(&hp);
	assert_int_equal(pol_heap_set(&hp, &a, 30), 0);
	assert_int_equal(pol_heap_set(&hp, &b, 10), 0);
	assert_int_equal(pol_heap_set(&hp, &c, 20), 0);
	assert_ptr_equal(pol_heap_min(&hp), &b);
	pol_heap_set(&hp, &a, 5);
	assert_ptr_equal(pol_heap_min(&hp), &a);
	pol_heap_remove(&hp, &a);
	assert_false(pol_hnode_queued(&a));
	assert_ptr_equal(pol_heap_min(&hp), &b);
	pol_heap_set(&hp, &b, 50);
	assert_ptr_equal(pol_heap_min(&hp), &c);
	pol_heap_free(&hp);

	pol_map_init(&m);
	for (int i = 0; i < 300; i++)
		assert_int_equal(pol_map_put(&m, (uint32_t)i * 7, &vals[i]), 0);
	for (int i = 0; i < 300; i += 2)
		pol_map_del(&m, (uint32_t)i * 7);
	for (int i = 0; i < 300; i++)
		assert_ptr_equal(pol_map_get(&m, (uint32_t)i * 7), i % 2 ? &vals[i] : NULL);
	assert_int_equal(m.n, 150);
	pol_map_free(&m);

	assert_int_equal(pol_pool_init(&p, 2), 0);
	r1 = pol_pool_get(&p, POLICY_OP_WRITE, 1, 4096, 512, POLICY_REQ_PAD, 7);
	r2 = pol_pool_get(&p, POLICY_OP_READ, 0, 0, 512, 0, 7);
	assert_non_null(r1);
	assert_non_null(r2);
	assert_null(pol_pool_get(&p, POLICY_OP_READ, 0, 0, 512, 0, 7));
	assert_int_equal(r1->flags, POLICY_REQ_INTERNAL | POLICY_REQ_PAD);
	assert_true(r1->id >= (1ull << 63) && r2->id == r1->id + 1);
	assert_true(pol_pool_owns(&p, r2));
	pol_pool_put(&p, r1);
	assert_non_null(pol_pool_get(&p, POLICY_OP_READ, 0, 0, 512, 0, 7));
	pol_pool_free(&p);

	{
		uint64_t ring[4] = { 10, 20, 30, 40 };

		/* head 0 after writing 4 samples: oldest 10 ... newest 40 */
		assert_int_equal(pol_weighted_mean(ring, 4, 0, 4), 30);   /* (10+40+90+160)/10 */
		assert_int_equal(pol_weighted_mean(ring, 4, 0, 1), 40);
		assert_int_equal(pol_weighted_mean(ring, 4, 0, 0), 0);
	}
}

/* Extents as (off, len, toff) triples in order, for comparison. */
static unsigned ext_dump(struct pol_extmap *m, uint64_t *out)
{
	unsigned n = 0;

	for (struct pol_ext *e = pol_extmap_first(m, 0, 0, UINT64_MAX / 2); e;
	     e = pol_extmap_next(m, 0, e)) {
		out[3 * n] = pol_ext_off(e);
		out[3 * n + 1] = e->len;
		out[3 * n + 2] = e->toff;
		n++;
	}
	return n;
}

static void test_extmap(void **state)
{
	struct pol_extmap m;
	uint64_t d[30];

	assert_int_equal(pol_extmap_init(&m, 2), 0);
	assert_int_equal(pol_extmap_set(&m, 0, 100, 50, 1, 1000), 0);
	/* Continuing extent on both sides: extends, no new node. */
	assert_int_equal(pol_extmap_set(&m, 0, 150, 50, 1, 1050), 0);
	assert_int_equal(m.count, 1);
	assert_int_equal(ext_dump(&m, d), 1);
	assert_int_equal(d[1], 100);
	/* Not continuing on the tier: a second extent. */
	assert_int_equal(pol_extmap_set(&m, 0, 200, 10, 1, 5000), 0);
	assert_int_equal(m.count, 2);
	/* Clear the middle of the first: split into two. */
	assert_int_equal(pol_extmap_clear(&m, 0, 120, 10), 0);
	assert_int_equal(ext_dump(&m, d), 3);
	assert_int_equal(d[0], 100); assert_int_equal(d[1], 20); assert_int_equal(d[2], 1000);
	assert_int_equal(d[3], 130); assert_int_equal(d[4], 70); assert_int_equal(d[5], 1030);
	assert_int_equal(d[6], 200); assert_int_equal(d[7], 10); assert_int_equal(d[8], 5000);
	/* Overwrite across the boundary of two extents. */
	assert_int_equal(pol_extmap_set(&m, 0, 190, 15, 1, 9000), 0);
	assert_int_equal(ext_dump(&m, d), 4);
	assert_int_equal(d[3], 130); assert_int_equal(d[4], 60);
	assert_int_equal(d[6], 190); assert_int_equal(d[7], 15); assert_int_equal(d[8], 9000);
	assert_int_equal(d[9], 205); assert_int_equal(d[10], 5); assert_int_equal(d[11], 5005);
	/* Lookups: overlapping first extent, none in a gap. */
	assert_int_equal(pol_ext_off(pol_extmap_first(&m, 0, 125, 10)), 130);
	assert_int_equal(pol_ext_off(pol_extmap_first(&m, 0, 110, 1)), 100);
	assert_null(pol_extmap_first(&m, 0, 120, 10));
	assert_null(pol_extmap_first(&m, 1, 100, 10));
	/* Clearing everything leaves nothing. */
	assert_int_equal(pol_extmap_clear(&m, 0, 0, 1000), 0);
	assert_int_equal(m.count, 0);
	assert_null(pol_extmap_first(&m, 0, 0, 1000));

	/* Tags: a continuation with another tag is an extent of its own; a
	 * split keeps the tag on both sides. */
	assert_int_equal(pol_extmap_put(&m, 1, 0, 100, 2, 0, 7), 0);
	assert_int_equal(pol_extmap_put(&m, 1, 100, 100, 2, 100, 8), 0);
	assert_int_equal(m.count, 2);
	assert_int_equal(pol_extmap_put(&m, 1, 200, 50, 2, 200, 8), 0);
	assert_int_equal(m.count, 2);
	assert_int_equal(pol_extmap_clear(&m, 1, 20, 10), 0);
	assert_int_equal(pol_extmap_first(&m, 1, 10, 1)->tag, 7);
	assert_int_equal(pol_extmap_first(&m, 1, 40, 1)->tag, 7);
	assert_int_equal(pol_extmap_first(&m, 1, 40, 1)->toff, 30);
	assert_int_equal(pol_extmap_first(&m, 1, 240, 1)->tag, 8);
	assert_int_equal(pol_extmap_first(&m, 1, 240, 1)->len, 150);
	pol_extmap_free(&m);
}

/* The table against a byte map: 40 000 random sets and clears over 16 384
 * units (with tier offsets that sometimes continue their neighbour, so
 * extents extend), thousands of extents at a time: enough for three
 * levels of the B+ tree, splitting leaves and inner nodes and emptying them
 * again.  Every 50 steps the extents, walked in order, must be exactly what
 * the byte map says, and a lookup at a random place must find the first
 * extent overlapping it. */
static void test_extmap_random(void **state)
{
	enum { UNITS = 16384, U = 512 };
	static uint64_t where[UNITS];   /* toff + 1 of each unit, 0 = at home */
	struct pol_extmap m;
	uint64_t seed = 12345;
	size_t peak = 0;

	assert_int_equal(pol_extmap_init(&m, 1), 0);
	memset(where, 0, sizeof(where));
	for (unsigned step = 0; step < 40000; step++) {
		uint64_t r, a, n;
		size_t count = 0;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		r = seed >> 33;
		a = r % UNITS;
		n = 1 + (r >> 12) % (step % 7 == 0 ? 64 : 4);
		if (a + n > UNITS)
			n = UNITS - a;
		if ((r >> 20) % 3) {
			/* toff continues the unit before a when (r >> 24) is even. */
			uint64_t toff = a && where[a - 1] && !((r >> 24) % 2) ? where[a - 1] - 1 + U
										  : (r % 100000) * U;

			assert_int_equal(pol_extmap_set(&m, 0, a * U, n * U, 1, toff), 0);
			for (uint64_t i = 0; i < n; i++)
				where[a + i] = toff + i * U + 1;
		} else {
			assert_int_equal(pol_extmap_clear(&m, 0, a * U, n * U), 0);
			for (uint64_t i = 0; i < n; i++)
				where[a + i] = 0;
		}
		if (m.count > peak)
			peak = m.count;
		if (step % 50 && step < 39990)
			continue;
		/* Walk: extents in order, each a run the byte map agrees with. */
		{
			uint64_t pos = 0;

			for (struct pol_ext *e = pol_extmap_first(&m, 0, 0, UNITS * U); e;
			     e = pol_extmap_next(&m, 0, e)) {
				assert_true(pol_ext_off(e) >= pos);
				for (uint64_t u = pos / U; u < pol_ext_off(e) / U; u++)
					assert_int_equal(where[u], 0);
				for (uint64_t u = 0; u < e->len / U; u++)
					assert_int_equal(where[pol_ext_off(e) / U + u], e->toff + u * U + 1);
				pos = pol_ext_off(e) + e->len;
				count++;
			}
			for (uint64_t u = pos / U; u < UNITS; u++)
				assert_int_equal(where[u], 0);
			assert_int_equal(count, m.count);
		}
		/* A point lookup. */
		{
			uint64_t b = (r >> 7) % UNITS, k = 1 + (r >> 3) % 8, first = UNITS;
			struct pol_ext *e;

			for (uint64_t u = b; u < b + k && u < UNITS; u++)
				if (where[u]) {
					first = u;
					break;
				}
			e = pol_extmap_first(&m, 0, b * U, k * U);
			if (first == UNITS) {
				assert_null(e);
			} else {
				assert_non_null(e);
				assert_true(pol_ext_off(e) <= first * U &&
					    pol_ext_off(e) + e->len > first * U);
			}
		}
	}
	assert_true(peak > 2000);
	assert_int_equal(pol_extmap_clear(&m, 0, 0, UNITS * U), 0);
	assert_int_equal(m.count, 0);
	assert_null(pol_extmap_first(&m, 0, 0, UNITS * U));
	pol_extmap_free(&m);
}

/* The counting filter in front of the table (1 MiB grains) must never hide
 * an extent: counts follow splits, trims and removals, and saturated
 * counts stay "maybe". */
static void test_extmap_filter(void **state)
{
	struct pol_extmap m;

	assert_int_equal(pol_extmap_init(&m, 2), 0);
	/* Two extents in grain 5, one crossing into grain 6. */
	assert_int_equal(pol_extmap_set(&m, 0, 5 * MiB, 4 * KiB, 1, 0), 0);
	assert_int_equal(pol_extmap_set(&m, 0, 6 * MiB - 4 * KiB, 8 * KiB, 1, 1 * MiB), 0);
	assert_null(pol_extmap_first(&m, 0, 7 * MiB, 4 * KiB));
	assert_null(pol_extmap_first(&m, 1, 5 * MiB, 4 * KiB));   /* other home device */
	/* Trimming the crossing one to grain 6 only, then clearing the first:
	 * grain 5 is empty, grain 6 still finds its part. */
	assert_int_equal(pol_extmap_clear(&m, 0, 6 * MiB - 4 * KiB, 4 * KiB), 0);
	assert_int_equal(pol_extmap_clear(&m, 0, 5 * MiB, 4 * KiB), 0);
	assert_null(pol_extmap_first(&m, 0, 5 * MiB, 1 * MiB));
	assert_int_equal(pol_ext_off(pol_extmap_first(&m, 0, 6 * MiB, 1)), 6 * MiB);
	/* Split in the middle: both halves found. */
	assert_int_equal(pol_extmap_clear(&m, 0, 6 * MiB + 1 * KiB, 1 * KiB), 0);
	assert_int_equal(pol_ext_off(pol_extmap_first(&m, 0, 6 * MiB, 1)), 6 * MiB);
	assert_int_equal(pol_ext_off(pol_extmap_first(&m, 0, 6 * MiB + 2 * KiB, 1)),
			 6 * MiB + 2 * KiB);
	/* A continuing write extends the extent just before it. */
	assert_int_equal(pol_extmap_set(&m, 0, 6 * MiB + 4 * KiB, 4 * KiB, 1, 1 * MiB + 8 * KiB), 0);
	assert_int_equal(m.count, 2);
	/* 300 extents in grain 9 saturate its count; after clearing them the
	 * tree, not the filter, answers. */
	for (unsigned i = 0; i < 300; i++)
		assert_int_equal(pol_extmap_set(&m, 0, 9 * MiB + i * 2 * KiB, 1 * KiB, 1, i * 4 * KiB), 0);
	assert_int_equal(pol_extmap_clear(&m, 0, 9 * MiB, 1 * MiB), 0);
	assert_null(pol_extmap_first(&m, 0, 9 * MiB, 1 * MiB));
	/* A lookup over a huge range does not walk every grain. */
	assert_int_equal(pol_ext_off(pol_extmap_first(&m, 0, 0, UINT64_MAX / 2)), 6 * MiB);
	assert_null(pol_extmap_first(&m, 0, 1 * GiB, UINT64_MAX / 2));
	pol_extmap_free(&m);
}

/* ---- noop ---- */

static void test_noop_fifo_merge(void **state)
{
	struct policy_dev_info d = hx_hdd;
	struct hx *h;
	char err[256];

	d.queue_depth = 1;
	h = hx_new(1, &d, &hdd_model);
	assert_int_equal(hx_policy(h, "noop", err, sizeof(err)), 0);
	/* t=0: A0 occupies the disk; while it runs B0, A1, A2 (contiguous with
	 * each other), B1 queue up in that order. */
	hx_add(h, 0, 1, 0, POLICY_OP_READ, 0, 4 * KiB, POLICY_REQ_SYNC);            /* 0 */
	hx_add(h, 10, 2, 0, POLICY_OP_READ, 100 * MiB, 4 * KiB, POLICY_REQ_SYNC);   /* 1 */
	hx_add(h, 20, 1, 0, POLICY_OP_READ, 4 * KiB, 4 * KiB, POLICY_REQ_SYNC);     /* 2 */
	hx_add(h, 30, 1, 0, POLICY_OP_READ, 8 * KiB, 4 * KiB, POLICY_REQ_SYNC);     /* 3 */
	hx_add(h, 40, 2, 0, POLICY_OP_READ, 100 * MiB + 4 * KiB, 4 * KiB, 0);       /* 4 */
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_outstanding(h), 0);
	/* FIFO: A0, B0, then A1+A2 merged, then B1. */
	assert_int_equal(hx_ncmd(h), 4);
	assert_int_equal(hx_cmd(h, 0)->first_id, 1);
	assert_int_equal(hx_cmd(h, 1)->first_id, 2);
	assert_int_equal(hx_cmd(h, 2)->first_id, 3);
	assert_int_equal(hx_cmd(h, 2)->nreq, 2);
	assert_int_equal(hx_cmd(h, 2)->len, 8 * KiB);
	assert_int_equal(hx_cmd(h, 3)->first_id, 5);
	assert_true(hx_r(h, 3)->done_t == hx_r(h, 2)->done_t);
	assert_true(hx_r(h, 1)->done_t < hx_r(h, 2)->done_t);
	hx_free(h);

	/* max_merge=0: no merging; an out-of-range request fails, others pass. */
	h = hx_new(1, &d, &hdd_model);
	assert_int_equal(hx_policy(h, "noop:max_merge=0", err, sizeof(err)), 0);
	hx_add(h, 0, 1, 0, POLICY_OP_WRITE, 0, 4 * KiB, 0);
	hx_add(h, 1, 1, 0, POLICY_OP_WRITE, 4 * KiB, 4 * KiB, 0);
	hx_add(h, 2, 1, 0, POLICY_OP_WRITE, 8 * KiB, 4 * KiB, 0);
	hx_add(h, 3, 1, 0, POLICY_OP_WRITE, (1ull << 40) - 512, 4 * KiB, 0);
	hx_add(h, 4, 1, 3, POLICY_OP_WRITE, 0, 4 * KiB, 0);  /* no device 3 */
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(hx_cmd(h, i)->nreq, 1);
	assert_int_equal(hx_r(h, 3)->status, -EINVAL);
	assert_int_equal(hx_r(h, 4)->status, -EINVAL);
	assert_int_equal(hx_r(h, 4)->submit_ret, -EINVAL);
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);
}

static void test_noop_queue_depth(void **state)
{
	struct policy_dev_info d = hx_hdd;
	struct hx *h;
	char err[256];

	d.queue_depth = 4;
	h = hx_new(1, &d, &hdd_model);
	assert_int_equal(hx_policy(h, "noop", err, sizeof(err)), 0);
	for (unsigned i = 0; i < 10; i++)
		hx_add(h, 0, i, 0, POLICY_OP_READ, i * 10 * MiB, 4 * KiB, POLICY_REQ_SYNC);
	hx_run(h, 0);
	/* Only queue_depth commands issued at t=0. */
	assert_int_equal(hx_ncmd(h), 4);
	hx_run(h, UINT64_MAX);
	assert_int_equal(hx_ncmd(h), 10);
	assert_int_equal(hx_outstanding(h), 0);
	hx_free(h);
}

/* Every built-in policy finishes every request of a random mixed load
 * (reads, writes, sizes, 8 streams, bursts and pauses) without error. */
static void test_all_policies_finish(void **state)
{
	static const struct policy_dev_info three[3] = {
		{ .name = "hdd0", .cls = IOSIG_CLASS_HDD, .capacity = 1ull << 40, .queue_depth = 4,
		  .block_size = 512 },
		{ .name = "ssd0", .cls = IOSIG_CLASS_SSD, .capacity = 64ull << 30, .queue_depth = 8,
		  .block_size = 4096 },
		{ .name = "nvm0", .cls = IOSIG_CLASS_NVM, .capacity = 64ull << 20, .queue_depth = 16,
		  .block_size = 64 },
	};
	static const struct hx_model m3[3] = {
		{ .overhead_ns = 200000, .seek_ns_per_gib = 200000, .bytes_per_s = 150ull << 20 },
		{ .overhead_ns = 50000, .bytes_per_s = 500ull << 20 },
		{ .overhead_ns = 1000, .bytes_per_s = 4ull << 30 },
	};

	for (size_t p = 0; p < policy_count(); p++) {
		const char *name = policy_at(p)->name;
		unsigned home = !strncmp(name, "mios", 4) ? 1 : 0;
		struct hx *h;
		char err[256];
		uint64_t x = 42, t = 0;

		if (!strncmp(name, "t-", 2))
			continue;   /* test registrations */
		h = hx_new(3, three, m3);
		if (hx_policy(h, name, err, sizeof(err)) != 0)
			fail_msg("%s: %s", name, err);
		for (unsigned i = 0; i < 3000; i++) {
			uint32_t stream;
			uint64_t off, len;
			bool rd;

			x = x * 6364136223846793005ull + 1442695040888963407ull;
			stream = (uint32_t)(x >> 60) % 8;
			rd = (x >> 20) % 3 == 0;
			len = 512ull << ((x >> 24) % 8);
			off = (stream * (1ull << 32) + ((x >> 30) % 4096) * 4096) % (60ull << 30);
			t += (x >> 40) % 4 == 0 ? (x >> 44) % 20000000 : (x >> 44) % 50000;
			hx_add(h, t, stream, home, rd ? POLICY_OP_READ : POLICY_OP_WRITE, off, len,
			       rd ? POLICY_REQ_SYNC : 0);
		}
		hx_run(h, UINT64_MAX);
		if (hx_outstanding(h))
			fail_msg("%s left %u requests unfinished", name, hx_outstanding(h));
		for (unsigned i = 0; i < 3000; i++)
			if (hx_r(h, i)->status)
				fail_msg("%s: request %u failed with %d", name, i, hx_r(h, i)->status);
		hx_free(h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtins_valid),
		cmocka_unit_test(test_register_rejects),
		cmocka_unit_test(test_opts_defaults),
		cmocka_unit_test(test_opts_parse_units),
		cmocka_unit_test(test_opts_errors),
		cmocka_unit_test(test_opts_format_and_help),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_create_env_checks),
		cmocka_unit_test(test_treap),
		cmocka_unit_test(test_heap_map_pool),
		cmocka_unit_test(test_extmap),
		cmocka_unit_test(test_extmap_filter),
		cmocka_unit_test(test_extmap_random),
		cmocka_unit_test(test_noop_fifo_merge),
		cmocka_unit_test(test_noop_queue_depth),
		cmocka_unit_test(test_all_policies_finish),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
