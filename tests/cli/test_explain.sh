#!/bin/sh
# CLI test of `iosig explain`: the IOSIG paper's machine (tests/data/
# table2.yaml) - the posterization choice as a table and as JSON, every
# verdict with its reason, exit 1 when nothing qualifies - and a precise
# message with exit status 2 for bad signatures and bad arguments (the
# signature error points at the column), 1 for a bad configuration.
# Usage: sh test_explain.sh PATH-TO-iosig
set -u
sub=explain
. "$(dirname "$0")/lib.sh"
t2="--no-discovery --config $data/table2.yaml"

json_ok() {
	python3 -m json.tool "$tmp/out" >/dev/null 2>&1 || fail "[$args] output is not JSON: $(cat "$tmp/out")"
}

# ---- posterization (Sect. 7.3): 16 MiB chunks go to the shared NFS ---------
post='persist sequential_access totalsize(6*GiB) size_per_io(16*MiB)'
# shellcheck disable=SC2086
status 0 $t2 --path /home/u/out.pgm "$post"
expect_out '^signature: +persist sequential_access size_per_io\(16777216\) totalsize\(6442450944\)$'
expect_out '^assumed: +size_per_io 16 MiB, sequential access, file size 6 GiB, lifetime 1 d \(default\)$'
expect_out '^path: +/home/u/out\.pgm$'
expect_out '^ +/mnt/ramdisk +ram .* persist requested, but the mount is volatile$'
expect_out '^ +/mnt/nvram +nvm .* needs 6 GiB plus a reserve of 0 B, 2 GiB free$'
expect_out '^ +/mnt/hdd +hdd .* satisfies all constraints; predicted 57\.6 MiB/s$'
expect_out '^\* +/home +network +103 MiB/s +1984 y +satisfies all constraints'
expect_out '^choice: +/home \(network\), predicted 103 MiB/s; 2 of 5 mounts satisfy the constraints$'
# 256 MiB chunks: the local HDD.
# shellcheck disable=SC2086
status 0 $t2 'persist sequential_access totalsize(6*GiB) size_per_io(256*MiB)'
expect_out '^choice: +/mnt/hdd \(hdd\)'
# --size overrides totalsize: 1 GiB fits the fast devices again; ps3 (persist)
# picks the NVRAM.
# shellcheck disable=SC2086
status 0 $t2 --size 1GiB 'persist random totalsize(6*GiB) size_per_io(512*KiB)'
expect_out '^signature: +persist random_access size_per_io\(524288\) totalsize\(1073741824\)$'
expect_out '^choice: +/mnt/nvram \(nvm\)'

# ---- JSON ----------------------------------------------------------------------
# shellcheck disable=SC2086
status 0 $t2 --json --path /home/u/out.pgm "$post"
json_ok
python3 - "$tmp/out" <<'PY' || fail "JSON has wrong values: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["choice"] == "/home" and d["eligible"] == 2 and d["path"] == "/home/u/out.pgm"
assert d["effective"]["size_per_io"] == 16 << 20 and d["effective"]["totalsize"] == 6 << 30
verdicts = {c["mount"]: c["verdict"] for c in d["candidates"]}
assert verdicts == {"/mnt/ramdisk": "volatile", "/mnt/nvram": "space", "/mnt/raid1": "space",
                    "/mnt/hdd": "ok", "/home": "ok"}, verdicts
assert [c["mount"] for c in d["candidates"] if c["chosen"]] == ["/home"]
PY
# A path that is not UTF-8 still gives valid JSON.
# shellcheck disable=SC2086
status 0 $t2 --json --path "$(printf '/home/\377/out')" "$post"
json_ok
# Nothing qualifies: exit 1, still valid JSON with a null choice.
# shellcheck disable=SC2086
status 1 $t2 --json archive
json_ok
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["choice"] is None and d["eligible"] == 0' \
	"$tmp/out" || fail "no-choice JSON: $(cat "$tmp/out")"
# shellcheck disable=SC2086
status 1 $t2 archive
expect_out '^choice: +none of the 5 mounts satisfies the constraints'

# ---- bad signatures: exit 2, the message and a caret under the column --------
# shellcheck disable=SC2086
bad 2 "invalid signature: 'tmp' contradicts 'persist' given at line 1, column 1" $t2 'persist tmp'
grep -q '^  persist tmp$' "$tmp/err" && grep -q '^          \^$' "$tmp/err" ||
	fail "[$args] no caret under 'tmp': $(cat "$tmp/err")"
# shellcheck disable=SC2086
bad 2 "invalid signature: unknown parameter 'PERSIST'; did you mean 'persist'?" $t2 PERSIST
# shellcheck disable=SC2086
bad 2 "invalid signature: 'chunk' is not a constant" $t2 'size_per_io(chunk)'
# shellcheck disable=SC2086
bad 2 "invalid signature: size_per_io must be between 0 and 2^63 bytes (8 EiB), not -1" $t2 'size_per_io(-1)'
# shellcheck disable=SC2086
bad 2 "invalid signature: stray byte 0xff" $t2 "$(printf 'persist \377')"

# ---- bad arguments: exit 2 -------------------------------------------------------
usage_bad "missing SIGNATURE" --no-discovery
usage_bad "expected exactly one SIGNATURE" persist tmp
usage_bad "option '--size' needs a value" persist --size
usage_bad "option '-s' needs a value" persist -s
usage_bad "--size '1e30' must be from 0 to 2^63 bytes (8 EiB)" --size 1e30 persist
usage_bad "--size '-5' must be from 0 to 2^63 bytes (8 EiB)" --size -5 persist
usage_bad "--size 'nan': 'nan' is not a constant" --size nan persist
usage_bad "--size '': empty value" --size '' persist
usage_bad "unknown option '--bogus'" --bogus persist
usage_bad "unknown option '-x'" -jx persist
usage_bad "option '--json' takes no value" --json=1 persist

# ---- bad configuration: exit 1 with file:line:column ----------------------------
printf 'mounts:\n  /data:\n    class: ssd\n    mtff: 10*y\n' >"$tmp/typo.yaml"
bad 1 "$tmp/typo.yaml:4:5: mtff: unknown key in mount '/data'; did you mean 'mttf'?" \
	--no-discovery --config "$tmp/typo.yaml" persist
bad 1 "$tmp/missing.yaml: cannot read configuration file: No such file or directory" \
	--config "$tmp/missing.yaml" persist

# A probe cache the catalog had to ignore is reported, in both forms.
printf 'bogus: [\n' >"$tmp/probe.yaml"
IOSIG_CONFIG= IOSIG_PROBE_CACHE="$tmp/probe.yaml" "$iosig" explain tmp >"$tmp/out" 2>"$tmp/err"
grep -Fq "iosig explain: note: $tmp/probe.yaml:2:1: invalid YAML" "$tmp/err" ||
	fail "a broken probe cache is not noted: $(cat "$tmp/err")"
IOSIG_CONFIG= IOSIG_PROBE_CACHE="$tmp/probe.yaml" "$iosig" explain --json tmp >"$tmp/out" 2>"$tmp/err"
args="--json tmp (broken probe cache)"
json_ok
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any("probe cache ignored" in n for n in d["notes"])' \
	"$tmp/out" || fail "the JSON has no note on the probe cache: $(cat "$tmp/out")"

run --help
[ "$rc" -eq 0 ] || fail "--help exited $rc"
grep -q '^Usage: iosig explain' "$tmp/out" || fail "--help prints no usage"

finish
