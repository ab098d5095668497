#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Inside a process that runs libiosig, a link the runtime made for this
user behaves like the regular file it stands for (links.h, docs/runtime.md
"What a program can notice"); other processes still see a link.

    test_links.py GROUP

GROUP is one of:
  compiled  links_prog built with the GCC plugin and linked with libiosig.so:
            its annotated open redirects a file, then every interposed call
            on it (status, O_NOFOLLOW opens, readlink, rename, unlink,
            chmod, times ...) is checked against the data file
  preload   the plain links_prog under iosig-redirect: the same calls, the
            file redirected by a rule; and a file the compiled program
            redirected, seen by a preloaded program no rule matches
  both      the compiled links_prog under iosig-redirect: both layers
            interpose, neither acts inside the other
  foreign   links the runtime did not make for this user are left alone: one
            owned by another user, one to a file that is not a data file, a
            stale one, a copy (the file, but its removal keeps the data);
            IOSIG_DISABLE turns everything off
  gc        `iosig gc` after programs without libiosig (rm, mv, cp -P) removed,
            moved and copied links: the orphans are freed, nothing else;
            --dry-run, --json, MOUNT arguments, bad command lines

Every group runs in a private mount namespace with two tmpfs mounts: "work"
(where the program puts its files; slow by configuration, so it is never
chosen, but it has a data directory for the links' anchors) and "data" (the
chosen one).  Needs root; exits 77 with the reason otherwise.  Paths of the
built programs and the compiler come from the environment (CMakeLists.txt).
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from iosig_testlib import check, finish, skip, unshared, write_config  # noqa: E402

REDIRECT = os.environ.get("IOSIG_REDIRECT", "iosig-redirect")
TOOL = os.environ.get("IOSIG_TOOL", "iosig")
PLAIN = os.environ.get("LINKS_PROG", "")
HERE = os.path.dirname(os.path.abspath(__file__))
SIG = "tmp sequential_access size_per_io(4KiB)"
# The signatures declare no totalsize: the data mount has room for the 1 GiB
# selection assumes then (docs/selection.md); a tmpfs's size is a limit only.
DATA_SIZE = "2g"


