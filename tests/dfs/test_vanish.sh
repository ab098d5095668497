#!/bin/sh
# Bad conditions on a real GlusterFS volume (run by scripts/with-glusterfs):
# the volume goes away between the catalog (built at a process's first
# annotated open) and a later annotated open of the same process - its
# FUSE client killed, the mount lazily unmounted, its bricks frozen - and
# the later open falls back to the path the program asked for, with the
# reason logged, the data intact, no dangling link, and no wait beyond the
# volume's ping timeout (with-glusterfs sets 5 s).  Then, with no global
# mount at all: a `global` signature says so, and IOSIG_STRICT=1 fails the
# open with ENODEV.
# Usage: with-glusterfs --volumes rep2 -- sh test_vanish.sh BUILD_DIR
set -u
build=${1:?usage: with-glusterfs -- sh test_vanish.sh BUILD_DIR}
nodeio=$build/tests/dfs/nodeio
iosig=$build/libiosig/tools/iosig
[ -n "${IOSIG_GLUSTER_REP2:-}" ] || { echo "run this test through scripts/with-glusterfs"; exit 2; }
[ -x "$nodeio" ] || { echo "SKIP: $nodeio was not built (it needs the GCC plugin)"; exit 77; }
. "$IOSIG_GLUSTER_LIB"
tmp=$(mktemp -d /var/tmp/iosig-vanish.XXXXXX) || exit 1
. "$(dirname "$0")/lib.sh"
cleanup() {
	for b in "$IOSIG_GLUSTER_STATE"/run/vols/rep2/*.pid; do
		[ -s "$b" ] && kill -CONT "$(cat "$b")" 2>/dev/null
	done
	for m in "$tmp"/v*; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
export IOSIG_CONFIG= IOSIG_PROBE_CACHE= IOSIG_JOB_ID=job-vanish
size=$((2 * 1048576))
# Only the volume this test mounts (and unmounts) is global here.
umount "$IOSIG_GLUSTER_REP2" || exit 1

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# The pid of the FUSE client serving mount point $1.
fuse_client() {
	for p in /proc/[0-9]*; do
		tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "--volfile-id=/rep2 $1 *\$" &&
			echo "${p#/proc/}" && return 0
	done
	return 1
}

# vanish NAME HOW: mounts rep2 at $tmp/vNAME, starts nodeio writing a
# global file in $tmp/work-NAME (local disk), then makes the volume go away
# with HOW (a shell command; $mnt is the mount point) and lets nodeio write
# a second file; checks what became of it.
vanish() {
	name=$1
	how=$2
	mnt=$tmp/v$name
	work=$tmp/work-$name
	log=$tmp/$name.jsonl
	mkdir -p "$work"
	gl_mount "$IOSIG_GLUSTER_STATE" "$IOSIG_GLUSTER_HOST" rep2 "$mnt" || { fail "$name: mount"; return; }
	rm -f "$tmp/in" "$tmp/out"
	mkfifo "$tmp/in" "$tmp/out"
	IOSIG_LOG=$log "$nodeio" write-pause global "$work/one" "$work/two" $size 5 \
		<"$tmp/in" >"$tmp/out" 2>"$tmp/$name.err" &
	pid=$!
	exec 8>"$tmp/in"
	read -r line <"$tmp/out"
	[ "$line" = paused ] || fail "$name: nodeio did not pause: $(cat "$tmp/$name.err")"
	[ "$(decision "$log" "$work/one" action)" = redirected ] ||
		fail "$name: the first file was not redirected: $(cat "$log")"
	eval "$how"
	t0=$(now_ms)
	echo go >&8
	exec 8>&-
	wait $pid || fail "$name: nodeio failed: $(cat "$tmp/$name.err")"
	ms=$(($(now_ms) - t0))
	[ $ms -le 25000 ] || fail "$name: the open after the volume went away took $ms ms (ping timeout 5 s)"
	[ "$(decision "$log" "$work/two" action)" = fallback ] ||
		fail "$name: the second open did not fall back: $(tail -n 1 "$log")"
	[ -f "$work/two" ] && [ ! -L "$work/two" ] ||
		fail "$name: $work/two is not a plain file where the program asked"
	"$nodeio" check "$work/two" $size 5 || fail "$name: the second file's bytes"
	echo "$name: fell back after $ms ms: $(decision "$log" "$work/two" fallback)"
}

# The FUSE client dies: every access to the mount says ENOTCONN.
vanish killed 'kill -KILL "$(fuse_client "$mnt")"'
umount "$tmp/vkilled" 2>/dev/null

# Lazily unmounted: a descriptor still reaches the volume, the path does not.
vanish lazy 'umount -l "$mnt"'
grep -q "no longer the filesystem of the catalog" "$tmp/lazy.jsonl" ||
	fail "lazy: the reason does not say the mount went away: $(tail -n 1 "$tmp/lazy.jsonl")"

# The bricks stop answering: the client gives up after the ping timeout.
vanish frozen 'for b in "$IOSIG_GLUSTER_STATE"/run/vols/rep2/*.pid; do kill -STOP "$(cat "$b")"; done'
for b in "$IOSIG_GLUSTER_STATE"/run/vols/rep2/*.pid; do kill -CONT "$(cat "$b")"; done
umount "$tmp/vfrozen" 2>/dev/null || umount -l "$tmp/vfrozen"

# No global mount at all (unless this machine has one of its own).
if "$iosig" devices --json | python3 -c '
import json, sys
sys.exit(0 if any(m["eligible"] and m["global"]["value"] for m in json.load(sys.stdin)["mounts"]) else 1)'; then
	echo "this machine has a global mount of its own: the no-global checks are skipped"
else
	mkdir -p "$tmp/work-none"
	IOSIG_LOG=$tmp/none.jsonl "$nodeio" write global "$tmp/work-none/a" 4096 1 ||
		fail "no global mount: the open failed"
	decision "$tmp/none.jsonl" "$tmp/work-none/a" fallback |
		grep -q "the signature asks for global and no eligible mount here is shared between nodes" ||
		fail "no global mount: the reason does not say so: $(cat "$tmp/none.jsonl")"
	[ -f "$tmp/work-none/a" ] && [ ! -L "$tmp/work-none/a" ] || fail "no global mount: a is not a plain file"
	if IOSIG_STRICT=1 IOSIG_LOG=$tmp/strict.jsonl "$nodeio" write global "$tmp/work-none/b" 4096 1 \
		2>"$tmp/strict.err"; then
		fail "IOSIG_STRICT=1 and no global mount: the open succeeded"
	fi
	grep -q "No such device" "$tmp/strict.err" || fail "strict: not ENODEV: $(cat "$tmp/strict.err")"
	[ -e "$tmp/work-none/b" ] && fail "strict: the file was created"
	[ "$(decision "$tmp/strict.jsonl" "$tmp/work-none/b" action)" = strict ] ||
		fail "strict: $(cat "$tmp/strict.jsonl")"
fi

finish "vanish"
