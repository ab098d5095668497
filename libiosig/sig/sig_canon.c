/* SPDX-License-Identifier: MIT */
/*
 * sig_canon.c - the canonical text of a signature, an ABI between the
 * compiler plugins (which embed it in binaries) and libiosig (which parses it
 * at run time with iosig_sig_parse()).  Keep it stable; the grammar is in
 * docs/signature-language.md:
 *
 *   canonical = [ param *( " " param ) ]        params in enum iosig_param order
 *   param     = flag | value-param "(" number-or-slot ")" | "name(" c-string ")"
 *   flag      = "global" | "local" | "persist" | "tmp" | "sequential_access"
 *             | "random_access" | "archive" | "tamper"        (primary names only)
 *   number    = sizes: decimal integer of bytes; times (seconds) and
 *               fractions: decimal integer when integral and < 1e17, else
 *               the shortest "%g" text that reads back exactly (C locale)
 *   slot      = "$" decimal index, counting from 0 in text order
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sig_internal.h"

void sigp_put(char *buf, size_t size, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*pos < size ? buf + *pos : NULL, *pos < size ? size - *pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n;
}

/* sigp_put() of a plain string, without the cost of a printf. */
static void put_str(char *buf, size_t size, size_t *pos, const char *str)
{
	size_t n = strlen(str);

	if (*pos < size) {
		size_t room = size - *pos - 1, k = n < room ? n : room;

		memcpy(buf + *pos, str, k);
		buf[*pos + k] = '\0';
	}
	*pos += n;
}

int sigp_put_name(char *buf, size_t size, size_t *pos, const char *name)
{
	char esc[3] = "\\";

	put_str(buf, size, pos, "\"");
	for (const char *c = name; *c; c++) {
		unsigned char ch = (unsigned char)*c;

		if (ch < 0x20 || ch == 0x7f)
			return -EINVAL;
		esc[1] = (char)ch;
		/* "\"" and "\\" escaped, every other byte as it is */
		put_str(buf, size, pos, ch == '"' || ch == '\\' ? esc : esc + 1);
	}
	put_str(buf, size, pos, "\"");
	return 0;
}

/* A value of parameter id in base units, as the canonical text writes it. */
static int put_number(char *buf, size_t size, size_t *pos, enum iosig_param id,
		      struct sigp_num n)
{
	double v = sigp_num_double(n);
	char tmp[40], msg[8];

	if (sigp_param_check(id, v, msg, sizeof(msg)) < 0)
		return -ERANGE;
	if (id == IOSIG_P_SIZE_PER_IO || id == IOSIG_P_TOTALSIZE) {
		sigp_put(buf, size, pos, "%llu", (unsigned long long)sigp_size_of(n));
		return 0;
	}
	if (v == floor(v) && fabs(v) < 1e17)
		sigp_put(buf, size, pos, "%lld", (long long)v);
	else
		sigp_put(buf, size, pos, "%s", sigp_fmt_double(v, tmp, sizeof(tmp)));
	return 0;
}

static const struct iosig_pragma_param *find_param(const struct iosig_pragma *pr,
						   enum iosig_param id)
{
	for (unsigned i = 0; i < pr->nparams; i++)
		if (pr->params[i].id == id)
			return &pr->params[i];
	return NULL;
}

/* What one parameter of a canonical text holds. */
struct canon_value {
	int slot;             /* >= 0: "$slot" */
	struct sigp_num num;  /* else the folded value (value parameters) */
	const char *name;     /* IOSIG_P_NAME */
};

/* Appends one parameter, preceded by a space unless it is the first. */
static int put_param(char *buf, size_t size, size_t *pos, enum iosig_param id,
		     const struct canon_value *v)
{
	const struct sigp_param_info *info = sigp_param_info(id);
	int r = 0;

	if (*pos)
		put_str(buf, size, pos, " ");
	put_str(buf, size, pos, info->name);
	if (info->flag)
		return 0;
	put_str(buf, size, pos, "(");
	if (id == IOSIG_P_NAME)
		r = v->name && v->name[0] ? sigp_put_name(buf, size, pos, v->name) : -EINVAL;
	else if (v->slot >= 0)
		sigp_put(buf, size, pos, "$%d", v->slot);
	else
		r = put_number(buf, size, pos, id, v->num);
	put_str(buf, size, pos, ")");
	return r;
}

