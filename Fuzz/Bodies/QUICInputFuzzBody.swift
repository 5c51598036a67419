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
/// Besides "no crash": the connection ends at most once, nothing happens after its end, every
/// packet it sends fits a UDP datagram, and its timers end it when the input stops.
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
        guard let destination = take(&input, lengthBytes: 1), let source = take(&input, lengthBytes: 1),
            destination.count >= 8, destination.count <= 20, source.count <= 20
        else { return }
        var now: UInt64 = 1_000_000_000
        guard let client = try? QUICConnectionBinding(
            role: .client(serverName: "localhost"), settings: settings, local: local, remote: remote, now: now,
            connectionIDs: (destination, source))
        else { return }
        var ended = false
        func step() {
            client.writePackets(now: now)
            for packet in client.takePackets() {
                FuzzFailure.check(packet.readableBytes > 0 && packet.readableBytes <= 65_527, "a packet does not fit a datagram")
            }
            for event in client.takeEvents() {
                FuzzFailure.check(!ended, "an event after the connection ended: \(event)")
                if case .closed = event { ended = true }
            }
            FuzzFailure.check(ended == (client.phase == .closed), "the phase and the end disagree")
        }
        step()
        while let datagram = take(&input, lengthBytes: 2) {
            now += 1_000_000
            client.receive(ByteBuffer(bytes: datagram), from: remote, now: now)
            step()
        }
        // Silence from here: the handshake timeout (10 s) or an earlier end must come.
        var rounds = 0
        while !ended, let expiry = client.expiry, rounds < 1_000 {
            now = max(now, expiry)
            client.handleExpiry(now: now)
            step()
            rounds += 1
        }
        FuzzFailure.check(ended, "the connection outlived its timers")
    }

    /// The next length-prefixed field (`lengthBytes` of big-endian length, then the bytes).
    private static func take(_ input: inout ArraySlice<UInt8>, lengthBytes: Int) -> [UInt8]? {
        guard input.count >= lengthBytes else { return nil }
        let length = input.prefix(lengthBytes).reduce(0) { $0 << 8 | Int($1) }
        input = input.dropFirst(lengthBytes)
        guard input.count >= length else { return nil }
        defer { input = input.dropFirst(length) }
        return Array(input.prefix(length))
    }
}
