# QUIC client for the QUIC listener tests (aioquic 1.7.2): connects to HOST PORT with ALPN
# "echo" (the server's certificate is checked against --cafile, for the name "localhost"),
# opens --streams N bidirectional streams at once, sends "message I" and the stream's end on
# each, and prints "echo I TEXT" for what comes back on stream I before its end; then
# "streams N" with the stream numbers used, and "done" after closing with no error. A
# handshake failure prints "failed REASON".
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


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--streams", type=int, default=1)
    args = parser.parse_args()
    configuration = QuicConfiguration(is_client=True, alpn_protocols=["echo"], server_name="localhost")
    configuration.load_verify_locations(args.cafile)
    configuration.verify_mode = ssl.CERT_REQUIRED
    try:
        async with connect(args.host, args.port, configuration=configuration) as client:
            streams = await asyncio.gather(*(exchange(client, index) for index in range(args.streams)))
            print("streams", " ".join(str(stream) for stream in sorted(streams)), flush=True)
            client.close(error_code=0)
        print("done", flush=True)
    except Exception as error:
        print("failed", repr(error), flush=True)
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
