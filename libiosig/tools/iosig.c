/* SPDX-License-Identifier: MIT */
/*
 * iosig.c - entry point of the `iosig` tool: dispatches to one subcommand
 * per cmd_<name>.c (the table is generated at build time).
 */
#include <stdio.h>
#include <string.h>

#include "tool.h"

#include "commands.inc"

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig COMMAND [OPTIONS] [ARGS]\n"
		"\n"
		"Declarative I/O signatures: which storage this machine has, where a file\n"
		"with a given signature would go and why.\n"
		"\n"
		"Commands:\n");
	for (const struct tool_cmd *const *c = tool_commands; *c; c++)
		fprintf(fp, "  %-10s %s\n", (*c)->name, (*c)->summary);
	fprintf(fp,
		"\n"
		"Run 'iosig COMMAND --help' for a command's options.  See iosig(1).\n"
		"Environment: IOSIG_CONFIG (configuration file).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return TOOL_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("iosig %s\n", iosig_version());
		return TOOL_EXIT_OK;
	}
	for (const struct tool_cmd *const *c = tool_commands; *c; c++) {
		if (!strcmp(argv[1], (*c)->name))
			return (*c)->run(argc - 1, argv + 1);
	}
	fprintf(stderr, "%s: unknown command '%s'\n", tool_progname, argv[1]);
	fprintf(stderr, "Run '%s --help' for the list of commands.\n", tool_progname);
	return TOOL_EXIT_USAGE;
}
