#!/bin/sh
# Command-line checks of iosig-sim: usage errors (exit 2, exact message),
# a trace run and a generated run writing JSON, --plot, --help listing the
# policies, and `calibrate --check`.
# Usage: cli.sh IOSIG_SIM TRACES_DIR
set -u
sim=$1
traces=${2:-}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect CODE "MESSAGE" args... : exit code and first stderr line
expect() {
	code=$1 msg=$2
	shift 2
	"$sim" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$code" ] || fail "'$*': exit $got, want $code"
	first=$(head -n 1 "$tmp/err")
	[ "$first" = "$msg" ] || fail "'$*': stderr '$first', want '$msg'"
}

expect 2 "iosig-sim: no --policy given (try --policy noop; --list-policies lists them)" \
	--workload pangu
expect 2 "iosig-sim: give exactly one of --trace FILE --format F or --workload NAME" \
	--policy noop
expect 2 "iosig-sim: --trace needs --format (blkparse, disksim, validate, mqsim, csv)" \
	--policy noop --trace x
expect 2 "iosig-sim: unknown policy 'nope' (known: noop$(
	"$sim" --help | sed -n '/^Policies/,/^$/p' | awk 'NR>1 && NF {printf ", %s", $1}' | sed 's/^, noop//'))" \
	--policy nope --workload pangu
expect 2 "iosig-sim: noop: option 'max_merge': 'big' is not a valid size (expected a size, e.g. 4096, 4KiB, 64K, 2MB (K/M/G/T = powers of 1024))" \
	--policy noop --policy-opt max_merge=big --workload pangu
expect 2 "iosig-sim: device 'tape': unknown class 'tape' (known: hdd, ssd, nvm, ram)" \
	--policy noop --workload pangu --device tape
expect 2 "iosig-sim: unknown trace format 'xls' (known: blkparse, disksim, validate, mqsim, csv)" \
	--policy noop --trace /dev/null --format xls
expect 1 "iosig-sim: cannot open trace /nonexistent.trace: No such file or directory" \
	--policy noop --trace /nonexistent.trace --format csv
expect 2 "iosig-sim: --seed 'x': expected a non-negative integer" \
	--policy noop --workload pangu --seed x
expect 2 "iosig-sim: workload pangu: unknown option 'speed' (valid: requests, duration, span, rate, burst_rate, burst_len, burst_every, write, large, clients)" \
	--policy noop --workload pangu:speed=1
printf 'time_ms,op,offset,bytes\n1,W,0,4096\n2,Q,0,4096\n' >"$tmp/bad.csv"
expect 1 "iosig-sim: $tmp/bad.csv:3: op 'Q' is not R, W, F, read, write or flush" \
	--policy noop --trace "$tmp/bad.csv" --format csv
expect 2 "iosig-sim: calibrate: give --drive NAME (e.g. barracuda) or --all" calibrate
expect 2 "iosig-sim: --hint '7=64KiB,diagonal': pattern 'diagonal' is neither sequential nor random" \
	--policy noop --workload pangu --hint 7=64KiB,diagonal
expect 2 "iosig-sim: --hint 'x=1': stream 'x' is not a number (a pid or stream id)" \
	--policy noop --workload pangu --hint x=1
expect 2 "iosig-sim: --iodepth and --think apply to closed-loop runs (--closed-loop, or a closed-loop workload or trace format)" \
	--policy noop --workload pangu --iodepth 4
expect 2 "iosig-sim: --iodepth '0': expected an integer from 1 to 65536" \
	--policy noop --workload pangu --closed-loop --iodepth 0
expect 2 "iosig-sim: --think: option 'think': '5' needs a time unit (ns, us, ms, s, min, h), e.g. 5ms" \
	--policy noop --workload pangu --closed-loop --think 5

# A closed-loop replay: the trace's 10 s gap between stream 3's requests
# disappears; iodepth and think are reported.
printf 'time_s,op,offset,bytes,stream\n0,R,0,4096,3\n10,R,4096,4096,3\n' >"$tmp/cl.csv"
"$sim" --policy noop --trace "$tmp/cl.csv" --format csv --device ram --closed-loop \
	--iodepth 2 --think 1ms -q --json "$tmp/cl.json" || fail "closed-loop run exit $?"
python3 - "$tmp/cl.json" <<'PY' || fail "closed-loop run.json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["closed_loop"] and d["config"]["iodepth"] == 2, d["config"]
assert d["workload"]["closed_loop"] and d["workload"]["think_s"] == 0.001, d["workload"]
assert d["time"]["last_completion_s"] < 0.01, d["time"]
PY
# A closed-loop workload needs no flag; --iodepth overrides its own.
"$sim" --policy noop --workload dfsio:files=2,file_size=1MiB --device ssd --iodepth 3 -q \
	--json "$tmp/dfsio.json" || fail "dfsio run exit $?"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); w=d['workload']; assert w['closed_loop'] and w['iodepth'] == 3 and d['requests']['completed'] == 32, d" "$tmp/dfsio.json" ||
	fail "dfsio run.json content"

# --help lists the policies with their options and the device classes.
"$sim" --help >"$tmp/help" || fail "--help exit $?"
grep -q "^  noop " "$tmp/help" || fail "--help does not list noop"
grep -q "^hdd - " "$tmp/help" || fail "--help does not list the hdd options"
"$sim" --list-policies | grep -q "max_merge" || fail "--list-policies lacks noop's max_merge"

# A generated run with JSON and plots; policy options before the name work.
"$sim" --policy-opt max_merge=128KiB --policy noop --workload mapreduce \
	--workload-opt requests=3000 --device hdd:generic --device ssd --seed 7 \
	--json "$tmp/run.json" --plot "$tmp/plot" -q || fail "generated run exit $?"
python3 - "$tmp/run.json" <<'PY' || fail "run.json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["policy"] == "noop:max_merge=128KiB", d["config"]
assert d["config"]["seed"] == 7
assert d["requests"]["completed"] == 3000
assert d["devices"][0]["arm"]["movements"] > 0
assert d["devices"][1]["class"] == "ssd"
assert len(d["latency"]["by_size"]) == 6
PY
[ -s "$tmp/plot/completions.dat" ] && [ -s "$tmp/plot/arm_hdd0.dat" ] && [ -s "$tmp/plot/plot.gp" ] ||
	fail "--plot data missing"
if command -v gnuplot >/dev/null 2>&1; then
	[ -s "$tmp/plot/latency_cdf.png" ] && [ -s "$tmp/plot/arm_hdd0.png" ] || fail "--plot PNGs missing"
fi

if [ -n "$traces" ] && [ -d "$traces/disksim" ]; then
	IOSIG_DISKSIM_DIR=$traces/disksim "$sim" calibrate --drive hp_c2247a --check \
		--json "$tmp/cal.json" >"$tmp/cal.out" || fail "calibrate --check exit $?"
	grep -q "^hp_c2247a .* met$" "$tmp/cal.out" || fail "calibrate table: $(cat "$tmp/cal.out")"
	"$sim" --policy noop --trace "$traces/disksim/ascii.trace" --format disksim \
		--trace-device 16 --device hdd:cheetah9LP -q --json - >"$tmp/t.json" ||
		fail "ascii trace run exit $?"
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['requests']['completed'] == 7271, d['requests']" "$tmp/t.json" ||
		fail "ascii trace device filter"
fi

[ "$fails" -eq 0 ] || exit 1
echo "all command-line checks passed"
