#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks of the clang plugin that are not about one program (the programs
# are the shared e2e matrix, tests/e2e): its options, the version check,
# the symbols it needs and exports, what happens without its pass, -E,
# pragmas where no statement may be, language modes, -flto, and a program
# whose files are compiled by GCC and by clang.
#
# usage: clang_checks.sh CHECK CLANG CLANGXX PLUGIN LIBDIR [OTHER...]
#   version: OTHER = another clang and the plugin built for it
#   mixed:   OTHER = gcc and the GCC plugin
# Exit 0 passed, 1 failed, 77 skipped (with the reason).
set -u
check=$1 clang=$2 clangxx=$3 plugin=$4 libdir=$5
shift 5
. "$(dirname "$0")/../e2e/check_lib.sh"
begin_checks clang-checks
load="-fplugin=$plugin -fpass-plugin=$plugin"

# expect_calls WHAT OBJECT SYMBOL: the object calls SYMBOL and no marker.
expect_calls() {
	if ! nm "$2" | grep -q " U $3\$"; then
		fail "$1: $2 does not call $3"
	elif nm "$2" | grep -q "__iosig_"; then
		fail "$1: a marker function is left in $2"
	else
		echo "ok: $1"
	fi
}

write_sources

case $check in
options)
	# shellcheck disable=SC2086 # $load is two flags
	check_options "$clang" $load
	# shellcheck disable=SC2086
	expect_quiet "no pragmas, C" "$clang" $load -Wall -Wextra -c "$work/plain.c" -o "$work/x.o"
	# shellcheck disable=SC2086
	expect_quiet "no pragmas, C++" "$clangxx" $load -fplugin-arg-iosig-unbound=error -c \
		"$work/plain.cc" -o "$work/x.o"
	# shellcheck disable=SC2086
	expect_quiet "pragmas, C, all well" "$clang" $load -Wall -Wextra -c "$work/sig.c" \
		-o "$work/x.o"
	expect_calls "pragmas, C: iosig_open" "$work/x.o" iosig_open
	# shellcheck disable=SC2086
	expect_quiet "pragmas, C++, all well" "$clangxx" $load -Wall -Wextra -c "$work/sig.cc" \
		-o "$work/x.o"
	expect_calls "pragmas, C++: iosig_open" "$work/x.o" iosig_open
	# The options of two compilations in one process (clang -cc1 with two
	# inputs is not a thing the driver does; two runs must not share state).
	# shellcheck disable=SC2086
	expect_quiet "a file with pragmas and one without" "$clang" $load -Wall -c \
		"$work/sig.c" "$work/plain.c"
	;;
