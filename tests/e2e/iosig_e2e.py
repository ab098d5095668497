#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of the IOSIG compiler plugins.

One case is one real C or C++ program under tests/e2e/cases/.  The harness
compiles it with a compiler and its iosig plugin, checks every diagnostic
against the expectations written in the source (clang -verify style), and,
when the case says how to run it, links it with libiosig, runs it and checks
its exit status, its output and the decision log libiosig wrote (IOSIG_LOG,
JSON lines).  The compiler is a parameter: COMPILERS below says how each one
loads the plugin and spells plugin options; nothing in a case is specific
to one compiler.

Directives, inside comments of the case:

  expect-error: TEXT             a diagnostic on this line with exactly TEXT
  expect-warning@+1: TEXT        ... on the next line (@-2, @12 also work)
  expect-note#28: TEXT           ... on this line, display column 28 (a tab
                                 advances to the next multiple of 8)
  verify-notes                   notes must be expected too (else ignored;
                                 macro and template context is never checked)
  expect-compile-fail            the compilation fails (without an internal error)
  allow-other-diagnostics        diagnostics not expected are allowed (broken code
                                 draws the compiler's own, worded differently
                                 by every compiler)
  cflags: FLAGS                  extra compiler flags (shell words)
  iosig: OPT[=VAL] ...           plugin options (verbose, unbound=error ...)
  run: ARGS                      link, run with ARGS ({tmp} = a fresh directory)
  env: NAME=VALUE                environment of the run
  expect-exit: N                 exit status of the run (default 0)
  expect-stdout: TEXT            a line of the run's standard output (all
                                 lines together must equal the output)
  expect-log: {JSON}             some record of the decision log contains this
                                 JSON (objects: subset; arrays, scalars: equal;
                                 numbers: to 1e-12 relative); a string "@-2"
                                 stands for the line two above the directive
  expect-log-count: N [{JSON}]   the log has exactly N records (containing JSON)
  mount: NAME TYPE {SETTINGS}    a filesystem of TYPE (tmpfs, ext4, xfs) made
                                 for the run, in a private mount namespace (root
                                 only: the case is skipped otherwise), with a
                                 data directory; the configuration keeps it (with
                                 the YAML settings) and ignores every other mount
  after: COMMAND                 a shell command that must succeed after the run

Placeholders in run, env, after and expect-log strings: {tmp} a fresh
directory, {work} the case's directory, {src} the case's source directory,
{mnt:NAME} a mount point, {iosig} the iosig tool.

Subcommands:
  case      compile, check and run one case
  identical check that files without pragmas compile to the same object
            code with and without the plugin

Exit status: 0 passed, 1 failed, 77 skipped (the reason is printed).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# How each compiler loads its iosig plugin and takes plugin options.  A new
# compiler (the clang plugin) adds an entry; cases stay as they are.  A
# compiler named "clang-16" in the test matrix is a "clang".  Columns in
# expectations are display columns (a tab advances to the next multiple of
# 8), as GCC reports them; a compiler that reports byte columns says so
# and the harness converts.
COMPILERS = {
    "gcc": {
        "load": lambda plugin: ["-fplugin=" + plugin],
        "arg": lambda key, val: ["-fplugin-arg-iosig-" + key + ("=" + val if val else "")],
        "diag": ["-fdiagnostics-plain-output"],
        "columns": "display",
    },
    "clang": {
        "load": lambda plugin: ["-fplugin=" + plugin, "-fpass-plugin=" + plugin],
        "arg": lambda key, val: ["-fplugin-arg-iosig-" + key + ("=" + val if val else "")],
        "diag": ["-fno-caret-diagnostics", "-fno-color-diagnostics",
                 "-fno-diagnostics-show-option"],
        "columns": "bytes",
    },
}


def compiler_kind(name):
    """The COMPILERS entry of a compiler named in the matrix ("clang-16")."""
    if name in COMPILERS:
        return name
    kind = name.split("-")[0]
    if kind not in COMPILERS:
        raise SystemExit("unknown compiler %r: the harness knows %s" %
                         (name, ", ".join(sorted(COMPILERS))))
    return kind


def display_column(line_text, col):
    """The display column (tabs to multiples of 8) of 1-based byte column
    col of line_text."""
    data = line_text.encode("utf-8")[:col - 1].decode("utf-8", "replace")
    width = 0
    for ch in data:
        width = (width // 8 + 1) * 8 if ch == "\t" else width + 1
    return width + 1


DIAG_RE = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?P<col>\d+): "
                     r"(?P<kind>fatal error|error|warning|note): (?P<msg>.*)$")
