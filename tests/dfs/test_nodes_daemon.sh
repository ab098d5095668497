#!/bin/sh
# iosigd on two nodes of one job (tests/dfs/nodes.sh), run by
# scripts/with-glusterfs; docs/multinode.md, "iosigd on many nodes".
# Each node runs its own daemon at the same socket path in its node-local
# tmpfs (as /run is on a real node), and the job's processes
# (tests/dfs/nodeio, annotated opens) find it through IOSIG_DAEMON_SOCKET.
# Checked, from the daemons' own status (`iosig status --json`):
#  - a `local` file written on node A is scheduled by node A's daemon (its
#    bytes are counted on the node's tmpfs) and by no other: node B's daemon
#    never sees a client or a byte of node A's;
#  - a `global` file on the network filesystem is passed through by default:
#    node A's daemon refuses the descriptor (counted as passed through, no
#    byte scheduled), the program writes it itself, and node B finds it
#    complete at the same path;
#  - with `schedule: true` for that mount the daemon schedules the global
#    file's writes (a home-device policy), and node B still finds it
#    complete once node A's process has exited.
# Usage: with-glusterfs --volumes rep2 -- sh test_nodes_daemon.sh BUILD_DIR
set -u
build=${1:?usage: with-glusterfs -- sh test_nodes_daemon.sh BUILD_DIR}
nodeio=$build/tests/dfs/nodeio
iosigd=$build/iosigd/iosigd
iosig=$build/libiosig/tools/iosig
[ -n "${IOSIG_GLUSTER_REP2:-}" ] || { echo "run this test through scripts/with-glusterfs"; exit 2; }
[ -x "$nodeio" ] || { echo "SKIP: $nodeio was not built (it needs the GCC plugin)"; exit 77; }
[ -x "$iosigd" ] || { echo "SKIP: $iosigd was not built"; exit 77; }
tmp=$(mktemp -d /var/tmp/iosig-nodesd.XXXXXX) || exit 1
. "$(dirname "$0")/nodes.sh"
. "$(dirname "$0")/lib.sh"
cleanup() {
	for n in node-a node-b; do
		[ -s "$tmp/$n.daemon" ] && kill -9 "$(cat "$tmp/$n.daemon")" 2>/dev/null
	done
	node_stop node-a
	node_stop node-b
	rm -rf "$tmp"
}
trap cleanup EXIT
export IOSIG_CONFIG= IOSIG_PROBE_CACHE= IOSIG_JOB_ID=job-77
root=$tmp/cluster
sock=$root/scratch/iosigd.sock
export IOSIG_DAEMON_SOCKET=$sock
node_start node-a "$root" || exit 1
node_start node-b "$root" || exit 1

# daemon_start NODE [CONFIG]: iosigd in the foreground on NODE, at $sock
# (node-local); returns once it answers.
daemon_start() {
	cfg=${2:-}
	# nsenter itself (not node_run's subshell) execs the daemon: $! is it.
	nsenter -t "$(cat "$tmp/node-$1.pid")" -m -u -w"$(pwd)" -- "$iosigd" --foreground --socket "$sock" \
		${cfg:+--config "$cfg"} >"$tmp/$1.log" 2>&1 &
	echo $! >"$tmp/$1.daemon"
	for _ in $(seq 100); do
		node_run "$1" test -S "$sock" && return 0
		sleep 0.1
	done
	echo "iosigd did not start on $1: $(cat "$tmp/$1.log")"
	return 1
}

daemon_stop() {
	kill -TERM "$(cat "$tmp/$1.daemon")" && wait "$(cat "$tmp/$1.daemon")" ||
		fail "$1's iosigd did not exit cleanly on SIGTERM: $(cat "$tmp/$1.log")"
	rm -f "$tmp/$1.daemon"
	node_run "$1" rm -f "$sock"
}

# status NODE EXPR: EXPR of `iosig status --json` (`s`) of NODE's daemon;
# dev(MOUNT) is that mount's entry of s["devices"].
status() {
	node_run "$1" "$iosig" status --json --socket "$sock" | python3 -c '
import json, sys
s = json.load(sys.stdin)
dev = lambda mnt: next((d for d in s["devices"] if d["mount"] == mnt), {})
print(eval(sys.argv[1]))' "$2"
}

