#!/usr/bin/env python3
"""A multicast peer for the NWConnectionGroup tests: python's own socket module, the independent side.

    multicast_peer.py --log FILE --bind ADDRESS --port PORT [--join GROUP]... [--send ADDRESS]...
                      [--wildcard] [--bind-group] [--broadcast] [--interval SECONDS] [--seconds N] [--report-tos] [--every-tos]
                      [--flood N --sources M --start-when FILE]

Binds one UDP socket of ADDRESS's family to (ADDRESS, PORT) (PORT 0: any), joins each GROUP on the
interface that holds ADDRESS, and every INTERVAL sends "from ADDRESS SEQ" to each --send target
(ADDRESS:PORT, [v6]:PORT). Every datagram it receives is appended to FILE as one line,
"SOURCE_ADDRESS SOURCE_PORT PAYLOAD", flushed at once; the first line is "ready PORT" (its port).
Ends after N seconds (default 120) or on SIGTERM.

--broadcast lets it send to broadcast addresses (SO_BROADCAST).
--bind-group binds to the first GROUP instead of the wildcard address (only its datagrams arrive).
--report-tos adds " tos=N" to each line (the datagram's TOS / traffic-class byte, IPv4 and IPv6).
--every-tos (IPv4) sends datagram SEQ with the TOS byte SEQ % 256 and the payload "tos N SEQ": a
hostile sender that sets every bit. --flood N sends, once FILE exists, N datagrams "flood K" to the
--send targets as fast as it can from M sockets of their own (M source ports), round robin, then
logs "flooded N" and goes on as before.
"""
import argparse
import ipaddress
import os
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


def flood(count, sources, bind, targets, v6):
    family = socket.AF_INET6 if v6 else socket.AF_INET
    sockets = []
    for _ in range(sources):
        one = socket.socket(family, socket.SOCK_DGRAM)
        one.bind((bind, 0))
        if not v6:
            one.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(bind))
        sockets.append(one)
    for index in range(count):
        for host, port in targets:
            try:
                sockets[index % sources].sendto(f"flood {index}".encode(), (host, port))
            except OSError:
                # A full send buffer (ENOBUFS) loses the datagram: a flood does not wait.
                pass
    for one in sockets:
        one.close()


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
    parser.add_argument("--broadcast", action="store_true", help="allow sending to broadcast addresses (SO_BROADCAST)")
    parser.add_argument("--report-tos", action="store_true")
    parser.add_argument("--bind-group", action="store_true", help="bind to the first --join group, not the wildcard")
    parser.add_argument("--every-tos", action="store_true")
    parser.add_argument("--flood", type=int, default=0)
    parser.add_argument("--sources", type=int, default=1)
    parser.add_argument("--start-when")
    options = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    v6 = ":" in options.bind
    sock = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Bound to the wildcard when joining (a socket bound to a unicast address gets no multicast).
    # (And to receive broadcasts, which never reach a socket bound to a unicast address.)
    wildcard = options.join or options.wildcard
    if options.bind_group:
        # Bound to the first group: that group's datagrams only, no unicast (which, with two
        # sockets on one port, the kernel hands to one of them alone).
        sock.bind((options.join[0], options.port))
    else:
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

    if options.broadcast:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    if options.report_tos:
        if v6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVTCLASS, 1)
        else:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)

    log = open(options.log, "a", buffering=1)
    log.write(f"ready {sock.getsockname()[1]}\n")
    end = time.monotonic() + options.seconds
    next_send = time.monotonic()
    sequence = 0
    while time.monotonic() < end:
        timeout = max(0.0, next_send - time.monotonic())
        if options.flood:
            # (Look for the flood's trigger often.)
            timeout = min(timeout, 0.05)
        readable, _, _ = select.select([sock], [], [], timeout)
        if readable:
            data, ancillary, _, source = sock.recvmsg(65536, socket.CMSG_SPACE(4))
            suffix = ""
            for level, kind, value in ancillary:
                if (level, kind) in ((socket.IPPROTO_IP, socket.IP_TOS), (socket.IPPROTO_IPV6, socket.IPV6_TCLASS)):
                    # IP_TOS comes as one byte, IPV6_TCLASS as an int.
                    suffix = f" tos={value[0] if len(value) == 1 else struct.unpack('@i', value[:4])[0]}"
            log.write(f"{source[0]} {source[1]} {data.decode(errors='replace')}{suffix}\n")
        if options.flood and options.start_when and os.path.exists(options.start_when):
            flood(options.flood, options.sources, options.bind, options.send, v6)
            log.write(f"flooded {options.flood}\n")
            options.flood = 0
        if time.monotonic() >= next_send:
            tos = sequence % 256
            if options.every_tos:
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
            for host, port in options.send:
                payload = f"tos {tos} {sequence}" if options.every_tos else f"from {options.bind} {sequence}"
                try:
                    sock.sendto(payload.encode(), (host, port))
                except OSError as error:
                    log.write(f"error {error}\n")
            sequence += 1
            next_send += options.interval


if __name__ == "__main__":
    main()
