/* SPDX-License-Identifier: MIT */
/*
 * version.cc - refuses to run inside a GCC other than the one whose
 * plugin headers the plugin was built with (docs/design.md §4: plugins
 * check the compiler version and say which versions they compared).
 *
 * A separate file so that a test build can pretend to have been built for
 * another GCC (GP_TEST_BUILT_BASEVER) and check the message.
 */
#include "gcc-common.h"

#include "version.h"

bool gp_version_ok(const char *plugin_name, struct plugin_gcc_version *running)
{
	struct plugin_gcc_version built = gcc_version;

#ifdef GP_TEST_BUILT_BASEVER
	built.basever = GP_TEST_BUILT_BASEVER;
#endif
	if (plugin_default_version_check(running, &built))
		return true;
	if (strcmp(built.basever, running->basever) != 0 ||
	    strcmp(built.datestamp, running->datestamp) != 0 ||
	    strcmp(built.devphase, running->devphase) != 0 ||
	    strcmp(built.revision, running->revision) != 0)
		error("%s was built for GCC %s (%s%s%s%s%s) but is loaded into GCC %s "
		      "(%s%s%s%s%s); rebuild the plugin with the headers of this compiler "
		      "(%<gcc -print-file-name=plugin%>)",
		      plugin_name, built.basever, built.datestamp, *built.devphase ? ", " : "",
		      built.devphase, *built.revision ? ", " : "", built.revision,
		      running->basever, running->datestamp, *running->devphase ? ", " : "",
		      running->devphase, *running->revision ? ", " : "", running->revision);
	else
		error("%s was built for GCC %s configured as %qs but is loaded into GCC %s "
		      "configured as %qs; rebuild the plugin with the headers of this compiler "
		      "(%<gcc -print-file-name=plugin%>)",
		      plugin_name, built.basever, built.configuration_arguments,
		      running->basever, running->configuration_arguments);
	return false;
}