daemon_start node-a || exit 1
daemon_start node-b || exit 1
[ "$(status node-a 's["daemon"]["pid"]')" != "$(status node-b 's["daemon"]["pid"]')" ] ||
	fail "both nodes reach the same daemon"

size=$((4 * 1048576))
node_run node-a mkdir -p "$root/scratch/job" "$root/shared/job"

# 1. A local file: node A's daemon schedules it, node B's never sees it.
IOSIG_LOG=$tmp/a1.jsonl node_run node-a "$nodeio" write local "$root/scratch/job/tmp.dat" $size 1 ||
	fail "node-a: write local tmp.dat"
[ "$(decision "$tmp/a1.jsonl" "$root/scratch/job/tmp.dat" chosen)" = "$root/scratch" ] ||
	fail "tmp.dat did not stay on node-a's tmpfs: $(cat "$tmp/a1.jsonl")"
node_run node-a "$nodeio" check "$root/scratch/job/tmp.dat" $size 1 || fail "node-a: tmp.dat"
got=$(status node-a 'dev("'"$root/scratch"'").get("bytes_written", 0)' 2>&1)
[ "$got" -ge "$size" ] 2>/dev/null ||
	fail "node-a's daemon did not schedule tmp.dat's $size bytes (bytes_written $got): $(cat "$tmp/node-a.log")"
[ "$(status node-b 'sum(d["bytes_written"] + d["passed_through"] for d in s["devices"])')" = 0 ] ||
	fail "node-b's daemon saw node-a's I/O: $(status node-b 's')"
[ "$(status node-b 's["daemon"]["operations"]')" = 0 ] || fail "node-b's daemon did operations"

# 2. A global file on the network filesystem: passed through by default.
out=$root/shared/job/out.dat
IOSIG_LOG=$tmp/a2.jsonl node_run node-a "$nodeio" write global "$out" $size 2 ||
	fail "node-a: write global out.dat"
[ "$(status node-a 'dev("'"$root/shared"'").get("passthrough")')" = True ] ||
	fail "node-a's daemon does not pass $root/shared through: $(status node-a 's["devices"]')"
[ "$(status node-a 'dev("'"$root/shared"'").get("passed_through", 0)')" -ge 1 ] ||
	fail "node-a's daemon was not offered out.dat's descriptor"
[ "$(status node-a 'dev("'"$root/shared"'").get("bytes_written", 0)')" = 0 ] ||
	fail "node-a's daemon scheduled a passed-through global file"
node_run node-b "$nodeio" check "$out" $size 2 ||
	fail "node-b does not find node-a's global out.dat complete"
[ "$(status node-b 'sum(d["passed_through"] for d in s["devices"])')" = 0 ] ||
	fail "node-b's daemon was offered node-a's descriptor"

# 3. schedule: true - the global file's writes go through node A's daemon.
daemon_stop node-a
node_run node-a sh -c "cat >'$root/scratch/iosigd.yaml'" <<EOF
daemon:
  devices:
    "$root/shared": { policy: burst, schedule: true }
EOF
daemon_start node-a "$root/scratch/iosigd.yaml" || exit 1
out3=$root/shared/job/sched.dat
IOSIG_LOG=$tmp/a3.jsonl node_run node-a "$nodeio" write global "$out3" $size 3 ||
	fail "node-a: write global sched.dat"
[ "$(status node-a 'dev("'"$root/shared"'").get("policy")')" = burst ] ||
	fail "node-a's daemon does not run burst on $root/shared: $(status node-a 's["devices"]')"
[ "$(status node-a 'dev("'"$root/shared"'").get("bytes_written", 0)')" -ge "$size" ] ||
	fail "node-a's daemon did not schedule sched.dat: $(status node-a 's["devices"]')"
node_run node-b "$nodeio" check "$out3" $size 3 ||
	fail "node-b does not find the scheduled global sched.dat complete"
[ "$(status node-b 's["daemon"]["operations"]')" = 0 ] || fail "node-b's daemon did operations"

daemon_stop node-a
daemon_stop node-b
finish "nodes-daemon"
