"""A STARTTLS peer for the framer tests (Tests/NetworkTests/Framer/FramerStartTLSTests.swift),
written with nothing but python's socket and ssl modules: an independent implementation of
"plaintext lines, then TLS on the same socket".

  starttls_peer.py server CERT KEY      listens on 127.0.0.1 (prints "listening PORT"), answers
                                        STARTTLS with OK, then TLS; echoes what comes until EOF
  starttls_peer.py client PORT CAFILE   connects, STARTTLS, TLS verifying localhost against
                                        CAFILE, sends "ping over tls", prints what comes back
"""
import socket
import ssl
import sys


def read_line(sock):
    line = b""
    while not line.endswith(b"\r\n"):
        byte = sock.recv(1)
        if not byte:
            raise EOFError("closed during the plaintext exchange")
        line += byte
    return line.strip()


def server(cert, key):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    print("listening", listener.getsockname()[1], flush=True)
    connection, _ = listener.accept()
    if read_line(connection) != b"STARTTLS":
        connection.sendall(b"NO\r\n")
        return
    connection.sendall(b"OK\r\n")
    secure = context.wrap_socket(connection, server_side=True)
    print("handshake", secure.version(), flush=True)
    while True:
        data = secure.recv(65536)
        if not data:
            break
        secure.sendall(data)
    secure.close()


def client(port, cafile):
    context = ssl.create_default_context(cafile=cafile)
    connection = socket.create_connection(("127.0.0.1", int(port)), timeout=20)
    connection.sendall(b"STARTTLS\r\n")
    if read_line(connection) != b"OK":
        print("refused", flush=True)
        return
    secure = context.wrap_socket(connection, server_hostname="localhost")
    secure.sendall(b"ping over tls")
    received = b""
    while len(received) < len(b"ping over tls"):
        data = secure.recv(65536)
        if not data:
            break
        received += data
    print("echo", received.decode(), flush=True)
    secure.close()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(sys.argv[2], sys.argv[3])
    else:
        client(sys.argv[2], sys.argv[3])
