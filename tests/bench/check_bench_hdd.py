#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Smoke test of bench_hdd (not a timed test: it checks no figure against a
threshold).  Runs `bench_hdd ARGS...` and checks that its JSON is well
formed and complete: every mode (plain and each policy) with every figure,
the writers' calls counted, the device (the throttle's counters) having
taken the bytes the writers wrote, the daemon having done the I/O and each
policy's ratios to noop.  Exit 77 when the benchmark skips (its reason is
printed), 1 with what is missing otherwise.

  check_bench_hdd.py BENCH_HDD [ARGS...]
"""
import json
import math
import subprocess
import sys

POLICIES = ["noop", "deadline", "cfq", "bfq", "bid-hdd"]


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=540)
    if p.returncode == 77:
        print(p.stdout.strip())
        return 77
    problems = []

    def need(cond, what):
        if not cond:
            problems.append(what)
        return cond

    if p.returncode != 0:
        print("bench_hdd exited %d:\n%s%s" % (p.returncode, p.stdout, p.stderr))
        return 1
    try:
        r = json.loads(p.stdout)
    except ValueError as e:
        print("bench_hdd printed no JSON (%s):\n%s" % (e, p.stdout))
        return 1

    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    need(r.get("bench") == "hdd", "bench: hdd")
    dev, wl = r.get("device", {}), r.get("workload", {})
    for k in ("bps", "iops", "queue_depth"):
        need(number(dev.get(k)) and dev[k] > 0, "device.%s" % k)
    for k in ("bulk_writers", "bulk_MiB_each", "small_writers", "small_records_each", "rounds"):
        need(number(wl.get(k)) and wl[k] > 0, "workload.%s" % k)
    modes = {m.get("mode"): m for m in r.get("modes", [])}
    need(sorted(modes) == sorted(["plain"] + POLICIES), "modes: plain and %s (got %s)" % (POLICIES, sorted(modes)))
    for name, m in modes.items():
        need(m.get("through_daemon") == (name != "plain"), "%s: through_daemon" % name)
        need(number(m.get("makespan_s")) and m["makespan_s"] > 0, "%s: makespan_s" % name)
        for cls, keys in (("bulk", ("completion_mean_s", "completion_max_s", "write_mean_ms", "write_p99_ms")),
                          ("small", ("completion_mean_s", "completion_max_s", "write_fdatasync_mean_ms",
                                     "write_fdatasync_p99_ms"))):
            c = m.get(cls, {})
            for k in keys:
                need(number(c.get(k)) and c[k] >= 0, "%s: %s.%s" % (name, cls, k))
            need(c.get("completion_max_s", 0) <= m.get("makespan_s", 0) + 1e-6,
                 "%s: %s finished within the makespan" % (name, cls))
            # fdatasync returns when the record is on the (throttled) device.
            if cls == "small":
                need(c.get("write_fdatasync_mean_ms", 0) > 0, "%s: small writes took time" % name)
        io = m.get("device_io", {})
        need(number(io.get("writes")) and io["writes"] > 0, "%s: device_io.writes" % name)
        # The data reached the device through the throttled cgroup: all of
        # it (data the kernel's flusher wrote back outside the cgroup would
        # be missing here).
        need(number(io.get("write_MiB")) and number(io.get("written_MiB")) and
             io["write_MiB"] >= 0.95 * io["written_MiB"],
             "%s: the throttle saw the bytes written (%s)" % (name, io))
        if name != "plain":
            d = m.get("daemon", {})
            for k in ("requests", "commands", "expedited", "mean_latency_ms"):
                need(number(d.get(k)) and d[k] >= 0, "%s: daemon.%s" % (name, k))
            need(d.get("requests", 0) > 0 and d.get("commands", 0) > 0, "%s: the daemon did the I/O (%s)" % (name, d))
    vs = r.get("vs_noop", {})
    need(sorted(vs) == sorted(modes), "vs_noop: every mode")
    for name, v in vs.items():
        for k in ("makespan", "bulk_completion_mean", "bulk_write_mean", "bulk_write_p99",
                  "small_completion_mean", "small_write_mean", "small_write_p99", "device_writes"):
            need(number(v.get(k)) and v[k] > 0, "vs_noop.%s.%s" % (name, k))
        if name == "noop":
            need(all(abs(v.get(k, 0) - 1) < 1e-9 for k in v), "vs_noop.noop is 1 everywhere")
    if problems:
        print("bench_hdd's JSON is incomplete:\n  " + "\n  ".join(problems) + "\n" + p.stdout)
        return 1
    print(json.dumps({m: {"makespan_s": modes[m]["makespan_s"]} for m in modes}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
