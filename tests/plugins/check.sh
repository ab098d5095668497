#!/bin/sh
# SPDX-License-Identifier: MIT
# How a user builds with the compiler plugins in one step (docs/clang-plugin.md):
#
#   check.sh wrapper BUILD COMPILER...   the build tree's iosig-cc / iosig-c++
#   check.sh install BUILD SRC COMPILER...
#       cmake --install into a scratch prefix (elsewhere than configured),
#       then the installed iosig-cc / iosig-c++ and a CMake project using
#       IosigPlugin.cmake's iosig_enable() (SRC/consumer)
#
# COMPILER is NAME=CC,CXX (gcc=gcc,g++ or clang-16=/usr/lib/llvm-16/bin/clang,...).
# Every program is run and its decision log must show the annotated open.
# Exit 0 passed, 1 failed, 77 skipped (with the reason).
set -u
mode=$1 build=$2
shift 2
. "$(dirname "$0")/../e2e/check_lib.sh"
begin_checks plugins

cat >"$work/main.c" <<'EOF'
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	long chunk = 4096L * argc;
#pragma io sig sequential_access size_per_io(chunk)
	int fd = open(argv[argc - 1], O_RDONLY);
	return fd < 0 || close(fd);
}
EOF
cp "$work/main.c" "$work/main.cc"

# logged NAME LOG: the log has a decision record for an annotated call.
logged() {
	if grep -q '"event":"decision"' "$2" 2>/dev/null; then
		echo "ok: $1"
	else
		fail "$1: no decision in the log"
		cat "$2" 2>/dev/null
	fi
}

# run_prog NAME PROGRAM: runs it (dry run) and checks the log.
run_prog() {
	rm -f "$work/log"
	if IOSIG_DRYRUN=1 IOSIG_LOG="$work/log" "$2" "$work/main.c" >"$work/out" 2>&1; then
		logged "$1" "$work/log"
	else
		fail "$1: the program failed"
		cat "$work/out"
	fi
}

# cc_link WRAPPER CC SRC OUT: compile and link SRC with the wrapper; with a
# sanitized libiosig (IOSIG_E2E_LINK_CC set) the wrapper compiles and the
# compiler that built libiosig links, with its sanitizer runtime.
cc_link() {
	if [ -z "${IOSIG_E2E_LINK_CC:-}" ]; then
		"$1" "$2" -O2 -Wall "$3" -o "$4"
	else
		# shellcheck disable=SC2086 # IOSIG_E2E_LDFLAGS is a list of flags
		"$1" "$2" -O2 -Wall -c "$3" -o "$4.o" &&
			"$IOSIG_E2E_LINK_CC" "$4.o" -o "$4" -L"$libdir" -liosig -Wl,-rpath,"$libdir" \
				${IOSIG_E2E_LDFLAGS:-}
	fi
}

# wrappers NAME CC CXX BINDIR: iosig-cc and iosig-c++ of BINDIR with CC, CXX.
wrappers() {
	name=$1 cc=$2 cxx=$3 bin=$4
	if cc_link "$bin/iosig-cc" "$cc" "$work/main.c" "$work/c-$name" 2>"$work/err"; then
		run_prog "$name: iosig-cc $cc (as a launcher)" "$work/c-$name"
	else
		fail "$name: iosig-cc $cc failed"
		cat "$work/err"
	fi
	# The compiler from the environment, compile and link apart.
	if IOSIG_CXX=$cxx "$bin/iosig-c++" -O1 -c "$work/main.cc" -o "$work/cxx-$name.o" 2>"$work/err" &&
		if [ -z "${IOSIG_E2E_LINK_CXX:-}" ]; then
			IOSIG_CXX=$cxx "$bin/iosig-c++" "$work/cxx-$name.o" -o "$work/cxx-$name" 2>>"$work/err"
		else
			# shellcheck disable=SC2086 # IOSIG_E2E_LDFLAGS is a list of flags
			"$IOSIG_E2E_LINK_CXX" "$work/cxx-$name.o" -o "$work/cxx-$name" -L"$libdir" -liosig \
				-Wl,-rpath,"$libdir" ${IOSIG_E2E_LDFLAGS:-} 2>>"$work/err"
		fi; then
		if nm "$work/cxx-$name.o" | grep -q " U iosig_open"; then
			run_prog "$name: IOSIG_CXX=$cxx iosig-c++, compile and link apart" "$work/cxx-$name"
		else
			fail "$name: iosig-c++ -c made an object that does not call iosig_open"
		fi
	else
		fail "$name: IOSIG_CXX=$cxx iosig-c++ failed"
		cat "$work/err"
	fi
}

case $mode in
wrapper)
	libdir=$build/libiosig
	for c in "$@"; do
		name=${c%%=*} ccs=${c#*=}
		wrappers "$name" "${ccs%%,*}" "${ccs#*,}" "$build/bin"
	done
	# A clang the plugin is not built for.
	if "$build/bin/iosig-cc" clang-9 -c "$work/main.c" -o "$work/x.o" 2>"$work/err"; then
		fail "iosig-cc clang-9 succeeded"
	elif grep -q "iosig-cc: this iosig has no plugin for clang 9 (built for: " "$work/err"; then
		echo "ok: iosig-cc with a clang it has no plugin for"
	else
		fail "iosig-cc clang-9: unexpected message:"
		cat "$work/err"
	fi
	;;
install)
	src=$1
	shift
	command -v cmake >/dev/null 2>&1 || skip "no cmake"
	prefix=$work/prefix
	if ! cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
		cat "$work/install.log"
		fail "cmake --install"
		exit 1
	fi
	for c in "$@"; do
		name=${c%%=*} ccs=${c#*=}
		cc=${ccs%%,*} cxx=${ccs#*,}
		wrappers "$name (installed)" "$cc" "$cxx" "$prefix/bin"
		dir=$work/consumer-$name
		if cmake -S "$src/consumer" -B "$dir" -DCMAKE_PREFIX_PATH="$prefix" \
			-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
			-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/cons.log" 2>&1 &&
			cmake --build "$dir" >>"$work/cons.log" 2>&1; then
			for app in app app_cxx; do
				rm -f "$work/log"
				if IOSIG_DRYRUN=1 IOSIG_LOG="$work/log" "$dir/$app" "$work/main.c" |
					grep -qx "open ok"; then
					logged "$name: iosig_enable($app)" "$work/log"
				else
					fail "$name: the iosig_enable($app) program failed"
				fi
			done
		else
			tail -n 30 "$work/cons.log"
			fail "$name: a project with iosig_enable() does not configure or build"
		fi
	done
	;;
*)
	echo "usage: $0 wrapper BUILD COMPILER... | install BUILD SRC COMPILER..." >&2
	exit 2
	;;
esac
finish
