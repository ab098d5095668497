#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Real programs from Debian's sources, annotated where they create their
output, built with the GCC plugin (bzip2 with clang too), tested by their
own test suites with the redirection active (issue 14, "Done when"):

  * gzip 1.12: a pragma before the open of create_outfile(), a call of
    gnulib's openat_safer (fcntl--.h renames openat), declared an opener
    with `#pragma io opener`; `make check` must pass 26 of 26 tests;
  * bzip2 1.0.8: fopen_output_safely() declared an opener, a pragma before
    its calls in compress() and uncompress(); `make test` must pass;
  * the pragmas bind (an unbound one is an error), and the decision log
    shows each output redirected by the opener's call (iosig_opener_begin);
  * round trips (compress, test, list, decompress, to stdout) of each,
    whose outputs are redirected: the data must come back intact, and a
    program that removes a redirected file (gzip -d, bzip2 -d) takes its
    data with it;
  * nothing is left behind: what the test suites' `rm` (no libiosig) left,
    `iosig gc` frees, and then the data directory is empty.

    test_debian.py

The sources come from the Debian archive with `apt-get source`, through a
deb-src line the test writes into a private sources list (apt's own
configuration and state are not touched) and removes again; they are kept
under $IOSIG_DEBIAN_CACHE (the build directory), so later runs do not fetch
them again.  Exit 77, with the reason, when they cannot be fetched (no
apt-get, no network, another version in the archive) or without root.

