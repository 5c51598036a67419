#!/usr/bin/env python3
"""UDP offload: sending in batches (C send, sendmmsg, UDP_SEGMENT; NIO batched writes; Network
batch { }) to the C server's UDP sink, and receiving a UDP_SEGMENT flood (C recvmmsg with and
without UDP_GRO, NIO with vector reads, Network's NWListener and NWConnection), pinned and
unpinned. Writes the section "UDP offload: batch with GSO, receive with GRO" of RESULTS.md
(replacing only that section) and the raw samples as JSON.

Called by udp-offload.sh, which builds everything first; see README.md.
"""
import argparse
import datetime
import json
import os
import platform
import select
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import udp_stats  # noqa: E402  (the sink's datagram count, as bench.py reads it)

from results_section import write_section  # noqa: E402

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = "## UDP offload: batch with GSO, receive with GRO"
SIZE = 1200
GROUP = 64
# Datagrams per UDP_SEGMENT send, as the C programs count them (segments_per_send in C/common.h).
SEGMENTS = min(64, 65507 // SIZE)
# The flood goes on this long after its own window, so that a receiver whose clock started at its
# first datagram (a little after the flood's) still has datagrams until the end of its window.
FLOOD_TAIL = 0.5

C = os.path.join(HERE, ".build/c")
NIO = os.path.join(HERE, ".build/release/nio-bench")
NW = os.path.join(HERE, ".build/release/nw-bench")

# (key, label, command without the common options)
SENDERS = [
    ("c-send", "C, `send()` one by one", [f"{C}/client_blocking", "udp", "--batched", "0"]),
    ("c-sendmmsg", "C, `sendmmsg` of 64", [f"{C}/client_blocking", "udp", "--batched", "1"]),
    ("c-gso", f"C, `sendmsg` + `UDP_SEGMENT` ({SEGMENTS} + {GROUP - SEGMENTS} per {GROUP})", [f"{C}/client_blocking", "udp", "--batched", "2"]),
    ("nio", "SwiftNIO, 64 × `write` + `flush`", [NIO, "udp", "--batched", "1"]),
    ("network", "Network, 64 × `send` in `batch { }`", [NW, "udp", "--batched", "1"]),
]
RECEIVERS = [
    ("c-recvmmsg", "C, blocking `recvmmsg` of 64", [f"{C}/udp_recv", "--gro", "0"]),
    ("c-recvmmsg-gro", "C, blocking `recvmmsg` of 64 + `UDP_GRO`", [f"{C}/udp_recv", "--gro", "1"]),
    ("nio", "SwiftNIO, `DatagramBootstrap`, vector reads of 64", [NIO, "udp-recv"]),
    ("network-listener", "Network, `NWListener` + `receiveMessage` loop", [NW, "udp-recv", "--mode", "listener"]),
    ("network-connection", "Network, one `NWConnection` (local endpoint required) + `receiveMessage` loop",
     [NW, "udp-recv", "--mode", "connection"]),
]
# (side, the sink's --udp-gro): the sink without and with UDP_GRO.
SEND_SIDES = [("send", "0"), ("send-gro", "1")]
SEND_KEYS = [side for side, _ in SEND_SIDES]
SINK_TEXT = {
    "send": "the UDP sink of `C/server.c` (PORT+200), which takes datagrams one by one (`recvmmsg` of 64): "
            "for it the kernel cuts a `UDP_SEGMENT` send back into datagrams on the way, at the sender's cost",
    "send-gro": "the same sink with `UDP_GRO` on (`server --udp-gro 1`), as a QUIC server's socket has it: a "
                "`UDP_SEGMENT` send reaches it whole, one message of up to 64 KiB, which it counts as the datagrams "
                "it carries",
}
SINK_SHORT = {"send": "", "send-gro": ", to a sink with UDP_GRO"}
PIN = {"same": ["taskset", "-c", "0"], "none": []}
PIN_SHORT = {"same": "pinned", "none": "unpinned"}
PLACEMENT_TEXT = {"same": "**pinned**, every process of a measurement (server, client, flood, receiver) on CPU 0 "
                          "(`taskset -c 0`)",
                  "none": "**unpinned**, no `taskset`"}


def is_network(key):
    return key.startswith("network")


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line")


def run_sender(a, pin, key, cmd):
    argv = PIN[pin] + cmd + ["--size", str(SIZE), "--batch", str(GROUP), "--duration", str(a.duration),
                             "--warmup", str(a.warmup), "--port", str(a.port), "--name", f"udp{SIZE}-{key}"]
    before = udp_stats(a.port)
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=a.warmup + a.duration + 60)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    try:
        r = last_json(p.stdout)
    except ValueError:
        return None, f"no JSON: {p.stdout[-200:]} {p.stderr[-200:]}"
    time.sleep(0.2)  # what is still in the sink's socket buffer
    after = udp_stats(a.port)
    if before is not None and after is not None:
        r["sink_received"] = after - before
    return r, None


