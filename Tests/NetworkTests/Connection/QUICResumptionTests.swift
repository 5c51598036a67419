#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import NetworkCore
import PeerSupport
import Security
import Testing

@testable import Network

/// QUIC session resumption and 0-RTT data (RFC 9001, 4.5 and 4.6): our client against
/// aioquic's server and our listener, aioquic's client against our listener.
@Suite("Connection.QUICResumption", .serialized)
struct QUICResumptionTests {
    /// QUIC parameters offering ALPN "echo" whose verify block trusts any of `certificates`
    /// (and counts its calls in `verifications`).
    static func pinned(_ certificates: [[UInt8]], verifications: Recorder<Bool>? = nil, allowFastOpen: Bool = false) -> NWParameters {
        let options = NWProtocolQUIC.Options(alpn: ["echo"])
        sec_protocol_options_set_verify_block(options.securityProtocolOptions, { _, trust, complete in
            let trusted = certificates.contains { trust.certificates.first?.derData == Data($0) }
            verifications?.append(trusted)
            complete(trusted)
        }, DispatchQueue(label: "verify"))
        let parameters = NWParameters(quic: options)
        parameters.allowFastOpen = allowFastOpen
        return parameters
    }

    static func connection(port: Int, using parameters: NWParameters) -> NWConnection {
        NWConnection(host: "localhost", port: NWEndpoint.Port(rawValue: UInt16(port))!, using: parameters)
    }

    static func key(port: Int) -> QUICSessionCache.Key {
        QUICSessionCache.Key(server: "localhost", port: port, applicationProtocols: ["echo"])
    }

    /// Connects, exchanges "first" and waits until the server's ticket is kept; the connection
    /// is cancelled.
    static func firstSession(port: Int, using parameters: NWParameters) async throws {
        _ = QUICSessionCache.shared.take(key(port: port))
        let first = connection(port: port, using: parameters)
        #expect(await TLSInteropTests.settle(first) == .ready)
        #expect(first.readySessionFacts?.resumed == false)
        #expect(await TLSInteropTests.exchange(first, "first") == "first")
        let deadline = Date().addingTimeInterval(5)
        while !QUICSessionCache.shared.hasTicket(for: key(port: port)), Date() < deadline { await pause(milliseconds: 10) }
        #expect(QUICSessionCache.shared.hasTicket(for: key(port: port)), "the server's ticket is kept")
        first.cancel()
    }

    /// Sends `text` as idempotent data before `connection` starts (Fast Open's rule), starts it
    /// and returns what comes back, once ready.
    static func earlyExchange(_ connection: NWConnection, _ text: String) async -> (NWConnection.State?, String?) {
        connection.send(content: Data(text.utf8), completion: .idempotent)
        let state = await TLSInteropTests.settle(connection)
        let echoed = await withCheckedContinuation { continuation in
            connection.receive(minimumIncompleteLength: text.utf8.count, maximumLength: 1024) { data, _, _, _ in
                continuation.resume(returning: data.map { String(decoding: $0, as: UTF8.self) })
            }
        }
        return (state, echoed)
    }

    /// A connection to `port` that trusts `certificates`, allows Fast Open and sends `text`
    /// before it starts; it must become ready and get `text` back. The caller cancels it.
    static func resumeSending(_ text: String, port: Int, trusting certificates: [[UInt8]], verifications: Recorder<Bool>? = nil) async -> NWConnection {
        let connection = connection(port: port, using: pinned(certificates, verifications: verifications, allowFastOpen: true))
        let (state, echoed) = await earlyExchange(connection, text)
        #expect(state == .ready)
        #expect(echoed == text)
        return connection
    }

    /// Our echo listener with a fresh identity (and `allowFastOpen` as given): it, its port,
    /// its certificate, the connections it accepted, and the identity.
    static func ourListener(
        allowFastOpen: Bool
    ) async throws -> (NWListener, Int, [UInt8], Recorder<NWConnection>, TLSInteropTests.Identity) {
        let identity = try TLSInteropTests.Identity.make()
        let parameters = try QUICListenerTests.parameters(identity)
        parameters.allowFastOpen = allowFastOpen
        let accepted = Recorder<NWConnection>()
        let (listener, port) = try await QUICListenerTests.echoListener(parameters, accepted: accepted, queue: DispatchQueue(label: "quic-resumption"))
        return (listener, Int(port), Array(try identity.certificateDER), accepted, identity)
    }

    static func earlyDataAccepted(_ connection: NWConnection) -> Bool? {
        let quic = connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata
        return quic.map { sec_protocol_metadata_get_early_data_accepted($0.securityProtocolMetadata) }
    }

    @Test("aioquic's server: the second connection resumes the first's session, and its idempotent data sent before start leaves as 0-RTT data the server accepts and echoes")
    func aioquicServerTakesEarlyData() async throws {
        guard let server = try await AioquicServer.start(tickets: true) else { return }
        defer { server.stop() }
        try await Self.firstSession(port: server.port, using: Self.pinned([server.certificate]))
        try await server.process.waitForOutput(containing: "handshake resumed False early False")
        let second = await Self.resumeSending("early bytes", port: server.port, trusting: [server.certificate])
        defer { second.cancel() }
        #expect(second.readySessionFacts?.resumed == true)
        #expect(Self.earlyDataAccepted(second) == true)
        try await server.process.waitForOutput(containing: "handshake resumed True early True")
        #expect(await TLSInteropTests.exchange(second, "after") == "after", "the stream goes on after its 0-RTT start")
    }

