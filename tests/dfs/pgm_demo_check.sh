#!/bin/sh
# The PGM demo's `global` profile on GlusterFS: examples/pgm/run-demo sets
# up a volume of its own (through scripts/with-glusterfs) and says so, and
# the outputs of the global profile are redirected there, identical to the
# plain run's; with --no-gluster they stay where the program asked, with
# the reason.  Skipped (77) where GlusterFS cannot run.
# Usage: sh pgm_demo_check.sh BUILD_DIR
set -u
build=${1:?usage: sh pgm_demo_check.sh BUILD_DIR}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/glusterfs.sh"
if why=$(gl_unavailable); then
	echo "SKIP: $why"
	exit 77
fi
[ -x "$build/examples/pgm/pgm-iosig" ] || { echo "SKIP: pgm-iosig was not built (GCC plugin)"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
export IOSIG_PROBE_CACHE=

"$top/examples/pgm/run-demo" "$build" --size 1MiB --chunk 64KiB --repeat 1 --no-ramdisk \
	>"$tmp/out" 2>&1 || fail "run-demo failed: $(tail -n 30 "$tmp/out")"
grep -q "^run-demo: starting a GlusterFS replica 2 volume of the demo's own for the global profile" "$tmp/out" ||
	fail "the demo does not say it starts a GlusterFS volume: $(head -n 20 "$tmp/out")"
mnt=$(sed -n 's/^run-demo: GlusterFS volume rep2 (replica 2) mounted at \(.*\): the global profile.*/\1/p' "$tmp/out")
[ -n "$mnt" ] || fail "the demo does not say where the volume is mounted"
for op in posterize divide shuffle; do
	row=$(grep -E "^$op +global persist " "$tmp/out")
	case $row in
	*" $mnt "*" redirected "*" identical") ;;
	*) fail "$op, global profile: not redirected to $mnt, or not identical: '$row'" ;;
	esac
done

"$top/examples/pgm/run-demo" "$build" --size 1MiB --chunk 64KiB --repeat 1 --no-ramdisk \
	--no-gluster >"$tmp/out2" 2>&1 || fail "run-demo --no-gluster failed: $(tail -n 30 "$tmp/out2")"
grep -q "GlusterFS" "$tmp/out2" && fail "--no-gluster: the demo started GlusterFS"
for op in posterize divide shuffle; do
	grep -Eq "^$op +global persist .* (fallback|direct) " "$tmp/out2" ||
		fail "$op, global profile without GlusterFS: $(grep -E "^$op +global" "$tmp/out2")"
done

finish "PGM demo"
