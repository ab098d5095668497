#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of iosig-redirect and libiosig-preload.so on programs nobody here
wrote (coreutils dd and cp, tar, gzip, sqlite3, a statically linked
busybox) and on two helper programs of this directory.

    test_redirect.py GROUP

GROUP is one of:
  cli       every error path: exact messages and exit codes (no root)
  calls     every interposed call, through preload_calls (no root: /dev/shm)
  stress    threads, fork, vfork and exec, through preload_stress (no root)
  programs  dd, cp, tar, gzip: outputs identical to plain runs, files on the
            mounts the rules name, unmatched paths untouched, the decision
            log (root: a tmpfs and an ext4 loop mount made here)
  sqlite    a real database workload with the database and its journal/WAL
            on different mounts; integrity_check; a dump identical to a
            plain run; finalize (root)
  busybox   a statically linked busybox with prepare/finalize (root)

Paths of the built programs come from the environment (CMakeLists.txt):
IOSIG_REDIRECT, PRELOAD_CALLS, PRELOAD_STRESS.  Exit 77 = skipped, with the
reason printed.
"""
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from iosig_testlib import (Scratch, check, data_files, differing, finish, link_into, log_records,  # noqa: E402
                           make_input, mount_point, need_root, run, skip, sqlite_workload, tree,
                           write_config)

REDIRECT = os.environ.get("IOSIG_REDIRECT", "iosig-redirect")


def is_static(path):
    """An ELF64 executable without PT_INTERP (what iosig-redirect checks)."""
    import struct
    with open(path, "rb") as f:
        eh = f.read(64)
        if len(eh) < 64 or eh[:4] != b"\x7fELF" or eh[4] != 2:
            return False
        phoff, = struct.unpack_from("<Q", eh, 32)
        phentsize, phnum = struct.unpack_from("<HH", eh, 54)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            if struct.unpack("<I", f.read(4))[0] == 3:   # PT_INTERP
                return False
        return True


def two_mounts(s):
    """tmpfs (class ram) and ext4 on a loop device (class hdd, persistent),
    each with a data directory, and a config that keeps only them.  Both
    have room for 1 GiB beyond their reserve: the rules declare no
    totalsize, and selection assumes that size then (docs/selection.md).
    Neither costs what it could hold: a tmpfs's size is a limit, the ext4
    image is sparse."""
    ram = s.mount_tmpfs("ram", "2g")
    ext = s.mount_ext4("ext4", "1280M")
    cfg = s.path("iosig.yaml")
    write_config(cfg, [(ram, ram + "/iosig", []), (ext, ext + "/iosig", ["class: hdd"])])
    os.makedirs(s.path("work"))
    return ram, ext, cfg


def shm_mount(s):
    """/dev/shm as the only candidate (no root needed)."""
    shm = "/dev/shm"
    if not os.path.isdir(shm) or not os.path.ismount(shm) or not os.access(shm, os.W_OK):
        skip("/dev/shm is not a writable mount point")
    ddir = tempfile.mkdtemp(prefix="iosig-rx-", dir=shm)
    os.rmdir(ddir)
    cfg = s.path("iosig.yaml")
    write_config(cfg, [(shm, ddir, [])])
    os.makedirs(s.path("work"))
    return shm, ddir, cfg


# ---------------------------------------------------------------------------
# cli: every error path
# ---------------------------------------------------------------------------

def expect(args, status, out=None, err=None, err_re=None, cwd=None, env=None, what=None):
    r, o, e = run([REDIRECT] + args, cwd=cwd, env=env)
    what = what or " ".join(args)
    ok = check(r == status, "%s: exit %d (got %d)" % (what, status, r))
    if out is not None:
        ok &= check(o == out, "%s: stdout %r (got %r)" % (what, out, o))
    if err is not None:
        ok &= check(e == err, "%s: stderr %r (got %r)" % (what, err, e))
    if err_re is not None:
        ok &= check(re.fullmatch(err_re, e, re.S) is not None,
                    "%s: stderr matches %r (got %r)" % (what, err_re, e))
    return o, e


def test_cli():
    s = Scratch("iosig-rx-cli.")
    try:
        shm, ddir, cfg = shm_mount(s)
        work = s.path("work")
        env = {"IOSIG_CONFIG": cfg}
        try_ = "Try 'iosig-redirect --help'.\n"
        o, _ = expect(["--help"], 0, what="--help")
        check(o.startswith("Usage: iosig-redirect [OPTIONS]"), "--help prints the usage")
        expect(["--version"], 0, out="iosig-redirect 0.1.0\n", what="--version")
        expect(["--bogus", "true"], 125,
               err="iosig-redirect: unknown option '--bogus' (a PROGRAM starting with '-' goes after '--')\n" + try_)
        expect(["-s", "tmp", "x"], 125, env=env,
               err="iosig-redirect: no PROGRAM to run: iosig-redirect -s 'SIG' PATH -- PROGRAM [ARGS...]\n" + try_)
        expect(["true"], 125,
               err="iosig-redirect: no rules: give -s 'SIG' PATH or -r RULES, or PROGRAM runs unchanged\n" + try_)
        expect(["-s", "tmp"], 125,
               err="iosig-redirect: -s needs a signature and a path: -s 'SIG' PATH\n" + try_)
        expect(["-r"], 125, err="iosig-redirect: -r needs a rules file\n" + try_)
        expect(["--log"], 125, err="iosig-redirect: --log needs a file (or 'stderr')\n" + try_)
        expect(["-s", "persist sequentail", "x", "true"], 125,
               err="iosig-redirect: -s #1: signature 'persist sequentail': unknown parameter 'sequentail'; did you mean 'sequential'?\n"
                   "  persist sequentail\n          ^\n")
        expect(["-s", "tmp", "x", "-s", "size_per_io(4 KiX)", "y", "true"], 125,
               err="iosig-redirect: -s #2: signature 'size_per_io(4 KiX)': unknown unit 'KiX'; did you mean 'KiB'?\n"
                   "  size_per_io(4 KiX)\n                ^\n")
        expect(["-s", "tmp", "/a[[:alpha:]]", "true"], 125,
               err="iosig-redirect: -s #1: path '/a[[:alpha:]]': character class names such as [:alpha:] are not supported: list the characters ([a-zA-Z])\n")
        expect(["-r", s.path("nope.yaml"), "true"], 125,
               err="iosig-redirect: %s: cannot read rules file: No such file or directory; give a readable rules file (see iosig-rules(5))\n" % s.path("nope.yaml"))
        bad = s.path("bad.yaml")
        with open(bad, "w") as f:
            f.write("rules:\n  - path: /x\n    sig: persist sequentail\n")
        expect(["-r", bad, "true"], 125,
               err="iosig-redirect: %s:3:18: sig: unknown parameter 'sequentail'; did you mean 'sequential'?\n" % bad)
        with open(bad, "w") as f:
            f.write("rules:\n  - path: /x\n    use: journal\n")
        expect(["-r", bad, "true"], 125,
               err="iosig-redirect: %s:3:10: use: no signature named 'journal' is defined here; define it under 'signatures:' in a rules file given before\n" % bad)
        with open(bad, "w") as f:
            f.write("rules: [\n")
        expect(["-r", bad, "true"], 125,
               err="iosig-redirect: %s:2:1: invalid YAML: did not find expected node content while parsing a flow node\n" % bad)
        badcfg = s.path("badcfg.yaml")
        with open(badcfg, "w") as f:
            f.write("mounts:\n  /x: { clas: ram }\n")
        expect(["--config", badcfg, "-s", "tmp", "x", "true"], 125,
               err_re=r"iosig-redirect: storage catalog: %s:2:\d+: .*clas.*\n" % re.escape(badcfg))
        # A signature nothing satisfies: a warning naming the rule and why,
        # and the program runs; --strict stops.  iosig-redirect checks the
        # rules itself only with --check (or --strict, --config): by default
        # the preload library warns at the first open a rule matches, once
        # per rule and process, and a run that opens nothing hears nothing.
        unsatisfiable = r"iosig-redirect: warning: rule -s #1 \('x'\): no mount satisfies 'tamper': /dev/shm: tamperproof requested, but the mount is not labelled tamperproof \(and \d+ mounts not eligible: see 'iosig devices --all'\); files it matches stay where the program puts them\n"
        expect(["--check", "-s", "tamperproof", "x", "sh", "-c", "exit 7"], 7, env=env,
               err_re=unsatisfiable)
        expect(["-s", "tamperproof", "x", "sh", "-c", "exit 7"], 7, env=env, err="",
               what="no check at start")
        expect(["-s", "tamperproof", "x", "sh", "-c", ": > x; : >> x; exit 7"], 7, env=env,
               cwd=work, err_re=unsatisfiable, what="the preload library warns once")
        check(os.path.isfile(os.path.join(work, "x")) and not os.path.islink(os.path.join(work, "x")),
              "an unsatisfiable rule's file is created where the program asked")
        os.unlink(os.path.join(work, "x"))
        expect(["--strict", "-s", "tamperproof", "x", "true"], 125, env=env,
               err_re=r"iosig-redirect: rule -s #1 \('x'\): no mount satisfies 'tamper': .*--strict stops here \(see 'iosig explain'\)\n")
        expect(["-q", "--check", "-s", "tamperproof", "x", "true"], 0, env=env, err="",
               what="--quiet")
        expect(["-q", "-s", "tamperproof", "x", "sh", "-c", ": > x"], 0, env=env, cwd=work,
               err="", what="--quiet reaches the preload library")
        os.unlink(os.path.join(work, "x"))
        # Rules that can never match.
        expect(["-s", "tmp", "/d/x", "-s", "tmp random", "/d/x", "true"], 0, env=env,
               err="iosig-redirect: warning: rule '/d/x' (-s #2) is never used: '/d/x' (-s #1) has the same pattern and comes first\n")
        # The program: not found, not executable, a directory, status, signals.
        expect(["-s", "tmp", "x", "no-such-program-iosig"], 127, env=env,
               err="iosig-redirect: 'no-such-program-iosig': No such file or directory\n")
        expect(["-s", "tmp", "x", s.path("none")], 127, env=env,
               err="iosig-redirect: '%s': No such file or directory\n" % s.path("none"))
        noexec = s.path("noexec.sh")
        with open(noexec, "w") as f:
            f.write("#!/bin/sh\necho hi\n")
        os.chmod(noexec, 0o644)
        if os.geteuid() != 0:
            expect(["-s", "tmp", "x", noexec], 126, env=env,
                   err="iosig-redirect: '%s': Permission denied\n" % noexec)
        else:
            # root may read anything, but a file without x bits is not run
            expect(["-s", "tmp", "x", noexec], 126, env=env,
                   err="iosig-redirect: '%s': Permission denied\n" % noexec)
        expect(["-s", "tmp", "x", s.dir], 126, env=env,
               err="iosig-redirect: '%s': Is a directory\n" % s.dir)
        garbage = s.path("garbage")
        with open(garbage, "wb") as f:
            f.write(b"\x00\x01binary garbage")
        os.chmod(garbage, 0o755)
        expect(["-s", "tmp", "x", garbage], 126, env=env,
               err="iosig-redirect: cannot run '%s': Exec format error\n" % garbage)
        elf32 = s.path("elf32")
        with open(elf32, "wb") as f:   # an ELF header of a 32-bit executable, nothing else
            f.write(b"\x7fELF\x01\x01\x01" + bytes(9) + b"\x02\x00\x03\x00\x01\x00\x00\x00" + bytes(40))
        os.chmod(elf32, 0o755)
        expect(["-s", "tmp", "x", elf32], 126, env=env,
               err="iosig-redirect: warning: %s is a 32-bit program: the 64-bit preload library cannot load into it, no rule applies; use 'iosig-redirect prepare' and 'finalize'\n"
                   "iosig-redirect: cannot run '%s': Exec format error\n" % (elf32, elf32))
        expect(["-s", "tmp", "x", "--", "sh", "-c", "exit 42"], 42, env=env, what="exit status")
        r, _, _ = run([REDIRECT, "-s", "tmp", "x", "sh", "-c", "kill -TERM $$"], env=env)
        check(r == -signal.SIGTERM, "a program killed by SIGTERM is seen killed by SIGTERM (got %d)" % r)
        # The environment the program gets.
        r, o, _ = run([REDIRECT, "-s", "tmp", "x", "sh", "-c", "echo \"$LD_PRELOAD\""],
                      env=dict(env, LD_PRELOAD="/lib/x86_64-linux-gnu/libm.so.6",
                               # a sanitizer build of iosig-redirect must accept the preload
                               ASAN_OPTIONS="verify_asan_link_order=0"))
        check(r == 0 and re.fullmatch(r"/lib/x86_64-linux-gnu/libm\.so\.6:/\S+/libiosig-preload\.so\n", o),
              "existing LD_PRELOAD entries are kept, ours last (got %r)" % o)
        r, o, _ = run([REDIRECT, "--log", "rel.log", "--config", "iosig.yaml", "-n", "-s", "tmp", "x",
                       "sh", "-c", "echo $IOSIG_LOG $IOSIG_CONFIG $IOSIG_DRYRUN"], cwd=s.dir)
        check(o == "%s %s 1\n" % (s.path("rel.log"), cfg), "--log and --config are made absolute (got %r)" % o)
        expect(["-s", "tmp", "x", "true"], 125, env=dict(env, IOSIG_PRELOAD=s.path("missing.so")),
               err="iosig-redirect: preload library %s: No such file or directory; reinstall iosig or set IOSIG_PRELOAD to libiosig-preload.so\n" % s.path("missing.so"))
        expect(["-s", "tmp", "x", "true"], 125, env=dict(env, IOSIG_PRELOAD="lib.so"),
               err="iosig-redirect: preload library 'lib.so': LD_PRELOAD needs an absolute path without ':' or blanks; set IOSIG_PRELOAD to one\n")
        # Statically linked and set-user-ID programs.
        busybox = shutil.which("busybox")
        if busybox and is_static(busybox):
            expect(["-s", "tmp", "x", busybox, "true"], 0, env=env,
                   err="iosig-redirect: warning: %s is statically linked: LD_PRELOAD cannot reach its opens, no rule applies; use 'iosig-redirect prepare' before and 'iosig-redirect finalize' after the run\n" % busybox)
            expect(["--strict", "-s", "tmp", "x", busybox, "true"], 125, env=env,
                   err="iosig-redirect: %s is statically linked: LD_PRELOAD cannot reach its opens; use 'iosig-redirect prepare' before and 'iosig-redirect finalize' after the run\n" % busybox)
        # A broken IOSIG_REDIRECT_RULES from an outer run: a warning, and the
        # preload library ignores it (logged).
        expect(["-s", "tmp", "x", "true"], 0, env=dict(env, IOSIG_REDIRECT_RULES="garbage"),
               err="iosig-redirect: warning: IOSIG_REDIRECT_RULES from an outer iosig-redirect is not valid (not compiled rules of this version (iosig-rules-1) at byte 0): its rules no longer apply\n")
        log = s.path("broken.log")
        lib = re.search(r"(/\S+libiosig-preload\.so)", run([REDIRECT, "-s", "tmp", "x", "sh", "-c", "echo $LD_PRELOAD"], env=env)[1]).group(1)
        r, _, _ = run(["sh", "-c", ": > %s/t.out" % work],
                      env=dict(env, LD_PRELOAD=lib, IOSIG_REDIRECT_RULES="13:iosig-rules-1,3:x", IOSIG_LOG=log))
        recs = log_records(log)
        check(r == 0 and len(recs) == 1 and recs[0]["event"] == "warning" and
              recs[0]["message"] == "IOSIG_REDIRECT_RULES: truncated or malformed rule at byte 19; no rule applies in this process",
              "a malformed rule set is logged once and nothing is redirected (%r)" % recs)
        # prepare and finalize.
        expect(["prepare"], 125,
               err="iosig-redirect prepare: no rules: give -s 'SIG' PATH or -r RULES\nTry 'iosig-redirect prepare --help'.\n")
        expect(["prepare", "-s", "tmp", "*.x"], 125, env=env, cwd=work,
               err="iosig-redirect prepare: nothing to prepare: name the files (PATH arguments or -s 'SIG' PATH without wildcards)\nTry 'iosig-redirect prepare --help'.\n")
        expect(["prepare", "-s", "tmp", "*.x", "a.y"], 1, env=env, cwd=work,
               err="iosig-redirect prepare: a.y: no rule matches it; give its signature with -s 'SIG' a.y\n")
        expect(["prepare", "--bogus"], 125,
               err="iosig-redirect prepare: unknown option '--bogus' (a PATH starting with '-' goes after '--')\nTry 'iosig-redirect prepare --help'.\n")
        o, e = expect(["prepare", "-n", "-s", "tmp", "out.x"], 0, env=env, cwd=work,
                      out="out.x: would go to /dev/shm (ram) (dry run)\n", what="prepare --dry-run")
        check(not os.path.lexists(os.path.join(work, "out.x")) and '"action":"dryrun"' in e,
              "prepare --dry-run creates nothing and logs to stderr")
        o, _ = expect(["prepare", "--help"], 0, what="prepare --help")
        check(o.startswith("Usage: iosig-redirect prepare"), "prepare --help prints its usage")
        expect(["finalize"], 125,
               err="iosig-redirect finalize: no PATH given: name the files to finalize\nTry 'iosig-redirect finalize --help'.\n")
        expect(["finalize", "--bogus"], 125,
               err="iosig-redirect finalize: unknown option '--bogus' (a PATH starting with '-' goes after '--')\nTry 'iosig-redirect finalize --help'.\n")
        with open(s.path("work", "plain"), "w") as f:
            f.write("x")
        expect(["finalize", "plain"], 0, env=env, cwd=work,
               out="plain: not a symbolic link: already in place, nothing to do\n")
        os.symlink("/etc/hostname", s.path("work", "foreign"))
        expect(["finalize", "foreign"], 1, env=env, cwd=work,
               err="iosig-redirect finalize: foreign: refused: the link does not point to a data file of the runtime (<data directory>/L-... or G-...); if the file was redirected under another configuration, run with that configuration (--config or IOSIG_CONFIG)\n")
        shutil.rmtree(ddir, ignore_errors=True)
    finally:
        s.close()


# ---------------------------------------------------------------------------
# calls, stress: the preload library itself (no root)
# ---------------------------------------------------------------------------

def test_calls():
    s = Scratch("iosig-rx-calls.")
    try:
        shm, ddir, cfg = shm_mount(s)
        work = s.path("work")
        log = s.path("log.jsonl")
        r, o, e = run([REDIRECT, "--config", cfg, "--log", log, "-s", "tmp", work + "/*.out",
                       "-s", "tmp", work + "/sub/*.out", os.environ["PRELOAD_CALLS"], work, ddir])
        sys.stdout.write(o)
        check(r == 0 and not e, "every interposed call redirects (exit %d, stderr %r)" % (r, e))
        recs = log_records(log)
        calls = {x["call"] for x in recs if x["event"] == "decision"}
        for c in ("open", "open64", "openat", "openat64", "creat", "creat64", "fopen", "fopen64",
                  "freopen", "freopen64", "__open_2", "__open64_2", "__openat_2", "__openat64_2",
                  "unlink", "unlinkat", "remove"):
            check(c in calls, "the log has a decision of %s" % c)
        removed = [x for x in recs if x.get("action") == "removed"]
        check(len(removed) == 3, "three removals logged with their data (%d)" % len(removed))
        check(all(x["site"]["call"] == "rule" and x["site"]["file"].startswith("-s #") for x in recs
                  if x["event"] == "decision"), "each decision names its rule")
        check(len(data_files(ddir)) == 10, "ten data files, none left by the removals (%d)" % len(data_files(ddir)))
        # An iosig-redirect inside another: both rule sets apply, and the
        # library is preloaded once.
        r, o, e = run([REDIRECT, "--config", cfg, "-s", "tmp", work + "/outer.dat", REDIRECT, "-s", "tmp",
                       work + "/inner.dat", "sh", "-c",
                       "echo $LD_PRELOAD; : > %s/outer.dat; : > %s/inner.dat" % (work, work)],
                      # a sanitizer build of the inner iosig-redirect must accept the preload
                      env={"ASAN_OPTIONS": "verify_asan_link_order=0"})
        check(r == 0 and link_into(work + "/outer.dat", ddir) and link_into(work + "/inner.dat", ddir),
              "nested runs apply the inner and the outer rules (%r)" % e)
        check(o.count("libiosig-preload.so") == 1, "the library is in LD_PRELOAD once (%r)" % o)
        # The runtime half of the library is loaded by the first call that
        # matches, never by a program whose opens match nothing.
        r, o, _ = run([REDIRECT, "--config", cfg, "-s", "tmp", work + "/*.none", "sh", "-c", "cat /proc/$$/maps"])
        check(r == 0 and "/libiosig-preload.so" in o and "libiosig-preload-core.so" not in o,
              "no match: only libiosig-preload.so is loaded")
        r, o, _ = run([REDIRECT, "--config", cfg, "-s", "tmp", work + "/*.none", "sh", "-c",
                       ": > %s/x.none; cat /proc/$$/maps" % work])
        check(r == 0 and "libiosig-preload-core.so" in o and link_into(work + "/x.none", ddir),
              "a match loads libiosig-preload-core.so and redirects")
        # Without its core next to it, the library lets everything through,
        # and iosig-redirect refuses to start.
        alone = s.path("alone")
        os.makedirs(alone)
        lib = re.search(r"(/\S+/libiosig-preload\.so)", o).group(1)
        shutil.copy(lib, alone)
        expect(["-s", "tmp", "x", "true"], 125, env={"IOSIG_PRELOAD": alone + "/libiosig-preload.so"},
               err="iosig-redirect: preload library %s/libiosig-preload-core.so: No such file or directory; it must be next to %s/libiosig-preload.so (reinstall iosig)\n" % (alone, alone))
        rules_env = run([REDIRECT, "--config", cfg, "-q", "-s", "tmp", work + "/*.none", "sh", "-c",
                         'printf %s "$IOSIG_REDIRECT_RULES"'])[1]
        r, _, e = run(["sh", "-c", ": > %s/y.none" % work],
                      env={"LD_PRELOAD": alone + "/libiosig-preload.so", "IOSIG_REDIRECT_RULES": rules_env})
        check(r == 0 and not e and os.path.isfile(work + "/y.none") and not os.path.islink(work + "/y.none"),
              "without the core a matching open is done plainly")
        # IOSIG_DISABLE: pure pass-through, even for matching paths.
        n_before = len(log_records(log))
        r, _, _ = run([REDIRECT, "--config", cfg, "--log", log, "-s", "tmp", work + "/off.dat", "sh", "-c",
                       ": > %s/off.dat" % work], env={"IOSIG_DISABLE": "1"})
        check(r == 0 and os.path.isfile(work + "/off.dat") and not os.path.islink(work + "/off.dat") and
              len(log_records(log)) == n_before, "IOSIG_DISABLE=1 passes everything through, unlogged")
        # A program that never opens a matching path sees no difference.
        r, o, _ = run([REDIRECT, "--config", cfg, "--log", log, "-s", "tmp", work + "/*.none",
                       "sh", "-c", "echo a > %s/a.txt; cat %s/a.txt" % (work, work)])
        check(r == 0 and o == "a\n" and os.path.isfile(work + "/a.txt") and not os.path.islink(work + "/a.txt"),
              "unmatched paths are untouched")
        shutil.rmtree(ddir, ignore_errors=True)
    finally:
        s.close()


def test_stress():
    s = Scratch("iosig-rx-stress.")
    try:
        shm, ddir, cfg = shm_mount(s)
        work = s.path("work")
        r, o, e = run([REDIRECT, "--config", cfg, "-s", "tmp", work + "/*.out",
                       os.environ["PRELOAD_STRESS"], work, ddir, "8", "64"], timeout=120)
        sys.stdout.write(o)
        check(r == 0, "threads, fork, vfork and exec (exit %d, %s)" % (r, e.strip()))
        check(len(data_files(ddir)) == 1 + 8 * 64 * 2 + 8 * 8 * 2,
              "every matched file has its data file (%d)" % len(data_files(ddir)))
        shutil.rmtree(ddir, ignore_errors=True)
    finally:
        s.close()


# ---------------------------------------------------------------------------
# programs: dd, cp, tar, gzip on real mounts
# ---------------------------------------------------------------------------

def test_programs():
    need_root()
    s = Scratch("iosig-rx-prog.")
    try:
        ram, ext, cfg = two_mounts(s)
        rdd, edd = ram + "/iosig", ext + "/iosig"
        work = s.path("work")
        plain = s.path("plain")
        os.makedirs(plain)
        log = s.path("log.jsonl")
        for d in (work, plain):
            make_input(os.path.join(d, "input"), 20000)
            os.makedirs(os.path.join(d, "src", "logs"))
            os.makedirs(os.path.join(d, "src", "data"))
            for i in range(30):
                make_input(os.path.join(d, "src", "logs", "%d.log" % i), 50 + i)
                make_input(os.path.join(d, "src", "data", "%d.dat" % i), 10 + i)
            # tar and gzip record modification times: give both trees the
            # same ones, or the archives differ whenever the two were made
            # in different seconds.
            for sub, dirs, files in os.walk(d, topdown=False):
                for n in files + dirs:
                    os.utime(os.path.join(sub, n), (1700000000, 1700000000))
        # Rules: scratch output of dd on the tmpfs, copies and extracted logs
        # persistent (ext4), the archive and compressed files too.
        rules = s.path("rules.yaml")
        with open(rules, "w") as f:
            f.write("signatures:\n"
                    "  scratch: tmp random_access size_per_io(4KiB)\n"
                    "  keep: persist sequential_access size_per_io(1MiB)\n"
                    "rules:\n"
                    "  - path: dd.out\n    use: scratch\n"
                    "  - path: copy.dat\n    use: keep\n"
                    "  - path: \"*.tar\"\n    use: scratch\n"
                    "  - path: out/**/*.log\n    use: keep\n"
                    "  - path: \"*.gz\"\n    use: keep\n")
        steps = [
            ["dd", "if=input", "of=dd.out", "bs=4k", "status=none"],
            ["cp", "input", "copy.dat"],
            ["tar", "cf", "src.tar", "src"],
            ["sh", "-c", "mkdir out && tar xf src.tar -C out"],
            ["gzip", "-k", "input"],
            ["sh", "-c", "gzip -dc input.gz > unzipped"],
        ]
        for args in steps:
            r1, o1, e1 = run([REDIRECT, "--config", cfg, "--log", log, "-r", rules, "--"] + args, cwd=work)
            r2, o2, e2 = run(args, cwd=plain)
            check(r1 == r2 == 0 and o1 == o2 and e1 == e2,
                  "%s: same status and output as a plain run (%d %d %r)" % (" ".join(args), r1, r2, e1))
        diff = differing(tree(work), tree(plain))
        check(not diff, "every file has the same content as after the plain runs %s" % diff[:5])
        # Placement.
        check(link_into(work + "/dd.out", rdd) and os.stat(work + "/dd.out").st_dev == os.stat(ram).st_dev,
              "dd's output is on the tmpfs")
        check(link_into(work + "/copy.dat", edd) and os.stat(work + "/copy.dat").st_dev == os.stat(ext).st_dev,
              "cp's copy is on the ext4 mount")
        check(link_into(work + "/src.tar", rdd), "tar's archive is on the tmpfs")
        logs = [os.path.join(work, "out", "src", "logs", "%d.log" % i) for i in range(30)]
        check(all(link_into(p, edd) for p in logs), "tar extracted every .log onto the ext4 mount")
        dats = [os.path.join(work, "out", "src", "data", "%d.dat" % i) for i in range(30)]
        check(all(os.path.isfile(p) and not os.path.islink(p) for p in dats),
              "unmatched extracted files are regular files where tar put them")
        check(link_into(work + "/input.gz", edd), "gzip's output is on the ext4 mount")
        for p in ("input", "unzipped", "src/logs/0.log"):
            q = os.path.join(work, p)
            check(os.path.isfile(q) and not os.path.islink(q), "%s is untouched" % p)
        check(len(data_files(rdd)) == 2 and len(data_files(edd)) == 32,
              "data directories hold exactly the redirected files (%d, %d)" % (len(data_files(rdd)), len(data_files(edd))))
        # The decision log shows each decision.
        recs = [x for x in log_records(log) if x["event"] == "decision"]
        red = [x for x in recs if x["action"] == "redirected"]
        check(len(red) == 34, "34 redirected decisions (%d)" % len(red))
        check(all(x["chosen"] in (ram, ext) and x["data_path"] and x["candidates"] for x in red),
              "each names the chosen mount, the data path and the candidates")
        by_path = {x["abs_path"]: x for x in red}
        check(by_path[work + "/dd.out"]["chosen"] == ram and by_path[work + "/dd.out"]["site"]["file"] == rules,
              "dd.out: chosen %s by %s" % (ram, rules))
        # Dry run: nothing moves, the log (stderr by default) says where it
        # would have gone.
        dry = s.path("dry")
        os.makedirs(dry)
        make_input(os.path.join(dry, "input"), 100)
        r, _, e = run([REDIRECT, "--config", cfg, "-n", "-r", rules, "cp", "input", "copy.dat"], cwd=dry)
        recs = [json.loads(x) for x in e.splitlines() if x.startswith("{")]
        check(r == 0 and os.path.isfile(dry + "/copy.dat") and not os.path.islink(dry + "/copy.dat"),
              "--dry-run creates no link")
        check(any(x.get("action") == "dryrun" and x.get("chosen") == ext for x in recs),
              "--dry-run logs to stderr where it would go")
        # Finalize moves everything back; outputs stay the same.
        paths = ["dd.out", "copy.dat", "src.tar", "input.gz"] + [os.path.relpath(p, work) for p in logs]
        r, o, e = run([REDIRECT, "finalize", "--config", cfg] + paths, cwd=work)
        check(r == 0 and not e, "finalize of every redirected file (%r)" % e)
        check(not any(os.path.islink(os.path.join(work, p)) for p in paths), "no link is left")
        diff = differing(tree(work), tree(plain))
        check(not diff, "contents are unchanged by finalize %s" % diff[:5])
        check(data_files(rdd) == [] and data_files(edd) == [], "data directories are empty")
    finally:
        s.close()


# ---------------------------------------------------------------------------
# sqlite: a database, its journal and WAL on different mounts
# ---------------------------------------------------------------------------

def test_sqlite():
    need_root()
    if not shutil.which("sqlite3"):
        skip("sqlite3 is not installed")
    s = Scratch("iosig-rx-sqlite.")
    try:
        ram, ext, cfg = two_mounts(s)
        rdd, edd = ram + "/iosig", ext + "/iosig"
        work, plain = s.path("work"), s.path("plain")
        os.makedirs(plain)
        log = s.path("log.jsonl")
        rules = s.path("db.yaml")
        with open(rules, "w") as f:
            f.write("signatures:\n"
                    "  table: persist random_access size_per_io(4KiB)\n"
                    "  journal: tmp sequential_access size_per_io(4KiB)\n"
                    "rules:\n"
                    "  - path: [\"/**/*-journal\", \"/**/*-wal\", \"/**/*-shm\"]\n"
                    "    use: journal\n"
                    "  - path: \"*.db\"\n"
                    "    use: table\n")
        sql = sqlite_workload(5000, 100)
        r1, o1, e1 = run([REDIRECT, "--config", cfg, "--log", log, "-r", rules, "sqlite3", "app.db"],
                         cwd=work, input=sql.encode())
        r2, o2, e2 = run(["sqlite3", "app.db"], cwd=plain, input=sql.encode())
        check(r1 == r2 == 0 and o1 == o2 and e1 == e2, "the workload behaves as without iosig-redirect (%r)" % e1)
        check(o1.strip().endswith("ok"), "PRAGMA integrity_check: ok")
        db = work + "/app.db"
        check(link_into(db, edd) and os.stat(db).st_dev == os.stat(ext).st_dev, "the database is on the ext4 mount")
        dump1 = run(["sqlite3", "app.db", ".dump"], cwd=work)
        dump2 = run(["sqlite3", "app.db", ".dump"], cwd=plain)
        check(dump1[0] == 0 and dump1[1] == dump2[1] and len(dump1[1]) > 100000,
              "a dump (without iosig-redirect) equals the plain run's (%d bytes)" % len(dump1[1]))
        count = run([REDIRECT, "--config", cfg, "-r", rules, "sqlite3", "app.db",
                     "select count(*) from item; select count(*) from log; pragma integrity_check;"], cwd=work)
        check(count[1] == "5000\n5250\nok\n", "reading it again under iosig-redirect (%r)" % (count[1],))
        recs = [x for x in log_records(log) if x["event"] == "decision"]
        jr = [x for x in recs if x["action"] == "redirected" and x["path"].endswith(("-journal", "-wal", "-shm"))]
        rm = [x for x in recs if x["action"] == "removed"]
        check(len(jr) >= 50 and all(x["chosen"] == ram for x in jr),
              "every journal and WAL went to the tmpfs (%d)" % len(jr))
        check(any(x["path"].endswith("-wal") for x in jr) and any(x["path"].endswith("-shm") for x in jr),
              "the WAL and its index were redirected")
        check(len(rm) == len(jr), "every one was removed with its data when SQLite deleted it (%d of %d)" % (len(rm), len(jr)))
        dbrec = [x for x in recs if x["action"] == "redirected" and x["path"].endswith("app.db")]
        check(len(dbrec) == 1 and dbrec[0]["chosen"] == ext, "one decision put the database on ext4")
        check(data_files(rdd) == [], "no journal is left on the tmpfs")
        check(len(data_files(edd)) == 1, "the ext4 data directory holds the database alone")
        # A persistent journal stays a link into the tmpfs, next to the
        # database's own path: under the preload library the database is
        # the file it stands for, so SQLite does not resolve its link and
        # names the journal after the path it was given.
        r, o, _ = run([REDIRECT, "--config", cfg, "-r", rules, "sqlite3", "app.db",
                       "pragma journal_mode=persist; begin; insert into log(item, what) values(1, 'p'); commit;"], cwd=work)
        check(r == 0 and link_into(db + "-journal", rdd) and
              not [n for n in data_files(edd) if n.endswith("-journal")],
              "journal_mode=persist leaves the journal next to app.db, linked into the tmpfs")
        # SQLite without the preload library refuses links (O_NOFOLLOW):
        # finalize both before using them without it.
        r, o, e = run([REDIRECT, "finalize", "--config", cfg, "app.db", "app.db-journal"], cwd=work)
        check(r == 0 and os.path.isfile(db) and not os.path.islink(db) and
              not os.path.islink(db + "-journal"),
              "finalize brings the database and its journal back (%r)" % e)
        r, o, _ = run(["sqlite3", "app.db", "pragma integrity_check; select count(*) from log;"], cwd=work)
        check(o == "ok\n5251\n", "the finalized database is intact (%r)" % o)
    finally:
        s.close()


# ---------------------------------------------------------------------------
# busybox: a static binary through prepare/finalize
# ---------------------------------------------------------------------------

def test_busybox():
    need_root()
    bb = shutil.which("busybox")
    if not bb:
        skip("busybox is not installed (Debian: busybox-static)")
    if not is_static(bb):
        skip("%s is not statically linked" % bb)
    s = Scratch("iosig-rx-bb.")
    try:
        ram, ext, cfg = two_mounts(s)
        rdd, edd = ram + "/iosig", ext + "/iosig"
        work, plain = s.path("work"), s.path("plain")
        os.makedirs(plain)
        for d in (work, plain):
            make_input(os.path.join(d, "input"), 5000)
        log = s.path("log.jsonl")
        r, o, e = run([REDIRECT, "prepare", "--config", cfg, "--log", log, "-s", "tmp random", "scratch.out",
                       "-s", "persist sequential", "copy.out", "-s", "persist", "*.gz", "input.gz"], cwd=work)
        check(r == 0 and not e, "prepare (%r)" % e)
        check(re.fullmatch(r"scratch\.out -> %s/L-[0-9a-f]{16}-scratch\.out \(%s, ram\)\n"
                           r"copy\.out -> %s/L-[0-9a-f]{16}-copy\.out \(%s, hdd\)\n"
                           r"input\.gz -> %s/L-[0-9a-f]{16}-input\.gz \(%s, hdd\)\n"
                           % (rdd, ram, edd, ext, edd, ext), o) is not None, "prepare says where each file went:\n" + o)
        recs = log_records(log)
        check(sum(1 for x in recs if x.get("action") == "prepared") == 3, "the log has three 'prepared' decisions")
        # Again: everything exists now.
        r, o, _ = run([REDIRECT, "prepare", "--config", cfg, "-s", "tmp", "scratch.out"], cwd=work)
        check(r == 0 and o == "scratch.out: exists, left as it is\n", "prepare is idempotent (%r)" % o)
        cmds = [[bb, "dd", "if=input", "of=scratch.out", "bs=4096"],
                [bb, "cp", "input", "copy.out"],
                [bb, "sh", "-c", "gzip -c input > input.gz"],
                [bb, "sh", "-c", "echo untouched > other.txt"]]
        for c in cmds:
            r1, o1, e1 = run(c, cwd=work)
            r2, o2, e2 = run(c, cwd=plain)
            check(r1 == r2 == 0 and o1 == o2 and e1 == e2, "busybox %s: as in a plain run" % c[1])
        check(os.stat(work + "/scratch.out").st_dev == os.stat(ram).st_dev and link_into(work + "/scratch.out", rdd),
              "busybox wrote scratch.out through the link onto the tmpfs")
        check(os.stat(work + "/copy.out").st_dev == os.stat(ext).st_dev, "copy.out is on the ext4 mount")
        check(not os.path.islink(work + "/other.txt"), "other.txt is untouched")
        r, o, e = run([REDIRECT, "finalize", "--config", cfg, "scratch.out", "copy.out", "input.gz"], cwd=work)
        check(r == 0 and re.fullmatch(r"scratch\.out: copied back from \S+\ncopy\.out: copied back from \S+\ninput\.gz: copied back from \S+\n", o) is not None,
              "finalize copies each back (%r %r)" % (o, e))
        check(tree(work) == tree(plain), "after finalize every file is as after the plain run")
        check(data_files(rdd) == [] and data_files(edd) == [], "data directories are empty")
        r, o, _ = run([REDIRECT, "finalize", "--config", cfg, "scratch.out"], cwd=work)
        check(r == 0 and o == "scratch.out: not a symbolic link: already in place, nothing to do\n",
              "finalize is idempotent")
    finally:
        s.close()


# ---------------------------------------------------------------------------
# install: the installed tool finds the installed library
# ---------------------------------------------------------------------------

def test_install():
    build, libdir = os.environ.get("IOSIG_BUILD_DIR"), os.environ.get("IOSIG_INSTALL_LIBDIR")
    if not build or not libdir:
        skip("IOSIG_BUILD_DIR and IOSIG_INSTALL_LIBDIR are not set (run through ctest)")
    s = Scratch("iosig-rx-inst.")
    try:
        prefix = s.path("prefix")
        r = subprocess.run(["cmake", "--install", build, "--prefix", prefix], capture_output=True)
        if not check(r.returncode == 0, "cmake --install (%s)" % r.stderr.decode().strip()):
            return
        tool = os.path.join(prefix, "bin", "iosig-redirect")
        lib = os.path.join(prefix, libdir, "libiosig-preload.so")
        check(os.access(tool, os.X_OK) and os.path.isfile(lib), "iosig-redirect and libiosig-preload.so are installed")
        for page in ("man1/iosig-redirect.1", "man5/iosig-rules.5"):
            check(os.path.isfile(os.path.join(prefix, "share", "man", page)), "man page %s is installed" % page)
        r, o, e = run([tool, "-q", "-s", "tmp", "x", "sh", "-c", 'echo "$LD_PRELOAD"'])
        check(r == 0 and o == os.path.realpath(lib) + "\n",
              "the installed tool preloads the installed library (%r %r)" % (o, e))
        # What iosig-redirect hands over (rules files, the catalog check) goes
        # to the installed iosig-redirect-full, which finds the installed
        # library from its own directory (the prefix is not the configured one).
        check(os.access(os.path.join(prefix, "libexec", "iosig", "iosig-redirect-full"), os.X_OK),
              "iosig-redirect-full is installed in libexec/iosig")
        rules = s.path("rules.yaml")
        with open(rules, "w") as f:
            f.write("rules:\n  - path: /nowhere/x\n    sig: tmp\n")
        for extra in (["--check"], ["-r", rules]):
            r, o, e = run([tool, "-q"] + extra + ["-s", "tmp", "x", "sh", "-c", 'echo "$LD_PRELOAD"'])
            check(r == 0 and o == os.path.realpath(lib) + "\n",
                  "%s: the installed tool hands over to the installed iosig-redirect-full (%r %r)" %
                  (extra[0], o, e))
        r, o, _ = run([tool, "-q", "-s", "tmp", s.path("work", "*.out"), "sh", "-c",
                       "mkdir -p %s && echo x > %s/a.out && cat %s/a.out" % ((s.path("work"),) * 3)],
                      env={"IOSIG_DISABLE": ""})
        check(r == 0 and o == "x\n", "a program runs under the installed tool")
    finally:
        s.close()


GROUPS = {"cli": test_cli, "install": test_install, "calls": test_calls, "stress": test_stress, "programs": test_programs,
          "sqlite": test_sqlite, "busybox": test_busybox}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in GROUPS:
        print("usage: test_redirect.py {%s}" % "|".join(GROUPS))
        return 2
    GROUPS[sys.argv[1]]()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
