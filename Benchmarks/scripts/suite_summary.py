#!/usr/bin/env python3
"""Turns `swift package benchmark --format jmh --path stdout` output into a Markdown table.

The suite uses scalingFactor .kilo: one iteration = 1,000 operations, so per-operation values are
the per-iteration p50 divided by 1,000 (throughput multiplied by 1,000).
"""
import json
import sys

OPS_PER_ITERATION = 1000

txt = open(sys.argv[1]).read()
start = txt.find("[")
if start < 0:
    print("(package-benchmark produced no results)")
    sys.exit(0)
data = json.loads(txt[start:])
print("| benchmark | operations/s (from p50 wall clock) | p50 wall clock µs/op | p50 mallocs/op | iterations |")
print("|---|---:|---:|---:|---:|")
TO_US = {"ns": 1e-3, "μs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}
for e in sorted(data, key=lambda e: e["benchmark"]):
    name = e["benchmark"].split(".")[-1].replace("_", " ")
    sec = e.get("secondaryMetrics", {})
    wall = sec.get("Time (wall clock)")
    wall_us = wall["scorePercentiles"]["50.0"] * TO_US.get(wall["scoreUnit"], 1.0) / OPS_PER_ITERATION if wall else None

    def p50(key, scale=1.0):
        m = sec.get(key)
        if not m:
            return "—"
        return f"{m['scorePercentiles']['50.0'] * scale / OPS_PER_ITERATION:,.2f}"

    thr = f"{1e6 / wall_us:,.0f}" if wall_us else "—"
    wall_text = f"{wall_us:,.2f}" if wall_us else "—"
    print(f"| {name} | {thr} | {wall_text} | {p50('Malloc (total)')} | {e.get('measurementIterations', '?')} |")
