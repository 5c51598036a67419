#!/usr/bin/env python3
"""A hostile host on the link: announces COUNT distinct instances of a service type (a PTR and
a TXT record each, PER_PACKET instances to a datagram) from SOURCE port 5353 to 224.0.0.251, as
fast as it can, then prints how many datagrams it sent.

usage: mdns_flood.py SOURCE TYPE COUNT [PER_PACKET]

Run it only inside a network namespace the tests made (`ip netns exec`): its multicast must
never leave through the machine's real interfaces.
"""
import sys

from mdns_announce import multicast_socket
from zeroconf import DNSOutgoing, DNSPointer, DNSText
from zeroconf import const

source, service_type, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
per_packet = int(sys.argv[4]) if len(sys.argv) > 4 else 8
sock = multicast_socket(source)
sent = 0
for first in range(0, count, per_packet):
    out = DNSOutgoing(const._FLAGS_QR_RESPONSE | const._FLAGS_AA)
    for index in range(first, min(first + per_packet, count)):
        instance = f"Flood {index:06d}.{service_type}.local."
        out.add_answer_at_time(DNSPointer(f"{service_type}.local.", const._TYPE_PTR, const._CLASS_IN, 4500, instance), 0)
        out.add_answer_at_time(DNSText(instance, const._TYPE_TXT, const._CLASS_IN | const._CLASS_UNIQUE, 4500, b"\x05k=abc"), 0)
    for packet in out.packets():
        sock.sendto(packet, ("224.0.0.251", 5353))
        sent += 1
print(f"sent {sent} datagrams", flush=True)
