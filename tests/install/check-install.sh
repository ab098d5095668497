#!/bin/sh
# check-install.sh BUILD CONSUMER_SRC LIBDIR VERSION CC IOSIG_TOOL MAP
#
# Installs BUILD into a scratch prefix and checks it as a user of the
# library would: files in place, libiosig.so's SONAME and exports (iosig_*,
# all in the version node, and exactly the interposers MAP - libiosig.map -
# lists under glibc's version names), a consumer built with
# find_package(iosig) against both the shared and the static library, one
# built with pkg-config (shared and --static), and every man page rendering
# without a warning.  Exit 0 = all good, 1 = a check failed (it says which),
# 77 = a tool it needs is missing.
set -eu
build=$1 consumer=$2 libdir=$3 version=$4 cc=$5 tool=$6 map=$7
major=${version%%.*}

for t in cmake nm readelf pkg-config man; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: '$t' is not installed (scripts/install-deps installs it)"; exit 77; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/iosig-install.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
prefix=$work/prefix
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log"; fail "cmake --install"; exit 1; }
lib=$prefix/$libdir

# ---- files ----------------------------------------------------------------
for f in include/iosig.h "$libdir/libiosig.so" "$libdir/libiosig.so.$major" \
	"$libdir/libiosig.so.$version" "$libdir/libiosig.a" \
	"$libdir/cmake/iosig/iosigConfig.cmake" "$libdir/cmake/iosig/iosigConfigVersion.cmake" \
	"$libdir/pkgconfig/libiosig.pc" bin/iosig \
	share/man/man1/iosig.1 share/man/man5/iosig-config.5 share/man/man7/iosig-signature.7 \
	sbin/iosigd share/man/man8/iosigd.8; do
	[ -e "$prefix/$f" ] || fail "not installed: $f"
done
# iosigd's systemd units, in the unit directories under the prefix.
for u in system/iosigd.service system/iosigd.socket user/iosigd-user.service user/iosigd-user.socket; do
	found=$(find "$prefix" -path "*/systemd/$u" -type f | head -n 1)
	[ -n "$found" ] || fail "not installed: systemd unit $u (under $prefix)"
	case $u in *.service) grep -q "^ExecStart=/.*/iosigd" "$found" 2>/dev/null ||
		fail "$u: no ExecStart= of iosigd" ;; esac