class World:
    """The mounts, the configuration and the programs of one group."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="iosig-links-", dir="/var/tmp")
        os.chmod(self.dir, 0o755)
        self.work = self.path("work")
        self.data = self.path("data")
        for mnt, size in ((self.work, "64m"), (self.data, DATA_SIZE)):
            os.mkdir(mnt)
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=755" % size,
                                "iosig-links", mnt], capture_output=True, text=True)
            if r.returncode:
                skip("cannot mount a tmpfs: " + r.stderr.strip())
        self.work_dd = os.path.join(self.work, "dd")
        self.data_dd = os.path.join(self.data, "dd")
        self.config = self.path("iosig.yaml")
        write_config(self.config, [
            (self.work, self.work_dd, ["seq_write_bw: 1MiB/s", "seq_read_bw: 1MiB/s"]),
            (self.data, self.data_dd, [])])
        self.compiled = None

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def w(self, name):
        return os.path.join(self.work, name)

    def build_compiled(self):
        cc, plugin = os.environ.get("IOSIG_GCC"), os.environ.get("IOSIG_GCC_PLUGIN")
        inc, libdir = os.environ.get("IOSIG_INCLUDE"), os.environ.get("IOSIG_LIBDIR")
        if not (cc and plugin and inc and libdir):
            skip("IOSIG_GCC, IOSIG_GCC_PLUGIN, IOSIG_INCLUDE and IOSIG_LIBDIR must name the "
                 "compiler, the plugin and libiosig (run through ctest)")
        exe = self.path("links_prog")
        obj = exe + ".o"
        r = subprocess.run([cc, "-O1", "-Wall", "-I" + inc, "-fplugin=" + plugin, "-c",
                            os.path.join(HERE, "links_prog.c"), "-o", obj],
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit("FAIL compiling links_prog.c with the plugin:\n" + r.stderr)
        linker = os.environ.get("IOSIG_E2E_LINK_CC") or cc
        r = subprocess.run([linker, obj, "-o", exe, "-L" + libdir, "-liosig",
                            "-Wl,-rpath," + libdir] +
                           os.environ.get("IOSIG_E2E_LDFLAGS", "").split(),
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit("FAIL linking links_prog:\n" + r.stderr)
        self.compiled = exe

    def env(self, extra=None):
        e = dict(os.environ)
        for k in list(e):
            if k.startswith("IOSIG_") and k not in ("IOSIG_E2E_LDFLAGS",):
                del e[k]
        e["IOSIG_CONFIG"] = self.config
        e["IOSIG_PROBE_CACHE"] = ""
        if extra:
            e.update(extra)
        return e

    def close(self):
        for mnt in (self.work, self.data):
            subprocess.run(["umount", "-l", mnt], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


class Runner:
    """Runs links_prog one call at a time: `prefix` is what goes before
    it (iosig-redirect and its rules, or nothing)."""

    def __init__(self, world, prog, prefix=(), env=None):
        self.world, self.prog, self.prefix, self.extra = world, prog, list(prefix), env

    def __call__(self, call, *args):
        p = subprocess.run(self.prefix + [self.prog, call] + [str(a) for a in args],
                           capture_output=True, text=True, env=self.world.env(self.extra),
                           cwd=self.world.work)
        line = p.stdout.strip().splitlines()
        try:
            res = json.loads(line[-1]) if line else None
        except ValueError:
            res = None
        if res is None:
            res = {"call": call, "ret": -1, "errno": "no output (status %d): %s" %
                   (p.returncode, p.stderr.strip()[-300:])}
        return res


def is_link_into(path, ddir):
    return os.path.islink(path) and os.readlink(path).startswith(ddir + "/")


def anchor_of(world, data):
    return os.path.join(world.work_dd, "anchors", os.path.basename(data))


def redirected(world, run, name, text):
    """Creates work/NAME through the program; returns the data file's path."""
    path = world.w(name)
    res = run("create", path, text)
    check(res["ret"] == 0, "create %s (%s)" % (name, res))
    if not check(is_link_into(path, world.data_dd), "%s is a link into %s" % (name, world.data_dd)):
        raise SystemExit("cannot go on without a redirected file")
    data = os.readlink(path)
    check(os.path.lexists(anchor_of(world, data)), "%s has its anchor" % name)
    return data


def stat_calls():
    return ["lstat", "lstat64", "fstatat", "fstatat64", "__lxstat", "__lxstat64",
            "__fxstatat", "__fxstatat64", "statx", "stat"]


def open_calls():
    return ["open-nofollow", "open64-nofollow", "openat-nofollow", "openat64-nofollow",
            "__open_2-nofollow", "__openat_2-nofollow"]


def check_same_file(world, run, name, data, text, who):
    """Every call that looks at the link itself sees the data file."""
    path = world.w(name)
    dst = os.stat(data)
    for call in stat_calls():
        res = run(call, path)
        check(res["ret"] == 0 and res.get("type") == "reg" and res.get("ino") == dst.st_ino and
              res.get("dev") == dst.st_dev and res.get("size") == len(text) and
              res.get("nlink") == 1,
              "%s: %s reports the data file (regular, its inode, size, one link): %s" %
              (who, call, res))
    for call in open_calls():
        res = run(call, path)
        check(res["ret"] >= 0 and res.get("data") == text,
              "%s: %s opens the data file: %s" % (who, call, res))
    res = run("open-nofollow", path)
    check(res.get("cloexec") is True, "%s: O_CLOEXEC kept on the data file's descriptor" % who)
    res = run("open64-nofollow", path)
    check(res.get("cloexec") is False, "%s: no FD_CLOEXEC unless asked" % who)
    res = run("open-nofollow-creat", path)
    check(res["ret"] >= 0 and res.get("data") == text,
          "%s: O_CREAT|O_NOFOLLOW opens the existing data file: %s" % (who, res))
    res = run("open-nofollow-excl", path)
    check(res["ret"] < 0 and res["errno"] == "EEXIST",
          "%s: O_CREAT|O_EXCL|O_NOFOLLOW fails with EEXIST, as for a file: %s" % (who, res))
    res = run("open-nofollow-dir", path)
    check(res["ret"] < 0 and res["errno"] == "ENOTDIR",
          "%s: O_DIRECTORY|O_NOFOLLOW fails with ENOTDIR, as for a file: %s" % (who, res))
    for mode in ("r", "re", "r+"):
        res = run("fopen", path, mode)
        check(res["ret"] >= 0 and res.get("data") == text,
              "%s: fopen '%s' reads the data (fopen follows links)" % (who, mode))
    for call in ("readlink", "readlinkat", "__readlink_chk", "__readlinkat_chk"):
        res = run(call, path)
        check(res["ret"] == -1 and res["errno"] == "EINVAL",
              "%s: %s says EINVAL, not a link: %s" % (who, call, res))
    check(os.path.islink(path), "%s: other processes still see a link" % who)


