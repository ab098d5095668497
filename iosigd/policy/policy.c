/* SPDX-License-Identifier: MIT */
/*
 * policy.c - the policy registry (built-ins plus run-time registrations),
 * ops-table validation, and instance creation from "name:opt=val,..." specs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "pol_util.h"
#include "pol_builtin.h"

#define POLICY_MAX_EXTRA 32

static const struct policy_ops *const builtin[] = {
	&pol_noop_ops,
	&pol_deadline_ops,
	&pol_cfq_ops,
	&pol_bfq_ops,
	&pol_bid_hdd_ops,
	&pol_bid_hybrid_ops,
	&pol_mios_d_ops,
	&pol_mios_e_ops,
	&pol_burst_ops,
	&pol_nvcache_ops,
};
#define NBUILTIN (sizeof(builtin) / sizeof(builtin[0]))

/* Policies registered at run time (daemon plugins, tests). */
static const struct policy_ops *extra[POLICY_MAX_EXTRA];
static size_t nextra;


static bool valid_name(const char *s)
{
	if (!s || !*s || strlen(s) > 32)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return false;
	return true;
}

int policy_ops_check(const struct policy_ops *ops, char *err, size_t errlen)
{
	static const struct {
		size_t off;
		const char *name;
	} hooks[] = {
		{ offsetof(struct policy_ops, init), "init" },
		{ offsetof(struct policy_ops, submit), "submit" },
		{ offsetof(struct policy_ops, dispatch), "dispatch" },
		{ offsetof(struct policy_ops, complete), "complete" },
		{ offsetof(struct policy_ops, tick), "tick" },
		{ offsetof(struct policy_ops, fini), "fini" },
	};
	const char *name;
	void *scratch;
	int r;

	if (!ops) {
		pol_errbuf(err, errlen, "no ops table");
		return -EINVAL;
	}
	name = ops->name ? ops->name : "(unnamed)";
	if (ops->version != POLICY_OPS_VERSION) {
		pol_errbuf(err, errlen, "policy '%s' has ops version %u, this build needs %u: rebuild it against this policy.h",
			name, ops->version, POLICY_OPS_VERSION);
		return -EINVAL;
	}
	if (!valid_name(ops->name)) {
		pol_errbuf(err, errlen, "policy name '%s' is not 1-32 characters of [a-z0-9_-]", name);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		void (*fn)(void);

		memcpy(&fn, (const char *)ops + hooks[i].off, sizeof(fn));
		if (!fn) {
			pol_errbuf(err, errlen, "policy '%s' lacks the required hook %s()", name,
				hooks[i].name);
			return -EINVAL;
		}
	}
	if (ops->opts && ops->opts->name && !ops->opts_size) {
		pol_errbuf(err, errlen, "policy '%s' has options but opts_size 0", name);
		return -EINVAL;
	}
	for (const struct policy_opt *o = ops->opts; o && o->name; o++) {
		size_t w = o->type == POLICY_OPT_BOOL ? sizeof(bool) :
			   o->type == POLICY_OPT_ENUM ? sizeof(unsigned) :
			   o->type == POLICY_OPT_DOUBLE ? sizeof(double) : sizeof(uint64_t);

		if (o->off + w > ops->opts_size) {
			pol_errbuf(err, errlen, "policy '%s': option '%s' lies outside the options struct",
				name, o->name);
			return -EINVAL;
		}
		for (const struct policy_opt *p = ops->opts; p < o; p++)
			if (!strcmp(p->name, o->name)) {
				pol_errbuf(err, errlen, "policy '%s': option '%s' is listed twice", name,
					o->name);
				return -EINVAL;
			}
	}
	if (!ops->opts_size)
		return 0;
	scratch = calloc(1, ops->opts_size);
	if (!scratch) {
		pol_errbuf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = policy_opts_defaults(ops->opts, scratch, err, errlen);
	free(scratch);
	return r;
}

const struct policy_ops *policy_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < policy_count(); i++)
		if (!strcmp(policy_at(i)->name, name))
			return policy_at(i);
	return NULL;
}

size_t policy_count(void)
{
	return NBUILTIN + nextra;
}

const struct policy_ops *policy_at(size_t i)
{
	if (i < NBUILTIN)
		return builtin[i];
	if (i - NBUILTIN < nextra)
		return extra[i - NBUILTIN];
	return NULL;
}

