/* SPDX-License-Identifier: MIT */
/*
 * policy_opt.c - option tables (fio_option style): defaults, parsing with
 * units, bounds, and the --help text, all from one table per policy.
 * Values with units go through the project's one unit parser,
 * iosig_parse_value() (libiosig/sig), so a policy option, a simulated
 * device and the catalog's configuration spell sizes, times and rates alike.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "iosig.h"
#include "policy.h"
#include "pol_util.h"


/* Scales of the units policy_opts_format() writes values in. */
struct unit {
	const char *name;
	uint64_t mult;
};

static const struct unit time_units[] = {
	{ "ns", 1 }, { "us", POLICY_NS_PER_US }, { "ms", POLICY_NS_PER_MS },
	{ "s", POLICY_NS_PER_S }, { "min", 60 * POLICY_NS_PER_S }, { "h", 3600 * POLICY_NS_PER_S },
};

static const char *type_name(enum policy_opt_type t)
{
	switch (t) {
	case POLICY_OPT_BOOL: return "bool";
	case POLICY_OPT_UINT: return "int";
	case POLICY_OPT_DOUBLE: return "float";
	case POLICY_OPT_SIZE: return "size";
	case POLICY_OPT_TIME: return "time";
	case POLICY_OPT_RATE: return "rate";
	case POLICY_OPT_ENUM: return "choice";
	}
	return "?";
}

static const char *type_form(enum policy_opt_type t)
{
	switch (t) {
	case POLICY_OPT_BOOL: return "0/1, true/false, yes/no or on/off";
	case POLICY_OPT_UINT: return "a non-negative integer, e.g. 16";
	case POLICY_OPT_DOUBLE: return "a number, e.g. 0.5";
	case POLICY_OPT_SIZE: return "a size, e.g. 4096, 4KiB, 64K, 2MB (K/M/G/T = powers of 1024)";
	case POLICY_OPT_TIME: return "a time with a unit, e.g. 500ms, 5s, 100us, 250ns, 2min";
	case POLICY_OPT_RATE: return "a rate, e.g. 2MB/s, 512KiB/s";
	case POLICY_OPT_ENUM: return "one of the listed choices";
	}
	return "?";
}

/*
 * Parses a size, time or rate with the project's unit parser into a whole
 * number of base units: bytes, nanoseconds, bytes per second.  Returns 0,
 * -EINVAL with the reason in why, or -ERANGE when it does not fit 64 bits.
 * A time must carry its unit unless it is 0 ("5" could mean anything).
 */
static int parse_units(enum policy_opt_type type, const char *value, uint64_t *ret, char *why,
		       size_t whylen)
{
	static const enum iosig_dim dims[] = {
		[POLICY_OPT_SIZE] = IOSIG_DIM_SIZE,
		[POLICY_OPT_TIME] = IOSIG_DIM_TIME,
		[POLICY_OPT_RATE] = IOSIG_DIM_RATE,
	};
	struct iosig_error e = { 0 };
	double v, plain, scaled, whole;
	int r;

	r = iosig_parse_value(value, dims[type], &v, &e);
	if (r < 0) {
		snprintf(why, whylen, "%s", e.msg);
		return r == -ERANGE ? -ERANGE : -EINVAL;
	}
	if (v < 0) {
		snprintf(why, whylen, "it is negative");
		return -EINVAL;
	}
	if (type == POLICY_OPT_TIME && v != 0 &&
	    iosig_parse_value(value, IOSIG_DIM_NONE, &plain, NULL) == 0) {
		snprintf(why, whylen, "needs a time unit (ns, us, ms, s, min, h), e.g. %sms", value);
		return -EINVAL;
	}
	scaled = type == POLICY_OPT_TIME ? v * (double)POLICY_NS_PER_S : v;
	whole = nearbyint(scaled);
	if (whole >= 18446744073709551616.0)
		return -ERANGE;
	/* A time is a decimal number of seconds: allow the rounding of that. */
	if (fabs(scaled - whole) > (type == POLICY_OPT_TIME ? 1e-3 : 0)) {
		snprintf(why, whylen, "it is not a whole number of %s",
			 type == POLICY_OPT_TIME ? "nanoseconds" : "bytes");
		return -EINVAL;
	}
	*ret = (uint64_t)whole;
	return 0;
}

