#!/usr/bin/env python3
"""A UDP peer for the segmentation-offload tests (loopback only). Datagram number i carries i as
two big-endian bytes, then the byte i % 251 repeated to its length, so a reader can tell each
one's place and check that it arrived whole.

  udp_offload_peer.py receive FAMILY GRO COUNT [PORT]
        binds ::1 or 127.0.0.1 (FAMILY 6 or 4), with UDP_GRO on when GRO is 1, prints "port N",
        sends "hello" to PORT on loopback when given, then reads until COUNT datagrams arrived, printing for each read "read LENGTH SEGMENT"
        (SEGMENT: the size the kernel says the coalesced datagrams were, 0 when it says none)
        and, cutting each read back into its datagrams, "dgram INDEX LENGTH ok|bad"; then "done".
  udp_offload_peer.py burst FAMILY PORT COUNT SIZE LAST
        binds as receive does, prints "port N", sends "hello" to PORT on loopback when PORT is
        not 0, waits for a datagram (PORT 0: its sender is who the burst goes to; else it is
        ignored and the burst goes to PORT), and sends the burst with ONE sendmsg segmented by
        the kernel (UDP_SEGMENT): COUNT datagrams of SIZE bytes, then one of LAST bytes when
        LAST > 0; prints "sent". Stays until stdin closes.
"""
import socket
import struct
import sys

SOL_UDP = 17
UDP_SEGMENT = 103
UDP_GRO = 104


def datagram(index, length):
    head = struct.pack(">H", index & 0xFFFF)
    return (head + bytes([index % 251]) * max(0, length - 2))[:length]


def bound(family):
    af = socket.AF_INET6 if family == "6" else socket.AF_INET
    sock = socket.socket(af, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind(("::1" if af == socket.AF_INET6 else "127.0.0.1", 0))
    return sock, af


def receive(family, gro, count, hello):
    sock, af = bound(family)
    if gro:
        sock.setsockopt(SOL_UDP, UDP_GRO, 1)
    print("port", sock.getsockname()[1], flush=True)
    if hello:
        sock.sendto(b"hello", ("::1" if af == socket.AF_INET6 else "127.0.0.1", hello))
    seen = 0
    while seen < count:
        data, ancillary, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(4))
        segment = 0
        for level, kind, value in ancillary:
            if (level, kind) == (SOL_UDP, UDP_GRO):
                segment = int.from_bytes(value[:2], sys.byteorder)
        print("read", len(data), segment, flush=True)
        step = segment if segment > 0 else max(1, len(data))
        pieces = [data[i:i + step] for i in range(0, len(data), step)] or [b""]
        for piece in pieces:
            index = struct.unpack(">H", piece[:2])[0] if len(piece) >= 2 else -1
            ok = index >= 0 and piece == datagram(index, len(piece))
            print("dgram", index, len(piece), "ok" if ok else "bad", flush=True)
            seen += 1
    print("done", flush=True)


def burst(family, port, count, size, last):
    sock, af = bound(family)
    host = "::1" if af == socket.AF_INET6 else "127.0.0.1"
    print("port", sock.getsockname()[1], flush=True)
    if port:
        sock.sendto(b"hello", (host, port))
    _, sender = sock.recvfrom(65536)
    target = sender if port == 0 else (host, port)
    payload = b"".join(datagram(i, size) for i in range(count))
    if last > 0:
        payload += datagram(count, last)
    sock.sendmsg([payload], [(SOL_UDP, UDP_SEGMENT, struct.pack("=H", size))], 0, target)
    print("sent", flush=True)
    sys.stdin.read()


def main():
    mode = sys.argv[1]
    if mode == "receive":
        receive(sys.argv[2], sys.argv[3] == "1", int(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5 else 0)
    elif mode == "burst":
        burst(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
