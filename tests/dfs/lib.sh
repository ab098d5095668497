# tests/dfs/lib.sh - what the tests/dfs scripts share; sourced, never run.
#
#   fail MESSAGE              count a failure and print it
#   finish NAME               the verdict and the exit status of the script
#   decision LOG PATH KEY     KEY of the last decision record of PATH in the
#                             IOSIG_LOG file LOG ("no decision logged" if none)
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed"
		exit 1
	fi
	echo "all $1 checks passed"
	exit 0
}

decision() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
log, path, key = sys.argv[1:]
rec = None
for line in open(log):
    r = json.loads(line)
    if r.get("event") == "decision" and r.get("path") == path:
        rec = r
print(rec.get(key) if rec else "no decision logged")
PY
}