def check_attrs(world, run, name, data, who):
    """truncate, chmod, fchmodat, lchmod and the times act on the data."""
    path = world.w(name)
    res = run("truncate", path, 3)
    check(res["ret"] == 0 and os.stat(data).st_size == 3, "%s: truncate shortens the data" % who)
    for call, mode in (("chmod", 0o600), ("fchmodat-nofollow", 0o640), ("lchmod", 0o604)):
        res = run(call, path, "%o" % mode)
        check(res["ret"] == 0 and stat.S_IMODE(os.stat(data).st_mode) == mode,
              "%s: %s sets the data file's mode %o (%s)" % (who, call, mode, res))
    for call, t in (("utimensat-nofollow", 1000000), ("utimensat", 2000000),
                    ("utimes", 3000000), ("lutimes", 4000000)):
        res = run(call, path, t)
        check(res["ret"] == 0 and int(os.stat(data).st_mtime) == t,
              "%s: %s sets the data file's times (%s)" % (who, call, res))
    check(os.path.islink(path) and is_link_into(path, world.data_dd),
          "%s: the link is still in place" % who)


def check_names(world, run, who, mk):
    """rename and unlink: the data goes with the link, and only then.
    mk(name, text) redirects work/NAME and returns its data file."""
    w = world.w
    os.makedirs(w("sub"), exist_ok=True)

    data = mk("r1", "one")
    res = run("rename", w("r1"), w("r1b"))
    check(res["ret"] == 0 and is_link_into(w("r1b"), world.data_dd) and os.path.exists(data),
          "%s: rename within a directory keeps the data reachable" % who)
    res = run("renameat", w("r1b"), w("sub/r1c"))
    check(res["ret"] == 0 and os.path.exists(data) and run("lstat", w("sub/r1c")).get("type") == "reg",
          "%s: renameat across directories keeps the data reachable" % who)
    res = run("unlink", w("sub/r1c"))
    check(res["ret"] == 0 and not os.path.lexists(w("sub/r1c")) and not os.path.exists(data) and
          not os.path.lexists(anchor_of(world, data)),
          "%s: unlink of the renamed link frees its data and anchor" % who)

    for call in ("unlink", "unlinkat", "remove"):
        data = mk("u-" + call, call)
        res = run(call, w("u-" + call))
        check(res["ret"] == 0 and not os.path.exists(data) and
              not os.path.lexists(anchor_of(world, data)),
              "%s: %s frees link, data and anchor" % (who, call))

    # Replaced by a rename (a program writes a temporary file and renames
    # it over the path): the replaced link's data is freed.
    data = mk("over", "old")
    with open(w("over.tmp"), "w") as f:
        f.write("new")
    res = run("rename", w("over.tmp"), w("over"))
    check(res["ret"] == 0 and not os.path.islink(w("over")) and not os.path.exists(data),
          "%s: rename over a link frees its data" % who)
    with open(w("over")) as f:
        check(f.read() == "new", "%s: the new file is in place" % who)
    os.unlink(w("over"))

    # Onto another name of the same link: nothing changes.
    data = mk("same", "same")
    os.link(w("same"), w("same2"), follow_symlinks=False)
    res = run("rename", w("same"), w("same2"))
    check(res["ret"] == 0 and os.path.exists(data), "%s: rename onto its own other name keeps the data" % who)
    res = run("unlink", w("same"))
    check(res["ret"] == 0 and os.path.exists(data), "%s: unlink of one of two names keeps the data" % who)
    res = run("unlink", w("same2"))
    check(res["ret"] == 0 and not os.path.exists(data), "%s: unlink of the last name frees it" % who)

    # RENAME_NOREPLACE and RENAME_EXCHANGE replace nothing.
    data = mk("nr", "nr")
    with open(w("plain"), "w") as f:
        f.write("plain")
    res = run("renameat2", w("plain"), w("nr"), "noreplace")
    check(res["ret"] == -1 and res["errno"] == "EEXIST" and os.path.exists(data),
          "%s: RENAME_NOREPLACE onto the link fails and keeps the data" % who)
    res = run("renameat2", w("plain"), w("nr"), "exchange")
    check(res["ret"] == 0 and os.path.exists(data) and is_link_into(w("plain"), world.data_dd),
          "%s: RENAME_EXCHANGE swaps, the data stays" % who)
    res = run("unlink", w("plain"))
    check(res["ret"] == 0 and not os.path.exists(data),
          "%s: the exchanged link still frees its data" % who)
    os.unlink(w("nr"))

    # Across filesystems: what the plain call does (EXDEV), nothing lost.
    data = mk("xdev", "xdev")
    res = run("rename", w("xdev"), os.path.join(world.dir, "xdev"))
    check(res["ret"] == -1 and res["errno"] == "EXDEV" and is_link_into(w("xdev"), world.data_dd)
          and os.path.exists(data),
          "%s: rename to another filesystem fails with EXDEV, link and data intact (%s)" % (who, res))
    run("unlink", w("xdev"))


