#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_layout.py CHECK ARGS... - the dependency rules of the tree
(docs/design.md, "Where each part lives"), checked on what the build
produced and on the sources:

  needed FILE ALLOWED...   FILE's DT_NEEDED entries are all in ALLOWED
                           (shared-object names without their version, such
                           as libc.so or libyaml-0.so): the runtime that every
                           annotated program loads carries no tool's library.

Exit 0 = the rule holds, 1 = it does not (each offence on one line), 77 = a
tool the check needs (readelf) is missing.
"""
import re
import shutil
import subprocess
import sys


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def needed(path, allowed):
    if not shutil.which("readelf"):
        skip("readelf is not installed (binutils)")
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    libs = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    bad = [lib for lib in libs if re.sub(r"\.so(\.[0-9.]+)?$", ".so", lib) not in allowed]
    for lib in bad:
        print(f"{path}: needs {lib}, which is not one of {', '.join(allowed)}")
    if not libs:
        print(f"{path}: readelf lists no NEEDED entry at all")
        return 1
    print(f"{path}: needs {', '.join(libs)}")
    return 1 if bad else 0


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    if argv[1] == "needed" and len(argv) >= 4:
        return needed(argv[2], argv[3:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
