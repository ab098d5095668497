# SPDX-License-Identifier: MIT
"""What the Python tests of real programs share (tests/preload,
tests/daemon, tests/links, tests/debian): checks and skips, running a
program with a clean environment, scratch directories with real mounts,
catalog configurations that leave out every other mount, a private mount
namespace, comparing trees of files, the SQLite workload.

Exit 77 = skipped, with the reason printed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
failures = []


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def check(cond, what):
    if cond:
        print("ok   " + what)
    else:
        print("FAIL " + what)
        failures.append(what)
    return cond


def finish():
    """The exit status of a test group after its checks."""
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


def run(args, cwd=None, env=None, input=None, timeout=300):
    """Runs args; returns (exit status or -signal, stdout, stderr).  The
    IOSIG_* switches of the caller's environment are dropped, and no daemon
    is used unless env names one (IOSIG_DAEMON_SOCKET)."""
    e = dict(os.environ)
    for k in ("IOSIG_LOG", "IOSIG_DRYRUN", "IOSIG_STRICT", "IOSIG_DISABLE", "IOSIG_REDIRECT_RULES"):
        e.pop(k, None)
    e["IOSIG_DAEMON_SOCKET"] = ""
    if env:
        e.update(env)
    p = subprocess.run(args, cwd=cwd, env=e, input=input, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def write_config(path, mounts):
    """A catalog configuration that leaves out every mount but `mounts`
    (a list of (mount point, data dir or None for the default rule,
    [setting lines]))."""
    lines = ["version: 1", "mounts:"]
    pat = ""
    for _ in range(12):
        pat += "/*"
        lines.append('  "%s": { ignore: true }' % pat)
    lines.append('  "/": { ignore: true }')
    for mnt, ddir, settings in mounts:
        lines.append('  "%s":' % mnt)
        lines.append("    ignore: false")
        if ddir:
            lines.append('    data_dir: "%s"' % ddir)
        for s in settings:
            lines.append("    " + s)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def mount_point(path):
    path = os.path.realpath(path)
    while path != "/" and os.path.ismount(path) is False:
        path = os.path.dirname(path)
    return path


def link_into(path, ddir):
    return os.path.islink(path) and os.readlink(path).startswith(ddir + "/")


def log_records(path):
    recs = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                recs.append(json.loads(line))
    return recs


def data_files(ddir):
    return sorted(os.listdir(ddir)) if os.path.isdir(ddir) else []


class Scratch:
    """A scratch directory on the root filesystem, removed at the end."""

    def __init__(self, prefix):
        base = "/var/tmp" if os.path.isdir("/var/tmp") else "/tmp"
        self.dir = tempfile.mkdtemp(prefix=prefix, dir=base)
        self.mounts = []

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def mount_tmpfs(self, name, size="64m"):
        mnt = self.path(name)
        os.makedirs(mnt, exist_ok=True)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "iosig-rx-" + name, mnt],
                           capture_output=True)
        if r.returncode:
            skip("cannot mount a tmpfs: " + r.stderr.decode().strip())
        self.mounts.append(mnt)
        return mnt

    def mount_loop(self, name, size, fstype, mkfs_args):
        """A filesystem of fstype made in an image file of `size` ("128M")
        and mounted through a loop device."""
        mnt = self.path(name)
        img = self.path(name + ".img")
        os.makedirs(mnt, exist_ok=True)
        with open(img, "wb") as f:
            f.truncate({"M": 1 << 20}[size[-1]] * int(size[:-1]))
        path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
        mkfs = shutil.which("mkfs." + fstype, path=path)
        if not mkfs:
            skip("mkfs.%s not found (scripts/install-deps installs it)" % fstype)
        r = subprocess.run([mkfs] + mkfs_args + [img], capture_output=True)
        if r.returncode == 0:
            r = subprocess.run(["mount", "-o", "loop", img, mnt], capture_output=True)
        if r.returncode:
            skip("cannot make an %s loop mount: %s" % (fstype, r.stderr.decode().strip()))
        self.mounts.append(mnt)
        return mnt

    def mount_ext4(self, name, size="128M"):
        return self.mount_loop(name, size, "ext4", ["-q", "-F"])

    def mount_xfs(self, name, size="320M"):
        """mkfs.xfs wants 300 MiB at least."""
        return self.mount_loop(name, size, "xfs", ["-q", "-f"])

    def device(self, mnt):
        """The block device mounted at mnt (a loop device)."""
        r = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "--mountpoint", mnt], capture_output=True)
        return r.stdout.decode().strip()

    def close(self):
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", m], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


class BackedFs:
    """A filesystem of `fstype` (mkfs arguments `mkfs`) at mnt on a loop
    device whose image of `size` MiB lies on a tmpfs of its own (mnt +
    ".back", limited to `room` MiB, default size + 16): a device that can
    be made to fail.  `sparse`: the image is a sparse file (only what is
    written costs memory), else every block is stored (fallocate) and mkfs
    does not discard them.

    fill(free): the tmpfs is filled but for `free` bytes: the device fails
    writes of blocks it did not store yet (the block layer's "critical
    space allocation error", which ext4 and xfs take as EIO: their
    write-back fails, and a journal commit into such blocks makes ext4
    abort its journal and go read-only), while reads, and writes of blocks
    it stored, work.  trim(): fstrim, so that the filesystem's free blocks
    are such blocks too.  vanish(): the image cut to 1 MiB and the loop
    device's capacity with it (losetup -c): reads and writes past that
    fail (EIO), as of a disk that went away.  Skips (exit 77) when a tool is
    missing."""

    def __init__(self, mnt, fstype, size, mkfs, sparse=False, room=None):
        self.mnt, self.back = mnt, mnt + ".back"
        self.img = os.path.join(self.back, "img")
        self.sbin = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
        os.makedirs(self.mnt, exist_ok=True)
        os.makedirs(self.back, exist_ok=True)
        self._sh(["mount", "-t", "tmpfs", "-o", "size=%dm" % (room or size + 16), "iosig-back", self.back],
                 "mount a tmpfs")
        if sparse:
            with open(self.img, "wb") as f:
                f.truncate(size << 20)
        else:
            self._sh(["fallocate", "-l", "%dM" % size, self.img], "fallocate the image")
        tool = shutil.which("mkfs." + fstype, path=self.sbin)
        if not tool:
            skip("mkfs.%s not found (scripts/install-deps installs it)" % fstype)
        subprocess.run([tool] + mkfs + [self.img], capture_output=True, check=False)
        self._sh(["mount", "-o", "loop", self.img, self.mnt], "mount %s on a loop device" % fstype)

    def _sh(self, args, what):
        r = subprocess.run(args, capture_output=True)
        if r.returncode:
            skip("%s: %s" % (what, r.stderr.decode().strip() or r.stdout.decode().strip()))
        return r.stdout.decode()

    def device(self):
        r = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "--mountpoint", self.mnt], capture_output=True)
        return r.stdout.decode().strip()

    def free(self):
        st = os.statvfs(self.back)
        return st.f_bavail * st.f_frsize

    def trim(self):
        self._sh(["fstrim", self.mnt], "fstrim the loop mount")
        # (The loop device may still be punching the holes.)
        last, same, until = -1, 0, time.time() + 10
        while same < 3 and time.time() < until:
            now = self.free()
            same = same + 1 if now == last else 0
            last = now
            time.sleep(0.1)

    def fill(self, free=0):
        """Returns the bytes the tmpfs can still store."""
        if free:
            room = self.free() - free
            if room > 0:
                self._sh(["fallocate", "-l", str(room), os.path.join(self.back, "filler")], "fill the tmpfs")
            return self.free()
        # All of it: the last pages in ever smaller steps (a tmpfs refuses
        # a fallocate of exactly what statvfs says is free).
        fd = os.open(os.path.join(self.back, "filler"), os.O_CREAT | os.O_WRONLY, 0o600)
        try:
            end = 0
            for step in (16 << 20, 1 << 20, 64 << 10, 4 << 10):
                while True:
                    try:
                        os.posix_fallocate(fd, end, step)
                    except OSError:
                        break
                    end += step
        finally:
            os.close(fd)
        return self.free()

    def unfill(self):
        """The tmpfs has room again (the device's blocks work again)."""
        try:
            os.unlink(os.path.join(self.back, "filler"))
        except FileNotFoundError:
            pass

    def repair(self):
        """Unmounted, the tmpfs given room again, the image checked
        (e2fsck -fy: an aborted ext4's journal replayed) and mounted again
        at the same mount point: the repaired device."""
        r = subprocess.run(["umount", self.mnt], capture_output=True, text=True)
        check(r.returncode == 0, "%s unmounted for its repair (%s)" % (self.mnt, r.stderr.strip()))
        self.unfill()
        tool = shutil.which("e2fsck", path=self.sbin)
        if not tool:
            skip("e2fsck not found (e2fsprogs)")
        r = subprocess.run([tool, "-fy", self.img], capture_output=True, text=True)
        # 0 nothing to fix, 1 fixed, 2 fixed (reboot advised): repaired.
        check(r.returncode in (0, 1, 2), "e2fsck repaired %s (%d: %s)" % (self.img, r.returncode,
                                                                       (r.stdout + r.stderr).strip()[-300:]))
        self._sh(["mount", "-o", "loop", self.img, self.mnt], "mount the repaired image")

    def vanish(self):
        """Returns the device's size in bytes now."""
        dev = self.device()
        size = "/sys/block/%s/size" % os.path.basename(dev)
        # Writes in flight extend the image again up to the device's size,
        # which losetup -c then takes: again, until it stays cut.
        for _ in range(20):
            os.truncate(self.img, 1 << 20)
            self._sh(["losetup", "-c", dev], "shrink the loop device")
            with open(size) as f:
                now = int(f.read()) * 512
            if now <= 1 << 20:
                break
        return now

    def close(self):
        subprocess.run(["umount", "-l", self.mnt], capture_output=True)
        subprocess.run(["umount", "-l", self.back], capture_output=True)


def need_root():
    if os.geteuid() != 0:
        skip("needs root to mount a tmpfs and an ext4 loop filesystem")


def differing(a, b):
    """Names of the files whose content differs between two tree() maps."""
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def tree(root):
    """{relative path: (kind, bytes or link target)} of a directory."""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            with open(p, "rb") as f:
                out[rel] = f.read()
    return out


def make_input(path, n):
    with open(path, "wb") as f:
        for i in range(n):
            f.write(b"line %06d of the input of iosig-redirect's program tests\n" % i)


def sqlite_workload(nrows, batch):
    sql = ["PRAGMA journal_mode=DELETE;",
           "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, note TEXT);",
           "CREATE INDEX item_name ON item(name);",
           "CREATE TABLE log(id INTEGER PRIMARY KEY, item INTEGER REFERENCES item(id), what TEXT);"]
    for b in range(0, nrows, batch):
        sql.append("BEGIN;")
        for i in range(b, min(b + batch, nrows)):
            sql.append("INSERT INTO item(name, qty, note) VALUES('item-%d', %d, '%s');" % (i, (i * 7919) % 1000, "n" * (i % 50)))
            sql.append("INSERT INTO log(item, what) VALUES(%d, 'created');" % (i + 1))
        sql.append("COMMIT;")
    sql.append("UPDATE item SET qty = qty + 1 WHERE id % 3 = 0;")
    sql.append("DELETE FROM log WHERE id % 5 = 0;")
    sql.append("PRAGMA journal_mode=WAL;")
    for b in range(0, nrows // 4, batch):
        sql.append("BEGIN;")
        for i in range(b, min(b + batch, nrows // 4)):
            sql.append("INSERT INTO log(item, what) VALUES(%d, 'wal');" % (i + 1))
        sql.append("COMMIT;")
    sql.append("PRAGMA wal_checkpoint(TRUNCATE);")
    sql.append("PRAGMA journal_mode=DELETE;")
    sql.append("PRAGMA integrity_check;")
    return "\n".join(sql) + "\n"


def unshared(marker):
    """Runs this script again in a private mount namespace, where its
    mounts are its own and vanish with it; returns that run's exit status.
    Returns None in the namespace (`marker`, an environment variable, says
    so).  Skips without root or unshare(1)."""
    if os.environ.get(marker) == "1":
        return None
    if os.geteuid() != 0:
        skip("needs root: mounts filesystems in a private mount namespace")
    if not shutil.which("unshare"):
        skip("no unshare(1) for a private mount namespace")
    env = dict(os.environ)
    env[marker] = "1"
    return subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable] +
                          sys.argv, env=env).returncode
