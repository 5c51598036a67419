# WebSocket peer for the WebSocket interop tests (python websockets 17.4), serving on HOST PORT
# (0: any port; the port is printed as "listening PORT"). Optional: --cert/--key for wss.
# What it does depends on the request path:
#   /echo            echoes every message (text as text, binary as binary)
#   /fragment        echoes every message cut into 3 fragments
#   /ping            pings the client, and when the pong comes sends the text "pong ok"; then echoes
#   /close/CODE      closes at once with CODE and the reason "bye"
#   /badutf8         sends a text frame that is not UTF-8
#   /send/N          sends one binary message of N bytes, then echoes
#   /reject          answers 403 instead of upgrading
# Every connection's end is printed as "closed CODE REASON" (the client's close frame).
# The subprotocol "echo" is chosen when offered; an X-Test request header comes back as X-Reply.
import argparse, asyncio, ssl, sys
from http import HTTPStatus
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


def pick(conn, offered):  # accept "echo" if offered, and clients that offer none
    return "echo" if "echo" in offered else None


def process_request(conn, request):
    if request.path == "/reject":
        return conn.respond(HTTPStatus.FORBIDDEN, "rejected\n")
    return None


def process_response(conn, request, response):
    response.headers["X-Reply"] = request.headers.get("X-Test", "none")
    return None


async def echo(ws, fragments=1):
    async for message in ws:
        if fragments == 1:
            await ws.send(message)
        else:
            step = max(1, len(message) // fragments)
            await ws.send([message[i:i + step] for i in range(0, len(message), step)] or [message])


async def handler(ws):
    path = ws.request.path
    try:
        if path == "/fragment":
            await echo(ws, fragments=3)
        elif path == "/ping":
            waiter = await ws.ping(b"ping-from-python")
            await waiter
            await ws.send("pong ok")
            await echo(ws)
        elif path.startswith("/close/"):
            await ws.close(int(path.split("/")[2]), "bye")
        elif path == "/badutf8":
            await ws.send(b"bad \xc3\x28 text", text=True)
            await ws.wait_closed()
        elif path.startswith("/send/"):
            await ws.send(bytes(i % 251 for i in range(int(path.split("/")[2]))))
            await echo(ws)
        else:
            await echo(ws)
    except ConnectionClosed:
        pass
    finally:
        await ws.wait_closed()
        code = ws.close_code
        print(f"closed {code} {ws.close_reason or ''}".rstrip(), flush=True)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    async with serve(handler, args.host, args.port, ssl=context, select_subprotocol=pick,
                     process_request=process_request, process_response=process_response,
                     ping_interval=None, max_size=None, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"listening {port}", flush=True)
        await server.serve_forever()


asyncio.run(main())