done
# Every subcommand `iosig --help` lists has its man page.
for c in $("$tool" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p'); do
	[ -e "$prefix/share/man/man1/iosig-$c.1" ] || fail "no man page for 'iosig $c' (share/man/man1/iosig-$c.1)"
done

# ---- SONAME and exported symbols -----------------------------------------
so=$lib/libiosig.so.$version
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libiosig.so.$major" ] && ok "SONAME $soname" || fail "SONAME is '$soname', expected libiosig.so.$major"
nm -D --defined-only "$so" | awk '{ print $NF }' >"$work/exports"
bad=$(grep -v -e '^iosig_[a-z0-9_]*@@IOSIG_' -e '^IOSIG_[0-9.]*$' -e '^IOSIG_PRIVATE$' -e '^GLIBC_[0-9.]*$' \
	-e '^[a-z_0-9]*@@GLIBC_[0-9.]*$' "$work/exports" || true)
[ -z "$bad" ] && ok "$(grep -c '^iosig_' "$work/exports") exports, all iosig_* in a version node" ||
	fail "exported symbols outside iosig_*@@IOSIG_* and the interposers: $(echo $bad)"
# The interposers: name@@GLIBC_x for every name the map's GLIBC_x node
# lists, and nothing else.
sed 's,/\*.*,,; s,^ \*.*,,' "$map" | tr ';{}' '\n\n\n' | awk '
	/^[ \t]*GLIBC_[0-9.]+[ \t]*$/ { gsub(/[ \t]/, ""); node = $0; next }
	/^[ \t]*IOSIG_/ { node = ""; next }
	node != "" { gsub(/global:|[ \t]/, ""); if ($0 != "") print $0 "@@" node }' |
	sort >"$work/interposers.want"
grep '@@GLIBC_' "$work/exports" | sort >"$work/interposers.got"
if [ -s "$work/interposers.want" ] && cmp -s "$work/interposers.want" "$work/interposers.got"; then
	ok "$(wc -l <"$work/interposers.got") interposers, each under glibc's version of its name"
else
	fail "interposers differ from $map: $(diff "$work/interposers.want" "$work/interposers.got" | grep '^[<>]' | tr '\n' ' ')"
fi
grep -q '^iosig_select@@IOSIG_' "$work/exports" || fail "iosig_select is not exported"
# Every exported function has its man page (man3/NAME.3, perhaps a .so link);
# the private node (IOSIG_PRIVATE: what the layers of interposers in one
# process share) is not API.
for f in $(sed -n 's/^\(iosig_[a-z0-9_]*\)@@IOSIG_[0-9].*/\1/p' "$work/exports"); do
	[ -e "$prefix/share/man/man3/$f.3" ] || fail "no man page for $f (share/man/man3/$f.3)"
done

# ---- consumer through find_package(iosig) ----------------------------------
check_output() { # NAME FILE
	grep -qx "version $version" "$2" &&
		grep -qx "size_per_io 67108864" "$2" &&
		grep -qx "uber 4.36e-14" "$2" &&
		grep -qx "raid1 1TiB years 13" "$2" && ok "$1 runs and computes the paper's values" ||
		{ cat "$2"; fail "$1: unexpected output"; }
}
if cmake -S "$consumer" -B "$work/cons" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
	-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/cons.log" 2>&1 &&
	cmake --build "$work/cons" >>"$work/cons.log" 2>&1; then
	"$work/cons/consumer_shared" >"$work/out_shared" && check_output "find_package: iosig::iosig" "$work/out_shared" ||
		fail "find_package: iosig::iosig consumer failed"
	"$work/cons/consumer_static" >"$work/out_static" && check_output "find_package: iosig::iosig_static" "$work/out_static" ||
		fail "find_package: iosig::iosig_static consumer failed"
	readelf -d "$work/cons/consumer_static" | grep -q 'libiosig\.so' &&
		fail "iosig::iosig_static consumer depends on libiosig.so"
	"$work/cons/consumer_cxx" >/dev/null && ok "find_package: C++ consumer" || fail "C++ consumer failed"
else
	tail -n 30 "$work/cons.log"
	fail "find_package(iosig) consumer does not configure or build"
fi

# ---- consumer through pkg-config -------------------------------------------
export PKG_CONFIG_PATH="$lib/pkgconfig"
pcv=$(pkg-config --modversion libiosig 2>&1) || true
[ "$pcv" = "$version" ] && ok "pkg-config libiosig $pcv" || fail "pkg-config --modversion libiosig: $pcv"
pclib=$(pkg-config --variable=libdir libiosig)
[ "$(cd "$pclib" 2>/dev/null && pwd -P)" = "$(cd "$lib" && pwd -P)" ] ||
	fail "libiosig.pc's libdir '$pclib' is not the installed $lib"
# shellcheck disable=SC2046
if "$cc" -std=c99 -Wall -Wextra -Werror -o "$work/pc_shared" "$consumer/consumer.c" \
	$(pkg-config --cflags --libs libiosig) >"$work/pc.log" 2>&1; then
	LD_LIBRARY_PATH=$lib "$work/pc_shared" >"$work/out_pc" &&
		check_output "pkg-config (shared, -std=c99 -Werror)" "$work/out_pc" || fail "pkg-config consumer failed"
else
	cat "$work/pc.log"; fail "pkg-config consumer does not build"
fi
# shellcheck disable=SC2046
if "$cc" -o "$work/pc_static" "$consumer/consumer.c" $(pkg-config --cflags libiosig) \
	"$pclib/libiosig.a" $(pkg-config --static --libs libiosig | sed 's/\(^\| \)-liosig\( \|$\)/ /') \
	>"$work/pcs.log" 2>&1; then
	"$work/pc_static" >"$work/out_pcs" &&
		check_output "pkg-config --static" "$work/out_pcs" || fail "pkg-config --static consumer failed"
else
	cat "$work/pcs.log"; fail "pkg-config --static consumer does not link"
fi

# ---- man pages --------------------------------------------------------------
n=0
for page in "$prefix"/share/man/man*/*; do
	n=$((n + 1))
	msg=$(cd "$prefix/share/man" && MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$msg" ] || fail "man -l $(basename "$page"): $msg"
done
[ "$n" -gt 0 ] && ok "$n man pages render without warnings" || fail "no man pages installed"

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "install: all checks passed"
