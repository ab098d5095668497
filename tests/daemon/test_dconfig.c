/* SPDX-License-Identifier: MIT */
/*
 * The daemon: section of the configuration (iosigd/dconfig.c): defaults,
 * every key, the policy chosen per mount, and every error with its
 * file:line:column and what to do.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dconfig.h"

static int load(struct dconfig *cfg, const char *text, char *err, size_t errlen)
{
	assert_int_equal(dconfig_defaults(cfg), 0);
	err[0] = '\0';
	return dconfig_load_buffer(cfg, "c.yaml", text, strlen(text), err, errlen);
}

static void test_defaults(void **state)
{
	struct dconfig cfg;
	unsigned qd;
	char err[512];

	assert_int_equal(load(&cfg, "version: 1\nmounts:\n  /x: { class: hdd }\n", err, sizeof(err)), 0);
	assert_string_equal(cfg.policy, "noop");
	assert_null(cfg.socket);
	assert_int_equal(cfg.limits.clients, 1024);
	assert_int_equal(cfg.limits.fds_per_client, 4096);
	assert_int_equal(cfg.limits.ring_size, 8 << 20);
	assert_int_equal(cfg.limits.queued_bytes, 64 << 20);
	assert_string_equal(dconfig_policy_for(&cfg, "/x", &qd), "noop");
	assert_int_equal(qd, 0);
	dconfig_free(&cfg);
}

static void test_keys(void **state)
{
	static const char text[] =
		"mounts:\n"
		"  /x: { class: hdd }\n"
		"daemon:\n"
		"  socket: /run/test/iosigd.sock\n"
		"  policy: deadline:fifo_batch=8\n"
		"  devices:\n"
		"    /mnt/hdd:\n"
		"      policy: \"bid-hdd:wait_max=50ms\"\n"
		"      queue_depth: 2\n"
		"    \"/mnt/ssd*\": { queue_depth: 64 }\n"
		"  limits:\n"
		"    clients: 10\n"
		"    fds_per_client: 20\n"
		"    ring_size: 1MiB\n"
		"    queued_bytes: 16MiB\n";
	struct dconfig cfg;
	unsigned qd;
	char err[512];

	assert_int_equal(load(&cfg, text, err, sizeof(err)), 0);
	assert_string_equal(cfg.socket, "/run/test/iosigd.sock");
	assert_string_equal(cfg.policy, "deadline:fifo_batch=8");
	assert_int_equal(cfg.ndevices, 2);
	assert_int_equal(cfg.limits.clients, 10);
	assert_int_equal(cfg.limits.fds_per_client, 20);
	assert_int_equal(cfg.limits.ring_size, 1 << 20);
	assert_int_equal(cfg.limits.queued_bytes, 16 << 20);
	assert_string_equal(dconfig_policy_for(&cfg, "/mnt/hdd", &qd), "bid-hdd:wait_max=50ms");
	assert_int_equal(qd, 2);
	/* A pattern with no policy of its own: the default, its depth. */
	assert_string_equal(dconfig_policy_for(&cfg, "/mnt/ssd2", &qd), "deadline:fifo_batch=8");
	assert_int_equal(qd, 64);
	assert_string_equal(dconfig_policy_for(&cfg, "/elsewhere", &qd), "deadline:fifo_batch=8");
	assert_int_equal(qd, 0);
	assert_string_equal(cfg.file, "c.yaml");
	dconfig_free(&cfg);
}

static const struct {
	const char *text;
	const char *err;
} bad[] = {
	{ "daemon:\n  polcy: noop\n", "c.yaml:2:3: daemon: unknown key 'polcy'; did you mean 'policy'?" },
	{ "daemon:\n  zzz: 1\n",
	  "c.yaml:2:3: daemon: unknown key 'zzz': expected socket, policy, devices or limits" },
	{ "daemon:\n  policy: nope\n",
	  "c.yaml:2:11: daemon: policy: unknown policy 'nope' (iosigd runs noop, deadline, cfq, bid-hdd, burst)" },
	{ "daemon:\n  policy: mios-d\n",
	  "c.yaml:2:11: daemon: policy: policy 'mios-d' places data on other tiers, which iosigd does not run yet; use one of noop, deadline, cfq, bid-hdd, burst" },
	{ "daemon:\n  policy: \"noop:bogus=1\"\n", "c.yaml:2:11: daemon: policy: noop: unknown option 'bogus' (valid: max_merge)" },
	{ "daemon:\n  policy: [a]\n", "c.yaml:2:11: daemon: policy: expected a policy such as noop or bid-hdd, got a list" },
	{ "daemon:\n  socket: relative.sock\n",
	  "c.yaml:2:11: daemon: socket: 'relative.sock' must be an absolute path shorter than 108 bytes" },
	{ "daemon:\n  policy: noop\n  policy: cfq\n", "c.yaml:3:3: daemon: 'policy' given twice" },
	{ "daemon: 3\n", "c.yaml:1:9: daemon: expected a mapping, got a scalar" },
	{ "daemon:\n  devices:\n    rel: {}\n",
	  "c.yaml:3:5: daemon: devices: 'rel' is not a mount point: expected an absolute path such as /mnt/hdd or a pattern such as /mnt/*" },
	{ "daemon:\n  devices:\n    /a: {}\n    /a: {}\n", "c.yaml:4:5: daemon: devices: '/a' given twice (first at line 3)" },
	{ "daemon:\n  devices:\n    /a: { queue_depth: 0 }\n",
	  "c.yaml:3:24: queue_depth: expected a whole number from 1 to 4096, got '0'" },
	{ "daemon:\n  devices:\n    /a: { depth: 1 }\n",
	  "c.yaml:3:11: daemon: device '/a': unknown key 'depth': expected policy or queue_depth" },
	{ "daemon:\n  devices:\n    /a: { policy: \"cfq:quantum=0\" }\n",
	  "c.yaml:3:19: daemon: device '/a': cfq: option 'quantum': 0 is out of range [1, 1024]" },
	{ "daemon:\n  limits:\n    ring_size: 1KiB\n",
	  "c.yaml:3:16: daemon: limits: ring_size: expected a size in bytes from 65536 to 1073741824, got '1KiB'" },
	{ "daemon:\n  limits:\n    clients: many\n",
	  "c.yaml:3:14: daemon: limits: clients: expected a whole number from 1 to 1048576, got 'many'" },
	{ "daemon:\n  devices: [1]\n",
	  "c.yaml:2:12: daemon: devices: expected a mapping of mount points to settings, got a list" },
};

static void test_errors(void **state)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dconfig cfg;
		char err[512];

		if (load(&cfg, bad[i].text, err, sizeof(err)) >= 0)
			fail_msg("accepted: %s", bad[i].text);
		if (strcmp(err, bad[i].err))
			fail_msg("%s\n  got:      %s\n  expected: %s", bad[i].text, err, bad[i].err);
		dconfig_free(&cfg);
	}
}

static void test_file(void **state)
{
	struct dconfig cfg;
	char err[512];

	assert_int_equal(dconfig_defaults(&cfg), 0);
	/* A file named explicitly must exist; none found by the search is fine. */
	assert_true(dconfig_load(&cfg, "/nonexistent/iosig.yaml", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/iosig.yaml"));
	dconfig_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