EXPECT_RE = re.compile(r"expect-(?P<kind>error|warning|note)"
                       r"(?:@(?P<spec>[+-]?\d+))?(?:#(?P<col>\d+))?:\s*(?P<text>.*?)\s*(?:\*/|$)")
# Notes that only give context (macro expansions, template instantiations);
# every compiler words them its own way, so they are never checked.
CONTEXT_NOTE_RE = re.compile(r"^(in expansion of macro|in definition of macro|expanded from macro|"
                             r"in instantiation of|required from)")
DIRECTIVE_RE = re.compile(r"(?://|/\*|^\s*\*)\s*(?P<name>cflags|iosig|run|env|expect-exit|mount|after|"
                          r"expect-stdout|expect-log-count|expect-log|verify-notes|expect-compile-fail|"
                          r"allow-other-diagnostics)"
                          r"(?::\s*(?P<arg>.*?))?\s*(?:\*/\s*)?$")


class Failure(Exception):
    """The case failed; the message says why."""


class Skip(Exception):
    """The case cannot run here; the message says why."""


def parse_case(path):
    """Reads the directives and expectations of a case."""
    case = {"cflags": [], "iosig": [], "run": None, "env": {}, "exit": 0,
            "stdout": [], "log": [], "log_count": [], "verify_notes": False,
            "expect": [], "mounts": [], "after": [], "compile_fail": False,
            "allow_other": False}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for num, text in enumerate(lines, 1):
        for m in EXPECT_RE.finditer(text):
            spec = m.group("spec")
            line = num
            if spec is not None:
                line = num + int(spec) if spec[0] in "+-" else int(spec)
            col = int(m.group("col")) if m.group("col") else None
            case["expect"].append({"kind": m.group("kind"), "line": line, "col": col,
                                   "text": m.group("text"), "src": num})
        m = DIRECTIVE_RE.search(text)
        if not m or "expect-error" in text or "expect-warning" in text or "expect-note" in text:
            continue
        name, arg = m.group("name"), (m.group("arg") or "").strip()
        if name == "cflags":
            case["cflags"] += shlex.split(arg)
        elif name == "iosig":
            case["iosig"] += arg.split()
        elif name == "run":
            case["run"] = shlex.split(arg)
        elif name == "env":
            key, _, val = arg.partition("=")
            case["env"][key] = val
        elif name == "expect-exit":
            case["exit"] = int(arg)
        elif name == "expect-stdout":
            case["stdout"].append(arg)
        elif name == "expect-log":
            try:
                case["log"].append((num, relative_lines(json.loads(arg), num)))
            except json.JSONDecodeError as e:
                raise Failure("%s:%d: bad JSON in expect-log: %s" % (path, num, e))
        elif name == "expect-log-count":
            count, _, want = arg.partition(" ")
            try:
                case["log_count"].append((int(count), json.loads(want) if want.strip() else {}))
            except (ValueError, json.JSONDecodeError) as e:
                raise Failure("%s:%d: bad expect-log-count: %s" % (path, num, e))
        elif name == "verify-notes":
            case["verify_notes"] = True
        elif name == "expect-compile-fail":
            case["compile_fail"] = True
        elif name == "allow-other-diagnostics":
            case["allow_other"] = True
        elif name == "mount":
            parts = arg.split(None, 2)
            if len(parts) < 2 or parts[1] not in MOUNT_TYPES:
                raise Failure("%s:%d: mount: NAME tmpfs|ext4|xfs [{settings}]" % (path, num))
            try:
                settings = json.loads(parts[2]) if len(parts) > 2 else {}
            except json.JSONDecodeError as e:
                raise Failure("%s:%d: bad JSON in mount: %s" % (path, num, e))
            case["mounts"].append((parts[0], parts[1], settings))
        elif name == "after":
            case["after"].append(arg)
    return case


# How each filesystem type is made: (image size or None, mkfs command).
MOUNT_TYPES = {
    "tmpfs": (None, None),
    "ext4": ("64M", ["mkfs.ext4", "-q", "-F"]),
    "xfs": ("320M", ["mkfs.xfs", "-q", "-f"]),
}


def substitute(value, places):
    """Replaces {name} placeholders in strings of value (recursively)."""
    if isinstance(value, dict):
        return {k: substitute(v, places) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, places) for v in value]
    if isinstance(value, str):
        for k, v in places.items():
            value = value.replace("{" + k + "}", v)
    return value