version)
	[ $# -ge 2 ] || skip "the plugin is built for one clang version only; nothing to compare"
	other=$1 other_plugin=$2
	mine=$("$clang" -dumpversion | cut -d. -f1)
	theirs=$("$other" -dumpversion | cut -d. -f1)
	expect_fail "plugin for clang $mine loaded into clang $theirs" \
		"was built for clang $mine." "$other" -fplugin="$plugin" -c "$work/plain.c" -o "$work/x.o"
	if grep -qF "but is loaded into a clang that uses libclang-cpp.so.$theirs" "$work/err" &&
		grep -qF "use the iosig plugin built for clang $theirs" "$work/err"; then
		echo "ok: both versions named"
	else
		fail "the message does not name the running clang $theirs:"
		cat "$work/err"
	fi
	# The other way round, through -fpass-plugin alone.
	expect_fail "plugin for clang $theirs loaded into clang $mine" \
		"was built for clang $theirs." "$clang" -fpass-plugin="$other_plugin" -c \
		"$work/plain.c" -o "$work/x.o"
	;;
symbols)
	# Every symbol the plugin needs from clang must be in the libraries of
	# the clang it is for; it links none of them itself (a second copy of
	# LLVM in the process breaks).
	if readelf -d "$plugin" | grep NEEDED | grep -qE "LLVM|clang-cpp|yaml|mount"; then
		fail "the plugin links LLVM, clang, libyaml or libmount:"
		readelf -d "$plugin" | grep NEEDED
	else
		echo "ok: links no LLVM, clang, libyaml or libmount"
	fi
	nm -D --undefined-only "$plugin" | awk '$1 == "U" && $2 !~ /@/ { print $2 }' |
		sort >"$work/needed"
	[ -s "$work/needed" ] || fail "no undefined symbols found in $plugin"
	: >"$work/have"
	for lib in $(ldd "$clang" | awk '/libclang-cpp|libLLVM/ { print $3 }'); do
		nm -D --defined-only "$lib" | awk '{ sub(/@.*/, "", $3); print $3 }' >>"$work/have"
	done
	nm -D --defined-only "$clang" 2>/dev/null | awk '{ print $3 }' >>"$work/have"
	sort -u -o "$work/have" "$work/have"
	comm -23 "$work/needed" "$work/have" >"$work/missing"
	if [ -s "$work/missing" ]; then
		fail "$clang and its libraries lack symbols the plugin needs:"
		cat "$work/missing"
	else
		echo "ok: $clang provides all $(wc -l <"$work/needed") symbols"
	fi
	nm -D --defined-only "$plugin" | awk '{ print $3 }' | sort >"$work/exported"
	if [ "$(cat "$work/exported")" = llvmGetPassPluginInfo ]; then
		echo "ok: exports llvmGetPassPluginInfo only"
	else
		fail "exported symbols:"
		cat "$work/exported"
	fi
	;;
nopass)
	expect_fail "pragmas without -fpass-plugin" \
		"error: the calls that '#pragma io' describes are rewritten by the iosig LLVM pass: add '-fpass-plugin=" \
		"$clang" -fplugin="$plugin" -c "$work/sig.c" -o "$work/x.o"
	# shellcheck disable=SC2086
	expect_fail "pragmas with -disable-llvm-passes" "which does not run with -disable-llvm-passes" \
		"$clang" $load -Xclang -disable-llvm-passes -c "$work/sig.c" -o "$work/x.o"
	expect_quiet "no pragmas without -fpass-plugin" "$clang" -fplugin="$plugin" -c \
		"$work/plain.c" -o "$work/x.o"
	expect_quiet "pragmas, -fsyntax-only without -fpass-plugin" "$clang" -fplugin="$plugin" \
		-fsyntax-only "$work/sig.c"
	# The pass alone changes nothing (no markers).
	"$clang" -O2 -c "$work/sig.c" -o "$work/a.o" 2>/dev/null
	"$clang" -O2 -fpass-plugin="$plugin" -c "$work/sig.c" -o "$work/b.o" 2>/dev/null
	if cmp -s "$work/a.o" "$work/b.o"; then
		echo "ok: the pass alone leaves the code as it is"
	else
		fail "-fpass-plugin alone changed the object code"
	fi
	;;
preprocess)
	# -E keeps the pragmas (as _Pragma), and compiling its output means
	# the same: the same call with the same site.
	"$clang" -fplugin="$plugin" -E "$work/sig.c" -o "$work/sig.i" || fail "-E failed"
	if grep -q '_Pragma("io sig name(\\"input\\") size_per_io(chunk)")' "$work/sig.i" &&
		grep -q '_Pragma("io sigdef name(\\"input\\") sequential")' "$work/sig.i"; then
		echo "ok: -E writes the pragmas back"
	else
		fail "-E lost the pragmas:"
		grep -n "io " "$work/sig.i"
	fi
	# shellcheck disable=SC2086
	expect_quiet "compiling the -E output" "$clang" $load -Wall -c "$work/sig.i" -o "$work/i.o"
	expect_calls "the -E output calls iosig_open" "$work/i.o" iosig_open
	# shellcheck disable=SC2086
	expect_quiet "-save-temps" "$clang" $load -save-temps=obj -c "$work/sig.c" -o "$work/t.o"
	expect_calls "-save-temps calls iosig_open" "$work/t.o" iosig_open
	;;
