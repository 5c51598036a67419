# WebSocket client for the WebSocket interop tests (python websockets 17.4): connects to URL
# (optional CAFILE for wss) offering the subprotocol "echo", runs one SCENARIO and prints what
# it saw, one "key value" line per fact, then "done".
#   echo             text and binary round trips
#   fragment         sends a text message in 3 fragments, reads the echo
#   ping             pings and waits for the pong
#   close CODE       closes with CODE and the reason "client bye"
#   big N            sends N bytes as one binary message and reads the echo
#   badutf8          sends a text frame that is not UTF-8
#   wait             waits for the server to close
import asyncio, ssl, sys
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


def say(key, value):
    print(f"{key} {value}", flush=True)


async def main():
    url, scenario = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    context = None
    if url.startswith("wss"):
        context = ssl.create_default_context(cafile=rest.pop())
    async with connect(url, ssl=context, subprotocols=["echo"], additional_headers={"X-Test": "python"},
                       ping_interval=None, max_size=None, compression=None) as ws:
        say("subprotocol", ws.subprotocol)
        try:
            if scenario == "echo":
                await ws.send("hello text")
                say("text", await ws.recv())
                await ws.send(b"\x00\x01binary")
                say("binary", (await ws.recv()).hex())
            elif scenario == "fragment":
                await ws.send(["frag", "mented ", "text"])
                say("text", await ws.recv())
            elif scenario == "ping":
                waiter = await ws.ping(b"ping-from-python")
                latency = await waiter
                say("pong", "ok")
            elif scenario == "close":
                await ws.close(int(rest[0]), "client bye")
            elif scenario == "big":
                size = int(rest[0])
                payload = bytes(i % 251 for i in range(size))
                await ws.send(payload)
                echoed = await ws.recv()
                say("big", f"{len(echoed)} {echoed == payload}")
            elif scenario == "badutf8":
                await ws.send(b"bad \xc3\x28 text", text=True)
                await ws.recv()
            elif scenario == "wait":
                await ws.recv()
        except ConnectionClosed:
            say("closed", f"{ws.close_code} {ws.close_reason or ''}".rstrip())
        if scenario in ("close", "badutf8", "wait"):
            await ws.wait_closed()
            say("closed", f"{ws.close_code} {ws.close_reason or ''}".rstrip())
    print("done", flush=True)


asyncio.run(main())
