/* SPDX-License-Identifier: MIT */
/*
 * rd_path.c - lexical path normalisation and the names of data files (see
 * redirect.h), in a file of its own: the LD_PRELOAD library of
 * iosig-redirect links it without the rest of the runtime, which it loads
 * only when a rule matches or a link looks like one the runtime made.
 */
#include <errno.h>
#include <string.h>

#include "redirect.h"

int rd_path_normalise(const char *in, char *out, size_t size)
{
	size_t len = 0;

	if (in[0] != '/' || size < 2)
		return -EINVAL;
	out[0] = '/';
	out[1] = '\0';
	len = 1;
	while (*in) {
		const char *end;
		size_t n;

		while (*in == '/')
			in++;
		end = strchrnul(in, '/');
		n = (size_t)(end - in);
		if (n == 0 || (n == 1 && in[0] == '.')) {
			/* nothing */
		} else if (n == 2 && in[0] == '.' && in[1] == '.') {
			while (len > 1 && out[len - 1] != '/')
				len--;
			if (len > 1)
				len--;
			out[len] = '\0';
		} else {
			if (len + (len > 1) + n + 1 > size)
				return -ENAMETOOLONG;
			if (len > 1)
				out[len++] = '/';
			memcpy(out + len, in, n);
			len += n;
			out[len] = '\0';
		}
		in = end;
	}
	return 0;
}

size_t rd_data_name_prefix(const char *name)
{
	size_t hex;

	if (name[0] == 'L' && name[1] == '-')
		hex = 16;
	else if (name[0] == 'G' && name[1] == '-')
		hex = 32;
	else
		return 0;
	for (size_t i = 2; i < 2 + hex; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	if (name[2 + hex] != '-' || !name[3 + hex])
		return 0;
	return 3 + hex;
}

bool rd_data_target(const char *target)
{
	const char *slash = strrchr(target, '/');

	return target[0] == '/' && slash != target && rd_data_name_prefix(slash + 1) > 0;
}
