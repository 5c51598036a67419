"""Writes the mdns-input seed corpus (Fuzz/README.md): the mDNS datagrams python-zeroconf 0.154.0
sends while it registers a service (probes, announcements) and browses for it (queries, the
answers), each prefixed with the target's flag byte (0: from port 5353). Run as root from the
repository root with a python that has zeroconf; it makes its own network namespace (loopback
with multicast) so nothing leaves the machine:
    unshare -n python3 Fuzz/Corpus/capture_mdns.py
"""
import os
import socket
import struct
import subprocess
import threading
import time

from zeroconf import IPVersion, ServiceBrowser, ServiceInfo, Zeroconf

subprocess.run(["ip", "link", "set", "lo", "up", "multicast", "on"], check=True)
subprocess.run(["ip", "route", "add", "224.0.0.0/4", "dev", "lo", "src", "127.0.0.1"], check=True)

capture = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
capture.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
capture.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
capture.bind(("0.0.0.0", 5353))
capture.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, struct.pack("4s4s", socket.inet_aton("224.0.0.251"), socket.inet_aton("127.0.0.1")))
capture.settimeout(0.2)

seen = []
def read():
    end = time.time() + 6
    while time.time() < end:
        try:
            data, _ = capture.recvfrom(9000)
        except socket.timeout:
            continue
        if data not in seen:
            seen.append(data)

reader = threading.Thread(target=read)
reader.start()
zc = Zeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
info = ServiceInfo("_fuzz._tcp.local.", "Fuzz Seed._fuzz._tcp.local.", port=7, addresses=[socket.inet_aton("127.0.0.1")],
                   properties={b"k": b"v", b"flag": None}, server="seed.local.")
zc.register_service(info)
browser = ServiceBrowser(zc, "_fuzz._tcp.local.", handlers=[lambda **kw: None])
zc.get_service_info("_fuzz._tcp.local.", "Fuzz Seed._fuzz._tcp.local.", timeout=2000)
time.sleep(1)
zc.unregister_service(info)
zc.close()
reader.join()

directory = os.path.join(os.path.dirname(__file__), "mdns-input")
for index, data in enumerate(seen):
    with open(os.path.join(directory, f"zeroconf-{index:02d}"), "wb") as f:
        f.write(b"\x00" + data)
print(f"{len(seen)} datagrams")
