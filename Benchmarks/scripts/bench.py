#!/usr/bin/env python3
"""Runs every implementation x scenario against the one C server and writes RESULTS.md.

Called by run.sh (which builds everything first); see README.md for the method.
Each measurement is one CLI invocation that prints one JSON line:
  {"impl":"nio","scenario":"rr1","value":12345,"unit":"ops/s",...}
"""
import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

IMPL_LABEL = {
    "c-blocking": "C, blocking sockets",
    "c-epoll": "C, epoll",
    "c-openssl": "C, OpenSSL (blocking sockets)",
    "c-s_time": "C, `openssl s_time -new`",
    "nio": "SwiftNIO",
    "python-websockets": "python `websockets` (asyncio)",
    "python-aioquic": "python `aioquic` 1.7.2 (asyncio)",
    "nio-hop": "NIO event loop + Dispatch queue",
    "network": "Network (this package)",
    "nio-async": "SwiftNIO `NIOAsyncChannel`",
    "network-async": "Network, 2025 API (`NetworkConnection`)",
    "nio-loop-task": "SwiftNIO + a task on the loop (floor of any async API)",
}

# Implementations that are another binary's `--api …` form: (binary, api).
ASYNC_IMPLS = {"nio-async": ("nio", "async"), "network-async": ("network", "async"), "nio-loop-task": ("nio", "loop-task")}

TLS_SCENARIOS = ("tls-bulk", "tls-handshake")
QUIC_SCENARIOS = ("quic-bulk", "quic-handshake")
# The QUIC sink (`nw-bench quic-server`) listens here (relative to --port).
QUIC_PORT_OFFSET = 500


def scenarios(a):
    d, w = str(a.duration), str(a.warmup)
    timed = ["--duration", d, "--warmup", w]
    s = [
        ("rr1", "64-byte request/response round trips, 1 TCP connection", "ops/s", "higher",
         ["rr", "--conns", "1"] + timed, ["c-blocking", "c-epoll", "nio", "network", "nio-async", "network-async", "nio-loop-task"]),
        ("rr100", "64-byte request/response round trips, 100 TCP connections (one request in flight each)", "ops/s", "higher",
         ["rr", "--conns", "100", "--nports", "10"] + timed, ["c-blocking", "c-epoll", "nio", "network", "nio-async", "network-async", "nio-loop-task"]),
        ("bulk", f"bulk TCP, 64 KiB writes, one direction, {a.duration:g} s, counted by the sink", "MiB/s", "higher",
         ["bulk", "--size", "65536", "--duration", d], ["c-blocking", "c-epoll", "nio", "network", "nio-async", "network-async"]),
    ]
    for size in a.udp_sizes:
        s.append((f"udp{size}-single", f"UDP {size}-byte datagrams sent one by one (groups of 64)", "dgrams/s", "higher",
                  ["udp", "--size", str(size), "--batch", "64", "--batched", "0"] + timed,
                  ["c-blocking", "nio", "network", "nio-async", "network-async"]))
        s.append((f"udp{size}-batch", f"UDP {size}-byte datagrams sent in batches of 64 (C sendmmsg; NIO write x64 + flush; Network batch {{ }})",
                  "dgrams/s", "higher",
                  ["udp", "--size", str(size), "--batch", "64", "--batched", "1"] + timed, ["c-blocking", "nio", "network"]))
    s.append(("tls-bulk", f"bulk TLS 1.3 (AES-128-GCM), 64 KiB writes, one direction, {a.duration:g} s, counted by the TLS sink",
              "MiB/s", "higher", ["tls-bulk", "--size", "65536", "--duration", d], ["c-openssl", "nio", "network"]))
    s.append(("tls-handshake", "sequential TLS 1.3 handshakes (new TCP connection + full handshake, X25519 + ECDSA P-256, then close)",
              "handshakes/s", "higher", ["tls-handshake"] + timed, ["c-openssl", "c-s_time", "nio", "network"]))
    s.append(("quic-bulk", f"bulk over one QUIC stream (TLS 1.3 inside, ALPN \"bench\"), 64 KiB writes, one direction, {a.duration:g} s, "
              "then the stream's FIN; counted by the QUIC sink (`nw-bench quic-server`: an NWListener of ours, the same "
              "for every client), which answers with its count",
              "MiB/s", "higher", ["quic-bulk", "--size", "65536", "--duration", d], ["network", "python-aioquic"]))
    s.append(("quic-handshake", "sequential QUIC handshakes against the QUIC sink (new connection, full TLS 1.3 "
              "handshake, then close without waiting for the closing period)",
              "handshakes/s", "higher", ["quic-handshake"] + timed, ["network", "python-aioquic"]))
    s.append(("framed", "framed messages (4-byte type + 4-byte length + 64-byte payload) echoed back, 1 TCP connection, "
              "16 in flight (Network: an NWProtocolFramer, 16 receives pending; Network, 2025 API: the same framer as "
              "`Framer<T>` in `withNetworkConnection`, one task that answers each message it receives; NIO: a "
              "ByteToMessageDecoder / MessageToByteEncoder pair, answers flushed once per read)",
              "msgs/s", "higher", ["framed", "--size", "64", "--window", "16", "--batched", "1"] + timed,
              ["nio", "network", "network-async"]))
    s.append(("ws", "WebSocket binary messages (64-byte payload) echoed by a NIOWebSocket server (`nio-bench ws-server`, "
              "the same for every client), 1 connection, 16 in flight (Network: NWProtocolWebSocket, 16 receives "
              "pending; Network, 2025 API: a `WebSocket` block in `withNetworkConnection`, one task that answers each "
              "message it receives; NIO: NIOWebSocket's client upgrader and frame codec, answers flushed once per read; "
              "python: `websockets` asyncio client, no compression)",
              "msgs/s", "higher", ["ws", "--size", "64", "--window", "16"] + timed,
              ["nio", "network", "network-async", "python-websockets"]))
    s.append(("hop", "event loop → Dispatch queue → event loop, no I/O (one op = one round: the hop Apple's contract "
              "forces plus the hop back that a send from a callback makes)",
              "rounds/s", "higher", ["hop"] + timed, ["nio"]))
    s.append(("mem", f"resident memory per idle TCP connection, {a.mem_conns} connections", "B/conn", "lower",
              ["mem", "--conns", str(a.mem_conns), "--nports", "10"], ["c-blocking", "c-epoll", "nio", "network"]))
    return s