int iosig_pragma_canonical(const struct iosig_pragma *pragma, char *buf, size_t size,
			   const struct iosig_expr **ret_slots, unsigned max_slots,
			   unsigned *ret_nslots)
{
	const struct iosig_expr *slots[IOSIG_P_COUNT];
	unsigned nslots = 0;
	size_t pos = 0;
	int r;

	if (!pragma || (!buf && size))
		return -EINVAL;
	if (size)
		buf[0] = '\0';
	for (int id = 0; id < IOSIG_P_COUNT; id++) {
		const struct iosig_pragma_param *q = find_param(pragma, (enum iosig_param)id);
		struct canon_value v = { .slot = -1 };

		if (!q)
			continue;
		if (id == IOSIG_P_NAME) {
			v.name = q->expr && q->expr->text ? q->expr->text : pragma->name;
		} else if (sigp_param_info((enum iosig_param)id)->flag) {
			/* nothing to evaluate */
		} else if (!q->expr) {
			return -EINVAL;
		} else if (q->expr->constant) {
			r = sigp_eval(q->expr, NULL, 0, NULL, &v.num);
			if (r < 0)
				return r == -ENOMEM ? r : -EINVAL;
		} else {
			v.slot = (int)nslots;
			slots[nslots++] = q->expr;
		}
		r = put_param(buf, size, &pos, (enum iosig_param)id, &v);
		if (r < 0)
			return r;
	}
	if (pos >= size || nslots > max_slots || (nslots && !ret_slots))
		return -ENOSPC;
	if (nslots)
		memcpy(ret_slots, slots, nslots * sizeof(*slots));
	if (ret_nslots)
		*ret_nslots = nslots;
	return 0;
}

int iosig_sig_format(const struct iosig_sig *sig, char *buf, size_t size)
{
	size_t pos = 0;
	int r;

	if (!sig || (!buf && size))
		return -EINVAL;
	if (size)
		buf[0] = '\0';
	if (sig->set & ~((1u << IOSIG_P_COUNT) - 1))
		return -EINVAL;
	for (int id = 0; id < IOSIG_P_COUNT; id++) {
		struct canon_value v = { .slot = -1 };

		if (!(sig->set & IOSIG_HAS(id)))
			continue;
		switch (id) {
		case IOSIG_P_SIZE_PER_IO:
		case IOSIG_P_TOTALSIZE: {
			uint64_t bytes = id == IOSIG_P_SIZE_PER_IO ? sig->size_per_io
								   : sig->totalsize;

			if (bytes > (1ull << 63))
				return -ERANGE;
			/* 2^63 itself does not fit an int64_t: print it via
			 * the double, which holds it exactly */
			if (bytes > (uint64_t)INT64_MAX)
				v.num.f = (double)bytes;
			else
				v.num = (struct sigp_num){ .is_int = true, .i = (int64_t)bytes };
			break;
		}
		case IOSIG_P_MIN_MTTDL:
			v.num.f = sig->min_mttdl;
			break;
		case IOSIG_P_AVAILABILITY:
			v.num.f = sig->availability;
			break;
		case IOSIG_P_LIFETIME:
			v.num.f = sig->lifetime;
			break;
		case IOSIG_P_NAME:
			if (!memchr(sig->name, '\0', sizeof(sig->name)))
				return -EINVAL;
			v.name = sig->name;
			break;
		default:
			break;
		}
		r = put_param(buf, size, &pos, (enum iosig_param)id, &v);
		if (r < 0)
			return r;
	}
	if (pos > (size_t)2147483647)
		return -EOVERFLOW;
	return (int)pos;
}