def check_preloaded_sees(world, compiled_run, plain_run, who):
    """A file the compiled program redirected, seen by a program that runs
    under iosig-redirect with no rule for it."""
    data = redirected(world, compiled_run, "cross", "cross")
    check_same_file(world, plain_run, "cross", data, "cross", who)
    res = plain_run("unlink", world.w("cross"))
    check(res["ret"] == 0 and not os.path.exists(data),
          "%s: its unlink frees the compiled program's data" % who)


def redirect_prefix(world, pattern):
    return [REDIRECT, "--config", world.config, "-s", SIG, pattern, "--"]


# ---------------------------------------------------------------------------

def group_compiled(world):
    world.build_compiled()
    run = Runner(world, world.compiled)
    data = redirected(world, run, "f", "hello")
    check_same_file(world, run, "f", data, "hello", "compiled")
    check_attrs(world, run, "f", data, "compiled")
    check_names(world, run, "compiled", lambda n, t: redirected(world, run, n, t))
    run("unlink", world.w("f"))
    check(not os.listdir(world.data_dd), "compiled: no data file is left (%s)" % os.listdir(world.data_dd))


def group_preload(world):
    if not PLAIN:
        skip("LINKS_PROG must name the plain links_prog (run through ctest)")
    run = Runner(world, PLAIN, redirect_prefix(world, world.w("*")))
    data = redirected(world, run, "f", "hello")
    check_same_file(world, run, "f", data, "hello", "preload")
    check_attrs(world, run, "f", data, "preload")
    check_names(world, run, "preload", lambda n, t: redirected(world, run, n, t))
    run("unlink", world.w("f"))
    # No rule matches: the links are still the files they stand for.
    world.build_compiled()
    other = Runner(world, PLAIN, redirect_prefix(world, world.path("nothing-here")))
    check_preloaded_sees(world, Runner(world, world.compiled), other, "preload, no rule")
    check(not os.listdir(world.data_dd), "preload: no data file is left (%s)" % os.listdir(world.data_dd))


def group_both(world):
    world.build_compiled()
    run = Runner(world, world.compiled, redirect_prefix(world, world.path("nothing-here")))
    data = redirected(world, run, "f", "hello")
    check_same_file(world, run, "f", data, "hello", "both")
    check_attrs(world, run, "f", data, "both")
    check_names(world, run, "both", lambda n, t: redirected(world, run, n, t))
    run("unlink", world.w("f"))
    # The rule redirects, libiosig.so's interposers see the link.
    rrun = Runner(world, world.compiled, redirect_prefix(world, world.w("r*")))
    data = redirected(world, rrun, "rf", "rule")
    check_same_file(world, rrun, "rf", data, "rule", "both, rule")
    res = rrun("unlink", world.w("rf"))
    check(res["ret"] == 0 and not os.path.exists(data), "both, rule: unlink frees the data once")
    check(not os.listdir(world.data_dd), "both: no data file is left (%s)" % os.listdir(world.data_dd))


