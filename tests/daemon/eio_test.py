#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Errors of the kernel through iosigd (docs/daemon.md "Semantics"): a
tagged program sees them no later than a plain one would.

Groups (eio_test.py GROUP):
  writeback  ext4 and xfs on a loop device whose backing file lies on a
             tmpfs with almost no room left (the file system's free blocks
             trimmed away, the tmpfs filled but for 2 MiB): write() into
             the page cache succeeds, the write-back fails in the block
             layer (here ENOSPC: "critical space allocation error"; a
             device's EIO takes the same path).  `dwork errors` plainly and
             under iosig-redirect through the daemon with noop, deadline
             and bid-hdd, in 16 KiB writes (through the ring; 1 MiB ones,
             which the client puts into the page cache, with noop): the tagged program sees the plain program's errno
             at the same fsync (and, without fsync, at close at the
             latest); meanwhile a client on a healthy mount loses nothing
             and the daemon lives on
  enospc     a small ext4 and xfs filled by write(): plainly write() fails
             with ENOSPC; tagged, write() returns at once (the daemon writes
             into the page cache later) and ENOSPC reaches the program at
             the next fsync, or at close without one

Each group runs in a private mount namespace (it re-executes itself under
unshare), with its own daemons, sockets, configurations and mounts.  Loop
devices are set up with `mount -o loop` (freed at unmount) and left
writable.  Needs root; exit 77 = skipped, with the reason printed.
"""
import errno
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from daemon_test import (DWORK, Daemon, collect, config, records, redirected,  # noqa: E402
                         run_group, serving)
from iosig_testlib import BackedFs, Scratch, check, need_root, run, skip  # noqa: E402

POLICIES = ["noop", "deadline", "bid-hdd"]
SIZES = {"ext4": 64, "xfs": 320}          # MiB of the file system (mkfs.xfs wants 300 at least)
WRITE_MIB = 16                            # what the program writes
# How the tagged program writes: small writes go through the ring (the
# daemon puts them into the page cache), large ones the client puts into
# the page cache itself and hands their write-back to the daemon
# (IOSD_WRITTEN_MIN); the second way with the first policy only.
WAYS = [("ring", 16), ("direct", 1024)]
BACKING_FREE_MIB = 2                      # what its device can still store


class Fs(BackedFs):
    """A file system of `fstype` at mnt on a loop device whose image lies
    on a tmpfs of its own (BackedFs); `fail`: its free blocks trimmed away
    and the tmpfs then filled but for BACKING_FREE_MIB, so that the device
    fails writes of blocks it did not store yet."""

    def __init__(self, mnt, fstype, fail):
        mkfs = {"ext4": ["-q", "-F", "-E", "nodiscard"], "xfs": ["-q", "-f", "-K"]}[fstype]
        # Every block of the image is stored (fallocate), mkfs does not
        # discard them; fstrim then discards the free ones: the file
        # system's own blocks stay, its free blocks cost new tmpfs pages.
        super().__init__(mnt, fstype, SIZES[fstype], mkfs)
        if fail:
            self.trim()
            left = self.fill(BACKING_FREE_MIB << 20)
            check(left <= (BACKING_FREE_MIB + 1) << 20,
                  "%s: the device can store %d KiB more" % (fstype, left >> 10))


def name(e):
    return errno.errorcode.get(e, str(e)) if e else "0"


def errors(r, o, e, what):
    """dwork errors' JSON line, or None (a failed check)."""
    try:
        return json.loads(o.strip().splitlines()[-1]) if r == 0 else None
    except (ValueError, IndexError):
        pass
    check(False, "%s: dwork errors ran (%d %r %r)" % (what, r, o, e))
    return None


def first_error(res, mode):
    """(step, errno) of the first error the program saw."""
    for step in ("write", "fsync", "fsync2", "close") if mode == "fsync" else ("write", "close"):
        if res[step]:
            return step, res[step]
    return None, 0


def written(d, other):
    """What the daemon wrote to the devices not mounted at `other`: the
    failing file systems, one device each (all kept in its status; named
    by their mount point or, when the loop device is one the daemon did
    not see at its start, by its number)."""
    return sum(x["bytes_written"] for x in d.status()["devices"] if x["mount"] != other)


def idle(d, timeout=30):
    """Waits until no client session is left (the daemon closed its
    copies of the files)."""
    until = time.time() + timeout
    while d.status()["clients"] and time.time() < until:
        time.sleep(0.05)


# ---------------------------------------------------------------------------
# write-back fails
# ---------------------------------------------------------------------------

def writeback_on(s, fstype):
    mnt = s.path("fail-" + fstype)
    ok = s.mount_ext4("ok-" + fstype, "128M")
    plain = {}
    for mode in ("fsync", "close"):
        fs = Fs(mnt, fstype, True)
        try:
            r, o, e = run([DWORK, "errors", os.path.join(mnt, "f"), str(WRITE_MIB), mode])
            plain[mode] = errors(r, o, e, "%s plain %s" % (fstype, mode))
        finally:
            fs.close()
        if not plain[mode]:
            return
    # What the kernel does here: write() succeeds, the first fsync reports
    # the failed write-back; without fsync, close says nothing.
    p = plain["fsync"]
    check(p["write"] == 0 and p["acked"] == WRITE_MIB << 20 and p["fsync"] != 0,
          "%s: plainly, write() succeeds and fsync fails (%s)" % (fstype, json.dumps(p)))
    check(plain["close"]["write"] == 0 and plain["close"]["close"] == 0,
          "%s: plainly, without fsync, close succeeds (%s)" % (fstype, json.dumps(plain["close"])))
    print("note: %s: the device's failed write reaches fsync as %s, then %s" % (fstype, name(p["fsync"]),
                                                                               name(p["fsync2"])))
    for policy in POLICIES:
        cfg = config([(mnt, "hdd"), (ok, "hdd")], policy)
        with serving(s, "d-%s-%s" % (fstype, policy), cfg, "%s %s" % (fstype, policy)) as d:
            for (way, kib), mode in [(w, m) for w in WAYS[:1 if policy != POLICIES[0] else None]
                                     for m in ("fsync", "close")]:
                what = "%s %s %s %s" % (fstype, policy, way, mode)
                work = os.path.join(ok, "%s-%s-%s" % (policy, way, mode))
                os.makedirs(work)
                fs = Fs(mnt, fstype, True)
                try:
                    # A client on a healthy mount writes, fsyncs and reads
                    # checked records meanwhile.
                    other = records(d, work, 60, 7, mib=4)
                    before = written(d, ok)
                    r, o, e = redirected(d, mnt, [DWORK, "errors", os.path.join(mnt, "f"), str(WRITE_MIB), mode,
                                                  str(kib)], sig="sequential")
                    res = errors(r, o, e, what)
                    after = written(d, ok)
                    collect(other, "%s: the client on a healthy mount" % what)
                    idle(d)
                finally:
                    fs.close()
                if not res:
                    continue
                check(after - before >= WRITE_MIB << 20, "%s: the daemon wrote the file (%d bytes)%s"
                      % (what, after - before, "" if after - before >= WRITE_MIB << 20 else
                         " " + json.dumps([(x["mount"], x["bytes_written"]) for x in d.status()["devices"]])))
                step, err = first_error(res, mode)
                if mode == "fsync":
                    check(res["write"] == 0 and res["acked"] == WRITE_MIB << 20,
                          "%s: write() succeeds, as plainly (%s)" % (what, json.dumps(res)))
                    check(step == "fsync" and err == p["fsync"],
                          "%s: the first fsync fails with the plain run's %s (%s)"
                          % (what, name(p["fsync"]), json.dumps(res)))
                else:
                    # Plainly close says nothing; tagged, it may report the
                    # failed write-back already (never later than fsync
                    # would), with the same errno.
                    check(res["write"] == 0 and res["close"] in (0, p["fsync"]),
                          "%s: write() succeeds; close returns 0 or the plain fsync's %s (%s)"
                          % (what, name(p["fsync"]), json.dumps(res)))
                check(d.alive(), "%s: the daemon lives on" % what)


def test_writeback():
    need_root()
    for tool in ("fstrim", "fallocate"):
        if not subprocess.run(["sh", "-c", "command -v " + tool], capture_output=True).stdout:
            skip("%s not found (util-linux)" % tool)
    s = Scratch("iosigd-eio.")
    try:
        writeback_on(s, "ext4")
        writeback_on(s, "xfs")
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# the file system fills
# ---------------------------------------------------------------------------

def enospc_on(s, fstype):
    mnt = s.path("full-" + fstype)
    size = SIZES[fstype]
    plain = {}
    for mode in ("fsync", "close"):
        fs = Fs(mnt, fstype, False)
        try:
            r, o, e = run([DWORK, "errors", os.path.join(mnt, "f"), str(size + 8), mode])
            plain[mode] = errors(r, o, e, "%s plain %s" % (fstype, mode))
        finally:
            fs.close()
        if not plain[mode]:
            return
        check(plain[mode]["write"] == errno.ENOSPC and plain[mode]["acked"] < size << 20,
              "%s %s: plainly, write() fails with ENOSPC (%s)" % (fstype, mode, json.dumps(plain[mode])))
    for policy in POLICIES:
        cfg = config([(mnt, "hdd")], policy)
        with serving(s, "f-%s-%s" % (fstype, policy), cfg, "%s %s" % (fstype, policy)) as d:
            for (way, kib), mode in [(w, m) for w in WAYS[:1 if policy != POLICIES[0] else None]
                                     for m in ("fsync", "close")]:
                what = "%s %s %s %s" % (fstype, policy, way, mode)
                fs = Fs(mnt, fstype, False)
                try:
                    r, o, e = redirected(d, mnt, [DWORK, "errors", os.path.join(mnt, "f"), str(size + 8), mode,
                                                  str(kib)], sig="sequential")
                    res = errors(r, o, e, what)
                    idle(d)
                finally:
                    fs.close()
                if not res:
                    continue
                step, err = first_error(res, mode)
                check(err == errno.ENOSPC and step in ("write", mode),
                      "%s: ENOSPC reaches the program at write() or at the %s at the latest (%s: %s)"
                      % (what, mode, step, json.dumps(res)))
                print("note: %s: tagged, ENOSPC shows at %s" % (what, step))
                check(d.alive(), "%s: the daemon lives on" % what)


def test_enospc():
    need_root()
    s = Scratch("iosigd-enospc.")
    try:
        enospc_on(s, "ext4")
        enospc_on(s, "xfs")
    finally:
        Daemon.kill_all()
        s.close()


GROUPS = {"writeback": test_writeback, "enospc": test_enospc}

if __name__ == "__main__":
    sys.exit(run_group(GROUPS, "eio_test.py"))