def read_line(stream, timeout):
    """One line from a child's unbuffered stdout, or None after `timeout` seconds."""
    line, deadline = b"", time.monotonic() + timeout
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            return None
        chunk = os.read(stream.fileno(), 1)
        if not chunk:
            return None
        line += chunk
    return line.decode().strip()


def run_receiver(a, pin, key, cmd):
    """Starts the receiver, waits for its "ready", floods it, returns (receiver result with the
    sender's result inside, error)."""
    argv = PIN[pin] + cmd + ["--duration", str(a.duration), "--warmup", str(a.warmup), "--port", str(a.port),
                             "--name", f"udp{SIZE}-recv-{key}"]
    receiver = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    try:
        if read_line(receiver.stdout, 20) != "ready":
            receiver.kill()
            _, err = receiver.communicate()
            return None, f"receiver not ready: {err.decode(errors='replace').strip()[-300:]}"
        flood = subprocess.Popen(PIN[pin] + [f"{C}/udp_flood", "--port", str(a.port), "--bind-port", str(a.port + 1),
                                             "--size", str(SIZE), "--duration", str(a.duration), "--warmup",
                                             str(a.warmup), "--tail", str(FLOOD_TAIL)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        limit = a.warmup + a.duration + 60
        try:
            out, err = receiver.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            receiver.kill()
            flood.kill()
            flood.communicate()
            return None, "receiver timeout"
        fout, ferr = flood.communicate(timeout=limit)
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.wait()
    if receiver.returncode != 0:
        return None, f"receiver exit {receiver.returncode}: {err.decode(errors='replace').strip()[-300:]}"
    if flood.returncode != 0:
        return None, f"flood exit {flood.returncode}: {ferr.decode(errors='replace').strip()[-300:]}"
    try:
        r = last_json(out.decode())
        r["sender"] = last_json(fout.decode())
    except ValueError:
        return None, f"no JSON: {out[-200:]!r} {fout[-200:]!r}"
    return r, None


def measure(a, pin, senders, receivers, started):
    """Both sides with one placement: {("send"|"recv", key): [results]}, and the errors alike."""
    results, errors = {}, {}

    def record(side, key, rep, r, err):
        tag = f"[{time.time() - started:6.1f}s] {PIN_SHORT[pin]:8s} {side} {key:18s} rep {rep + 1}/{a.reps}: "
        if r is None:
            errors.setdefault((side, key), []).append(err)
            print(tag + "FAILED " + err, flush=True)
        else:
            r["placement"], r["side"], r["key"] = pin, side, key
            results.setdefault((side, key), []).append(r)
            extra = ""
            if side in SEND_KEYS and r.get("sink_received") is not None and r.get("sent_total"):
                extra = f" ({r['sink_received'] / r['sent_total'] * 100:.0f} % delivered)"
            if side == "recv" and r["sender"].get("value"):
                extra = f" (sender {r['sender']['value']:,.0f} dgrams/s)"
            print(tag + f"{r['value']:,.0f} {r['unit']}{extra}", flush=True)

    # The senders twice: to a sink that takes datagrams one by one (the kernel cuts a UDP_SEGMENT
    # send back into datagrams on the way, at the sender's cost), and to one with UDP_GRO on, which
    # takes a segmented send whole, as a QUIC server's socket does.
    for side, gro in SEND_SIDES:
        server = subprocess.Popen(PIN[pin] + [f"{C}/server", "--port", str(a.port), "--nports", "1", "--udp-gro", gro],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if server.stdout.readline().strip() != "ready":
            sys.exit("server did not start: " + server.stderr.read())
        try:
            for rep in range(a.reps):
                for key, _, cmd in senders:  # interleaved, so drift hits all alike
                    record(side, key, rep, *run_sender(a, pin, key, cmd))
                    time.sleep(0.3)
        finally:
            server.terminate()
            server.wait()
    for rep in range(a.reps):
        for key, _, cmd in receivers:
            record("recv", key, rep, *run_receiver(a, pin, key, cmd))
            time.sleep(0.3)
    return results, errors


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def median_value(results, side, key):
    return median([r["value"] for r in results.get((side, key), [])])


def ratio(x, y):
    return x / y if x is not None and y else None


def cpu_per_op(rs):
    return median([(r["cpu_user"] + r["cpu_sys"]) / r["ops"] * 1e6 for r in rs if r.get("ops")])


def fmt_n(v):
    return f"{v:,.0f}" if v is not None else "—"


def fmt_x(v):
    return f"{v:.2f}×" if v is not None else "—"


def why_missing(a, side, key, errors):
    if (side, key) in errors:
        return "failed: " + errors[(side, key)][0].replace("|", "/").replace("\n", " ")[:160]
    if is_network(key) and a.network_missing:
        return f"not measured ({a.network_missing})"
    return "not measured"


def send_table(a, pin, results, errors, side):
    out = [f"### Send side, {PIN_SHORT[pin]}{SINK_SHORT[side]}\n",
           f"{SIZE}-byte datagrams in groups of {GROUP} to {SINK_TEXT[side]}; the next group "
           "starts when the previous one has been handed to the kernel. Client commands: `client_blocking udp "
           f"--size {SIZE} --batch {GROUP} --batched 0|1|2`, `nio-bench|nw-bench udp --size {SIZE} --batch {GROUP} "
           "--batched 1`.\n",
           "| implementation | median dgrams/s sent | min–max | client CPU µs/dgram | delivered to sink |",
           "|---|---:|---:|---:|---:|"]
    for key, label, _ in SENDERS:
        rs = results.get((side, key))
        if not rs:
            out.append(f"| {label} | {why_missing(a, side, key, errors)} | | | |")
            continue
        vals = sorted(r["value"] for r in rs)
        delivered = median([r["sink_received"] / r["sent_total"] for r in rs
                            if r.get("sink_received") is not None and r.get("sent_total")])
        out.append(f"| {label} | {fmt_n(statistics.median(vals))} | {fmt_n(vals[0])}–{fmt_n(vals[-1])} "
                   f"| {cpu_per_op(rs):.3f} | {f'{delivered * 100:.0f} %' if delivered is not None else '—'} |")
    nw, nio = median_value(results, side, "network"), median_value(results, side, "nio")
    c_send, c_gso = median_value(results, side, "c-send"), median_value(results, side, "c-gso")
    c_mmsg = median_value(results, side, "c-sendmmsg")
    out.append("")
    out.append(f"Ratios (of medians): Network batch / C send() = {fmt_x(ratio(nw, c_send))}; Network batch / NIO "
               f"batched = {fmt_x(ratio(nw, nio))}; Network batch / C UDP_SEGMENT = {fmt_x(ratio(nw, c_gso))}; "
               f"C UDP_SEGMENT / C send() = {fmt_x(ratio(c_gso, c_send))}; C sendmmsg / C send() = "
               f"{fmt_x(ratio(c_mmsg, c_send))}.\n")
    return out


def recv_table(a, pin, results, errors):
    out = [f"### Receive side, {PIN_SHORT[pin]}\n",
           f"`C/udp_flood.c` floods {SIZE}-byte datagrams from 127.0.0.1:PORT+1 to 127.0.0.1:PORT, "
           f"{SIZE * SEGMENTS:,} bytes ({SEGMENTS} datagrams) per `sendmsg` with `UDP_SEGMENT`, started once the receiver "
           "said it is bound. Each receiver counts from its first datagram + warm-up for the measured window. "
           "\"Sent\" is the flood's own rate over its window; received / sent compares the two rates.\n",
           "| receiver | median dgrams/s received | min–max | receiver CPU µs/dgram | flood sent dgrams/s | received / sent |",
           "|---|---:|---:|---:|---:|---:|"]
    for key, label, _ in RECEIVERS:
        rs = results.get(("recv", key))
        if not rs:
            out.append(f"| {label} | {why_missing(a, 'recv', key, errors)} | | | | |")
            continue
        vals = sorted(r["value"] for r in rs)
        sent = median([r["sender"]["value"] for r in rs])
        share = median([r["value"] / r["sender"]["value"] for r in rs if r["sender"].get("value")])
        out.append(f"| {label} | {fmt_n(statistics.median(vals))} | {fmt_n(vals[0])}–{fmt_n(vals[-1])} "
                   f"| {cpu_per_op(rs):.3f} | {fmt_n(sent)} | {f'{share * 100:.0f} %' if share is not None else '—'} |")
    c = median_value(results, "recv", "c-recvmmsg")
    c_gro = median_value(results, "recv", "c-recvmmsg-gro")
    nio = median_value(results, "recv", "nio")
    nl, nc = median_value(results, "recv", "network-listener"), median_value(results, "recv", "network-connection")
    out.append("")
    out.append(f"Ratios (of medians): Network listener / C recvmmsg = {fmt_x(ratio(nl, c))}; Network listener / "
               f"NIO = {fmt_x(ratio(nl, nio))}; Network connection / C recvmmsg = {fmt_x(ratio(nc, c))}; Network "
               f"connection / NIO = {fmt_x(ratio(nc, nio))}; C with UDP_GRO / C recvmmsg = {fmt_x(ratio(c_gro, c))}.\n")
    return out


def targets(by_pin):
    rows = []
    for pin, (results, _) in by_pin.items():
        where = PIN_SHORT[pin]
        for side in reversed(SEND_KEYS):  # the sink with UDP_GRO first: the targets are measured there
            sink = " (sink with UDP_GRO)" if side == "send-gro" else " (sink without UDP_GRO: context)"
            nw = median_value(results, side, "network")
            c_send = median_value(results, side, "c-send")
            counted = side == "send-gro"
            rows.append((f"Send, {where}{sink}: Network `batch {{ }}` ≥ 5 × C `send()` one by one", ratio(nw, c_send),
                         5.0 if counted else None))
            rows.append((f"Send, {where}{sink}: Network `batch {{ }}` ≥ 1.5 × NIO batched writes",
                         ratio(nw, median_value(results, side, "nio")), 1.5 if counted else None))
            rows.append((f"Send, {where}{sink}: C `UDP_SEGMENT` / C `send()` (context, no target)",
                         ratio(median_value(results, side, "c-gso"), c_send), None))
    out = ["### Targets\n", "| target | measured | met? |", "|---|---:|---|"]
    for label, v, goal in rows:
        if v is None:
            out.append(f"| {label} | not yet measured | — |")
        elif goal is None:
            out.append(f"| {label} | {fmt_x(v)} | — |")
        else:
            out.append(f"| {label} | {fmt_x(v)} | {'met' if v >= goal else '**not met**'} |")
    out.append("")
    return out


def write_results(a, by_pin, total):
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True)
    swift_line = next((l for l in (swift.stdout + swift.stderr).splitlines() if "Swift version" in l), "?").strip()
    nio_version = "?"
    try:
        for p in json.load(open(os.path.join(HERE, "Package.resolved")))["pins"]:
            if p["identity"] == "swift-nio":
                nio_version = p["state"].get("version", "?")
    except (OSError, ValueError, KeyError):
        pass
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    placements = "; ".join(PLACEMENT_TEXT[p] for p in by_pin)
    lines = [
        SECTION,
        "",
        f"- Date: {now}; command: `{a.command}`; Network package at `{a.revision}`; {os.cpu_count()} CPUs, kernel "
        f"{platform.release()}; {swift_line}; swift-nio {nio_version}; gcc -O2. Total measuring time {total:.0f} s.",
        f"- {SIZE}-byte datagrams over 127.0.0.1 only. Placements: {placements}. Each measurement: {a.warmup:g} s "
        f"warm-up + {a.duration:g} s measured, {a.reps} repetition{'s' if a.reps != 1 else ''} per placement, "
        "implementations interleaved; medians (min–max). CPU = user+sys CPU time of the measured process "
        "(client or receiver) over its window, per datagram.",
        "- Every receiver's socket keeps the system's default receive buffer (net.core.rmem_default "
        f"= {rmem_default()} bytes here); the server's sink asks for 4 MiB, as in the other UDP scenarios.",
        "",
    ]
    lines += targets(by_pin)
    for side in reversed(SEND_KEYS):
        for pin, (results, errors) in by_pin.items():
            lines += send_table(a, pin, results, errors, side)
    for pin, (results, errors) in by_pin.items():
        lines += recv_table(a, pin, results, errors)
    section = "\n".join(lines).rstrip("\n") + "\n"

    write_section(a.results, SECTION, section)


def rmem_default():
    try:
        return open("/proc/sys/net/core/rmem_default").read().strip()
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--port", type=int, default=19000)
    ap.add_argument("--pin", choices=["both", "same", "none"], default="both")
    ap.add_argument("--network-missing", default="", help="why the Network client was not built")
    ap.add_argument("--command", default="bash Benchmarks/udp-offload.sh")
    ap.add_argument("--revision", default="?")
    ap.add_argument("--results", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--json", default=os.path.join(HERE, "udp-offload.json"))
    ap.add_argument("--from-json", action="store_true",
                    help="measure nothing: write the section again from --json (what an earlier run measured)")
    a = ap.parse_args()

    if a.from_json:
        saved = json.load(open(a.json))
        for k in ("command", "revision", "duration", "warmup", "reps"):
            setattr(a, k, saved[k])
        by_pin = {}
        for r in saved["results"]:
            by_pin.setdefault(r["placement"], ({}, {}))[0].setdefault((r["side"], r["key"]), []).append(r)
        for e in saved["errors"]:
            by_pin.setdefault(e["placement"], ({}, {}))[1][(e["side"], e["key"])] = e["errors"]
        write_results(a, by_pin, saved.get("total", 0))
        print(f"wrote the UDP offload section of {a.results} from {a.json}")
        return

    senders = [s for s in SENDERS if not (is_network(s[0]) and a.network_missing)]
    receivers = [r for r in RECEIVERS if not (is_network(r[0]) and a.network_missing)]
    started = time.time()
    by_pin = {}
    for pin in (["same", "none"] if a.pin == "both" else [a.pin]):
        by_pin[pin] = measure(a, pin, senders, receivers, started)
    total = time.time() - started

    with open(a.json, "w") as f:
        json.dump({"command": a.command, "revision": a.revision, "size": SIZE, "duration": a.duration,
                   "warmup": a.warmup, "reps": a.reps, "total": total,
                   "results": [r for results, _ in by_pin.values() for rs in results.values() for r in rs],
                   "errors": [{"placement": pin, "side": side, "key": key, "errors": errs}
                              for pin, (_, errors) in by_pin.items() for (side, key), errs in errors.items()]},
                  f, indent=1)
        f.write("\n")
    write_results(a, by_pin, total)

    for pin, (results, _) in by_pin.items():
        for side in reversed(SEND_KEYS):
            nw = median_value(results, side, "network")
            c_send = median_value(results, side, "c-send")
            print(f"{PIN_SHORT[pin]}{SINK_SHORT[side]}: Network batch / C send() = {fmt_x(ratio(nw, c_send))} (target ≥ 5×), "
                  f"Network batch / NIO batched = {fmt_x(ratio(nw, median_value(results, side, 'nio')))} (target ≥ 1.5×), "
                  f"C UDP_SEGMENT / C send() = {fmt_x(ratio(median_value(results, side, 'c-gso'), c_send))}", flush=True)
        print(f"{PIN_SHORT[pin]}: receive: Network listener / C recvmmsg = "
              f"{fmt_x(ratio(median_value(results, 'recv', 'network-listener'), median_value(results, 'recv', 'c-recvmmsg')))}, "
              f"Network listener / NIO = "
              f"{fmt_x(ratio(median_value(results, 'recv', 'network-listener'), median_value(results, 'recv', 'nio')))}",
              flush=True)
    print(f"wrote the UDP offload section of {a.results} and {a.json} ({total:.0f} s of measurements)")


if __name__ == "__main__":
    main()