def group_foreign(world):
    world.build_compiled()
    run = Runner(world, world.compiled)
    w = world.w

    # An ordinary link of the user's: a link.
    with open(w("target"), "w") as f:
        f.write("target")
    os.symlink(w("target"), w("plain-link"))
    res = run("lstat", w("plain-link"))
    check(res.get("type") == "lnk", "an ordinary link is a link to lstat (%s)" % res)
    res = run("open-nofollow", w("plain-link"))
    check(res["errno"] == "ELOOP", "O_NOFOLLOW refuses an ordinary link (%s)" % res)
    res = run("readlink", w("plain-link"))
    check(res.get("data") == w("target"), "readlink reads an ordinary link")
    res = run("unlink", w("plain-link"))
    check(res["ret"] == 0 and os.path.exists(w("target")), "unlink of an ordinary link keeps its target")

    # A link of another user (nobody) to the user's data: never the user's.
    data = redirected(world, run, "mine", "mine")
    os.symlink(data, w("planted"))
    os.lchown(w("planted"), 65534, 65534)
    res = run("lstat", w("planted"))
    check(res.get("type") == "lnk", "another user's link to my data is a link (%s)" % res)
    res = run("open-nofollow", w("planted"))
    check(res["errno"] == "ELOOP", "O_NOFOLLOW refuses another user's link (%s)" % res)
    res = run("unlink", w("planted"))
    check(res["ret"] == 0 and os.path.exists(data), "its removal keeps my data")
    os.symlink(data, w("planted2"))
    os.lchown(w("planted2"), 65534, 65534)
    with open(w("tmp"), "w") as f:
        f.write("x")
    res = run("rename", w("tmp"), w("planted2"))
    check(res["ret"] == 0 and os.path.exists(data), "renaming over another user's link keeps my data")

    # A copy of the user's link: the file it stands for, but removing the
    # copy keeps the data of the link the runtime made.
    os.symlink(data, w("copy"))
    res = run("lstat", w("copy"))
    check(res.get("type") == "reg", "a copy of my link stands for the file too (%s)" % res)
    res = run("unlink", w("copy"))
    check(res["ret"] == 0 and os.path.exists(data), "removing the copy keeps the data")
    res = run("unlink", w("mine"))
    check(res["ret"] == 0 and not os.path.exists(data), "removing the runtime's link frees it")

    # IOSIG_DISABLE: pure pass-through.
    data = redirected(world, run, "dis", "dis")
    off = Runner(world, world.compiled, env={"IOSIG_DISABLE": "1"})
    check(off("lstat", w("dis")).get("type") == "lnk", "IOSIG_DISABLE: lstat sees the link")
    check(off("open-nofollow", w("dis"))["errno"] == "ELOOP", "IOSIG_DISABLE: O_NOFOLLOW refuses it")
    res = off("unlink", w("dis"))
    check(res["ret"] == 0 and os.path.exists(data), "IOSIG_DISABLE: unlink leaves the data")
    os.unlink(data)

    # A stale link: its data directory is gone (a reboot of the tmpfs)
    # and someone made another at that name.  Never followed, never
    # treated as the file.
    data = redirected(world, run, "stale", "stale")
    subprocess.run(["umount", world.data], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=755" % DATA_SIZE, "iosig-links",
                    world.data], check=True)
    os.mkdir(world.data_dd, 0o777)
    os.chmod(world.data_dd, 0o777)
    with open(data, "w") as f:
        f.write("planted")
    res = run("lstat", w("stale"))
    check(res.get("type") == "lnk", "a stale link is a link to lstat (%s)" % res)
    res = run("open-nofollow", w("stale"))
    check(res["errno"] == "ELOOP", "O_NOFOLLOW refuses a stale link (%s)" % res)
    res = run("readlink", w("stale"))
    check(res["ret"] > 0, "readlink reads a stale link")
    res = run("unlink", w("stale"))
    check(res["ret"] == 0 and os.path.exists(data), "unlink of a stale link leaves what is at its target")


def gc(world, *args):
    """Runs `iosig gc ARGS` with the world's configuration; (status, out, err)."""
    p = subprocess.run([TOOL, "gc", "--config", world.config] + list(args), capture_output=True,
                       text=True, env=world.env())
    return p.returncode, p.stdout, p.stderr