int policy_register(const struct policy_ops *ops, char *err, size_t errlen)
{
	int r = policy_ops_check(ops, err, errlen);

	if (r < 0)
		return r;
	if (policy_find(ops->name)) {
		pol_errbuf(err, errlen, "a policy called '%s' is already registered", ops->name);
		return -EEXIST;
	}
	if (nextra == POLICY_MAX_EXTRA) {
		pol_errbuf(err, errlen, "too many registered policies (max %d)", POLICY_MAX_EXTRA);
		return -ENOSPC;
	}
	extra[nextra++] = ops;
	return 0;
}

int policy_create_ops(const struct policy_ops *ops, const char *optstr,
		      struct policy_env *env, struct policy **ret_pol, char *err, size_t errlen)
{
	struct policy *pol;
	char msg[POLICY_ERR_MAX];
	int r;

	r = policy_ops_check(ops, err, errlen);
	if (r < 0)
		return r;
	if (!env || env->version != POLICY_ENV_VERSION) {
		pol_errbuf(err, errlen, "%s: engine environment version %u, policies need %u", ops->name,
			env ? env->version : 0, POLICY_ENV_VERSION);
		return -EINVAL;
	}
	if (!env->now || !env->inflight || !env->issue || !env->finish || !env->wake_at ||
	    (env->ndev && !env->dev)) {
		pol_errbuf(err, errlen, "%s: engine environment lacks a callback or its devices",
			ops->name);
		return -EINVAL;
	}
	for (unsigned d = 0; d < env->ndev; d++)
		if (!env->dev[d].queue_depth) {
			pol_errbuf(err, errlen, "%s: device %u (%s) has queue depth 0", ops->name, d,
				env->dev[d].name ? env->dev[d].name : "?");
			return -EINVAL;
		}
	pol = calloc(1, sizeof(*pol));
	if (!pol) {
		pol_errbuf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pol->ops = ops;
	pol->env = env;
	if (ops->opts_size) {
		pol->opts = calloc(1, ops->opts_size);
		if (!pol->opts) {
			pol_errbuf(err, errlen, "out of memory");
			r = -ENOMEM;
			goto out_free_pol;
		}
		r = policy_opts_defaults(ops->opts, pol->opts, err, errlen);
		if (r < 0)
			goto out_free_opts;
	}
	r = policy_opts_parse(ops->opts, pol->opts, optstr, msg, sizeof(msg));
	if (r < 0) {
		pol_errbuf(err, errlen, "%s: %s", ops->name, msg);
		r = -EINVAL;
		goto out_free_opts;
	}
	r = ops->init(pol);
	if (r < 0) {
		pol_errbuf(err, errlen, "%s: %s", ops->name, pol->err[0] ? pol->err : strerror(-r));
		goto out_free_opts;
	}
	*ret_pol = pol;
	return 0;

out_free_opts:
	free(pol->opts);
out_free_pol:
	free(pol);
	return r;
}

int policy_create(const char *spec, struct policy_env *env, struct policy **ret_pol,
		  char *err, size_t errlen)
{
	const struct policy_ops *ops;
	const char *colon;
	char name[40];
	size_t n;

	if (!spec || !*spec) {
		pol_errbuf(err, errlen, "empty policy name (try one of the names `iosig-sim --list-policies` shows)");
		return -EINVAL;
	}
	colon = strchr(spec, ':');
	n = colon ? (size_t)(colon - spec) : strlen(spec);
	if (n >= sizeof(name)) {
		pol_errbuf(err, errlen, "policy name '%.*s...' is too long", 32, spec);
		return -ENOENT;
	}
	memcpy(name, spec, n);
	name[n] = '\0';
	ops = policy_find(name);
	if (!ops) {
		char list[256] = "";
		size_t used = 0;

		for (size_t i = 0; i < policy_count() && used < sizeof(list); i++)
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 i ? ", " : "", policy_at(i)->name);
		pol_errbuf(err, errlen, "unknown policy '%s' (known: %s)", name, list);
		return -ENOENT;
	}
	return policy_create_ops(ops, colon ? colon + 1 : NULL, env, ret_pol, err, errlen);
}

void policy_destroy(struct policy *pol)
{
	if (!pol)
		return;
	pol->ops->fini(pol);
	free(pol->opts);
	free(pol);
}
