#!/usr/bin/env python3
"""python-zeroconf as the Bonjour tests' other mDNS stack.

Registers a service and/or browses a type, on every interface of the namespace it runs in,
and prints one line per event (flushed), for the test to wait on:
  registered NAME
  found NAME port=PORT addresses=A,B txt=k=v;flag server=HOST
  removed NAME
It stops (unregistering, which sends goodbyes) when its standard input closes or after
--seconds.
"""
import argparse
import socket
import sys
import threading
import time

from zeroconf import IPVersion, ServiceBrowser, ServiceInfo, ServiceStateChange, Zeroconf


def say(line):
    print(line, flush=True)


def txt_text(properties):
    parts = []
    for key, value in sorted(properties.items()):
        key = key.decode()
        parts.append(key if value is None else f"{key}={value.decode(errors='replace')}")
    return ";".join(parts)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--register")
    parser.add_argument("--type", default="_nwtest._tcp")
    parser.add_argument("--port", type=int, default=4242)
    parser.add_argument("--address", action="append", default=[])
    parser.add_argument("--host", default="zchost")
    parser.add_argument("--txt", action="append", default=[])
    parser.add_argument("--browse")
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()

    zc = Zeroconf(ip_version=IPVersion.All)
    info = None
    if args.register:
        properties = {}
        for item in args.txt:
            key, _, value = item.partition("=")
            properties[key.encode()] = value.encode() if "=" in item else None
        addresses = [socket.inet_pton(socket.AF_INET6 if ":" in a else socket.AF_INET, a) for a in args.address]
        info = ServiceInfo(
            f"{args.type}.local.", f"{args.register}.{args.type}.local.", port=args.port,
            addresses=addresses, properties=properties, server=f"{args.host}.local.")
        zc.register_service(info)
        say(f"registered {args.register}")

    def changed(zeroconf, service_type, name, state_change):
        instance = name[: -len(service_type) - 1]
        if state_change is ServiceStateChange.Removed:
            say(f"removed {instance}")
            return
        if state_change is not ServiceStateChange.Added:
            return
        found = zeroconf.get_service_info(service_type, name, timeout=3000)
        if found is None:
            say(f"unresolved {instance}")
            return
        addresses = ",".join(sorted(found.parsed_addresses()))
        say(f"found {instance} port={found.port} addresses={addresses} txt={txt_text(found.properties)} server={found.server}")

    if args.browse:
        ServiceBrowser(zc, f"{args.browse}.local.", handlers=[changed])

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    stop.wait(args.seconds)
    if info is not None:
        zc.unregister_service(info)
    zc.close()
    say("stopped")


if __name__ == "__main__":
    main()