static int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "1", "true", "yes", "on", NULL };
	static const char *const no[] = { "0", "false", "no", "off", NULL };

	for (unsigned i = 0; yes[i]; i++)
		if (!strcasecmp(s, yes[i])) {
			*ret = true;
			return 0;
		}
	for (unsigned i = 0; no[i]; i++)
		if (!strcasecmp(s, no[i])) {
			*ret = false;
			return 0;
		}
	return -EINVAL;
}

/* Parses value for opt into *ret_u / *ret_d / *ret_b (by type). */
static int parse_value(const struct policy_opt *opt, const char *value, uint64_t *ret_u,
		       double *ret_d, bool *ret_b, const char *who, char *err, size_t errlen)
{
	int r;

	switch (opt->type) {
	case POLICY_OPT_BOOL:
		if (parse_bool(value, ret_b) < 0)
			goto bad_form;
		return 0;
	case POLICY_OPT_UINT: {
		const char *p = value;
		char *end;

		while (isspace((unsigned char)*p))
			p++;
		if (!isdigit((unsigned char)*p))
			goto bad_form;
		errno = 0;
		*ret_u = strtoull(p, &end, 10);
		if (errno == ERANGE)
			goto too_big;
		while (isspace((unsigned char)*end))
			end++;
		if (*end)
			goto bad_form;
		break;
	}
	case POLICY_OPT_DOUBLE: {
		char *end;

		errno = 0;
		*ret_d = strtod(value, &end);
		while (isspace((unsigned char)*end))
			end++;
		if (end == value || *end || errno == ERANGE || !isfinite(*ret_d))
			goto bad_form;
		if (*ret_d < opt->fmin || *ret_d > opt->fmax) {
			pol_errbuf(err, errlen, "%soption '%s': %s is out of range [%g, %g]", who,
				opt->name, value, opt->fmin, opt->fmax);
			return -EINVAL;
		}
		return 0;
	}
	case POLICY_OPT_SIZE:
	case POLICY_OPT_TIME:
	case POLICY_OPT_RATE: {
		char why[sizeof(((struct iosig_error *)0)->msg)];

		r = parse_units(opt->type, value, ret_u, why, sizeof(why));
		if (r == -ERANGE)
			goto too_big;
		if (r < 0 && !strncmp(why, "needs ", 6)) {
			pol_errbuf(err, errlen, "%soption '%s': '%s' %s", who, opt->name, value, why);
			return -EINVAL;
		}
		/* The unit parser's reason when it says more than "not a
		 * number with a unit" (a misspelt unit, a wrong dimension). */
		if (r < 0 && strstr(why, "is not a constant"))
			goto bad_form;
		if (r < 0) {
			pol_errbuf(err, errlen, "%soption '%s': '%s' is not a valid %s: %s (expected %s)",
				   who, opt->name, value, type_name(opt->type), why,
				   type_form(opt->type));
			return -EINVAL;
		}
		break;
	}
	case POLICY_OPT_ENUM: {
		unsigned i;
		size_t used = 0;
		char list[192] = "";

		for (i = 0; opt->choices && opt->choices[i]; i++)
			if (!strcasecmp(opt->choices[i], value)) {
				*ret_u = i;
				return 0;
			}
		for (i = 0; opt->choices && opt->choices[i] && used < sizeof(list); i++)
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 i ? ", " : "", opt->choices[i]);
		pol_errbuf(err, errlen, "%soption '%s': '%s' is not one of: %s", who, opt->name,
			value, list);
		return -EINVAL;
	}
	}
	if (*ret_u < opt->min || *ret_u > opt->max) {
		char lo[32], hi[32];
		struct policy_opt tmp = *opt;
		uint64_t b;

		tmp.off = 0;
		b = opt->min;
		policy_opts_format(&tmp, &b, lo, sizeof(lo));
		b = opt->max;
		policy_opts_format(&tmp, &b, hi, sizeof(hi));
		pol_errbuf(err, errlen, "%soption '%s': %s is out of range [%s, %s]", who, opt->name,
			value, lo, hi);
		return -EINVAL;
	}
	return 0;

too_big:
	pol_errbuf(err, errlen, "%soption '%s': '%s' is too large", who, opt->name, value);
	return -EINVAL;
bad_form:
	pol_errbuf(err, errlen, "%soption '%s': '%s' is not a valid %s (expected %s)", who, opt->name,
		value, type_name(opt->type), type_form(opt->type));
	return -EINVAL;
}

