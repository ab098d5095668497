#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks of the GCC plugin that are not about one program: its options,
# its version check, the symbols it needs from GCC, the specs file, and an
# -flto link (lto1 loads the plugin too).
#
# usage: gcc_checks.sh CHECK GCC GXX PLUGIN PLUGIN_DIR LIBDIR SRCDIR
# Exit 0 passed, 1 failed, 77 skipped (with the reason).
set -u
check=$1 gcc=$2 gxx=$3 plugin=$4 plugin_dir=$5 libdir=$6 srcdir=$7
. "$(dirname "$0")/check_lib.sh"
begin_checks gcc-checks

write_sources

case $check in
options)
	check_options "$gcc" -fplugin="$plugin"
	expect_quiet "no pragmas, C" "$gcc" -fplugin="$plugin" -c "$work/plain.c" -o "$work/x.o"
	expect_quiet "no pragmas, C++" "$gxx" -fplugin="$plugin" -c "$work/plain.cc" -o "$work/x.o" \
		-fplugin-arg-iosig-unbound=error
	expect_quiet "pragmas, C++, all well" "$gxx" -fplugin="$plugin" -Wall -Wextra -c \
		"$work/sig.cc" -o "$work/x.o"
	expect_quiet "pragmas, C, all well" "$gcc" -fplugin="$plugin" -Wall -Wextra -c \
		"$work/sig.c" -o "$work/x.o"
	# -v lists the loaded plugins with their version.
	"$gcc" -v -fplugin="$plugin" -c "$work/plain.c" -o "$work/x.o" 2>"$work/err"
	if grep -q "iosig: [0-9.]* (built for GCC" "$work/err"; then
		echo "ok: version in -v"
	else
		fail "-v does not show the plugin version"
	fi
	;;
version)
	running=$("$gcc" -dumpfullversion)
	expect_fail "version mismatch" \
		"iosig-test-version.so was built for GCC 4.2.1 (" \
		"$gcc" -fplugin="$plugin_dir/iosig-test-version.so" -c "$work/plain.c" -o "$work/x.o"
	if grep -qF "but is loaded into GCC $running (" "$work/err" &&
		grep -qF "rebuild the plugin with the headers of this compiler ('gcc -print-file-name=plugin')" "$work/err"; then
		echo "ok: both versions named"
	else
		fail "the message does not name the running GCC $running:"
		cat "$work/err"
	fi
	;;
symbols)
	# Every symbol the plugin needs that no shared library provides must
	# be in each program that loads it; weak ones may be missing.
	nm -D --undefined-only "$plugin" | awk '$1 == "U" && $2 !~ /@/ { print $2 }' |
		sort >"$work/needed"
	[ -s "$work/needed" ] || fail "no undefined symbols found in $plugin"
	for prog in cc1 cc1plus lto1; do
		path=$("$gcc" -print-prog-name=$prog)
		if [ ! -x "$path" ]; then
			echo "skip: $prog not installed"
			continue
		fi
		nm -D --defined-only "$path" | awk '{ print $3 }' | sort >"$work/have"
		comm -23 "$work/needed" "$work/have" >"$work/missing"
		if [ -s "$work/missing" ]; then
			fail "$prog lacks symbols the plugin needs (declare them weak in gcc-common.h):"
			cat "$work/missing"
		else
			echo "ok: $prog provides all $(wc -l <"$work/needed") symbols"
		fi
	done
	if readelf -d "$plugin" | grep NEEDED | grep -qE "yaml|mount"; then
		fail "the plugin links libyaml or libmount"
	elif nm -D --undefined-only "$plugin" | grep -qE " (yaml_|mnt_)"; then
		fail "the plugin references libyaml or libmount"
	else
		echo "ok: no libyaml, no libmount"
	fi
	nm -D --defined-only "$plugin" | awk '{ print $3 }' | sort >"$work/exported"
	printf 'plugin_init\nplugin_is_GPL_compatible\n' >"$work/want"
	if cmp -s "$work/exported" "$work/want"; then
		echo "ok: exports plugin_init and plugin_is_GPL_compatible only"
	else
		fail "exported symbols:"
		cat "$work/exported"
	fi
	;;
specs)
	specs=$plugin_dir/iosig.specs
	[ -f "$specs" ] || { fail "no $specs"; exit 1; }
	for src in sig.c sig.cc; do
		driver=$gcc
		[ "$src" = sig.cc ] && driver=$gxx
		# shellcheck disable=SC2086 # IOSIG_E2E_LDFLAGS is a list of flags
		if "$driver" -specs="$specs" "$work/$src" -o "$work/prog" ${IOSIG_E2E_LDFLAGS:-} \
			2>"$work/err" &&
			nm "$work/prog" | grep -q "U iosig_open" &&
			IOSIG_DRYRUN=1 "$work/prog"; then
			echo "ok: $driver -specs=iosig.specs $src"
		else
			fail "$driver -specs=iosig.specs $src did not build a program calling iosig_open"
			cat "$work/err"
		fi
	done
	;;
lto)
	expect_quiet "-flto compile" "$gcc" -flto -fplugin="$plugin" -c "$work/plain.c" -o "$work/plain.o"
	expect_quiet "-flto link (lto1 loads the plugin)" "$gcc" -flto -fplugin="$plugin" \
		"$work/plain.o" -o "$work/plain"
	expect_quiet "-flto compile with pragmas" "$gcc" -flto -fplugin="$plugin" -c \
		"$work/sig.c" -o "$work/sig.o"
	# shellcheck disable=SC2086 # IOSIG_E2E_LDFLAGS is a list of flags
	expect_quiet "-flto link with pragmas" "$gcc" -flto -fplugin="$plugin" "$work/sig.o" \
		-o "$work/sig" -L"$libdir" -liosig -Wl,-rpath,"$libdir" ${IOSIG_E2E_LDFLAGS:-}
	nm "$work/sig" | grep -q "U iosig_open" || fail "the -flto program does not call iosig_open"
	;;
*)
	echo "usage: $0 options|version|symbols|specs|lto GCC GXX PLUGIN PLUGIN_DIR LIBDIR SRCDIR" >&2
	exit 2
	;;
esac
finish
