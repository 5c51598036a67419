# QUIC client for the QUIC listener tests (aioquic 1.7.2): connects to HOST PORT with ALPN
# "echo" (the server's certificate is checked against --cafile, for the name "localhost"),
# opens --streams N bidirectional streams at once, sends "message I" and the stream's end on
# each, and prints "echo I TEXT" for what comes back on stream I before its end; then
# "streams N" with the stream numbers used, and "done" after closing with no error. A
# handshake failure prints "failed REASON". --bulk N instead sends N bytes on one stream and
# checks the echo ("bulk N ok"); with --key-update the client updates its keys (RFC 9001, 6)
# halfway through and prints "key phase changed" once packets both ways use the new keys.
# --datagrams N (with the streams) sends N QUIC datagrams "datagram I" and prints "datagram
# TEXT" for each one that comes back, then "datagrams N ok" once all N did (within 5 s).
# Once connected it prints "retries N": how many Retry packets the server made it answer.
# --resume connects twice: the first connection exchanges "message 0" and keeps the server's
# session ticket; the second resumes with it and sends "early data" on a stream before its
# handshake is done (0-RTT), then prints "resumed R early E echo TEXT" (R, E: True/False, what
# its handshake reported) and "done".
import argparse, asyncio, ssl, sys
from aioquic.asyncio import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import DatagramFrameReceived, HandshakeCompleted


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.datagrams = asyncio.Queue()
        self.handshake = None

    def quic_event_received(self, event):
        if isinstance(event, DatagramFrameReceived):
            self.datagrams.put_nowait(event.data)
        if isinstance(event, HandshakeCompleted):
            self.handshake = event
        super().quic_event_received(event)


async def datagrams(client, count):
    for index in range(count):
        client._quic.send_datagram_frame(b"datagram %d" % index)
    client.transmit()
    seen = set()
    while len(seen) < count:
        data = await asyncio.wait_for(client.datagrams.get(), 5)
        print("datagram", data.decode(), flush=True)
        seen.add(data)
    print("datagrams", count, "ok", flush=True)


async def exchange(client, index):
    reader, writer = await client.create_stream()
    writer.write(b"message %d" % index)
    writer.write_eof()
    data = await reader.read()
    stream_id = writer.get_extra_info("stream_id")
    print("echo", index, data.decode(), flush=True)
    return stream_id


async def bulk(client, size, key_update):
    payload = bytes((index * 7919) % 251 for index in range(size))
    reader, writer = await client.create_stream()
    half = size // 2
    writer.write(payload[:half])
    await writer.drain()
    received = await reader.readexactly(half // 2)
    if key_update:
        pair = client._quic._cryptos[tls_epoch()]
        before = (pair.send.key_phase, pair.recv.key_phase)
        client._quic.request_key_update()
        client.transmit()
    writer.write(payload[half:])
    writer.write_eof()
    received += await reader.read()
    if key_update:
        pair = client._quic._cryptos[tls_epoch()]
        after = (pair.send.key_phase, pair.recv.key_phase)
        # Both ways: the client's packets use the new keys, and so do ours that answer them.
        changed = after[0] != before[0] and after[1] != before[1]
        print("key phase changed" if changed else "key phase unchanged %s %s" % (before, after), flush=True)
    print("bulk", size, "ok" if received == payload else "mismatch", flush=True)


async def resume(args, configuration):
    tickets = []
    async with connect(args.host, args.port, configuration=configuration, create_protocol=Client,
                       session_ticket_handler=tickets.append) as client:
        await exchange(client, 0)
        for _ in range(100):
            if tickets:
                break
            await asyncio.sleep(0.02)
        client.close(error_code=0)
    if not tickets:
        print("failed no session ticket", flush=True)
        sys.exit(1)
    configuration.session_ticket = tickets[-1]
    async with connect(args.host, args.port, configuration=configuration, create_protocol=Client,
                       wait_connected=False) as client:
        # Sent before the handshake is done: 0-RTT data when the ticket allows it.
        reader, writer = await client.create_stream()
        writer.write(b"early data")
        writer.write_eof()
        data = await asyncio.wait_for(reader.read(), 5)
        # (The echo needs the handshake done; wait_connected() would wait forever here.)
        for _ in range(250):
            if client.handshake:
                break
            await asyncio.sleep(0.02)
        event = client.handshake
        print("resumed", event.session_resumed, "early", event.early_data_accepted, "echo", data.decode(), flush=True)
        client.close(error_code=0)
    print("done", flush=True)


def tls_epoch():
    from aioquic.tls import Epoch
    return Epoch.ONE_RTT


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--streams", type=int, default=1)
    parser.add_argument("--bulk", type=int, default=0)
    parser.add_argument("--key-update", action="store_true")
    parser.add_argument("--datagrams", type=int, default=0)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    configuration = QuicConfiguration(
        is_client=True, alpn_protocols=["echo"], server_name="localhost", max_datagram_frame_size=65536)
    configuration.load_verify_locations(args.cafile)
    configuration.verify_mode = ssl.CERT_REQUIRED
    try:
        if args.resume:
            return await resume(args, configuration)
        async with connect(args.host, args.port, configuration=configuration, create_protocol=Client) as client:
            print("retries", client._quic._retry_count, flush=True)
            if args.datagrams:
                await datagrams(client, args.datagrams)
            if args.bulk:
                await bulk(client, args.bulk, args.key_update)
            else:
                streams = await asyncio.gather(*(exchange(client, index) for index in range(args.streams)))
                print("streams", " ".join(str(stream) for stream in sorted(streams)), flush=True)
            client.close(error_code=0)
        print("done", flush=True)
    except Exception as error:
        print("failed", repr(error), flush=True)
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
