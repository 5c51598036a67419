# Captures the seed corpus of the quic-input fuzz target (Fuzz/Corpus/quic-input): what aioquic's
# server (Tests/PeerScripts/quic_peer.py, as the QUIC tests run it) sends our client
# (`nwcat connect --quic`) on 127.0.0.1, through a UDP relay that records it (udp_relay.py). Each file is the
# client's first Initial's destination and source connection IDs (a length byte and the bytes,
# each), then every datagram the server sent, behind a 2-byte big-endian length.
# Usage: python3 Fuzz/Corpus/capture_quic.py NWCAT   (NWCAT: a built nwcat, e.g. .build/debug/nwcat)
import os, socket, subprocess, sys, tempfile, time
from udp_relay import RecordingRelay

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
    relay = RecordingRelay(server_port)
    relay.start()
    subprocess.run([nwcat, "connect", "--quic", "--alpn", "echo", "--insecure", "127.0.0.1", str(relay.port)],
                   input=stdin, capture_output=True, timeout=20)
    time.sleep(0.3)
    relay.stop()
    server.kill()
    # The client's first Initial (a long header) names the connection IDs.
    first = next(data for data in relay.from_client if data and data[0] & 0x80)
    dcid = first[6:6 + first[5]]
    scid_len = first[6 + len(dcid)]
    scid = first[7 + len(dcid):7 + len(dcid) + scid_len]
    out = bytes([len(dcid)]) + dcid + bytes([len(scid)]) + scid
    for datagram in relay.from_server:
        out += len(datagram).to_bytes(2, "big") + datagram
    os.makedirs(os.path.join(HERE, "quic-input"), exist_ok=True)
    with open(os.path.join(HERE, "quic-input", name), "wb") as f:
        f.write(out)
    print(name, len(relay.from_server), "datagrams,", len(out), "bytes")


if __name__ == "__main__":
    nwcat = sys.argv[1]
    capture(nwcat, "echo", b"hello over quic\n")
    capture(nwcat, "retry", b"hello after retry\n", retry=True)
    capture(nwcat, "server-close", b"close:7")
    capture(nwcat, "server-push", b"push:3000")
