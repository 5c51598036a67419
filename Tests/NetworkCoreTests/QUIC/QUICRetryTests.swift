import NIOCore
import Testing

@testable import NetworkCore

/// `QUICRetry`, a QUIC listener's stateless address validation, against our own client binding
/// (ngtcp2 checks the Retry's integrity tag and takes its token).
@Suite("QUIC.Retry")
struct QUICRetryTests {
    static let server = try! SocketAddress(ipAddress: "127.0.0.1", port: 4_433)
    static let client = try! SocketAddress(ipAddress: "127.0.0.1", port: 40_000)
    static let now: UInt64 = 5_000_000_000

    /// A client binding and its first Initial.
    static func firstInitial() throws -> (QUICConnectionBinding, ByteBuffer) {
        var settings = FlowTLSConfiguration()
        settings.applicationProtocols = ["echo"]
        let binding = try QUICConnectionBinding(
            role: .client(serverName: "localhost"), settings: settings, local: client, remote: server, now: now)
        binding.writePackets(now: now)
        return (binding, try #require(binding.takePackets().first))
    }

    @Test("without validation an Initial is accepted with its own IDs; with it, a Retry goes back; the client's next Initial carries the token and is accepted with the Retry's ID and the original one")
    func retryRoundTrip() throws {
        let retry = try QUICRetry()
        let (binding, initial) = try Self.firstInitial()
        guard case .accept(let plain) = retry.check(initial, from: Self.client, requireAddressValidation: false, now: Self.now) else {
            Issue.record("an Initial without validation is accepted")
            return
        }
        #expect(plain.retrySource == nil && plain.token == nil && plain.originalDestination.count >= 8)
        guard case .retry(let packet) = retry.check(initial, from: Self.client, requireAddressValidation: true, now: Self.now) else {
            Issue.record("validation asks for a Retry")
            return
        }
        // ngtcp2 on the client checks the Retry's integrity tag and starts over with the token.
        binding.receive(packet, from: Self.server, now: Self.now + 1_000)
        #expect(binding.phase == .handshaking, "the client took the Retry")
        binding.writePackets(now: Self.now + 2_000)
        let second = try #require(binding.takePackets().first)
        guard case .accept(let validated) = retry.check(second, from: Self.client, requireAddressValidation: true, now: Self.now + 3_000) else {
            Issue.record("the Initial with the token is accepted")
            return
        }
        #expect(validated.originalDestination == plain.originalDestination, "the original ID comes back out of the token")
        #expect(validated.retrySource?.count == 18)
        #expect(validated.token?.first == 0xb6)
        // The same token from another address, from another listener, or too late: dropped.
        let elsewhere = try SocketAddress(ipAddress: "127.0.0.2", port: 40_000)
        #expect(retry.check(second, from: elsewhere, requireAddressValidation: true, now: Self.now + 3_000) == .drop)
        #expect(try QUICRetry().check(second, from: Self.client, requireAddressValidation: false, now: Self.now + 3_000) == .drop)
        #expect(retry.check(second, from: Self.client, requireAddressValidation: true, now: Self.now + 20_000_000_000) == .drop)
    }

    @Test("what is not a client's Initial is dropped, never answered: garbage, a short datagram, an empty one")
    func garbage() throws {
        let retry = try QUICRetry()
        for datagram in [ByteBuffer(bytes: [UInt8](repeating: 0xc3, count: 1_200)), ByteBuffer(bytes: [0xc0, 0, 0, 0, 1]), ByteBuffer()] {
            #expect(retry.check(datagram, from: Self.client, requireAddressValidation: true, now: Self.now) == .drop)
        }
    }
}
