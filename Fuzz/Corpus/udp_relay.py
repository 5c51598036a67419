# A UDP relay on 127.0.0.1 that records what crosses it, for the QUIC corpus captures
# (capture_quic.py, capture_quic_server.py): a client sends to `port`, the relay forwards to the
# server and back, and keeps every datagram each way, in order.
import socket, threading


class RecordingRelay:
    def __init__(self, server_port):
        self.relay = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.relay.bind(("127.0.0.1", 0))
        self.relay.settimeout(0.2)
        self.upstream = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.upstream.connect(("127.0.0.1", server_port))
        self.upstream.settimeout(0.2)
        self.port = self.relay.getsockname()[1]
        self.from_client, self.from_server = [], []
        self._client, self._stop = None, False
        self._threads = [threading.Thread(target=self._client_side), threading.Thread(target=self._server_side)]

    def start(self):
        for thread in self._threads:
            thread.start()

    def stop(self):
        self._stop = True
        for thread in self._threads:
            thread.join()

    def _client_side(self):
        while not self._stop:
            try:
                data, address = self.relay.recvfrom(65535)
            except socket.timeout:
                continue
            self.from_client.append(data)
            self._client = address
            self.upstream.send(data)

    def _server_side(self):
        while not self._stop:
            try:
                data = self.upstream.recv(65535)
            except socket.timeout:
                continue
            self.from_server.append(data)
            if self._client:
                self.relay.sendto(data, self._client)
