#!/usr/bin/env python3
"""Sends an unsolicited mDNS announcement (a PTR from a service type to an instance) three
times from SOURCE port 5353 to 224.0.0.251, built with python-zeroconf's record classes. The
Bonjour tests send the same packet from an address on the receiver's subnet and from one that
is not (RFC 6762 section 11).

usage: mdns_announce.py SOURCE INSTANCE TYPE

Run it only inside a network namespace the tests made (`ip netns exec`): its multicast must
never leave through the machine's real interfaces.
"""
import socket
import sys
import time

from zeroconf import DNSOutgoing, DNSPointer
from zeroconf import const



def multicast_socket(source):
    """A UDP socket on SOURCE port 5353 whose multicasts leave from SOURCE with TTL 255."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((source, 5353))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(source))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
    return sock


def main():
    source, instance, service_type = sys.argv[1], sys.argv[2], sys.argv[3]
    out = DNSOutgoing(const._FLAGS_QR_RESPONSE | const._FLAGS_AA)
    out.add_answer_at_time(
        DNSPointer(f"{service_type}.local.", const._TYPE_PTR, const._CLASS_IN, 120, f"{instance}.{service_type}.local."), 0)
    sock = multicast_socket(source)
    for _ in range(3):
        for packet in out.packets():
            sock.sendto(packet, ("224.0.0.251", 5353))
        time.sleep(0.2)
    print(f"sent {instance} from {source}", flush=True)


if __name__ == "__main__":
    main()
