# Captures Fuzz/Corpus/websocket-frames: the raw bytes python websockets 17.4 (Tests/PeerScripts/
# ws_server.py, as the WebSocket tests run it) sends a client after its 101 response, on
# 127.0.0.1. Usage: python3 capture_websocket.py OUTPUT_DIRECTORY
import base64, os, socket, struct, subprocess, sys, time

here = os.path.dirname(os.path.abspath(__file__))
server_script = os.path.join(here, "..", "..", "Tests", "PeerScripts", "ws_server.py")
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
server = subprocess.Popen([sys.executable, server_script, "127.0.0.1", "0"], stdout=subprocess.PIPE, text=True)
port = int(server.stdout.readline().split()[1])


def frame(opcode, payload, fin=True):
    mask = os.urandom(4)
    header = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    header += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack("!H", n)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def capture(name, path, sends=(), wait=1.0):
    s = socket.create_connection(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    frames = data.split(b"\r\n\r\n", 1)[1]
    for send in sends:
        s.sendall(send)
    s.settimeout(wait)
    try:
        while chunk := s.recv(65536):
            frames += chunk
    except socket.timeout:
        pass
    s.close()
    with open(os.path.join(out, f"python-{name}"), "wb") as f:
        f.write(frames)


try:
    capture("echo-text-binary", "/echo", [frame(1, "héllo".encode()), frame(2, bytes(range(200)))])
    capture("fragmented", "/fragment", [frame(1, b"a fragmented text message"), frame(2, bytes(300))])
    capture("ping", "/ping", [], wait=0.5)
    capture("close-4001", "/close/4001")
    capture("invalid-utf8", "/badutf8", [], wait=0.5)
    capture("binary-70000", "/send/70000", [frame(8, struct.pack("!H", 1000))])
    capture("close-reply-3001", "/echo", [frame(8, struct.pack("!H", 3001) + b"bye")])
finally:
    server.kill()
