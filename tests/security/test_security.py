#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Multi-user attacks on the runtime, iosig-redirect and iosig finalize
(issue 10; the threat model is docs/security.md).

    test_security.py ITEM

Each ITEM reproduces one attack as a hostile second user of the machine
would make it, with two real unprivileged users created for the run
("alice", the victim, and "mallory"), a group they share with a real
group-writable setgid directory ("/srv/proj"), a private mount namespace
whose /dev/shm is a fresh tmpfs (so that a "reboot" is a remount and no
other test sees it), and ANN (ann.c) compiled with the GCC plugin; one
copy of ANN is installed set-user-ID root.

  stale_link        1  a stale link whose data directory mallory recreated
                       must not lead alice's data into mallory's file
  setuid_env        2  a set-user-ID program ignores IOSIG_* (no root-owned
                       log file where the caller says)
  planted_unlink    3  mallory's link to alice's data in a shared directory:
                       removing it under iosig-redirect keeps alice's data
  planted_finalize  4  alice's `iosig finalize` refuses mallory's link to
                       her data; her own links come back with their mode
  log_fifo          5  a FIFO or mallory's file as the decision log: no
                       hang, no record lands in mallory's file
  config_size       6  a huge configuration is refused at once
  datadir_occupied  7  mallory occupying /dev/shm/iosig-<alice's uid> does
                       not keep alice off /dev/shm
  root_finalize     8  root may finalize alice's links (and only hers)
  long_cwd          9  iosig-redirect runs in a directory deeper than PATH_MAX
  enospc           10  a file without totalsize is not put on a 16 MiB tmpfs

Needs root (users, mounts, a set-user-ID binary): exit 77 with the reason
otherwise.  The users have unique names per run and are removed at the end
(users left by a run that was killed are removed by the next one).
Paths of the built programs come from the environment (CMakeLists.txt).
"""
import grp
import json
import os
import pwd
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from iosig_testlib import write_config  # noqa: E402

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.environ.get("IOSIG_TOOL", "iosig")
REDIRECT = os.environ.get("IOSIG_REDIRECT", "iosig-redirect")
SIG = "tmp random_access size_per_io(4*KiB)"
failures = []


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def sh(args, **kw):
    """Runs a command as root; returns the CompletedProcess (text)."""
    return subprocess.run(args, capture_output=True, text=True, **kw)


def read(path):
    """The content of a file (following links), None if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return None