# The WebSocket scenario's echo server listens here (relative to --port).
WS_PORT_OFFSET = 400


def command(impl):
    """How to run one implementation's client."""
    # scripts/install-deps.sh installs the python peers for Debian's python, which need not be the
    # python3 first on PATH (a pyenv one, say).
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    if impl == "python-websockets":
        return [python, os.path.join(HERE, "scripts/ws_client.py")]
    if impl == "python-aioquic":
        return [python, os.path.join(HERE, "scripts/aioquic_client.py")]
    if impl in ASYNC_IMPLS:
        return [binary(ASYNC_IMPLS[impl][0])]
    return [binary(impl)]


def binary(impl):
    return {
        "c-blocking": os.path.join(HERE, ".build/c/client_blocking"),
        "c-epoll": os.path.join(HERE, ".build/c/client_epoll"),
        "c-openssl": os.path.join(HERE, ".build/c/tls_client"),
        "nio": os.path.join(HERE, ".build/release/nio-bench"),
        "network": os.path.join(HERE, ".build/release/nw-bench"),
    }[impl]


def udp_stats(port):
    try:
        with socket.create_connection(("127.0.0.1", port + 201), timeout=2) as s:
            line = s.makefile().readline().split()
            return int(line[1])
    except OSError:
        return None


def tls_stats(port):
    """The TLS server's counters: (handshakes, application bytes)."""
    try:
        with socket.create_connection(("127.0.0.1", port + 301), timeout=2) as s:
            f = s.makefile().readline().split()
            return int(f[1]), int(f[3])
    except (OSError, IndexError, ValueError):
        return None


def make_certificate():
    """A throwaway ECDSA P-256 certificate for the TLS server, in a new temporary directory."""
    d = tempfile.mkdtemp(prefix="netbench-tls.")
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return d, cert, key


def run_s_time(a, client_pin):
    """`openssl s_time -new` against the TLS server: connections per wall-clock second of the whole
    process (its own timer has 1 s resolution and its rate is per user-CPU second)."""
    seconds = max(1, round(a.duration))
    cmd = client_pin + ["openssl", "s_time", "-connect", f"127.0.0.1:{a.port + 300}", "-new", "-time", str(seconds)]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {a.timeout} s"
    wall = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r"(\d+) connections in [\d.]+s;", p.stdout)
    if p.returncode != 0 or not m:
        return None, f"exit {p.returncode}: {(p.stdout + p.stderr).strip()[-300:]}"
    n = int(m.group(1))
    return {"impl": "c-s_time", "scenario": "tls-handshake", "value": n / wall, "unit": "handshakes/s", "ops": n,
            "seconds": wall, "cpu_user": ru1.ru_utime - ru0.ru_utime, "cpu_sys": ru1.ru_stime - ru0.ru_stime,
            "handshakes_total": n}, None


