"""Writes the txt-record seed corpus (Fuzz/README.md): TXT record RDATA as python-zeroconf
0.136.2 encodes a service's properties, an independent DNS-SD implementation. Run with a python
that has zeroconf (python3 -m pip install zeroconf==0.136.2) from the repository root."""
import os

from zeroconf import ServiceInfo

CASES = {
    "zeroconf-mixed": {"path": "/index.html", "flag": None, "empty": "", "bin": b"\xff\x00\x01", "Case": "1"},
    "zeroconf-empty": {},
    "zeroconf-airplay": {"deviceid": "AA:BB:CC:DD:EE:FF", "features": "0x5A7FFFF7,0x1E", "model": "AppleTV5,3",
                         "srcvers": "220.68", "vv": "2", "pk": "b07727d6f6cd6e08b58ede525ec3cdeaa252ad9f683feb212ef8a205246554e7"},
    "zeroconf-long": {"k": "v" * 253},
    "zeroconf-utf8": {"name": "Caf\u00e9 \u2615", "txtvers": "1"},
}

directory = os.path.join(os.path.dirname(__file__), "txt-record")
for name, properties in CASES.items():
    info = ServiceInfo("_test._tcp.local.", "x._test._tcp.local.", port=1, properties=properties)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(info.text)
