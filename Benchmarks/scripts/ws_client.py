#!/usr/bin/env python3
"""The WebSocket echo scenario's python `websockets` client (asyncio): `--window` binary messages of
`--size` bytes in flight against the scenario's echo server; each echo makes the next message go
out. Prints one JSON line in the format of nw-bench / nio-bench (see ../README.md)."""
import argparse
import asyncio
import json
import resource
import sys
import time

try:
    from websockets.asyncio.client import connect
except ImportError:  # pragma: no cover - said plainly, never skipped
    sys.exit("python websockets is missing: pip install websockets (scripts/install-deps.sh installs it)")


async def run(args):
    payload = b"w" * args.size
    # No compression: the other clients (NIOWebSocket, Network) send plain frames.
    async with connect(f"ws://{args.host}:{args.port}/echo", compression=None, max_size=None) as ws:
        for _ in range(args.window):
            await ws.send(payload)
        count = 0
        errors = 0
        start = time.monotonic()
        measuring_from = start + args.warmup
        end = measuring_from + args.duration
        measured = 0
        cpu0 = None
        while True:
            message = await ws.recv()
            if message != payload:
                errors += 1
            now = time.monotonic()
            if cpu0 is None and now >= measuring_from:
                cpu0 = resource.getrusage(resource.RUSAGE_SELF)
                t0 = now
                measured = 0
            if now >= end:
                break
            measured += 1
            count += 1
            await ws.send(payload)
        seconds = now - t0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "impl": "python-websockets", "scenario": args.name or "ws", "value": measured / seconds, "unit": "msgs/s",
        "ops": measured, "seconds": seconds, "cpu_user": cpu1.ru_utime - cpu0.ru_utime,
        "cpu_sys": cpu1.ru_stime - cpu0.ru_stime, "errors": float(errors)}))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenario", choices=["ws"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=19500)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--window", type=int, default=16)
    parser.add_argument("--duration", type=float, default=3)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--name")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
