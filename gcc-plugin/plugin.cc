/* SPDX-License-Identifier: MIT */
/*
 * plugin.cc - entry point of iosig.so, the GCC plugin that turns
 * "#pragma io sig ..." annotations into calls of libiosig (docs/design.md
 * §3 and §4): version check, -fplugin-arg-iosig-* options, help,
 * and the callbacks that do the work.
 */
#include "iosig-plugin.h"
#include "version.h"

/* GCC refuses plugins that do not declare this. */
__attribute__((visibility("default"))) int plugin_is_GPL_compatible;

int gp_own_errors;
int gp_busy;

struct gp_options gp_opts = {
	.verbose = false,
	.unbound = GP_UNBOUND_WARNING,
};

static const char gp_help[] =
	PLUGIN_HELP_COMMON
	"Link the program with -liosig, or build with -specs=iosig.specs.\n"
	"See iosig-gcc(1).\n";

/* "0.1.0 (built for GCC 12.2.0)", filled in by plugin_init. */
static char gp_version[64];

static struct plugin_info gp_info = {
	.version = gp_version,
	.help = gp_help,
};

/* Parses -fplugin-arg-<name>-<key>[=<value>]; false after an error. */
static bool gp_parse_args(const struct plugin_name_args *info)
{
	bool ok = true;

	for (int i = 0; i < info->argc; i++) {
		const struct plugin_argument *arg = &info->argv[i];

		if (strcmp(arg->key, "verbose") == 0 && !arg->value) {
			gp_opts.verbose = true;
		} else if (strcmp(arg->key, "help") == 0 && !arg->value) {
			fputs(gp_help, stdout);
			fflush(stdout);
		} else if (strcmp(arg->key, "unbound") == 0 && arg->value) {
			if (strcmp(arg->value, "warning") == 0) {
				gp_opts.unbound = GP_UNBOUND_WARNING;
			} else if (strcmp(arg->value, "error") == 0) {
				gp_opts.unbound = GP_UNBOUND_ERROR;
			} else if (strcmp(arg->value, "ignore") == 0) {
				gp_opts.unbound = GP_UNBOUND_IGNORE;
			} else {
				error("invalid value %qs in %<-fplugin-arg-%s-unbound=%s%>; use "
				      "%<warning%>, %<error%> or %<ignore%>",
				      arg->value, info->base_name, arg->value);
				ok = false;
			}
		} else if (strcmp(arg->key, "verbose") == 0 || strcmp(arg->key, "help") == 0) {
			error("%<-fplugin-arg-%s-%s%> takes no value (remove %<=%s%>)",
			      info->base_name, arg->key, arg->value);
			ok = false;
		} else if (strcmp(arg->key, "unbound") == 0) {
			error("%<-fplugin-arg-%s-unbound%> needs a value: "
			      "%<-fplugin-arg-%s-unbound=error%> (or warning, ignore)",
			      info->base_name, info->base_name);
			ok = false;
		} else {
			error("unknown option %<-fplugin-arg-%s-%s%>; the options are verbose, "
			      "unbound=warning|error|ignore and help",
			      info->base_name, arg->key);
			ok = false;
		}
	}
	return ok;
}

__attribute__((visibility("default"))) int plugin_init(struct plugin_name_args *info,
						       struct plugin_gcc_version *version)
{
	const char *name = info->base_name;

	if (!gp_version_ok(info->full_name, version))
		return 1;
	snprintf(gp_version, sizeof(gp_version), "%s (built for GCC %s)", IOSIG_PLUGIN_VERSION,
		 gcc_version.basever);
	register_callback(name, PLUGIN_INFO, NULL, &gp_info);
	if (!gp_parse_args(info))
		return 0; /* the errors fail the compilation */
	if (!gp_have_c_family()) {
		/* lto1 (a link with -flto -fplugin) has nothing to do: the calls
		 * were rewritten when the sources were compiled. */
		if (strcmp(lang_hooks.name, "GNU GIMPLE") != 0)
			warning(0, "%s does nothing in the %s front end: %<#pragma io%> "
				"exists in C and C++ only", info->full_name, lang_hooks.name);
		return 0;
	}
	register_callback(name, PLUGIN_REGISTER_GGC_ROOTS, NULL, (void *)gp_ggc_roots);
	register_callback(name, PLUGIN_PRAGMAS, gp_register_pragmas, NULL);
	register_callback(name, PLUGIN_FINISH_DECL, gp_finish_decl, NULL);
	register_callback(name, PLUGIN_PRE_GENERICIZE, gp_pre_genericize, NULL);
	register_callback(name, PLUGIN_FINISH_UNIT, gp_pragmas_finish, NULL);
	return 0;
}
