/* SPDX-License-Identifier: MIT */
/*
 * rules_check.c - does some mount of the catalog satisfy a rule's
 * signature?  One check for both places that tell the user: iosig-redirect
 * at start (--check, --strict, --config, prepare) and the preload library's
 * core at the first open a rule matches in a process (rules.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "catalog_internal.h"
#include "rules.h"

bool rules_check(const struct iosig_catalog *cat, const struct rules_rule *r, char *msg,
		 size_t size)
{
	size_t n = iosig_catalog_size(cat), len = 0, ineligible = 0;
	struct iosig_candidate *cands;
	struct iosig_choice choice;
	char origin[300], why[2048];

	cands = calloc(n + 1, sizeof(*cands));
	if (!cands)
		return true;
	if (iosig_select(cat, &r->sig, r->pat.text, cands, &choice) < 0 || choice.mount) {
		free(cands);
		return true;
	}
	/* The mounts that could have taken it and why they did not; the
	 * ineligible ones (ignored, read-only, no data directory) in a count. */
	why[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int k;

		if (cands[i].verdict == IOSIG_V_INELIGIBLE) {
			ineligible++;
			continue;
		}
		if (len >= sizeof(why) - 1)
			continue;
		k = snprintf(why + len, sizeof(why) - len, "%s%s: %s", len ? "; " : "",
			     cands[i].mount->path, cands[i].why);
		len += k > 0 ? (size_t)k : 0;
	}
	if (len >= sizeof(why) - 1)
		len = sizeof(why) - 1;
	if (!len)
		snprintf(why, sizeof(why), "no mount is eligible (%zu not: see 'iosig devices --all')",
			 ineligible);
	else if (ineligible)
		snprintf(why + len, sizeof(why) - len, " (and %zu mounts not eligible: see 'iosig devices --all')",
			 ineligible);
	rules_rule_origin(r, origin, sizeof(origin));
	snprintf(msg, size, "rule %s ('%s'): no mount satisfies '%s': %s", origin, r->shown,
		 r->sigtext, why);
	free(cands);
	return false;
}
