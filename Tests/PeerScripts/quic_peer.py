# QUIC peer for the QUIC interop tests (aioquic 1.7.2): a server on HOST PORT with --cert/--key
# (0: any port; the port is printed as "listening PORT"), ALPN "echo".
# Every bidirectional stream a client opens is echoed: its bytes come back on the same stream,
# and the stream's end (FIN) when the client's comes. A stream whose first bytes are
#   "close:N"   makes the server close the connection with application error N
#   "reset:N"   makes the server reset that stream with application error N
#   "push:N"    makes the server open a stream of its own and send N bytes on it, then FIN
# A unidirectional stream the client opens is collected to its end, printed as "uni STREAM
# LENGTH", and answered on a unidirectional stream of the server's: "uni:" and the bytes, then FIN.
# Datagrams (RFC 9221) are echoed (--no-datagrams: the server announces none); one too large for
# aioquic's own 1,200-byte packets is printed as "datagram received LENGTH" instead. A datagram
#   "burst:N"   is answered with N datagrams "burst I" (I from 0). Each connection's end is printed as "closed CODE", a stream
# the client resets as "reset STREAM CODE".
# --tickets: the server issues session tickets and takes 0-RTT data from clients resuming with
# one; each handshake is printed as "handshake resumed R early E" (R, E: True/False).
import argparse, asyncio, sys
from aioquic.asyncio import serve
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import (ConnectionTerminated, DatagramFrameReceived, HandshakeCompleted, StreamDataReceived, StreamReset)


TICKETS = False


class Echo(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.unidirectional = {}

    def quic_event_received(self, event):
        quic = self._quic
        if isinstance(event, StreamDataReceived) and event.stream_id & 2:
            collected = self.unidirectional.get(event.stream_id, b"") + event.data
            self.unidirectional[event.stream_id] = collected
            if event.end_stream:
                del self.unidirectional[event.stream_id]
                print("uni", event.stream_id, len(collected), flush=True)
                answer = quic.get_next_available_stream_id(is_unidirectional=True)
                quic.send_stream_data(answer, b"uni:" + collected, end_stream=True)
        elif isinstance(event, StreamDataReceived):
            data = event.data
            if data.startswith(b"close:"):
                quic.close(error_code=int(data[6:]), reason_phrase="asked")
            elif data.startswith(b"reset:"):
                quic.reset_stream(event.stream_id, int(data[6:]))
            elif data.startswith(b"push:"):
                pushed = quic.get_next_available_stream_id()
                quic.send_stream_data(pushed, b"p" * int(data[5:]), end_stream=True)
                quic.send_stream_data(event.stream_id, b"pushed", end_stream=event.end_stream)
            else:
                try:
                    quic.send_stream_data(event.stream_id, data, end_stream=event.end_stream)
                except RuntimeError:
                    pass  # the client asked us to stop sending on this stream (STOP_SENDING)
        elif isinstance(event, DatagramFrameReceived):
            if event.data.startswith(b"burst:"):
                for index in range(int(event.data[6:])):
                    quic.send_datagram_frame(b"burst %d" % index)
            elif len(event.data) > 1160:
                print("datagram received", len(event.data), flush=True)
            else:
                quic.send_datagram_frame(event.data)
        elif isinstance(event, StreamReset):
            print("reset", event.stream_id, event.error_code, flush=True)
        elif isinstance(event, ConnectionTerminated):
            print("closed", event.error_code, flush=True)
        elif isinstance(event, HandshakeCompleted) and TICKETS:
            print("handshake resumed", event.session_resumed, "early", event.early_data_accepted, flush=True)
        self.transmit()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--retry", action="store_true")
    parser.add_argument("--no-datagrams", action="store_true")
    parser.add_argument("--tickets", action="store_true")
    args = parser.parse_args()
    configuration = QuicConfiguration(
        is_client=False, alpn_protocols=["echo"], max_datagram_frame_size=None if args.no_datagrams else 65536)
    configuration.load_cert_chain(args.cert, args.key)
    tickets = {}
    extra = {}
    if args.tickets:
        global TICKETS
        TICKETS = True
        extra = dict(session_ticket_fetcher=lambda label: tickets.pop(label, None), session_ticket_handler=lambda t: tickets.__setitem__(t.ticket, t))
    server = await serve(args.host, args.port, configuration=configuration, create_protocol=Echo, retry=args.retry, **extra)
    port = server._transport.get_extra_info("sockname")[1]
    print("listening", port, flush=True)
    await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
