#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkCore

/// What a QUIC client (`QUICConnectionBinding`: ngtcp2 and the GnuTLS session inside it) does
/// with the datagrams a server sends. An input is a captured exchange: the client's first
/// Initial's destination and source connection IDs (one length byte and the bytes, each), then
/// the server's datagrams, each behind a 2-byte big-endian length. Replayed with those IDs, a
/// captured server Initial decrypts, so its frames and the ServerHello in it are parsed (later
/// packets need the handshake's fresh keys and are dropped as undecryptable).
/// `QUICFuzzDriver` checks the connection's invariants on the way.
enum QUICInputFuzzBody {
    private static let local = try! SocketAddress(ipAddress: "127.0.0.1", port: 40_000)
    private static let remote = try! SocketAddress(ipAddress: "127.0.0.1", port: 4_433)

    private static let settings: FlowTLSConfiguration = {
        var settings = FlowTLSConfiguration()
        settings.applicationProtocols = ["echo"]
        return settings
    }()

    static func run(_ bytes: [UInt8]) {
        var input = bytes[...]
        guard let destination = QUICFuzzDriver.take(&input, lengthBytes: 1), let source = QUICFuzzDriver.take(&input, lengthBytes: 1),
            destination.count >= 8, destination.count <= 20, source.count <= 20
        else { return }
        let now: UInt64 = 1_000_000_000
        guard let client = try? QUICConnectionBinding(
            role: .client(serverName: "localhost"), settings: settings, limits: QUICFuzzDriver.limits, local: local, remote: remote,
            now: now,
            connectionIDs: (destination, source))
        else { return }
        var driver = QUICFuzzDriver(client, now: now)
        driver.step()
        while let datagram = QUICFuzzDriver.take(&input, lengthBytes: 2) {
            driver.now += 1_000_000
            driver.receive(datagram, from: remote)
        }
        driver.runTimersToEnd()
    }
}
