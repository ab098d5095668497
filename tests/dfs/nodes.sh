# tests/dfs/nodes.sh - "nodes" of a cluster on one machine, for the tests
# that run inside scripts/with-glusterfs; sourced, never run.
#
# A node is a process holding its own mount and UTS namespaces: its own
# hostname, a node-local tmpfs at ROOT/scratch, and its own FUSE mounts of
# the cluster's volumes, rep2 at ROOT/shared and ec3 at ROOT/home (when
# with-glusterfs made them) - and not with-glusterfs' own mounts of them.  Every node uses the same ROOT, so paths are
# the same on all nodes, as on a real cluster; what is behind them is not.
# The nodes share the cluster's network namespace (the volumes' server is
# reached on loopback) and its PID namespace, which ends them all.
#
#   node_start NAME ROOT   starts node NAME (also its hostname); returns
#                          once its mounts answer
#   node_run NAME CMD...   runs CMD on node NAME (environment and working
#                          directory are the caller's)
#   node_stop NAME         unmounts the node's filesystems and ends it
# Needs $IOSIG_GLUSTER_LIB, $IOSIG_GLUSTER_STATE, $IOSIG_GLUSTER_HOST and a
# scratch directory $tmp of the caller.

node_start() {
	nd_name=$1
	nd_root=$2
	mkdir -p "$nd_root/scratch" "$nd_root/shared" "$nd_root/home" || return 1
	rm -f "$tmp/node-$nd_name.ready"
	mkfifo "$tmp/node-$nd_name.ready" || return 1
	unshare --mount --uts --propagation private sh -c '
		. "$IOSIG_GLUSTER_LIB"
		name=$1 root=$2 ready=$3
		# A node mounts the volumes once, at ROOT: the mounts of
		# with-glusterfs are not this node'"'"'s.
		for m in ${IOSIG_GLUSTER_REP2:-} ${IOSIG_GLUSTER_EC3:-}; do
			umount "$m" || { echo failed >"$ready"; exit 1; }
		done
		hostname "$name" &&
			mount -t tmpfs -o size=256m,mode=1777 "scratch-$name" "$root/scratch" &&
			{ [ -z "${IOSIG_GLUSTER_REP2:-}" ] ||
				gl_mount "$IOSIG_GLUSTER_STATE" "$IOSIG_GLUSTER_HOST" rep2 "$root/shared"; } &&
			{ [ -z "${IOSIG_GLUSTER_EC3:-}" ] ||
				gl_mount "$IOSIG_GLUSTER_STATE" "$IOSIG_GLUSTER_HOST" ec3 "$root/home"; } ||
			{ echo failed >"$ready"; exit 1; }
		echo ready >"$ready"
		exec sleep 1000000
	' sh "$nd_name" "$nd_root" "$tmp/node-$nd_name.ready" &
	echo $! >"$tmp/node-$nd_name.pid"
	echo "$nd_root" >"$tmp/node-$nd_name.root"
	read -r nd_state <"$tmp/node-$nd_name.ready"
	[ "$nd_state" = ready ] || { echo "node $nd_name did not start" >&2; return 1; }
}

node_run() {
	nd_name=$1
	shift
	nsenter -t "$(cat "$tmp/node-$nd_name.pid")" -m -u -w"$(pwd)" -- "$@"
}

node_stop() {
	nd_name=$1
	[ -s "$tmp/node-$nd_name.pid" ] || return 0
	nd_root=$(cat "$tmp/node-$nd_name.root")
	node_run "$nd_name" sh -c 'for d in "$@"; do umount "$d" 2>/dev/null; done' sh \
		"$nd_root/home" "$nd_root/shared" "$nd_root/scratch"
	kill "$(cat "$tmp/node-$nd_name.pid")" 2>/dev/null
	wait "$(cat "$tmp/node-$nd_name.pid")" 2>/dev/null
	rm -f "$tmp/node-$nd_name.pid"
}