    @Test("a ticket the server no longer knows (aioquic restarted on the same port): the 0-RTT data is refused, the handshake is a full one, and the same bytes go again on the stream and are echoed")
    func refusedEarlyDataIsSentAgain() async throws {
        guard let first = try await AioquicServer.start(tickets: true) else { return }
        let port = first.port
        let firstCertificate = first.certificate
        try await Self.firstSession(port: port, using: Self.pinned([firstCertificate]))
        first.stop()
        _ = await first.process.waitForExit()
        guard let restarted = try await AioquicServer.start(tickets: true, port: port) else { return }
        defer { restarted.stop() }
        let second = await Self.resumeSending("early bytes, twice", port: port, trusting: [firstCertificate, restarted.certificate])
        defer { second.cancel() }
        #expect(second.readySessionFacts?.resumed == false)
        #expect(Self.earlyDataAccepted(second) == false)
        try await restarted.process.waitForOutput(containing: "handshake resumed False early False")
    }

    @Test("our listener with allowFastOpen: our client resumes and sends 0-RTT data; both sides see a resumed session with early data, and the verify block judges the resumed session too")
    func ourListenerTakesEarlyData() async throws {
        let (listener, port, certificate, accepted, _) = try await Self.ourListener(allowFastOpen: true)
        defer { listener.cancel() }
        try await Self.firstSession(port: port, using: Self.pinned([certificate]))
        let verifications = Recorder<Bool>()
        let second = await Self.resumeSending("early to our listener", port: port, trusting: [certificate], verifications: verifications)
        defer { second.cancel() }
        #expect(second.readySessionFacts?.resumed == true)
        #expect(Self.earlyDataAccepted(second) == true)
        #expect(verifications.values == [true], "the resumed session's chain went to the verify block")
        let served = try await accepted.wait(count: 2, "two connections")
        #expect(served[1].readySessionFacts?.resumed == true)
        #expect(served[1].readySessionFacts?.earlyDataAccepted == true)
        #expect(Self.earlyDataAccepted(served[1]) == true)
    }

    @Test("our listener without allowFastOpen issues tickets without early data: the client resumes, and its idempotent data waits for the handshake")
    func ourListenerRefusesEarlyData() async throws {
        let (listener, port, certificate, _, _) = try await Self.ourListener(allowFastOpen: false)
        defer { listener.cancel() }
        try await Self.firstSession(port: port, using: Self.pinned([certificate]))
        let second = await Self.resumeSending("after the handshake", port: port, trusting: [certificate])
        defer { second.cancel() }
        #expect(second.readySessionFacts?.resumed == true)
        #expect(Self.earlyDataAccepted(second) == false)
    }

    @Test("a resumed session is still judged: a verify block that refuses fails the connection with errSSLBadCert, the system trust store refuses a self-signed server with errSSLXCertChainInvalid; with resumption turned off the session is a full one")
    func resumptionStaysVerified() async throws {
        let (listener, port, certificate, _, _) = try await Self.ourListener(allowFastOpen: false)
        defer { listener.cancel() }
        try await Self.firstSession(port: port, using: Self.pinned([certificate]))
        let refused = Self.connection(port: port, using: Self.pinned([]))
        defer { refused.cancel() }
        #expect(await TLSInteropTests.settle(refused) == .failed(.tls(-9808)), "errSSLBadCert")

        // Resuming under the system trust store (which does not know this self-signed server):
        // refused as the full handshake would be.
        try await Self.firstSession(port: port, using: Self.pinned([certificate]))
        let untrusted = Self.connection(port: port, using: NWParameters.quic(alpn: ["echo"]))
        defer { untrusted.cancel() }
        #expect(await TLSInteropTests.settle(untrusted) == .failed(.tls(-9807)), "errSSLXCertChainInvalid")

        try await Self.firstSession(port: port, using: Self.pinned([certificate]))
        let parameters = Self.pinned([certificate])
        let quic = try #require(parameters.defaultProtocolStack.transportProtocol as? NWProtocolQUIC.Options)
        sec_protocol_options_set_tls_resumption_enabled(quic.securityProtocolOptions, false)
        let full = Self.connection(port: port, using: parameters)
        defer { full.cancel() }
        #expect(await TLSInteropTests.settle(full) == .ready)
        #expect(full.readySessionFacts?.resumed == false)
        #expect(QUICSessionCache.shared.hasTicket(for: Self.key(port: port)), "an unused ticket stays")
    }

    @Test("aioquic's client resumes with our listener's ticket and sends 0-RTT data before its handshake is done: accepted and echoed")
    func aioquicClientSendsEarlyData() async throws {
        let (listener, port, _, accepted, identity) = try await Self.ourListener(allowFastOpen: true)
        defer { listener.cancel() }
        guard let client = try await QUICListenerTests.client(port: UInt16(port), identity: identity, streams: 1, extra: ["--resume"]) else { return }
        defer { client.stop() }
        try await client.waitForOutput(containing: "done")
        try await client.waitForOutput(containing: "resumed True early True echo early data\n")
        let served = try await accepted.wait(count: 2, "two connections")
        #expect(served[1].readySessionFacts?.earlyDataAccepted == true)
    }
}
