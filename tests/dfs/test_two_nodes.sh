#!/bin/sh
# Two nodes of one job on one machine (tests/dfs/nodes.sh: separate mount
# and UTS namespaces, each with its own node-local tmpfs and its own FUSE
# mounts of the cluster's GlusterFS volumes), run by scripts/with-glusterfs.
# The job's processes run the annotated tests/dfs/nodeio with one job
# identity; checked byte for byte:
#  - a `global` file created by node A in the job's shared directory (home,
#    on ec3) is placed on rep2 (the volume that satisfies its MTTDL) and
#    found complete at the same path by a plain open on node B;
#  - a `global` file at a node-local path: node B's annotated open of the
#    same path joins the same data file - the deterministic destination
#    name (job identity + path) is the same on both nodes; another job's
#    identity gives another name;
#  - a `local` scratch file stays in node A's tmpfs: node B does not see it,
#    and nothing of it reaches the shared volume.
# Usage: with-glusterfs -- sh test_two_nodes.sh BUILD_DIR
set -u
build=${1:?usage: with-glusterfs -- sh test_two_nodes.sh BUILD_DIR}
nodeio=$build/tests/dfs/nodeio
[ -n "${IOSIG_GLUSTER_REP2:-}" ] && [ -n "${IOSIG_GLUSTER_EC3:-}" ] ||
	{ echo "run this test through scripts/with-glusterfs"; exit 2; }
[ -x "$nodeio" ] || { echo "SKIP: $nodeio was not built (it needs the GCC plugin)"; exit 77; }
tmp=$(mktemp -d /var/tmp/iosig-nodes.XXXXXX) || exit 1
. "$(dirname "$0")/nodes.sh"
. "$(dirname "$0")/lib.sh"
cleanup() {
	node_stop node-a
	node_stop node-b
	rm -rf "$tmp"
}
trap cleanup EXIT
export IOSIG_CONFIG= IOSIG_PROBE_CACHE= IOSIG_JOB_ID=job-4242
root=$tmp/cluster
node_start node-a "$root" || exit 1
node_start node-b "$root" || exit 1

# The nodes: their own hostnames and their own tmpfs at the same path.
[ "$(node_run node-a hostname)" = node-a ] || fail "node-a's hostname is $(node_run node-a hostname)"
[ "$(node_run node-b hostname)" = node-b ] || fail "node-b's hostname is $(node_run node-b hostname)"
node_run node-a sh -c "echo a >$root/scratch/marker"
node_run node-b test -e "$root/scratch/marker" && fail "node-b sees node-a's scratch"
node_run node-b test -e "$root/shared/.." || fail "node-b has no shared mount"

size=$((8 * 1048576))
shared=$root/shared/iosig-0

# 1. A global file in the job's shared directory.
node_run node-a mkdir -p "$root/home/job"
IOSIG_LOG=$tmp/a1.jsonl node_run node-a "$nodeio" write global "$root/home/job/out.dat" $size 1 ||
	fail "node-a: write global out.dat"
[ "$(decision "$tmp/a1.jsonl" "$root/home/job/out.dat" action)" = redirected ] ||
	fail "out.dat was not redirected: $(cat "$tmp/a1.jsonl")"
[ "$(decision "$tmp/a1.jsonl" "$root/home/job/out.dat" chosen)" = "$root/shared" ] ||
	fail "out.dat did not go to rep2 ($root/shared): $(cat "$tmp/a1.jsonl")"
node_run node-b "$nodeio" check "$root/home/job/out.dat" $size 1 ||
	fail "node-b does not find node-a's out.dat complete at the same path"
ta=$(node_run node-a readlink "$root/home/job/out.dat")
tb=$(node_run node-b readlink "$root/home/job/out.dat")
[ -n "$ta" ] && [ "$ta" = "$tb" ] || fail "out.dat links to '$ta' on node-a, '$tb' on node-b"
case $ta in
"$shared"/G-*-out.dat) ;;
*) fail "out.dat's data is not a global name in $shared: $ta" ;;
esac
[ "$(node_run node-a sha256sum "$ta" | cut -d' ' -f1)" = \
	"$(node_run node-b sha256sum "$ta" | cut -d' ' -f1)" ] || fail "node-a and node-b read different bytes of $ta"

# 2. A global file at a node-local path: the same destination on both.
node_run node-a mkdir -p "$root/scratch/job"
node_run node-b mkdir -p "$root/scratch/job"
ckpt=$root/scratch/job/ckpt
IOSIG_LOG=$tmp/a2.jsonl node_run node-a "$nodeio" write global "$ckpt" $size 2 ||
	fail "node-a: write global ckpt"
node_run node-b test -e "$ckpt" && fail "node-b sees node-a's link in its own scratch"
IOSIG_LOG=$tmp/b2.jsonl node_run node-b "$nodeio" join global "$ckpt" $size 2 ||
	fail "node-b: the annotated open of $ckpt does not find node-a's data complete"
da=$(decision "$tmp/a2.jsonl" "$ckpt" data_path)
db=$(decision "$tmp/b2.jsonl" "$ckpt" data_path)
[ "$da" = "$db" ] || fail "the destination differs: node-a $da, node-b $db"
[ "$(decision "$tmp/a2.jsonl" "$ckpt" job)" = job-4242 ] || fail "node-a's decision has no job identity"
[ "$(node_run node-a readlink "$ckpt")" = "$(node_run node-b readlink "$ckpt")" ] ||
	fail "ckpt links differ between the nodes"
case $da in "$shared"/G-*-ckpt) ;; *) fail "ckpt's data is not a global name in $shared: $da" ;; esac
# Another job's rank does not join this job's file (node-b's link of this
# job removed first: the path is free again on node-b).
node_run node-b rm -f "$ckpt"
IOSIG_JOB_ID=job-7 IOSIG_LOG=$tmp/b3.jsonl node_run node-b "$nodeio" join global "$ckpt" $size 2 \
	2>/dev/null && fail "a rank of another job found this job's checkpoint"
d7=$(decision "$tmp/b3.jsonl" "$ckpt" data_path)
[ -n "$d7" ] && [ "$d7" != "$da" ] || fail "another job got the same destination: $d7"
node_run node-a "$nodeio" check "$ckpt" $size 2 || fail "node-a's ckpt changed"

# 3. A local scratch file stays on node-a.
IOSIG_LOG=$tmp/a4.jsonl node_run node-a "$nodeio" write local "$root/scratch/job/tmp.dat" 1048576 3 ||
	fail "node-a: write local tmp.dat"
[ "$(decision "$tmp/a4.jsonl" "$root/scratch/job/tmp.dat" chosen)" = "$root/scratch" ] ||
	fail "tmp.dat did not stay on the node's tmpfs: $(cat "$tmp/a4.jsonl")"
node_run node-a "$nodeio" check "$root/scratch/job/tmp.dat" 1048576 3 || fail "node-a: tmp.dat"
node_run node-b test -e "$root/scratch/job/tmp.dat" && fail "node-b sees node-a's local tmp.dat"
node_run node-b sh -c "ls '$shared' | grep -q tmp.dat" && fail "tmp.dat reached the shared volume"

finish "two-node"
