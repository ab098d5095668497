#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of iosigd with real processes on real mounts (docs/daemon.md).

Groups (daemon_test.py GROUP):
  cli       iosigd's command line: --help, --version, bad options, a bad
            configuration, a socket path taken by a live daemon or by a
            file, SIGTERM with nothing queued (no root needed); the client:
            one connect per 5 s when nothing answers, no daemon of another
            user trusted (root); --check-config; `iosig status` (text and
            --json) against a daemon with a real client, and with none
  systemd   socket activation (systemd-socket-activate, and LISTEN_FDS
            passed by hand): a client served through the inherited socket;
            READY=1 and STOPPING=1 on a NOTIFY_SOCKET the test owns; SIGTERM
            drains a writing client; `systemd-analyze verify` of the units
  user      `iosigd --user` as an unprivileged user (root needed to become
            one): the socket in its XDG_RUNTIME_DIR, found by its programs
            and by `iosig status`; refused runtime directories; other users
            refused by the daemon
  programs  ext4 and xfs loop mounts, every home-device policy: dd, tar,
            gzip and sqlite3 (a real workload, PRAGMA integrity_check) under
            iosig-redirect, and dwork's every-call program built plainly
            under iosig-redirect and with the gcc plugin, through the daemon:
            outputs and files byte-identical to plain runs, and the daemon
            did the I/O (its status counts it)
  stdio     ext4 and xfs loop mounts, every home-device policy: dstdio (every
            stdio use on annotated fopen streams) and dstream (C++ streams)
            built plainly under iosig-redirect and with the gcc plugin, through the daemon:
            output and files byte-identical to a plain run, and the daemon
            did the streams' bytes; without a daemon the same output; a
            stream filling a small ext4: ENOSPC by fclose, plainly and tagged
  xproc     read-after-write between two processes that tagged one file,
            with policies that hold writes back; fsync: every block written
            before it is on the device (read below the filesystem); a file
            registered by two sessions: both rings say IOSD_RING_SHARED
            before the second hears REGISTERED, a third session's not
  faults    kill -9 of the daemon at random points of checksummed
            write/fsync/read workloads (IOSIGD_KILLS, default 24): nothing a
            write() acknowledged is lost, no read is stale or torn; a
            restarted daemon tags new opens again
  clients   kill -9 of clients: the daemon survives, the others lose nothing,
            the dead clients' resources are freed
  hostile   a client sending malformed, truncated, oversized messages and
            corrupt ring entries: its session is closed with a logged reason,
            the daemon goes on, no descriptor or memory leaks
  load      64 clients at once (IOSIGD_LOAD_SECONDS, default 3): 0
            mismatches, no leaked descriptors or memory in the daemon
  writeback when a file's dirty data goes to its policy: not while a
            writer is below the dirty threshold; beyond it, after `expire`,
            at fsync and at the last close (which wait for it); with noop
            and bid-hdd; the data on the device after each

Every group runs in a private mount namespace (it re-executes itself under
unshare), starts its own daemons with private sockets and configurations,
and leaves none running: each daemon dies with the test (PR_SET_PDEATHSIG).
Programs come from the environment (CMakeLists.txt): IOSIGD, IOSIG_REDIRECT,
IOSIG_TOOL, DWORK, DWORK_SRC, DSTDIO, DSTDIO_SRC, DSTREAM, DSTREAM_SRC, the units IOSIGD_UNITS (built) and
IOSIGD_UNITS_SRC and, for plugin builds, IOSIG_GCC, IOSIG_GCC_PLUGIN,
IOSIG_INCLUDE, IOSIG_LIBDIR.  Exit 77 = skipped, with the reason printed.
"""
import contextlib
import ctypes
import json
import mmap
import os
import random
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from iosig_testlib import (Scratch, check, differing, finish, make_input, need_root, run,  # noqa: E402
                           skip, sqlite_workload, tree, write_config)

IOSIGD = os.environ.get("IOSIGD", "iosigd")
REDIRECT = os.environ.get("IOSIG_REDIRECT", "iosig-redirect")
TOOL = os.environ.get("IOSIG_TOOL", "iosig")
DWORK = os.environ.get("DWORK", "dwork")
DSTDIO = os.environ.get("DSTDIO", "dstdio")
DSTREAM = os.environ.get("DSTREAM", "dstream")
POLICIES = ["noop", "deadline", "cfq", "bfq", "bid-hdd", "burst"]

# ---------------------------------------------------------------------------
# the daemon
# ---------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


MAGIC = 0x44534f49


PROTO_VERSION = 2   # IOSD_VERSION (iosigd/proto/proto.h)


def msg(mtype, body=b"", seq=1, version=PROTO_VERSION, magic=MAGIC, length=None):
    n = 16 + len(body) if length is None else length
    return struct.pack("<IHHII", magic, version, mtype, n, seq) + body


class Daemon:
    """An iosigd in the foreground with a private socket and configuration;
    it dies with this process whatever happens."""

    all = []

    def __init__(self, s, name, config, extra_args=(), env=None):
        self.dir = s.path(name)
        os.makedirs(self.dir, exist_ok=True)
        self.sock = os.path.join(self.dir, "iosigd.sock")
        self.cfg = os.path.join(self.dir, "config.yaml")
        with open(self.cfg, "w") as f:
            f.write(config)
        self.logpath = os.path.join(self.dir, "iosigd.log")
        self.extra = list(extra_args)
        self.envp = env
        self.p = None
        Daemon.all.append(self)

    def refused(self):
        """Starts it expecting a refusal: (whether it started, its log)."""
        try:
            self.start()
            return True, self.log()
        except RuntimeError:
            return False, self.log()

    def start(self):
        log = open(self.logpath, "a")
        self.p = subprocess.Popen([IOSIGD, "--foreground", "--socket", self.sock, "--config", self.cfg, "-v"]
                                  + self.extra, stdout=log, stderr=log, preexec_fn=_die_with_parent,
                                  env=self.envp)
        log.close()
        for _ in range(500):
            if self.p.poll() is not None:
                break
            try:
                c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                c.connect(self.sock)
                c.close()
                return self
            except OSError:
                time.sleep(0.01)
        raise RuntimeError("iosigd did not start: " + self.log())

    def env(self):
        return {"IOSIG_DAEMON_SOCKET": self.sock, "IOSIG_CONFIG": self.cfg}

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def stop(self):
        """SIGTERM; the exit status (0 when it drained and exited)."""
        if not self.alive():
            return self.p.returncode if self.p else None
        self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return "hung"

    def kill9(self):
        self.p.kill()
        self.p.wait()

    def log(self):
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def status(self):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        c.settimeout(10)
        c.connect(self.sock)
        c.send(msg(6))
        text = b""
        while True:
            m = c.recv(9000)
            flags, n = struct.unpack_from("<II", m, 16)
            text += m[24:24 + n]
            if not flags & 1:
                break
        c.close()
        return json.loads(text)

    def fd_list(self):
        out = []
        for n in sorted(os.listdir("/proc/%d/fd" % self.p.pid), key=int):
            try:
                out.append("%s->%s" % (n, os.readlink("/proc/%d/fd/%s" % (self.p.pid, n))))
            except OSError:
                pass
        return out

    def quiet_fds(self, timeout=10):
        """fd_list() once the daemon holds no connection (start() and
        status() connect; the daemon closes its end when it sees the
        hang-up, which may come after they return): a descriptor count
        to compare with.  After timeout seconds, as it is."""
        deadline = time.time() + timeout
        while True:
            fds = self.fd_list()
            socks = set(re.findall(r"socket:\[(\d+)\]", " ".join(fds)))
            listening = set()
            with open("/proc/net/unix") as f:
                next(f)
                for line in f:
                    w = line.split()   # Num RefCount Protocol Flags Type St Inode [Path]
                    if int(w[3], 16) & 0x10000:   # __SO_ACCEPTCON
                        listening.add(w[6])
            if socks <= listening or time.time() > deadline:
                return fds
            time.sleep(0.05)

    def rss_kib(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    @classmethod
    def kill_all(cls):
        for d in cls.all:
            if d.alive():
                d.p.kill()
                d.p.wait()


@contextlib.contextmanager
def serving(s, name, cfg, what, env=None):
    """A daemon for a `with` block; on the way out it must stop with 0."""
    d = Daemon(s, name, cfg, env=env).start()
    try:
        yield d
    finally:
        rc = d.stop()
        check(rc == 0, "%s: iosigd exits 0 on SIGTERM (%r)" % (what, rc))


def config(mounts, policy, devices_extra=""):
    """A catalog configuration with only `mounts` (mount point, class) and
    a daemon: section giving each the policy."""
    lines = []
    for mnt, cls in mounts:
        lines.append((mnt, mnt + "/iosig-data", ["class: " + cls]))
    path = tempfile.mktemp()
    write_config(path, lines)
    with open(path) as f:
        text = f.read()
    os.unlink(path)
    text += "daemon:\n  policy: %s\n  devices:\n" % policy
    for mnt, _ in mounts:
        text += '    "%s": { queue_depth: 4%s }\n' % (mnt, devices_extra)
    return text


def device_of(st, mnt):
    for d in st["devices"]:
        if d["mount"] == mnt:
            return d
    return None


# ---------------------------------------------------------------------------
# programs built with the plugin
# ---------------------------------------------------------------------------

def plugin_build(s, src, out, extra=()):
    """src compiled with the gcc plugin and linked with libiosig.so (and
    `extra`); None when the plugin was not built (the caller skips that
    part)."""
    cc = os.environ.get("IOSIG_GCC")
    plugin = os.environ.get("IOSIG_GCC_PLUGIN")
    if not cc or not plugin or not os.path.exists(plugin):
        return None
    libdir = os.environ["IOSIG_LIBDIR"]
    args = [cc, "-fplugin=" + plugin, "-O2", "-Wall", "-I", os.environ["IOSIG_INCLUDE"], src, "-o", out,
            "-L", libdir, "-liosig", "-Wl,-rpath," + libdir] + list(extra)
    args += shlex.split(os.environ.get("IOSIG_E2E_LDFLAGS", ""))
    r, o, e = run(args)
    if r:
        check(False, "build %s with the gcc plugin: %s" % (os.path.basename(src), e))
        return None
    return out


def dwork_plugin(s):
    return plugin_build(s, os.environ.get("DWORK_SRC", ""), s.path("dwork-plugin"))


def redirected(d, rules_dir, args, sig="random size_per_io(4*KiB)", **kw):
    """args under iosig-redirect with a rule tagging every file in rules_dir."""
    env = d.env() if d else {"IOSIG_DAEMON_SOCKET": ""}
    if "env" in kw:
        env.update(kw.pop("env"))
    return run([REDIRECT, "-q", "-s", sig, rules_dir + "/**", "--"] + args, env=env, **kw)


# ---------------------------------------------------------------------------
# programs
# ---------------------------------------------------------------------------

STEPS = [
    ["dd", "if=input", "of=dd.out", "bs=4k", "status=none"],
    ["dd", "if=input", "of=dd.sync", "bs=64k", "oflag=sync", "status=none"],
    ["tar", "cf", "src.tar", "src"],
    ["sh", "-c", "mkdir -p out && tar xf src.tar -C out"],
    ["gzip", "-k", "input"],
    ["sh", "-c", "gzip -dc input.gz > unzipped && cat unzipped | wc -c"],
]


def prepare_tree(d):
    make_input(os.path.join(d, "input"), 60000)
    os.makedirs(os.path.join(d, "src", "logs"))
    for i in range(40):
        make_input(os.path.join(d, "src", "logs", "%d.log" % i), 100 + 13 * i)
    for sub, dirs, files in os.walk(d, topdown=False):
        for n in files + dirs:
            os.utime(os.path.join(sub, n), (1700000000, 1700000000))


def programs_on(s, fs, mnt, plugin_dwork):
    sql = sqlite_workload(2000, 100)
    for policy in POLICIES:
        with serving(s, "d-%s-%s" % (fs, policy), config([(mnt, "hdd")], policy), "%s %s" % (fs, policy)) as d:
            work, plain = os.path.join(mnt, "work-" + policy), os.path.join(mnt, "plain-" + policy)
            for x in (work, plain):
                os.makedirs(x)
                prepare_tree(x)
            for args in STEPS:
                r1, o1, e1 = redirected(d, work, args, cwd=work)
                r2, o2, e2 = run(args, cwd=plain)
                check(r1 == r2 == 0 and o1 == o2 and e1 == e2,
                      "%s %s: %s: same status and output as a plain run (%d %d %r)"
                      % (fs, policy, " ".join(args), r1, r2, e1))
            if shutil.which("sqlite3"):
                r1, o1, e1 = redirected(d, work, ["sqlite3", "app.db"], cwd=work, input=sql.encode())
                r2, o2, e2 = run(["sqlite3", "app.db"], cwd=plain, input=sql.encode())
                check(r1 == r2 == 0 and o1 == o2 and o1.strip().endswith("ok"),
                      "%s %s: sqlite3 workload: same output, integrity_check ok (%r)" % (fs, policy, e1[-300:]))
                q = "select count(*), sum(qty) from item; select count(*) from log; pragma integrity_check;"
                a = redirected(d, work, ["sqlite3", "app.db", q], cwd=work)
                b = run(["sqlite3", "app.db", q], cwd=plain)
                check(a[0] == 0 and a[1] == b[1], "%s %s: sqlite3 reads the same back through the daemon" % (fs, policy))
            r1, o1, e1 = redirected(d, work, [DWORK, "calls", os.path.join(work, "calls")])
            r2, o2, e2 = run([DWORK, "calls", os.path.join(plain, "calls")])
            check(r1 == r2 == 0 and o1 == o2, "%s %s: every call returns what it returns plainly%s"
                  % (fs, policy, calls_differing(o1, o2)))
            if plugin_dwork:
                r3, o3, e3 = run([plugin_dwork, "calls", os.path.join(work, "calls-plugin")], env=d.env())
                check(r3 == 0 and o3 == o2, "%s %s: the plugin-built program too (%r)" % (fs, policy, e3))
            diff = differing(tree(work), tree(plain))
            diff = [x for x in diff if x != "calls-plugin"]
            check(not diff, "%s %s: every file is byte-identical to the plain run's %s" % (fs, policy, diff[:5]))
            st = d.status()
            dv = device_of(st, mnt)
            check(dv is not None and dv["policy"] == policy and dv["bytes_written"] > 10 << 20 and
                  dv["bytes_read"] > 0 and st["daemon"]["operations"] > 1000,
                  "%s %s: the daemon did the I/O (%s)" % (fs, policy, json.dumps(dv)))
            check(not st["clients"], "%s %s: no client session is left" % (fs, policy))


def calls_differing(tagged, plain):
    """The lines of `dwork calls` output that differ, for a check's message."""
    return "" if tagged == plain else "\n" + "\n".join(
        "  tagged: %s\n  plain:  %s" % (x, y) for x, y in zip(tagged.splitlines(), plain.splitlines()) if x != y)


