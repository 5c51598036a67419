# Captures the seed corpus of the quic-input fuzz target (Fuzz/Corpus/quic-input): what aioquic's
# server (Tests/PeerScripts/quic_peer.py, as the QUIC tests run it) sends our client
# (`nwcat connect --quic`) on 127.0.0.1, through a UDP relay that records it. Each file is the
# client's first Initial's destination and source connection IDs (a length byte and the bytes,
# each), then every datagram the server sent, behind a 2-byte big-endian length.
# Usage: python3 Fuzz/Corpus/capture_quic.py NWCAT   (NWCAT: a built nwcat, e.g. .build/debug/nwcat)
import os, socket, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "..", "..", "Tests", "PeerScripts", "quic_peer.py")


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def capture(nwcat, name, stdin, retry=False):
    work = tempfile.mkdtemp()
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", "2", "-subj", "/CN=localhost", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    server_port = free_udp_port()
    server = subprocess.Popen([sys.executable, PEER, "127.0.0.1", str(server_port), "--cert", cert, "--key", key]
                              + (["--retry"] if retry else []), stdout=subprocess.PIPE, text=True)
    server.stdout.readline()  # "listening PORT"
    relay = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    relay.bind(("127.0.0.1", 0))
    relay.settimeout(0.2)
    upstream = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    upstream.connect(("127.0.0.1", server_port))
    upstream.settimeout(0.2)
    state = {"client": None, "ids": None, "from_server": [], "stop": False}

    def client_side():
        while not state["stop"]:
            try:
                data, address = relay.recvfrom(65535)
            except socket.timeout:
                continue
            if state["ids"] is None and data and data[0] & 0x80:
                dcid_len = data[5]
                dcid = data[6:6 + dcid_len]
                scid_len = data[6 + dcid_len]
                scid = data[7 + dcid_len:7 + dcid_len + scid_len]
                state["ids"] = (dcid, scid)
            state["client"] = address
            upstream.send(data)

    def server_side():
        while not state["stop"]:
            try:
                data = upstream.recv(65535)
            except socket.timeout:
                continue
            state["from_server"].append(data)
            if state["client"]:
                relay.sendto(data, state["client"])

    threads = [threading.Thread(target=client_side), threading.Thread(target=server_side)]
    for thread in threads:
        thread.start()
    subprocess.run([nwcat, "connect", "--quic", "--alpn", "echo", "--insecure", "127.0.0.1", str(relay.getsockname()[1])],
                   input=stdin, capture_output=True, timeout=20)
    time.sleep(0.3)
    state["stop"] = True
    for thread in threads:
        thread.join()
    server.kill()
    dcid, scid = state["ids"]
    out = bytes([len(dcid)]) + dcid + bytes([len(scid)]) + scid
    for datagram in state["from_server"]:
        out += len(datagram).to_bytes(2, "big") + datagram
    os.makedirs(os.path.join(HERE, "quic-input"), exist_ok=True)
    with open(os.path.join(HERE, "quic-input", name), "wb") as f:
        f.write(out)
    print(name, len(state["from_server"]), "datagrams,", len(out), "bytes")


if __name__ == "__main__":
    nwcat = sys.argv[1]
    capture(nwcat, "echo", b"hello over quic\n")
    capture(nwcat, "retry", b"hello after retry\n", retry=True)
    capture(nwcat, "server-close", b"close:7")
    capture(nwcat, "server-push", b"push:3000")
