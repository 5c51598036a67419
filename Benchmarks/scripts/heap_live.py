#!/usr/bin/env python3
"""Live heap at exit, by allocation site, from a perf recording of malloc/free uprobes.

Used by scripts/profile.sh mem: perf records probe_libc:malloc (size, call chain),
probe_libc:malloc_ret__return (pointer) and probe_libc:free (pointer); this script pairs them and
prints the allocations still live when the process exits, grouped by their first three frames
above swift_allocObject / swift_slowAlloc, divided by the connection count.
usage: heap_live.py perf.data CONNECTIONS | swift demangle --simplified
"""
import sys, re, collections, subprocess
conns = int(sys.argv[2])
p = subprocess.Popen(["perf", "script", "-i", sys.argv[1], "-F", "tid,event,trace,ip,sym"], stdout=subprocess.PIPE, text=True, bufsize=1<<20)
pending = {}
live = {}
cur = None
def flush(ev):
    if ev is None: return
    tid, name, trace, stack = ev
    if name.startswith("probe_libc:malloc_ret"):
        m = re.search(r"arg1=0x([0-9a-f]+)", trace)
        if m and tid in pending:
            size, st = pending.pop(tid)
            live[int(m.group(1), 16)] = (size, st)
    elif name.startswith("probe_libc:malloc"):
        m = re.search(r"size=(\d+)", trace)
        pending[tid] = (int(m.group(1)), tuple(stack))
    elif name.startswith("probe_libc:free"):
        m = re.search(r"ptr=(\d+)", trace)
        if m: live.pop(int(m.group(1)), None)
for line in p.stdout:
    if not line.strip():
        continue
    if re.match(r"^\s*\d+\s+probe_libc:", line):
        flush(cur)
        parts = line.split(None, 2)
        tid = parts[0]; name = parts[1].rstrip(":"); trace = parts[2] if len(parts) > 2 else ""
        cur = (tid, name, trace, [])
    else:
        f = line.strip().split(None, 1)
        if len(f) == 2 and cur is not None: cur[3].append(f[1].split("+0x")[0])
flush(cur)
def interesting(sym):
    return any(k in sym for k in ("11NetworkCore", "7Network", "9NWClients", "8NIOPosix", "7NIOCore", "12BenchSupport", "10NIOClients", "Dispatch", "dispatch_"))
agg = collections.defaultdict(lambda: [0, 0])
total = 0
for ptr, (size, st) in live.items():
    frames = [s for s in st if s not in ("malloc",) and "swift_slowAlloc" not in s and "swift_allocObject" not in s]
    key = " < ".join(frames[:3]) if frames else "?"
    agg[key][0] += size; agg[key][1] += 1; total += size
print(f"live malloc bytes at exit: {total:,} = {total/conns:,.0f} per connection ({len(live):,} blocks)")
for key, (b, n) in sorted(agg.items(), key=lambda kv: -kv[1][0])[:25]:
    print(f"{b/conns:8.0f} B/conn {n/conns:6.2f} blocks/conn  {key[:300]}")
