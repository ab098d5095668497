#!/bin/sh
# SPDX-License-Identifier: MIT
# How a user builds with the compiler plugins in one step (docs/clang-plugin.md):
#
#   check.sh wrapper BUILD COMPILER...   the build tree's iosig-cc / iosig-c++
#   check.sh install BUILD SRC COMPILER...
#       cmake --install into a scratch prefix (elsewhere than configured),
#       then the installed iosig-cc / iosig-c++ and a CMake project using
#       IosigPlugin.cmake's iosig_enable() (SRC/consumer)
#   check.sh projects BUILD SRC COMPILER...
#       after an install, an annotated program (SRC/project, with
#       <iosig_annotate.h>) built by its own Makefile and CMakeLists.txt with
#       -Wall -Wextra -Werror, with and without the plugin, linked with
#       --as-needed and pkg-config's flags in LDFLAGS, in LDLIBS and in
#       CMAKE_EXE_LINKER_FLAGS
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

# install_prefix: cmake --install of $build into $work/prefix; sets prefix.
install_prefix() {
	command -v cmake >/dev/null 2>&1 || skip "no cmake"
	prefix=$work/prefix
	if ! cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
		cat "$work/install.log"
		fail "cmake --install"
		exit 1
	fi
}

# project_run NAME DIR PLUGIN: DIR/prog prints ok; with the plugin (yes) it
# calls libiosig and its decision log has the three annotated opens, without
# (no) it calls nothing of libiosig and logs nothing.  (Shell functions share
# their variables: those of these start with pr_.)
project_run() {
	pr_name=$1 pr_dir=$2 pr_plugin=$3
	rm -rf "$work/run" "$work/log"
	mkdir "$work/run"
	if ! pr_out=$(LD_LIBRARY_PATH=$pclibdir IOSIG_DRYRUN=1 IOSIG_LOG="$work/log" \
		"$pr_dir/prog" "$work/run" 2>&1) || [ "$pr_out" != ok ]; then
		fail "$pr_name: the program failed: $pr_out"
		return
	fi
	pr_n=$(grep -c '"event":"decision"' "$work/log" 2>/dev/null)
	if [ "$pr_plugin" = yes ]; then
		if [ "${pr_n:-0}" -eq 3 ] && nm "$pr_dir/prog" | grep -q ' U iosig_opener_begin'; then
			echo "ok: $pr_name"
		else
			fail "$pr_name: ${pr_n:-0} decisions logged, expected 3 (or no iosig_opener_begin)"
		fi
	elif [ "${pr_n:-0}" -eq 0 ] && ! nm "$pr_dir/prog" | grep -q ' U iosig_'; then
		echo "ok: $pr_name"
	else
		fail "$pr_name: built without the plugin, but calls libiosig"
	fi
}

# project_make NAME PLUGIN CC CFLAGS LDFLAGS LDLIBS: the Makefile in a copy.
project_make() {
	pr_build=$((pr_build + 1))
	pr_d=$work/p$pr_build
	mkdir "$pr_d"
	cp "$src/project/main.c" "$src/project/Makefile" "$pr_d/"
	if make -C "$pr_d" CC="$3" CFLAGS="$4" LDFLAGS="$5" LDLIBS="$6" >"$work/make.log" 2>&1; then
		project_run "$1" "$pr_d" "$2"
	else
		fail "$1: make failed"
		cat "$work/make.log"
	fi
}

# project_cmake NAME PLUGIN CC CFLAGS LINKER_FLAGS
project_cmake() {
	pr_build=$((pr_build + 1))
	pr_d=$work/p$pr_build
	if cmake -S "$src/project" -B "$pr_d" -DCMAKE_C_COMPILER="$3" -DCMAKE_C_FLAGS="$4" \
		-DCMAKE_EXE_LINKER_FLAGS="$5" >"$work/cmake.log" 2>&1 &&
		cmake --build "$pr_d" >>"$work/cmake.log" 2>&1; then
		project_run "$1" "$pr_d" "$2"
	else
		fail "$1: the CMake build failed"
		tail -n 30 "$work/cmake.log"
	fi
}
pr_build=0

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
	install_prefix
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
projects)
	src=$1
	shift
	command -v make >/dev/null 2>&1 || skip "no make"
	command -v pkg-config >/dev/null 2>&1 || skip "no pkg-config"
	install_prefix
	pc=$(find "$prefix" -name libiosig.pc | head -n 1)
	[ -n "$pc" ] || { fail "no libiosig.pc installed"; exit 1; }
	export PKG_CONFIG_PATH="${pc%/*}"
	pclibdir=$(pkg-config --variable=libdir libiosig)
	cflags="-O2 -Wall -Wextra -Werror $(pkg-config --cflags libiosig)"
	libs=$(pkg-config --libs libiosig) || { fail "pkg-config --libs libiosig"; exit 1; }
	# Some distributions link --as-needed by default: a library before the
	# objects is then dropped unless its flags say otherwise.
	asneeded=-Wl,--as-needed
	for c in "$@"; do
		name=${c%%=*} ccs=${c#*=}
		cc=${ccs%%,*}
		case $name in
		gcc)
			plugin="-fplugin=$pclibdir/iosig/gcc/iosig.so -fplugin-arg-iosig-unbound=error"
			wrapped="$prefix/bin/iosig-cc $cc"
			;;
		clang-*)
			p="$pclibdir/iosig/$name/iosig-clang.so"
			# The spelling of plugin options that the link step, which
			# compiles nothing, takes without a warning.
			plugin="-fplugin=$p -fpass-plugin=$p -Xclang -plugin-arg-iosig -Xclang unbound=error"
			wrapped="$prefix/bin/iosig-cc $cc"
			;;
		*) continue ;;
		esac
		for with in no yes; do
			if [ $with = yes ]; then
				pf=$plugin
			else
				pf=
			fi
			project_make "$name, plugin $with, make, LDFLAGS=pkg-config" $with "$cc" \
				"$cflags $pf" "$asneeded $libs" ""
			project_make "$name, plugin $with, make, LDLIBS=pkg-config" $with "$cc" \
				"$cflags $pf" "$asneeded" "$libs"
			project_cmake "$name, plugin $with, cmake, CMAKE_EXE_LINKER_FLAGS=pkg-config" $with \
				"$cc" "$cflags $pf" "$asneeded $libs"
		done
		# The wrapper as the compiler, with -fplugin-arg-* in CFLAGS that
		# reach the link (clang would warn there; the wrapper leaves them out).
		project_make "$name, iosig-cc, make, -fplugin-arg-iosig-unbound=error in CFLAGS" yes \
			"$wrapped" "$cflags -fplugin-arg-iosig-unbound=error" "$asneeded" ""
	done
	;;
*)
	echo "usage: $0 wrapper BUILD COMPILER... | install|projects BUILD SRC COMPILER..." >&2
	exit 2
	;;
esac
finish
