#!/bin/sh
# CLI test of the command lines of `iosig probe` and `iosig validate`, which
# share their option errors, --max-space and the MOUNT arguments
# (libiosig/tools/tool_probe.c): every bad command line exits 2 with a
# precise message and the --help hint, before anything is measured; a MOUNT
# that is not a mount point of the catalog says what it is on.  Nothing here
# writes test files (the measurements are tests/probe/test_probe_mounts.c).
# Usage: sh test_measure.sh PATH-TO-iosig
set -u
sub=probe
. "$(dirname "$0")/lib.sh"
export IOSIG_PROBE_CACHE="$tmp/probe.yaml" IOSIG_CONFIG=

for sub in probe validate; do
	usage_bad "option '-t' needs a value" -t
	usage_bad "option '--time' needs a value" --time
	usage_bad "unknown option '-x'" -qx
	usage_bad "unknown option '--bogus'" --bogus
	usage_bad "option '--quiet' takes no value" --quiet=1
	usage_bad "--time 'fast': 'fast' is not a constant" -t fast
	usage_bad "--time '5MiB': expected a time" --time 5MiB
	usage_bad "--max-space '1MiB': expected at least 8 MiB" -s 1MiB
	usage_bad "--max-space '1e16': expected a whole number of bytes, at most 1e15" -s 1e16
	usage_bad "--max-space '16777216.5': expected a whole number of bytes" -s 16777216.5
	usage_bad "--max-space 'lots': 'lots' is not a constant" --max-space lots
	bad 2 "$tmp/none: No such file or directory; give a mount point (see 'iosig devices')" \
		-q "$tmp/none"
	bad 2 "$tmp is not a mount point of the catalog (it is on '" -q "$tmp"
	run --help
	[ "$rc" -eq 0 ] || fail "$sub --help exited $rc"
	expect_out "^Usage: iosig $sub "
done
[ -e "$tmp/probe.yaml" ] && fail "a probe cache was written"

sub=probe
usage_bad "--time '0.1': expected 0.5 s to 1 h per mount" -t 0.1
usage_bad "--cache: empty file name" --cache ''
sub=validate
usage_bad "--time '0': expected more than 0 and at most 10 min" -t 0
usage_bad "--repeat takes a whole number from 1 to 100, not '0'" --repeat 0
usage_bad "--sweep takes a whole number from 0 to 64, not '-1'" --sweep -1
usage_bad "--min-size '0': expected a whole number of bytes >= 1" --min-size 0
usage_bad "--min-size is larger than --max-size" --min-size 1MiB --max-size 4KiB
usage_bad "--pattern 'x': expected seq, rand or both" --pattern x
finish