def test_programs():
    need_root()
    s = Scratch("iosigd-prog.")
    try:
        plugin_dwork = dwork_plugin(s)
        if not plugin_dwork:
            print("note: no gcc plugin: plugin-built programs are not run")
        programs_on(s, "ext4", s.mount_ext4("ext4", "256M"), plugin_dwork)
        programs_on(s, "xfs", s.mount_xfs("xfs"), plugin_dwork)
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# stdio
# ---------------------------------------------------------------------------

STDIO_MIB = 3   # what each program writes and reads back through its streams, at least


def stdio_on(s, fs, mnt, progs):
    """progs: (name, plain binary, plugin-built binary or None)."""
    for name, plain_bin, plugin_bin in progs:
        plain = os.path.join(mnt, "%s-plain" % name)
        os.makedirs(plain)
        r0, o0, e0 = run([plain_bin, plain])
        check(r0 == 0 and not e0 and o0.count("\n") >= 8, "%s: %s runs plainly (%r)" % (fs, name, e0))
        if plugin_bin:
            # No daemon: the plain streams, the same output.
            nod = os.path.join(mnt, "%s-nodaemon" % name)
            os.makedirs(nod)
            cfg = s.path("%s-%s.yaml" % (name, fs))
            with open(cfg, "w") as f:
                f.write(config([(mnt, "hdd")], "noop"))
            r, o, e = run([plugin_bin, nod], env={"IOSIG_DAEMON_SOCKET": s.path("no-daemon.sock"),
                                                  "IOSIG_CONFIG": cfg})
            check(r == 0 and o == o0 and not differing(tree(nod), tree(plain)),
                  "%s: plugin-built %s without a daemon: output and files as plain (%r)" % (fs, name, e))
        for policy in POLICIES:
            with serving(s, "s-%s-%s-%s" % (name, fs, policy), config([(mnt, "hdd")], policy),
                         "%s %s" % (fs, policy)) as d:
                runs = [("iosig-redirect", lambda w: redirected(d, w, [plain_bin, w], sig="sequential"))]
                if plugin_bin:
                    runs.append(("plugin-built", lambda w: run([plugin_bin, w], env=d.env())))
                for how, fn in runs:
                    what = "%s %s %s %s" % (fs, policy, name, how)
                    work = os.path.join(mnt, "%s-%s-%s" % (name, policy, how))
                    os.makedirs(work)
                    before = device_of(d.status(), mnt)
                    r, o, e = fn(work)
                    after = device_of(d.status(), mnt)
                    check(r == 0 and o == o0, "%s: prints what it prints plainly (%r)%s"
                          % (what, e, "" if o == o0 else "\n" + "\n".join(
                              "  tagged: %s\n  plain:  %s" % (x, y)
                              for x, y in zip(o.splitlines(), o0.splitlines()) if x != y)))
                    diff = differing(tree(work), tree(plain))
                    check(not diff, "%s: every file is byte-identical to the plain run's %s" % (what, diff[:5]))
                    # The streams' bytes went through the daemon: without the
                    # hand-over the daemon would see none of them.
                    w = after["bytes_written"] - (before["bytes_written"] if before else 0)
                    rd = after["bytes_read"] - (before["bytes_read"] if before else 0)
                    check(w >= STDIO_MIB << 20 and rd >= STDIO_MIB << 20,
                          "%s: the daemon did the streams' I/O (%d written, %d read)" % (what, w, rd))
                for _ in range(100):   # the daemon sees the last client leave
                    if not d.status()["clients"]:
                        break
                    time.sleep(0.05)
                check(not d.status()["clients"], "%s %s: no client session is left" % (fs, policy))


def stdio_full(s, mnt, plugin_dstdio):
    """A stream filling its file system: ENOSPC reaches the program by
    fclose at the latest, plainly and through the daemon (as write-back:
    there at fclose, not at fwrite or fflush)."""
    plain = os.path.join(mnt, "full-plain")
    os.makedirs(plain)
    r, o, e = run([DSTDIO, plain, "64"])
    check(r == 0 and o == "error ENOSPC by fclose\n", "full: plainly, ENOSPC by fclose (%r %r)" % (o, e))
    shutil.rmtree(plain)
    with serving(s, "s-full", config([(mnt, "hdd")], "noop"), "full") as d:
        runs = [("iosig-redirect", lambda w: redirected(d, w, [DSTDIO, w, "64"], sig="sequential"))]
        if plugin_dstdio:
            runs.append(("plugin-built", lambda w: run([plugin_dstdio, w, "64"], env=d.env())))
        for how, fn in runs:
            work = os.path.join(mnt, "full-" + how)
            os.makedirs(work)
            free = os.statvfs(mnt).f_bavail
            before = device_of(d.status(), mnt)
            r, o, e = fn(work)
            after = device_of(d.status(), mnt)
            check(r == 0 and o == "error ENOSPC by fclose\n", "full %s: ENOSPC by fclose (%r %r)" % (how, o, e))
            w = after["bytes_written"] - (before["bytes_written"] if before else 0)
            check(w >= 16 << 20, "full %s: through the daemon (%d written)" % (how, w))
            shutil.rmtree(work)
            # The space comes back when the daemon closed its copy of the
            # file: once the session is gone and the file's write-backs are
            # done (a moment after the program's exit).
            until = time.time() + 30
            while (d.status()["clients"] or os.statvfs(mnt).f_bavail < free * 0.9) and time.time() < until:
                time.sleep(0.05)
            check(os.statvfs(mnt).f_bavail >= free * 0.9, "full %s: the space is free again after the file's removal"
                  % how)


def test_stdio():
    need_root()
    s = Scratch("iosigd-stdio.")
    try:
        progs = []
        for name, binary, src, extra in (("dstdio", DSTDIO, "DSTDIO_SRC", []),
                                         ("dstream", DSTREAM, "DSTREAM_SRC", ["-lstdc++"])):
            path = os.environ.get(src, "")
            built = plugin_build(s, path, s.path(name + "-plugin"), extra) if path else None
            if not built:
                print("note: no gcc plugin: the plugin-built %s is not run" % name)
            progs.append((name, binary, built))
        stdio_on(s, "ext4", s.mount_ext4("ext4", "256M"), progs)
        stdio_on(s, "xfs", s.mount_xfs("xfs"), progs)
        stdio_full(s, s.mount_ext4("small", "32M"), progs[0][2])
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# xproc and fsync
# ---------------------------------------------------------------------------

def ring_shared(h):
    """Whether h's ring says IOSD_RING_SHARED (hdr.flags: offset 132)."""
    mm = mmap.mmap(h.memfd, RING_BYTES)
    try:
        return bool(struct.unpack_from("<I", mm, 132)[0] & 4)
    finally:
        mm.close()


