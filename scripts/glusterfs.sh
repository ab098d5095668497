# scripts/glusterfs.sh - GlusterFS volumes for IOSIG's tests, benchmarks, the
# demo and setup-test-mounts; sourced, never run.  POSIX sh.
#
# Everything lives below one state directory STATE: glusterd's working
# directory, its run directory (pid files, sockets), logs and bricks.  A
# glusterd started here is stopped with gl_stop STATE (pid files), never
# left to anyone's memory.  glusterd and its brick processes run in a
# private mount namespace whose /var/lib/glusterd, /var/run/gluster and
# /var/log/glusterfs are STATE's own, so they write nothing to the
# machine's directories and do not meet another glusterd's files.  The
# network is the caller's: scripts/with-glusterfs runs all of this in a
# private network namespace (loopback only, port 24007 free); in the
# machine's own namespace (setup-test-mounts) glusterd listens on
# 127.0.0.1 and port 24007 must be free.
#
#   gl_unavailable              prints why GlusterFS cannot run here (not
#                               root, a missing program, no /dev/fuse) and
#                               returns 0; returns 1 when it can run
#   gl_start STATE HOST         starts glusterd for STATE, bricks named HOST
#                               (a name of this machine that is not
#                               "localhost"); waits until it answers
#   gl_cli STATE ARGS...        the gluster CLI on STATE's glusterd
#   gl_volume STATE HOST VOL TYPE...  creates and starts VOL with bricks in
#                               STATE/bricks: TYPE is "replica N" or
#                               "disperse N redundancy R" (N bricks); the
#                               client gives up on a brick that does not
#                               answer after GL_PING_TIMEOUT s (default 5)
#   gl_mount STATE HOST VOL DIR mounts VOL at DIR through FUSE and waits
#                               until it answers; remembered for gl_stop
#   gl_stop STATE               unmounts what gl_mount mounted, stops the
#                               volumes, glusterd and every brick and
#                               self-heal process of STATE (pid files)
# Functions print their errors on stderr and return non-zero on failure.
# A script with `set -e` calls them in a condition or with `|| ...`: their
# cleanup steps may fail one by one and must go on.

gl_unavailable() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "GlusterFS needs root (glusterd, FUSE mounts)"
		return 0
	fi
	for gl_p in glusterd gluster glusterfs mount.glusterfs unshare; do
		if ! PATH="$PATH:/usr/sbin:/sbin" command -v "$gl_p" >/dev/null 2>&1; then
			echo "$gl_p not found (glusterfs-server, glusterfs-client: scripts/install-deps)"
			return 0
		fi
	done
	if [ ! -c /dev/fuse ]; then
		echo "no /dev/fuse: FUSE is not available"
		return 0
	fi
	return 1
}

gl_cli() {
	gl_s=$1
	shift
	gluster --mode=script --glusterd-sock="$gl_s/run/glusterd.socket" \
		--log-file="$gl_s/log/cli.log" "$@"
}

gl_start() {
	gl_s=$1
	gl_host=$2
	PATH="$PATH:/usr/sbin:/sbin"
	mkdir -p "$gl_s/lib" "$gl_s/run" "$gl_s/log" "$gl_s/bricks" "$gl_s/var-run" \
		"$gl_s/var-log" "$gl_s/var-lib" || return 1
	if [ -s "$gl_s/run/glusterd.pid" ] && kill -0 "$(cat "$gl_s/run/glusterd.pid")" 2>/dev/null; then
		echo "glusterd of $gl_s is already running (pid $(cat "$gl_s/run/glusterd.pid"))" >&2
		return 1
	fi
	cat >"$gl_s/glusterd.vol" <<-EOF
	volume management
	    type mgmt/glusterd
	    option working-directory $gl_s/lib
	    option run-directory $gl_s/run
	    option glusterd-sockfile $gl_s/run/glusterd.socket
	    option transport-type socket
	    option transport.socket.bind-address 127.0.0.1
	    option transport.socket.listen-port 24007
	    option ping-timeout 0
	    option event-threads 1
	end-volume
	EOF
	# The paths glusterd and its bricks use whatever the configuration
	# says are STATE's own in a mount namespace of theirs; it lives as
	# long as they do.
	if ! unshare --mount --propagation private sh -c '
		s=$1
		mount --bind "$s/var-run" /run/gluster 2>/dev/null ||
			{ mkdir -p /run/gluster && mount --bind "$s/var-run" /run/gluster; } || exit 1
		mount --bind "$s/var-log" /var/log/glusterfs 2>/dev/null ||
			{ mkdir -p /var/log/glusterfs && mount --bind "$s/var-log" /var/log/glusterfs; } || exit 1
		mount --bind "$s/var-lib" /var/lib/glusterd 2>/dev/null ||
			{ mkdir -p /var/lib/glusterd && mount --bind "$s/var-lib" /var/lib/glusterd; } || exit 1
		exec glusterd -f "$s/glusterd.vol" -p "$s/run/glusterd.pid" -l "$s/log/glusterd.log"
	' sh "$gl_s" >"$gl_s/log/glusterd.out" 2>&1; then
		echo "glusterd did not start: $(tail -n 3 "$gl_s/log/glusterd.out" "$gl_s/log/glusterd.log" 2>/dev/null)" >&2
		return 1
	fi
	gl_i=0
	until gl_cli "$gl_s" pool list >/dev/null 2>&1; do
		gl_i=$((gl_i + 1))
		if [ $gl_i -gt 60 ]; then
			echo "glusterd did not answer within 30 s: $(grep -E '\] [EC] \[' "$gl_s/log/glusterd.log" 2>/dev/null | tail -n 3)" >&2
			gl_stop "$gl_s"
			return 1
		fi
		sleep 0.5
	done
	echo "$gl_host" >"$gl_s/host"
}

