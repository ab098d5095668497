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
#include "iosig.h"

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
	/* Write-back: 0 = from the kernel's settings (engine.c). */
	assert_int_equal(cfg.writeback.dirty, 0);
	assert_int_equal(cfg.writeback.expire_ns, 0);
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
		"    /mnt/gluster: { schedule: yes }\n"
		"  limits:\n"
		"    clients: 10\n"
		"    fds_per_client: 20\n"
		"    ring_size: 1MiB\n"
		"    queued_bytes: 16MiB\n"
		"  writeback:\n"
		"    dirty: 32MiB\n"
		"    expire: 2.5s\n";
	struct dconfig cfg;
	unsigned qd;
	char err[512];

	assert_int_equal(load(&cfg, text, err, sizeof(err)), 0);
	assert_string_equal(cfg.socket, "/run/test/iosigd.sock");
	assert_string_equal(cfg.policy, "deadline:fifo_batch=8");
	assert_int_equal(cfg.ndevices, 3);
	assert_int_equal(cfg.limits.clients, 10);
	assert_int_equal(cfg.limits.fds_per_client, 20);
	assert_int_equal(cfg.limits.ring_size, 1 << 20);
	assert_int_equal(cfg.limits.queued_bytes, 16 << 20);
	assert_int_equal(cfg.writeback.dirty, 32 << 20);
	assert_int_equal(cfg.writeback.expire_ns, 2500000000ull);
	assert_string_equal(dconfig_policy_for(&cfg, "/mnt/hdd", &qd), "bid-hdd:wait_max=50ms");
	assert_int_equal(qd, 2);
	/* A pattern with no policy of its own: the default, its depth. */
	assert_string_equal(dconfig_policy_for(&cfg, "/mnt/ssd2", &qd), "deadline:fifo_batch=8");
	assert_int_equal(qd, 64);
	assert_string_equal(dconfig_policy_for(&cfg, "/elsewhere", &qd), "deadline:fifo_batch=8");
	assert_int_equal(qd, 0);
	/* Global mounts are passed through unless an entry says schedule. */
	assert_true(dconfig_schedules(&cfg, "/mnt/gluster"));
	assert_false(dconfig_schedules(&cfg, "/mnt/hdd"));
	assert_false(dconfig_schedules(&cfg, "/elsewhere"));
	assert_string_equal(cfg.file, "c.yaml");
	dconfig_free(&cfg);
}