def shared_flags(s, mnt):
    """Sessions A and C register a file each, then B registers A's: when B
    hears REGISTERED, A's and B's rings say IOSD_RING_SHARED (their clients
    then send large writes through the ring), C's does not."""
    with serving(s, "d-shared", config([(mnt, "hdd")], "noop"), "shared flags") as d:
        f1, f2 = os.path.join(mnt, "shared-1"), os.path.join(mnt, "shared-2")
        hs = [Hostile(d) for _ in range(3)]
        a, b, c = hs
        try:
            for h in hs:
                h.hello()
            ra, rc = a.register(f1), c.register(f2)
            check(ra and ra[0] == 4 and rc and rc[0] == 4 and not ring_shared(a) and not ring_shared(c),
                  "one session per file: no ring says SHARED")
            rb = b.register(f1)
            check(rb and rb[0] == 4 and ring_shared(a) and ring_shared(b) and not ring_shared(c),
                  "a file of two sessions: both rings say SHARED when the second hears REGISTERED, "
                  "a third session's not (%s %s %s)" % (ring_shared(a), ring_shared(b), ring_shared(c)))
        finally:
            for h in hs:
                h.close()


def test_xproc():
    need_root()
    s = Scratch("iosigd-xproc.")
    try:
        mnt = s.mount_ext4("ext4", "256M")
        dev = s.device(mnt)
        shared_flags(s, mnt)
        plugin_dwork = dwork_plugin(s)
        # bid-hdd holding writes for up to 5 s: a read behind them must
        # expedite them rather than wait.
        specs = POLICIES + ["bid-hdd:wait_default=5s,wait_min=5s,wait_max=5s"]
        for policy in specs:
            with serving(s, "d-" + policy.replace(":", "_").replace(",", "_"),
                         config([(mnt, "hdd")], '"%s"' % policy), policy) as d:
                work = os.path.join(mnt, "x-" + str(specs.index(policy)))
                os.makedirs(work)
                t0 = time.time()
                r, o, e = redirected(d, work, [DWORK, "xproc", os.path.join(work, "shared"), "300"])
                dt = time.time() - t0
                check(r == 0 and '"mismatches": 0' in o,
                      "%s: 300 rounds of read-after-write between two tagged processes (%s %s)" % (policy, o.strip(), e))
                check(dt < 60, "%s: without waiting for the policy's timers (%.1f s)" % (policy, dt))
                r, o, e = redirected(d, work, [DWORK, "fsync", os.path.join(work, "durable"), dev, "64"],
                                     sig="sequential size_per_io(64*KiB)")
                check(r == 0 and '"missing": 0' in o,
                      "%s: after each fsync every earlier block is on %s (%s %s)" % (policy, dev, o.strip(), e))
                if plugin_dwork:
                    r, o, e = run([plugin_dwork, "xproc", os.path.join(work, "shared2"), "100"], env=d.env())
                    check(r == 0 and '"mismatches": 0' in o, "%s: the same, plugin-built (%s)" % (policy, o.strip()))
                st = d.status()
                dv = device_of(st, mnt)
                check(dv and dv["bytes_read"] > 0 and dv["bytes_written"] > 4 << 20,
                      "%s: through the daemon (%s)" % (policy, json.dumps(dv)))
                if policy.startswith("bid-hdd:"):
                    check(dv["expedited"] > 0, "%s: reads and fsyncs expedited what BID held (%d)" % (policy, dv["expedited"]))
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# faults: kill -9 of the daemon
# ---------------------------------------------------------------------------

