#!/usr/bin/env python3
"""A UDP peer that marks each datagram's IP header with a TOS / traffic-class byte of its own
(DSCP in the high six bits, ECN in the low two), for the per-packet metadata tests (loopback only).

  udp_marked_peer.py reply FAMILY TOS...       binds ::1 or 127.0.0.1 (FAMILY 6 or 4), prints
                                               "port N", waits for one datagram, then answers
                                               its sender with one datagram per TOS, in order,
                                               each saying "tos T"
  udp_marked_peer.py send FAMILY PORT TOS...   sends those datagrams to PORT on loopback
"""
import socket
import sys


def marked(sock, family, tos):
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, tos)
    else:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)


def main():
    mode, family = sys.argv[1], socket.AF_INET6 if sys.argv[2] == "6" else socket.AF_INET
    host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.bind((host, 0))
    sock.settimeout(30)
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
