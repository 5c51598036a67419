#!/usr/bin/env python3
"""The QUIC scenarios' aioquic client (asyncio), against the QUIC sink (`nw-bench quic-server`,
PORT+500, ALPN "bench"):
  quic-bulk       one stream: `--size`-byte writes for `--duration` s (each waits for drain), then
                  the stream's FIN; the sink answers with its byte count (8 bytes, little-endian)
  quic-handshake  sequential connections (handshake, then close) for `--duration` s after a
                  `--warmup`
Like the other clients it does not verify the throwaway certificate. Prints one JSON line in the
format of nw-bench / nio-bench (see ../README.md)."""
import argparse
import asyncio
import json
import resource
import ssl
import sys
import time

try:
    from aioquic.asyncio import connect
    from aioquic.quic.configuration import QuicConfiguration
except ImportError:  # pragma: no cover - said plainly, never skipped
    sys.exit("aioquic is missing: scripts/install-deps.sh installs it")


def configuration():
    config = QuicConfiguration(is_client=True, alpn_protocols=["bench"])
    config.verify_mode = ssl.CERT_NONE
    return config


def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


async def bulk(args):
    chunk = b"b" * args.size
    async with connect(args.host, args.port + 500, configuration=configuration()) as client:
        reader, writer = await client.create_stream()
        cpu0, t0 = cpu(), time.monotonic()
        end = t0 + args.duration
        writer.write(chunk)
        sender = client._quic._streams[writer.get_extra_info("stream_id")].sender
        while time.monotonic() < end:
            writer.write(chunk)
            # aioquic's drain() does not wait for anything: hold at most 1 MiB not yet
            # acknowledged, as the other clients are held by their send buffers.
            while len(sender._buffer) > 1 << 20:
                await asyncio.sleep(0.0005)
        writer.write_eof()
        count = int.from_bytes(await reader.readexactly(8), "little")
        t1, cpu1 = time.monotonic(), cpu()
    return {"value": count / (t1 - t0) / 1_048_576, "unit": "MiB/s", "ops": count, "seconds": t1 - t0,
            "cpu_user": cpu1[0] - cpu0[0], "cpu_sys": cpu1[1] - cpu0[1]}


async def handshakes(args):
    config = configuration()
    start = time.monotonic()
    measuring_from, end = start + args.warmup, start + args.warmup + args.duration
    total = measured = 0
    cpu0 = t0 = None
    closing = set()
    while True:
        now = time.monotonic()
        if cpu0 is None and now >= measuring_from:
            cpu0, t0, measured = cpu(), now, 0
        if now >= end:
            break
        # The handshake, then a close whose closing period runs in the background (as the other
        # clients' closes do), not before the next connection.
        context = connect(args.host, args.port + 500, configuration=config)
        client = await context.__aenter__()
        client.close()
        closing.add(asyncio.ensure_future(context.__aexit__(None, None, None)))
        closing = {task for task in closing if not task.done()}
        total += 1
        measured += 1
    t1, cpu1 = time.monotonic(), cpu()
    # (Outside the measured window: the last closing periods end.)
    await asyncio.gather(*closing, return_exceptions=True)
    return {"value": measured / (t1 - t0), "unit": "handshakes/s", "ops": measured, "seconds": t1 - t0,
            "cpu_user": cpu1[0] - cpu0[0], "cpu_sys": cpu1[1] - cpu0[1], "handshakes_total": total}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=["quic-bulk", "quic-handshake"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=19000)
    parser.add_argument("--size", type=int, default=65536)
    parser.add_argument("--duration", type=float, default=3)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--name")
    args = parser.parse_args()
    result = asyncio.run(bulk(args) if args.scenario == "quic-bulk" else handshakes(args))
    print(json.dumps({"impl": "python-aioquic", "scenario": args.name or args.scenario, **result}), flush=True)


if __name__ == "__main__":
    main()
