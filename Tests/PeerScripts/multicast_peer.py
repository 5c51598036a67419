#!/usr/bin/env python3
"""A multicast peer for the NWConnectionGroup tests: python's own socket module, the independent side.

    multicast_peer.py --log FILE --bind ADDRESS --port PORT [--join GROUP]... [--send ADDRESS]...
                      [--wildcard] [--interval SECONDS] [--seconds N]

Binds one UDP socket of ADDRESS's family to (ADDRESS, PORT) (PORT 0: any), joins each GROUP on the
interface that holds ADDRESS, and every INTERVAL sends "from ADDRESS SEQ" to each --send target
(ADDRESS:PORT, [v6]:PORT). Every datagram it receives is appended to FILE as one line,
"SOURCE_ADDRESS SOURCE_PORT PAYLOAD", flushed at once; the first line is "ready PORT" (its port).
Ends after N seconds (default 120) or on SIGTERM.
"""
import argparse
import ipaddress
import select
import signal
import socket
import struct
import sys
import time


def target(text):
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)


def interface_index(address):
    # The interface that holds ADDRESS: /proc/net/if_inet6 for IPv6, the SIOCGIFADDR-free way for
    # IPv4 is IP_ADD_MEMBERSHIP's own interface-address field, so only IPv6 needs an index.
    with open("/proc/net/if_inet6") as table:
        packed = ipaddress.IPv6Address(address).packed.hex()
        for line in table:
            fields = line.split()
            if fields[0] == packed:
                return int(fields[1], 16)
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--bind", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--join", action="append", default=[])
    parser.add_argument("--send", action="append", default=[], type=target)
    parser.add_argument("--wildcard", action="store_true", help="bind to the wildcard address (to receive broadcasts)")
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--seconds", type=float, default=120)
    options = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    v6 = ":" in options.bind
    sock = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Bound to the wildcard when joining (a socket bound to a unicast address gets no multicast).
    # (And to receive broadcasts, which never reach a socket bound to a unicast address.)
    wildcard = options.join or options.wildcard
    sock.bind(("::" if v6 else "0.0.0.0", options.port) if wildcard else (options.bind, options.port))
    if v6:
        index = interface_index(options.bind)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
        for group in options.join:
            request = socket.inet_pton(socket.AF_INET6, group) + struct.pack("@I", index)
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, request)
    else:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(options.bind))
        for group in options.join:
            request = socket.inet_aton(group) + socket.inet_aton(options.bind)
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, request)
    # Sends from the wildcard-bound socket still leave from ADDRESS: the interface above.

    log = open(options.log, "a", buffering=1)
    log.write(f"ready {sock.getsockname()[1]}\n")
    end = time.monotonic() + options.seconds
    next_send = time.monotonic()
    sequence = 0
    while time.monotonic() < end:
        timeout = max(0.0, next_send - time.monotonic())
        readable, _, _ = select.select([sock], [], [], timeout)
        if readable:
            data, source = sock.recvfrom(65536)
            log.write(f"{source[0]} {source[1]} {data.decode(errors='replace')}\n")
        if time.monotonic() >= next_send:
            for host, port in options.send:
                try:
                    sock.sendto(f"from {options.bind} {sequence}".encode(), (host, port))
                except OSError as error:
                    log.write(f"error {error}\n")
            sequence += 1
            next_send += options.interval


if __name__ == "__main__":
    main()