gl_volume() {
	gl_s=$1
	gl_host=$2
	gl_vol=$3
	shift 3
	case $1 in
	replica) gl_n=$2 ;;
	disperse) gl_n=$2 ;;
	*)
		echo "gl_volume: unknown volume type '$1' (replica N or disperse N redundancy R)" >&2
		return 2
		;;
	esac
	gl_bricks=""
	gl_i=0
	while [ $gl_i -lt "$gl_n" ]; do
		mkdir -p "$gl_s/bricks/$gl_vol-$gl_i" || return 1
		gl_bricks="$gl_bricks $gl_host:$gl_s/bricks/$gl_vol-$gl_i"
		gl_i=$((gl_i + 1))
	done
	# force: the bricks are directories on the root filesystem.
	# shellcheck disable=SC2086
	gl_cli "$gl_s" volume create "$gl_vol" "$@" $gl_bricks force >"$gl_s/log/create-$gl_vol.out" 2>&1 &&
		gl_cli "$gl_s" volume set "$gl_vol" network.ping-timeout "${GL_PING_TIMEOUT:-5}" \
			>>"$gl_s/log/create-$gl_vol.out" 2>&1 &&
		gl_cli "$gl_s" volume start "$gl_vol" >>"$gl_s/log/create-$gl_vol.out" 2>&1 || {
		echo "cannot create volume $gl_vol ($*): $(cat "$gl_s/log/create-$gl_vol.out")" >&2
		return 1
	}
}

gl_mount() {
	gl_s=$1
	gl_host=$2
	gl_vol=$3
	gl_dir=$4
	mkdir -p "$gl_dir" || return 1
	if ! mount -t glusterfs -o "log-file=$gl_s/log/mount-$gl_vol.log" "$gl_host:/$gl_vol" "$gl_dir" \
		>"$gl_s/log/mount-$gl_vol.out" 2>&1; then
		echo "cannot mount $gl_host:/$gl_vol at $gl_dir: $(cat "$gl_s/log/mount-$gl_vol.out") $(grep -E '\] [EC] \[' "$gl_s/log/mount-$gl_vol.log" 2>/dev/null | tail -n 2)" >&2
		return 1
	fi
	echo "$gl_dir" >>"$gl_s/mounts"
	# The bricks may still be connecting: wait until a file can be made.
	gl_i=0
	until touch "$gl_dir/.iosig-ready" 2>/dev/null; do
		gl_i=$((gl_i + 1))
		if [ $gl_i -gt 60 ]; then
			echo "$gl_host:/$gl_vol at $gl_dir does not accept files after 30 s" >&2
			return 1
		fi
		sleep 0.5
	done
	rm -f "$gl_dir/.iosig-ready"
}

# Kills the process whose pid is in file $1 - only if its command line
# names STATE $2, so that a stale pid file never hits a process that reused
# the number - and waits (5 s) until it is gone.
gl_kill_pidfile() {
	[ -s "$1" ] || return 0
	gl_pid=$(cat "$1")
	case $gl_pid in '' | *[!0-9]*) return 0 ;; esac
	{ tr '\0' ' ' <"/proc/$gl_pid/cmdline"; } 2>/dev/null | grep -qF -- "$2" || return 0
	kill "$gl_pid" 2>/dev/null || return 0
	gl_i=0
	while kill -0 "$gl_pid" 2>/dev/null && [ $gl_i -lt 50 ]; do
		sleep 0.1
		gl_i=$((gl_i + 1))
	done
	kill -KILL "$gl_pid" 2>/dev/null
	return 0
}

gl_stop() {
	gl_s=$1
	if [ -f "$gl_s/mounts" ]; then
		# Newest first.
		for gl_dir in $(sed '1!G;h;$!d' "$gl_s/mounts"); do
			umount "$gl_dir" 2>/dev/null || umount -l "$gl_dir" 2>/dev/null
		done
		rm -f "$gl_s/mounts"
	fi
	if [ -s "$gl_s/run/glusterd.pid" ] && kill -0 "$(cat "$gl_s/run/glusterd.pid")" 2>/dev/null; then
		for gl_vol in $(gl_cli "$gl_s" volume list 2>/dev/null); do
			gl_cli "$gl_s" volume stop "$gl_vol" force >/dev/null 2>&1
		done
	fi
	gl_kill_pidfile "$gl_s/run/glusterd.pid" "$gl_s"
	# Bricks and self-heal daemons a stopped volume or a dead glusterd left.
	if [ -d "$gl_s/run" ]; then
		find "$gl_s/run" -name '*.pid' ! -name glusterd.pid 2>/dev/null | while read -r gl_f; do
			gl_kill_pidfile "$gl_f" "$gl_s"
		done
	fi
	rm -f "$gl_s/run/glusterd.pid"
}