static void store(const struct policy_opt *opt, void *opts, uint64_t u, double d, bool b)
{
	char *p = (char *)opts + opt->off;

	switch (opt->type) {
	case POLICY_OPT_BOOL:
		memcpy(p, &b, sizeof(b));
		break;
	case POLICY_OPT_DOUBLE:
		memcpy(p, &d, sizeof(d));
		break;
	case POLICY_OPT_ENUM: {
		unsigned v = (unsigned)u;

		memcpy(p, &v, sizeof(v));
		break;
	}
	default:
		memcpy(p, &u, sizeof(u));
		break;
	}
}

static const struct policy_opt *lookup(const struct policy_opt *tab, const char *name, size_t n)
{
	for (const struct policy_opt *o = tab; o && o->name; o++)
		if (strlen(o->name) == n && !strncmp(o->name, name, n))
			return o;
	return NULL;
}

static void unknown_opt(const struct policy_opt *tab, const char *name, size_t n, char *err,
			size_t errlen)
{
	char list[256] = "";
	size_t used = 0;

	for (const struct policy_opt *o = tab; o && o->name && used < sizeof(list); o++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
					 o == tab ? "" : ", ", o->name);
	if (!tab || !tab->name)
		pol_errbuf(err, errlen, "unknown option '%.*s': this policy takes no options",
			(int)n, name);
	else
		pol_errbuf(err, errlen, "unknown option '%.*s' (valid: %s)", (int)n, name, list);
}

int policy_opts_set(const struct policy_opt *tab, void *opts, const char *name, const char *value,
		    char *err, size_t errlen)
{
	const struct policy_opt *opt = lookup(tab, name, strlen(name));
	uint64_t u = 0;
	double d = 0;
	bool b = false;
	int r;

	if (!opt) {
		unknown_opt(tab, name, strlen(name), err, errlen);
		return -ENOENT;
	}
	r = parse_value(opt, value, &u, &d, &b, "", err, errlen);
	if (r < 0)
		return r;
	store(opt, opts, u, d, b);
	return 0;
}

int policy_opts_defaults(const struct policy_opt *tab, void *opts, char *err, size_t errlen)
{
	for (const struct policy_opt *o = tab; o && o->name; o++) {
		uint64_t u = 0;
		double d = 0;
		bool b = false;
		int r;

		if (!o->def) {
			pol_errbuf(err, errlen, "option '%s' has no default", o->name);
			return -EINVAL;
		}
		if (o->type == POLICY_OPT_ENUM && !o->choices) {
			pol_errbuf(err, errlen, "option '%s' is a choice without choices", o->name);
			return -EINVAL;
		}
		if (o->type == POLICY_OPT_DOUBLE ? o->fmin > o->fmax : o->min > o->max) {
			pol_errbuf(err, errlen, "option '%s' has min > max", o->name);
			return -EINVAL;
		}
		r = parse_value(o, o->def, &u, &d, &b, "default of ", err, errlen);
		if (r < 0)
			return r;
		store(o, opts, u, d, b);
	}
	return 0;
}