def run_one(a, impl, name, args, client_pin):
    if name in TLS_SCENARIOS:
        before_tls = tls_stats(a.port)
        if impl == "c-s_time":
            r, err = run_s_time(a, client_pin)
        else:
            if impl == "c-openssl":
                args = [args[0][len("tls-"):]] + args[1:]  # tls_client bulk|handshake
            r, err = run_cli(a, impl, name, args, client_pin)
        if r is not None and before_tls is not None:
            time.sleep(0.2)
            after_tls = tls_stats(a.port)
            if after_tls is not None:
                r["server_handshakes"] = after_tls[0] - before_tls[0]
                r["server_bytes"] = after_tls[1] - before_tls[1]
        return r, err
    port = a.port + WS_PORT_OFFSET if name == "ws" else a.port
    return run_cli(a, impl, name, args, client_pin, port)


def run_cli(a, impl, name, args, client_pin, port=None):
    cmd = client_pin + command(impl) + args + ["--port", str(port or a.port), "--name", name]
    if impl in ASYNC_IMPLS:
        cmd += ["--api", ASYNC_IMPLS[impl][1]]
    before = udp_stats(a.port) if name.startswith("udp") else None
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {a.timeout} s"
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    try:
        r = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, f"no JSON: {p.stdout[-200:]} {p.stderr[-200:]}"
    if before is not None:
        time.sleep(0.2)
        after = udp_stats(a.port)
        if after is not None:
            r["sink_received"] = after - before
    if p.stderr.strip():
        r["stderr"] = p.stderr.strip()[-300:]
    return r, None


def fmt(v, unit):
    if v is None:
        return "—"
    if unit == "B/conn":
        return f"{v:,.0f}"
    if unit == "MiB/s":
        return f"{v:,.0f}"
    return f"{v:,.0f}"


def fmt_ratio(r):
    return f"{r:.2f}" if r is not None else "—"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


# Scenarios left out of the unpinned pass of `--pin both`: memory does not depend on placement, and
# the TLS targets are pinned ones.
UNPINNED_SKIP = ("mem", "tls-bulk", "tls-handshake")


def is_unpinned_pass(a, pin):
    """Whether `pin` is the second, unpinned pass of `--pin both`."""
    return pin == "none" and a.pin == "both"


def skipped(a, pin):
    """The scenarios a placement's pass leaves out."""
    return UNPINNED_SKIP if is_unpinned_pass(a, pin) else ()


