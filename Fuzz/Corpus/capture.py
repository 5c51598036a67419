# Captures the seed corpora from real peers (see capture.sh, which starts them).
# usage: python3 capture.py KIND PORT OUTDIR [ECHOPORT]
#   dns        UDP replies from a DNS server (one file per reply), and its TCP byte streams
#   socks5     what a SOCKS5 proxy (no auth) sends back, byte for byte, up to tunnel data
#   socks5auth what a user/password SOCKS5 proxy sends back to a wrong password
#   http       what an HTTP CONNECT proxy answers, with tunnel data after a 200
#   dtls       the first datagram a DTLS client sends (its ClientHello), with PORT listening
import os, random, socket, struct, sys, time

kind, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
echo = int(sys.argv[4]) if len(sys.argv) > 4 and kind != "dtls" else 0
os.makedirs(out, exist_ok=True)

def save(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)

def query(name, qtype, edns=True, qid=None):
    qid = random.randrange(65536) if qid is None else qid
    wire = b"".join(bytes([len(l)]) + l.encode() for l in name.rstrip(".").split(".")) + b"\0"
    body = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 1 if edns else 0) + wire + struct.pack(">HH", qtype, 1)
    if edns:
        body += b"\0" + struct.pack(">HHIH", 41, 1232, 0, 0)
    return body

def receive_all(s, timeout=1.0):
    s.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    return data

if kind == "dns":
    TYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "MX": 15, "TXT": 16, "AAAA": 28, "SRV": 33,
             "HTTPS": 65, "ANY": 255}
    asks = [("dual.test", "A"), ("dual.test", "AAAA"), ("alias.test", "A"), ("alias.test", "AAAA"),
            ("_nw._tcp.test", "SRV"), ("txt.test", "TXT"), ("missing.test", "A"), ("dual.test", "MX"),
            ("dual.test", "HTTPS"), ("many.test", "A"), ("2.0.77.10.in-addr.arpa", "PTR"), ("outside.example", "A"),
            ("dual.test", "ANY"), ("test", "SOA")]
    for name, qtype in asks:
        for edns in (True, False):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(2)
            s.sendto(query(name, TYPES[qtype], edns), ("127.0.0.1", port))
            reply, _ = s.recvfrom(65536)
            save(f"udp-{name}-{qtype}{'-edns' if edns else ''}", reply)
    # TCP: several queries on one connection; the stream as it arrived (dns-stream corpus).
    for group, names in (("addresses", [("dual.test", "A"), ("dual.test", "AAAA"), ("alias.test", "A")]),
                         ("records", [("txt.test", "TXT"), ("_nw._tcp.test", "SRV"), ("missing.test", "A")])):
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        for name, qtype in names:
            q = query(name, TYPES[qtype])
            s.sendall(struct.pack(">H", len(q)) + q)
        time.sleep(0.3)
        s.shutdown(socket.SHUT_WR)
        save(f"tcp-stream-{group}", receive_all(s))

elif kind == "socks5":
    # Offers no-auth and user/password, as the client does with a credential.
    cases = {"connect-echo": ("127.0.0.1", echo), "connect-refused": ("127.0.0.1", 9), "connect-name": ("localhost", echo)}
    for name, (host, target) in cases.items():
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(b"\x05\x02\x00\x02")
        received = s.recv(2)
        if host[0].isdigit():
            request = b"\x05\x01\x00\x01" + socket.inet_aton(host) + struct.pack(">H", target)
        else:
            request = b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode() + struct.pack(">H", target)
        s.sendall(request)
        time.sleep(0.3)
        s.sendall(b"ping through the tunnel")
        received += receive_all(s)
        save(name, received)

elif kind == "socks5auth":
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    s.sendall(b"\x05\x02\x00\x02")
    received = s.recv(2)
    s.sendall(b"\x01\x04nope\x05wrong")
    received += receive_all(s)
    save("auth-refused", received)

elif kind == "http":
    import base64
    cases = {"connect-echo": echo, "connect-refused": 9}
    for name, target in cases.items():
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(f"CONNECT 127.0.0.1:{target} HTTP/1.1\r\nHost: 127.0.0.1:{target}\r\n\r\n".encode())
        time.sleep(0.3)
        s.sendall(b"ping through the tunnel")
        save(name, receive_all(s))
    if echo:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        auth = base64.b64encode(b"user:wrong").decode()
        s.sendall(f"CONNECT 127.0.0.1:{echo} HTTP/1.1\r\nProxy-Authorization: Basic {auth}\r\n\r\n".encode())
        save("connect-bad-credential", receive_all(s))

elif kind == "dtls":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", port))
    s.settimeout(10)
    data, _ = s.recvfrom(65536)
    save(sys.argv[4] if len(sys.argv) > 4 else "client-hello", data)