int policy_opts_parse(const struct policy_opt *tab, void *opts, const char *str, char *err,
		      size_t errlen)
{
	const char *p = str;

	while (p && *p) {
		const char *end = strchr(p, ',');
		const char *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const struct policy_opt *opt;
		char value[128];
		uint64_t u = 0;
		double d = 0;
		bool b = false;
		int r;

		eq = memchr(p, '=', len);
		if (len == 0) {
			pol_errbuf(err, errlen, "empty option in '%s' (write opt=value,opt=value)", str);
			return -EINVAL;
		}
		if (!eq || eq == p) {
			pol_errbuf(err, errlen, "'%.*s' is not opt=value (in '%s')", (int)len, p, str);
			return -EINVAL;
		}
		opt = lookup(tab, p, (size_t)(eq - p));
		if (!opt) {
			unknown_opt(tab, p, (size_t)(eq - p), err, errlen);
			return -ENOENT;
		}
		if ((size_t)(p + len - eq - 1) >= sizeof(value)) {
			pol_errbuf(err, errlen, "option '%s': value too long", opt->name);
			return -EINVAL;
		}
		memcpy(value, eq + 1, (size_t)(p + len - eq - 1));
		value[p + len - eq - 1] = '\0';
		if (!value[0]) {
			pol_errbuf(err, errlen, "option '%s': missing value (expected %s)", opt->name,
				type_form(opt->type));
			return -EINVAL;
		}
		r = parse_value(opt, value, &u, &d, &b, "", err, errlen);
		if (r < 0)
			return r;
		store(opt, opts, u, d, b);
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* Largest unit that divides v exactly ("64KiB", "500ms"). */
static void fmt_scaled(uint64_t v, const struct unit *units, const char *const *names,
		       unsigned n, char *buf, size_t size, const char *suffix)
{
	int best = -1;

	for (unsigned i = 0; i < n; i++)
		if (units[i].mult && v && v % units[i].mult == 0 &&
		    (best < 0 || units[i].mult > units[best].mult))
			best = (int)i;
	if (best < 0)
		snprintf(buf, size, "%" PRIu64 "%s%s", v, names[0], suffix);
	else
		snprintf(buf, size, "%" PRIu64 "%s%s", v / units[best].mult, names[best], suffix);
}

int policy_opts_format(const struct policy_opt *opt, const void *opts, char *buf, size_t size)
{
	const char *p = (const char *)opts + opt->off;
	uint64_t u;

	switch (opt->type) {
	case POLICY_OPT_BOOL: {
		bool b;

		memcpy(&b, p, sizeof(b));
		snprintf(buf, size, "%d", b);
		return 0;
	}
	case POLICY_OPT_DOUBLE: {
		double d;

		memcpy(&d, p, sizeof(d));
		snprintf(buf, size, "%g", d);
		return 0;
	}
	case POLICY_OPT_ENUM: {
		unsigned v;
		unsigned n = 0;

		memcpy(&v, p, sizeof(v));
		while (opt->choices && opt->choices[n])
			n++;
		snprintf(buf, size, "%s", v < n ? opt->choices[v] : "?");
		return 0;
	}
	default:
		break;
	}
	memcpy(&u, p, sizeof(u));
	if (u == UINT64_MAX) {
		snprintf(buf, size, "unlimited");
		return 0;
	}
	switch (opt->type) {
	case POLICY_OPT_SIZE:
	case POLICY_OPT_RATE: {
		static const struct unit su[] = {
			{ "B", 1 }, { "KiB", 1ull << 10 }, { "MiB", 1ull << 20 },
			{ "GiB", 1ull << 30 }, { "TiB", 1ull << 40 },
		};
		static const char *const sn[] = { "B", "KiB", "MiB", "GiB", "TiB" };

		fmt_scaled(u, su, sn, 5, buf, size, opt->type == POLICY_OPT_RATE ? "/s" : "");
		return 0;
	}
	case POLICY_OPT_TIME: {
		static const char *const tn[] = { "ns", "us", "ms", "s", "min", "h" };

		fmt_scaled(u, time_units, tn, 6, buf, size, "");
		return 0;
	}
	default:
		snprintf(buf, size, "%" PRIu64, u);
		return 0;
	}
}

int policy_help(const struct policy_ops *ops, FILE *fp)
{
	fprintf(fp, "%s - %s\n", ops->name, ops->summary ? ops->summary : "");
	if (!ops->opts || !ops->opts->name) {
		fprintf(fp, "  (no options)\n");
		return ferror(fp) ? -EIO : 0;
	}
	for (const struct policy_opt *o = ops->opts; o->name; o++) {
		char lo[32], hi[32], range[80] = "";

		if (o->type == POLICY_OPT_DOUBLE) {
			snprintf(range, sizeof(range), "; range %g..%g", o->fmin, o->fmax);
		} else if (o->type != POLICY_OPT_BOOL && o->type != POLICY_OPT_ENUM) {
			struct policy_opt t = *o;
			uint64_t b;

			t.off = 0;
			b = o->min;
			policy_opts_format(&t, &b, lo, sizeof(lo));
			b = o->max;
			policy_opts_format(&t, &b, hi, sizeof(hi));
			snprintf(range, sizeof(range), "; range %s..%s", lo, hi);
		} else if (o->type == POLICY_OPT_ENUM) {
			size_t used = (size_t)snprintf(range, sizeof(range), "; one of");

			for (unsigned i = 0; o->choices && o->choices[i] && used < sizeof(range); i++)
				used += (size_t)snprintf(range + used, sizeof(range) - used, " %s",
							 o->choices[i]);
		}
		fprintf(fp, "  %-18s %-6s %s (default %s%s)\n", o->name, type_name(o->type),
			o->help ? o->help : "", o->def, range);
	}
	return ferror(fp) ? -EIO : 0;
}