def make_mounts(case, work, places, points):
    """Mounts the case's filesystems under work (appending each mount point
    to points) and writes a configuration that keeps only them; returns its
    path."""
    config = ["version: 1", "mounts:"]
    # Leave out every mount of the machine: patterns first, exact entries win.
    pattern = ""
    for _ in range(12):
        pattern += "/*"
        config.append('  "%s": { ignore: true }' % pattern)
    config.append('  "/": { ignore: true }')
    for name, kind, settings in case["mounts"]:
        point = os.path.join(work, "mnt-" + name)
        os.mkdir(point)
        size, mkfs = MOUNT_TYPES[kind]
        if mkfs:
            image = os.path.join(work, name + ".img")
            cmds = [["truncate", "-s", size, image], mkfs + [image],
                    ["mount", "-o", "loop", image, point]]
        else:
            cmds = [["mount", "-t", "tmpfs", "-o", "size=64m", "iosig-e2e-" + name, point]]
        for cmd in cmds:
            status, out, err = run(cmd)
            if status != 0:
                raise Skip("cannot make the %s filesystem %s (%s): %s" %
                           (kind, name, " ".join(cmd), err.strip()))
            if cmd[0] == "mount":
                points.append(point)
        data = os.path.join(point, "iosig-data")
        os.mkdir(data, 0o700)
        places["mnt:" + name] = point
        config.append('  "%s":' % point)
        config.append("    ignore: false")
        config.append('    data_dir: "%s"' % data)
        for k, v in settings.items():
            config.append("    %s: %s" % (k, json.dumps(v) if isinstance(v, bool) else v))
    path = os.path.join(work, "config.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(config) + "\n")
    return path


def relative_lines(value, num):
    """Replaces strings "@+N"/"@-N" in an expect-log value by line num+N."""
    if isinstance(value, dict):
        return {k: relative_lines(v, num) for k, v in value.items()}
    if isinstance(value, list):
        return [relative_lines(v, num) for v in value]
    if isinstance(value, str) and re.fullmatch(r"@[+-]\d+", value):
        return num + int(value[1:])
    return value


def run(cmd, env=None, cwd=None, timeout=300):
    """Runs cmd; returns (status, stdout, stderr)."""
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def compiler_env():
    env = dict(os.environ)
    env["LC_ALL"] = "C"          # ASCII quotes in messages
    env.pop("GCC_COLORS", None)
    return env


def plugin_flags(opts, compiler, extra_args):
    c = COMPILERS[compiler_kind(compiler)]
    flags = c["load"](opts.plugin) + c["diag"]
    for a in extra_args:
        key, _, val = a.partition("=")
        flags += c["arg"](key, val or None)
    return flags


def check_diagnostics(path, case, stderr, columns="display"):
    """Every error and warning for the case file must be expected, every
    expectation met (notes too with verify-notes)."""
    name = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        source = f.read().split("\n")
    got = []
    for text in stderr.splitlines():
        m = DIAG_RE.match(text)
        if not m or os.path.basename(m.group("file")) != name:
            continue
        kind = "error" if m.group("kind") == "fatal error" else m.group("kind")
        if kind == "note" and (not case["verify_notes"] or CONTEXT_NOTE_RE.match(m.group("msg"))):
            continue
        line, col = int(m.group("line")), int(m.group("col"))
        if columns == "bytes" and 0 < line <= len(source):
            col = display_column(source[line - 1], col)
        got.append({"kind": kind, "line": line, "col": col, "text": m.group("msg")})
    expected = [e for e in case["expect"] if e["kind"] != "note" or case["verify_notes"]]
    problems = []
    unmatched = list(got)
    for e in expected:
        for g in unmatched:
            if (g["kind"] == e["kind"] and g["line"] == e["line"] and g["text"] == e["text"]
                    and (e["col"] is None or e["col"] == g["col"])):
                unmatched.remove(g)
                break
        else:
            near = [g for g in unmatched if g["line"] == e["line"]]
            problems.append("expected %s at line %d%s not seen: %s%s" % (
                e["kind"], e["line"], "" if e["col"] is None else " column %d" % e["col"],
                e["text"], "".join("\n    got at %d:%d %s: %s" % (g["line"], g["col"], g["kind"],
                                                              g["text"]) for g in near)))
    for g in unmatched if not case["allow_other"] else []:
        problems.append("unexpected %s at %d:%d: %s" % (g["kind"], g["line"], g["col"], g["text"]))
    if problems:
        raise Failure("diagnostics differ:\n  " + "\n  ".join(problems))


def json_contains(have, want):
    """True if `have` contains `want` (objects: subset, recursively)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and json_contains(have[k], v)
                                              for k, v in want.items())
    if isinstance(want, list):
        return (isinstance(have, list) and len(have) == len(want)
                and all(json_contains(h, w) for h, w in zip(have, want)))
    if isinstance(want, bool) or want is None:
        return have is want
    if isinstance(want, (int, float)):
        if isinstance(have, bool) or not isinstance(have, (int, float)):
            return False
        return have == want or abs(have - want) <= 1e-12 * max(abs(have), abs(want))
    return have == want


def check_log(case, log_path):
    records = []
    if os.path.exists(log_path):
        with open(log_path, encoding="utf-8") as f:
            for n, text in enumerate(f, 1):
                if text.strip():
                    try:
                        records.append(json.loads(text))
                    except json.JSONDecodeError as e:
                        raise Failure("decision log line %d is not JSON (%s): %s" % (n, e, text))
    problems = []
    for count, want in case["log_count"]:
        n = sum(1 for r in records if json_contains(r, want))
        if n != count:
            problems.append("the log has %d records%s, expected %d" %
                            (n, " containing " + json.dumps(want) if want else "", count))
    free = list(records)
    for num, want in case["log"]:
        for r in free:
            if json_contains(r, want):
                free.remove(r)
                break
        else:
            problems.append("no log record contains (line %d) %s" % (num, json.dumps(want)))
    if problems:
        raise Failure("decision log differs:\n  " + "\n  ".join(problems) +
                      "\n  records:\n    " + "\n    ".join(json.dumps(r) for r in records))


def runtime_ready(libdir):
    """True if libiosig has the compiler-generated entry points."""
    lib = os.path.join(libdir, "libiosig.so")
    if not os.path.exists(lib):
        return False
    status, out, _ = run(["nm", "-D", "--defined-only", lib])
    return status == 0 and re.search(r"\biosig_open\b", out) is not None


def cmd_case(opts):
    path = os.path.abspath(opts.file)
    case = parse_case(path)
    cxx = path.endswith((".cc", ".cpp", ".cxx"))
    cc = opts.cxx if cxx else opts.cc
    if case["mounts"] and case["run"] is not None:
        if os.geteuid() != 0:
            raise Skip("needs root to mount the case's filesystems")
        if os.environ.get("IOSIG_E2E_NAMESPACE") != "1":
            # Again in a private mount namespace: the mounts vanish with it.
            env = dict(os.environ, IOSIG_E2E_NAMESPACE="1")
            p = subprocess.run(["unshare", "--mount", "--propagation", "private",
                                sys.executable] + sys.argv, env=env)
            sys.exit(p.returncode)
    work = tempfile.mkdtemp(prefix="iosig-e2e-", dir=opts.work)
    points = []
    try:
        obj = os.path.join(work, "case.o")
        flags = opts.cxxflags if cxx and opts.cxxflags is not None else opts.flags
        cmd = ([cc] + shlex.split(flags) + case["cflags"] + ["-I" + opts.include] +
               plugin_flags(opts, opts.compiler, case["iosig"]) + ["-c", path, "-o", obj])
        status, out, err = run(cmd, env=compiler_env())
        sys.stderr.write(err)
        if "internal compiler error" in err or status < 0 or status > 1:
            raise Failure("the compiler crashed (status %d): %s" % (status, " ".join(cmd)))
        check_diagnostics(path, case, err, COMPILERS[compiler_kind(opts.compiler)]["columns"])
        errors = case["compile_fail"] or any(e["kind"] == "error" for e in case["expect"])
        if errors != (status != 0):
            raise Failure("compiler exit status %d, but the case %s errors" %
                          (status, "expects" if errors else "expects no"))
        if case["run"] is None or errors:
            return
        if not runtime_ready(opts.libdir):
            raise Skip("libiosig in %s has no iosig_open yet: compiled and checked the "
                       "diagnostics, cannot link and run" % opts.libdir)
        exe = os.path.join(work, "case")
        # IOSIG_E2E_LDFLAGS: e.g. the sanitizers of an instrumented libiosig,
        # whose runtime comes with the compiler that built it: that one
        # links (IOSIG_E2E_LINK_CC / _CXX) whatever compiled the case.
        linker = os.environ.get("IOSIG_E2E_LINK_CXX" if cxx else "IOSIG_E2E_LINK_CC") or cc
        link = ([linker, obj, "-o", exe, "-L" + opts.libdir, "-liosig", "-Wl,-rpath," + opts.libdir] +
                shlex.split(os.environ.get("IOSIG_E2E_LDFLAGS", "")))
        status, out, err = run(link, env=compiler_env())
        if status != 0:
            raise Failure("link failed: %s\n%s" % (" ".join(link), err))
        tmp = os.path.join(work, "tmp")
        os.mkdir(tmp)
        places = {"tmp": tmp, "work": work, "src": os.path.dirname(path),
                  "iosig": opts.tool or "iosig"}
        env = dict(os.environ)
        # Decide and log, but leave files where the program puts them
        # unless the case says otherwise (env: IOSIG_DRYRUN=).
        env.update({"IOSIG_LOG": os.path.join(work, "log.jsonl"), "IOSIG_DRYRUN": "1"})
        if case["mounts"]:
            env["IOSIG_CONFIG"] = make_mounts(case, work, places, points)
        for k, v in case["env"].items():
            v = substitute(v, places)
            if v == "":
                env.pop(k, None)
            else:
                env[k] = v
        args = substitute(case["run"], places)
        status, out, err = run([exe] + args, env=env, cwd=work)
        sys.stdout.write(out)
        sys.stderr.write(err)
        if status != case["exit"]:
            raise Failure("the program exited with %d, expected %d" % (status, case["exit"]))
        if case["stdout"] and out.rstrip("\n").split("\n") != case["stdout"]:
            raise Failure("standard output differs: expected\n  %s" %
                          "\n  ".join(case["stdout"]))
        case["log"] = [(num, substitute(want, places)) for num, want in case["log"]]
        check_log(case, env["IOSIG_LOG"])
        for cmd in case["after"]:
            cmd = substitute(cmd, places)
            status, out, err = run(["sh", "-c", cmd], env=env, cwd=work)
            if status != 0:
                raise Failure("after the run, this failed (status %d): %s\n%s%s" %
                              (status, cmd, out, err))
    finally:
        for point in reversed(points):
            run(["umount", point])
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)


def cmd_identical(opts):
    """Each file compiles to byte-identical object code with and without the
    plugin, at every optimisation level given."""
    work = tempfile.mkdtemp(prefix="iosig-ident-", dir=opts.work)
    compared = 0
    try:
        for path in opts.files:
            cc = opts.cxx if path.endswith((".cc", ".cpp")) else opts.cc
            for level in opts.levels.split(","):
                flags = shlex.split(opts.flags) + shlex.split(level) + ["-I" + opts.include]
                outs = []
                for with_plugin in (False, True):
                    obj = os.path.join(work, "%d.o" % with_plugin)
                    cmd = [cc] + flags + (plugin_flags(opts, opts.compiler, [])
                                          if with_plugin else []) + ["-c", path, "-o", obj]
                    status, out, err = run(cmd, env=compiler_env())
                    if status != 0:
                        raise Failure("compile failed: %s\n%s" % (" ".join(cmd), err))
                    if with_plugin and err.strip():
                        raise Failure("the plugin printed something for a file without "
                                      "pragmas: %s\n%s" % (" ".join(cmd), err))
                    with open(obj, "rb") as f:
                        outs.append(f.read())
                if outs[0] != outs[1]:
                    raise Failure("%s %s: object code differs with the plugin" % (path, level))
                compared += 1
                print("identical: %s %s" % (os.path.basename(path), level))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not compared:
        raise Failure("nothing compared")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["case", "identical"])
    ap.add_argument("--compiler", required=True,
                    help="%s, or one of them with a version (clang-16)" % ", ".join(sorted(COMPILERS)))
    ap.add_argument("--cc", required=True, help="C compiler driver")
    ap.add_argument("--cxx", required=True, help="C++ compiler driver")
    ap.add_argument("--plugin", required=True, help="the iosig plugin")
    ap.add_argument("--libdir", default="", help="directory of libiosig.so")
    ap.add_argument("--include", required=True, help="directory of iosig.h")
    ap.add_argument("--tool", default=None, help="the iosig tool (for {iosig})")
    ap.add_argument("--flags", default="", help="flags of this variant")
    ap.add_argument("--cxxflags", default=None, help="flags of this variant for C++ "
                    "(default: --flags)")
    ap.add_argument("--levels", default="-O0,-O2", help="identical: flag sets to compare")
    ap.add_argument("--work", default=None, help="where temporary files go")
    ap.add_argument("--keep", action="store_true", help="keep the temporary files")
    ap.add_argument("files", nargs="+")
    opts = ap.parse_args()
    compiler_kind(opts.compiler)
    opts.file = opts.files[0]
    opts.libdir = os.path.abspath(opts.libdir) if opts.libdir else opts.libdir
    opts.plugin = os.path.abspath(opts.plugin)
    try:
        if opts.command == "case":
            cmd_case(opts)
        else:
            cmd_identical(opts)
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    except subprocess.TimeoutExpired as e:
        print("FAIL: timed out: %s" % " ".join(e.cmd))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
