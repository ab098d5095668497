/*
 * jobwide: at file scope it runs before main (a constructor the plugin
 * adds), with values evaluated there (file-scope names); in a function it
 * becomes a call of iosig_jobwide where it is written.
 *
 * run: {tmp}
 * expect-stdout: main
 * expect-log-count: 3 {"event": "jobwide"}
 * expect-log-count: 0 {"event": "decision"}
 */
#include <stdio.h>

static int hours = 6;

#pragma io jobwide lifetime(hours * h) name("nightly")
/* expect-log: {"site": {"line": "@-1", "call": "jobwide"}, "sig": "lifetime($0) name(\"nightly\")", "evaluated": "lifetime(21600) name(\"nightly\")"} */

int main(int argc, char **argv)
{
	int days = argc + 1;

	(void)argv;
	puts("main");
#pragma io jobwide lifetime(days * d)
	/* expect-log: {"site": {"line": "@-1", "call": "jobwide"}, "evaluated": "lifetime(259200)"} */
	for (int i = 0; i < 1; i++) {
#pragma io jobwide lifetime(30*min)
		/* expect-log: {"site": {"line": "@-1", "call": "jobwide"}, "sig": "lifetime(1800)"} */
	}
	return 0;
}
