#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of iosigd's tiers (docs/tiers.md) with real processes on real mounts.

Groups (tiers_test.py GROUP):
  programs   every tier policy (bid-hybrid, mios-d, mios-e, nvcache) on its
             own home mount and tier: dd, tar, gzip, sqlite3 and dwork's
             every-call program under iosig-redirect: outputs and files
             byte-identical to plain runs; the tier was used; after SIGTERM
             the store is empty (a restart recovers nothing)
  faults     kill -9 of the daemon at random points while its tier holds
             data (IOSIGD_TIER_KILLS per policy, default 20): checksummed
             workloads (dwork records) lose nothing a write() acknowledged
             and never read a stale or torn record, through a restarted
             daemon's recovery and the client's take-over
  powerloss  real power losses of the persistent tiers: home and tier are
             partitions of one loop device; a workload fsyncs, then writes
             on; the daemon and the workload are killed and the device's
             image taken at that instant (un-fsync'ed page cache dropped) is
             mounted in its place; the power fails after the workload's
             last write, or (some rounds) amid its writes and fsyncs; in
             two rounds of three the journal's records after the last fsync
             are also torn or zeroed at a random byte; after recovery every fsync-acknowledged record is
             home, none older, the torn records were refused, and the power
             loss did drop un-fsync'ed records
  overwrite  a block written to the tier, its overwrite home over that copy,
             read back, then kill -9 before any other sync round: after
             recovery the overwrite is home (mios-e, steered deterministically)
  stale      readers in other processes, tagged while the writer writes and
             untagged after it closed, during migration, GC and write-back:
             every read checksummed, 0 stale
  readahead  nvcache: a file written plainly and dropped from the page
             cache, read sequentially twice by a tagged reader; in the
             second pass a tagged writer overwrites random blocks and sweeps
             just ahead of the reader: every block whole and never older than
             published; the read-ahead was filled into the memory tier and
             the hits were served from it
  reshape    nvcache with its read-ahead's fills: a tagged reader reads a
             file sequentially over and over while a tagged shaper punches,
             zeroes or truncates (and grows back) ranges just ahead of it,
             then writes them again: no block read older than its last
             truncate, fallocate or write, before and after the close
  badstores  a store of a newer format, a foreign file, garbage, a truncated
             store: iosigd refuses to start, names the path and what to do,
             and changes nothing
  fallback   a tier too small for the workload (its data area fills, its
             journal drains again and again): writes go home, nothing lost;
             a tier whose filesystem is not mounted: iosigd refuses to start
  tiererror  the tier's device fails while the tier holds data only it has,
             amid a checksummed workload: its writes fail (its ext4 aborts
             its journal, read-only) or it goes away (reads fail too):
             the daemon marks the tier failed and takes its data home,
             nothing acknowledged is lost where the device still reads, the
             program sees no error (where data is lost, it is told), the
             daemon serves on and drains; after a repair a new daemon
             changes no home file (bid-hybrid, mios-d, mios-e)
  protocol   REGISTERED says IOSD_REG_TIERED for a file on a tiered device;
             large writes there go through the ring (the policy places
             them) until a write's completion says IOSD_R2_HOME, then as
             WRITTEN entries; a client that sends a WRITTEN entry for such
             a file without that has its session closed

Every group runs in a private mount namespace (it re-executes itself under
unshare) with its own loop mounts, daemons and configurations.  Exit 77 =
skipped, with the reason printed.
"""
import hashlib
import json
import mmap
import os
import random
import re
import shutil
from stat import S_ISBLK
import struct
import subprocess
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from daemon_test import (DWORK, REDIRECT, STEPS, Daemon, Hostile, calls_differing, collect, device_of, entry,  # noqa: E402
                         outcome, prepare_tree, records, redirected, run_group, takeovers)
from iosig_testlib import (BackedFs, Scratch, check, differing, need_root, run,  # noqa: E402
                           skip, sqlite_workload, tree, write_config)

ALL_POLICIES = ["bid-hybrid", "mios-d", "mios-e", "nvcache"]
# IOSIGD_TIER_POLICIES=a,b: only these (a soak of one policy, a bisection).
POLICIES = [p for p in os.environ.get("IOSIGD_TIER_POLICIES", ",".join(ALL_POLICIES)).split(",") if p]
PERSISTENT = [p for p in POLICIES if p in ("bid-hybrid", "mios-d", "mios-e")]
# MIOS options that keep its log in use on loop devices (test_faults says
# why): steer whenever the SSD has work (L=0), every sequence starts in the
# Fast state (idle_reset=0: the disk counts as idle whenever nothing is in
# flight), and the Fast state is long (64 MiB).
MIOS_STEER = ":L=0,idle_reset=0,w_fast=64MiB"
# bid-hybrid tiering every queue (a packing fraction below 8 MiB per
# request: dwork's records are smaller), so that its tier holds data
# whatever verdicts the queues would get; without bulky_home (iosigd's
# default), which sends a stream once found bulky home.
BID_STEER = ":bulky_home=0,pf_threshold=16384"

# ---------------------------------------------------------------------------
# a home mount with a tier, for each policy
# ---------------------------------------------------------------------------


class Setup:
    """The home mount, the tier's mount and a configuration for `policy`:
    bid-hybrid an "HDD" with an "SSD" tier, MIOS an "SSD" with an "HDD"
    tier (the log and a data area as large as the SSD), nvcache a block
    device with a memory tier."""

    def __init__(self, s, name, policy, opts="", tier_size=None, journal=None, tier_fs=None, dev_extra=""):
        """tier_fs(name, size): mounts the tier's ext4 (default: s.mount_ext4);
        dev_extra: more settings of the device (", experimental: true")."""
        self.policy, self.name = policy, name
        base = policy.split(":")[0]
        tier_fs = tier_fs or s.mount_ext4
        if base.startswith("mios"):
            self.home = s.mount_ext4(name + "-home", "256M")
            self.tmnt = tier_fs(name + "-tier", "800M")
            home_cls, tier_cls, size = "ssd", "hdd", "700MiB"
        elif base == "nvcache":
            self.home = s.mount_ext4(name + "-home", "512M")
            self.tmnt = s.mount_tmpfs(name + "-tier", "200m")
            home_cls, tier_cls, size = "hdd", "ram", "128MiB"
        else:
            self.home = s.mount_ext4(name + "-home", "512M")
            self.tmnt = tier_fs(name + "-tier", "256M")
            home_cls, tier_cls, size = "hdd", "ssd", "160MiB"
        size = tier_size or size
        self.store = os.path.join(self.tmnt, ".iosigd", "t.tier")
        path = s.path(name + ".cfg")
        write_config(path, [(self.home, self.home + "/iosig-data", ["class: " + home_cls])])
        with open(path) as f:
            text = f.read()
        text += textwrap.dedent("""\
            daemon:
              devices:
                "%s": { policy: "%s%s", tiers: [t]%s }
              tiers:
                t: { mount: "%s", size: %s, class: %s%s }
            """) % (self.home, policy, opts, dev_extra, self.tmnt, size, tier_cls,
                     ", journal: " + journal if journal else "")
        self.config = text

    def tier(self, st):
        dv = device_of(st, self.home)
        return dv["tiers"][0] if dv and dv.get("tiers") else None


def daemon_for(s, setup, name):
    return Daemon(s, name, setup.config).start()


def recovery_lines(d, mark=0):
    """The recovery lines of d's log from byte `mark` on (a restarted
    daemon appends to the log of the one it replaces)."""
    return [line for line in d.log()[mark:].splitlines() if "recovery:" in line]


# ---------------------------------------------------------------------------
# programs
# ---------------------------------------------------------------------------

def test_programs():
    need_root()
    s = Scratch("iosigd-tprog.")
    sql = sqlite_workload(2000, 100)
    try:
        for policy in POLICIES:
            st = Setup(s, policy, policy)
            d = daemon_for(s, st, "d-" + policy)
            work, plain = os.path.join(st.home, "work"), os.path.join(st.home, "plain")
            for x in (work, plain):
                os.makedirs(x)
                prepare_tree(x)
            for args in STEPS:
                r1, o1, e1 = redirected(d, work, args, cwd=work)
                r2, o2, e2 = run(args, cwd=plain)
                check(r1 == r2 == 0 and o1 == o2 and e1 == e2,
                      "%s: %s: same status and output as a plain run (%d %d %r)"
                      % (policy, " ".join(args), r1, r2, e1))
            if shutil.which("sqlite3"):
                r1, o1, e1 = redirected(d, work, ["sqlite3", "app.db"], cwd=work, input=sql.encode())
                r2, o2, e2 = run(["sqlite3", "app.db"], cwd=plain, input=sql.encode())
                check(r1 == r2 == 0 and o1 == o2 and o1.strip().endswith("ok"),
                      "%s: sqlite3 workload: same output, integrity_check ok (%r)" % (policy, e1[-300:]))
            r1, o1, e1 = redirected(d, work, [DWORK, "calls", os.path.join(work, "calls")])
            r2, o2, e2 = run([DWORK, "calls", os.path.join(plain, "calls")])
            check(r1 == r2 == 0 and o1 == o2, "%s: every call returns what it returns plainly%s"
                  % (policy, calls_differing(o1, o2)))
            p = records(d, os.path.join(work, "rec"), 3.0, 77, mib=48)
            collect(p, "%s: dwork records" % policy)
            shutil.rmtree(os.path.join(work, "rec"), ignore_errors=True)
            os.unlink(os.path.join(work, "rec.log"))
            diff = differing(tree(work), tree(plain))
            check(not diff, "%s: every file is byte-identical to the plain run's %s" % (policy, diff[:5]))
            check("session closed" not in d.log(), "%s: no client's session was closed (%s)"
                  % (policy, [x for x in d.log().splitlines() if "session closed" in x][:3]))
            if policy == "nvcache":
                # 32 MiB in 1 MiB writes: past seq_bypass from the first one.
                dv0 = device_of(d.status(), st.home) or {}
                args = ["dd", "if=/dev/zero", "of=big.out", "bs=1M", "count=32", "status=none"]
                r1, o1, e1 = redirected(d, work, args, cwd=work)
                r2, o2, e2 = run(args, cwd=plain)
                check(r1 == r2 == 0, "%s: dd of 32 MiB in 1 MiB writes (%r)" % (policy, e1))
            if policy == "bid-hybrid":
                # A new file in 256 KiB writes, each pair swapped: its
                # first staging queue is found bulky, and the daemon takes
                # its writes back then (env->home), the next ones are
                # written by the program itself (IOSD_R2_HOME): into the
                # page cache, their write-backs handed to BID at the close -
                # runs of 256 KiB (each not contiguous with the one before
                # it).  Contiguous in the file, they are contiguous at the
                # policy too (addresses of a file with no extent yet), so
                # BID merges them.
                dv0 = device_of(d.status(), st.home) or {}
                c0 = dv0.get("counters", {})
                args = [sys.executable, "-c",
                        "import os\n"
                        "fd = os.open('bulky.out', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)\n"
                        "for i in range(64):\n"
                        "    os.pwrite(fd, bytes([i]) * 262144, (i ^ 1) * 262144)\n"
                        "os.close(fd)\n"]
                r1, o1, e1 = redirected(d, work, args, cwd=work)
                r2, o2, e2 = run(args, cwd=plain)
                check(r1 == r2 == 0, "%s: 16 MiB in 256 KiB writes (%r)" % (policy, e1))
                dv1 = device_of(d.status(), st.home) or {}
                c1 = dv1.get("counters", {})
                late = c1.get("homed_late_writes", 0) - c0.get("homed_late_writes", 0)
                merged = c1.get("merged_requests", 0) - c0.get("merged_requests", 0)
                direct = dv1.get("writes_direct", 0) - dv0.get("writes_direct", 0)
                given = c1.get("writes_given_home", 0) - c0.get("writes_given_home", 0)
                check(late >= 1 and given >= late and direct >= 1 and merged >= 1,
                      "%s: a new file's bulky writes went home once judged (homed_late_writes +%d, "
                      "writes_given_home +%d), the next ones written by the program itself "
                      "(writes_direct +%d), their write-backs merged (merged_requests +%d)"
                      % (policy, late, given, direct, merged))
            stat = d.status()
            t = st.tier(stat)
            check(t is not None and t["written_bytes"] > 0 and t["failed"] is False,
                  "%s: data went through the tier (%s)" % (policy, json.dumps(t)))
            if policy == "nvcache":
                # Sent home by the policy (POLICY_REQ_HOME): into the page
                # cache at submit, then (IOSD_R2_HOME) by dd itself.
                dv1 = device_of(stat, st.home) or {}
                n = dv1.get("writes_home_cached", 0) - dv0.get("writes_home_cached", 0)
                k = dv1.get("writes_direct", 0) - dv0.get("writes_direct", 0)
                check(n >= 1 and k >= 1 and n + k >= 16,
                      "%s: dd's writes, which its policy sends home, went into the page cache at "
                      "once (writes_home_cached: %d, then writes_direct: %d, of its 32)" % (policy, n, k))
            rc = d.stop()
            check(rc == 0, "%s: iosigd exits 0 on SIGTERM (%r)" % (policy, rc))
            d2 = daemon_for(s, st, "d2-" + policy)
            check(not recovery_lines(d2), "%s: after a clean stop nothing is left to recover (%s)"
                  % (policy, recovery_lines(d2)))
            check(d2.stop() == 0, "%s: the second daemon exits 0" % policy)
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# faults: kill -9 while the tier holds data
# ---------------------------------------------------------------------------

def test_faults():
    need_root()
    kills = int(os.environ.get("IOSIGD_TIER_KILLS", "20"))
    rng = random.Random(int(os.environ.get("IOSIGD_SEED", "4242")))
    s = Scratch("iosigd-tfaults.")
    try:
        for policy in POLICIES:
            # nvcache writes dirty data back within milliseconds by default:
            # with wb_delay its tier holds it for a while (the kills land
            # 0.1-1.2 s into the workload), as the kernel's dirty expiry does.
            # MIOS steers to its log only while the SSD's queue is longer
            # than L (2), which on this rig's fast "SSD" depends on the
            # load, and only in states its profile predicts, which a loop
            # device never confirms (no Slow write: a sequence ends after
            # W_f + W_m bytes, and only an idle disk starts one): MIOS_STEER
            # keeps the tier in use whatever the machine does.  nvcache's
            # read-ahead is filled into its tier: clean copies, FILL records
            # in its journal, reads served from them; its bypassed writes go
            # into the page cache at submit (POLICY_REQ_HOME).  bid-hybrid
            # with BID_STEER: as iosigd runs it, the tier held data at only
            # 8 of 18 kills in one run (seed 6001: its bulky queues' writes
            # went home; 9-16 of 17-20 in others) - the check below wants
            # half.
            st = Setup(s, policy, policy, ":wb_delay=3s" if policy == "nvcache" else
                       MIOS_STEER if policy.startswith("mios") else BID_STEER)
            totals = {"records": 0, "checked": 0, "takeovers": 0, "replayed": 0, "dirty_at_kill": 0,
                      "live_at_kill": 0, "recovered_records": 0, "recovered_bytes": 0}
            for cycle in range(kills):
                d = daemon_for(s, st, "d-%s-%d" % (policy, cycle))
                work = os.path.join(st.home, "c%d" % cycle)
                # nvcache's tmpfs tier takes 40 MiB in about 0.3 s on a quiet
                # machine, 160 MiB in about 1 s - before most kills, or
                # close to them (then its files are closed and home, the
                # tier clean): 320 MiB, about 2 s (the home holds 512 MiB).
                # bid-hybrid with every queue tiered (BID_STEER) wrote 40 MiB
                # before 12 of 20 kills: 96 MiB (its tier holds 160).
                p = records(d, work, 2.5, 5000 + cycle,
                            mib=320 if policy == "nvcache" else 96 if policy == "bid-hybrid" else 40)
                time.sleep(rng.uniform(0.1, 1.2))
                connected = False
                try:
                    stat = d.status()
                    t = st.tier(stat)
                    if t and t["dirty_bytes"] > 0:
                        totals["dirty_at_kill"] += 1
                    connected = any(c.get("pid") == p.pid for c in stat.get("clients") or [])
                except OSError:
                    pass
                d.kill9()
                # A fast run may be over before the kill: its client has
                # nothing to take over.  So may one that is still exiting
                # (a sanitizer's leak check at exit takes a while): it must
                # have had its session with the daemon and outlived it (its
                # watcher takes over, or its exit does).
                live = p.poll() is None and connected
                totals["live_at_kill"] += live
                # systemd restarts it (Restart=on-failure) on the same
                # socket, after a while; its clients wait for it.
                time.sleep(rng.uniform(0.0, 1.0))
                mark = len(d.log())
                d2 = daemon_for(s, st, "d-%s-%d" % (policy, cycle))
                for line in recovery_lines(d2, mark):
                    print("  %s cycle %d: %s" % (policy, cycle, line.strip()))
                    m = re.search(r"(\d+) records, (\d+) files, (\d+) bytes written home", line)
                    if m:
                        totals["recovered_records"] += int(m.group(1))
                        totals["recovered_bytes"] += int(m.group(3))
                c = collect(p, "%s cycle %d" % (policy, cycle))
                if c:
                    totals["records"] += c["records"]
                    totals["checked"] += c["checked"]
                n, ops = takeovers(work)
                print("  %s cycle %d: running at the kill: %s, take-overs: %d (%d operations)"
                      % (policy, cycle, live, n, ops))
                totals["takeovers"] += n
                totals["replayed"] += ops
                shutil.rmtree(work, ignore_errors=True)
                check(d2.stop() == 0, "%s cycle %d: the restarted daemon exits 0" % (policy, cycle))
            print("faults %s: %d kills; %s" % (policy, kills, json.dumps(totals)))
            check(totals["takeovers"] >= totals["live_at_kill"] >= kills // 4,
                  "%s: every client running at a kill took over (%d take-overs, %d running at %d kills)"
                  % (policy, totals["takeovers"], totals["live_at_kill"], kills))
            # A run over before its kill closed its files (their data went
            # home): half the kills that caught the workload running.
            need = max(1, totals["live_at_kill"] // 2)
            check(totals["dirty_at_kill"] >= need and totals["recovered_bytes"] > 0,
                  "%s: the tier held data at %d kills or more (half of those with the workload running) and recovery wrote it home (%s)"
                  % (policy, need, json.dumps(totals)))
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# powerloss: a real power loss of both "disks", then torn records
# ---------------------------------------------------------------------------

# The workload: records (16 bytes of header + payload) in files, fsync'ed
# every 40 records; before each fsync a helper process (forked before the
# files are open, so it holds none of them but its own p0) writes a 256 KiB
# chunk into p0 past the records (a bulky stream of its own: its write goes
# home, so that p0's fsync must commit, not only write the dirty pages as
# when tier records alone changed the file - p1 and p2's do); then it prints
# what is acknowledged, records and chunks (also after the fsync number
# `early`, when not 0, and goes on).  Then it writes on (never fsync'ed),
# prints the versions it wrote last and waits to be killed.
POWER_CHUNK, POWER_CHUNKS_AT = 256 * 1024, 1 << 20
POWER_WORKLOAD = r'''
import os, sys, struct, random, hashlib, time
d, seed, n, early = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
CHUNK, CHUNKS_AT = %d, %d
rng = random.Random(seed)
def chunk(k):
    return hashlib.sha256(b"chunk %%d %%d" %% (seed, k)).digest() * (CHUNK // 32)
ask, done = os.pipe(), os.pipe()
if os.fork() == 0:
    # The helper: writes chunk k when asked, says so; ends with the workload
    # (the pipe's end: it holds no write end of it).
    os.close(ask[1])
    os.close(done[0])
    fd = None
    while True:
        b = os.read(ask[0], 4)
        if len(b) < 4:
            os._exit(0)
        k = struct.unpack("<I", b)[0]
        fd = fd if fd is not None else os.open(os.path.join(d, "p0"), os.O_RDWR)
        os.pwrite(fd, chunk(k), CHUNKS_AT + k * CHUNK)
        os.write(done[1], b"k")
os.close(ask[0])
os.close(done[1])
files = [os.open(os.path.join(d, "p%%d" %% i), os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644) for i in range(3)]
ver = {}
def rec(f, slot, v):
    body = hashlib.sha256(b"%%d %%d %%d %%d" %% (seed, f, slot, v)).digest() * 64
    return struct.pack("<IIII", 0x52434431, f, slot, v) + body[:2032]
def acked_line():
    return "ACKED " + " ".join("%%d:%%d:%%d" %% (f, s, v) for (f, s), v in sorted(acked.items())) + " chunks=%%d" %% chunks
acked, chunks = {}, 0
for i in range(n):
    f, slot = rng.randrange(3), rng.randrange(256)
    v = ver.get((f, slot), 0) + 1
    ver[(f, slot)] = v
    os.pwrite(files[f], rec(f, slot, v), slot * 2048)
    if i %% 40 == 39:
        k = i // 40
        os.write(ask[1], struct.pack("<I", k))
        os.read(done[0], 1)
        for fd in files:
            os.fsync(fd)
        acked, chunks = dict(ver), k + 1
        if i // 40 + 1 == early:
            print(acked_line(), flush=True)
print(acked_line(), flush=True)
print("MORE", flush=True)
later = {}
for i in range(n // 2):
    f, slot = rng.randrange(3), rng.randrange(256)
    v = ver.get((f, slot), 0) + 1
    ver[(f, slot)] = v
    later[(f, slot)] = v
    os.pwrite(files[f], rec(f, slot, v), slot * 2048)
print("WRITTEN " + " ".join("%%d:%%d:%%d" %% (f, s, v) for (f, s), v in sorted(later.items())), flush=True)
time.sleep(600)
''' % (POWER_CHUNK, POWER_CHUNKS_AT)


def power_versions(line, word):
    """{(file, slot): version} of a workload's `word` line."""
    out = {}
    for item in line.split()[1:] if line.startswith(word) else []:
        if item.startswith("chunks="):
            continue
        f, slot, v = map(int, item.split(":"))
        out[(f, slot)] = v
    return out


