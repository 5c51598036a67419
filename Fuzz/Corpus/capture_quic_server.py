# Captures the seed corpus of the quic-server-input fuzz target (Fuzz/Corpus/quic-server-input):
# what aioquic's client (Tests/PeerScripts/quic_client.py, as the QUIC listener tests run it)
# sends our listener (`nwcat listen --quic --echo`) on 127.0.0.1, through a UDP relay that
# records it (udp_relay.py). Each file is every datagram the client sent, behind a 2-byte
# big-endian length.
# Usage: python3 Fuzz/Corpus/capture_quic_server.py NWCAT   (NWCAT: a built nwcat)
import os, re, subprocess, sys, tempfile, time
from udp_relay import RecordingRelay

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.join(HERE, "..", "..", "Tests", "PeerScripts", "quic_client.py")


def capture(nwcat, name, streams):
    work = tempfile.mkdtemp()
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    server = subprocess.Popen([nwcat, "listen", "0", "--quic", "--alpn", "echo", "--echo", "--cert", cert, "--key", key],
                              stderr=subprocess.PIPE, text=True)
    port = None
    while port is None:
        match = re.search(r"ready on port ([0-9]+)", server.stderr.readline())
        if match:
            port = int(match.group(1))
    relay = RecordingRelay(port)
    relay.start()
    subprocess.run([sys.executable, CLIENT, "127.0.0.1", str(relay.port), "--cafile", cert,
                    "--streams", str(streams)], capture_output=True, timeout=20)
    time.sleep(0.3)
    relay.stop()
    server.kill()
    out = b"".join(len(d).to_bytes(2, "big") + d for d in relay.from_client)
    os.makedirs(os.path.join(HERE, "quic-server-input"), exist_ok=True)
    with open(os.path.join(HERE, "quic-server-input", name), "wb") as f:
        f.write(out)
    print(name, len(relay.from_client), "datagrams,", len(out), "bytes")


if __name__ == "__main__":
    nwcat = sys.argv[1]
    capture(nwcat, "one-stream", 1)
    capture(nwcat, "five-streams", 5)
