/* SPDX-License-Identifier: MIT */
/*
 * sig_num.c - decimal floating-point text in and out, always in the C
 * locale.  libiosig runs inside programs that may call setlocale(), where
 * strtod() and printf("%g") would use a decimal comma; the canonical text is
 * an ABI and must not depend on that.  Per-call C locale objects keep this
 * thread-safe without any global state.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sig_internal.h"

/* strtod of s[0..n) in locale c; see sigp_strtod(). */
static int strtod_in(locale_t c, const char *s, size_t n, double *ret)
{
	char small[64], *buf = small, *end;
	double v;
	int ret_code = 0;

	if (n >= sizeof(small)) {
		buf = malloc(n + 1);
		if (!buf)
			return -ENOMEM;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	v = strtod_l(buf, &end, c);
	if (end != buf + n)
		ret_code = -EINVAL;
	else if (errno == ERANGE && isinf(v))
		ret_code = -ERANGE;
	else
		*ret = v;
	if (buf != small)
		free(buf);
	return ret_code;
}

int sigp_strtod(const char *s, size_t n, double *ret)
{
	locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	int r;

	if (!c)
		return -ENOMEM;
	r = strtod_in(c, s, n, ret);
	freelocale(c);
	return r;
}

char *sigp_fmt_double(double v, char *buf, size_t size)
{
	locale_t c, old = (locale_t)0;

	if (v == 0) {
		/* Also turns -0 into 0. */
		snprintf(buf, size, "0");
		return buf;
	}
	c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (c)
		old = uselocale(c);
	for (int prec = 1; prec <= 17; prec++) {
		double back;

		snprintf(buf, size, "%.*g", prec, v);
		if (!c) {
			/* No C locale object (out of memory): keep the
			 * 17-digit form and repair the decimal point below. */
			continue;
		}
		if (strtod_in(c, buf, strlen(buf), &back) == 0 && back == v)
			break;
	}
	if (c) {
		uselocale(old);
		freelocale(c);
	} else {
		/* Whatever the locale's radix character is, it is the only
		 * thing in "%g" output that is not a digit, sign or 'e'. */
		size_t r = 0, w = 0;

		while (buf[r]) {
			char ch = buf[r];

			if ((ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == 'e') {
				buf[w++] = buf[r++];
			} else {
				buf[w++] = '.';
				while (buf[r] && !((buf[r] >= '0' && buf[r] <= '9') ||
						   buf[r] == 'e' || buf[r] == '-' || buf[r] == '+'))
					r++;
			}
		}
		buf[w] = '\0';
	}
	return buf;
}
