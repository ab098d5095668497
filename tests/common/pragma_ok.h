/* SPDX-License-Identifier: MIT */
/*
 * pragma_ok.h - for the cmocka tests of the signature modules: parse the
 * text of a pragma that must parse, or fail the test saying where and why.
 * Include after <cmocka.h>.
 */
#ifndef IOSIG_TEST_PRAGMA_OK_H
#define IOSIG_TEST_PRAGMA_OK_H

#include <string.h>

#include "iosig.h"

/* The parsed pragma (iosig_pragma_free() it); fails the test with
 * "'TEXT' failed: LINE:COLUMN: MESSAGE" when it does not parse. */
static inline struct iosig_pragma *parse_ok(const char *text)
{
	struct iosig_pragma *p = NULL;
	struct iosig_error err;

	memset(&err, 0, sizeof(err));
	if (iosig_pragma_parse(text, strlen(text), &p, &err) != 0)
		fail_msg("'%s' failed: %d:%d: %s", text, err.line, err.column, err.msg);
	assert_non_null(p);
	return p;
}

#endif /* IOSIG_TEST_PRAGMA_OK_H */
