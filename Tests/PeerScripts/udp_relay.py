# A UDP relay between one client and one server on loopback, for the QUIC listener's tests of
# clients that move: it prints "relay PORT CONTROL" (the port clients send to, and a control
# port), forwards every datagram the client sends to the server (from its "outside" socket) and
# the server's answers back, and keeps the last short-header packet the client sent.
# Commands, one per datagram to the control port (each answered "ok" or "none"):
#   rebind   the client's datagrams leave from a new outside socket from now on, and the old one
#            is closed (a NAT rebinding: the server must follow, its answers to the old address
#            are refused)
#   replay   sends the kept packet again to the server, from a socket of its own (a spoofed copy)
#   forge    the same with its last byte changed (fails authentication)
#   attacker answers how many datagrams reached that socket of its own
#   pause    drops what the client sends until "resume" (so nothing of the client's can undo
#            what a copy did)
#   sizes    answers the largest datagram relayed so far, in bytes, as four numbers: client to
#            server starting with a long-header packet (the handshake's), client to server with a
#            short header, then the same two from the server
#   stats    answers how many datagrams each side sent through the relay, and how long ago its
#            last one came (a side that stalled shows)
import select
import socket
import sys
import time

server = (sys.argv[1], int(sys.argv[2]))


def bound():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    return s


inside = bound()
control = bound()
outside = bound()
attacker = bound()
client = None
kept = None
reached_attacker = 0
paused = False
# Per direction ("client": what the client sent): the largest datagram by header form (see
# "sizes"), how many, and when the last one came (see "stats").
largest = {"client": [0, 0], "server": [0, 0]}
counts = {"client": 0, "server": 0}
last = {"client": 0.0, "server": 0.0}


def measure(direction, data):
    counts[direction] += 1
    last[direction] = time.monotonic()
    form = 0 if data and data[0] & 0x80 else 1
    largest[direction][form] = max(largest[direction][form], len(data))


print("relay", inside.getsockname()[1], control.getsockname()[1], flush=True)
while True:
    readable, _, _ = select.select([inside, control, outside, attacker], [], [])
    for s in readable:
        if s.fileno() == -1:
            continue
        data, source = s.recvfrom(65536)
        if s is inside:
            client = source
            if paused:
                continue
            measure("client", data)
            if data and data[0] & 0x80 == 0:
                kept = data
            outside.sendto(data, server)
        elif s is control:
            command = data.decode().strip()
            answer = b"ok"
            if command == "rebind":
                outside.close()
                outside = bound()
            elif command in ("pause", "resume"):
                paused = command == "pause"
            elif command == "attacker":
                answer = str(reached_attacker).encode()
            elif command == "stats":
                now = time.monotonic()
                answer = " ".join(f"{d}={counts[d]} idle={now - last[d]:.1f}s" for d in ("client", "server")).encode()
            elif command == "sizes":
                answer = " ".join(str(n) for n in largest["client"] + largest["server"]).encode()
            elif command in ("replay", "forge") and kept is not None:
                packet = kept if command == "replay" else kept[:-1] + bytes([kept[-1] ^ 0xFF])
                attacker.sendto(packet, server)
            else:
                answer = b"none"
            control.sendto(answer, source)
        elif s is attacker:
            reached_attacker += 1
        elif client is not None:
            measure("server", data)
            inside.sendto(data, client)
