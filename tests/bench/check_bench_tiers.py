#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Smoke test of bench_tiers (not a timed test: it checks no figure against
a threshold).  Runs `bench_tiers ARGS...` and checks that its JSON is well
formed and complete: every scenario with its modes and every figure, every
process's calls counted, the home device having taken the bytes, each
tiered mode having used its tier where the policy always does (bid-hybrid's
small writes, nvcache's cached writes; MIOS's counters of what it did),
nvcache's read-ahead having served the sequential readers of nvseq (read
hits, fills in the tier), and the ratios to each scenario's baseline.  Exit 77 when the benchmark skips (its
reason is printed), 1 with what is missing otherwise.

  check_bench_tiers.py BENCH_TIERS [ARGS...]
"""
import json
import math
import subprocess
import sys

MODES = {"bid": ["noop", "bid-hdd", "bid-hybrid"], "mios": ["noop", "mios-d", "mios-e", "mios-d+defer_close"],
         "miosq": ["noop", "mios-d", "mios-e", "mios-d+defer_close"],
         "nvcache": ["noop", "nvcache"], "nvseq": ["noop", "nvcache"],
         "useless": ["noop", "bid-hdd", "bid-hybrid", "nvcache"]}
# Where a tier must have been written (the tier's own count of bytes):
# bid-hybrid stages every small write, nvcache caches every write.  MIOS
# redirects a write only when its predictor says the HDD is in a fast
# buffered-write state, which a short run under load may never reach (seen:
# 0 redirected writes in a --quick run): its modes must report the counters
# that say what it did, not a redirection.
USES_TIER = {("bid", "bid-hybrid"), ("nvcache", "nvcache"), ("nvseq", "nvcache")}
MIOS_COUNTERS = ("redirected_writes", "padding_bytes")
# Where sequential readers must have started nvcache's read-ahead (path b):
# reads that hit, and fills the tier took (its own count, not the policy's).
READS_AHEAD = {("nvseq", "nvcache")}


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check(r, need):
    need(r.get("bench") == "tiers", "bench: tiers")
    scen = {s.get("scenario"): s for s in r.get("scenarios", [])}
    need(sorted(scen) == sorted(MODES), "scenarios %s (got %s)" % (sorted(MODES), sorted(scen)))
    for name, s in scen.items():
        if name == "miosq":
            need(s.get("slowssd_iops") == r.get("devices", {}).get("slowssd_iops", 0) // 4,
                 "miosq: the slowed SSD at a quarter of its IOPS (%s)" % s.get("slowssd_iops"))
        modes = {m.get("mode"): m for m in s.get("modes", [])}
        need(sorted(modes) == sorted(MODES.get(name, [])), "%s: modes %s" % (name, sorted(modes)))
        roles = [ro.get("role") for ro in s.get("roles", [])]
        need(roles, "%s: roles" % name)
        for pol, m in modes.items():
            where = "%s/%s" % (name, pol)
            need(number(m.get("makespan_s")) and m["makespan_s"] > 0, "%s: makespan_s" % where)
            for ro in s.get("roles", []):
                c = m.get(ro.get("role"), {})
                for k in ("completion_mean_s", "completion_first_s", "completion_last_s", "MiB_s_each", "call_mean_ms", "call_p99_ms"):
                    need(number(c.get(k)) and c[k] > 0, "%s: %s.%s" % (where, ro.get("role"), k))
                need(c.get("calls") == ro.get("MiB_each", 0) * 1048576 // ro.get("io_bytes", 1) * ro.get("processes"),
                     "%s: %s: every call counted" % (where, ro.get("role")))
            for k in ("home_written_MiB", "home_written_run_MiB", "home_throttled_run_MiB",
                      "tier_device_written_MiB", "tier_written_MiB", "tier_writeback_MiB", "tier_read_MiB",
                      "tier_fill_MiB", "tier_reads_elsewhere"):
                need(number(m.get(k)) and m[k] >= 0, "%s: %s" % (where, k))
            if "read" not in roles or len(roles) > 1:
                need(m.get("home_written_MiB", 0) > 0, "%s: the home device was written" % where)
            if (name, pol) in USES_TIER:
                need(m.get("tier_written_MiB", 0) > 0, "%s: the tier was written (%s)" % (where, m))
            if (name, pol) in READS_AHEAD:
                cn = m.get("counters", {})
                need(number(cn.get("read_hits")) and cn["read_hits"] > 0,
                     "%s: reads hit the read-ahead (%s)" % (where, cn))
                need(m.get("tier_fill_MiB", 0) > 0, "%s: the tier took the read-ahead's fills (%s)" % (where, m))
            if m.get("policy", "").startswith("mios-"):
                cn = m.get("counters", {})
                need(all(number(cn.get(k)) and cn[k] >= 0 for k in MIOS_COUNTERS),
                     "%s: MIOS's counters %s (%s)" % (where, ", ".join(MIOS_COUNTERS), cn))
            if m.get("tier") == "none":
                need(m.get("tier_written_MiB") == 0, "%s: no tier, nothing written to one" % where)
        vs = s.get("vs_baseline", {})
        need(vs.get("baseline") == "noop", "%s: baseline noop" % name)
        for pol in MODES.get(name, [])[1:]:
            v = vs.get(pol, {})
            need(number(v.get("makespan")) and v["makespan"] > 0, "%s: vs_baseline.%s.makespan" % (name, pol))
            for ro in roles:
                for k in ("call_mean", "call_p99", "throughput"):
                    key = "%s_%s" % (ro, k)
                    need(number(v.get(key)) and v[key] > 0, "%s: vs_baseline.%s.%s" % (name, pol, key))


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    if p.returncode == 77:
        print(p.stdout.strip())
        return 77
    if p.returncode != 0:
        print("bench_tiers exited %d:\n%s%s" % (p.returncode, p.stdout, p.stderr))
        return 1
    try:
        r = json.loads(p.stdout)
    except ValueError as e:
        print("bench_tiers printed no JSON (%s):\n%s" % (e, p.stdout))
        return 1
    problems = []
    check(r, lambda cond, what: cond or problems.append(what))
    if problems:
        print("bench_tiers's JSON is incomplete:\n  " + "\n  ".join(problems) + "\n" + p.stdout)
        return 1
    print(json.dumps({s["scenario"]: {m["mode"]: m["makespan_s"] for m in s["modes"]} for s in r["scenarios"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
