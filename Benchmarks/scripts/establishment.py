#!/usr/bin/env python3
"""Runs nwcat and curl in a client network namespace prepared by establishment.sh, takes the
medians of their time to ready, and writes the "Establishment: time to ready vs curl" section
of RESULTS.md (replacing only that section) plus the raw samples as JSON.

Both numbers exclude process start-up: nwcat's is the establishment report's duration (from
NWConnection.start to ready, printed by `nwcat connect -v` as `timing duration=…`), curl's is
its own `-w` timer from the start of the transfer. Direct connections compare with curl's
time_connect (name resolution + TCP handshake); proxied ones with time_pretransfer, which also
covers the proxy handshake (curl's time_connect stops at the TCP connection to the proxy),
as nwcat's ready state does.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
from results_section import write_section  # noqa: E402

PROXY_VARIABLES = ["all_proxy", "ALL_PROXY", "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                   "no_proxy", "NO_PROXY"]
SECTION = "## Establishment: time to ready vs curl"


def in_namespace(namespace, argv):
    # Proxy variables from the caller's environment must not reach either client.
    env = ["env"] + [x for v in PROXY_VARIABLES for x in ("-u", v)]
    return ["ip", "netns", "exec", namespace] + env + argv


def run_nwcat(a, extra):
    p = subprocess.run(in_namespace(a.client, [a.nwcat, "connect", "-v"] + extra + ["dual.test", "8080"]),
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    line = next((l for l in p.stderr.splitlines() if l.startswith("nwcat: timing ")), None)
    if p.returncode != 0 or line is None:
        raise SystemExit(f"nwcat failed ({p.returncode}): {p.stderr}")
    fields = dict(f.split("=", 1) for f in line[len("nwcat: timing "):].split())
    return {"seconds": float(fields["duration"]), "used": fields.get("used", ""), "proxy": fields.get("proxy", ""),
            "resolution": float(fields["resolution_duration"]) if "resolution_duration" in fields else None,
            "attempt_started": float(fields.get("attempt_started_after", "nan")),
            "tcp_handshake": float(fields.get("tcp_handshake", "nan"))}


def run_curl(a, extra, timer):
    p = subprocess.run(in_namespace(a.client, ["curl", "-sS", "-o", "/dev/null", "-w",
                                               "%{time_connect} %{time_pretransfer} %{remote_ip} %{http_code}"]
                                    + extra + ["http://dual.test:8080/"]),
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    parts = p.stdout.split()
    if p.returncode != 0 or len(parts) < 4 or parts[3] != "200":
        raise SystemExit(f"curl failed ({p.returncode}): {p.stdout} {p.stderr}")
    value = float(parts[0]) if timer == "time_connect" else float(parts[1])
    return {"seconds": value, "used": parts[2]}


def nft(a, ruleset=None):
    if ruleset is None:
        subprocess.run(["ip", "netns", "exec", a.server, "nft", "delete", "table", "inet", "bench"],
                       capture_output=True)
    else:
        subprocess.run(["ip", "netns", "exec", a.server, "nft", "-f", "-"], input=ruleset, text=True, check=True)


def scenarios(a):
    proxy_socks = f"{a.server_ipv4}:1080"
    proxy_http = f"{a.server_ipv4}:8888"
    blackhole = ("table inet bench {\n chain input {\n  type filter hook input priority 0; policy accept;\n"
                 "  meta nfproto ipv6 tcp dport 8080 drop\n }\n}\n")
    return [
        {"name": "clean", "title": "dual-stack name, nothing blocked (IPv6 wins)",
         "nwcat": [], "curl": [], "timer": "time_connect", "ruleset": None},
        {"name": "blackhole", "title": "dual-stack name, IPv6 silently dropped (Happy Eyeballs falls back to IPv4)",
         "nwcat": [], "curl": [], "timer": "time_connect", "ruleset": blackhole},
        {"name": "socks5", "title": "through dante, SOCKS5 without auth (the proxy resolves the name)",
         "nwcat": ["--proxy", f"socks5://{proxy_socks}"], "curl": ["--proxy", f"socks5h://{proxy_socks}"],
         "timer": "time_pretransfer", "ruleset": None},
        {"name": "connect", "title": "through tinyproxy, HTTP CONNECT with Basic auth",
         "nwcat": ["--proxy", f"http://benchuser:b3nch@{proxy_http}"],
         "curl": ["-p", "--proxy", f"http://benchuser:b3nch@{proxy_http}"],
         "timer": "time_pretransfer", "ruleset": None},
    ]


def ms(seconds):
    return f"{seconds * 1000:.2f}" if seconds is not None else "—"


def median_of(samples, key):
    values = [x[key] for x in samples if x.get(key) is not None and x[key] == x[key]]   # drops None and NaN
    return statistics.median(values) if values else None


def main():
    ap = argparse.ArgumentParser()
    for name in ["--nwcat", "--client", "--server", "--server-ipv4", "--server-ipv6", "--results", "--json",
                 "--command", "--revision"]:
        ap.add_argument(name, required=True)
    ap.add_argument("--iterations", type=int, default=20)
    a = ap.parse_args()

    results = []
    for s in scenarios(a):
        nft(a, None)
        if s["ruleset"]:
            nft(a, s["ruleset"])
        # One unmeasured run of each first: page cache, dnsmasq and the proxies' first fork.
        run_nwcat(a, s["nwcat"])
        run_curl(a, s["curl"], s["timer"])
        ours, theirs = [], []
        for _ in range(a.iterations):          # interleaved, so drift hits both alike
            ours.append(run_nwcat(a, s["nwcat"]))
            theirs.append(run_curl(a, s["curl"], s["timer"]))
        nft(a, None)
        ours_median = statistics.median(x["seconds"] for x in ours)
        theirs_median = statistics.median(x["seconds"] for x in theirs)
        results.append({
            "scenario": s["name"], "title": s["title"], "curl_timer": s["timer"],
            "nwcat": {"median": ours_median, "min": min(x["seconds"] for x in ours),
                      "max": max(x["seconds"] for x in ours), "used": sorted({x["used"] for x in ours}),
                      "proxy": sorted({x["proxy"] for x in ours}), "samples": [x["seconds"] for x in ours],
                      "resolution_median": median_of(ours, "resolution"),
                      "attempt_started_median": median_of(ours, "attempt_started"),
                      "tcp_handshake_median": median_of(ours, "tcp_handshake")},
            "curl": {"median": theirs_median, "min": min(x["seconds"] for x in theirs),
                     "max": max(x["seconds"] for x in theirs), "used": sorted({x["used"] for x in theirs}),
                     "samples": [x["seconds"] for x in theirs]},
            "ratio": ours_median / theirs_median if theirs_median > 0 else None,
        })
        print(f"{s['name']:10s} nwcat {ms(ours_median)} ms  curl {ms(theirs_median)} ms  "
              f"ratio {results[-1]['ratio']:.2f}", flush=True)

    with open(a.json, "w") as f:
        json.dump({"command": a.command, "revision": a.revision, "iterations": a.iterations, "results": results}, f,
                  indent=1)
        f.write("\n")

    curl_version = subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    swift_version = subprocess.run(["swift", "--version"], capture_output=True, text=True)
    swift_line = next((l for l in (swift_version.stdout + swift_version.stderr).splitlines() if "Swift version" in l),
                      "")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        SECTION,
        "",
        f"- Date: {now}; command: `{a.command}`; Network package at `{a.revision}`; nwcat release build; "
        f"{os.cpu_count()} CPUs, kernel {platform.release()}; {swift_line.strip()}; {curl_version.split(' (')[0]}.",
        "- Setup: two network namespaces joined by a veth pair (RTT well under 0.1 ms). Server side: dnsmasq "
        "(`dual.test` → A and AAAA, 2001:db8::/32 so that IPv6 ranks first for both clients), Python's http.server "
        "on one dual-stack socket, dante (SOCKS5, no auth), tinyproxy (HTTP CONNECT, Basic auth). Both clients run "
        "in the client namespace with the same resolv.conf, one process per connection, interleaved, "
        f"{a.iterations} runs each after one unmeasured run; medians (min–max).",
        "- nwcat: the establishment report's duration (NWConnection start → ready: resolution, attempts, proxy "
        "handshake). curl: `time_connect` for direct connections (resolution + TCP handshake), `time_pretransfer` "
        "through proxies (curl's `time_connect` stops at the TCP connection to the proxy; pretransfer includes the "
        "SOCKS5/CONNECT handshake, as nwcat's ready does). Neither includes process start-up.",
        "- Each nwcat run is a fresh process, so every row pays the stack's first-use costs (the event loop's "
        "first channels, the resolver reading resolv.conf, hosts and nsswitch.conf, first allocations); curl is a "
        "fresh process too, but glibc's resolver and a blocking connect have little to warm up. A long-lived "
        "process would not pay those again for its later connections (not measured here).",
        "- Expected in the blackhole row: our connection attempt delay is 250 ms (RFC 8305's recommended value), "
        "curl's Happy Eyeballs timeout is 200 ms, so a ratio near 1.25 is the design, not overhead.",
        "",
        "| scenario | nwcat median ms (min–max) | curl median ms (min–max) | curl timer | nwcat / curl | address used (nwcat; curl) |",
        "|---|---:|---:|---|---:|---|",
    ]
    for r in results:
        used = f"{', '.join(r['nwcat']['used']) or '—'}; {', '.join(r['curl']['used'])}"
        if r["nwcat"]["proxy"] and r["nwcat"]["proxy"] != ["none"]:
            used = f"proxy {', '.join(r['nwcat']['proxy'])}; {', '.join(r['curl']['used'])}"
        lines.append(
            f"| {r['scenario']}: {r['title']} | {ms(r['nwcat']['median'])} ({ms(r['nwcat']['min'])}–{ms(r['nwcat']['max'])}) "
            f"| {ms(r['curl']['median'])} ({ms(r['curl']['min'])}–{ms(r['curl']['max'])}) | {r['curl_timer']} "
            f"| {r['ratio']:.2f} | {used} |")
    lines += [
        "",
        "Where nwcat's time goes (medians of the same runs, from its establishment report): resolution (our "
        "resolver, both questions to dnsmasq), the start of the winning attempt, and that attempt's TCP handshake "
        "(through a proxy: to the proxy).",
        "",
        "| scenario | resolution ms | winning attempt started after ms | TCP handshake ms |",
        "|---|---:|---:|---:|",
    ]
    for r in results:
        n = r["nwcat"]
        lines.append(f"| {r['scenario']} | {ms(n['resolution_median'])} | {ms(n['attempt_started_median'])} "
                     f"| {ms(n['tcp_handshake_median'])} |")
    lines.append("")
    section = "\n".join(lines) + "\n"

    write_section(a.results, SECTION, section)


if __name__ == "__main__":
    main()
