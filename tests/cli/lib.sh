# tests/cli/lib.sh - what the CLI test scripts share; sourced, never run.
#
#   set -u
#   sub=devices                       # the subcommand under test
#   . "$(dirname "$0")/lib.sh"
#
# Takes the iosig binary from the script's first argument into $iosig, and
# empties IOSIG_PROBE_CACHE (this machine's measurements must not change
# what a test expects).  Gives $data (tests/data), $tmp (a scratch
# directory removed at exit), $failures, and:
#   fail MESSAGE              count a failure and print it
#   run ARGS...               `iosig $sub ARGS`: stdout in $tmp/out, stderr in
#                             $tmp/err, exit status in $rc
#   expect_out REGEX          stdout has a line matching the extended regex
#   status N ARGS...          exit N and nothing on stderr
#   ok ARGS...                status 0
#   bad N MESSAGE ARGS...     exit N, a stderr line starting with
#                             "iosig $sub: MESSAGE" (a fixed string), nothing
#                             on stdout
#   usage_bad MESSAGE ARGS... bad 2, and the hint "Try 'iosig $sub --help'."
#   finish                    the verdict and the exit status of the script
# $args holds the arguments of the last check, for messages.

iosig=${1:?usage: sh $(basename "$0") PATH-TO-iosig}
: "${sub:?set sub before sourcing lib.sh}"
export IOSIG_PROBE_CACHE=
data=$(cd "$(dirname "$0")/../data" && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0
args=

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

run() {
	"$iosig" "$sub" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

expect_out() {
	grep -Eq -- "$1" "$tmp/out" || fail "stdout of [$args] lacks /$1/:
$(cat "$tmp/out")"
}

status() {
	want=$1
	shift
	args="$*"
	run "$@"
	[ "$rc" -eq "$want" ] || fail "[$args] exited $rc, expected $want: $(cat "$tmp/err")"
	[ ! -s "$tmp/err" ] || fail "[$args] wrote to stderr: $(cat "$tmp/err")"
}

ok() {
	status 0 "$@"
}

bad() {
	want=$1
	msg=$2
	shift 2
	args="$*"
	run "$@"
	[ "$rc" -eq "$want" ] || fail "[$args] exited $rc, expected $want: $(cat "$tmp/err")"
	# index() == 1: the line starts with the text, taken literally.
	LINE="iosig $sub: $msg" awk 'index($0, ENVIRON["LINE"]) == 1 { found = 1 } END { exit !found }' \
		"$tmp/err" || fail "[$args] stderr lacks a line starting 'iosig $sub: $msg': $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "[$args] wrote to stdout: $(cat "$tmp/out")"
}

usage_bad() {
	bad 2 "$@"
	grep -Fxq "Try 'iosig $sub --help'." "$tmp/err" || fail "[$args] gives no hint to --help"
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed"
		exit 1
	fi
	echo "all $(basename "$0" .sh) checks passed"
	exit 0
}