def check_chunks(home, line, seed, what):
    """The chunks an ACKED line counts, each whole in p0."""
    m = re.search(r" chunks=(\d+)", line)
    n = int(m.group(1)) if m else -1
    bad = 0
    with open(os.path.join(home, "p0"), "rb") as fp:
        for k in range(max(n, 0)):
            fp.seek(POWER_CHUNKS_AT + k * POWER_CHUNK)
            if fp.read(POWER_CHUNK) != hashlib.sha256(b"chunk %d %d" % (seed, k)).digest() * (POWER_CHUNK // 32):
                bad += 1
    check(n > 0 and bad == 0, "%s: every fsync-acknowledged chunk the other process wrote is home (%d bad of %d)"
          % (what, bad, n))


def power_record(home, f, slot, seed):
    """The version of the record at (f, slot) in the home file: 0 if it
    is not there (short file, zeros), -1 if it is torn or foreign."""
    try:
        with open(os.path.join(home, "p%d" % f), "rb") as fp:
            fp.seek(slot * 2048)
            b = fp.read(2048)
    except FileNotFoundError:
        return 0
    if len(b) < 2048 or b == bytes(len(b)):
        return 0
    magic, ff, ss, vv = struct.unpack("<IIII", b[:16])
    body = hashlib.sha256(b"%d %d %d %d" % (seed, f, slot, vv)).digest() * 64
    if magic != 0x52434431 or ff != f or ss != slot or b[16:] != body[:2032]:
        return -1
    return vv


def check_power(home, acked, seed, what):
    """Every acknowledged record present at its version or a newer one."""
    bad = 0
    for (f, slot), v in acked.items():
        vv = power_record(home, f, slot, seed)
        if vv < v:
            if not bad:
                print("%s: first bad: file %d slot %d: want version >= %d, found %s"
                      % (what, f, slot, v, {0: "nothing", -1: "a torn or foreign record"}.get(vv, "version %d" % vv)))
            bad += 1
    check(bad == 0, "%s: every fsync-acknowledged record is home, none older or torn (%d bad of %d)"
          % (what, bad, len(acked)))
    return bad


class PowerDisk:
    """Two "disks" that lose power together: the ext4 mounts Setup asks
    for (it takes this for a Scratch) are partitions of ONE loop device
    (losetup -P) whose backing file lives on a scratch btrfs.  power_loss()
    is a power loss: a reflink copy (FICLONE) of the backing file is one
    point-in-time image of both partitions - what the filesystems had
    submitted to the device, not their dirty page cache (the clone takes
    the backing inode's lock, which every write of the loop driver takes) -
    then the filesystems are replaced by the image's, mounted at the same
    mount points (ext4 replays its journal)."""

    SIZES = (512, 800)    # MiB: the largest home and tier mounts Setup asks for

    def __init__(self, s, name):
        self.s, self.name, self.n = s, name, 0
        self.sbin = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
        if not shutil.which("sfdisk", path=self.sbin):
            skip("sfdisk not found (package fdisk; scripts/install-deps installs it)")
        # sparse: room for the disk, its images' changed extents, and more
        self.fs = s.mount_loop(name + "-btrfs", "%dM" % (2 * sum(self.SIZES) + 256), "btrfs", ["-q", "-f"])
        self.backing = os.path.join(self.fs, "disk.0")
        with open(self.backing, "wb") as f:
            f.truncate((sum(self.SIZES) + 2) << 20)
        table = "label: dos\n" + "".join("size=%dMiB, type=83\n" % m for m in self.SIZES)
        r = subprocess.run([shutil.which("sfdisk", path=self.sbin), "-q", self.backing], input=table,
                           capture_output=True, text=True)
        check(r.returncode == 0, "sfdisk made the partition table (%s)" % r.stderr.strip())
        self.dev, self.devs, self.mounts = None, [], []     # mounts: (mount point, partition number)
        self.attach()

    def path(self, *parts):
        return self.s.path(*parts)

    def attach(self):
        """The backing file on a new loop device, its partitions as block
        devices: the kernel's own scan (losetup -P), else partx (a kernel
        without the DOS partition parser adds them by BLKPG).  Never goes
        on without them: mkfs on a missing /dev node would make a file."""
        r = subprocess.run(["losetup", "--show", "-f", "-P", self.backing], capture_output=True, text=True)
        if r.returncode:
            skip("cannot attach a partitioned loop device: " + r.stderr.strip())
        self.dev = r.stdout.strip()
        self.devs.append(self.dev)
        if not self.partitioned():
            r = subprocess.run([shutil.which("partx", path=self.sbin) or "partx", "-a", self.dev],
                               capture_output=True, text=True)
            for _ in range(200):
                if self.partitioned():
                    break
                time.sleep(0.01)
        if not check(self.partitioned(), "%s has its %d partitions (%s)" % (self.dev, len(self.SIZES), r.stderr.strip())):
            raise RuntimeError("no partitions on " + self.dev)

    def partitioned(self):
        try:
            return all(S_ISBLK(os.stat(self.part(k)).st_mode) for k in range(1, len(self.SIZES) + 1))
        except OSError:
            return False

    def part(self, k):
        return "%sp%d" % (self.dev, k)

    def mount(self, k, mnt):
        r = subprocess.run(["mount", "-t", "ext4", self.part(k), mnt], capture_output=True, text=True)
        check(r.returncode == 0, "%s mounted at %s (%s)" % (self.part(k), mnt, r.stderr.strip()))

    def mount_ext4(self, name, size):
        """An ext4 of `size` ("256M") on the next free partition."""
        k = len(self.mounts) + 1
        check(k <= len(self.SIZES) and int(size[:-1]) <= self.SIZES[k - 1],
              "PowerDisk: a partition of %s for %s" % (size, name))
        mnt = self.s.path(name)
        os.makedirs(mnt, exist_ok=True)
        r = subprocess.run([shutil.which("mkfs.ext4", path=self.sbin), "-q", "-F", self.part(k), size],
                           capture_output=True, text=True)
        check(r.returncode == 0, "mkfs.ext4 %s (%s)" % (self.part(k), r.stderr.strip()))
        self.mount(k, mnt)
        self.mounts.append((mnt, k))
        return mnt

    def sync(self):
        """syncfs of every partition: what the test sets up (not what it
        tests) survives the next power loss."""
        for mnt, _ in self.mounts:
            subprocess.run(["sync", "-f", mnt], check=True)

    def release(self, devs):
        """Unmounts the partitions (lazily if busy) and detaches the
        devices `devs` (each freed at its last close)."""
        for mnt, _ in reversed(self.mounts):
            if subprocess.run(["umount", mnt], capture_output=True).returncode:
                subprocess.run(["umount", "-l", mnt], capture_output=True)
        for dev in devs:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
            self.devs.remove(dev)

    def power_loss(self):
        """The image of both partitions as they are now; the filesystems
        replaced by the image's.  Whatever was only in the page cache of
        the mounts is gone."""
        self.n += 1
        image = os.path.join(self.fs, "disk.%d" % self.n)
        r = subprocess.run(["cp", "--reflink=always", self.backing, image], capture_output=True, text=True)
        check(r.returncode == 0, "a reflink copy of the disk (%s)" % r.stderr.strip())
        # The image on a new loop device before the old one goes: its
        # partitions get other device numbers, as after a reboot, so
        # recovery cannot count on the recorded st_dev.
        old, olddevs = self.backing, list(self.devs)
        self.backing = image
        self.attach()
        self.release(olddevs)
        os.unlink(old)
        for mnt, k in self.mounts:
            self.mount(k, mnt)

    def close(self):
        self.release(list(self.devs))


def power_recovery(d):
    """{what: count} of a restarted daemon's recovery line(s)."""
    out = {}
    for line in recovery_lines(d):
        for n, what in re.findall(r"(\d+) (torn or corrupt stretches|torn sectors|records of files not found|"
                                  r"bytes written home)", line):
            out[what] = out.get(what, 0) + int(n)
    return out


def test_powerloss():
    """Each round: the workload fsyncs, writes on; the daemon and the
    workload are killed and the power fails (PowerDisk: the image of the
    home and the tier's partitions at that instant); in two rounds of three
    the image's journal after the last fsync is also torn at a random byte
    (zeros or garbage); a new daemon recovers from the image.  In rounds
    3, 7, ... the power fails instead at a random instant while the
    workload writes and fsyncs (the daemon amid sync rounds), untorn."""
    need_root()
    rounds = int(os.environ.get("IOSIGD_POWER_ROUNDS", "10"))
    rng = random.Random(int(os.environ.get("IOSIGD_SEED", "777")))
    s = Scratch("iosigd-tpower.")
    script = s.path("power.py")
    with open(script, "w") as f:
        f.write(POWER_WORKLOAD)
    disk = None
    try:
        for policy in PERSISTENT:
            disk = PowerDisk(s, policy)
            st = Setup(disk, policy, policy)
            disk.sync()
            rejected = dropped = dropped_rounds = covered = 0
            for r in range(rounds):
                d = daemon_for(s, st, "d-%s-%d" % (policy, r))
                work = os.path.join(st.home, "w%d" % r)
                os.makedirs(work)
                disk.sync()
                seed = 9000 + r
                mid = r % 4 == 3
                tear = 0 if mid else r % 3
                early = rng.randrange(2, 13) if mid else 0
                env = dict(os.environ)
                env.update(d.env())
                p = subprocess.Popen([REDIRECT, "-q", "-s", "random size_per_io(2*KiB)", work + "/**", "--",
                                      sys.executable, script, work, str(seed), "600", str(early)],
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                line = p.stdout.readline()
                acked = power_versions(line, "ACKED")
                check(acked, "%s round %d: the workload ran (%r)" % (policy, r, line[:60]))
                # fsyncs that only wrote dirty pages: their files grew by
                # tier records alone (tiers_sync_start())
                covered += (device_of(d.status(), st.home) or {}).get("syncs_covered", 0)
                later, synced, end = {}, 0, 0
                if mid:
                    # The workload writes and fsyncs on: the power fails
                    # amid its writes and the daemon's sync rounds.
                    time.sleep(rng.uniform(0, 0.1))
                else:
                    # Durable so far: the journal up to here.  What comes
                    # after is not acknowledged.
                    synced = st.tier(d.status())["journal_used"]
                    p.stdout.readline()   # MORE
                    later = power_versions(p.stdout.readline(), "WRITTEN")
                    check(later, "%s round %d: the workload wrote on after its last fsync" % (policy, r))
                    # To tear: the journal's end once the daemon has placed
                    # those writes (it may still be taking them from the
                    # ring), the same twice in a row, 3 s at most.  Not in
                    # the untorn rounds: the power fails at once, before
                    # idle-time migration or GC moves data home.
                    end = synced
                    for _ in range(60 if tear else 0):
                        prev, end = end, st.tier(d.status())["journal_used"]
                        if end == prev and end > synced + 64:
                            break
                        time.sleep(0.05)
                # Power loss: everything dies at once, the disks keep what
                # reached them.
                p.kill()
                d.kill9()
                p.wait()
                # In two rounds of three, the journal's records after the
                # sync reached the disk up to a random byte (their payloads
                # as the image has them), then zeros (never written) or
                # garbage (half written).
                with open(st.store, "rb") as f:
                    joff = int.from_bytes(f.read(256)[56:64], "little")
                    f.seek(joff + synced)
                    tail = f.read(end - synced)
                disk.power_loss()
                cut = None
                if tear and end > synced + 64:
                    cut = rng.randrange(synced, end)
                    with open(st.store, "r+b") as f:
                        f.seek(joff + synced)
                        f.write(tail[:cut - synced] + (b"\0" * (end - cut) if tear == 1 else os.urandom(end - cut)))
                        os.fsync(f.fileno())
                d2 = daemon_for(s, st, "d-%s-%d-after" % (policy, r))
                rec = power_recovery(d2)
                rejected += rec.get("torn or corrupt stretches", 0) + rec.get("torn sectors", 0)
                what = "%s round %d" % (policy, r)
                check_power(work, acked, seed, what)
                check_chunks(work, line, seed, what)
                check(rec.get("records of files not found", 0) == 0,
                      "%s: recovery found every file on the image's filesystem (%r)" % (what, rec))
                # Did the power loss drop anything?  Records written after
                # the last fsync that are not home at their last version.
                lost = sum(1 for (f, slot), v in later.items() if power_record(work, f, slot, seed) < v)
                print("%s: %s; %d of %d records written after the last fsync lost; recovery %s"
                      % (what, "power failed after fsync %d, amid writes and fsyncs" % early if mid else
                         ("journal %d-%d torn at %s (%s)" % (synced, end, cut, ("zeros", "garbage")[tear - 1]))
                         if tear else "no tear", lost, len(later), json.dumps(rec, sort_keys=True)))
                if not tear and not mid:
                    dropped += lost
                    dropped_rounds += lost > 0
                check(d2.stop() == 0, "%s: the daemon after it exits 0" % what)
                shutil.rmtree(work, ignore_errors=True)
            print("powerloss %s: %d rounds, %d torn or corrupt stretches or sectors refused, "
                  "%d records written after the last fsync dropped by the power loss alone in %d rounds, "
                  "%d fsyncs covered by the tier's records" % (policy, rounds, rejected, dropped, dropped_rounds, covered))
            check(rejected > 0, "%s: torn records were seen and refused (%d)" % (policy, rejected))
            check(covered > 0, "%s: fsyncs covered by the tier's records were among those the power loss tested (%d)"
                  % (policy, covered))
            check(dropped_rounds > 0, "%s: the power loss dropped data that was not fsync'ed (%d records in %d rounds)"
                  % (policy, dropped, dropped_rounds))
            disk.close()
            disk = None
    finally:
        Daemon.kill_all()
        if disk:
            disk.close()
        s.close()


# ---------------------------------------------------------------------------
# stale: readers in other processes during migration, GC and write-back
# ---------------------------------------------------------------------------

# A writer of checksummed blocks (version in the block) that publishes each
# version after write() returned, pausing now and then (the policy moves
# data home or collects its log meanwhile); readers read blocks and check
# the checksum and that the version is at least the one published before
# the read began.
STALE_WRITER = r'''
import os, sys, struct, hashlib, time, random
path, pub, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)   # nvcache: made plainly before
pf = os.open(pub, os.O_RDWR)
ver = [0] * 128
def block(i, v):
    body = hashlib.sha256(b"%d %d" % (i, v)).digest() * 128
    return struct.pack("<II", i, v) + body[:4088]
for i in range(128):
    ver[i] = 1
    os.pwrite(fd, block(i, 1), i * 4096)
    os.pwrite(pf, struct.pack("<I", 1), i * 4)
for k in range(n):
    i = rng.randrange(128)
    ver[i] += 1
    os.pwrite(fd, block(i, ver[i]), i * 4096)
    os.pwrite(pf, struct.pack("<I", ver[i]), i * 4)
    if k % 200 == 99:
        # A sequential sweep over every block, 4 KiB at a time: past
        # nvcache's seq_bypass it goes home over cached (dirty) copies.
        for i in range(128):
            ver[i] += 1
            os.pwrite(fd, block(i, ver[i]), i * 4096)
            os.pwrite(pf, struct.pack("<I", ver[i]), i * 4)
    if k % 200 == 199:
        time.sleep(1.3)    # idle: migration, GC, write-back run now
os.close(fd)
print("DONE", flush=True)
'''

STALE_READER = r'''
import os, sys, struct, hashlib, time
path, pub, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
pf = os.open(pub, os.O_RDONLY)
while not os.path.exists(path):
    time.sleep(0.01)
fd = os.open(path, os.O_RDONLY)
t0, reads, stale, torn = time.time(), 0, 0, 0
i = 0
while time.time() - t0 < seconds:
    i = (i * 7 + 3) % 128
    want = struct.unpack("<I", os.pread(pf, 4, i * 4))[0]
    if not want:
        continue
    b = os.pread(fd, 4096, i * 4096)
    reads += 1
    if len(b) < 8:
        stale += 1
        continue
    bi, bv = struct.unpack("<II", b[:8])
    body = hashlib.sha256(b"%d %d" % (bi, bv)).digest() * 128
    if bi != i or b[8:] != body[:4088]:
        torn += 1
    elif bv < want:
        stale += 1
print("READS %d STALE %d TORN %d" % (reads, stale, torn), flush=True)
'''


def test_stale():
    need_root()
    s = Scratch("iosigd-tstale.")
    for name, text in (("writer.py", STALE_WRITER), ("reader.py", STALE_READER)):
        with open(s.path(name), "w") as f:
            f.write(text)
    try:
        for policy in POLICIES:
            opts = ":L=0,gc_idle=500ms" if policy.startswith("mios") else \
                   ":seq_bypass=64KiB" if policy == "nvcache" else ""
            st = Setup(s, policy, policy, opts)
            d = daemon_for(s, st, "d-" + policy)
            work = os.path.join(st.home, "st")
            os.makedirs(work)
            target, pub = os.path.join(work, "blocks"), s.path("pub-" + policy)
            with open(pub, "wb") as f:
                f.write(b"\0" * 512)
            # nvcache: the blocks allocated in file order (version 0, not
            # published), so the sweeps are sequential on the device too, as
            # the policy sees addresses (FIEMAP), and its bypass sees them.
            # (Not for MIOS: over allocated blocks it redirected nothing in 2
            # of 3 ASan runs; bid-hybrid as before.)
            if policy == "nvcache":
                with open(target, "wb") as f:
                    f.write(b"\0" * (128 * 4096))
                    f.flush()
                    os.fsync(f.fileno())
            env = dict(os.environ)
            env.update(d.env())
            wrap = [REDIRECT, "-q", "-s", "random size_per_io(4*KiB)", work + "/**", "--", sys.executable]
            w = subprocess.Popen(wrap + [s.path("writer.py"), target, pub, "1200", "5"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            readers = [subprocess.Popen(wrap + [s.path("reader.py"), target, pub, "9"], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                       for _ in range(3)]
            wo, we = w.communicate(timeout=300)
            check(w.returncode == 0 and "DONE" in wo, "%s: the writer ran (%s)" % (policy, we[-300:]))
            total = {"reads": 0, "stale": 0, "torn": 0}
            for p in readers:
                o, e = p.communicate(timeout=300)
                m = re.search(r"READS (\d+) STALE (\d+) TORN (\d+)", o)
                check(m is not None, "%s: a reader ran (%s)" % (policy, e[-300:]))
                if m:
                    total["reads"] += int(m.group(1))
                    total["stale"] += int(m.group(2))
                    total["torn"] += int(m.group(3))
            # The writer closed: plain (untagged) readers see every block.
            r, o, e = run([sys.executable, s.path("reader.py"), target, pub, "1"])
            m = re.search(r"READS (\d+) STALE (\d+) TORN (\d+)", o)
            check(m is not None and m.group(2) == "0" and m.group(3) == "0",
                  "%s: after the close an untagged reader sees it all (%s %s)" % (policy, o.strip(), e))
            t = st.tier(d.status())
            moved = t["writeback_bytes"] if t else 0
            print("stale %s: %s, tier: written %d, moved home %d" % (policy, json.dumps(total),
                                                                   t["written_bytes"] if t else 0, moved))
            if policy == "nvcache":
                bypassed = (device_of(d.status(), st.home) or {}).get("counters", {}).get("writes_bypassed", 0)
                print("stale nvcache: %d writes bypassed the cache" % bypassed)
                check(bypassed > 0, "nvcache: the sequential sweeps bypassed the cache (seq_bypass)")
            check(total["reads"] > 1000 and total["stale"] == 0 and total["torn"] == 0,
                  "%s: tagged readers in other processes: 0 stale, 0 torn (%s)" % (policy, json.dumps(total)))
            # bid-hybrid migrates and nvcache writes back: their tier data
            # goes home while the readers run.  MIOS keeps its data in the
            # tier (GC moves it inside the log) until a write home supersedes
            # it, which may be all of it (seen: 0 bytes left to move home).
            moves_home = not policy.startswith("mios-")
            check(t and t["written_bytes"] > 0 and (moved > 0 or not moves_home),
                  "%s: data went to the tier%s (%s)" % (policy, " and was moved home meanwhile" if moves_home
                                                       else "", json.dumps(t)))
            check(d.stop() == 0, "%s: iosigd exits 0" % policy)
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# readahead: nvcache's read-ahead fills the memory tier
# ---------------------------------------------------------------------------

RA_BLOCKS = 8192          # the file: 32 MiB of checksummed 4 KiB blocks
RA_CHUNK = 128 << 10      # the reader's read size
RA_RECORD_RUNS = 3        # dwork records runs after the passes, a daemon each

# Block i at version v: its number, its version and a body derived from both.
RA_BLOCK = r'''
import hashlib, struct
def block(i, v):
    body = hashlib.sha256(b"%d %d" % (i, v)).digest() * 128
    return struct.pack("<II", i, v) + body[:4088]
'''

# Reads the file sequentially, RA_CHUNK at a time, `passes` times.  With
# `mark` (not "-"): after the first pass it creates `mark`.p1 and waits for
# `mark`.go (the test takes the daemon's status in between, the writer
# starts), then reads slowly enough for the writer's overwrites to land
# among its reads.  Every block must be whole and at least at the version
# the writer had published before the read began (`pub`: a version per
# block, written after the block; after them, where the reader is).  Counts
# blocks read newer than that (written meanwhile) and blocks read at a
# version above 0 (the writer's).
RA_READER = RA_BLOCK + r'''
import os, sys, time
path, pub, mark, passes, chunk = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
fd = os.open(path, os.O_RDONLY)
pf = os.open(pub, os.O_RDWR)
size = os.fstat(fd).st_size
reads = bad = stale = newer = seen = 0
for p in range(passes):
    if p == 1 and mark != "-":
        open(mark + ".p1", "w").close()
        t0 = time.time()
        while not os.path.exists(mark + ".go"):
            if time.time() - t0 > 300:
                sys.exit("no go")
            time.sleep(0.005)
    for off in range(0, size, chunk):
        n = chunk // 4096
        want = struct.unpack("<%dI" % n, os.pread(pf, 4 * n, off // 4096 * 4))
        b = os.pread(fd, chunk, off)
        reads += 1
        os.pwrite(pf, struct.pack("<Q", off), 4 * (size // 4096))
        for k in range(n):
            i, blk = off // 4096 + k, b[k * 4096:(k + 1) * 4096]
            if len(blk) < 4096 or struct.unpack_from("<I", blk)[0] != i:
                bad += 1
                continue
            v = struct.unpack_from("<I", blk, 4)[0]
            if blk != block(i, v):
                bad += 1
            elif v < want[k]:
                stale += 1
            else:
                newer += v > want[k]
                seen += v > 0
        if p == 1 and mark != "-":
            time.sleep(0.004)
print("READS %d BAD %d STALE %d NEWER %d SEEN %d" % (reads, bad, stale, newer, seen), flush=True)
'''

# Once `mark`.go exists, until `mark`.stop exists: overwrites random blocks
# (4 KiB each, a new version, then published), and every 0.25 s sweeps
# 2 MiB just ahead of the reader (its position in `pub` after the
# versions): past nvcache's seq_bypass (1 MiB) those writes go home, over
# ranges the reader's read-ahead is loading or about to load - a load that
# a write overtook must not be filled into the tier.
RA_WRITER = RA_BLOCK + r'''
import os, sys, time, random
path, pub, mark, n, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)
t0 = time.time()
while not os.path.exists(mark + ".go"):
    if time.time() - t0 > 300:
        sys.exit("no go")
    time.sleep(0.005)
fd = os.open(path, os.O_RDWR)
pf = os.open(pub, os.O_RDWR)
ver, writes, swept = [0] * n, 0, time.time()
def write(i):
    global writes
    ver[i] += 1
    os.pwrite(fd, block(i, ver[i]), i * 4096)
    os.pwrite(pf, struct.pack("<I", ver[i]), i * 4)
    writes += 1
while not os.path.exists(mark + ".stop"):
    if time.time() - swept > 0.25:
        at = struct.unpack("<Q", os.pread(pf, 8, 4 * n))[0] // 4096 + 16
        for i in range(at, min(at + 512, n)):
            write(i)
        swept = time.time()
    write(rng.randrange(n))
    time.sleep(0.002)
os.close(fd)
print("WRITES %d" % writes, flush=True)
'''


def ra_result(what, out, err):
    m = re.search(r"READS (\d+) BAD (\d+) STALE (\d+) NEWER (\d+) SEEN (\d+)", out)
    check(m is not None, "%s ran (%s)" % (what, err[-300:]))
    return [int(x) for x in m.groups()] if m else [0] * 5


def ra_counters(st, stat):
    """The policy's counters and the tier's figures the group looks at."""
    t, dv = st.tier(stat) or {}, device_of(stat, st.home) or {}
    c = dv.get("counters") or {}
    x = {k: c.get(k, 0) for k in ("read_hits", "hit_bytes", "read_misses", "readahead_bytes", "fill_cmds",
                                  "fill_bytes", "evicted_bytes")}
    x.update({"tier_" + k: t.get(k, 0) for k in ("fill_bytes", "read_bytes", "reads_elsewhere",
                                                 "written_bytes", "conflicts")})
    return x


def ra_minus(a, b):
    return {k: a[k] - b.get(k, 0) for k in a}


def block_scratch(prefix, scripts):
    """A scratch directory with the scripts [(name, text)] written into it,
    and the same block() as the scripts' (RA_BLOCK)."""
    s = Scratch(prefix)
    for name, text in scripts:
        with open(s.path(name), "w") as f:
            f.write(text)
    ns = {}
    exec(RA_BLOCK, ns)
    return s, ns["block"]


def blocks_file(path, n, block):
    """n checksummed 4 KiB blocks at version 0, written plainly (untagged)
    and fsync'ed, then out of the page cache."""
    with open(path, "wb") as f:
        for i in range(n):
            f.write(block(i, 0))
        f.flush()
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


def half_cache(s, prefix, policy):
    """nvcache with a 16 MiB cache (half of a RA_BLOCKS file), its daemon
    and a work directory on its home: (setup, daemon, work)."""
    st = Setup(s, prefix + "-" + policy, policy, ":cache_size=16MiB")
    d = daemon_for(s, st, "d-%s-%s" % (prefix, policy))
    work = os.path.join(st.home, prefix)
    os.makedirs(work)
    return st, d, work


def tagged_python(work, sig):
    """The command line of a Python script under iosig-redirect, its files
    below work tagged with sig."""
    return [REDIRECT, "-q", "-s", sig, work + "/**", "--", sys.executable]


def test_readahead():
    need_root()
    s, block = block_scratch("iosigd-tra.", (("reader.py", RA_READER), ("writer.py", RA_WRITER)))
    size = RA_BLOCKS * 4096
    try:
        for policy in [p for p in POLICIES if p == "nvcache"]:
            # A cache of half the file: the second pass reads ahead (and
            # fills) again, while the writer writes.
            st, d, work = half_cache(s, "ra", policy)
            target, pub, mark = os.path.join(work, "blocks"), s.path("pub-ra-" + policy), s.path("ra-" + policy)
            with open(pub, "wb") as f:
                f.write(b"\0" * (4 * RA_BLOCKS + 8))
            # Written plainly (untagged): home data only, none of it in the
            # tier; then out of the page cache, so the read-ahead reads it
            # from the device.
            blocks_file(target, RA_BLOCKS, block)
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("1\n")
            env = dict(os.environ)
            env.update(d.env())

            def tagged(sig):
                return tagged_python(work, sig)
            w = subprocess.Popen(tagged("random size_per_io(4*KiB)") + [s.path("writer.py"), target, pub, mark,
                                                                       str(RA_BLOCKS), "7"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            r = subprocess.Popen(tagged("sequential size_per_io(128*KiB)") + [s.path("reader.py"), target, pub,
                                                                             mark, "2", str(RA_CHUNK)],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            t0 = time.time()
            while not os.path.exists(mark + ".p1") and r.poll() is None and time.time() - t0 < 300:
                time.sleep(0.01)
            one = ra_counters(st, d.status())
            open(mark + ".go", "w").close()
            ro, re_ = r.communicate(timeout=600)
            open(mark + ".stop", "w").close()
            wo, we = w.communicate(timeout=120)
            two = ra_minus(ra_counters(st, d.status()), one)
            reads, bad, stale, newer, seen = ra_result("%s: the tagged reader" % policy, ro, re_)
            m = re.search(r"WRITES (\d+)", wo)
            writes = int(m.group(1)) if m else 0
            print("readahead %s: %d reads (%d blocks written meanwhile, %d blocks read as written, %d of them "
                  "newer than published, %d stale, %d bad)" % (policy, reads, writes, seen, newer, stale, bad))
            print("readahead %s: first pass: %s" % (policy, json.dumps(one)))
            print("readahead %s: second pass (with the writer): %s" % (policy, json.dumps(two)))
            check(reads == 2 * size // RA_CHUNK and bad == 0 and stale == 0,
                  "%s: two sequential passes, every block whole and none older than published "
                  "(%d reads, %d bad, %d stale)" % (policy, reads, bad, stale))
            check(w.returncode == 0 and writes > 50 and seen > 0,
                  "%s: the tagged writer overwrote blocks during the second pass, the reader read some "
                  "(%d writes, %d blocks read as written; %s)" % (policy, writes, seen, we[-300:]))
            # The first pass: the reader read ahead and hit ...
            hits = one["read_hits"]
            check(hits > size // RA_CHUNK // 2 and one["readahead_bytes"] >= size // 2,
                  "%s: the sequential reader read ahead and hit (%d hits of %d reads)"
                  % (policy, hits, size // RA_CHUNK))
            # ... the policy wrote policy it read ahead into memory (the fill
            # commands it issues either way) ...
            check(one["fill_bytes"] >= one["readahead_bytes"] * 9 // 10,
                  "%s: the policy filled its read-ahead into memory (fill_bytes %d of readahead_bytes %d)"
                  % (policy, one["fill_bytes"], one["readahead_bytes"]))
            # ... the tier holds it as clean copies, from which the hits
            # were served: few hits found nothing of theirs in the tier
            # (reads_elsewhere), most hit bytes came from it.
            check(one["tier_fill_bytes"] >= size * 3 // 4,
                  "%s: the read-ahead was filled into the tier (tier fill_bytes %d)"
                  % (policy, one["tier_fill_bytes"]))
            check(one["tier_reads_elsewhere"] <= hits // 10 and one["tier_read_bytes"] >= one["hit_bytes"] * 3 // 4,
                  "%s: hits served from the tier (reads_elsewhere %d of %d hits, %d of %d hit bytes read "
                  "from the tier)" % (policy, one["tier_reads_elsewhere"], hits, one["tier_read_bytes"],
                                      one["hit_bytes"]))
            # The second pass read ahead and filled again, among the writes.
            check(two["readahead_bytes"] > 0 and two["fill_bytes"] > 0,
                  "%s: the second pass read ahead and filled again among the writes (%s)"
                  % (policy, json.dumps(two)))
            # The writer closed: an untagged reader sees its last versions.
            r2, o2, e2 = run([sys.executable, s.path("reader.py"), target, pub, "-", "1", str(RA_CHUNK)])
            _, bad2, stale2, newer2, _ = ra_result("%s: the untagged reader" % policy, o2, e2)
            check(bad2 == 0 and stale2 == 0 and newer2 == 0,
                  "%s: after the close an untagged reader sees every block at its last version (%s)"
                  % (policy, o2.strip()))
            check(d.stop() == 0, "%s: iosigd exits 0" % policy)
            # dwork records to its end, a daemon per run (nvcache as faults
            # runs it): 14 files written, overwritten, fsync'ed and read, read
            # back through their descriptors, then closed one after another
            # and read again through new tagged opens, whose sequential reads
            # read ahead - with the fills, into clean copies, while the loads
            # of the files closed just before are still cached.  A fill once
            # took such a load for the next file's (the freed file's struct
            # came back at its address): other records' bytes read after
            # close, in every run of 2 of 4 runs of this group (whether the
            # address comes back varies).
            st = Setup(s, "rar-" + policy, policy, ":wb_delay=3s")
            for k in range(RA_RECORD_RUNS):
                d = daemon_for(s, st, "d-rar-%s-%d" % (policy, k))
                work = os.path.join(st.home, "rec%d" % k)
                c = collect(records(d, work, 60, 7000 + k, mib=160),
                            "%s: dwork records run %d to its end" % (policy, k))
                print("readahead %s: dwork records run %d: %s" % (policy, k, json.dumps(c)))
                shutil.rmtree(work, ignore_errors=True)
                check(d.stop() == 0, "%s: iosigd exits 0 after dwork records run %d" % (policy, k))
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# reshape: truncates and fallocates of a file whose read-ahead is in the tier
# ---------------------------------------------------------------------------

RS_BLOCKS = 8192          # 32 MiB of checksummed 4 KiB blocks (RA_BLOCK's)

# The shared state file: per block its state when the last operation on it
# was done (u32 `done`), then when the next one began (u32 `pend`); then the
# reader's position (u64).  A block's state is 2v while it holds version v
# of its block, 2v + 1 while it reads as zeros (punched, zeroed or cut off
# by a truncate after version v).  A read of a block is right when what it
# got is a state between `done` before the read and `pend` after it.
RS_STATE = RA_BLOCK + r'''
import os, struct
def states(sf, first, count, which):
    raw = os.pread(sf, 8 * count, 8 * first)
    return [struct.unpack_from("<I", raw, 8 * k + 4 * which)[0] for k in range(count)]
def publish(sf, first, vals, which):
    raw = bytearray(os.pread(sf, 8 * len(vals), 8 * first))
    for k, v in enumerate(vals):
        struct.pack_into("<I", raw, 8 * k + 4 * which, v)
    os.pwrite(sf, bytes(raw), 8 * first)
'''

# Reads the file sequentially, RA_CHUNK at a time, over and over for
# `seconds`; a block past the file's end (a truncate cut it) reads as zeros.
RS_READER = RS_STATE + r'''
import sys, time
path, sfile, seconds, chunk, n = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
fd = os.open(path, os.O_RDONLY)
sf = os.open(sfile, os.O_RDWR)
zero = bytes(4096)
reads = bad = stale = zeros = passes = 0
t0 = time.time()
while passes == 0 or time.time() - t0 < seconds:
    passes += 1
    for off in range(0, n * 4096, chunk):
        k0, m = off // 4096, chunk // 4096
        before = states(sf, k0, m, 0)
        b = os.pread(fd, chunk, off)
        after = states(sf, k0, m, 1)
        os.pwrite(sf, struct.pack("<Q", off), 8 * n)
        reads += 1
        b += bytes(chunk - len(b))
        for k in range(m):
            i, blk, lo, hi = k0 + k, b[k * 4096:(k + 1) * 4096], before[k], after[k]
            if blk == zero:
                zeros += 1
                if not (lo & 1 or hi > lo):
                    stale += 1
                continue
            v = struct.unpack_from("<I", blk, 4)[0]
            if struct.unpack_from("<I", blk)[0] != i or blk != block(i, v) or 2 * v > hi:
                bad += 1
            elif 2 * v < lo:
                stale += 1
print("READS %d PASSES %d BAD %d STALE %d ZEROS %d" % (reads, passes, bad, stale, zeros), flush=True)
'''

# For `seconds`: a range a little ahead of the reader (where its read-ahead
# loads and fills) made zeros - punched (FALLOC_FL_PUNCH_HOLE), zeroed
# (FALLOC_FL_ZERO_RANGE) or, in the file's last quarter, cut off by a
# truncate and the file grown back - then, a few ms later, written again at
# a new version.
RS_SHAPER = RS_STATE + r'''
import ctypes, random, sys, time
path, sfile, seconds, n, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
libc = ctypes.CDLL(None, use_errno=True)   # the preload's fallocate first
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
PUNCH, ZERO = 0x02 | 0x01, 0x10
rng = random.Random(seed)
fd = os.open(path, os.O_RDWR)
sf = os.open(sfile, os.O_RDWR)
ver = [0] * n
ops = {"punch": 0, "zero": 0, "truncate": 0, "rewrite": 0}
t0 = time.time()
while time.time() - t0 < seconds:
    pos = struct.unpack("<Q", os.pread(sf, 8, 8 * n))[0] // 4096
    a = (pos + rng.randrange(8, 1024)) % n
    k = min(rng.randrange(16, 256), n - a)
    # A truncate cuts the file's last quarter at most (all it cut is
    # written again below, so the file keeps its data).
    what = rng.choice(["punch", "zero"] + ["truncate"] * (a >= n * 3 // 4))
    if what == "truncate":
        k = n - a
    end = a + k
    # Out of the page cache: the read-ahead's loads take a while, so that
    # some are in flight when the range changes.
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    publish(sf, a, [2 * ver[i] + 1 for i in range(a, end)], 1)
    if what == "truncate":
        os.ftruncate(fd, a * 4096)
        os.ftruncate(fd, n * 4096)
    elif libc.fallocate(fd, PUNCH if what == "punch" else ZERO, a * 4096, k * 4096) != 0:
        sys.exit("fallocate: %s" % os.strerror(ctypes.get_errno()))
    publish(sf, a, [2 * ver[i] + 1 for i in range(a, end)], 0)
    ops[what] += 1
    time.sleep(rng.uniform(0, 0.02))
    for i in range(a, a + k):
        ver[i] += 1
    publish(sf, a, [2 * ver[i] for i in range(a, a + k)], 1)
    os.pwrite(fd, b"".join(block(i, ver[i]) for i in range(a, a + k)), a * 4096)
    publish(sf, a, [2 * ver[i] for i in range(a, a + k)], 0)
    ops["rewrite"] += 1
os.close(fd)
print("OPS " + " ".join("%s %d" % kv for kv in sorted(ops.items())), flush=True)
'''


def test_reshape():
    need_root()
    s, block = block_scratch("iosigd-trs.", (("reader.py", RS_READER), ("shaper.py", RS_SHAPER)))
    seconds = float(os.environ.get("IOSIGD_RESHAPE_SECONDS", "12"))
    try:
        for policy in [p for p in POLICIES if p == "nvcache"]:
            st, d, work = half_cache(s, "rs", policy)
            target, state = os.path.join(work, "blocks"), s.path("state-rs-" + policy)
            with open(state, "wb") as f:
                f.write(b"\0" * (8 * RS_BLOCKS + 8))
            blocks_file(target, RS_BLOCKS, block)
            env = dict(os.environ)
            env.update(d.env())

            def tagged(sig):
                return tagged_python(work, sig)
            before = ra_counters(st, d.status())
            r = subprocess.Popen(tagged("sequential size_per_io(128*KiB)") +
                                 [s.path("reader.py"), target, state, str(seconds), str(RA_CHUNK), str(RS_BLOCKS)],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            w = subprocess.Popen(tagged("random size_per_io(64*KiB)") +
                                 [s.path("shaper.py"), target, state, str(seconds), str(RS_BLOCKS), "11"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            ro, re_ = r.communicate(timeout=600)
            wo, we = w.communicate(timeout=120)
            c = ra_minus(ra_counters(st, d.status()), before)
            m = re.search(r"READS (\d+) PASSES (\d+) BAD (\d+) STALE (\d+) ZEROS (\d+)", ro)
            check(m is not None, "%s: the tagged reader ran (%s)" % (policy, re_[-300:]))
            reads, passes, bad, stale, zeros = [int(x) for x in m.groups()] if m else [0] * 5
            ops = dict((k, int(v)) for k, v in re.findall(r"(\w+) (\d+)", wo.replace("OPS", "")))
            print("reshape %s: %d reads in %d passes (%d blocks read as zeros), %d bad, %d stale; shaper: %s; "
                  "counters: %s" % (policy, reads, passes, zeros, bad, stale, json.dumps(ops), json.dumps(c)))
            check(w.returncode == 0 and min(ops.get(k, 0) for k in ("punch", "zero", "truncate")) > 5,
                  "%s: the shaper punched, zeroed and truncated (%s; %s)" % (policy, json.dumps(ops), we[-300:]))
            check(passes >= 2 and zeros > 0 and c["readahead_bytes"] >= RS_BLOCKS * 4096 and
                  c["tier_fill_bytes"] >= RS_BLOCKS * 4096 // 2,
                  "%s: the reader read the file %d times, some blocks as zeros (%d), it read ahead (%d bytes), "
                  "filled into the tier: %d bytes" % (policy, passes, zeros, c["readahead_bytes"],
                                                      c["tier_fill_bytes"]))
            check(bad == 0 and stale == 0,
                  "%s: every block read whole, none older than its last truncate, fallocate or write "
                  "(%d bad, %d stale)" % (policy, bad, stale))
            # Both closed: an untagged reader sees the shaper's last states.
            r2, o2, e2 = run([sys.executable, s.path("reader.py"), target, state, "0", str(RA_CHUNK),
                              str(RS_BLOCKS)])
            m = re.search(r"BAD (\d+) STALE (\d+)", o2)
            check(m is not None and m.group(1) == "0" and m.group(2) == "0",
                  "%s: after the close an untagged reader sees every block's last state (%s)"
                  % (policy, (o2 + e2).strip()[-300:]))
            check(d.stop() == 0, "%s: iosigd exits 0" % policy)
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# badstores: refusals
# ---------------------------------------------------------------------------

def test_badstores():
    need_root()
    s = Scratch("iosigd-tbad.")
    try:
        st = Setup(s, "bad", "bid-hybrid")
        d = daemon_for(s, st, "d-make")
        check(d.stop() == 0, "a store is made and the daemon exits 0")
        good = open(st.store, "rb").read()
        cases = []
        newer = bytearray(good)
        newer[8] = 9   # format 9 in slot 0
        cases.append(("newer", bytes(newer), "newer iosigd"))
        cases.append(("foreign", b"#!/bin/sh\necho not a store\n" + b"x" * 20000, "not an iosig tier store"))
        garbage = bytearray(good)
        for o in (40, 4096 + 40):
            garbage[o] ^= 0x55
        cases.append(("garbage", bytes(garbage), "damaged"))
        cases.append(("truncated", good[:len(good) // 3], "truncated"))
        for name, content, want in cases:
            with open(st.store, "wb") as f:
                f.write(content)
            before = hashlib.sha256(open(st.store, "rb").read()).hexdigest()
            started, log = Daemon(s, "d-" + name, st.config).refused()
            check(not started and want in log and st.store in log,
                  "%s store: refused with the path and what to do (%s)" % (name, log.strip()[-400:]))
            after = hashlib.sha256(open(st.store, "rb").read()).hexdigest()
            check(before == after, "%s store: not changed by a byte" % name)
        with open(st.store, "wb") as f:
            f.write(good)
        d = daemon_for(s, st, "d-good-again")
        check(d.stop() == 0, "the good store is taken again")
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# fallback: a tier that fills up, a tier whose filesystem is not mounted
# ---------------------------------------------------------------------------

def test_fallback():
    need_root()
    s = Scratch("iosigd-tfall.")
    try:
        # bid-hybrid only: MIOS's tier holds its log and a data area as
        # large as the SSD (its GC's destination), so it cannot be small.
        for policy in [p for p in POLICIES if p == "bid-hybrid"]:
            # A tier of 8 MiB with a journal of 64 KiB under 40 MiB of
            # records: its data area fills, its journal drains (everything
            # home, a new generation) again and again, writes go home
            # meanwhile; the program sees nothing of it.
            st = Setup(s, "full-" + policy, policy, tier_size="8MiB", journal="64KiB")
            d = daemon_for(s, st, "d-full-" + policy)
            work = os.path.join(st.home, "full")
            p = records(d, work, 6.0, 31, mib=80)
            c = collect(p, "%s, tier full: dwork records" % policy)
            t = st.tier(d.status())
            print("fallback %s: %s" % (policy, json.dumps(t)))
            check(c is not None and c["records"] > 100, "%s: the workload ran (%s)" % (policy, c))
            check(t is not None and t["drains"] > 0 and t["resets"] > 0 and t["failed"] is False,
                  "%s: the full journal drained home and the tier started afresh (%s)"
                  % (policy, json.dumps(t)))
            check(t is not None and t["written_bytes"] > 0 and t["fallbacks"] > 0,
                  "%s: writes the tier could not take went home (%s)" % (policy, json.dumps(t)))
            check(d.stop() == 0, "%s: iosigd exits 0" % policy)
        # The tier's filesystem is not mounted: the store would land on
        # the filesystem below (and a previous daemon's records there would
        # never be applied): iosigd refuses to start and says why; plain
        # programs are not affected.
        st = Setup(s, "gone", "bid-hybrid")
        d = daemon_for(s, st, "d-gone-1")
        check(d.stop() == 0, "a daemon with the tier mounted runs and exits 0")
        r = subprocess.run(["umount", st.tmnt], capture_output=True, text=True)
        check(r.returncode == 0, "the tier is unmounted (%s)" % r.stderr.strip())
        s.mounts.remove(st.tmnt)
        started, log = Daemon(s, "d-gone-2", st.config).refused()
        check(not started and "is not a mount point" in log and st.tmnt in log,
              "no tier mount: refused, naming the mount (%s)" % log.strip()[-300:])
        check(not os.path.exists(os.path.join(st.tmnt, ".iosigd")),
              "no store was made on the filesystem below the mount point")
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# tiererror: the tier's device fails while the tier holds data
# ---------------------------------------------------------------------------

# MiB the tier's device can store before it is made to fail (its image is
# sparse): MIOS pads its HDD log (130 MiB in the first second here).
TIERERR_ROOM = {"bid-hybrid": 128, "mios-d": 816, "mios-e": 816}


def evict(path):
    """The page cache of `path` dropped (its clean pages, and those whose
    write-back failed are clean), as memory pressure may do at any time:
    reads go to the device."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def digests(root):
    return {k: hashlib.sha256(v).hexdigest() for k, v in tree(root).items()}


def tier_until(d, st, pred, seconds):
    """The tier's status once pred(it) holds (or the last one seen)."""
    until, t = time.time() + seconds, None
    while time.time() < until:
        t = st.tier(d.status())
        if t and pred(t):
            break
        time.sleep(0.05)
    return t


def tiererror_on(s, policy, mode, seed):
    """mode fill: the tier's device fails its writes of blocks it did not
    store yet (the tmpfs under its image filled; ext4 aborts its journal
    and goes read-only at the next commit), reads work.  mode vanish: the
    device goes away (its image cut, reads and writes fail) and the
    store's page cache is dropped: what only the tier held is lost."""
    what = "%s %s" % (policy, mode)
    fss = []

    def tier_fs(name, size):
        fs = BackedFs(s.path(name), "ext4", int(size[:-1]), ["-q", "-F"], sparse=True,
                      room=TIERERR_ROOM[policy])
        fss.append(fs)
        return fs.mnt

    try:
        st = Setup(s, "%s-%s" % (mode, policy), policy, MIOS_STEER if policy.startswith("mios") else "",
                   tier_fs=tier_fs)
        fs = fss[0]
        d = daemon_for(s, st, "d-%s-%s" % (mode, policy))
        work, after = os.path.join(st.home, "w"), os.path.join(st.home, "after")
        p = records(d, work, 12.0, seed, mib=128)
        # The tier holds data whose only copy it is, then its device fails
        # (MIOS may keep little there for long: a write home supersedes it).
        t0 = tier_until(d, st, lambda t: t["dirty_bytes"] >= 64 << 10 or p.poll() is not None, 15)
        check(t0 and t0["dirty_bytes"] > 0 and p.poll() is None,
              "%s: the tier holds data only it has, the workload runs (%s; the policy: %s)"
              % (what, json.dumps(t0), json.dumps((device_of(d.status(), st.home) or {}).get("counters"))))
        if mode == "fill":
            left = fs.fill()
            check(left < 1 << 20, "%s: the tier's device can store %d KiB more" % (what, left >> 10))
        else:
            # What it wrote back is read from the device from now on, what
            # it has not yet is only in memory.
            evict(st.store)
            size = fs.vanish()
            check(size <= 1 << 20, "%s: the tier's device is cut to %d KiB" % (what, size >> 10))
        failed_at = time.time()
        t1 = tier_until(d, st, lambda t: t["failed"] and t["dirty_bytes"] == 0, 30)
        noticed = time.time() - failed_at
        check(t1 and t1["failed"] and t1["errors"] > 0 and t1["dirty_bytes"] == 0,
              "%s: the daemon marks the tier failed and takes its data home (%.1f s; %s)"
              % (what, noticed, json.dumps(t1)))
        # Nothing may depend on the store's page cache any more.
        evict(st.store)
        rc, c, o, e = outcome(p)
        bad = {k: c[k] for k in ("stale", "torn", "lost", "errors")} if c else None
        print("tiererror %s: workload %s; failure noticed and data home after %.1f s; tier %s"
              % (what, o.strip(), noticed, json.dumps(t1)))
        if mode == "fill":
            check(rc == 0 and c is not None and not any(bad.values()),
                  "%s: every acknowledged record reads back, through the descriptors and plainly after "
                  "close, and the program saw no error (%s %s)" % (what, o.strip(), e.strip()[-600:]))
        else:
            # No second copy: what only the tier held and its device cannot
            # read any more is lost.  The program is told (EIO at its next
            # fsync or close); afterwards the file has its older bytes
            # there, as after a write-back the kernel lost (reads see them:
            # "stale").
            lost = t1["lost_bytes"] if t1 else 0
            check(c is not None and (bad["lost"] + bad["errors"] > 0 if lost else not any(bad.values())),
                  "%s: the workload ran to its end; the %d bytes the tier lost it was told of (%s %s)"
                  % (what, lost, o.strip(), e.strip()[-600:]))
        # The daemon serves on: new writes go home, nothing to the tier.
        p2 = records(d, after, 2.0, seed + 1, mib=16)
        collect(p2, "%s: a workload after the failure" % what)
        t2 = st.tier(d.status())
        print("tiererror %s: after a second workload: %s" % (what, json.dumps(t2)))
        # (MIOS may send nothing more to its tier: then no fallbacks.)
        check(d.alive() and t2["failed"] and t2["written_bytes"] == t1["written_bytes"]
              and (t2["fallbacks"] > t0["fallbacks"] or policy != "bid-hybrid"),
              "%s: the daemon serves on, writes go home (fallbacks %d -> %d), none to the tier (%s)"
              % (what, t0["fallbacks"], t2["fallbacks"], json.dumps(t2)))
        home = digests(st.home)
        rc = d.stop()
        log = d.log()
        check(rc == 0, "%s: iosigd exits 0 on SIGTERM (%r)" % (what, rc))
        for line in log.splitlines():
            if "tier t:" in line and ("error" in line or "empty" in line):
                print("  %s: %s" % (what, line.strip()))
        emptied = "is empty now" in log
        told = any(st.store in line and "remove" in line for line in log.splitlines() if "error" in line)
        check(emptied or told, "%s: the daemon emptied the failed tier's store or said to remove it (%s)"
              % (what, [x for x in log.splitlines() if "tier t" in x][-4:]))
        if mode == "vanish":
            evict(st.store)   # as after a reboot: the store is read from its device
            started, log2 = Daemon(s, "d2-%s-%s" % (mode, policy), st.config).refused()
            check(not started and st.store in log2, "%s: the store on a device gone: iosigd refuses to "
                  "start, naming it (%s)" % (what, log2.strip()[-300:]))
            return
        # The device repaired; its store removed when the daemon said so:
        # a new daemon changes no home file.
        fs.repair()
        if told and not emptied:
            os.unlink(st.store)
        d2 = daemon_for(s, st, "d2-%s-%s" % (mode, policy))
        rec = recovery_lines(d2)
        diff = differing(home, digests(st.home))
        check(not diff, "%s: after the repair a new daemon changes no home file (%s; recovery %s)"
              % (what, diff[:5], rec))
        check(d2.stop() == 0, "%s: the new daemon exits 0" % what)
    finally:
        Daemon.kill_all()
        for fs in fss:
            fs.close()


def test_tiererror():
    need_root()
    for tool in ("losetup", "fallocate"):
        if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
            skip("%s not found (util-linux)" % tool)
    s = Scratch("iosigd-terr.")
    modes = [m for m in os.environ.get("IOSIGD_TIERERR_MODES", "fill,vanish").split(",") if m]
    try:
        for i, policy in enumerate(PERSISTENT):
            for k, mode in enumerate(modes):
                tiererror_on(s, policy, mode, 600 + 10 * i + k)
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# overwrite: an acknowledged write home over the tier's copy, then kill -9
# ---------------------------------------------------------------------------

# A block goes to the tier, its overwrite home over that copy (mios-e with
# an idle HDD and W_f of 8 KiB: the first 4 KiB are a Fast-state write to
# the HDD's log, the second would end the Fast state and goes to the SSD),
# read back (ordered after the overwrite: it completed), then the daemon is
# killed.  The overwrite completes only once a HOME record says its range is
# newer at home; the first sync round of a daemon's life once skipped the
# file (its round number 0 read as "no round wanted") and completed the
# write without it, so recovery copied the older tier data over it.
OVERWRITE_WORKLOAD = r'''
import os, sys, time
path = sys.argv[1]
fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
old, new = b"A" * 4096, b"B" * 4096
os.pwrite(fd, old, 0)
os.pwrite(fd, new, 0)
back = os.pread(fd, 4096, 0)
print("BACK " + ("new" if back == new else "old" if back == old else "other"), flush=True)
time.sleep(600)
'''


def test_overwrite():
    need_root()
    s = Scratch("iosigd-tover.")
    with open(s.path("over.py"), "w") as f:
        f.write(OVERWRITE_WORKLOAD)
    try:
        for policy in [p for p in POLICIES if p == "mios-e"]:
            st = Setup(s, "over-" + policy, policy, ":w_fast=8KiB,idle_reset=0,L=4")
            rounds = int(os.environ.get("IOSIGD_TIER_KILLS", "5"))
            for r in range(rounds):
                d = daemon_for(s, st, "d-over-%d" % r)
                work = os.path.join(st.home, "o%d" % r)
                os.makedirs(work)
                target = os.path.join(work, "block")
                env = dict(os.environ)
                env.update(d.env())
                p = subprocess.Popen([REDIRECT, "-q", "-s", "random size_per_io(4*KiB)", work + "/**", "--",
                                      sys.executable, s.path("over.py"), target],
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                line = p.stdout.readline().strip()
                stat = d.status()
                t, dv = st.tier(stat), device_of(stat, st.home)
                counters = (dv or {}).get("counters") or {}
                check(line == "BACK new", "%s round %d: the overwrite reads back (%r)" % (policy, r, line))
                check(t is not None and t["written_bytes"] >= 4096 and counters.get("redirected_writes") == 1
                      and counters.get("ssd_writes", 0) >= 1,
                      "%s round %d: the first write went to the tier, the overwrite home (%s %s)"
                      % (policy, r, json.dumps(t), json.dumps(counters)))
                d.kill9()
                p.kill()
                p.wait()
                mark = len(d.log())
                d2 = daemon_for(s, st, "d-over-%d" % r)
                with open(target, "rb") as f:
                    got = f.read()
                check(got == b"B" * 4096,
                      "%s round %d: after kill -9 and recovery the acknowledged overwrite is home (%s; %s)"
                      % (policy, r, "old data" if got == b"A" * 4096 else "%d bytes" % len(got),
                         recovery_lines(d2, mark)))
                check(d2.stop() == 0, "%s round %d: the daemon after it exits 0" % (policy, r))
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# protocol: a tiered registration's writes carry their data
# ---------------------------------------------------------------------------

def granted_written(d, st, policy):
    """A client by hand: a 1 MiB write its policy sends home as it is
    completes with IOSD_R2_HOME, a WRITTEN entry after it is taken (and
    counted), the file is as written; a second registration of the file
    marks the ring shared (no WRITTEN then)."""
    data_bytes, data_off = 4 << 20, 4096
    size = data_off + data_bytes
    target = os.path.join(st.home, "granted")
    before = (device_of(d.status(), st.home) or {}).get("writes_direct", 0)
    mark = len(d.log())
    h = Hostile(d)
    try:
        h.hello(memfd=h.ring(size), data=data_bytes, nbytes=size)
        h.register(target)
        mm = mmap.mmap(h.memfd, size)
        one, two = os.urandom(1 << 20), os.urandom(1 << 20)

        def put(pos, e):
            mm[256 + 64 * pos:256 + 64 * (pos + 1)] = e
            mm[64:68] = struct.pack("<I", pos + 1)
            os.eventfd_write(h.kick, 1)
            deadline = time.time() + 5
            while struct.unpack_from("<I", mm, 256 + 64 * pos + 56)[0] != 3 and time.time() < deadline:
                time.sleep(0.005)
            return struct.unpack_from("<qQI", mm, 256 + 64 * pos + 24)

        mm[data_off:data_off + len(one)] = one
        res, r2, _ = put(0, entry(off=0, length=len(one), doff=0, seq=0, op=1))
        check(res == len(one) and r2 == 1, "%s: a 1 MiB write its policy sends home completes with "
              "IOSD_R2_HOME (result %d, result2 %d)" % (policy, res, r2))
        with open(target, "r+b") as f:
            f.seek(1 << 20)
            f.write(two)
        res, _, _ = put(1, entry(off=1 << 20, length=len(two), seq=1, op=10))
        direct = (device_of(d.status(), st.home) or {}).get("writes_direct", 0) - before
        check(res == len(two) and direct == 1 and "session closed" not in d.log()[mark:],
              "%s: a WRITTEN entry after it is taken (result %d, writes_direct +%d)" % (policy, res, direct))
        # Read back through the daemon (its policy serves reads on a tiered
        # device, to the file's end as the daemon knows it).
        mm[data_off:data_off + len(two)] = bytes(len(two))
        res, _, _ = put(2, entry(off=1 << 20, length=len(two), doff=0, seq=2, op=3))
        check(res == len(two) and mm[data_off:data_off + len(two)] == two,
              "%s: a read of the range a WRITTEN entry wrote gets its bytes (result %d)" % (policy, res))
        h.register(target, handle=1)
        flags = struct.unpack_from("<I", mm, 132)[0]
        check(flags & 4, "%s: a second registration of the file marks the ring shared (flags %#x)"
              % (policy, flags))
        mm.close()
    finally:
        h.close()
    with open(target, "rb") as f:
        got = f.read()
    check(got == one + two, "%s: the file is as written (%d bytes)" % (policy, len(got)))


def test_protocol():
    need_root()
    s = Scratch("iosigd-tproto.")
    try:
        for policy in [p for p in POLICIES if p == "bid-hybrid"]:
            st = Setup(s, "proto-" + policy, policy)
            d = daemon_for(s, st, "d-proto-" + policy)
            # Large writes (dd bs=1M, pwrite of 256 KiB) of a tagged program:
            # through the ring, so the policy decides where each goes - and
            # once it sends them home as they are, written by dd itself.
            work = os.path.join(st.home, "work")
            os.makedirs(work)
            with open(os.path.join(work, "input"), "wb") as f:
                f.write(os.urandom(8 << 20))
            r, o, e = redirected(d, work, ["dd", "if=input", "of=big.out", "bs=1M", "status=none"], cwd=work)
            r2, o2, e2 = redirected(d, work, ["dd", "if=input", "of=pw.out", "bs=256k", "conv=notrunc",
                                              "status=none"], cwd=work)
            same = [open(os.path.join(work, x), "rb").read() == open(os.path.join(work, "input"), "rb").read()
                    for x in ("big.out", "pw.out")]
            check(r == r2 == 0 and all(same), "%s: dd of 1 MiB and 256 KiB blocks: exit 0, output identical (%r %r)"
                  % (policy, e[-200:], e2[-200:]))
            direct = (device_of(d.status(), st.home) or {}).get("writes_direct", 0)
            check("session closed" not in d.log() and "WRITTEN" not in d.log() and direct > 0,
                  "%s: dd's WRITTEN entries were taken (writes_direct: %d), no session closed"
                  % (policy, direct))
            # A client that sends WRITTEN for a tiered registration anyway.
            target = os.path.join(st.home, "hostile")
            h = Hostile(d)
            try:
                h.hello()
                reg = h.register(target)
                flags = struct.unpack_from("<I", reg[1], 16 + 8)[0] if reg and reg[1] else None
                check(reg is not None and reg[0] == 4 and flags == 1,
                      "%s: REGISTERED says IOSD_REG_TIERED (%r)" % (policy, flags))
                with open(target, "r+b") as f:
                    f.write(b"x" * (64 << 10))
                h.publish([entry(off=0, length=64 << 10, op=10)])
                h.drained()
            finally:
                h.close()
            log = d.log()
            check("names handle 0, whose device keeps data in a tier" in log and "session closed" in log,
                  "%s: a WRITTEN entry on a tiered registration closes the session (%s)"
                  % (policy, log.strip()[-300:]))
            check(d.alive(), "%s: the daemon survives it" % policy)
            granted_written(d, st, policy)
            collect(records(d, os.path.join(st.home, "honest"), 1.0, 5), "%s: an honest client after it" % policy)
            check(d.stop() == 0, "%s: iosigd exits 0" % policy)
    finally:
        Daemon.kill_all()
        s.close()


GROUPS = {"overwrite": test_overwrite, "fallback": test_fallback, "protocol": test_protocol, "programs": test_programs, "faults": test_faults, "powerloss": test_powerloss,
          "stale": test_stale, "readahead": test_readahead, "reshape": test_reshape, "badstores": test_badstores,
          "tiererror": test_tiererror}


if __name__ == "__main__":
    sys.exit(run_group(GROUPS, "tiers_test.py"))
