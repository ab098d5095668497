/* SPDX-License-Identifier: MIT */
/*
 * fuzz_policy_opts - policy specs ("name:opt=val,...") and option values
 * from arbitrary bytes: policy_create() on a fake two-device environment
 * and policy_opts_parse() on every built-in table.  Any input must give
 * 0 or an error message, never a crash, a hang or a read past its end.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t f_now(struct policy_env *env) { return 0; }
static unsigned f_inflight(struct policy_env *env, unsigned dev) { return 0; }
static int f_issue(struct policy_env *env, struct policy_req *r, unsigned dev, uint64_t off)
{
	return -EBUSY;
}
static void f_finish(struct policy_env *env, struct policy_req *r, int status) { }
static void f_wake_at(struct policy_env *env, uint64_t t) { }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct policy_dev_info devs[3] = {
		{ .name = "hdd", .cls = IOSIG_CLASS_HDD, .capacity = 1ull << 40, .queue_depth = 1 },
		{ .name = "ssd", .cls = IOSIG_CLASS_SSD, .capacity = 1ull << 36, .queue_depth = 8 },
		{ .name = "nvm", .cls = IOSIG_CLASS_NVM, .capacity = 1ull << 26, .queue_depth = 8 },
	};
	struct policy_env env = {
		.version = POLICY_ENV_VERSION, .ndev = 3, .dev = devs, .now = f_now,
		.inflight = f_inflight, .issue = f_issue, .finish = f_finish, .wake_at = f_wake_at,
	};
	struct policy *pol = NULL;
	char *s, err[256];

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (policy_create(s, &env, &pol, err, sizeof(err)) == 0)
		policy_destroy(pol);
	/* The same text as options of every built-in policy. */
	for (size_t i = 0; i < policy_count(); i++) {
		const struct policy_ops *ops = policy_at(i);
		char opts[1024], buf[64];

		if (!ops->opts || ops->opts_size > sizeof(opts))
			continue;
		memset(opts, 0, sizeof(opts));
		if (policy_opts_defaults(ops->opts, opts, err, sizeof(err)) < 0)
			abort();   /* built-in tables are valid */
		policy_opts_parse(ops->opts, opts, s, err, sizeof(err));
		for (const struct policy_opt *o = ops->opts; o->name; o++)
			policy_opts_format(o, opts, buf, sizeof(buf));
	}
	free(s);
	return 0;
}
