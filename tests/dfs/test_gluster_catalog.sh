#!/bin/sh
# The catalog on real GlusterFS volumes (run by scripts/with-glusterfs):
# the replica 2 and the disperse 3 = 2 + 1 volume are discovered as
# network, global, with the layout read from the mounted volume and said to
# come from there (--sources, --json), for root and for an unprivileged
# user alike; their MTTDL is what `iosig mttdl` computes for that layout;
# a `global` signature qualifies only them.
# Usage: with-glusterfs -- sh test_gluster_catalog.sh BUILD_DIR
set -u
build=${1:?usage: with-glusterfs -- sh test_gluster_catalog.sh BUILD_DIR}
iosig=$build/libiosig/tools/iosig
rep2=${IOSIG_GLUSTER_REP2:?run this test through scripts/with-glusterfs}
ec3=${IOSIG_GLUSTER_EC3:?run this test through scripts/with-glusterfs}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
export IOSIG_CONFIG= IOSIG_PROBE_CACHE=

# 1 TiB: a size at which the layouts differ visibly.
size=1TiB
"$iosig" devices --json --size $size >"$tmp/root.json" 2>"$tmp/err" || fail "iosig devices --json: $(cat "$tmp/err")"
"$iosig" mttdl --layout replication --copies 2 --size $size --json >"$tmp/rep2.json" || fail "iosig mttdl replication"
"$iosig" mttdl --layout erasure --data 2 --parity 1 --size $size --json >"$tmp/ec3.json" || fail "iosig mttdl erasure"

# As the user nobody: the layout comes from the FUSE client's graph, which
# needs no privilege.  Its data directory differs; the layout must not.
chmod 755 "$IOSIG_GLUSTER_STATE/.." "$tmp"
setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent \
	"$iosig" devices --json --all --size $size >"$tmp/nobody.json" 2>"$tmp/err" ||
	fail "iosig devices as nobody: $(cat "$tmp/err")"

python3 - "$tmp" "$rep2" "$ec3" <<'PY' || fail "catalog JSON checks failed"
import json, sys
tmp, rep2, ec3 = sys.argv[1:]
want = {
    rep2: ({"kind": "replication", "disks": 2, "tolerated": 1}, "replica 2", "rep2.json"),
    ec3: ({"kind": "erasure", "disks": 3, "tolerated": 1}, "disperse 3 = 2 + 1", "ec3.json"),
}
ok = True
for who in ("root", "nobody"):
    doc = json.load(open("%s/%s.json" % (tmp, who)))
    mounts = {m["path"]: m for m in doc["mounts"]}
    for path, (layout, desc, ref) in want.items():
        m = mounts.get(path)
        if m is None:
            print("%s: %s is not in the catalog" % (who, path)); ok = False; continue
        checks = [
            (m["fstype"] == "fuse.glusterfs", "fstype %s" % m["fstype"]),
            (m["class"] == {"value": "network", "source": "discovered"}, "class %s" % m["class"]),
            (m["global"] == {"value": True, "source": "discovered"}, "global %s" % m["global"]),
            (m["layout"]["value"] == layout, "layout %s" % m["layout"]),
            (m["layout"]["source"] == "discovered", "layout source %s" % m["layout"]),
            (m["layout"].get("origin") == "GlusterFS client graph (.meta/graphs/active/volfile): " + desc,
             "layout origin %s" % m["layout"].get("origin")),
        ]
        expect = json.load(open("%s/%s" % (tmp, ref)))["mttdl_s"]
        checks.append((abs(m["mttdl"] - expect) <= 1e-9 * expect,
                       "mttdl %s, iosig mttdl says %s" % (m["mttdl"], expect)))
        if who == "root":
            checks.append((m["eligible"], "not eligible: %s" % m["ineligible"]))
        for good, what in checks:
            if not good:
                print("%s: %s: %s" % (who, path, what)); ok = False
sys.exit(0 if ok else 1)
PY

# --sources says where the layout came from.
"$iosig" devices --sources >"$tmp/sources" 2>&1 || fail "iosig devices --sources"
grep -Eq '^layout +replication, 2 disks, tolerates 1 +discovered: GlusterFS client graph \(\.meta/graphs/active/volfile\): replica 2$' "$tmp/sources" ||
	fail "--sources shows no discovered replica 2 layout: $(cat "$tmp/sources")"
grep -Eq '^layout +erasure, 3 disks, tolerates 1 +discovered: GlusterFS client graph \(\.meta/graphs/active/volfile\): disperse 3 = 2 \+ 1$' "$tmp/sources" ||
	fail "--sources shows no discovered disperse layout: $(cat "$tmp/sources")"

# A global signature: only the Gluster volumes qualify; the stronger layout
# wins when the MTTDL asks for it (1 GiB: replica 2 about 7700 years,
# 2 + 1 about 2600 years).
"$iosig" explain --json 'global persist totalsize(1*GiB) min_mttdl(5000*y)' --path "$tmp/out" \
	>"$tmp/explain.json" 2>"$tmp/err" || fail "iosig explain: $(cat "$tmp/err")"
python3 - "$tmp/explain.json" "$rep2" "$ec3" <<'PY' || fail "explain checks failed: $(cat "$tmp/explain.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
rep2, ec3 = sys.argv[2:]
assert doc["choice"] == rep2, doc["choice"]
for c in doc["candidates"]:
    if c["mount"] == ec3:
        assert c["verdict"] == "mttdl", c
    elif c["mount"] != rep2 and c["verdict"] != "ineligible":
        assert c["verdict"] == "not-global", c
PY

finish "gluster catalog"
