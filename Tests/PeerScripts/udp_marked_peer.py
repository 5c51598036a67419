#!/usr/bin/env python3
"""A UDP peer that marks each datagram's IP header with a TOS / traffic-class byte of its own
(DSCP in the high six bits, ECN in the low two), for the per-packet metadata tests (loopback only).

  udp_marked_peer.py reply FAMILY TOS...       binds ::1 or 127.0.0.1 (FAMILY 6 or 4), prints
                                               "port N", waits for one datagram, then answers
                                               its sender with one datagram per TOS, in order,
                                               each saying "tos T"
  udp_marked_peer.py send FAMILY PORT TOS...   sends those datagrams to PORT on loopback
  udp_marked_peer.py report FAMILY COUNT [PORT]  binds as reply does (and first sends "hello" to
                                               PORT on loopback, if given), prints "port N", then for
                                               each of COUNT datagrams prints "got TOS PAYLOAD":
                                               the TOS / traffic-class byte the kernel read from
                                               its IP header (IP_RECVTOS / IPV6_RECVTCLASS)
"""
import socket
import sys


def marked(sock, family, tos):
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, tos)
    else:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)


def report(sock, family, count, hello):
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVTCLASS, 1)
    else:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
    print("port", sock.getsockname()[1], flush=True)
    if hello is not None:
        sock.sendto(b"hello", hello)
    for _ in range(count):
        data, ancillary, _, _ = sock.recvmsg(2048, socket.CMSG_SPACE(4))
        tos = -1
        for level, kind, value in ancillary:
            if (level, kind) in ((socket.IPPROTO_IP, socket.IP_TOS), (socket.IPPROTO_IPV6, socket.IPV6_TCLASS)):
                tos = int.from_bytes(value[:4] if len(value) >= 4 else value[:1], "little")
        print("got", tos, data.decode("utf-8", "replace"), flush=True)


def main():
    mode, family = sys.argv[1], socket.AF_INET6 if sys.argv[2] == "6" else socket.AF_INET
    host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.bind((host, 0))
    sock.settimeout(30)
    if mode == "report":
        report(sock, family, int(sys.argv[3]), (host, int(sys.argv[4])) if len(sys.argv) > 4 else None)
        return
    if mode == "reply":
        print("port", sock.getsockname()[1], flush=True)
        _, target = sock.recvfrom(2048)
        marks = sys.argv[3:]
    else:
        target = (host, int(sys.argv[3]))
        marks = sys.argv[4:]
    for tos in (int(value, 0) for value in marks):
        marked(sock, family, tos)
        sock.sendto(b"tos %d" % tos, target)
    print("sent", flush=True)


main()
