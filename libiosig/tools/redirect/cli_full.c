/* SPDX-License-Identifier: MIT */
/*
 * cli_full.c - what iosig-redirect-full does itself and iosig-redirect
 * hands over to it (cli.h): rules files (libyaml) and the check of the rules
 * against the catalog (libmount).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "catalog_internal.h"
#include "cli.h"

int cli_handover(struct cli *c)
{
	(void)c;
	return RX_OK;
}

int cli_load_rules(struct cli *c, const char *file)
{
	struct iosig_error err;
	int r;

	memset(&err, 0, sizeof(err));
	r = rules_load_file(c->rs, file, c->cwd, &err);
	if (r >= 0)
		return RX_OK;
	if (r != -EINVAL && err.line <= 0)
		cli_err(c, "%s: %s; give a readable rules file (see iosig-rules(5))", file, err.msg);
	else
		cli_rule_error(c, &err, NULL);
	return RX_OWN;
}

/* Warns (errors with --strict) when no mount of the catalog satisfies a
 * rule's signature (rules_check).  Returns true if it can be satisfied. */
static bool check_rule(struct cli *c, const struct iosig_catalog *cat,
		       const struct rules_rule *r)
{
	char msg[3072];

	if (rules_check(cat, r, msg, sizeof(msg)))
		return true;
	if (c->strict)
		cli_err(c, "%s; --strict stops here (see 'iosig explain')", msg);
	else
		cli_warn(c, "%s; files it matches stay where the program puts them", msg);
	return false;
}

int cli_check(struct cli *c)
{
	const struct iosig_catalog *cat;
	struct iosig_error err;
	bool ok = true;

	memset(&err, 0, sizeof(err));
	cat = cat_default(&err);
	if (!cat) {
		if (err.line > 0)
			cli_err(c, "storage catalog: %s:%d:%d: %s", err.file, err.line, err.column, err.msg);
		else
			cli_err(c, "storage catalog: %s%s%s", err.file, err.file[0] ? ": " : "",
				err.msg[0] ? err.msg : "cannot be built");
		return RX_OWN;
	}
	for (size_t i = 0; i < c->own_rules; i++)
		ok &= check_rule(c, cat, &c->rs->r[i]);
	return !ok && c->strict ? RX_OWN : RX_OK;
}
