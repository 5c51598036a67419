#!/usr/bin/env python3
"""A peer for the game protocol (4-byte type, 4-byte length, big-endian, then the payload),
written apart from our framer. Prints "port N" once listening on 127.0.0.1, takes one
connection, and when the peer closes prints "frames N" (and "bad at I" for the first frame
out of order). Modes:
  echo              answers every frame with the same payload and type + 1000
  sink SECONDS      reads nothing for SECONDS (the client's sends back up), then reads all;
                    every payload starts with its index (4 bytes, big-endian) in each sender's
                    order: type 1 and type 2 count separately
"""
import socket
import struct
import sys
import time

mode = sys.argv[1]
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(1)
print("port", server.getsockname()[1], flush=True)
conn, _ = server.accept()
if mode == "sink":
    time.sleep(float(sys.argv[2]))
buffer = bytearray()
frames = 0
expected = {}
bad = None
while True:
    chunk = conn.recv(1 << 20)
    if not chunk:
        break
    buffer += chunk
    out = bytearray()
    while len(buffer) >= 8:
        kind, length = struct.unpack(">II", buffer[:8])
        if len(buffer) < 8 + length:
            break
        payload = bytes(buffer[8:8 + length])
        del buffer[:8 + length]
        if mode == "echo":
            out += struct.pack(">II", kind + 1000, length) + payload
        else:
            index = struct.unpack(">I", payload[:4])[0] if length >= 4 else -1
            if bad is None and index != expected.get(kind, 0):
                bad = frames
            expected[kind] = index + 1
        frames += 1
    if out:
        conn.sendall(out)
print("frames", frames, flush=True)
if bad is not None:
    print("bad at", bad, flush=True)
conn.close()
