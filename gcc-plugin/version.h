/* SPDX-License-Identifier: MIT */
/* version.h - the plugin's GCC version check (version.cc). */
#ifndef IOSIG_GCC_VERSION_H
#define IOSIG_GCC_VERSION_H

/* True if the running GCC is the one the plugin was built for; otherwise
 * reports both versions as an error and returns false. */
bool gp_version_ok(const char *plugin_name, struct plugin_gcc_version *running);

#endif /* IOSIG_GCC_VERSION_H */