placement)
	# A pragma where only a statement may stand (the body of an if without
	# braces) would take the place of that statement: an error, never a
	# silently different program.
	cat >"$work/if.c" <<'EOF'
#include <fcntl.h>
int f(const char *p, int x)
{
	int fd = -1;
	if (x)
#pragma io sig tmp
		fd = open(p, O_RDONLY);
	return fd;
}
EOF
	cp "$work/if.c" "$work/if.cc"
	# shellcheck disable=SC2086
	expect_fail "unbraced if body, C" \
		"if.c:6:9: error: '#pragma io sig' is not allowed here; write it on its own line in a block, right before the statement with the call" \
		"$clang" $load -c "$work/if.c" -o "$work/x.o"
	# shellcheck disable=SC2086
	expect_fail "unbraced if body, C++" \
		"if.cc:6:9: error: '#pragma io sig' is not allowed here; write it on its own line in a block, right before the statement with the call" \
		"$clangxx" $load -c "$work/if.cc" -o "$work/x.o"
	# In a class, outside its member functions: like file scope.
	cat >"$work/class.cc" <<'EOF'
#include <fcntl.h>
struct S {
#pragma io sigdef name("s") tmp
	int f(const char *p)
	{
#pragma io sig name("s")
		return open(p, O_RDONLY);
	}
};
int g(const char *p) { return S().f(p); }
EOF
	# shellcheck disable=SC2086
	expect_quiet "sigdef in a class, used in a member function" "$clangxx" $load -Wall -c \
		"$work/class.cc" -o "$work/x.o"
	expect_calls "the member function calls iosig_open" "$work/x.o" iosig_open
	;;
modes)
	# The markers in every language mode, pedantic: C89 to C2x (a pragma at
	# the start of a block before its declarations, one after a statement,
	# one after a label), C++98 to C++20.
	cat >"$work/sig89.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
#pragma io sig sequential size_per_io(4096 * argc)
	int fd = open(argv[argc - 1], O_RDONLY);
	FILE *fp;

	if (fd >= 0)
		close(fd);
#pragma io sig tmp
	fp = fopen(argv[argc - 1], "r");
	if (!fp && argc > 5)
		goto again;
	return fp ? fclose(fp) : 1;
again:
#pragma io sig persist
	fd = creat(argv[argc - 1], 0600);
	return fd;
}
EOF
	for std in c89 c99 c11 c17 c2x; do
		# shellcheck disable=SC2086
		expect_quiet "-std=$std -pedantic-errors -Wdeclaration-after-statement" "$clang" $load \
			-std=$std -pedantic-errors -Wdeclaration-after-statement -Wall -Wextra -c \
			"$work/sig89.c" -o "$work/x.o"
		expect_calls "-std=$std calls iosig_open" "$work/x.o" iosig_open
		expect_calls "-std=$std calls iosig_fopen" "$work/x.o" iosig_fopen
		expect_calls "-std=$std calls iosig_creat" "$work/x.o" iosig_creat
	done
	for std in c++98 c++11 c++14 c++17 c++20; do
		# shellcheck disable=SC2086
		expect_quiet "-std=$std -pedantic-errors" "$clangxx" $load -std=$std -pedantic-errors \
			-Wall -Wextra -c "$work/sig.cc" -o "$work/x.o"
		expect_calls "-std=$std calls iosig_open" "$work/x.o" iosig_open
	done
	;;