def group_gc(world):
    world.build_compiled()
    run = Runner(world, world.compiled)
    w = world.w
    os.makedirs(w("sub"))
    removed = [redirected(world, run, "rm%d" % i, "removed %d" % i) for i in range(3)]
    moved = redirected(world, run, "mv", "moved")
    copied = redirected(world, run, "cp", "copied")
    kept = redirected(world, run, "keep", "kept")
    # Programs without libiosig: rm, mv to another directory, cp -P.
    for i in range(3):
        subprocess.run(["rm", w("rm%d" % i)], check=True)
    subprocess.run(["mv", w("mv"), w("sub/moved")], check=True)
    subprocess.run(["cp", "-P", w("cp"), w("sub/copy")], check=True)
    subprocess.run(["rm", w("cp")], check=True)
    check(all(os.path.exists(d) for d in removed), "rm without libiosig leaves the data behind")

    status, out, err = gc(world, "--dry-run", "--json")
    rep = json.loads(out) if status == 0 else {}
    files = {f["path"]: f for f in rep.get("files", [])}
    check(status == 0 and rep.get("dry_run") is True, "gc --dry-run --json runs (%d: %s)" % (status, err))
    check(all(files.get(d, {}).get("action") == "freed" for d in removed) and rep.get("freed") == 4,
          "the dry run would free the three removed files and the copied one (%s)" %
          {k: v["action"] for k, v in files.items()})
    check(files.get(moved, {}).get("action") == "live" and files.get(kept, {}).get("action") == "live",
          "a moved link and an untouched one are live")
    check(all(os.path.exists(d) for d in removed), "the dry run changed nothing")
    check(all(files[d]["anchor"] == anchor_of(world, d) and files[d]["size"] == len("removed 0")
              and files[d]["mount"] == world.data for d in removed),
          "the records name the anchor, the size and the mount")

    # With MOUNT: only data on that mount (none on the work mount).
    status, out, err = gc(world, world.work)
    check(status == 0 and "freed 0 orphaned data files" in out and
          all(os.path.exists(d) for d in removed), "gc WORK frees nothing on DATA (%r)" % out)
    status, out, err = gc(world, world.data_dd)
    check(status == 0 and "freed 4 orphaned data files" in out, "gc DATA frees the four (%r %r)" % (out, err))
    check(not any(os.path.exists(d) for d in removed) and not os.path.exists(copied),
          "the removed files' data is gone")
    check(not any(os.path.lexists(anchor_of(world, d)) for d in removed + [copied]),
          "and their anchors")
    check(os.path.exists(moved) and os.path.exists(kept), "the data of the moved and the kept link stays")
    check(os.path.islink(w("sub/copy")), "the copy of a removed link now dangles (documented)")
    with open(w("sub/moved")) as f:
        check(f.read() == "moved", "the moved link still reads its data")
    status, out, err = gc(world)
    check(status == 0 and "freed 0 orphaned data files" in out and "kept 2 with a live link" in out,
          "a second gc frees nothing (%r)" % out)

    # Bad command lines: a precise message, exit 2.
    for args, msg in ((["--frobnicate"], "unknown option"), (["relative/path"], "absolute path"),
                      (["/proc"], "on no mount of the catalog"),
                      (["/"], "has no data directory (ignored by the configuration")):
        status, out, err = gc(world, *args)
        check(status == 2 and msg in err, "gc %s: exit 2, '%s' (%d: %s)" % (" ".join(args), msg, status,
                                                                           err.strip()))
    p = subprocess.run([TOOL, "gc", "--config", world.path("missing.yaml")], capture_output=True,
                       text=True, env=world.env())
    check(p.returncode == 1 and "missing.yaml" in p.stderr, "a missing configuration: exit 1 (%s)" %
          p.stderr.strip())


GROUPS = {"compiled": group_compiled, "preload": group_preload, "both": group_both,
          "foreign": group_foreign, "gc": group_gc}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in GROUPS:
        print("usage: test_links.py {%s}" % ",".join(GROUPS))
        return 2
    status = unshared("IOSIG_LINKS_UNSHARED")
    if status is not None:
        return status
    world = World()
    try:
        GROUPS[sys.argv[1]](world)
    finally:
        world.close()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
