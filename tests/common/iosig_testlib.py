# SPDX-License-Identifier: MIT
"""What the Python tests of real programs share (tests/links,
tests/debian): checks and skips, catalog configurations that leave out
every other mount, and a private mount namespace.

Exit 77 = skipped, with the reason printed.
"""
import os
import shutil
import subprocess
import sys

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


def write_config(path, mounts):
    """A catalog configuration that leaves out every mount but `mounts`
    (a list of (mount point, data dir, [setting lines]))."""
    lines = ["version: 1", "mounts:"]
    pat = ""
    for _ in range(12):
        pat += "/*"
        lines.append('  "%s": { ignore: true }' % pat)
    lines.append('  "/": { ignore: true }')
    for mnt, ddir, settings in mounts:
        lines.append('  "%s":' % mnt)
        lines.append("    ignore: false")
        lines.append('    data_dir: "%s"' % ddir)
        for s in settings:
            lines.append("    " + s)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


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