Everything else happens in a private mount namespace with two tmpfs mounts:
"work", where the programs are built and run (slow by configuration, so it
is never chosen, but it has a data directory for the links' anchors), and
"data", where the outputs go.
"""
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from iosig_testlib import check, finish, skip, unshared, write_config  # noqa: E402

SIG = "tmp sequential_access size_per_io(32*KiB)"
GZIP, BZIP2 = ("gzip", "1.12"), ("bzip2", "1.0.8")


def sh(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


# ---------------------------------------------------------------------------
# The sources
# ---------------------------------------------------------------------------

def release_and_mirror():
    """The Debian release of this machine and an archive it uses."""
    codename = None
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("VERSION_CODENAME="):
                    codename = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    if not codename:
        skip("not a Debian system with a release name (/etc/os-release): no source packages")
    mirror = "http://deb.debian.org/debian"
    texts = []
    for d, pat in (("/etc/apt", "sources.list"), ("/etc/apt/sources.list.d", None)):
        try:
            names = [pat] if pat else sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            if n.endswith((".list", ".sources")):
                try:
                    with open(os.path.join(d, n)) as f:
                        texts.append(f.read())
                except OSError:
                    pass
    for t in texts:
        m = re.search(r"^(?:URIs:\s*|deb\s+(?:\[[^]]*\]\s+)?)(\S+/debian)/?\s", t, re.M)
        if m and "security" not in m.group(1):
            mirror = m.group(1)
            break
    return codename, mirror


def fetch_sources(cache):
    """gzip-1.12/ and bzip2-1.0.8/ (Debian's, with Debian's patches) in
    cache; fetched once."""
    os.makedirs(cache, exist_ok=True)
    want = [os.path.join(cache, "%s-%s" % p) for p in (GZIP, BZIP2)]
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(os.path.isfile(os.path.join(d, ".fetched")) for d in want):
            print("ok   sources cached in " + cache)
            return want
        if not shutil.which("apt-get") or not shutil.which("dpkg-source"):
            skip("no apt-get or dpkg-source (dpkg-dev): cannot fetch Debian source packages")
        codename, mirror = release_and_mirror()
        state = tempfile.mkdtemp(prefix="apt-", dir=cache)
        try:
            for d in ("lists/partial", "cache/archives/partial", "parts"):
                os.makedirs(os.path.join(state, d))
            srclist = os.path.join(state, "iosig-test-src.list")
            keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
            opts = "[signed-by=%s] " % keyring if os.path.exists(keyring) else ""
            with open(srclist, "w") as f:
                f.write("deb-src %s%s %s main\n" % (opts, mirror, codename))
            apt = ["apt-get", "-q", "-o", "Dir::Etc::SourceList=" + srclist,
                   "-o", "Dir::Etc::SourceParts=" + os.path.join(state, "parts"),
                   "-o", "Dir::State::Lists=" + os.path.join(state, "lists"),
                   "-o", "Dir::Cache=" + os.path.join(state, "cache"),
                   "-o", "Debug::NoLocking=1", "-o", "Acquire::Retries=1",
                   "-o", "Acquire::http::Timeout=30", "-o", "APT::Sandbox::User=root"]
            r = sh(apt + ["update"], timeout=300)
            if r.returncode:
                skip("cannot fetch the source index of %s %s: %s" %
                     (mirror, codename, (r.stderr or r.stdout).strip()[-300:]))
            work = os.path.join(state, "src")
            os.mkdir(work)
            r = sh(apt + ["source", GZIP[0], BZIP2[0]], cwd=work, timeout=300)
            if r.returncode:
                skip("apt-get source gzip bzip2 failed: " + (r.stderr or r.stdout).strip()[-300:])
            for (name, version), dst in zip((GZIP, BZIP2), want):
                src = os.path.join(work, "%s-%s" % (name, version))
                if not os.path.isdir(src):
                    got = [d for d in os.listdir(work) if d.startswith(name + "-")]
                    skip("the archive has %s, not %s %s" % (", ".join(got) or "nothing", name,
                                                               version))
                shutil.rmtree(dst, ignore_errors=True)
                shutil.move(src, dst)
                with open(os.path.join(dst, ".fetched"), "w") as f:
                    f.write("%s %s from %s %s\n" % (name, version, mirror, codename))
        finally:
            # The deb-src line goes with the private state.
            shutil.rmtree(state, ignore_errors=True)
        print("ok   fetched gzip %s and bzip2 %s from %s %s" % (GZIP[1], BZIP2[1], mirror, codename))
        return want


# ---------------------------------------------------------------------------
# The annotations (the only change to Debian's code)
# ---------------------------------------------------------------------------

def patch(path, edits):
    """Each (old, new[, count]) replaces old, which must occur count times
    (1 unless said), by new."""
    with open(path) as f:
        text = f.read()
    for old, new, *count in edits:
        want = count[0] if count else 1
        if text.count(old) != want:
            raise SystemExit("FAIL %s has %d of %r, not %d: update the annotation" %
                             (path, text.count(old), old, want))
        text = text.replace(old, new)
    with open(path, "w") as f:
        f.write(text)


# What a user writes, from the plugins' unbound-pragma diagnostic on: the
# function each program really calls is declared an opener at file scope
# (docs/signature-language.md §1.1), and the signature stands before the
# program's own, unchanged, call of it.

# gzip: gnulib's fcntl--.h renames openat to openat_safer (GNULIB_OPENAT_SAFER,
# which gzip's configure sets), which opens with openat and moves a result of
# 0, 1 or 2 above the standard streams.
GZIP_OPENER = "openat_safer"


def annotate_gzip(src):
    patch(os.path.join(src, "gzip.c"), [
        ('#include "fcntl--.h"\n',
         '#include "fcntl--.h"\n'
         "#pragma io opener(%s, dirfd(1), path(2), flags(3))\n" % GZIP_OPENER),
        ("      remove_ofname_fd = ofd = openat (atfd, base, flags, S_IRUSR | S_IWUSR);\n",
         "#pragma io sig " + SIG + "\n"
         "      remove_ofname_fd = ofd = openat (atfd, base, flags, S_IRUSR | S_IWUSR);\n"),
    ])


# bzip2: fopen_output_safely(name, mode) creates the file with
# open(O_WRONLY|O_CREAT|O_EXCL, 0600) and fdopen()s it: whatever its mode
# argument ("wb"), it opens as fopen's "wx" would.
BZIP2_OPENER = "fopen_output_safely"


def annotate_bzip2(src):
    call = '         outStr = fopen_output_safely ( outName, "wb" );\n'
    end = "   return fopen(name, mode);\n#  endif\n}\n"
    patch(os.path.join(src, "bzip2.c"), [
        (end, end + '#pragma io opener(%s, path(1), mode("wx"))\n' % BZIP2_OPENER),
        # compress() and uncompress()
        (call, "#pragma io sig " + SIG + "\n" + call, 2),
    ])


# ---------------------------------------------------------------------------
# The world
# ---------------------------------------------------------------------------

class World:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="iosig-debian-", dir="/var/tmp")
        os.chmod(self.dir, 0o755)
        self.work, self.data = self.path("work"), self.path("data")
        # The pragmas declare no totalsize: the data mount has room for the
        # 1 GiB selection assumes then (docs/selection.md); a tmpfs's size is
        # a limit only.
        for mnt, size in ((self.work, "768m"), (self.data, "2g")):
            os.mkdir(mnt)
            r = sh(["mount", "-t", "tmpfs", "-o", "size=%s,mode=755" % size, "iosig-debian", mnt])
            if r.returncode:
                skip("cannot mount a tmpfs: " + r.stderr.strip())
        self.data_dd = os.path.join(self.data, "dd")
        self.config = self.path("iosig.yaml")
        self.log = self.path("decisions.jsonl")
        write_config(self.config, [
            (self.work, os.path.join(self.work, "dd"), ["seq_write_bw: 1MiB/s",
                                                         "seq_read_bw: 1MiB/s"]),
            (self.data, self.data_dd, [])])

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def env(self, redirect=True):
        e = {k: v for k, v in os.environ.items() if not k.startswith("IOSIG_")}
        e["LC_ALL"] = "C"
        if redirect:
            e["IOSIG_CONFIG"] = self.config
            e["IOSIG_PROBE_CACHE"] = ""
            e["IOSIG_LOG"] = self.log
        return e

    def data_files(self):
        try:
            return sorted(n for n in os.listdir(self.data_dd) if n.startswith(("L-", "G-")))
        except OSError:
            return []

    def redirected(self, opener):
        """How many outputs the declared opener's calls redirected so far:
        the decision log's records of iosig_opener_begin (call "opener")
        at a site of the function, which linked the path to a data file
        here.  A pragma the opener did not bind makes no such record."""
        n = 0
        try:
            with open(self.log) as f:
                for line in f:
                    r = json.loads(line)
                    if (r.get("event") == "decision" and r.get("call") == "opener" and
                            (r.get("site") or {}).get("call") == opener and
                            r.get("action") == "linked" and
                            (r.get("data_path") or "").startswith(self.data_dd + "/")):
                        n += 1
        except OSError:
            pass
        return n

    def gc(self, *args):
        p = sh([os.environ["IOSIG_TOOL"], "gc", "--config", self.config, "--json"] + list(args),
               env=self.env(redirect=False))
        try:
            return p.returncode, json.loads(p.stdout)
        except ValueError:
            return p.returncode, {"error": p.stderr}

    def close(self):
        for mnt in (self.work, self.data):
            sh(["umount", "-l", mnt])
        shutil.rmtree(self.dir, ignore_errors=True)


def run(args, cwd, env, timeout=600, what=None):
    t0 = time.time()
    p = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if what:
        print("     %s: %.1f s" % (what, time.time() - t0))
    return p


def build_flags():
    cc, plugin = os.environ.get("IOSIG_GCC"), os.environ.get("IOSIG_GCC_PLUGIN")
    inc, libdir = os.environ.get("IOSIG_INCLUDE"), os.environ.get("IOSIG_LIBDIR")
    if not (cc and plugin and inc and libdir and os.environ.get("IOSIG_TOOL")):
        skip("IOSIG_GCC, IOSIG_GCC_PLUGIN, IOSIG_INCLUDE, IOSIG_LIBDIR and IOSIG_TOOL must be "
             "set (run through ctest)")
    # libiosig.so is needed whatever the linker's --as-needed default.
    libs = "-Wl,--push-state,--no-as-needed -L%s -liosig -Wl,-rpath,%s -Wl,--pop-state" % (
        libdir, libdir)
    # A pragma that binds to no call fails the build.
    return cc, ["-fplugin=" + plugin, "-fplugin-arg-iosig-unbound=error"], "-I" + inc, libs


def bound(program):
    """The program calls the runtime around a declared opener's call."""
    syms = sh(["nm", program]).stdout
    return "iosig_opener_begin" in syms and "iosig_opener_end" in syms


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def is_redirected(world, path):
    return os.path.islink(path) and os.readlink(path).startswith(world.data_dd + "/")


def make_inputs(directory, n):
    """n files of text-like, compressible bytes; {name: sha256}."""
    os.makedirs(directory, exist_ok=True)
    sums = {}
    for i in range(n):
        name = os.path.join(directory, "in%d.txt" % i)
        with open(name, "wb") as f:
            for j in range(20000 * (i + 1)):
                f.write(b"line %d of file %d: %s\n" % (j, i, os.urandom(8).hex().encode()))
        sums[name] = sha(name)
    return sums


# ---------------------------------------------------------------------------
# gzip
# ---------------------------------------------------------------------------

def test_gzip(world, pristine, cache):
    cc, load, inc, libs = build_flags()
    src = os.path.join(world.work, "gzip")
    shutil.copytree(pristine, src, symlinks=True)
    annotate_gzip(src)
    cflags = " ".join(["-O2", "-g"] + load + [inc])
    # configure's answers are kept for the same compiler, plugin and flags:
    # a rerun takes seconds, not a minute.
    key = hashlib.sha256(("%s|%s|%s" % (cc, cflags, libs)).encode()).hexdigest()[:16]
    p = run(["./configure", "--quiet", "--cache-file=" + os.path.join(cache, "gzip-%s.cache" % key),
             "CC=" + cc, "CFLAGS=" + cflags, "LIBS=" + libs], src, world.env(redirect=False),
            what="gzip configure")
    if not check(p.returncode == 0, "gzip configures with the plugin"):
        print(p.stdout[-2000:] + p.stderr[-2000:])
        return
    # The manual is not rebuilt (no texinfo needed): MAKEINFO=true.
    p = run(["make", "-j2", "MAKEINFO=true"], src, world.env(redirect=False), what="gzip build")
    if not check(p.returncode == 0 and os.path.exists(os.path.join(src, "gzip")),
                 "gzip builds with the plugin"):
        print(p.stdout[-2000:] + p.stderr[-3000:])
        return
    check(bound(os.path.join(src, "gzip")),
          "the pragma was bound to the opener: gzip calls iosig_opener_begin and _end")

    before = world.redirected(GZIP_OPENER)
    p = run(["make", "-j2", "MAKEINFO=true", "check"], src, world.env(), what="gzip make check")
    summary = re.findall(r"^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):\s+(\d+)", p.stdout, re.M)
    counts = {k: int(v) for k, v in summary}
    if not check(p.returncode == 0 and counts.get("TOTAL") == 26 and counts.get("PASS") == 26,
                 "gzip's make check passes 26 of 26 (%s)" % counts):
        try:
            with open(os.path.join(src, "tests", "test-suite.log")) as f:
                print(f.read()[-6000:])
        except OSError:
            print(p.stdout[-3000:] + p.stderr[-3000:])
    check(world.redirected(GZIP_OPENER) > before,
          "its outputs were redirected through %s while it ran (%d)" %
          (GZIP_OPENER, world.redirected(GZIP_OPENER) - before))
    left = world.data_files()
    print("     data files the test suite's rm left behind: %d" % len(left))
    status, rep = world.gc()
    check(status == 0 and rep.get("freed") == len(left) and rep.get("live") == 0 and
          rep.get("unanchored") == 0,
          "iosig gc frees every one of them (%s)" %
          {k: rep.get(k) for k in ("freed", "freed_bytes", "live", "unanchored", "kept", "error")})
    check(world.data_files() == [], "no data file is left (%s)" % world.data_files()[:5])

    # Round trips with the redirection active.
    gz = os.path.join(src, "gzip")
    rt = os.path.join(world.work, "rt-gzip")
    sums = make_inputs(rt, 3)
    env = world.env()
    for name, digest in sums.items():
        n = world.redirected(GZIP_OPENER)
        p = run([gz, "-9", name], rt, env)
        check(p.returncode == 0 and not os.path.exists(name) and
              is_redirected(world, name + ".gz") and world.redirected(GZIP_OPENER) == n + 1,
              "gzip %s: the .gz is redirected through %s, the input removed (%s)" %
              (os.path.basename(name), GZIP_OPENER, p.stderr.strip()))
        p = run([gz, "-t", name + ".gz"], rt, env)
        check(p.returncode == 0, "gzip -t reads the redirected .gz (%s)" % p.stderr.strip())
        p = run([gz, "-l", name + ".gz"], rt, env)
        check(p.returncode == 0 and os.path.basename(name) in p.stdout,
              "gzip -l lists it (%s)" % p.stderr.strip())
        p = subprocess.run([gz, "-dc", name + ".gz"], cwd=rt, env=env, capture_output=True)
        check(p.returncode == 0 and hashlib.sha256(p.stdout).hexdigest() == digest,
              "gzip -dc gives the input back")
        data_gz = os.readlink(name + ".gz") if is_redirected(world, name + ".gz") else None
        n = world.redirected(GZIP_OPENER)
        p = run([gz, "-d", name + ".gz"], rt, env)
        check(p.returncode == 0 and not os.path.lexists(name + ".gz") and
              data_gz and not os.path.exists(data_gz),
              "gzip -d of the redirected .gz (O_NOFOLLOW) works and frees its data (%s)" %
              p.stderr.strip())
        check(is_redirected(world, name) and sha(name) == digest and
              world.redirected(GZIP_OPENER) == n + 1,
              "the decompressed file is redirected through %s and intact" % GZIP_OPENER)
    # Compressing a redirected file again: gzip reads it (O_NOFOLLOW) and
    # removes it, and with -f replaces the .gz it made before.
    first = sorted(sums)[0]
    p = run([gz, "-k", first], rt, env)
    old_gz = os.readlink(first + ".gz") if os.path.islink(first + ".gz") else None
    check(p.returncode == 0 and old_gz and os.path.exists(first), "gzip -k keeps the input")
    p = run([gz, "-f", first], rt, env)
    check(p.returncode == 0 and not os.path.lexists(first) and old_gz and
          not os.path.exists(old_gz) and is_redirected(world, first + ".gz"),
          "gzip -f replaces its earlier .gz (freed) and removes the input (%s)" % p.stderr.strip())
    p = run([gz, "-d", first + ".gz"], rt, env)
    check(p.returncode == 0 and sha(first) == sums[first], "and it decompresses again")
    expected = {os.readlink(os.path.join(rt, n)).rsplit("/", 1)[1] for n in os.listdir(rt)
                if is_redirected(world, os.path.join(rt, n))}
    check(set(world.data_files()) == expected,
          "every data file belongs to a file that exists (%d)" % len(expected))
    shutil.rmtree(rt)
    status, rep = world.gc()
    check(status == 0 and rep.get("freed") == len(expected) and world.data_files() == [],
          "after rm -r of the results, gc leaves nothing (%s)" % rep.get("freed"))


# ---------------------------------------------------------------------------
# bzip2
# ---------------------------------------------------------------------------

def test_bzip2(world, pristine, compiler, cc, load):
    _, _, inc, libs = build_flags()
    src = os.path.join(world.work, "bzip2-" + compiler)
    shutil.copytree(pristine, src, symlinks=True)
    annotate_bzip2(src)
    cflags = " ".join(["-Wall", "-O2", "-g", "-D_FILE_OFFSET_BITS=64"] + load + [inc])
    p = run(["make", "-j2", "CC=" + cc, "CFLAGS=" + cflags, "LDFLAGS=" + libs], src,
            world.env(redirect=False), what="bzip2 build (%s)" % compiler)
    if not check(p.returncode == 0 and os.path.exists(os.path.join(src, "bzip2")),
                 "bzip2 builds with the %s plugin" % compiler):
        print(p.stdout[-2000:] + p.stderr[-3000:])
        return
    check(bound(os.path.join(src, "bzip2")),
          "%s: the pragmas were bound to the opener: bzip2 calls iosig_opener_begin and _end" %
          compiler)
    p = run(["make", "test", "CC=" + cc, "CFLAGS=" + cflags, "LDFLAGS=" + libs], src,
            world.env(), what="bzip2 make test")
    check(p.returncode == 0 and "cmp" in p.stdout, "%s: bzip2's make test passes" % compiler)

    bz = os.path.join(src, "bzip2")
    rt = os.path.join(world.work, "rt-bzip2-" + compiler)
    sums = make_inputs(rt, 2)
    env = dict(world.env(), LD_LIBRARY_PATH=src)
    before = world.redirected(BZIP2_OPENER)
    for name, digest in sums.items():
        p = run([bz, name], rt, env)
        check(p.returncode == 0 and not os.path.exists(name) and
              is_redirected(world, name + ".bz2"),
              "%s: bzip2 %s: the .bz2 is redirected (%s)" % (compiler, os.path.basename(name),
                                                               p.stderr.strip()))
        p = run([bz, "-t", name + ".bz2"], rt, env)
        check(p.returncode == 0, "%s: bzip2 -t reads it (%s)" % (compiler, p.stderr.strip()))
        p = subprocess.run([bz, "-dc", name + ".bz2"], cwd=rt, env=env, capture_output=True)
        check(p.returncode == 0 and hashlib.sha256(p.stdout).hexdigest() == digest,
              "%s: bzip2 -dc gives the input back" % compiler)
        data_bz = os.readlink(name + ".bz2") if is_redirected(world, name + ".bz2") else None
        p = run([bz, "-d", name + ".bz2"], rt, env)
        check(p.returncode == 0 and not os.path.lexists(name + ".bz2") and
              data_bz and not os.path.exists(data_bz),
              "%s: bzip2 -d takes the redirected .bz2 as a normal file and frees its data (%s)" %
              (compiler, p.stderr.strip()))
        check(is_redirected(world, name) and sha(name) == digest,
              "%s: the decompressed file is redirected and intact" % compiler)
    check(world.redirected(BZIP2_OPENER) == before + 2 * len(sums),
          "%s: each output was redirected through %s (%d)" %
          (compiler, BZIP2_OPENER, world.redirected(BZIP2_OPENER) - before))
    expected = {os.readlink(os.path.join(rt, n)).rsplit("/", 1)[1] for n in os.listdir(rt)
                if is_redirected(world, os.path.join(rt, n))}
    check(set(world.data_files()) == expected,
          "%s: every data file belongs to a file that exists (%d)" % (compiler, len(expected)))
    # bzip2 removes what it decompressed with the runtime's unlink: a
    # second round, then nothing but the outputs.
    for name in sums:
        run([bz, name], rt, env)
        run([bz, "-d", name + ".bz2"], rt, env)
    check(len(world.data_files()) == len(sums), "%s: a second round leaves only its outputs" % compiler)
    shutil.rmtree(rt)
    status, rep = world.gc()
    check(status == 0 and world.data_files() == [], "%s: after rm -r, gc leaves nothing" % compiler)


def main():
    if os.geteuid() != 0:
        skip("needs root: mounts tmpfs in a private mount namespace")
    cache = os.environ.get("IOSIG_DEBIAN_CACHE")
    if not cache:
        skip("IOSIG_DEBIAN_CACHE must name a cache directory (run through ctest)")
    if os.environ.get("IOSIG_DEBIAN_UNSHARED") != "1":
        fetch_sources(cache)
    status = unshared("IOSIG_DEBIAN_UNSHARED")
    if status is not None:
        return status
    gzip_src, bzip2_src = [os.path.join(cache, "%s-%s" % p) for p in (GZIP, BZIP2)]
    t0 = time.time()
    world = World()
    try:
        test_gzip(world, gzip_src, cache)
        cc, load, _, _ = build_flags()
        test_bzip2(world, bzip2_src, "gcc", cc, load)
        clang, plugin = os.environ.get("IOSIG_CLANG"), os.environ.get("IOSIG_CLANG_PLUGIN")
        if clang and plugin:
            # bzip2's Makefile passes CFLAGS to the link too: the plugin's
            # option in the form clang takes there (docs/clang-plugin.md).
            test_bzip2(world, bzip2_src, "clang", clang,
                       ["-fplugin=" + plugin, "-fpass-plugin=" + plugin,
                        "-Xclang", "-plugin-arg-iosig", "-Xclang", "unbound=error"])
        else:
            print("note: no clang plugin in this build; bzip2 is built with gcc only")
    finally:
        world.close()
    print("     total: %.1f s" % (time.time() - t0))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
