/* SPDX-License-Identifier: MIT */
/*
 * fuzz_opener.c - libFuzzer target for the '#pragma io opener(...)' parser
 * that both compiler plugins share (plugin_shared.h).
 *
 * The input is the text after "io" (copied into a buffer of exactly its
 * size so that ASan catches any read past the end).  Invariants checked:
 *  - an error names a span inside the text and says something;
 *  - an accepted declaration names a function (an identifier that is what
 *    the text spells at name_off), a path argument, and flags or a mode,
 *    not both; its argument numbers are 1 to 64 and different; its spans
 *    are inside the text; a mode("...") is an fopen mode;
 *  - the unbound message with the declaration's name fits its buffer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "plugin_shared.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	struct plugin_unbound_info u = { 0 };
	struct plugin_opener o;
	struct iosig_error err;
	char msg[1024];

	if (!text)
		return 0;
	memcpy(text, data, size);
	(void)plugin_is_opener(text, size);
	if (plugin_opener_parse(text, size, &o, &err) < 0) {
		CHECK(err.offset + err.length <= size);
		CHECK(err.msg[0] != '\0');
		free(text);
		return 0;
	}
	CHECK(plugin_is_opener(text, size));
	CHECK(o.name[0] && plugin_ident_start(o.name[0]));
	CHECK(o.name_off + o.name_len <= size && strlen(o.name) == o.name_len);
	CHECK(memcmp(text + o.name_off, o.name, o.name_len) == 0);
	CHECK(o.arg[PLUGIN_OPENER_PATH] != 0);
	CHECK(o.arg[PLUGIN_OPENER_FLAGS] || o.arg[PLUGIN_OPENER_MODE] || o.fmode[0]);
	CHECK(!(o.arg[PLUGIN_OPENER_FLAGS] && (o.arg[PLUGIN_OPENER_MODE] || o.fmode[0])));
	CHECK(!o.fmode[0] || plugin_fmode_ok(o.fmode));
	for (int k = 0; k < PLUGIN_OPENER_NARGS; k++) {
		CHECK(o.arg[k] <= 64);
		CHECK(o.arg_off[k] + o.arg_len[k] <= size);
		for (int j = 0; j < k; j++)
			CHECK(!o.arg[k] || o.arg[k] != o.arg[j]);
	}
	u.why = PLUGIN_UNBOUND_UNSUPPORTED;
	u.line = 1;
	u.names[0] = o.name;
	u.macros[0] = o.name;
	u.nnames = 1;
	plugin_unbound_message(msg, sizeof(msg), &u, "'", "'");
	CHECK(strlen(msg) < sizeof(msg));
	free(text);
	return 0;
}