static const struct {
	const char *text;
	const char *err;
} bad[] = {
	{ "daemon:\n  polcy: noop\n", "c.yaml:2:3: daemon: unknown key 'polcy'; did you mean 'policy'?" },
	{ "daemon:\n  zzz: 1\n",
	  "c.yaml:2:3: daemon: unknown key 'zzz': expected socket, policy, devices, limits, tiers or writeback" },
	{ "daemon:\n  writeback: { dirty: 0 }\n",
	  "c.yaml:2:23: daemon: writeback: dirty: expected a size in bytes from 1 to 1099511627776, got '0'" },
	{ "daemon:\n  writeback: { expire: 2h }\n",
	  "c.yaml:2:24: daemon: writeback: expire: expected a duration from 1ms to 1h, got '2h'" },
	{ "daemon:\n  writeback: { expire: soon }\n",
	  "c.yaml:2:24: daemon: writeback: expire: expected a duration from 1ms to 1h, got 'soon'" },
	{ "daemon:\n  writeback: { drity: 1MiB }\n",
	  "c.yaml:2:16: daemon: writeback: unknown key 'drity'; did you mean 'dirty'?" },
	{ "daemon:\n  policy: nope\n",
	  "c.yaml:2:11: daemon: policy: unknown policy 'nope' (iosigd runs noop, deadline, cfq, bfq, bid-hdd, burst, and with tiers bid-hybrid, mios-d, mios-e, nvcache)" },
	{ "daemon:\n  policy: mios-d\n",
	  "c.yaml:2:11: daemon: policy: policy 'mios-d' places data on tiers: give the device its tiers (tiers: [NAME] of daemon: tiers:), or use one of noop, deadline, cfq, bfq, bid-hdd, burst" },
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
	  "c.yaml:3:11: daemon: device '/a': unknown key 'depth': expected policy, queue_depth, tiers, defer_close, schedule or experimental" },
	{ "daemon:\n  devices:\n    /a: { schedule: maybe }\n",
	  "c.yaml:3:21: daemon: device '/a': schedule: bad value 'maybe': expected true or false" },
	{ "daemon:\n  devices:\n    /a: { policy: \"cfq:quantum=0\" }\n",
	  "c.yaml:3:19: daemon: device '/a': cfq: option 'quantum': 0 is out of range [1, 1024]" },
	{ "daemon:\n  limits:\n    ring_size: 1KiB\n",
	  "c.yaml:3:16: daemon: limits: ring_size: expected a size in bytes from 65536 to 1073741824, got '1KiB'" },
	{ "daemon:\n  limits:\n    clients: many\n",
	  "c.yaml:3:14: daemon: limits: clients: expected a whole number from 1 to 1048576, got 'many'" },
	{ "daemon:\n  devices:\n    /a: {}\nversion: 1\ndaemon:\n  devices:\n    /b: {}\n",
	  "c.yaml:5:1: daemon: given twice (first at line 1)" },
	{ "daemon:\n  devices: [1]\n",
	  "c.yaml:2:12: daemon: devices: expected a mapping of mount points to settings, got a list" },
	/* tiers (docs/tiers.md) */
	{ "daemon:\n  devices:\n    /a: { policy: bid-hybrid }\n",
	  "c.yaml:3:19: daemon: device '/a': policy 'bid-hybrid' places data on tiers: give the device its tiers (tiers: [NAME] of daemon: tiers:), or use one of noop, deadline, cfq, bfq, bid-hdd, burst" },
	{ "daemon:\n  devices:\n    /a: { tiers: [s] }\n  tiers:\n    s: { mount: /m, size: 1GiB }\n",
	  "c.yaml:3:18: daemon: device '/a': policy 'noop' uses no tiers: remove tiers:, or use one of bid-hybrid, mios-d, mios-e, nvcache" },
	{ "daemon:\n  devices:\n    /a: { policy: nvcache, tiers: [s] }\n",
	  "c.yaml:3:35: daemon: device '/a': tiers: no tier 's' in daemon: tiers:" },
	{ "daemon:\n  devices:\n    /a: { policy: mios-d, tiers: [s], experimental: maybe }\n",
	  "c.yaml:3:53: daemon: device '/a': experimental: bad value 'maybe': expected true or false" },
	{ "daemon:\n  devices:\n    /a: { policy: nvcache, tiers: [s] }\n    /b: { policy: nvcache, tiers: s }\n"
	  "  tiers:\n    s: { mount: /m, size: 1GiB }\n",
	  "c.yaml:4:35: daemon: device '/b': tiers: tier 's' already belongs to another device" },
	{ "daemon:\n  devices:\n    \"/a*\": { policy: nvcache, tiers: [s] }\n  tiers:\n    s: { mount: /m, size: 1GiB }\n",
	  "c.yaml:3:38: daemon: device '/a*': tiers: a tier belongs to one device: give the mount point itself, not a pattern" },
	{ "daemon:\n  devices:\n    /a: { policy: nvcache, tiers: [S!] }\n",
	  "c.yaml:3:36: daemon: device '/a': tiers: 'S!' is not a tier name ([a-z0-9_-], at most 63)" },
	{ "daemon:\n  tiers:\n    s: { size: 1GiB }\n",
	  "c.yaml:3:5: daemon: tier 's': give either path: (a store file or block device) or mount: (a store file on that mount), not neither" },
	{ "daemon:\n  tiers:\n    s: { mount: /m, path: /x }\n",
	  "c.yaml:3:5: daemon: tier 's': give either path: (a store file or block device) or mount: (a store file on that mount), not both" },
	{ "daemon:\n  tiers:\n    s: { mount: /m }\n",
	  "c.yaml:3:5: daemon: tier 's': size: needed for a store file on a mount, e.g. size: 4GiB" },
	{ "daemon:\n  tiers:\n    s: { mount: m, size: 1GiB }\n",
	  "c.yaml:3:17: daemon: tier 's': mount: 'm' is not an absolute path" },
	{ "daemon:\n  tiers:\n    s: { mount: /m, size: 1KiB }\n",
	  "c.yaml:3:27: size: expected a size in bytes from 1048576 to 1125899906842624, got '1KiB'" },
	{ "daemon:\n  tiers:\n    s: { mount: /m, size: 1GiB, class: sdd }\n",
	  "c.yaml:3:40: class: bad value 'sdd': expected one of ram, nvm, ssd, hdd, raid, network; did you mean 'ssd'?" },
	{ "daemon:\n  tiers:\n    s: { mount: /m, size: 1GiB, journl: 1MiB }\n",
	  "c.yaml:3:33: daemon: tier 's': unknown key 'journl'; did you mean 'journal'?" },
	{ "daemon:\n  devices:\n    /a: { policy: nvcache, tiers: [s], defer_close: maybe }\n  tiers:\n    s: { mount: /m, size: 1GiB }\n",
	  "c.yaml:3:53: daemon: device '/a': defer_close: expected true or false, got 'maybe'" },
};

