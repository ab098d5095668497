#!/bin/sh
# bench_mpi_ckpt.sh - checkpoint write time of examples/mpi/ckpt (4 ranks x
# 256 MiB by default), with and without pragmas, on a GlusterFS replica 2
# volume and on the local disk, in the style of the IOSIG paper's Sect. 7
# tables; and what IOSIG adds to a collective MPI_File_open
# (bench_mpi_open), on the local disk (no global mount: decision, then the
# plain open) and redirected to the Gluster volume.  Everything runs inside
# scripts/with-glusterfs (its own glusterd, stopped at the end; root only).
# Prints one JSON object.
#
# Usage: bench_mpi_ckpt.sh BUILD_DIR [--bytes B] [--ranks N] [--repeat R] [--rounds N]
#   (defaults 256MiB, 4, 3, 100); runs on the local disk under /var/tmp.
#
# Rows ("where the program writes" / "what the pragmas do"):
#   local-plain      the program's directory on the local disk, no pragmas
#   local-pragmas    the same directory, pragmas: `global` sends the files to
#                    the Gluster volume (the only global mount), links stay
#   gluster-plain    the program's directory on the Gluster volume, no pragmas
#   gluster-pragmas  the same, pragmas: the chosen mount is the directory's
#                    own, so the files are created there directly
# each for POSIX files (a file per rank + a shared manifest) and for MPI-IO
# (one shared file).  The time is the slowest rank's, from the barrier
# before the opens to the barrier after every rank's fsync, median of R.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
if [ "${1:-}" != --inside ]; then
	build=$(cd "${1:?usage: bench_mpi_ckpt.sh BUILD_DIR [--bytes B] [--ranks N] [--repeat R] [--rounds N]}" && pwd)
	shift
	exec "$top/scripts/with-glusterfs" --volumes rep2 -- sh "$0" --inside "$build" "$@"
fi
shift
build=$1
shift
bytes=256MiB ranks=4 repeat=3 rounds=100
while [ $# -gt 0 ]; do
	case $1 in
	--bytes) bytes=$2; shift 2 ;;
	--ranks) ranks=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	*) echo "bench_mpi_ckpt: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
ckpt=$build/examples/mpi/ckpt
ckpt_iosig=$build/examples/mpi/ckpt-iosig
open_bench=$build/tests/bench/bench_mpi_open
for p in "$ckpt" "$ckpt_iosig" "$open_bench"; do
	[ -x "$p" ] || { echo "bench_mpi_ckpt: $p is missing (MPI and the GCC plugin)" >&2; exit 1; }
done
export IOSIG_CONFIG= IOSIG_PROBE_CACHE=
local=$(mktemp -d /var/tmp/iosig-bench-ckpt.XXXXXX)
gluster=$IOSIG_GLUSTER_REP2/bench
mkdir -p "$gluster"
trap 'rm -rf "$local" "$gluster"' EXIT
mpi() {
	mpirun --allow-run-as-root --oversubscribe -np "$ranks" "$@"
}
# Removes DIR's files and, for links, their data.
clean() {
	for f in "$1"/* "$1"/.latest.tmp; do
		[ -L "$f" ] && rm -f -- "$(readlink "$f")"
		rm -f -- "$f"
	done
}
results=$(mktemp)
for io in posix mpiio; do
	flag=
	[ $io = mpiio ] && flag=--mpiio
	for where in local gluster; do
		dir=$local
		[ $where = gluster ] && dir=$gluster
		for variant in plain pragmas; do
			prog=$ckpt
			[ $variant = pragmas ] && prog=$ckpt_iosig
			i=0
			while [ $i -lt "$repeat" ]; do
				clean "$dir"
				sync
				mpi "$prog" --dir "$dir" --bytes "$bytes" --chunk 4MiB --steps 1 --json $flag |
					tail -n 1 | sed "s/^/$io $where-$variant /" >>"$results"
				i=$((i + 1))
			done
			clean "$dir"
		done
	done
done
# Redirected to the Gluster volume, against plain opens on that volume.
open_gluster=$(mpi "$open_bench" --dir "$local" --plain-dir "$gluster" --rounds "$rounds" --sig \
	"global persist sequential_access size_per_io(\$0) totalsize(\$1)" | tail -n 1)
clean "$local"
clean "$gluster"
# The local disk has no global mount but the Gluster volume: for the
# fallback figure, a signature nothing satisfies here.
open_fallback=$(mpi "$open_bench" --dir "$local" --rounds "$rounds" --sig \
	"global persist min_mttdl(1000000000*y) size_per_io(\$0) totalsize(\$1)" | tail -n 1)
clean "$local"
python3 - "$results" "$bytes" "$ranks" "$repeat" "$open_gluster" "$open_fallback" <<'PY'
import json, statistics, sys
results, size, ranks, repeat, og, of = sys.argv[1:]
rows = {}
for line in open(results):
    io, row, js = line.split(" ", 2)
    rows.setdefault(io, {}).setdefault(row, []).append(json.loads(js)["write_seconds"])
out = {"bench": "mpi_ckpt", "ranks": int(ranks), "bytes_per_rank": size, "repeat": int(repeat),
       "write_seconds": {}, "ratio_pragmas_to_plain": {}}
for io, r in rows.items():
    med = {k: round(statistics.median(v), 3) for k, v in r.items()}
    out["write_seconds"][io] = med
    out["ratio_pragmas_to_plain"][io] = {
        "local dir (pragmas place it on gluster) vs local": round(med["local-pragmas"] / med["local-plain"], 3),
        "local dir (pragmas place it on gluster) vs gluster dir": round(med["local-pragmas"] / med["gluster-plain"], 3),
        "gluster dir vs gluster dir": round(med["gluster-pragmas"] / med["gluster-plain"], 3),
    }
out["mpi_file_open_redirected"] = json.loads(og)
out["mpi_file_open_fallback"] = json.loads(of)
print(json.dumps(out, indent=1))
PY
rm -f "$results"