def measure(a, pin, scen, only, impls_only, reps_default, skip, started):
    """Runs the scenarios with one placement; returns (results, errors) keyed by (scenario, impl)."""
    server_pin, client_pin = {
        "same": (["taskset", "-c", "0"], ["taskset", "-c", "0"]),
        "split": (["taskset", "-c", "1"], ["taskset", "-c", "0"]),
        "none": ([], []),
    }[pin]

    server = subprocess.Popen(server_pin + [os.path.join(HERE, ".build/c/server"), "--port", str(a.port), "--nports", "10"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if server.stdout.readline().strip() != "ready":
        sys.exit("server did not start: " + server.stderr.read())

    results = {}  # (scenario, impl) -> list of result dicts
    errors = {}
    wanted = [x for x in scen if (not only or x[0] in only) and x[0] not in skip]

    # The TLS server (its own process, same placement), only when a TLS scenario runs.
    tls_server, cert_dir = None, None
    if any(name in TLS_SCENARIOS for name, *_ in wanted):
        cert_dir, cert, key = make_certificate()
        tls_server = subprocess.Popen(server_pin + [os.path.join(HERE, ".build/c/tls_server"), "--port", str(a.port),
                                                    "--cert", cert, "--key", key],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if tls_server.stdout.readline().strip() != "ready":
            server.terminate()
            sys.exit("TLS server did not start: " + tls_server.stderr.read())

    # The QUIC sink (an NWListener of ours; same placement), only when a QUIC scenario runs.
    quic_server = None
    if any(name in QUIC_SCENARIOS for name, *_ in wanted) and not a.network_missing:
        if cert_dir is None:
            cert_dir, cert, key = make_certificate()
        quic_server = subprocess.Popen(server_pin + [binary("network"), "quic-server", "--port", str(a.port),
                                                     "--cert", cert, "--key", key],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if quic_server.stdout.readline().strip() != "ready":
            server.terminate()
            sys.exit("QUIC sink did not start: " + quic_server.stderr.read())

    # The WebSocket echo server (NIOWebSocket; same placement), only when the WebSocket scenario runs.
    ws_server = None
    if any(name == "ws" for name, *_ in wanted):
        ws_server = subprocess.Popen(server_pin + [binary("nio"), "ws-server", "--port", str(a.port + WS_PORT_OFFSET)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", a.port + WS_PORT_OFFSET), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or ws_server.poll() is not None:
                    server.terminate()
                    sys.exit("WebSocket echo server did not start: " + (ws_server.stderr.read() if ws_server.poll() is not None else "timeout"))
                time.sleep(0.1)

    try:
        for name, _, _, _, args, impls in wanted:
            reps = a.mem_reps if name == "mem" else reps_default
            for rep in range(reps):
                # implementations interleaved within each repetition, so drift hits all alike
                for impl in impls:
                    if impls_only and impl not in impls_only:
                        continue
                    if impl in ("network", "network-async") and a.network_missing:
                        continue
                    r, err = run_one(a, impl, name, args, client_pin)
                    tag = f"[{time.time() - started:6.1f}s] {pin:4s} {name:14s} {impl:11s} rep {rep + 1}/{reps}: "
                    if r is None:
                        errors.setdefault((name, impl), []).append(err)
                        print(tag + "FAILED " + err, flush=True)
                    else:
                        results.setdefault((name, impl), []).append(r)
                        print(tag + f"{r['value']:,.1f} {r['unit']}", flush=True)
                    time.sleep(0.3 if name != "mem" else 1.0)
    finally:
        server.terminate()
        server.wait()
        if tls_server is not None:
            tls_server.terminate()
            tls_server.wait()
        if ws_server is not None:
            ws_server.terminate()
            ws_server.wait()
        if quic_server is not None:
            quic_server.terminate()
            quic_server.wait()
        if cert_dir is not None:
            shutil.rmtree(cert_dir, ignore_errors=True)
    return results, errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mem-reps", type=int, default=3)
    ap.add_argument("--mem-conns", type=int, default=10000)
    ap.add_argument("--port", type=int, default=19000)
    ap.add_argument("--udp-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[64, 1200])
    ap.add_argument("--pin", choices=["same", "split", "none", "both"], default="both",
                    help="both = pinned (same CPU) and unpinned, the latter with --unpinned-reps")
    ap.add_argument("--unpinned-reps", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--impls", default="", help="comma-separated implementations")
    ap.add_argument("--network-missing", default="", help="reason the Network client was not built")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--json-out", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--suite", default="", help="file with package-benchmark output to append")
    ap.add_argument("--command", default="bash Benchmarks/run.sh")
    a = ap.parse_args()

    placements = ["same", "none"] if a.pin == "both" else [a.pin]
    scen = scenarios(a)
    only = set(x for x in a.only.split(",") if x)
    impls_only = set(x for x in a.impls.split(",") if x)
    by_pin = {}
    started = time.time()
    for pin in placements:
        reps = a.unpinned_reps if is_unpinned_pass(a, pin) else a.reps
        by_pin[pin] = measure(a, pin, scen, only, impls_only, reps, skipped(a, pin), started)
    total = time.time() - started

    with open(a.json_out, "w") as f:
        json.dump([dict(r, placement=pin) for pin, (results, _) in by_pin.items() for rs in results.values() for r in rs],
                  f, indent=1)

    write_report(a, scen, by_pin, total)
    print(f"wrote {a.out} ({total:.0f} s of measurements)")


PIN_TEXT = {
    "same": "server and client pinned to the same CPU (`taskset -c 0`): a CPU-cost comparison; see README.md for why",
    "split": "server pinned to CPU 1, client to CPU 0",
    "none": "no CPU pinning",
}
PIN_SHORT = {"same": "pinned", "split": "split CPUs", "none": "unpinned"}

# Sections of RESULTS.md that other scripts write and the report keeps as they are.
KEPT_SECTIONS = ("## Establishment: time to ready vs curl", "## UDP offload: batch with GSO, receive with GRO")


def cpu_median(results, name, impl):
    """Median client CPU (user + sys) per operation, in µs (per MiB for bulk scenarios)."""
    rs = [r for r in results.get((name, impl), []) if r.get("ops")]
    if not rs:
        return None
    scale = 1048576 if rs[0].get("unit") == "MiB/s" else 1
    return statistics.median((r["cpu_user"] + r["cpu_sys"]) / r["ops"] * 1e6 * scale for r in rs)


def median_of(results, name, impl):
    rs = results.get((name, impl))
    if not rs:
        return None
    return statistics.median(r["value"] for r in rs)


def write_report(a, scen, by_pin, total):
    out = []
    kernel = platform.release()
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    swift = swift[0] if swift else "?"
    rev = subprocess.run(["git", "-C", os.path.dirname(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", os.path.dirname(HERE), "status", "--porcelain", "--", "Sources"], capture_output=True, text=True).stdout.strip()
    nio_version, nio_ssl_version = "?", "?"
    try:
        for pin in json.load(open(os.path.join(HERE, "Package.resolved")))["pins"]:
            if pin["identity"] == "swift-nio":
                nio_version = pin["state"].get("version", "?")
            if pin["identity"] == "swift-nio-ssl":
                nio_ssl_version = pin["state"].get("version", "?")
    except (OSError, ValueError, KeyError):
        pass
    ran = [name for name, *_ in scen if not a.only or name in a.only.split(",")]
    tls_ran = any(name in TLS_SCENARIOS for name in ran)
    openssl_version = "?"
    if tls_ran:
        openssl_version = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.split(" (Library")[0].strip() or "?"

    out.append("# Benchmark results\n")
    out.append(f"- Date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
    out.append(f"- Command: `{a.command}`")
    out.append(f"- Machine: {os.cpu_count()} CPUs (nproc), {cpu}; kernel {kernel}; {swift}; swift-nio {nio_version}; gcc -O2")
    out.append(f"- Network package: main at `{rev}`" + (" plus uncommitted changes in Sources/" if dirty else ""))
    if a.pin == "both":
        out.append("- Placements: **pinned**, server and client on the same CPU (`taskset -c 0`): a CPU-cost comparison; and "
                   "**unpinned**, no `taskset`, as servers really run (the scheduler spreads threads over both CPUs, so "
                   "every hand-over between threads can be a cross-CPU wake-up). The unpinned pass leaves out "
                   + ", ".join(UNPINNED_SKIP) + ".")
    else:
        out.append("- Placement: " + PIN_TEXT[a.pin])
    reps_text = f"{a.reps} repetitions pinned, {a.unpinned_reps} unpinned" if a.pin == "both" else f"{a.reps} repetitions"
    out.append(f"- Each timed measurement: {a.warmup:g} s warm-up + {a.duration:g} s measured; {reps_text} "
               f"(memory: {a.mem_reps}), implementations interleaved; the tables show the median (min–max). "
               f"Total measuring time {total:.0f} s.")
    out.append("- Server for every client: `C/server.c` (single-threaded epoll echo / sink / UDP sink). "
               "Client CPU = user+sys CPU time of the client process per operation, measured over the same window.")
    if tls_ran:
        out.append(f"- TLS: one server for every TLS client, `C/tls_server.c` (single-threaded epoll, {openssl_version}; "
                   "TLS 1.3 only, TLS_AES_128_GCM_SHA256, X25519, a fresh self-signed ECDSA P-256 certificate per run, "
                   "no session tickets or resumption). Clients: C with OpenSSL (`C/tls_client.c`), plain NIO with "
                   f"swift-nio-ssl {nio_ssl_version} (BoringSSL inside), Network (its TLS is swift-nio-ssl too). "
                   "No client verifies the certificate.")
    if a.network_missing:
        out.append(f"- **Network client not measured**: {a.network_missing}")
    out.append("")

    # Targets (issue 10), per placement
    def nw_nio(pin, name):
        results = by_pin.get(pin, ({}, {}))[0]
        return ratio(median_of(results, name, "network"), median_of(results, name, "nio"))

    def nw_python(pin, name):
        results = by_pin.get(pin, ({}, {}))[0]
        return ratio(median_of(results, name, "network"), median_of(results, name, "python-websockets"))

    def cpu_ratio(pin, name):
        results = by_pin.get(pin, ({}, {}))[0]
        return ratio(cpu_median(results, name, "network"), cpu_median(results, name, "nio"))

    pins = list(by_pin)
    targets = []
    for pin in pins:
        where = PIN_SHORT[pin]
        rr_goal = 0.8 if pin == "same" else 0.9
        for name, label in (("rr1", "Round trips, 1 connection"), ("rr100", "Round trips, 100 connections")):
            targets.append((f"{label}, {where}: Network ≥ {rr_goal} × NIO", nw_nio(pin, name), lambda r, g=rr_goal: r >= g, "{:.2f}×"))
            targets.append((f"{label}, {where}: client CPU per round trip ≤ 1.5 × NIO's", cpu_ratio(pin, name),
                            lambda r: r <= 1.5, "{:.2f}×"))
        targets.append((f"Framed messages, {where}: Network's NWProtocolFramer ≥ 0.8 × a NIO codec pair", nw_nio(pin, "framed"),
                        lambda r: r >= 0.8, "{:.2f}×"))
        results = by_pin.get(pin, ({}, {}))[0]
        targets.append((f"Framed messages, {where}: the same framer through the 2025 API (`Framer<T>`) ≥ 0.8 × a NIO codec pair",
                        ratio(median_of(results, "framed", "network-async"), median_of(results, "framed", "nio")),
                        lambda r: r >= 0.8, "{:.2f}×"))
        targets.append((f"WebSocket echo, {where}: Network's NWProtocolWebSocket ≥ 0.8 × NIOWebSocket", nw_nio(pin, "ws"),
                        lambda r: r >= 0.8, "{:.2f}×"))
        targets.append((f"WebSocket echo, {where}: Network ≥ 3 × python `websockets`", nw_python(pin, "ws"),
                        lambda r: r >= 3, "{:.2f}×"))
        targets.append((f"WebSocket echo, {where}: the same through the 2025 API (`WebSocket`) ≥ 0.8 × NIOWebSocket",
                        ratio(median_of(results, "ws", "network-async"), median_of(results, "ws", "nio")),
                        lambda r: r >= 0.8, "{:.2f}×"))
        targets.append((f"WebSocket echo, {where}: the 2025 API ≥ 3 × python `websockets`",
                        ratio(median_of(results, "ws", "network-async"), median_of(results, "ws", "python-websockets")),
                        lambda r: r >= 3, "{:.2f}×"))
        targets.append((f"Bulk TCP, {where}: Network ≥ 0.95 × NIO", nw_nio(pin, "bulk"), lambda r: r >= 0.95, "{:.2f}×"))
        targets.append((f"Bulk TCP, {where}: client CPU per MiB ≤ 1.3 × NIO's", cpu_ratio(pin, "bulk"), lambda r: r <= 1.3, "{:.2f}×"))
        for size in a.udp_sizes:
            targets.append((f"UDP {size} B with batch, {where}: Network batch ≥ 1.0 × NIO batched writes",
                            nw_nio(pin, f"udp{size}-batch"), lambda r: r >= 1.0, "{:.2f}×"))
        # The 2025 API (issue 14): NetworkConnection against plain NIO.
        for name, label in (("rr1", "Round trips, 1 connection"), ("rr100", "Round trips, 100 connections"), ("bulk", "Bulk TCP")):
            results = by_pin.get(pin, ({}, {}))[0]
            targets.append((f"2025 API: {label}, {where}: NetworkConnection ≥ 0.95 × NIO",
                            ratio(median_of(results, name, "network-async"), median_of(results, name, "nio")),
                            lambda r: r >= 0.95, "{:.2f}×"))
        # For reference: what a task per connection costs by itself (no engine), and how close
        # NetworkConnection comes to that floor.
        for name, label in (("rr1", "Round trips, 1 connection"), ("rr100", "Round trips, 100 connections")):
            results = by_pin.get(pin, ({}, {}))[0]
            targets.append((f"2025 API, for reference: {label}, {where}: the floor of any async API (SwiftNIO + a task on the loop) ÷ NIO",
                            ratio(median_of(results, name, "nio-loop-task"), median_of(results, name, "nio")), None, "{:.2f}×"))
            targets.append((f"2025 API, for reference: {label}, {where}: NetworkConnection ÷ that floor",
                            ratio(median_of(results, name, "network-async"), median_of(results, name, "nio-loop-task")), None, "{:.2f}×"))
    first = pins[0]
    targets.append(("Bulk TLS, " + PIN_SHORT[first] + ": Network ≥ 0.95 × NIOSSL", nw_nio(first, "tls-bulk"), lambda r: r >= 0.95, "{:.2f}×"))
    targets.append(("TLS handshakes per second, " + PIN_SHORT[first] + ": Network ≥ 0.9 × NIOSSL", nw_nio(first, "tls-handshake"),
                    lambda r: r >= 0.9, "{:.2f}×"))
    # QUIC (issue 15): one stream's bulk against our own TLS over TCP and against aioquic.
    for pin in pins:
        results = by_pin.get(pin, ({}, {}))[0]
        if pin == first:
            targets.append((f"QUIC bulk, {PIN_SHORT[pin]}: Network over QUIC ≥ 0.5 × Network over TLS/TCP",
                            ratio(median_of(results, "quic-bulk", "network"), median_of(results, "tls-bulk", "network")),
                            lambda r: r >= 0.5, "{:.2f}×"))
        targets.append((f"QUIC bulk, {PIN_SHORT[pin]}: Network ≥ 5 × aioquic",
                        ratio(median_of(results, "quic-bulk", "network"), median_of(results, "quic-bulk", "python-aioquic")),
                        lambda r: r >= 5, "{:.2f}×"))
    targets.append(("Memory: ≤ 3,072 B user-space memory per idle connection",
                    median_of(by_pin[first][0], "mem", "network"), lambda v: v <= 3072, "{:,.0f} B/conn"))
    out.append("## Targets\n")
    out.append("| target | measured | met? |")
    out.append("|---|---:|---|")
    for label, v, ok, f in targets:
        if v is None:
            out.append(f"| {label} | not yet measured | — |")
        elif ok is None:
            out.append(f"| {label} | {f.format(v)} | (no target) |")
        else:
            out.append(f"| {label} | {f.format(v)} | {'met' if ok(v) else '**not met**'} |")
    out.append("")

    for pin, (results, errors) in by_pin.items():
        out.extend(scenario_tables(a, scen, pin, results, errors, len(by_pin) > 1))

    if a.suite and os.path.exists(a.suite):
        out.append("## package-benchmark suite (`swift package benchmark`)\n")
        out.append("Same client drivers, measured in-process by ordo-one/package-benchmark against the same C server "
                   "(NETBENCH_EXTERNAL_SERVER=1), same placement, one operation = one round trip or one datagram, p50 values. "
                   "Its point is the allocation count per operation (package-benchmark's malloc interposer); its "
                   "absolute rates are lower than the table above (framework, interposer and per-iteration start/stop "
                   "overhead) and are not compared with it.\n")
        out.append(open(a.suite).read().strip())
        out.append("")

    # Sections written by other scripts (establishment.sh, udp-offload.sh) are carried over
    # unchanged, in the order they were in.
    kept = ""
    if os.path.exists(a.out):
        text = open(a.out).read()
        found = []
        for heading in KEPT_SECTIONS:
            m = re.search(r"^" + re.escape(heading) + r"\n.*?(?=^## |\Z)", text, re.S | re.M)
            if m:
                found.append(m)
        for m in sorted(found, key=lambda m: m.start()):
            kept += "\n" + m.group(0).rstrip("\n") + "\n"
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n" + kept)


def scenario_tables(a, scen, pin, results, errors, several):
    """The per-scenario tables of one placement."""
    out = []
    skip = skipped(a, pin)
    out.append(f"## Scenarios, {PIN_SHORT[pin]}\n" if several else "## Scenarios\n")
    for name, title, unit, better, args, impls in scen:
        if (a.only and name not in a.only.split(",")) or name in skip:
            continue
        out.append(f"### {name}: {title}\n")
        if name in TLS_SCENARIOS:
            cmds = f"`nio-bench|nw-bench {' '.join(args)} --port {a.port}`, C: `tls_client {' '.join([args[0][4:]] + args[1:])} --port {a.port}`"
            if "c-s_time" in impls:
                cmds += f", `openssl s_time -connect 127.0.0.1:{a.port + 300} -new -time {max(1, round(a.duration))}`"
            out.append(f"Unit: {unit} ({better} is better). Client commands: {cmds}\n")
        else:
            out.append(f"Unit: {unit} ({better} is better). Client command: `<client> {' '.join(args)} --port {a.port}`\n")
        if name == "mem":
            out.append("| implementation | median B/conn (RSS) | min–max | malloc heap B/conn (mallinfo2) | RSS before → after (median run) | connect time |")
            out.append("|---|---:|---:|---:|---:|---:|")
        elif name.startswith("udp"):
            out.append("| implementation | median | min–max | client CPU µs/op | delivered to sink |")
            out.append("|---|---:|---:|---:|---:|")
        elif name == "tls-handshake":
            out.append("| implementation | median | min–max | client CPU µs/handshake | server-counted / client-counted handshakes "
                       "| client fds still open at the end / handshakes |")
            out.append("|---|---:|---:|---:|---:|---:|")
        else:
            out.append("| implementation | median | min–max | client CPU µs/op |")
            out.append("|---|---:|---:|---:|")
        for impl in impls:
            label = IMPL_LABEL[impl]
            if name.startswith("udp") and impl == "c-blocking":
                label = "C, sendmmsg" if name.endswith("batch") else "C, send()"
            if name in TLS_SCENARIOS and impl == "nio":
                label = "SwiftNIO + NIOSSL"
            if name == "hop":
                label = IMPL_LABEL["nio-hop"]
            rs = results.get((name, impl))
            if not rs:
                why = "not yet measured"
                if (name, impl) in errors:
                    why = "failed: " + errors[(name, impl)][0].replace("|", "/")[:160]
                elif impl == "network" and a.network_missing:
                    why = "not yet measured (" + a.network_missing + ")"
                cols = 5 if name in ("mem", "tls-handshake") else (4 if name.startswith("udp") else 3)
                out.append(f"| {label} | {why} |" + " |" * (cols - 1))
                continue
            vals = sorted(r["value"] for r in rs)
            med = statistics.median(vals)
            mid = sorted(rs, key=lambda r: r["value"])[len(rs) // 2]
            rng = f"{fmt(vals[0], unit)}–{fmt(vals[-1], unit)}"
            if name == "mem":
                heap = mid.get("heap_per_conn")
                heap_text = f"{heap:,.0f}" if heap is not None else "—"
                out.append(f"| {label} | {fmt(med, unit)} | {rng} | {heap_text} | {mid.get('rss_before', 0) / 1048576:.1f} → "
                           f"{mid.get('rss_after', 0) / 1048576:.1f} MiB | {mid.get('connect_seconds', 0):.2f} s |")
                continue
            cpu_per_op = statistics.median(
                (r["cpu_user"] + r["cpu_sys"]) / r["ops"] * 1e6 * (1048576 if unit == "MiB/s" else 1) for r in rs if r["ops"])
            cpu_text = f"{cpu_per_op:.2f}" + (" per MiB" if unit == "MiB/s" else "")
            row = f"| {label} | {fmt(med, unit)} | {rng} | {cpu_text} |"
            if name.startswith("udp"):
                fr = [r["sink_received"] / r["sent_total"] for r in rs if r.get("sink_received") is not None and r.get("sent_total")]
                row += f" {statistics.median(fr) * 100:.0f} % |" if fr else " — |"
            if name == "tls-handshake":
                fr = [r["server_handshakes"] / r["handshakes_total"] for r in rs
                      if r.get("server_handshakes") is not None and r.get("handshakes_total")]
                row += f" {statistics.median(fr) * 100:.1f} % |" if fr else " — |"
                fds = [r for r in rs if r.get("open_fds") is not None]
                if fds:
                    m = sorted(fds, key=lambda r: r["open_fds"])[len(fds) // 2]
                    row += f" {m['open_fds']:,.0f} / {m['handshakes_total']:,.0f} |"
                else:
                    row += " — |"
            out.append(row)
        out.append("")
        if name == "hop":
            hop = median_of(results, name, "nio")
            if hop:
                out.append(f"One round takes {1e6 / hop:.2f} µs; its client CPU is in the table. The hop to the user's "
                           "queue is the one a round trip of the classic API cannot avoid; its cost, added to NIO's "
                           "round trip, is the floor of the present design (see the note under Targets).\n")
            continue
        # ratios
        if name in QUIC_SCENARIOS:
            # No NIO QUIC client: against aioquic, and bulk against our own TLS over TCP.
            nw = median_of(results, name, "network")
            parts = [f"Network / aioquic = {fmt_ratio(ratio(nw, median_of(results, name, 'python-aioquic')))}"]
            if name == "quic-bulk":
                parts.append(f"Network QUIC / Network TLS over TCP = {fmt_ratio(ratio(nw, median_of(results, 'tls-bulk', 'network')))}")
            out.append("Ratios (of medians): " + "; ".join(parts) + "\n")
            continue
        nw, nio = median_of(results, name, "network"), median_of(results, name, "nio")
        cs = [(c, median_of(results, name, c)) for c in ("c-epoll", "c-blocking", "c-openssl", "c-s_time") if c in impls]
        cname = {"c-epoll": "C epoll", "c-blocking": "C blocking", "c-openssl": "C OpenSSL", "c-s_time": "openssl s_time"}
        if name.startswith("udp"):
            cname["c-blocking"] = "C sendmmsg" if name.endswith("batch") else "C send()"
        nio_name = "NIOSSL" if name in TLS_SCENARIOS else "NIO"
        parts = []
        r = ratio(nw, nio)
        parts.append(f"Network / {nio_name} = {r:.2f}" if r is not None else f"Network / {nio_name} = —")
        for c, cv in cs:
            r = ratio(nw, cv)
            parts.append(f"Network / {cname[c]} = {r:.2f}" if r is not None else f"Network / {cname[c]} = —")
        for c, cv in cs:
            r = ratio(nio, cv)
            parts.append(f"{nio_name} / {cname[c]} = {r:.2f}" if r is not None else f"{nio_name} / {cname[c]} = —")
        out.append("Ratios (of medians" + (", lower is better" if better == "lower" else "") + "): " + "; ".join(parts) + "\n")
    return out


if __name__ == "__main__":
    main()
