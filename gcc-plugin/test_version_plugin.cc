/* SPDX-License-Identifier: MIT */
/*
 * test_version_plugin.cc - a plugin that only runs iosig's version check,
 * built with GP_TEST_BUILT_BASEVER so that it believes it was built for
 * another GCC.  tests/e2e loads it and checks the message names both
 * versions.  Not installed.
 */
#include "gcc-common.h"

#include "version.h"

__attribute__((visibility("default"))) int plugin_is_GPL_compatible;

__attribute__((visibility("default"))) int plugin_init(struct plugin_name_args *info,
						       struct plugin_gcc_version *version)
{
	return gp_version_ok(info->full_name, version) ? 0 : 1;
}