def records(d, work, seconds, seed, binary=None, mib=64):
    """dwork records in work; its decision log (with the client's
    take-over warnings) goes to work + ".log"."""
    os.makedirs(work, exist_ok=True)
    args = [binary or DWORK, "records", work, str(seconds), str(seed), str(mib)]
    env = dict(os.environ)
    env.update(d.env())
    env["IOSIG_LOG"] = work + ".log"
    if binary:
        return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return subprocess.Popen([REDIRECT, "-q", "-s", "random size_per_io(4*KiB)", work + "/**", "--"] + args,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def takeovers(work):
    """(take-overs, operations they did) in a records() log."""
    n = ops = 0
    try:
        with open(work + ".log") as f:
            for line in f:
                m = re.search(r"ended \(.*?\): (\d+) operations done here", line)
                if m:
                    n += 1
                    ops += int(m.group(1))
    except OSError:
        pass
    return n, ops


def outcome(p):
    """(exit status, its JSON line or None, stdout, stderr) of a records()
    run, once it ended."""
    o, e = p.communicate(timeout=300)
    o, e = o.decode(), e.decode()
    try:
        c = json.loads(o.strip().splitlines()[-1])
    except (ValueError, IndexError):
        c = None
    return p.returncode, c, o, e


def collect(p, what):
    rc, c, o, e = outcome(p)
    ok = rc == 0 and c is not None and c["stale"] == c["torn"] == c["lost"] == c["errors"] == 0
    check(ok, "%s: nothing lost, stale or torn (%s %s)" % (what, o.strip(), e.strip()[-500:]))
    return c


def test_faults():
    need_root()
    kills = int(os.environ.get("IOSIGD_KILLS", "24"))
    s = Scratch("iosigd-faults.")
    totals = {"records": 0, "overwrites": 0, "fsyncs": 0, "reads": 0, "checked": 0, "bytes": 0,
              "takeovers": 0, "replayed": 0, "live_at_kill": 0}
    try:
        mnt = s.mount_ext4("ext4", "512M")
        plugin_dwork = dwork_plugin(s)
        rng = random.Random(int(os.environ.get("IOSIGD_SEED", "12345")))
        done = 0
        for cycle in range(kills):
            policy = POLICIES[cycle % len(POLICIES)]
            d = Daemon(s, "d%d" % cycle, config([(mnt, "hdd")], policy)).start()
            work = os.path.join(mnt, "c%d" % cycle)
            procs = [(records(d, work + "-rx", 2.0, 1000 + cycle), "cycle %d (%s) iosig-redirect" % (cycle, policy))]
            if plugin_dwork:
                procs.append((records(d, work + "-pl", 2.0, 2000 + cycle, plugin_dwork),
                              "cycle %d (%s) plugin-built" % (cycle, policy)))
            time.sleep(rng.uniform(0.05, 1.8))
            try:
                connected = [c.get("pid") for c in d.status().get("clients") or []]
            except OSError:
                connected = []
            d.kill9()
            done += 1
            # A client with a session that outlives the kill takes over (its
            # watcher notices at once, or its exit does).  One that had no
            # session yet (still starting: the kill may come 50 ms after it)
            # or had exited has nothing to take over.
            live = sum(1 for p, _ in procs if p.pid in connected and p.poll() is None)
            totals["live_at_kill"] += live
            print("  cycle %d: sessions at the kill %s, clients %s, alive after it %s"
                  % (cycle, connected, [p.pid for p, _ in procs], [p.poll() is None for p, _ in procs]))
            # Half of the time a new daemon starts at once: the clients go
            # on plainly, and new processes are tagged by it.
            if cycle % 2:
                d = Daemon(s, "d%d-restarted" % cycle, config([(mnt, "hdd")], policy)).start()
            for p, what in procs:
                c = collect(p, what)
                if c:
                    for k in c:
                        if k in totals:
                            totals[k] += c[k]
            for sub in ("-rx", "-pl"):
                n, ops = takeovers(work + sub)
                totals["takeovers"] += n
                totals["replayed"] += ops
                print("  cycle %d %s: take-overs %d (%d operations)" % (cycle, sub, n, ops))
                shutil.rmtree(work + sub, ignore_errors=True)
            if cycle % 2:
                p = records(d, work + "-after", 0.5, 3000 + cycle)
                collect(p, "cycle %d: a client of the restarted daemon" % cycle)
                shutil.rmtree(work + "-after", ignore_errors=True)
                st = d.status()
                check(st["daemon"]["operations"] > 0, "cycle %d: the restarted daemon tags new opens (%d operations)"
                      % (cycle, st["daemon"]["operations"]))
                check(d.stop() == 0, "cycle %d: the restarted daemon exits 0" % cycle)
        check(done >= kills, "%d kills of the daemon" % done)
        print("faults: %d kills; %s" % (done, json.dumps(totals)))
        check(totals["records"] > 1000 and totals["checked"] > totals["records"],
              "the workloads wrote and checked enough to mean something (%s)" % json.dumps(totals))
        # Clients that outlived their daemon wrote what its ring held.
        check(totals["takeovers"] >= totals["live_at_kill"] >= kills // 2 and totals["replayed"] > 0,
              "every client with a session that outlived a kill took over (%d take-overs, %d such clients "
              "at %d kills) and they wrote %d operations the daemon had not finished"
              % (totals["takeovers"], totals["live_at_kill"], kills, totals["replayed"]))
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# clients: kill -9 of clients
# ---------------------------------------------------------------------------

def test_clients():
    need_root()
    s = Scratch("iosigd-clients.")
    try:
        mnt = s.mount_ext4("ext4", "256M")
        for policy in ("noop", "bid-hdd"):
            with serving(s, "d-" + policy, config([(mnt, "hdd")], policy), policy) as d:
                base_fds = len(d.quiet_fds())
                procs = [records(d, os.path.join(mnt, "%s-%d" % (policy, i)), 3.0, 77 + i, mib=24) for i in range(6)]
                time.sleep(1.0)
                victims = procs[:2]
                for p in victims:
                    p.kill()
                for p in victims:
                    p.wait()
                check(d.alive(), "%s: the daemon survives two clients killed mid-write" % policy)
                for i, p in enumerate(procs[2:]):
                    collect(p, "%s: surviving client %d" % (policy, i))
                for _ in range(100):
                    st = d.status()
                    if not st["clients"]:
                        break
                    time.sleep(0.05)
                check(not st["clients"], "%s: every session is freed (%s)" % (policy, st["clients"]))
                # A file outlives its last session until its last operation
                # is done (a killed client's writes are still written): a
                # leak is a descriptor still held seconds later.
                for _ in range(50):
                    fds = d.quiet_fds(timeout=0.1)
                    if len(fds) == base_fds:
                        break
                    time.sleep(0.1)
                check(len(fds) == base_fds, "%s: the daemon holds as many descriptors as before (%d, %d: %s)"
                      % (policy, len(fds), base_fds, fds))
            for i in range(6):
                shutil.rmtree(os.path.join(mnt, "%s-%d" % (policy, i)), ignore_errors=True)
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# hostile clients
# ---------------------------------------------------------------------------

RING_N = 8
RING_D = 64 << 10
RING_DATA_OFF = 4096
RING_BYTES = RING_DATA_OFF + RING_D


def entry(off=0, length=0, doff=0, seq=0, handle=0, op=1, flags=0, aux=0, state=1, reserved=0):
    return struct.pack("<QQQqQIIHHIII", off, length, doff, 0, 0, seq, handle, op, flags, aux, state, reserved)


class Hostile:
    """A client that speaks the protocol by hand."""

    def __init__(self, d):
        self.c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.c.settimeout(5)
        self.c.connect(d.sock)
        self.fds = []

    def ring(self, size=RING_BYTES, seal=True):
        fd = os.memfd_create("hostile", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        os.ftruncate(fd, size)
        if seal:
            import fcntl
            fcntl.fcntl(fd, 1033, 2 | 4 | 1)   # F_ADD_SEALS: SHRINK | GROW | SEAL
        self.fds.append(fd)
        return fd

    def efd(self, flags=os.EFD_NONBLOCK):
        fd = os.eventfd(0, os.EFD_CLOEXEC | flags)
        self.fds.append(fd)
        return fd

    def hello(self, memfd=None, kick=None, entries=RING_N, data=RING_D, nbytes=RING_BYTES, fds=None):
        memfd = self.ring() if memfd is None else memfd
        kick = self.efd() if kick is None else kick
        body = struct.pack("<HHIIIQQ", PROTO_VERSION, PROTO_VERSION, os.getpid(), entries, 0, data, nbytes)
        socket.send_fds(self.c, [msg(1, body)], [memfd, kick] if fds is None else fds)
        self.memfd, self.kick = memfd, kick
        return self.recv()

    def register(self, path, handle=0, fd=None, ino=None):
        f = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self.fds.append(f)
        st = os.fstat(f)
        sig = b"random\0"
        body = struct.pack("<IIQQQQB3xI", handle, os.O_RDWR, st.st_dev, st.st_ino if ino is None else ino,
                           os.getpid(), 4096, 2, len(sig)) + sig
        socket.send_fds(self.c, [msg(3, body)], [f if fd is None else fd])
        return self.recv()

    def recv(self):
        try:
            m = self.c.recv(9000)
        except (socket.timeout, OSError):
            return None
        if len(m) < 16:
            return ("closed", None)
        return (struct.unpack_from("<H", m, 6)[0], m)

    def publish(self, entries, tail=None):
        mm = mmap.mmap(self.memfd, RING_BYTES)
        for i, e in enumerate(entries):
            mm[256 + 64 * i:256 + 64 * (i + 1)] = e
        mm[64:68] = struct.pack("<I", len(entries) if tail is None else tail)
        mm.close()
        os.eventfd_write(self.kick, 1)
        return self.recv()

    def drained(self):
        """Reads until the daemon closes the session (after its ERROR), 5 s at most."""
        self.c.settimeout(5)
        try:
            while self.c.recv(9000):
                pass
        except OSError:
            pass

    def close(self):
        self.c.close()
        for f in self.fds:
            os.close(f)


def scenarios(work):
    """(name, what the client does, text the daemon must log)."""
    f = os.path.join(work, "target")
    d = os.path.join(work, "dir")
    os.makedirs(d, exist_ok=True)

    def send(h, data):
        h.c.send(data)
        return h.recv()

    def ring_after_register(entries, tail=None):
        def do(h):
            h.hello()
            h.register(f)
            return h.publish(entries, tail)
        return do

    hello_body = struct.pack("<HHIIIQQ", PROTO_VERSION, PROTO_VERSION, 1, RING_N, 0, RING_D, RING_BYTES)
    return [
        ("garbage", lambda h: send(h, b"garbage!"), "truncated header"),
        ("bad magic", lambda h: send(h, msg(6, magic=0x1234)), "bad magic"),
        ("length lies", lambda h: send(h, msg(6, length=99)), "length field does not match"),
        ("truncated HELLO", lambda h: send(h, msg(1, hello_body[:10])), "truncated body"),
        ("oversized", lambda h: send(h, msg(6, b"x" * 9000)), "larger than the protocol allows"),
        ("unknown type", lambda h: send(h, msg(77)), "unknown message type"),
        ("future version", lambda h: send(h, msg(6, version=9)), "unsupported protocol version"),
        ("HELLO of version 1 only", lambda h: send(h, msg(1, struct.pack("<HHIIIQQ", 1, 1, 1, RING_N, 0, RING_D,
                                                                        RING_BYTES), version=1)),
         "unsupported protocol version"),
        ("WELCOME from a client", lambda h: send(h, msg(2, struct.pack("<HHIIIQ", PROTO_VERSION, 0, 1, 1, 0, 1))),
         "not a message clients send"),
        ("HELLO without descriptors", lambda h: h.hello(fds=[]), "HELLO with 0 descriptors"),
        ("HELLO with five descriptors", lambda h: h.hello(fds=[h.efd() for _ in range(5)]),
         "larger than the protocol allows"),
        ("HELLO with a file instead of a memfd", lambda h: h.hello(memfd=os.open("/etc/hostname", os.O_RDONLY)),
         "not a file of"),
        ("HELLO with an unsealed memfd", lambda h: h.hello(memfd=h.ring(seal=False)), "not sealed"),
        ("HELLO with a memfd of the wrong size", lambda h: h.hello(memfd=h.ring(size=RING_BYTES * 2)),
         "not a file of"),
        ("HELLO with a blocking eventfd", lambda h: h.hello(kick=h.efd(0)), "non-blocking eventfd"),
        ("HELLO with a pipe as eventfd", lambda h: h.hello(kick=os.pipe()[0]), "non-blocking eventfd"),
        ("HELLO with a bad geometry", lambda h: h.hello(entries=1000), "ring geometry not a power of two"),
        ("HELLO beyond the limits", lambda h: h.hello(entries=1 << 16, data=1 << 30,
                                                      nbytes=(256 + 64 * (1 << 16) + 4095) // 4096 * 4096 + (1 << 30)),
         "exceeds the limits"),
        ("HELLO twice", lambda h: (h.hello(), h.hello())[1], "HELLO after the handshake"),
        ("REGISTER before HELLO", lambda h: h.register(f), "REGISTER before HELLO"),
        ("REGISTER twice", lambda h: (h.hello(), h.register(f), h.register(f))[2], "registered already"),
        ("REGISTER beyond the handle limit", lambda h: (h.hello(), h.register(f, handle=1 << 30))[1],
         "beyond the limit"),
        ("UNREGISTER of nothing", lambda h: (h.hello(), send(h, msg(5, struct.pack("<II", 3, 0))))[1],
         "not registered"),
        ("ring: producer beyond the ring", ring_after_register([entry()], tail=RING_N + 3),
         "producer index is beyond the ring"),
        ("ring: unknown operation", ring_after_register([entry(op=42)]), "unknown operation"),
        ("ring: data outside the area", ring_after_register([entry(length=4096, doff=RING_D - 100)]),
         "data outside the data area"),
        ("ring: too long", ring_after_register([entry(length=RING_D)]), "data length out of range"),
        ("ring: wrong sequence", ring_after_register([entry(length=10, seq=5)]), "does not match its sequence"),
        ("ring: unknown handle", ring_after_register([entry(length=10, handle=9)]), "not registered"),
        ("ring: offset overflow", ring_after_register([entry(off=(1 << 64) - 10, length=100)]), "out of bounds"),
        ("ring: not published", ring_after_register([entry(length=10, state=3)]), "published state"),
        ("ring: reserved field", ring_after_register([entry(length=10, reserved=7)]), "reserved entry field"),
        ("ring: flags", ring_after_register([entry(length=10, flags=0x100)]), "unknown entry flags"),
        ("ring: fsync with arguments", ring_after_register([entry(op=4, off=3)]), "takes none"),
        ("ring: fallocate mode", ring_after_register([entry(op=8, length=10, aux=0x10000)]), "unknown mode"),
    ]


def test_hostile():
    need_root()
    s = Scratch("iosigd-hostile.")
    try:
        work = s.path("work")
        os.makedirs(work)
        d = Daemon(s, "d", config([], "noop")).start()
        cases = scenarios(work)
        # A first pass warms the daemon up (allocations it keeps); then the
        # same cases again many times must not grow it.
        base = None
        for rnd in range(12):
            for name, do, reason in cases:
                before = d.log()
                h = Hostile(d)
                try:
                    do(h)
                except OSError:
                    pass
                # The daemon answers with ERROR and closes; wait for it.
                h.drained()
                h.close()
                if rnd == 0:
                    new = d.log()[len(before):]
                    check(reason in new and "session closed" in new,
                          "%s: the session is closed with the reason logged (%r)" % (name, new.strip()[-200:]))
                if not d.alive():
                    check(False, "%s: the daemon survives" % name)
                    return
            if rnd == 1:
                base = (d.quiet_fds(), d.rss_kib())
        fds, rss = d.quiet_fds(), d.rss_kib()
        st = d.status()
        check(d.alive() and not st["clients"], "the daemon survived %d hostile sessions, none left" % (12 * len(cases)))
        check(len(fds) == len(base[0]), "no descriptor leaks (%d, %d after warming up: %s)"
              % (len(fds), len(base[0]), sorted(set(fds) ^ set(base[0]))))
        check(rss - base[1] < 2048, "no memory leaks (RSS %d KiB, %d after warming up)" % (rss, base[1]))
        # An honest client is still served.
        mnt = s.mount_ext4("ext4", "128M")
        d2 = Daemon(s, "d2", config([(mnt, "hdd")], "noop")).start()
        collect(records(d2, os.path.join(mnt, "honest"), 0.5, 5), "an honest client after the hostile ones")
        check(d2.stop() == 0 and d.stop() == 0, "both daemons exit 0")
    finally:
        Daemon.kill_all()
        s.close()


# ---------------------------------------------------------------------------
# load: 64 clients
# ---------------------------------------------------------------------------

def test_load():
    need_root()
    seconds = float(os.environ.get("IOSIGD_LOAD_SECONDS", "3"))
    s = Scratch("iosigd-load.")
    try:
        mnt = s.mount_ext4("ext4", "1024M")
        # In a sanitizer build ASan keeps freed memory in a quarantine of
        # 256 MiB by default, which the RSS bound would count as the
        # daemon's: the load's daemon gets a small one (use after free is
        # still caught among its most recent 16 MiB of frees).
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = ":".join(o for o in (env.get("ASAN_OPTIONS", ""), "quarantine_size_mb=16") if o)
        for policy in ("noop", "bid-hdd"):
            with serving(s, "d-" + policy, config([(mnt, "hdd")], policy), policy, env=env) as d:
                base = (d.quiet_fds(), d.rss_kib())
                procs = [records(d, os.path.join(mnt, "%s-%d" % (policy, i)), seconds, 500 + i, mib=16)
                         for i in range(64)]
                total = 0
                for i, p in enumerate(procs):
                    c = collect(p, "%s: client %d of 64" % (policy, i))
                    total += c["checked"] if c else 0
                # A file's descriptor goes once its write-back is done
                # (a client's last registration starts it): under load
                # that can take a while, never forever.
                deadline = time.time() + 60
                while True:
                    fds = d.quiet_fds(timeout=1)
                    st = d.status()
                    if (not st["clients"] and len(fds) == len(base[0])) or time.time() > deadline:
                        break
                    time.sleep(0.2)
                check(not st["clients"] and len(fds) == len(base[0]),
                      "%s: 64 sessions done, none left, descriptors as before (%d, %d: %s)"
                      % (policy, len(fds), len(base[0]), sorted(set(fds) ^ set(base[0]))))
                check(d.rss_kib() - base[1] < 64 * 1024,
                      "%s: memory bounded (RSS %d KiB, %d before)" % (policy, d.rss_kib(), base[1]))
                print("load %s: %d records checked, %d operations" % (policy, total, st["daemon"]["operations"]))
            for i in range(64):
                shutil.rmtree(os.path.join(mnt, "%s-%d" % (policy, i)), ignore_errors=True)
    finally:
        Daemon.kill_all()
        s.close()


def test_cli():
    s = Scratch("iosigd-cli.")
    try:
        r, o, e = run([IOSIGD, "--help"])
        check(r == 0 and "--foreground" in o and "--socket" in o and "--config" in o and not e,
              "--help lists the options on stdout")
        r, o, e = run([IOSIGD, "--version"])
        check(r == 0 and re.fullmatch(r"iosigd \d+\.\d+\.\d+\n", o), "--version (%r)" % o)
        for args, err in ((["--bogus"], "iosigd: unknown option '--bogus'\nTry 'iosigd --help'.\n"),
                          (["--socket"], "iosigd: --socket needs a value\nTry 'iosigd --help'.\n"),
                          (["--socket", "rel.sock"], "iosigd: --socket needs an absolute path, not 'rel.sock'\n"),
                          (["-f", "extra"], "iosigd: unexpected argument 'extra'\nTry 'iosigd --help'.\n")):
            r, o, e = run([IOSIGD] + args)
            check(r == 2 and e == err, "%s: exit 2 with %r (%d %r)" % (" ".join(args), err, r, e))
        bad = s.path("bad.yaml")
        with open(bad, "w") as f:
            f.write("daemon:\n  policy: mios-e\n")
        r, o, e = run([IOSIGD, "-f", "--socket", s.path("x.sock"), "--config", bad])
        check(r == 1 and e.startswith("iosigd: %s:2:11: daemon: policy: policy 'mios-e' places data" % bad),
              "a configuration error: exit 1 with file:line:column (%r)" % e)
        r, o, e = run([IOSIGD, "-f", "--socket", s.path("x.sock"), "--config", s.path("missing.yaml")])
        check(r == 1 and "missing.yaml" in e, "a configuration file that is not there (%r)" % e)
        if os.geteuid() != 0:
            r, o, e = run([IOSIGD])
            check(r == 1 and "system mode needs root" in e, "system mode needs root (%r)" % e)
        d = Daemon(s, "d", config([], "noop")).start()
        r, o, e = run([IOSIGD, "-f", "--socket", d.sock, "--config", d.cfg])
        check(r == 1 and "another iosigd listens on %s" % d.sock in e, "a live daemon's socket is left alone (%r)" % e)
        check(d.alive(), "and that daemon goes on")
        with open(s.path("file.sock"), "w") as f:
            f.write("x")
        r, o, e = run([IOSIGD, "-f", "--socket", s.path("file.sock"), "--config", d.cfg])
        check(r == 1 and "exists and is not a socket" in e, "a file at the socket's path is left alone (%r)" % e)
        rc = d.stop()
        check(rc == 0 and "SIGTERM" in d.log() and not os.path.exists(d.sock),
              "SIGTERM: exit 0, the socket removed (%r)" % rc)
        # A stale socket (its daemon killed) is replaced.
        d2 = Daemon(s, "d2", config([], "noop")).start()
        d2.kill9()
        d3 = Daemon(s, "d2", config([], "noop")).start()
        check(d3.alive() and d3.status()["daemon"]["pid"] == d3.p.pid, "a stale socket is replaced")
        check(d3.stop() == 0, "iosigd exits 0")
        r, o, e = run([IOSIGD, "--user", "-f"])
        check(r == 2 and "--user and --foreground are two modes" in e, "--user with --foreground: exit 2 (%r)" % e)
        documented([IOSIGD, "--help"], "iosigd/iosigd.8")
        documented([TOOL, "status", "--help"], "libiosig/man/iosig-status.1")
        check_config(s)
        status_cli(s)
        client_connects(s)
        if os.geteuid() == 0:
            untrusted_daemon(s)
    finally:
        Daemon.kill_all()
        s.close()


def documented(args, page):
    """Every long option `args` (a --help) lists is in the man page."""
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    r, o, e = run(args)
    with open(os.path.join(top, page)) as f:
        text = f.read().replace("\\-", "-")
    opts = sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", o)))
    missing = [x for x in opts if x not in text]
    check(r == 0 and len(opts) >= 3 and not missing,
          "%s: every option of %s is documented %s" % (page, " ".join(os.path.basename(a) for a in args), missing))


def check_config(s):
    """--check-config: exit 0 for a valid file, 1 with file:line:column for
    an invalid daemon: section or catalog part, without binding a socket."""
    good = s.path("good.yaml")
    with open(good, "w") as f:
        f.write(config([], "noop") + '    "/mnt/*": { policy: "bid-hdd:wait_max=50ms", queue_depth: 8 }\n'
                '  limits:\n    clients: 8\n    ring_size: 4MiB\n  socket: %s\n' % s.path("never.sock"))
    r, o, e = run([IOSIGD, "--check-config", "--config", good])
    check(r == 0 and o.startswith("iosigd: %s: valid (default policy noop, 1 device rule" % good) and not e,
          "--check-config: a valid file, exit 0 (%d %r %r)" % (r, o, e))
    check(not os.path.exists(s.path("never.sock")), "--check-config binds no socket")
    bad = [("daemon:\n  policy: bid-hdd:wait_max=fast\n", ":2:11: daemon: policy: "),
           ("daemon:\n  limits:\n    ring_size: 3 parsecs\n", ":3:16: daemon: limits: ring_size"),
           ("daemon:\n  polcy: noop\n", ":2:3: "),
           ("daemon:\n  devices:\n    /mnt/x: { queue_depth: -4 }\n", ":3:"),
           ("daemon: [1, 2]\n", ":1:9: "),
           ("version: 1\nmounts:\n  /:\n    clas: hdd\n", ":4:5: "),
           ("daemon:\n  policy: noop\n  policy: cfq\n", ":3:3: ")]
    for i, (text, where) in enumerate(bad):
        path = s.path("bad%d.yaml" % i)
        with open(path, "w") as f:
            f.write(text)
        r, o, e = run([IOSIGD, "--check-config", "--config", path])
        check(r == 1 and e.startswith("iosigd: " + path + where) and e.endswith("\n") and e.count("\n") == 1
              and not o, "--check-config: %r: exit 1 with %s%s... (%d %r)" % (text, path, where, r, e))
    r, o, e = run([IOSIGD, "--check-config", "--config", s.path("absent.yaml")])
    check(r == 1 and s.path("absent.yaml") in e, "--check-config: a missing file, exit 1 (%r)" % e)
    empty = s.path("home")
    os.makedirs(empty, exist_ok=True)
    r, o, e = run([IOSIGD, "--check-config"], env={"HOME": empty, "IOSIG_CONFIG": s.path("none.yaml")})
    check(r in (0, 1), "--check-config without --config uses the search (%d %r)" % (r, e))


def status_cli(s):
    """`iosig status`: no daemon -> exit 1 saying what to do; against a
    daemon serving a real client, the text and --json views show it; as
    root also a device with a tier (status_tiers)."""
    r, o, e = run([TOOL, "status"], env={"IOSIG_DAEMON_SOCKET": s.path("nobody-here.sock")})
    check(r == 1 and "no iosigd answers" in e and "nobody-here.sock" in e and "iosigd(8)" in e and not o,
          "iosig status: no daemon, exit 1 (%r)" % e)
    r, o, e = run([TOOL, "status"], env={"IOSIG_DAEMON_SOCKET": ""})
    check(r == 1 and "IOSIG_DAEMON_SOCKET" in e, "iosig status: the daemon disabled, exit 1 (%r)" % e)
    r, o, e = run([TOOL, "status", "--socket", s.path("nobody-here.sock")])
    check(r == 1 and "no iosigd answers at %s" % s.path("nobody-here.sock") in e, "--socket: no daemon (%r)" % e)
    for args in (["--bogus"], ["--socket"], ["--socket", "rel"], ["extra"]):
        r, o, e = run([TOOL, "status"] + args)
        check(r == 2 and "iosig status:" in e, "iosig status %s: exit 2 (%r)" % (" ".join(args), e))
    r, o, e = run([TOOL, "status", "--help"])
    check(r == 0 and "--json" in o and "--socket" in o, "iosig status --help")
    # A hang-up without an answer is an error, not a hang.
    path = s.path("mute.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(4)
    p = subprocess.Popen([TOOL, "status", "--socket", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    c, _ = srv.accept()
    c.recv(100)
    c.send(msg(8, struct.pack("<iI", -1, 0) + b"go away".ljust(192, b"\0")))
    o, e = p.communicate(timeout=30)
    c.close()
    srv.close()
    check(p.returncode == 1 and b"the daemon refused: go away" in e, "an ERROR answer: exit 1 (%r)" % e)

    d = Daemon(s, "dstat", config([], "bid-hdd")).start()
    work = s.path("stat-work")
    os.makedirs(work)
    p = records(d, work, 4, 7, mib=4)
    st = None
    for _ in range(300):
        st = d.status()
        if st["clients"] and st["devices"]:
            break
        time.sleep(0.01)
    r, o, e = run([TOOL, "status", "--json"], env=d.env())
    js = json.loads(o) if r == 0 else {}
    cl = js.get("clients") or [{}]
    check(r == 0 and js["daemon"]["pid"] == d.p.pid and js["daemon"]["mode"] == "foreground" and
          js["daemon"]["version"] and js["daemon"]["socket"] == d.sock and cl[0].get("pid") == p.pid and
          cl[0].get("uid") == os.getuid() and cl[0].get("descriptors", 0) >= 1 and
          js["devices"] and js["devices"][0]["policy"] == "bid-hdd" and "counters" in js["devices"][0],
          "iosig status --json: the daemon, its client and its device (%r %s)" % (e, o[:600]))
    r, o, e = run([TOOL, "status", "--socket", d.sock])
    check(r == 0 and ("iosigd %s: pid %d, uid %d, foreground mode" % (js["daemon"]["version"], d.p.pid, os.getuid()))
          in o and "1 client" in o and ("%d " % cl[0].get("pid", -1)) in o and "/4096 entries" in o and
          "1 device" in o and "bid-hdd" in o and "policy counters:" in o and d.sock in o,
          "iosig status: the same as text (%r)\n%s" % (e, o))
    collect(p, "a client while iosig status looked")
    st = d.status()
    check(not st["clients"] and st["daemon"]["operations"] > 0, "the client's operations were counted")
    dv = st["devices"][0] if st["devices"] else {}
    check(dv.get("requests", 0) > 0 and
          0 < dv.get("p50_latency_ms", 0) <= dv.get("p99_latency_ms", 0),
          "the device's latency: 0 < p50 <= p99 (%s)" % json.dumps(dv))
    r, o, e = run([TOOL, "status", "--socket", d.sock])
    check(r == 0 and "P99 LAT" in o, "iosig status shows the p99 latency (%r)\n%s" % (e, o))
    check(d.stop() == 0, "iosigd exits 0")
    if os.geteuid() == 0:
        status_tiers(s)


def status_tiers(s):
    """`iosig status` of a device with a tier (nvcache, a tmpfs memory
    tier) after a client wrote through it: the tier's line (size, used,
    dirty, records, write-back rate, state) and its store's figures; --json
    has the daemon's `tiers` array."""
    home, tmnt = s.mount_ext4("st-home", "128M"), s.mount_tmpfs("st-tier", "64m")
    text = config([(home, "hdd")], "noop", ", policy: nvcache, tiers: [t]")
    text += '  tiers:\n    t: { mount: "%s", size: 32MiB, class: ram }\n' % tmnt
    d = Daemon(s, "dstier", text).start()
    p = records(d, os.path.join(home, "work"), 2, 5, mib=4)
    collect(p, "a client writing through a tier")
    r, o, e = run([TOOL, "status", "--json"], env=d.env())
    js = json.loads(o) if r == 0 else {}
    dv = device_of(js, home) if js else None
    tr = (dv or {}).get("tiers") or [{}]
    check(r == 0 and len(tr) == 1 and tr[0].get("name") == "t" and tr[0].get("class") == "ram" and
          tr[0].get("volatile") is True and tr[0].get("size", 0) > 0 and tr[0].get("written_bytes", 0) > 0 and
          "writeback_rate" in tr[0] and "records" in tr[0] and "dirty_bytes" in tr[0] and
          "counters" in dv and "writes_cached" in dv["counters"],
          "iosig status --json: the device's tier and the policy's counters (%r %s)" % (e, o[:1500]))
    r, o, e = run([TOOL, "status", "--socket", d.sock])
    rows = [ln.split() for ln in o.splitlines()]
    row = next((x for x in rows if x[:3] == ["t", home, "ram"]), [])
    check(r == 0 and "\n1 tier\n" in o and "TIER" in o and "WRITE-BACK" in o and len(row) >= 9 and
          row[7].endswith("/s") and "ok," in row[8] and "volatile" in o and
          ("store %s: written " % tr[0].get("store")) in o and "policy counters:" in o and "writes_cached=" in o,
          "iosig status: the tier's line and its store (%r)\n%s" % (e, o))
    check(d.stop() == 0, "iosigd exits 0")
    mios_profile(s)


def mios_profile(s):
    """MIOS's write-state predictor on an HDD tier takes `iosig probe`'s
    BCW profile of the tier's mount from the probe cache (W_f, W_m: its
    counters; L_f, L_m, L_s: the daemon's log line); without a profile the
    daemon says MIOS runs with its option defaults; an option set in the
    configuration wins over the profile."""
    home, tmnt = s.mount_ext4("bcw-home", "128M"), s.mount_ext4("bcw-tier", "512M")
    with open("/proc/self/mounts") as f:
        src = next(ln.split()[0] for ln in f if ln.split()[1] == tmnt)
    cache = s.path("probe.yaml")
    with open(cache, "w") as f:
        f.write('version: 1\nmounts:\n  "%s":\n    fstype: ext4\n    source: %s\n    probed_at: %d\n'
                '    bcw: {wf: 3145728, wm: 1048576, lf: 0.0001, lm: 0.004, ls: 0.03}\n' % (tmnt, src, time.time()))

    def mios_config(opts, experimental=False):
        text = config([(home, "ssd"), (tmnt, "hdd")], "noop", ', policy: "mios-d%s", tiers: [t]%s'
                      % (opts, ", experimental: true" if experimental else ""))
        text = "".join(ln for ln in text.splitlines(True) if not ln.startswith('    "%s": {' % tmnt))
        return text + '  tiers:\n    t: { mount: "%s", size: 400MiB, class: hdd }\n' % tmnt

    # mios-d/e are no longer experimental (docs/tiers.md): valid with and
    # without experimental: true (still accepted, now without effect).
    path = s.path("mios-noexp.yaml")
    for exp in (True, False):
        with open(path, "w") as f:
            f.write(mios_config("", experimental=exp))
        r, o, e = run([IOSIGD, "--check-config", "--config", path])
        check(r == 0, "mios-d %s experimental: true is a valid configuration (%r)"
              % ("with" if exp else "without", e))

    def mios(name, probe, opts=""):
        text = mios_config(opts)
        env = dict(os.environ, IOSIG_PROBE_CACHE=probe)
        d = Daemon(s, name, text, env=env).start()
        # The policy runs once a client registers a file of the device.
        collect(records(d, os.path.join(home, name), 1, 3, mib=4), "a client of " + name)
        cn = (device_of(d.status(), home) or {}).get("counters", {})
        log = d.log()
        check(d.stop() == 0, "%s: iosigd exits 0" % name)
        return cn, log

    cn, log = mios("dbcw", cache)
    check(cn.get("w_fast") == 3145728 and cn.get("w_mid") == 1048576 and
          "tier t: BCW profile of its mount: W_f 3145728 B, W_m 1048576 B, L_f 0.0001 s, L_m 0.004 s, L_s 0.03 s" in log,
          "mios-d on an HDD tier predicts with the probe cache's BCW profile (%r)\n%s" % (cn, log))
    cn, log = mios("dbcw-opt", cache, ":w_fast=2MiB")
    check(cn.get("w_fast") == 2097152 and cn.get("w_mid") == 1048576,
          "an option in the configuration wins over the profile (%r)" % cn)
    cn, log = mios("dnobcw", "")
    check(cn.get("w_fast") == 16 << 20 and cn.get("w_mid") == 8 << 20 and
          "tier t: no BCW profile of its mount" in log,
          "without a profile: MIOS's defaults, and the daemon says so (%r)\n%s" % (cn, log))


def client_connects(s):
    """A socket that accepts and hangs up at once: a program that makes 30
    annotated opens within a second connects once (then every 5 s)."""
    import threading
    path = s.path("hangup.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(64)
    accepted = []

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            accepted.append(1)
            c.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    work = s.path("connects")
    os.makedirs(work)
    script = "for i in $(seq 30); do echo $i > %s/f$i; done" % work
    r, o, e = redirected(None, work, ["sh", "-c", script], env={"IOSIG_DAEMON_SOCKET": path})
    srv.close()
    check(r == 0 and len(os.listdir(work)) == 30, "the program runs as without a daemon (%r)" % e)
    # echo is a builtin of sh: every open is in one process.
    check(len(accepted) == 1, "one connect for 30 opens in one process (%d)" % len(accepted))


def untrusted_daemon(s):
    """A daemon running as another user (nobody) is never given a byte:
    the client checks SO_PEERCRED (root's or its own uid only)."""
    ddir = s.path("nobody")
    os.makedirs(ddir)
    os.chmod(ddir, 0o777)
    os.chmod(s.dir, 0o755)
    sock = os.path.join(ddir, "iosigd.sock")
    cfg = os.path.join(ddir, "config.yaml")
    with open(cfg, "w") as f:
        f.write("daemon:\n  policy: noop\n")
    os.chmod(cfg, 0o644)
    log = open(os.path.join(ddir, "log"), "w")
    p = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", IOSIGD, "-f",
                          "--socket", sock, "--config", cfg], stdout=log, stderr=log,
                         preexec_fn=_die_with_parent)
    try:
        for _ in range(300):
            if os.path.exists(sock):
                break
            time.sleep(0.01)
        work = s.path("trust")
        os.makedirs(work)
        dlog = s.path("trust.log")
        r, o, e = redirected(None, work, [DWORK, "calls", os.path.join(work, "calls")],
                             env={"IOSIG_DAEMON_SOCKET": sock, "IOSIG_LOG": dlog})
        with open(dlog) as f:
            text = f.read()
        check(r == 0 and "neither root nor this user: not used" in text,
              "a daemon of uid nobody is not used (%r)" % text[-300:])
        c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        c.connect(sock)
        c.send(msg(6))
        m = c.recv(9000)
        c.close()
        st = json.loads(m[24:24 + struct.unpack_from("<I", m, 20)[0]])
        check(st["daemon"]["operations"] == 0 and not st["devices"],
              "it never saw a descriptor or an operation (%s)" % json.dumps(st["daemon"]))
    finally:
        p.terminate()
        p.wait()
        log.close()


# ---------------------------------------------------------------------------
# systemd: socket activation, readiness, the units
# ---------------------------------------------------------------------------

class Notify:
    """A NOTIFY_SOCKET of the test's own: the datagrams sd_notify() sends."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.msgs = []

    def wait(self, line, timeout=30):
        """The first message with `line` (such as READY=1), or None."""
        end = time.time() + timeout
        while True:
            for m in self.msgs:
                if line in m.split("\n"):
                    return m
            left = end - time.time()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                self.msgs.append(self.sock.recv(4096).decode(errors="replace"))
            except socket.timeout:
                return None

    def close(self):
        self.sock.close()


# Puts the descriptor argv[1] at 3 and sets LISTEN_FDS/LISTEN_PID, as
# systemd does for a service of a .socket unit, then runs argv[3:].
PASS_FDS = """
import os, sys
fd = int(sys.argv[1])
if fd != 3:
    os.dup2(fd, 3)
    os.close(fd)
os.environ.update(LISTEN_FDS=sys.argv[2], LISTEN_PID=str(os.getpid()))
os.execv(sys.argv[3], sys.argv[3:])
"""


def activated(d, how, notify, nfds="1", sock_type=socket.SOCK_SEQPACKET):
    """Starts d's iosigd with its socket bound by someone else: `how` is
    "tool" (systemd-socket-activate) or "hand" (the test binds it and
    passes it as LISTEN_FDS).  Returns the daemon's Popen."""
    log = open(d.logpath, "a")
    args = [IOSIGD, "-f", "--config", d.cfg, "-v"]
    if how == "tool":
        d.p = subprocess.Popen([shutil.which("systemd-socket-activate"), "--seqpacket", "-l", d.sock,
                                "-E", "NOTIFY_SOCKET=" + notify.path] + args,
                               stdout=log, stderr=log, preexec_fn=_die_with_parent)
        for _ in range(500):
            if os.path.exists(d.sock):
                break
            time.sleep(0.01)
    else:
        srv = socket.socket(socket.AF_UNIX, sock_type)
        srv.bind(d.sock)
        srv.listen(16)
        d.listener = srv
        env = dict(os.environ, NOTIFY_SOCKET=notify.path)
        d.p = subprocess.Popen([sys.executable, "-c", PASS_FDS, str(srv.fileno()), nfds] + args, env=env,
                               stdout=log, stderr=log, pass_fds=(srv.fileno(),), preexec_fn=_die_with_parent)
    log.close()
    return d.p


def test_systemd():
    s = Scratch("iosigd-systemd.")
    try:
        verify_units(s)
        hows = ["hand"]
        if shutil.which("systemd-socket-activate"):
            hows.insert(0, "tool")
        else:
            print("note: no systemd-socket-activate (package systemd): LISTEN_FDS passed by the test only")
        for how in hows:
            socket_activation(s, how)
        # What systemd could pass wrongly: two sockets, a stream socket.
        for what, nfds, stype, err in (("two sockets", "2", socket.SOCK_SEQPACKET, "systemd passed 2 sockets"),
                                       ("a stream socket", "1", socket.SOCK_STREAM,
                                        "is not a listening Unix SOCK_SEQPACKET socket")):
            d = Daemon(s, "bad-" + nfds + str(stype), config([], "noop"))
            n = Notify(s.path("notify-bad-%s-%d" % (nfds, stype)))
            p = activated(d, "hand", n, nfds=nfds, sock_type=stype)
            rc = p.wait(timeout=30)
            check(rc == 1 and err in d.log() and n.wait("READY=1", timeout=0.2) is None,
                  "%s passed: exit 1, no READY=1 (%r %s)" % (what, rc, d.log()[-300:]))
            n.close()
    finally:
        Daemon.kill_all()
        s.close()


def socket_activation(s, how):
    d = Daemon(s, "act-" + how, config([], "deadline"))
    notify = Notify(s.path("notify-" + how))
    activated(d, how, notify)
    # The first connection starts it (systemd-socket-activate waits for one;
    # its socket's name exists from bind(), before listen(): refused until then).
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    for _ in range(500):
        try:
            c.connect(d.sock)
            break
        except ConnectionRefusedError:
            time.sleep(0.01)
    else:
        c.connect(d.sock)
    ready = notify.wait("READY=1")
    c.close()
    check(ready is not None and "STATUS=serving on %s (socket activation) (foreground mode, default policy deadline)"
          % d.sock in ready.split("\n"), "%s: READY=1 with a STATUS line on NOTIFY_SOCKET (%r)" % (how, ready))
    # A client is served through the inherited socket.
    work, plain = s.path("work-" + how), s.path("plain-" + how)
    os.makedirs(work)
    os.makedirs(plain)
    r1, o1, e1 = redirected(d, work, [DWORK, "calls", os.path.join(work, "calls")])
    r2, o2, e2 = run([DWORK, "calls", os.path.join(plain, "calls")])
    check(r1 == r2 == 0 and o1 == o2, "%s: a client through the inherited socket: the same results (%r)" % (how, e1))
    st = d.status()
    check(st["daemon"]["socket_activated"] and st["daemon"]["socket"] == d.sock and st["daemon"]["operations"] > 50
          and st["devices"], "%s: the daemon did its I/O (%s)" % (how, json.dumps(st["daemon"])))
    # SIGTERM while a client writes: STOPPING=1, the client loses nothing,
    # exit 0, and the socket (systemd's) is left in place.
    p = records(d, s.path("rec-" + how), 4, 11, mib=128)
    for _ in range(300):
        if d.status()["clients"]:
            break
        time.sleep(0.01)
    time.sleep(0.3)
    st = d.status()
    d.p.send_signal(signal.SIGTERM)
    stopping = notify.wait("STOPPING=1")
    try:
        rc = d.p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        rc = "hung"
    check(stopping is not None and "STATUS=draining: finishing the queued I/O of 1 client" in stopping.split("\n"),
          "%s: SIGTERM: STOPPING=1 with a STATUS line (%r)" % (how, stopping))
    check(rc == 0 and "drained:" in d.log(), "%s: SIGTERM: drained and exit 0 (%r)" % (how, rc))
    check(len(st["clients"]) == 1 and st["clients"][0]["pid"] == p.pid and p.poll() is None,
          "%s: the client was writing through the daemon at SIGTERM (%s)" % (how, json.dumps(st["clients"])))
    collect(p, "%s: a writing client across the daemon's SIGTERM" % how)
    check(os.path.exists(d.sock) and stat_is_socket(d.sock), "%s: the inherited socket's name is left to systemd" % how)
    notify.close()
    if getattr(d, "listener", None):
        d.listener.close()


def stat_is_socket(path):
    import stat
    return stat.S_ISSOCK(os.lstat(path).st_mode)


def verify_units(s):
    """systemd-analyze verify on the four units, the services pointing at
    the daemon just built (the installed ones point at the prefix)."""
    units = os.environ.get("IOSIGD_UNITS")
    src = os.environ.get("IOSIGD_UNITS_SRC")
    tool = shutil.which("systemd-analyze")
    if not units or not src:
        check(False, "IOSIGD_UNITS and IOSIGD_UNITS_SRC name the units (CMakeLists.txt)")
        return
    texts = {}
    for name in ("iosigd.service", "iosigd-user.service"):
        with open(os.path.join(units, name)) as f:
            texts[name] = f.read()
    for name in ("iosigd.socket", "iosigd-user.socket"):
        with open(os.path.join(src, name)) as f:
            texts[name] = f.read()
    check(re.search(r"^Type=notify$", texts["iosigd.service"], re.M) and
          re.search(r"^ExecStart=/\S*/iosigd$", texts["iosigd.service"], re.M) and
          re.search(r"^ExecStart=/\S*/iosigd --user$", texts["iosigd-user.service"], re.M) and
          "ListenSequentialPacket=/run/iosigd/iosigd.sock" in texts["iosigd.socket"] and
          "ListenSequentialPacket=%t/iosigd.sock" in texts["iosigd-user.socket"],
          "the units: Type=notify services of the installed iosigd, sockets where clients look")
    if not tool:
        print("note: no systemd-analyze (package systemd): the units are not verified")
        return
    for kind, names in (("system", ("iosigd.socket", "iosigd.service")),
                        ("user", ("iosigd-user.socket", "iosigd-user.service"))):
        ddir = s.path("units-" + kind)
        os.makedirs(ddir)
        for name in names:
            with open(os.path.join(ddir, name), "w") as f:
                f.write(re.sub(r"^ExecStart=\S+", "ExecStart=" + IOSIGD, texts[name], flags=re.M))
        args = [tool] + (["--user"] if kind == "user" else []) + ["verify", "--man=no"] + \
            [os.path.join(ddir, n) for n in names]
        env = {"XDG_RUNTIME_DIR": s.path("units-rt")} if kind == "user" else None
        if env:
            os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
        r, o, e = run(args, env=env)
        check(r == 0 and not e.strip(), "systemd-analyze verify: the %s units (%d %r)" % (kind, r, e))


# ---------------------------------------------------------------------------
# user: iosigd --user as an unprivileged user
# ---------------------------------------------------------------------------

NOBODY = 65534


def as_user(uid, args, env, **kw):
    """args as uid (setpriv), with exactly env (plus PATH)."""
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    e.update(env)
    return subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"] + args,
                          env=e, capture_output=True, timeout=300, **kw)


def user_dir(path, uid, mode):
    os.makedirs(path, exist_ok=True)
    os.chown(path, uid, uid)
    os.chmod(path, mode)
    return path


def test_user():
    if os.geteuid() != 0:
        skip("needs root to run iosigd --user as an unprivileged user (setpriv --reuid)")
    if not shutil.which("setpriv"):
        skip("setpriv(1) is not installed (util-linux)")
    s = Scratch("iosigd-user.")
    procs = []
    try:
        os.chmod(s.dir, 0o755)
        rt = user_dir(s.path("rt"), NOBODY, 0o700)
        home = user_dir(s.path("home"), NOBODY, 0o755)
        cfg = os.path.join(home, "config.yaml")
        with open(cfg, "w") as f:
            f.write(config([], "cfq"))
        os.chmod(cfg, 0o644)
        base = {"HOME": home, "IOSIG_CONFIG": cfg}

        # Runtime directories --user refuses.
        loose = user_dir(s.path("loose"), NOBODY, 0o755)
        rootdir = user_dir(s.path("rootdir"), 0, 0o700)
        for what, xdg, err in (("unset", None, "--user needs XDG_RUNTIME_DIR"),
                               ("relative", "run/me", "is not an absolute path"),
                               ("mode 0755", loose, "with mode 0755: it must be this user's"),
                               ("of root's", rootdir, "is owned by uid 0 with mode 0700: it must be this user's")):
            env = dict(base)
            if xdg:
                env["XDG_RUNTIME_DIR"] = xdg
            p = as_user(NOBODY, [IOSIGD, "--user"], env)
            e = p.stderr.decode()
            check(p.returncode == 1 and err in e and e.startswith("iosigd: "),
                  "--user with XDG_RUNTIME_DIR %s: exit 1 (%r)" % (what, e))

        # The user daemon, found by the user's programs through XDG_RUNTIME_DIR.
        env = dict(base, XDG_RUNTIME_DIR=rt)
        log = open(s.path("user.log"), "w")
        d = subprocess.Popen(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups",
                              IOSIGD, "--user", "-v"], env=dict(env, PATH=os.environ["PATH"]),
                             stdout=log, stderr=log, preexec_fn=_die_with_parent)
        procs.append(d)
        sock = os.path.join(rt, "iosigd.sock")
        for _ in range(500):
            if os.path.exists(sock) or d.poll() is not None:
                break
            time.sleep(0.01)
        check(os.path.exists(sock) and os.stat(sock).st_uid == NOBODY, "iosigd --user listens in its runtime directory")
        work = user_dir(s.path("work"), NOBODY, 0o755)
        plain = user_dir(s.path("plain"), NOBODY, 0o755)
        p1 = as_user(NOBODY, [REDIRECT, "-q", "-s", "random size_per_io(4*KiB)", work + "/**", "--", DWORK, "calls",
                              os.path.join(work, "calls")], env)
        p2 = as_user(NOBODY, [DWORK, "calls", os.path.join(plain, "calls")], dict(env, IOSIG_DAEMON_SOCKET=""))
        check(p1.returncode == p2.returncode == 0 and p1.stdout == p2.stdout,
              "a user's program through its user daemon: the same results (%r)" % p1.stderr[-300:])
        p = as_user(NOBODY, [TOOL, "status", "--json"], env)
        st = json.loads(p.stdout) if p.returncode == 0 else {"daemon": {}}
        check(st["daemon"].get("mode") == "user" and st["daemon"].get("uid") == NOBODY and
              st["daemon"].get("socket") == sock and st["daemon"].get("operations", 0) > 50,
              "iosig status finds the user daemon through XDG_RUNTIME_DIR, which did the I/O (%r %r)"
              % (p.stderr, st["daemon"]))
        # Without XDG_RUNTIME_DIR (cron, su): /run/user/UID, systemd's place.
        fallback(s, base)
        # Another user is refused by the daemon; root may look.
        other = 65533
        shared = user_dir(s.path("shared"), NOBODY, 0o777)
        ssock = os.path.join(shared, "iosigd.sock")
        log2 = open(s.path("user2.log"), "w")
        d2 = subprocess.Popen(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups",
                               IOSIGD, "--user", "--socket", ssock], env=dict(env, PATH=os.environ["PATH"]),
                              stdout=log2, stderr=log2, preexec_fn=_die_with_parent)
        procs.append(d2)
        for _ in range(500):
            if os.path.exists(ssock) or d2.poll() is not None:
                break
            time.sleep(0.01)
        os.chmod(ssock, 0o666)   # as a system socket would be: only the daemon's check is left
        p = as_user(other, [TOOL, "status", "--socket", ssock], {})
        with open(s.path("user2.log")) as f:
            text = f.read()
        check(p.returncode == 1 and "closed the connection" in p.stderr.decode() and
              "uid %d refused: this daemon serves uid %d" % (other, NOBODY) in text,
              "a user daemon refuses another user (%r %r)" % (p.stderr, text[-300:]))
        r, o, e = run([TOOL, "status", "--socket", ssock])
        check(r == 0 and "user mode" in o, "root may ask a user daemon for its status (%r)" % e)
        for p in (d, d2):
            p.send_signal(signal.SIGTERM)
            check(p.wait(timeout=30) == 0, "iosigd --user exits 0 on SIGTERM")
        check(not os.path.exists(sock), "and removes its socket")
        log.close()
        log2.close()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        s.close()


def fallback(s, base):
    """A client without XDG_RUNTIME_DIR finds the user daemon at
    /run/user/UID (a tmpfs over /run/user in this mount namespace)."""
    if os.environ.get("IOSIGD_TEST_NS") != "1" or not os.path.isdir("/run/user"):
        print("note: no private mount namespace or no /run/user: the /run/user/UID fallback is not tested")
        return
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "iosig-run-user", "/run/user"],
                       capture_output=True)
    if r.returncode:
        print("note: cannot mount a tmpfs on /run/user: the fallback is not tested")
        return
    try:
        rt = user_dir("/run/user/%d" % NOBODY, NOBODY, 0o700)
        log = open(s.path("user-fallback.log"), "w")
        d = subprocess.Popen(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups",
                              IOSIGD, "--user"], env=dict(base, XDG_RUNTIME_DIR=rt, PATH=os.environ["PATH"]),
                             stdout=log, stderr=log, preexec_fn=_die_with_parent)
        sock = os.path.join(rt, "iosigd.sock")
        for _ in range(500):
            if os.path.exists(sock) or d.poll() is not None:
                break
            time.sleep(0.01)
        p = as_user(NOBODY, [TOOL, "status", "--json"], base)
        st = json.loads(p.stdout) if p.returncode == 0 else {"daemon": {}}
        check(st["daemon"].get("socket") == sock and st["daemon"].get("mode") == "user",
              "without XDG_RUNTIME_DIR, /run/user/%d/iosigd.sock is found (%r)" % (NOBODY, p.stderr))
        d.send_signal(signal.SIGTERM)
        check(d.wait(timeout=30) == 0, "that daemon exits 0")
        log.close()
    finally:
        subprocess.run(["umount", "-l", "/run/user"], capture_output=True)


