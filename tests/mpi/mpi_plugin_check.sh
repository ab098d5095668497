#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/mpi/ckpt.c through one compiler plugin, built with mpicc (the
# compiler under test behind it) and run with 4 Open MPI ranks: the
# annotated MPI_File_open calls iosig_MPI_File_open (libiosig-mpi), rank 0
# decides once for the job (one decision record, call MPI_File_open), and
# the MPI-IO checkpoint reads back byte for byte on restart.
# usage: mpi_plugin_check.sh NAME CC PLUGIN LIBDIR SOURCE_DIR
# Exit 0 passed, 1 failed, 77 skipped (with the reason).
set -u
name=$1 cc=$2 plugin=$3 libdir=$4 top=$5
. "$top/tests/e2e/check_lib.sh"
begin_checks "mpi-$name"
command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 ||
	skip "no mpicc/mpirun (libopenmpi-dev, openmpi-bin)"
case $name in
clang*) load="-fplugin=$plugin -fpass-plugin=$plugin" ;;
*) load="-fplugin=$plugin" ;;
esac
# A sanitized libiosig needs the sanitizer runtime, linked by its compiler.
link_cc=${IOSIG_E2E_LINK_CC:-$cc}

# shellcheck disable=SC2086 # $load is one or two flags
if ! OMPI_CC=$cc mpicc $load -Wall -Wextra -Werror -I"$top/libiosig/include" -c \
	"$top/examples/mpi/ckpt.c" -o "$work/ckpt.o" 2>"$work/err"; then
	fail "mpicc ($cc) with the plugin: $(cat "$work/err")"
	finish
fi
# shellcheck disable=SC2086 # IOSIG_E2E_LDFLAGS may be several flags
if ! OMPI_CC=$link_cc mpicc "$work/ckpt.o" -o "$work/ckpt" ${IOSIG_E2E_LDFLAGS:-} -L"$libdir" \
	-liosig-mpi -liosig -Wl,-rpath,"$libdir" 2>"$work/err"; then
	fail "link with -liosig-mpi -liosig: $(cat "$work/err")"
	finish
fi
if nm "$work/ckpt.o" | grep -q " U MPI_File_open\$"; then
	fail "the annotated MPI_File_open was not replaced"
elif ! nm "$work/ckpt.o" | grep -q " U iosig_MPI_File_open\$"; then
	fail "the object does not call iosig_MPI_File_open"
else
	echo "ok: MPI_File_open -> iosig_MPI_File_open"
fi
mpi() {
	mpirun --allow-run-as-root --oversubscribe -np 4 "$@"
}
mkdir "$work/d"
if ! IOSIG_LOG=$work/log.jsonl mpi "$work/ckpt" --mpiio --dir "$work/d" --bytes 2MiB --chunk 1MiB \
	--steps 1 >"$work/out" 2>"$work/err"; then
	fail "the MPI-IO checkpoint: $(cat "$work/err")"
elif ! mpi "$work/ckpt" --mpiio --dir "$work/d" --bytes 2MiB --chunk 1MiB --restart --steps 0 \
	>"$work/out" 2>"$work/err"; then
	fail "the restart does not verify the checkpoint: $(cat "$work/err")"
else
	echo "ok: 4 ranks wrote and read back an MPI-IO checkpoint"
fi
if python3 - "$work/log.jsonl" "$work/d/ckpt-0.data" <<'PY'; then
import json, sys
log, path = sys.argv[1:]
recs = [json.loads(l) for l in open(log)]
mine = [r for r in recs if r.get("event") == "decision" and r.get("path") == path]
assert len(mine) == 1, "%d decisions for %s, expected 1 (rank 0's)" % (len(mine), path)
r = mine[0]
assert r["call"] == "MPI_File_open" and r["site"]["call"] == "MPI_File_open", r
assert r["sig"].startswith("global persist"), r["sig"]
assert r["values"] == [1048576, 8388608], r["values"]  # size_per_io, totalsize
PY
	echo "ok: one decision, by rank 0, for the job"
else
	fail "the decision log: $(cat "$work/log.jsonl")"
fi
# Link targets of redirected data files are removed with $work only when
# they live in it: remove what the decision placed elsewhere.
for f in "$work"/d/*; do
	if [ -L "$f" ]; then rm -f -- "$(readlink "$f")"; fi
done
finish
