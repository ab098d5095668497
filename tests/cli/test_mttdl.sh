#!/bin/sh
# CLI test of `iosig mttdl`: the paper's Sect. 7.4 numbers in the table and
# in JSON, determinism of --simulate for a seed, and a precise message with
# exit status 2 for every kind of bad argument.
# Usage: sh test_mttdl.sh PATH-TO-iosig
set -u
sub=mttdl
. "$(dirname "$0")/lib.sh"

# ---- the paper's Sect. 7.4 -------------------------------------------------
# 1 TiB on RAID5 4+1: UBER 4.359e-14, h = 0.3834, Eq. 2 = 4.10963e7 s
# (15.6 months = 1.30 y), chain 8.0509e7 s; P(loss) in 30 d =
# 1 - exp(-2592000/41096303) = 6.11 %.
ok --layout raid5 --disks 5 --mttf 10y --mttr 1d --ber 1e-6 --ecc 2 --sector-bits 512 \
	--size 1TiB --lifetime 30d
expect_out '^layout +raid5 +5 disks, survives 1 failure$'
expect_out '^UBER +4\.359e-14 +Eq\. 1: BER 1e-06, ECC corrects 2 bits per 512-bit sector$'
expect_out '^size +1 TiB +8\.796e\+12 bits$'
expect_out '^h +0\.3834 '
expect_out '^MTTDL \(Eq\. 2\) +1\.30 y +4\.10963e\+07 s$'
expect_out '^MTTDL \(chain\) +2\.55 y +8\.0509e\+07 s'
expect_out '^P\(loss\) +6\.11 % +within 1 mo'
expect_out '^note: Eq\. 2 is 49 % below the chain'

# The defaults are that setup: RAID1 of 2 disks, 1 TiB: 13.03 y (4.10963e8 s).
ok --layout raid1 --size 1TiB
expect_out '^layout +raid1 +2 disks, survives 1 failure$'
expect_out '^MTTDL \(Eq\. 2\) +13\.0 y +4\.10963e\+08 s$'
# 1 GiB on RAID1: 7711 y, Eq. 2 and chain within 5 %: no note.
ok --layout raid1 --size 1GiB
expect_out '^MTTDL \(Eq\. 2\) +7711 y'
grep -q '^note:' "$tmp/out" && fail "[$args] notes a divergence that is not there"

# A single disk: MTTF; RAID10 of 8 disks: 4 pairs.
ok
expect_out '^layout +single +1 disk, survives 0 failures$'
expect_out '^MTTDL \(Eq\. 2\) +10 y +3\.1536e\+08 s$'
ok --layout raid10 --disks 8
expect_out '^layout +raid10 +8 disks: 4 mirrored pairs, each survives 1 failure$'
ok --layout erasure --data 6 --parity 3 --uber 1e-15
expect_out '^layout +erasure +9 disks, survives 3 failures$'
expect_out '^UBER +1e-15 +given$'
ok --layout replication --copies 3
expect_out '^layout +replication +3 disks, survives 2 failures$'

# ---- simulation --------------------------------------------------------------
ok --layout raid5 --disks 5 --simulate 20000 --seed 42
expect_out '^MTTDL \(MC\) +[0-9.]+ y +\+/- [0-9.]+ % \(1 std\. error\), 20000 lifetimes, seed 42$'
expect_out '^MC vs Eq\. 2 +[-+][0-9.]+ % '
expect_out '^MC vs chain +[-+][0-9.]+ % '
expect_out '^losses +[0-9]+ / [0-9]+ +by device failure / by uncorrectable error'
cp "$tmp/out" "$tmp/first"
ok --layout raid5 --disks 5 --simulate 20000 --seed 42
cmp -s "$tmp/out" "$tmp/first" || fail "the same seed gave different output"
ok --layout raid5 --disks 5 --simulate 20000 --seed 0x2b
cmp -s "$tmp/out" "$tmp/first" && fail "seed 43 gave the output of seed 42"

# ---- JSON --------------------------------------------------------------------
ok --layout raid5 --disks 5 --size 1TiB --simulate 1000 --json
expect_out '^  "layout": "raid5",$'
expect_out '^  "disks": 5,$'
expect_out '^  "uber": 4\.358869037939[0-9]*e-14,$'
expect_out '^  "mttdl_s": 41096303\.00460[0-9]*,$'
expect_out '^    "trials": 1000,$'
if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/out" <<'PY' || fail "JSON output does not parse or has wrong values"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tolerated_per_group"] == 1 and d["groups"] == 1
assert abs(d["h"] - 0.38341017529335925) < 1e-12
assert abs(d["mttdl_s"] / 41096303.00460042 - 1) < 1e-12
s = d["simulation"]
assert s["by_failure"] + s["by_error"] == 1000
assert abs(s["rel_error_vs_eq2"] - (s["mean_s"] / d["mttdl_s"] - 1)) < 1e-12
PY
fi
ok --uber 1e-14 --json
expect_out '^  "ber": null,$'

