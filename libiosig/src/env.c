/* SPDX-License-Identifier: MIT */
/* env.c - reading the environment, never in a privileged process (env.h). */
#include "env.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *env_get(const char *name)
{
	return secure_getenv(name);
}

bool env_flag(const char *name)
{
	const char *v = env_get(name);

	if (!v || !*v)
		return false;
	return strcmp(v, "0") && strcasecmp(v, "no") && strcasecmp(v, "false") &&
	       strcasecmp(v, "off");
}
