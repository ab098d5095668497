#!/bin/sh
# The annotated MPI checkpoint/restart example (examples/mpi/ckpt.c, built
# through the GCC plugin) with 4 Open MPI ranks next to real GlusterFS
# volumes (run by scripts/with-glusterfs): the checkpoints, which the
# program writes in a directory on the local disk, go to a Gluster volume
# (`global persist min_mttdl`); every rank of the job computes the same
# destination for the shared manifest, and the MPI-IO checkpoint's
# MPI_File_open is decided once, by rank 0, for all; the files read back byte for byte
# identical to a plain build's; a rank killed in the middle of a checkpoint
# leaves the previous one committed and no link a restart trips over: the
# restart verifies it and writes the next one.
# Usage: with-glusterfs -- sh test_mpi_ckpt.sh BUILD_DIR
set -u
build=${1:?usage: with-glusterfs -- sh test_mpi_ckpt.sh BUILD_DIR}
ckpt=$build/examples/mpi/ckpt
ckpt_iosig=$build/examples/mpi/ckpt-iosig
[ -n "${IOSIG_GLUSTER_REP2:-}" ] || { echo "run this test through scripts/with-glusterfs"; exit 2; }
[ -x "$ckpt_iosig" ] || { echo "SKIP: $ckpt_iosig was not built (MPI and the GCC plugin)"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun (openmpi-bin)"; exit 77; }
tmp=$(mktemp -d /var/tmp/iosig-mpi.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
export IOSIG_CONFIG= IOSIG_PROBE_CACHE=
mpi() {
	mpirun --allow-run-as-root --oversubscribe -np 4 "$@"
}
args="--bytes 8MiB --chunk 1MiB"

for io in posix mpiio; do
	flag=
	[ $io = mpiio ] && flag=--mpiio
	plain=$tmp/plain-$io
	dir=$tmp/iosig-$io
	log=$tmp/$io.jsonl
	mkdir -p "$plain" "$dir"
	mpi "$ckpt" --dir "$plain" $args --steps 2 $flag >/dev/null 2>"$tmp/err" ||
		fail "$io: plain run: $(cat "$tmp/err")"
	IOSIG_LOG=$log mpi "$ckpt_iosig" --dir "$dir" $args --steps 2 $flag >/dev/null 2>"$tmp/err" ||
		fail "$io: annotated run: $(cat "$tmp/err")"
	python3 - "$log" "$dir" "$IOSIG_GLUSTER_REP2" "$IOSIG_GLUSTER_EC3" "$io" <<'PY' ||
import json, os, sys
log, d, rep2, ec3, io = sys.argv[1:]
recs = [json.loads(l) for l in open(log)]
dec = [r for r in recs if r.get("event") == "decision" and r["path"].startswith(d + "/")]
ok = True
def bad(msg):
    global ok
    print(msg); ok = False
names = ["ckpt-%d.%s" % (s, w) for s in (0, 1)
         for w in (["0", "1", "2", "3"] if io == "posix" else ["data"]) + ["manifest"]]
for name in names:
    path = d + "/" + name
    mine = [r for r in dec if r["path"] == path]
    # MPI_File_open: rank 0 decides for all, once.
    want = 4 if name.endswith("manifest") else 1
    if name.endswith("data") and any(r["call"] != "MPI_File_open" for r in mine):
        bad("%s: decided by %s" % (name, [r["call"] for r in mine]))
    if len(mine) != want:
        bad("%s: %d decisions, expected %d" % (name, len(mine), want)); continue
    # One rank creates the data file and the link; a rank that comes
    # later finds the link and opens through it; ranks that race join
    # the same data file.
    creators = [r for r in mine if r["action"] in ("redirected", "prepared")]
    if not creators:
        bad("%s: nobody redirected it: %s" % (name, [r["action"] for r in mine]))
    for r in mine:
        if r["action"] not in ("redirected", "prepared", "existing") or (
                r in creators and r["chosen"] not in (rep2, ec3)):
            bad("%s: %s on %s: %s" % (name, r["action"], r["chosen"], r["fallback"]))
    targets = {r["data_path"] for r in creators}
    if len(targets) != 1:
        bad("%s: the ranks chose different destinations: %s" % (name, targets)); continue
    t = targets.pop()
    if not (t and os.path.basename(t).startswith("G-") and os.readlink(path) == t):
        bad("%s: links to %s, decided %s" % (name, os.readlink(path), t))
    jobs = {r["job"] for r in creators}
    if len(jobs) != 1 or None in jobs:
        bad("%s: job identities %s" % (name, jobs))
sys.exit(0 if ok else 1)
PY
		fail "$io: the decisions (see above)"
	for f in "$plain"/ckpt-*; do
		cmp "$f" "$dir/$(basename "$f")" || fail "$io: $(basename "$f") differs from the plain build's"
	done
	# Rank 1 dies in the middle of checkpoint 2.
	if IOSIG_LOG=$log mpi "$ckpt_iosig" --dir "$dir" $args --restart --steps 1 $flag \
		--die-rank 1 --die-after 3MiB >/dev/null 2>"$tmp/err"; then
		fail "$io: the job with a killed rank succeeded"
	fi
	[ "$(cat "$dir/latest")" = 1 ] || fail "$io: the killed checkpoint was committed"
	IOSIG_LOG=$log mpi "$ckpt_iosig" --dir "$dir" $args --restart --steps 1 $flag >"$tmp/out" 2>"$tmp/err" ||
		fail "$io: restart after the kill: $(cat "$tmp/err")"
	grep -q "restarted, 1 checkpoint(s), last 2" "$tmp/out" || fail "$io: restart: $(cat "$tmp/out")"
	IOSIG_LOG=$log mpi "$ckpt_iosig" --dir "$dir" $args --restart --steps 0 $flag >/dev/null 2>"$tmp/err" ||
		fail "$io: checkpoint 2 does not verify: $(cat "$tmp/err")"
	mpi "$ckpt" --dir "$plain" $args --restart --steps 1 $flag >/dev/null 2>"$tmp/err" ||
		fail "$io: plain restart: $(cat "$tmp/err")"
	for f in "$plain"/ckpt-2.*; do
		cmp "$f" "$dir/$(basename "$f")" || fail "$io: after the kill, $(basename "$f") differs"
	done
	for f in "$dir"/ckpt-*; do
		[ -e "$f" ] || fail "$io: $f is a dangling link"
	done
done

finish "MPI checkpoint"
