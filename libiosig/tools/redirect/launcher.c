/* SPDX-License-Identifier: MIT */
/*
 * launcher.c - iosig-redirect itself (cli.h): runs a program with -s rules
 * using nothing but libc, and hands everything else over to
 * iosig-redirect-full (rules files, --check, --strict, --config, prepare,
 * finalize) by executing it with the same command line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_handover(struct cli *c)
{
	char path[PATH_MAX];
	int err;

	rx_install_path(IOSIG_REDIRECT_FULL_BUILD, IOSIG_REDIRECT_FULL_INSTALLED,
			IOSIG_REDIRECT_FULL_REL, path, sizeof(path));
	execv(path, rx_argv);
	err = errno;
	cli_err(c, "cannot run %s: %s; reinstall iosig", path, strerror(err));
	return RX_OWN;
}

int cli_load_rules(struct cli *c, const char *file)
{
	(void)file;
	return cli_handover(c);
}

int cli_check(struct cli *c)
{
	return cli_handover(c);
}

int rx_prepare(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_handover(NULL);
}

int rx_finalize(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_handover(NULL);
}
