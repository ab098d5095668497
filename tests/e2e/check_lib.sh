# SPDX-License-Identifier: MIT
# The helpers of the shell checks of the compiler plugins, sourced (not run)
# by tests/e2e/gcc_checks.sh, tests/e2e/clang_checks.sh and
# tests/plugins/check.sh.  A check prints "ok: ..." or "FAIL: ..." a line
# and ends with finish: exit 0 passed, 1 failed (77 skipped, from skip).

# begin_checks NAME: LC_ALL=C, $status 0 and a scratch directory $work
# (iosig-NAME.XXXXXX in $TMPDIR) that is removed on exit.
begin_checks() {
	export LC_ALL=C
	work=$(mktemp -d "${TMPDIR:-/tmp}/iosig-$1.XXXXXX") || exit 1
	trap 'rm -rf "$work"' EXIT
	status=0
}

fail() {
	echo "FAIL: $*"
	status=1
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# finish: PASS unless something failed; exit with $status.
finish() {
	[ $status -eq 0 ] && echo PASS
	exit $status
}

# expect_fail WHAT TEXT CMD...: CMD fails and its stderr contains TEXT.
expect_fail() {
	what=$1 text=$2
	shift 2
	if "$@" >"$work/out" 2>"$work/err"; then
		fail "$what: succeeded: $*"
	elif ! grep -qF -- "$text" "$work/err"; then
		fail "$what: the message is not '$text'; got:"
		cat "$work/err"
	else
		echo "ok: $what"
	fi
}

# expect_quiet WHAT CMD...: CMD succeeds and prints nothing.
expect_quiet() {
	what=$1
	shift
	if ! "$@" >"$work/out" 2>"$work/err"; then
		fail "$what: failed: $*"
		cat "$work/err"
	elif [ -s "$work/err" ] || [ -s "$work/out" ]; then
		fail "$what: printed something:"
		cat "$work/out" "$work/err"
	else
		echo "ok: $what"
	fi
}

# write_sources: $work/plain.c and plain.cc, a program that opens a file
# with no pragma, and $work/sig.c and sig.cc, one whose open has a signature
# (a named one defined at file scope, used with a run-time size_per_io).
write_sources() {
	cat >"$work/plain.c" <<'PLAIN'
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int fd = open(argv[argc - 1], O_RDONLY);
	return fd < 0 ? 1 : close(fd);
}
PLAIN
	cp "$work/plain.c" "$work/plain.cc"
	cat >"$work/sig.c" <<'SIG'
#include <fcntl.h>
#include <unistd.h>
#pragma io sigdef name("input") sequential
int main(int argc, char **argv)
{
	long chunk = 4096 * argc;
#pragma io sig name("input") size_per_io(chunk)
	int fd = open(argv[argc - 1], O_RDONLY);
	return fd < 0 ? 1 : close(fd);
}
SIG
	cp "$work/sig.c" "$work/sig.cc"
}

# check_options CC LOAD...: the -fplugin-arg-iosig-* options both plugins
# share, compiling $work/plain.c with CC and the flags LOAD that load the
# plugin: each wrong one is an error that says what is wrong, and help
# prints the options on standard output.
check_options() {
	cc=$1
	shift
	expect_fail "unknown option" \
		"error: unknown option '-fplugin-arg-iosig-bogus'; the options are verbose, unbound=warning|error|ignore and help" \
		"$cc" "$@" -fplugin-arg-iosig-bogus -c "$work/plain.c" -o "$work/x.o"
	expect_fail "bad unbound value" \
		"error: invalid value 'maybe' in '-fplugin-arg-iosig-unbound=maybe'; use 'warning', 'error' or 'ignore'" \
		"$cc" "$@" -fplugin-arg-iosig-unbound=maybe -c "$work/plain.c" -o "$work/x.o"
	expect_fail "unbound without value" "error: '-fplugin-arg-iosig-unbound' needs a value" \
		"$cc" "$@" -fplugin-arg-iosig-unbound -c "$work/plain.c" -o "$work/x.o"
	expect_fail "verbose with a value" \
		"error: '-fplugin-arg-iosig-verbose' takes no value (remove '=1')" \
		"$cc" "$@" -fplugin-arg-iosig-verbose=1 -c "$work/plain.c" -o "$work/x.o"
	if "$cc" "$@" -fplugin-arg-iosig-help -c "$work/plain.c" -o "$work/x.o" \
		>"$work/out" 2>"$work/err" && grep -q "^Options (-fplugin-arg-iosig-OPTION):" "$work/out" &&
		grep -q "unbound=warning|error|ignore" "$work/out" &&
		tr '\n' ' ' <"$work/out" | grep -q "Supported calls: .*freopen.*MPI_File_open (link with -liosig-mpi).*#pragma io opener(F, path(N), ...)"; then
		echo "ok: help"
	else
		fail "help: no help text on standard output, or its supported calls lack MPI_File_open or the declared openers"
		cat "$work/out" "$work/err"
	fi
}
