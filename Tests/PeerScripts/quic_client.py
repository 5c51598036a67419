# QUIC client for the QUIC listener tests (aioquic 1.7.2): connects to HOST PORT with ALPN
# "echo" (the server's certificate is checked against --cafile, for the name "localhost"),
# opens --streams N bidirectional streams at once, sends "message I" and the stream's end on
# each, and prints "echo I TEXT" for what comes back on stream I before its end; then
# "streams N" with the stream numbers used, and "done" after closing with no error. A
# handshake failure prints "failed REASON". --bulk N instead sends N bytes on one stream and
# checks the echo ("bulk N ok"); with --key-update the client updates its keys (RFC 9001, 6)
# halfway through and prints "key phase changed" once packets both ways use the new keys.
import argparse, asyncio, ssl, sys
from aioquic.asyncio import connect
from aioquic.quic.configuration import QuicConfiguration


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
    args = parser.parse_args()
    configuration = QuicConfiguration(is_client=True, alpn_protocols=["echo"], server_name="localhost")
    configuration.load_verify_locations(args.cafile)
    configuration.verify_mode = ssl.CERT_REQUIRED
    try:
        async with connect(args.host, args.port, configuration=configuration) as client:
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