# ---------------------------------------------------------------------------
# write-back: when the page cache's dirty data goes to the policy
# ---------------------------------------------------------------------------

# A tagged writer (python3 under iosig-redirect): writes MiB in 64 KiB
# write() calls, says so, then does each action its stdin names (fsync,
# close, exit), saying "ok" after each.
WB_WRITER = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
block = os.urandom(65536)
for _ in range(int(sys.argv[2]) * 16):
    os.write(fd, block)
print("written", flush=True)
for line in sys.stdin:
    a = line.strip()
    if a == "fsync":
        os.fsync(fd)
    elif a == "close":
        os.close(fd)
    print("ok", flush=True)
    if a == "exit":
        break
"""


def wb_status(d, mnt):
    st = d.status()
    dv = device_of(st, mnt) or {}
    return st["daemon"]["writeback"], dv.get("requests", 0)


def wb_until(d, mnt, pred, seconds=10):
    """The daemon's write-back status and its device's request count, once
    pred(wb, requests) holds (or after `seconds`)."""
    end = time.time() + seconds
    while True:
        wb, req = wb_status(d, mnt)
        if pred(wb, req) or time.time() > end:
            return wb, req
        time.sleep(0.05)


def wb_writer(d, work, name, mib):
    p = subprocess.Popen([REDIRECT, "-q", "-s", "sequential size_per_io(64*KiB)", work + "/**", "--",
                          sys.executable, "-c", WB_WRITER, os.path.join(work, name), str(mib)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ, **d.env()),
                         text=True)
    check(p.stdout.readline().strip() == "written", "%s: the writer wrote %d MiB" % (name, mib))
    return p


def wb_do(p, action):
    p.stdin.write(action + "\n")
    p.stdin.flush()
    return p.stdout.readline().strip() == "ok"


def wb_on_device(dev, path):
    """Whether the file's bytes are on the block device below its
    filesystem (read there with O_DIRECT at the extents FIEMAP gives)."""
    r, o, e = run(["filefrag", "-e", path])
    bs = re.search(r"blocks of (\d+) bytes", o)
    bs = int(bs.group(1)) if bs else 0
    with open(path, "rb") as f:
        want = f.read()
    got = bytearray()
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    try:
        for line in o.splitlines():
            m = re.match(r"\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+)\.\.\s*(\d+):", line)
            if not m or not bs:
                continue
            lo, hi, plo = int(m.group(1)), int(m.group(2)), int(m.group(3))
            n = (hi - lo + 1) * bs
            buf = mmap.mmap(-1, n)
            os.preadv(fd, [buf], plo * bs)
            got[lo * bs:lo * bs + n] = buf[:n]
    finally:
        os.close(fd)
    return r == 0 and bytes(got[:len(want)]) == want


def test_writeback():
    need_root()
    if not shutil.which("filefrag"):
        skip("filefrag(8) is not installed (e2fsprogs)")
    s = Scratch("iosigd-wb.")
    try:
        mnt = s.mount_ext4("ext4", "256M")
        dev = s.device(mnt)
        for policy in ("noop", "bid-hdd"):
            work = os.path.join(mnt, policy)
            os.makedirs(work)
            # The kernel's thresholds (hundreds of MiB, 15 s here): a
            # writer of 8 MiB hands nothing to the policy until its fsync,
            # which waits for the write-backs it started.
            with serving(s, "wb-" + policy, config([(mnt, "hdd")], policy), policy) as d:
                p = wb_writer(d, work, "quiet", 8)
                wb, req = wb_until(d, mnt, lambda wb, req: wb["pending_bytes"] >= 8 << 20, 5)
                check(wb["pending_bytes"] == 8 << 20 and wb["started"] == 0 and req == 0 and
                      wb["dirty_max"] >= 16 << 20 and wb["expire_s"] > 1,
                      "%s: below the threshold the policy gets no write-back (%s, %d requests)"
                      % (policy, wb, req))
                check(wb_do(p, "fsync"), "%s: fsync" % policy)
                wb, req = wb_status(d, mnt)
                check(wb["pending_bytes"] == 0 and wb["started"] == 0 and req >= 2,
                      "%s: fsync handed the 8 MiB to the policy and waited for it (%s, %d requests)"
                      % (policy, wb, req))
                check(wb_on_device(dev, os.path.join(work, "quiet")), "%s: after fsync the file is on %s" % (policy, dev))
                # The last close: the same, without an fsync.
                check(wb_do(p, "close"), "%s: close" % policy)
                q = wb_writer(d, work, "closed", 4)
                check(wb_do(q, "close"), "%s: close after 4 MiB" % policy)
                wb, req2 = wb_status(d, mnt)
                check(wb["pending_bytes"] == 0 and wb["started"] == 0 and req2 > req,
                      "%s: the last close handed the file's write-back to the policy and waited (%s, %d requests)"
                      % (policy, wb, req2 - req))
                check(wb_on_device(dev, os.path.join(work, "closed")), "%s: after close the file is on %s" % (policy, dev))
                for x in (p, q):
                    wb_do(x, "exit")
                    x.wait()
            # A small threshold and a short expiry: write-backs follow a
            # writer that never syncs, and the file is on the device.
            cfg = config([(mnt, "hdd")], policy) + "  writeback: { dirty: 2MiB, expire: 1s }\n"
            with serving(s, "wb-small-" + policy, cfg, policy) as d:
                p = wb_writer(d, work, "beyond", 12)
                wb, req = wb_until(d, mnt, lambda wb, req: wb["pending_bytes"] <= 2 << 20 and req > 0, 5)
                check(wb["dirty_max"] == 2 << 20 and wb["pending_bytes"] <= 2 << 20 and req > 0,
                      "%s: beyond `dirty: 2MiB` the oldest write-backs go to the policy (%s, %d requests)"
                      % (policy, wb, req))
                wb, req = wb_until(d, mnt, lambda wb, req: wb["pending"] == 0 and wb["started"] == 0, 10)
                check(wb["pending"] == 0 and wb["started"] == 0 and abs(wb["expire_s"] - 1) < 1e-6,
                      "%s: after `expire: 1s` the rest went too, and was done (%s)" % (policy, wb))
                check(wb_on_device(dev, os.path.join(work, "beyond")),
                      "%s: without fsync or close the file is on %s" % (policy, dev))
                wb_do(p, "exit")
                p.wait()
    finally:
        Daemon.kill_all()
        s.close()


GROUPS = {"cli": test_cli, "systemd": test_systemd, "user": test_user, "programs": test_programs, "stdio": test_stdio,
          "xproc": test_xproc, "faults": test_faults, "clients": test_clients,
          "hostile": test_hostile, "load": test_load, "writeback": test_writeback}


def run_group(groups, script):
    """The main() of a test script: runs the group sys.argv[1] names, in
    a private mount namespace when root (the loop mounts vanish with it)."""
    if len(sys.argv) != 2 or sys.argv[1] not in groups:
        print("usage: %s {%s}" % (script, "|".join(groups)))
        return 2
    if os.geteuid() == 0 and os.environ.get("IOSIGD_TEST_NS") != "1":
        unshare = shutil.which("unshare")
        if not unshare:
            skip("unshare(1) is not installed (util-linux)")
        env = dict(os.environ, IOSIGD_TEST_NS="1")
        os.execve(unshare, [unshare, "--mount", "--propagation", "private", sys.executable] + sys.argv, env)
    try:
        groups[sys.argv[1]]()
    finally:
        Daemon.kill_all()
    return finish()


if __name__ == "__main__":
    sys.exit(run_group(GROUPS, "daemon_test.py"))