def log_records(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def decisions(path):
    return [r for r in log_records(path) if r.get("event") == "decision"]


# ---------------------------------------------------------------------------
# Users
# ---------------------------------------------------------------------------

PREFIX = "iosec"          # users iosec<tag>a / iosec<tag>m, group iosec<tag>g
SCRATCH_PREFIX = "iosig-sec-"


def locked(args):
    """Runs a shadow-utils command, retrying while another one holds the
    lock on /etc/passwd or /etc/group (other tests add users too)."""
    for _ in range(100):
        r = sh(args)
        if r.returncode == 0 or "lock" not in r.stderr.lower():
            return r
        time.sleep(0.1 + random.random() * 0.2)
    return r


def reap_stale_users():
    """Removes the users and the group of earlier runs whose scratch
    directory is gone (a run killed before its cleanup).  The scratch
    directory, not the home: a run makes the scratch directory before its
    users and their homes after them.  A group is removed only with its
    users: a group without users may be a run that is starting right now."""
    tags = set()
    for pw in pwd.getpwall():
        scratch = os.path.dirname(os.path.dirname(pw.pw_dir))
        if (re.fullmatch(PREFIX + r"[0-9a-f]{8}[am]", pw.pw_name) and
                os.path.basename(scratch).startswith(SCRATCH_PREFIX) and
                not os.path.exists(scratch)):
            locked(["userdel", pw.pw_name])
            tags.add(pw.pw_name[len(PREFIX):-1])
    for tag in tags:
        locked(["groupdel", PREFIX + tag + "g"])


class User:
    def __init__(self, name, home):
        pw = pwd.getpwnam(name)
        self.name, self.uid, self.gid, self.home = name, pw.pw_uid, pw.pw_gid, home

    def path(self, *parts):
        return os.path.join(self.home, *parts)


class World:
    """Two users, a shared group and directory, a private /dev/shm, ANN."""

    def __init__(self):
        if os.geteuid() != 0:
            skip("needs root: creates two users, mounts a tmpfs, installs a set-user-ID binary")
        for tool in ("useradd", "userdel", "groupadd", "groupdel", "mount"):
            if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
                skip("no %s on this machine" % tool)
        os.environ["PATH"] = os.environ.get("PATH", "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        reap_stale_users()
        self.tag = "%08x" % random.getrandbits(32)
        self.dir = tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir="/var/tmp")
        os.chmod(self.dir, 0o755)
        self.users = []
        self.group = None
        self.mounts = []
        self.shm_mounted = False

    # -- set-up --------------------------------------------------------------

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def make_users(self):
        g = PREFIX + self.tag + "g"
        r = locked(["groupadd", g])
        if r.returncode:
            skip("groupadd: " + r.stderr.strip())
        self.group = g
        self.shared_gid = grp.getgrnam(g).gr_gid
        os.makedirs(self.path("home"), mode=0o755)
        for role in ("a", "m"):
            name = PREFIX + self.tag + role
            home = self.path("home", name)
            r = locked(["useradd", "--no-create-home", "--home-dir", home, "--shell", "/bin/sh",
                        "--user-group", "--groups", g, name])
            if r.returncode:
                skip("useradd: " + r.stderr.strip())
            self.users.append(name)
            u = User(name, home)
            os.mkdir(home, 0o700)
            os.chown(home, u.uid, u.gid)
            setattr(self, "alice" if role == "a" else "mallory", u)
        # /srv/proj: a project directory of the shared group (setgid, 2775).
        self.proj = self.path("srv", "proj")
        os.makedirs(self.proj)
        os.chown(self.proj, 0, self.shared_gid)
        os.chmod(self.proj, 0o2775)

    def mount_shm(self):
        """A fresh /dev/shm (tmpfs, 1777) in this private namespace."""
        r = sh(["mount", "-t", "tmpfs", "-o", "mode=1777,size=2g", "iosig-sec-shm", "/dev/shm"])
        if r.returncode:
            skip("cannot mount a tmpfs on /dev/shm: " + r.stderr.strip())
        self.shm_mounted = True

    def reboot_shm(self):
        """What a reboot does to /dev/shm: everything on it is gone."""
        check(sh(["umount", "/dev/shm"]).returncode == 0, "/dev/shm unmounted (reboot)")
        self.shm_mounted = False
        self.mount_shm()

    def mount_tmpfs(self, name, size):
        mnt = self.path(name)
        os.makedirs(mnt, exist_ok=True)
        r = sh(["mount", "-t", "tmpfs", "-o", "mode=1777,size=" + size, "iosig-sec-" + name, mnt])
        if r.returncode:
            skip("cannot mount a tmpfs: " + r.stderr.strip())
        self.mounts.append(mnt)
        return mnt

    def write_config(self, mounts, name="iosig.yaml"):
        """A configuration that leaves out every mount but `mounts` (mount
        point, data_dir or None for the default rule, [settings])."""
        path = self.path(name)
        write_config(path, mounts)
        os.chmod(path, 0o644)
        self.config = path
        return path

    def build_ann(self):
        """ANN compiled with the GCC plugin; a set-user-ID root copy too."""
        cc, plugin = os.environ.get("IOSIG_GCC"), os.environ.get("IOSIG_GCC_PLUGIN")
        inc, libdir = os.environ.get("IOSIG_INCLUDE"), os.environ.get("IOSIG_LIBDIR")
        if not (cc and plugin and inc and libdir):
            skip("IOSIG_GCC, IOSIG_GCC_PLUGIN, IOSIG_INCLUDE and IOSIG_LIBDIR must name the "
                 "compiler, the plugin and libiosig (run through ctest)")
        bindir = self.path("bin")
        os.mkdir(bindir, 0o755)
        obj, exe = os.path.join(bindir, "ann.o"), os.path.join(bindir, "ann")
        r = sh([cc, "-O1", "-Wall", "-I" + inc, "-fplugin=" + plugin, "-c",
                os.path.join(HERE, "ann.c"), "-o", obj])
        if r.returncode:
            raise SystemExit("FAIL compiling ann.c with the plugin:\n" + r.stderr)
        linker = os.environ.get("IOSIG_E2E_LINK_CC") or cc
        r = sh([linker, obj, "-o", exe, "-L" + libdir, "-liosig", "-Wl,-rpath," + libdir] +
               os.environ.get("IOSIG_E2E_LDFLAGS", "").split())
        if r.returncode:
            raise SystemExit("FAIL linking ann:\n" + r.stderr)
        os.chmod(exe, 0o755)
        self.ann_path = exe
        self.suid_path = os.path.join(bindir, "ann-suid")
        shutil.copy(exe, self.suid_path)
        os.chown(self.suid_path, 0, 0)
        os.chmod(self.suid_path, 0o4755)

    def setup(self, shm=True):
        """Everything most items need."""
        self.make_users()
        if shm:
            self.mount_shm()
        self.build_ann()

    def close(self):
        for m in reversed(self.mounts):
            sh(["umount", "-l", m])
        if self.shm_mounted:
            sh(["umount", "-l", "/dev/shm"])
        shutil.rmtree(self.dir, ignore_errors=True)
        for name in self.users:
            locked(["userdel", name])
        if self.group:
            locked(["groupdel", self.group])

    # -- running things as a user ------------------------------------------

    def env_of(self, u, env):
        e = {"HOME": u.home, "USER": u.name, "LOGNAME": u.name, "PATH": "/usr/bin:/bin",
             "LANG": "C"}
        for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
            if k in os.environ:
                e[k] = os.environ[k]
        if getattr(self, "config", None):
            e["IOSIG_CONFIG"] = self.config
        for k, v in (env or {}).items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
        return e

    def run(self, u, args, env=None, timeout=60, cwd=None):
        """Runs args as user u (None: root) with a clean environment;
        returns (status, stdout, stderr); status "timeout" if it hung."""
        kw = {}
        if u is not None:
            kw = dict(user=u.uid, group=u.gid, extra_groups=[u.gid, self.shared_gid])
            e = self.env_of(u, env)
        else:
            e = self.env_of(User("root", "/root"), env)
        try:
            p = subprocess.run(args, env=e, capture_output=True, timeout=timeout,
                               cwd=cwd or (u.home if u else self.dir), **kw)
        except subprocess.TimeoutExpired as t:
            return "timeout", (t.stdout or b"").decode(errors="replace"), \
                (t.stderr or b"").decode(errors="replace")
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def ann(self, u, *args, env=None, suid=False, timeout=60):
        return self.run(u, [self.suid_path if suid else self.ann_path] + list(args), env=env,
                        timeout=timeout)

    def as_user_sh(self, u, script, env=None, timeout=60):
        return self.run(u, ["/bin/sh", "-c", script], env=env, timeout=timeout)


def run_ok(r, what):
    status, out, err = r
    return check(status == 0, "%s (status %s%s)" % (what, status, (": " + err.strip()[-300:])
                                                     if status else ""))


def shm_ddir(u):
    return "/dev/shm/iosig-%d" % u.uid


def owned_private_dir(path, u):
    st = os.lstat(path)
    return stat.S_ISDIR(st.st_mode) and st.st_uid == u.uid and (st.st_mode & 0o077) == 0


# ---------------------------------------------------------------------------
# 1. A stale link
# ---------------------------------------------------------------------------

def item_stale_link(w):
    """alice's link into /dev/shm outlives the tmpfs; mallory recreates the
    data directory world-writable and makes the link's target a symbolic
    link to her own file.  alice's next runs must neither read mallory's
    file through the link nor write the secret into it."""
    w.setup()
    w.write_config([("/dev/shm", None, [])])
    a, m = w.alice, w.mallory
    daily, log = a.path("daily"), a.path("log.jsonl")
    env = {"IOSIG_LOG": log}

    run_ok(w.ann(a, "write", daily, "first secret", env=env), "alice creates ~/daily")
    check(os.path.islink(daily) and os.readlink(daily).startswith(shm_ddir(a) + "/"),
          "~/daily is a link into %s" % shm_ddir(a))
    target = os.readlink(daily)
    run_ok(w.ann(a, "write", daily, "second secret", env=env), "alice writes ~/daily again")
    check(os.readlink(daily) == target and read(target) == "second secret",
          "a valid link is written through (the same data file)")
    check(decisions(log)[-1]["action"] == "existing", "logged as 'existing'")

    w.reboot_shm()
    trap = "/dev/shm/mallory-trap"
    r = w.as_user_sh(m, "mkdir -m 777 %s && printf MALLORY > %s && chmod 666 %s && ln -s %s %s" %
                     (shm_ddir(a), trap, trap, trap, target))
    run_ok(r, "mallory recreates %s (0777) with a link to her file at the target's name" %
           shm_ddir(a))

    status, out, err = w.ann(a, "read", daily, env=env)
    check("MALLORY" not in out, "alice's read of ~/daily does not return mallory's file")
    check(status != 0 and "No such file" in err,
          "the read fails as for a dangling link (status %s: %s)" % (status, err.strip()))

    run_ok(w.ann(a, "write", daily, "third secret", env=env), "alice's next run writes ~/daily")
    check(read(trap) == "MALLORY", "nothing was written into mallory's file")
    # A fresh decision: a new link on /dev/shm, into a data directory of
    # alice's (the name mallory occupied is avoided, see datadir_occupied).
    new = os.readlink(daily) if os.path.islink(daily) else ""
    check(new.startswith("/dev/shm/") and new != target and
          owned_private_dir(os.path.dirname(new), a),
          "~/daily is a new link into a directory of alice's nobody else can write (%s)" % new)
    status, out, err = w.ann(a, "read", daily)
    check(status == 0 and out == "third secret", "alice reads her secret back")
    last = decisions(log)[-1]
    check(last["action"] == "redirected" and last.get("stale_link") and
          target in last["stale_link"], "the log names the stale link replaced: %s" %
          last.get("stale_link"))

    # A link mallory cannot have made and alice did not: followed as the
    # system would (ordinary links are not the runtime's business).
    mine = a.path("notes.txt")
    w.as_user_sh(a, "printf notes > %s && ln -s %s %s" % (mine, mine, a.path("alias")))
    run_ok(w.ann(a, "write", a.path("alias"), "via alias"), "alice writes through her own link")
    check(read(mine) == "via alias", "an ordinary link of alice's is followed")


# ---------------------------------------------------------------------------
# 2. A set-user-ID program and IOSIG_*
# ---------------------------------------------------------------------------

def item_setuid_env(w):
    """mallory runs a set-user-ID root annotated program with IOSIG_LOG
    naming a file in a directory only root may write, and with IOSIG_*
    switches and a configuration of her own: none may apply.  (IOSIG_STRICT
    and the job identity go through the same env_get(); they change nothing
    observable here, where the system's own catalog always has a mount.)"""
    w.setup()
    w.write_config([("/dev/shm", None, [])])
    m = w.mallory
    rootonly = w.path("rootonly")
    os.mkdir(rootonly, 0o755)
    pwned = os.path.join(rootonly, "pwned.log")
    out = w.path("mout")
    os.mkdir(out, 0o755)
    os.chown(out, m.uid, m.gid)
    mcfg = m.path("cfg.yaml")
    w.as_user_sh(m, "printf 'version: 1\\nmounts:\\n  \"/dev/shm\": { ignore: true }\\n' > %s" % mcfg)

    # Control: the same program, not privileged, honours every variable.
    ctl = os.path.join(rootonly, "control.log")
    r = w.ann(None, "write", os.path.join(out, "control"), "x", suid=False,
              env={"IOSIG_LOG": ctl, "IOSIG_DRYRUN": "1"})
    run_ok(r, "root runs ANN (not set-user-ID) with IOSIG_LOG and IOSIG_DRYRUN")
    check(os.path.exists(ctl) and not os.path.islink(os.path.join(out, "control")),
          "an unprivileged process honours IOSIG_LOG and IOSIG_DRYRUN (control)")

    r = w.ann(m, "write", os.path.join(out, "f1"), "secret", suid=True,
              env={"IOSIG_LOG": pwned, "IOSIG_CONFIG": mcfg})
    run_ok(r, "mallory runs the set-user-ID ANN with IOSIG_LOG and IOSIG_CONFIG")
    check(sorted(os.listdir(rootonly)) == ["control.log"],
          "no file appeared in the root-only directory (%s)" % sorted(os.listdir(rootonly)))
    check(os.path.islink(os.path.join(out, "f1")),
          "her IOSIG_CONFIG (every mount ignored) did not apply: the file was redirected")

    for var in ("IOSIG_DRYRUN", "IOSIG_DISABLE"):
        f = os.path.join(out, var)
        r = w.ann(m, "write", f, "secret", suid=True, env={var: "1"})
        run_ok(r, "mallory runs the set-user-ID ANN with %s=1" % var)
        check(os.path.islink(f), "%s was ignored in the privileged process" % var)



# ---------------------------------------------------------------------------
# 3. unlink of a planted link
# ---------------------------------------------------------------------------

def item_planted_unlink(w):
    """mallory links /srv/proj/job.tmp to the data of alice's
    ~/important; alice removes job.tmp under iosig-redirect: the unlink
    interposer must not remove alice's data."""
    w.setup()
    w.write_config([("/dev/shm", None, [])])
    a, m = w.alice, w.mallory
    important = a.path("important")
    run_ok(w.ann(a, "write", important, "important secret"), "alice creates ~/important")
    target = os.readlink(important)
    job = os.path.join(w.proj, "job.tmp")
    run_ok(w.as_user_sh(m, "ln -s %s %s" % (target, job)), "mallory plants job.tmp -> %s" % target)
    log = a.path("log.jsonl")
    rule = ["-s", "tmp random_access size_per_io(4KiB)", w.proj + "/**"]
    r = w.run(a, [REDIRECT, "--log", log] + rule + ["--", "rm", "-f", job])
    run_ok(r, "alice: iosig-redirect ... -- rm -f /srv/proj/job.tmp")
    check(not os.path.lexists(job), "the planted link is gone (rm did its job)")
    check(os.path.exists(target), "alice's data file is still there")
    status, out, err = w.ann(a, "read", important)
    check(status == 0 and out == "important secret", "~/important still reads the secret")

    # alice's own copy of her link, under another name: not the link the
    # runtime made for that data, so removing it keeps the data.
    copy = os.path.join(w.proj, "copy.tmp")
    w.as_user_sh(a, "ln -s %s %s" % (target, copy))
    run_ok(w.run(a, [REDIRECT] + rule + ["--", "rm", "-f", copy]), "alice removes a copy of her link")
    check(os.path.exists(target), "the data of ~/important survives the removal of a copy")

    # The runtime's own link, removed by alice: the data goes with it.
    # (Inside the preloaded shell the link is the file it stands for; a
    # readlink without the preload library sees the link.)
    own = os.path.join(w.proj, "own.tmp")
    r = w.run(a, [REDIRECT, "--log", log] + rule +
              ["--", "sh", "-c", "printf x > %s && env -u LD_PRELOAD readlink %s && rm %s" %
               (own, own, own)])
    run_ok(r, "alice creates and removes /srv/proj/own.tmp under iosig-redirect")
    own_target = r[1].strip()
    check(own_target.startswith("/dev/shm/") and not os.path.lexists(own_target),
          "the data of a link the runtime made for alice is removed with it (%s)" % own_target)
    check(any(d["action"] == "removed" for d in decisions(log)), "logged as 'removed'")


# ---------------------------------------------------------------------------
# 4. finalize of a planted link
# ---------------------------------------------------------------------------

def item_planted_finalize(w):
    """mallory links /srv/proj/result-99.dat to the data of alice's private
    file; alice finalizes /srv/proj/*: the planted link is refused, her data
    stays private and her link keeps working; her own links are finalized
    and keep their mode."""
    w.setup()
    w.write_config([("/dev/shm", None, [])])
    a, m = w.alice, w.mallory
    private = a.path("private")
    run_ok(w.ann(a, "write", private, "private secret", "0", "0644"), "alice creates ~/private")
    target = os.readlink(private)
    planted = os.path.join(w.proj, "result-99.dat")
    run_ok(w.as_user_sh(m, "ln -s %s %s" % (target, planted)), "mallory plants result-99.dat")
    mine = os.path.join(w.proj, "result-1.dat")
    run_ok(w.ann(a, "write", mine, "shared result", "0", "0640"), "alice creates result-1.dat")
    check(os.path.islink(mine), "result-1.dat is redirected")

    for tool in ([TOOL, "finalize", "--config", w.config], [REDIRECT, "finalize", "--config", w.config]):
        status, out, err = w.run(a, tool + sorted(os.path.join(w.proj, n) for n in os.listdir(w.proj)))
        name = " ".join(os.path.basename(t) for t in tool[:2])
        check(status == 1 and "result-99.dat" in err and "refused" in err,
              "%s refuses the planted link (status %s: %s)" % (name, status, err.strip()))
        check(os.path.islink(planted) and os.readlink(planted) == target,
              "the planted link is left as it is")
        check(os.path.islink(private) and read(private) == "private secret",
              "alice's own link still reaches her data")
        check(stat.S_IMODE(os.lstat(os.path.dirname(target)).st_mode) == 0o700,
              "her data is still in her private data directory")
    st = os.lstat(mine)
    check(stat.S_ISREG(st.st_mode) and st.st_uid == a.uid and stat.S_IMODE(st.st_mode) == 0o640
          and read(mine) == "shared result",
          "alice's own link was finalized: a regular file of hers, mode 0640 kept")


# ---------------------------------------------------------------------------
# 5. The decision log
# ---------------------------------------------------------------------------

def item_log_fifo(w):
    """mallory pre-creates a FIFO, a world-writable file of hers and a
    link at the names alice gives IOSIG_LOG / --log: no hang, nothing of
    alice's lands in mallory's files, one warning; alice's own log works."""
    w.setup()
    w.write_config([("/dev/shm", None, [])])
    a, m = w.alice, w.mallory
    fifo, mfile, mlink = (os.path.join(w.proj, n) for n in ("fifo.jsonl", "mfile.jsonl", "mlink.jsonl"))
    r = w.as_user_sh(m, "mkfifo -m 666 %s && : > %s && chmod 666 %s && ln -s %s %s" %
                     (fifo, mfile, mfile, mfile, mlink))
    run_ok(r, "mallory makes a FIFO, a 0666 file and a link in /srv/proj")
    for what, log in (("FIFO", fifo), ("file of mallory's", mfile), ("link to it", mlink)):
        status, out, err = w.ann(a, "write", a.path("f-" + os.path.basename(log)), "secret",
                                 env={"IOSIG_LOG": log}, timeout=20)
        check(status == 0, "ANN with IOSIG_LOG = a %s does not hang (status %s)" % (what, status))
        check(err.count("iosig:") == 1 and log in err,
              "one warning names the unusable log: %r" % err.strip())
        status, out, err = w.run(a, [REDIRECT, "--log", log, "-s", "tmp", a.home + "/**", "--",
                                     "sh", "-c", "printf x > %s" % a.path("g-" + os.path.basename(log))],
                                 timeout=20)
        check(status == 0, "iosig-redirect --log = a %s does not hang (status %s)" % (what, status))
        check(err.count("warning") == 1 and log in err and "iosig: IOSIG_LOG" not in err,
              "iosig-redirect warns once, its program not at all: %r" % err.strip())
    check(os.path.getsize(mfile) == 0, "nothing was written into mallory's file")
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO is left as it is")

    own = a.path("own.jsonl")
    run_ok(w.ann(a, "write", a.path("f-own"), "x", env={"IOSIG_LOG": own}), "ANN with alice's own log")
    st = os.lstat(own)
    check(stat.S_ISREG(st.st_mode) and st.st_uid == a.uid and stat.S_IMODE(st.st_mode) == 0o600,
          "the log is created 0600 by alice")
    run_ok(w.ann(a, "write", a.path("f-own2"), "x", env={"IOSIG_LOG": own}), "and appended to")
    check(len(decisions(own)) == 2, "two decision records in alice's log")


# ---------------------------------------------------------------------------
# 6. A huge configuration
# ---------------------------------------------------------------------------

CONFIG_MOUNTS_MAX = 10000


def big_config(path, n):
    with open(path, "w") as f:
        f.write("version: 1\nmounts:\n")
        for i in range(n):
            f.write("  /m%06d: {ignore: true}\n" % i)
    os.chmod(path, 0o644)


def item_config_size(w):
    """A configuration mallory offers in the project directory with 430 000
    mounts entries (15 MiB): alice's first annotated open must not stall
    (the open is done plainly, the log says why); one entry over the
    documented limit is refused with a message, the limit itself loads."""
    w.setup()
    a, m = w.alice, w.mallory
    huge = os.path.join(w.proj, "iosig.yaml")
    big_config(huge, 430000)
    os.chown(huge, m.uid, w.shared_gid)
    log = a.path("log.jsonl")
    status, out, err = w.ann(a, "write", a.path("f"), "x",
                             env={"IOSIG_CONFIG": huge, "IOSIG_LOG": log}, timeout=60)
    check(status == 0, "ANN with the 430 000-entry configuration returns (status %s)" % status)
    recs = decisions(log)
    check(recs and recs[-1]["action"] == "fallback" and "catalog" in (recs[-1]["fallback"] or ""),
          "the open was done plainly, the log says why: %s" % (recs[-1]["fallback"] if recs else None))
    over = w.path("over.yaml")
    big_config(over, CONFIG_MOUNTS_MAX + 1)
    status, out, err = w.run(a, [TOOL, "devices", "--config", over], timeout=60)
    check(status != 0 and str(CONFIG_MOUNTS_MAX) in err and "mounts" in err,
          "%d entries are refused, the message names the limit (status %s: %s)" %
          (CONFIG_MOUNTS_MAX + 1, status, err.strip()[:300]))
    at = w.path("at.yaml")
    big_config(at, CONFIG_MOUNTS_MAX)
    status, out, err = w.run(a, [TOOL, "devices", "--config", at], timeout=60)
    check(status == 0, "%d entries load (status %s: %s)" % (CONFIG_MOUNTS_MAX, status, err.strip()[:300]))


# ---------------------------------------------------------------------------
# 7. An occupied data directory name
# ---------------------------------------------------------------------------

def item_datadir_occupied(w):
    """mallory makes /dev/shm/iosig-<alice's uid> (0700, hers) and a
    look-alike of the fallback name: alice's files still go to /dev/shm,
    into a directory of hers, the same one every time."""
    w.setup()
    w.write_config([("/dev/shm", None, [])])
    a, m = w.alice, w.mallory
    decoy = shm_ddir(a) + "-0000000000000000"
    run_ok(w.as_user_sh(m, "mkdir -m 700 %s && mkdir -m 777 %s" % (shm_ddir(a), decoy)),
           "mallory occupies %s and %s" % (shm_ddir(a), decoy))
    run_ok(w.ann(a, "write", a.path("one"), "1"), "alice creates ~/one")
    t1 = os.readlink(a.path("one")) if os.path.islink(a.path("one")) else ""
    check(t1.startswith("/dev/shm/"), "~/one is redirected to /dev/shm (%s)" % t1)
    d = os.path.dirname(t1)
    check(t1 and re.fullmatch(re.escape(shm_ddir(a)) + r"-[0-9a-f]{16}", d) and d != decoy,
          "into a name mallory could not predict (%s)" % d)
    check(t1 and owned_private_dir(d, a), "a directory of alice's, mode 0700")
    run_ok(w.ann(a, "write", a.path("two"), "2"), "alice creates ~/two")
    t2 = os.readlink(a.path("two")) if os.path.islink(a.path("two")) else ""
    check(t1 and os.path.dirname(t2) == d, "the next process finds the same directory")
    status, out, err = w.run(a, [TOOL, "devices", "--json", "--config", w.config])
    shm = [x for x in json.loads(out)["mounts"] if x["path"] == "/dev/shm"] if status == 0 else []
    check(shm and shm[0]["data_dir"]["value"] == d, "iosig devices shows it as the data directory")


# ---------------------------------------------------------------------------
# 8. root's finalize
# ---------------------------------------------------------------------------

def item_root_finalize(w):
    """root finalizes alice's link (docs/runtime.md promised it): the file
    comes back hers with its mode; a link of mallory's to alice's data is
    refused even for root."""
    w.setup()
    w.write_config([("/dev/shm", None, [])])
    a, m = w.alice, w.mallory
    legit = a.path("legit")
    run_ok(w.ann(a, "write", legit, "legit data", "0", "0640"), "alice creates ~/legit")
    other = a.path("other")
    run_ok(w.ann(a, "write", other, "other data"), "alice creates ~/other")
    planted = os.path.join(w.proj, "planted")
    run_ok(w.as_user_sh(m, "ln -s %s %s" % (os.readlink(other), planted)), "mallory plants a link")
    status, out, err = w.run(None, [TOOL, "finalize", "--config", w.config, legit])
    check(status == 0, "root's iosig finalize of ~alice/legit succeeds (status %s: %s)" %
          (status, err.strip()))
    st = os.lstat(legit)
    check(stat.S_ISREG(st.st_mode) and st.st_uid == a.uid and stat.S_IMODE(st.st_mode) == 0o640
          and read(legit) == "legit data", "~/legit is alice's regular file again, mode 0640")
    status, out, err = w.run(None, [TOOL, "finalize", "--config", w.config, planted])
    check(status == 1 and "refused" in err, "root refuses mallory's link to alice's data (%s)" %
          err.strip())
    check(os.path.islink(other) and read(other) == "other data", "~/other is untouched")


# ---------------------------------------------------------------------------
# 9. A working directory deeper than PATH_MAX
# ---------------------------------------------------------------------------

def item_long_cwd(w):
    """iosig-redirect with absolute rules in a directory whose path is
    longer than PATH_MAX: the program runs; relative opens are unmatched."""
    w.setup()
    w.write_config([("/dev/shm", None, [])])
    a = w.alice
    outdir = a.path("out")
    os.mkdir(outdir, 0o700)
    os.chown(outdir, a.uid, a.gid)
    comp = "d" * 200
    # dash's cd -P chdirs component by component (a logical cd of a path
    # longer than PATH_MAX fails).
    deep = " && ".join(["mkdir %s && cd -P %s" % (comp, comp)] * 25)
    script = ("cd %s && %s && exec %s -s 'tmp random_access size_per_io(4KiB)' '%s/**' -- "
              "sh -c 'printf rel > rel.txt && printf abs > %s/abs.txt'" %
              (a.home, deep, REDIRECT, outdir, outdir))
    status, out, err = w.as_user_sh(a, script)
    check(status == 0, "iosig-redirect runs the program (status %s: %s)" % (status, err.strip()))
    abs_txt = os.path.join(outdir, "abs.txt")
    check(os.path.islink(abs_txt) and os.readlink(abs_txt).startswith("/dev/shm/"),
          "an absolute path a rule matches is redirected")
    r = sh(["find", a.path(comp), "-name", "rel.txt", "-type", "f"])
    check(r.stdout.strip().endswith("/rel.txt"), "the relative open was done plainly, in place")
    script = ("cd %s && %s && exec %s -s tmp 'rel/*.txt' -- true" %
              (a.home, deep.replace("mkdir %s && " % comp, ""), REDIRECT))
    status, out, err = w.as_user_sh(a, script)
    check(status == 125 and "relative" in err and "absolute" in err,
          "a relative pattern is an error that says to use an absolute one (%s: %s)" %
          (status, err.strip()))


# ---------------------------------------------------------------------------
# 10. ENOSPC
# ---------------------------------------------------------------------------

def item_enospc(w):
    """With a 16 MiB tmpfs as the only `tmp` target and no totalsize, a
    32 MiB write must succeed (the original path has room); `iosig explain`
    says which size it assumed; a declared small size still uses the tmpfs."""
    w.setup(shm=False)
    small = w.mount_tmpfs("small", "16m")
    w.write_config([(small, None, [])])
    a = w.alice
    big = a.path("big")
    status, out, err = w.ann(a, "write", big, "0123456789abcdef", str(32 << 20))
    check(status == 0, "ANN writes 32 MiB without totalsize (status %s: %s)" % (status, err.strip()))
    st = os.stat(big) if os.path.exists(big) else None
    check(st and st.st_size == 32 << 20 and not os.path.islink(big),
          "~/big holds 32 MiB where the program asked")
    status, out, err = w.run(a, [TOOL, "explain", "--config", w.config, SIG])
    check(status == 1 and "1 GiB (default, for space and MTTDL)" in out,
          "iosig explain says 1 GiB is assumed for space: %s" % out.strip()[:400])
    check(re.search(re.escape(small) + r".*needs 1 GiB \(the default size: declare totalsize\)", out)
          is not None,
          "and why the 16 MiB tmpfs was left out")
    status, out, err = w.run(a, [TOOL, "explain", "--config", w.config, "--size", "8MiB", SIG])
    check(status == 0 and "choice:     " + small in out, "a declared 8 MiB file goes to the tmpfs")


ITEMS = {
    "stale_link": item_stale_link,
    "setuid_env": item_setuid_env,
    "planted_unlink": item_planted_unlink,
    "planted_finalize": item_planted_finalize,
    "log_fifo": item_log_fifo,
    "config_size": item_config_size,
    "datadir_occupied": item_datadir_occupied,
    "root_finalize": item_root_finalize,
    "long_cwd": item_long_cwd,
    "enospc": item_enospc,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ITEMS:
        print("usage: test_security.py {%s}" % ",".join(ITEMS))
        return 2
    if os.geteuid() != 0:
        skip("needs root: creates two users, mounts a tmpfs, installs a set-user-ID binary")
    # A private mount namespace: the tmpfs on /dev/shm and the others are
    # this test's alone and disappear with it.
    if os.environ.get("IOSIG_SEC_UNSHARED") != "1":
        if not shutil.which("unshare"):
            skip("no unshare(1) for a private mount namespace")
        env = dict(os.environ, IOSIG_SEC_UNSHARED="1")
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable] +
                           sys.argv, env=env)
        return p.returncode
    w = World()
    try:
        ITEMS[sys.argv[1]](w)
    finally:
        w.close()
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
