#!/bin/sh
# CLI test of `iosig devices`: the IOSIG paper's machine (tests/data/
# table2.yaml) as a table that fits 80 columns, with MTTDL for --size, as
# JSON with sources and as --sources; this machine's catalog; and a precise
# message with the right exit status for bad arguments and bad configs.
# Usage: sh test_devices.sh PATH-TO-iosig
set -u
sub=devices
. "$(dirname "$0")/lib.sh"

t2="--no-discovery --config $data/table2.yaml"

# The five devices of Table 2, one line each, every line within 80 columns.
ok $t2
expect_out '^MOUNT +FS +CLASS +VIS +PERS +FREE +RD/s +WR/s +LAT +IOPS +MTTF +MTTDL$'
expect_out '^/mnt/ramdisk +tmpfs +ram +local +no +1\.0G +2\.3G +2\.4G +1us +800k +10y +-$'
expect_out '^/mnt/nvram +ext4 +nvm +local +yes +2\.0G +1\.7G +1\.7G +100us +9000 +10y +10y$'
expect_out '^/mnt/raid1 +xfs +raid +local +yes +4\.0G +430M +415M +110us +6000 +10y +7[0-9]{3}y$'
expect_out '^/mnt/hdd +xfs +hdd +local +yes +1\.5T +130M +125M +150ms +10 +10y +10y$'
expect_out '^/home +nfs4 +network +global +yes +1\.0T +105M +103M +400us +1000 +10y +7[0-9]{3}y$'
expect_out '^MTTDL for a 1 GiB file\.$'
[ "$(grep -c '^/' "$tmp/out")" -eq 5 ] || fail "table2: not 5 mounts: $(cat "$tmp/out")"
awk 'length > 80 { exit 1 }' "$tmp/out" || fail "table2: a line is longer than 80 columns"

# A mount point longer than its column gets a line of its own and its row
# goes on under it, within 80 columns; with --all, why a mount is not
# eligible is printed under its row.
long=/a/very/long/mount/point/that/does/not/fit/in/the/first/column/at/all
printf 'mounts:\n  %s:\n    class: hdd\n    free: 10GiB\n  /skip:\n    class: ssd\n    free: 1GiB\n    ignore: true\n' \
	"$long" >"$tmp/long.yaml"
ok --no-discovery --config "$tmp/long.yaml" --all
expect_out "^$long\$"
awk -v p="$long" 'prev == p && /^ +- +hdd +local +yes +10G +130M / { found = 1 } { prev = $0 }
	END { exit !found }' "$tmp/out" || fail "[$args] the long mount's row does not go on under it: $(cat "$tmp/out")"
awk '/^\/skip / { row = NR } row && NR == row + 1 && /^  not eligible: ignored by the configuration / { found = 1 }
	END { exit !found }' "$tmp/out" || fail "[$args] no reason under the ineligible row: $(cat "$tmp/out")"
awk 'length > 80 { exit 1 }' "$tmp/out" || fail "[$args] a line is longer than 80 columns"
ok --no-discovery --config "$tmp/long.yaml"
grep -q '^/skip' "$tmp/out" && fail "[$args] lists the ineligible mount without --all"
expect_out '^MTTDL for a 1 GiB file\. 1 mount is not eligible: --all shows why\.$'

# Sect. 7.4: 1 TB on RAID1 has an MTTDL of about 12 years.
ok $t2 --size 1TiB
expect_out '^/mnt/raid1 .* 1[0-9]y$'
expect_out '^MTTDL for a 1 TiB file\.$'

# --sources: every field with its value and source.
ok $t2 --sources
expect_out '^/mnt/raid1  \(xfs on /dev/sdb1\)$'
expect_out '^seq_read_bw +430 MiB/s +config$'
expect_out '^layout +raid1, 2 disks, tolerates 1 +config$'
expect_out '^rand_read_bw +as sequential +default: same as sequential \(Eq\. 3\)$'
expect_out '^data_dir +/home/iosig +config$'