# ---- help --------------------------------------------------------------------
ok --help
expect_out '^Usage: iosig mttdl '
ok -h
expect_out '^Usage: iosig mttdl '

# ---- the simulation cannot represent the chain: analytic output, exit 1 ----
args="--layout erasure --data 70 --parity 30 --mttf 1000000y --mttr 1s --simulate 10"
run --layout erasure --data 70 --parity 30 --mttf 1000000y --mttr 1s --simulate 10
[ "$rc" -eq 1 ] || fail "[$args] exited $rc, expected 1"
grep -q 'cannot simulate' "$tmp/err" || fail "[$args] does not say why: $(cat "$tmp/err")"
expect_out '^MTTDL \(Eq\. 2\) '

# ---- bad arguments: exit 2, a message that names the problem --------------
usage_bad "unknown layout 'raid7': use single, raid0" --layout raid7
usage_bad "--layout raid5 needs --disks N" --layout raid5
usage_bad "--layout raid6 needs at least 3 disks, not 2" --layout raid6 --disks 2
usage_bad "--layout raid10 needs an even number of disks" --layout raid10 --disks 5
usage_bad "--layout single has one disk, not 3" --disks 3
usage_bad "--disks takes a whole number from 1 to 65535, not '0'" --layout raid0 --disks 0
usage_bad "--disks takes a whole number from 1 to 65535, not '70000'" --layout raid0 --disks 70000
usage_bad "--disks takes a whole number from 1 to 65535, not '-3'" --layout raid0 --disks -3
usage_bad "--disks takes a whole number from 1 to 65535, not '4x'" --layout raid0 --disks 4x
usage_bad "--mttf '10yy': unknown unit 'yy'" --mttf 10yy
usage_bad "--mttf '5MiB': expected a time" --mttf 5MiB
usage_bad "--mttf '0' must be greater than 0" --mttf 0
usage_bad "--mttr '-1d' must be greater than 0" --mttr -1d
usage_bad "--size '-1GiB' must be from 0 to 2^63 bytes (8 EiB)" --size -1GiB
usage_bad "--size '1e308' must be from 0 to 2^63 bytes (8 EiB)" --size 1e308
usage_bad "--size '10y': expected a size" --size 10y
usage_bad "--lifetime '-2h' must be 0 or more" --lifetime -2h
usage_bad "--ber '2' must be from 0 to 1" --ber 2
usage_bad "--ber '1e-6x': unknown unit 'x'" --ber 1e-6x
usage_bad "--uber '-1e-15' must be from 0 to 1" --uber -1e-15
usage_bad "--ecc takes a whole number from 0 to 4294967295, not 'two'" --ecc two
usage_bad "--sector-bits takes a whole number from 1 to 4294967295, not '0'" --sector-bits 0
usage_bad "--uber replaces --ber, --ecc and --sector-bits" --uber 1e-14 --ecc 4
usage_bad "--simulate takes a whole number from 1 to 10000000000, not '0'" --simulate 0
usage_bad "--seed only matters with --simulate N" --seed 5
usage_bad "--seed takes a whole number from 0 to 18446744073709551615, not 'x'" --simulate 10 --seed x
usage_bad "--copies is for --layout replication, not raid1" --layout raid1 --copies 3
usage_bad "--layout replication needs --copies K" --layout replication
usage_bad "--copies 3 and --disks 4 disagree" --layout replication --copies 3 --disks 4
usage_bad "--data and --parity are for --layout erasure, not raid6" --layout raid6 --disks 6 --parity 2
usage_bad "--layout erasure needs --data N and --parity M" --layout erasure --data 4
usage_bad "--disks 7 is not --data 4 + --parity 2" --layout erasure --data 4 --parity 2 --disks 7
usage_bad "--data 65535 + --parity 1 is more than 65535 devices" --layout erasure --data 65535 --parity 1
usage_bad "unknown option '--frobnicate'" --frobnicate
usage_bad "option '--mttf' needs a value" --mttf
usage_bad "option '--json' takes no value" --json=1
usage_bad "unknown option '-x'" -x
usage_bad "unexpected argument 'raid5'" raid5

finish
