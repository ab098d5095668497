/* SPDX-License-Identifier: MIT */
/* version.c - the version of the library actually loaded. */
#include "iosig.h"

const char *iosig_version(void)
{
	return IOSIG_VERSION_STRING;
}