static void test_tiers(void **state)
{
	static const char text[] =
		"daemon:\n"
		"  devices:\n"
		"    /mnt/hdd:\n"
		"      policy: \"bid-hybrid:pf_threshold=64\"\n"
		"      tiers: [ssd]\n"
		"    /mnt/mem:\n"
		"      policy: nvcache\n"
		"      tiers: ram\n"
		"      defer_close: yes\n"
		"    /mnt/ssd2:\n"
		"      policy: mios-d\n"
		"      tiers: [hdd]\n"
		"      experimental: true\n"
		"  tiers:\n"
		"    hdd: { mount: /mnt/hdd2, size: 1GiB }\n"
		"    ssd:\n"
		"      mount: /mnt/ssd/\n"
		"      size: 4GiB\n"
		"      journal: 64MiB\n"
		"      queue_depth: 16\n"
		"    ram:\n"
		"      path: /dev/shm/iosigd-ram.tier\n"
		"      size: 256MiB\n"
		"      class: ram\n";
	const struct dcfg_device *dv;
	const struct dcfg_tier *t;
	struct dconfig cfg;
	char err[512];

	if (load(&cfg, text, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	dv = dconfig_device_for(&cfg, "/mnt/hdd");
	assert_non_null(dv);
	assert_int_equal(dv->ntiers, 1);
	assert_string_equal(dv->tiers[0], "ssd");
	assert_false(dv->defer_close);
	assert_true(dconfig_device_for(&cfg, "/mnt/mem")->defer_close);
	assert_false(dv->experimental);
	assert_true(dconfig_device_for(&cfg, "/mnt/ssd2")->experimental);
	t = dconfig_tier(&cfg, "ssd");
	assert_non_null(t);
	assert_string_equal(t->path, "/mnt/ssd/.iosigd/ssd.tier");
	assert_int_equal(t->size, 4ull << 30);
	assert_int_equal(t->journal, 64 << 20);
	assert_int_equal(t->queue_depth, 16);
	assert_int_equal(t->cls, -1);
	t = dconfig_tier(&cfg, "ram");
	assert_string_equal(t->path, "/dev/shm/iosigd-ram.tier");
	assert_null(t->mount);
	assert_int_equal(t->cls, IOSIG_CLASS_RAM);
	assert_null(dconfig_tier(&cfg, "nope"));
	dconfig_free(&cfg);
}

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
		cmocka_unit_test(test_tiers),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