# JSON: every value with its source; parses.
ok $t2 --json
expect_out '"path": "/mnt/ramdisk"'
expect_out '"source": "config"'
expect_out '"origin": "same as sequential \(Eq\. 3\)"'
if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/out" <<'EOF' || fail "JSON check failed: $(cat "$tmp/out" | head -40)"
import json, sys
doc = json.load(open(sys.argv[1]))
m = doc["mounts"]
assert len(m) == 5, len(m)
raid = [x for x in m if x["path"] == "/mnt/raid1"][0]
assert raid["seq_read_bw"] == {"value": 430 * 2**20, "source": "config"}, raid["seq_read_bw"]
assert raid["layout"]["value"] == {"kind": "raid1", "disks": 2, "tolerated": 1}
assert raid["rotational"]["source"] == "default"
assert raid["mttdl"] > 100 * 365 * 86400
ram = m[0]
assert ram["mttdl"] == 0 and ram["volatile"]["value"] is True
assert doc["mttdl_size"] == 2**30
assert doc["notes"] == []
EOF
fi

# This machine: builds, lists, JSON parses, --all shows reasons.
IOSIG_CONFIG= "$iosig" devices >"$tmp/out" 2>"$tmp/err" || fail "discovery: exit $?: $(cat "$tmp/err")"
args="(this machine)"
expect_out '^MOUNT +FS +CLASS'
IOSIG_CONFIG= "$iosig" devices --all >"$tmp/out" 2>"$tmp/err" || fail "--all: exit $?"
IOSIG_CONFIG= "$iosig" devices --json >"$tmp/out" 2>"$tmp/err" || fail "--json: exit $?"
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert all("path" in m and "eligible" in m for m in d["mounts"])' "$tmp/out" ||
		fail "discovery JSON does not parse"
fi

# Bad command lines: exit 2 and a hint.
usage_bad "--no-discovery lists the mounts of a configuration: give --config FILE" --no-discovery
usage_bad "--size '10 years': unknown unit 'years'; sizes: B KiB MiB" $t2 --size "10 years"
usage_bad "--size '0' must be greater than 0" $t2 --size 0
usage_bad "--size '1e30' must be from 0 to 2^63 bytes (8 EiB)" $t2 --size 1e30
usage_bad "option '--size' needs a value" $t2 --size
usage_bad "unknown option '--bogus'" --bogus
usage_bad "option '--json' takes no value" --json=yes
usage_bad "option '--s' is ambiguous: spell it out" --s
usage_bad "unexpected argument 'extra'" $t2 extra

# Bad configurations: exit 1, file:line:column and the message.
printf 'mounts:\n  /data:\n    class: ssd\n    mtff: 10*y\n' >"$tmp/typo.yaml"
bad 1 "$tmp/typo.yaml:4:5: mtff: unknown key in mount '/data'; did you mean 'mttf'?" \
	--no-discovery --config "$tmp/typo.yaml"
bad 1 "$tmp/missing.yaml: cannot read configuration file: No such file or directory" \
	--config "$tmp/missing.yaml"
IOSIG_CONFIG="$tmp/typo.yaml" "$iosig" devices >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] || fail "IOSIG_CONFIG with an error: exit status not 1"
grep -Fq "typo.yaml:4:5: mtff" "$tmp/err" || fail "IOSIG_CONFIG error not reported"

# A mount point with control characters cannot drive the terminal: they are
# shown as '?' in the table and in --sources (and kept in --json).
printf 'mounts:\n  "/mnt/\\e]0;pwned\\a":\n    class: ssd\n    free: 10GiB\n' >"$tmp/esc.yaml"
for mode in "" --sources; do
	ok --no-discovery --config "$tmp/esc.yaml" $mode
	expect_out '^/mnt/\?]0;pwned\? '
	tr -d '\n' <"$tmp/out" | LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" &&
		fail "[$args] writes control characters to the terminal"
done
ok --no-discovery --config "$tmp/esc.yaml" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["mounts"][0]["path"] == "/mnt/\x1b]0;pwned\x07"' \
	"$tmp/out" || fail "--json does not keep the mount point as it is: $(cat "$tmp/out")"

run --help
[ "$rc" -eq 0 ] || fail "--help exited $rc"
expect_out '^Usage: iosig devices'

finish