lto)
	major=$("$clang" -dumpversion | cut -d. -f1)
	command -v "ld.lld-$major" >/dev/null 2>&1 || command -v ld.lld >/dev/null 2>&1 ||
		skip "no ld.lld for clang $major (lld-$major): cannot link with -flto"
	[ -z "${IOSIG_E2E_LINK_CC:-}" ] ||
		skip "libiosig is built with sanitizers: only $IOSIG_E2E_LINK_CC links against it, and it cannot link clang's LTO objects"
	for mode in full thin; do
		# shellcheck disable=SC2086
		expect_quiet "-flto=$mode compile" "$clang" $load -flto=$mode -O2 -c "$work/sig.c" \
			-o "$work/lto.o"
		if "$clang" -flto=$mode -fuse-ld=lld "$work/lto.o" -o "$work/lto" -L"$libdir" \
			-liosig -Wl,-rpath,"$libdir" ${IOSIG_E2E_LDFLAGS:-} 2>"$work/err" &&
			nm "$work/lto" | grep -q " U iosig_open" &&
			IOSIG_DRYRUN=1 "$work/lto" "$work/sig.c"; then
			echo "ok: -flto=$mode link and run"
		else
			fail "-flto=$mode program does not call iosig_open or fails"
			cat "$work/err"
		fi
	done
	;;
mixed)
	# One program, one file compiled by GCC with its plugin, one by clang
	# with this one: the site descriptors and calls are the same ABI.
	[ $# -ge 2 ] || skip "no GCC plugin built"
	gcc=$1 gcc_plugin=$2
	cat >"$work/part_gcc.c" <<'EOF'
#include <fcntl.h>
#include <unistd.h>
int from_gcc(const char *p, long chunk)
{
#pragma io sig random_access size_per_io(chunk / 2) totalsize(3 * MiB)
	int fd = open(p, O_RDONLY);
	return fd < 0 ? -1 : close(fd);
}
EOF
	cat >"$work/part_clang.cc" <<'EOF'
#include <cstdio>
#include <fstream>
extern "C" int from_gcc(const char *p, long chunk);
int main(int argc, char **argv)
{
	long chunk = 8192L * argc;
#pragma io sig sequential_access size_per_io(chunk)
	std::FILE *fp = std::fopen(argv[argc - 1], "r");
	if (!fp)
		return 1;
	std::fclose(fp);
	std::ifstream in;
#pragma io sig tmp
	in.open(argv[argc - 1]);
	std::printf("%d %d\n", from_gcc(argv[argc - 1], chunk), (int)in.is_open());
	return 0;
}
EOF
	"$gcc" -O2 -Wall -fplugin="$gcc_plugin" -c "$work/part_gcc.c" -o "$work/part_gcc.o" ||
		fail "gcc with the GCC plugin failed"
	# shellcheck disable=SC2086
	"$clangxx" -O2 -Wall $load -c "$work/part_clang.cc" -o "$work/part_clang.o" ||
		fail "clang++ with the clang plugin failed"
	# shellcheck disable=SC2086 # IOSIG_E2E_LDFLAGS is a list of flags
	"${IOSIG_E2E_LINK_CXX:-$clangxx}" "$work/part_gcc.o" "$work/part_clang.o" -o "$work/mixed" \
		-L"$libdir" -liosig \
		-Wl,-rpath,"$libdir" ${IOSIG_E2E_LDFLAGS:-} || fail "link failed"
	out=$(IOSIG_DRYRUN=1 IOSIG_LOG="$work/log" "$work/mixed" "$work/part_gcc.c") ||
		fail "the program failed"
	[ "$out" = "0 1" ] || fail "the program printed '$out', expected '0 1'"
	for want in \
		'part_gcc.c","line":5,"column":9,"call":"open","abi":1},"call":"open","sig":"random_access size_per_io($0) totalsize(3145728)","values":[8192]' \
		'part_clang.cc","line":7,"column":9,"call":"fopen","abi":1},"call":"fopen","sig":"sequential_access size_per_io($0)","values":[16384]' \
		'part_clang.cc","line":13,"column":9,"call":"ifstream::open","abi":1},"call":"prepare","sig":"tmp","values":[]'; do
		if grep -qF "$want" "$work/log"; then
			echo "ok: logged ...$want"
		else
			fail "no log record contains $want"
			cat "$work/log"
		fi
	done
	;;
*)
	echo "usage: $0 options|version|symbols|nopass|preprocess|placement|modes|lto|mixed CLANG CLANGXX PLUGIN LIBDIR [OTHER...]" >&2
	exit 2
	;;
esac
finish
