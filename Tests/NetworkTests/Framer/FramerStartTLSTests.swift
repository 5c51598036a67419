#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

/// `NWProtocolFramer.Instance.prependApplicationProtocol(options:)`: a framer's plaintext
/// handshake, then TLS above the framer (`StartTLSFramer`), between our own connection and
/// listener and against python's `ssl` module on both sides.
@Suite("Framer.StartTLS", .serialized)
struct FramerStartTLSTests {
    /// Client TLS options that trust `authority` (through a verify block, as Apple code does for
    /// a private CA) and verify the name `localhost`.
    static func clientTLS(trusting authority: TestCertificateAuthority) throws -> NWProtocolTLS.Options {
        let anchors = [try authority.certificate]
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_set_tls_server_name(tls.securityProtocolOptions, "localhost")
        sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, trust, complete in
            let secTrust = sec_trust_copy_ref(trust).takeRetainedValue()
            SecTrustSetAnchorCertificates(secTrust, anchors as CFArray)
            complete(SecTrustEvaluateWithError(secTrust, nil))
        }, DispatchQueue(label: "verify-starttls"))
        return tls
    }

    /// Receives at least `count` bytes of the stream (several receives if need be).
    static func receive(_ connection: NWConnection, count: Int) async throws -> Data {
        let chunks = Recorder<Data>()
        @Sendable func next() {
            connection.receive(minimumIncompleteLength: 1, maximumLength: 65_536) { data, context, _, error in
                // A stream: no framer message on what TLS delivers.
                if error == nil, context?.protocolMetadata(definition: StartTLSFramer.definition) == nil, let data {
                    chunks.append(data)
                    next()
                }
            }
        }
        next()
        let received = try await chunks.wait("\(count) bytes", timeout: 10) { $0.reduce(0) { $0 + $1.count } >= count }
        return received.reduce(Data(), +)
    }

    /// A listener whose connections run the server side and echo the stream.
    static func echoListener(
        tls: NWProtocolTLS.Options, extra: [String: Bool] = [:], parameters: NWParameters? = nil
    ) async throws -> (NWListener, UInt16) {
        let listener = try NWListener(using: parameters ?? StartTLSFramer.parameters(role: "server", prepending: tls, extra: extra))
        let queue = DispatchQueue(label: "starttls-listener")
        listener.newConnectionHandler = { connection in
            @Sendable func echo() {
                connection.receive(minimumIncompleteLength: 1, maximumLength: 65_536) { data, _, isComplete, error in
                    if let data, !data.isEmpty { connection.send(content: data, completion: .contentProcessed { _ in }) }
                    if error == nil && !isComplete { echo() }
                }
            }
            connection.start(queue: queue)
            echo()
        }
        return (listener, try await TLSInteropTests.start(listener, queue: queue))
    }

    @Test("our client and our listener: STARTTLS in plaintext, then TLS above the framers, verified; a stream both ways")
    func ourselves() async throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue()
        let (listener, port) = try await Self.echoListener(tls: try leaf.serverOptions())
        defer { listener.cancel() }
        let connection = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!,
            using: StartTLSFramer.parameters(role: "client", prepending: try Self.clientTLS(trusting: authority)))
        // Sent before ready: it waits, and goes out over TLS.
        connection.send(content: Data("early ".utf8), completion: .contentProcessed { _ in })
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        let metadata = connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata
        #expect(metadata != nil, "the connection reports its TLS session")
        let big = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let sent = Recorder<NWError?>()
        connection.send(content: big, completion: .contentProcessed { sent.append($0) })
        let echoed = try await Self.receive(connection, count: 6 + big.count)
        #expect(echoed == Data("early ".utf8) + big)
        #expect(try await sent.wait(count: 1, "the send's completion", timeout: 10) == [nil])
    }

    /// `starttls_peer.py` with `arguments`, started; nil (a failure under CI) without python3.
    static func python(_ arguments: [String]) throws -> PeerProcess? {
        guard let python = PeerProcess.executable("python3", package: "python3") else { return nil }
        return try PeerProcess(python, [PythonWebSockets.scripts.appendingPathComponent("starttls_peer.py").path] + arguments)
    }

    /// Against python's STARTTLS server: our client (with `parameters` for `authority`)
    /// verifies it and exchanges bytes over TLS.
    func againstPythonServer(_ parameters: (TestCertificateAuthority) throws -> NWParameters) async throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue()
        guard let server = try Self.python(["server", leaf.certificatePath, leaf.keyPath]) else { return }
        defer { server.stop() }
        try await server.waitForOutput(containing: "listening ")
        let text = String(decoding: server.standardOutput, as: UTF8.self)
        let port = try #require(text.split(separator: "\n").first { $0.hasPrefix("listening ") }.flatMap { UInt16($0.dropFirst(10)) })
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: try parameters(authority))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        try await server.waitForOutput(containing: "handshake TLSv1.3")
        connection.send(content: Data("hello python".utf8), completion: .contentProcessed { _ in })
        #expect(try await Self.receive(connection, count: 12) == Data("hello python".utf8))
    }

    /// Python's STARTTLS client against our listener (`parameters` for the leaf `authority`
    /// issued, nil for the framer prepending it).
    func againstPythonClient(_ parameters: ((TLSInteropTests.Identity) throws -> NWParameters)? = nil) async throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue()
        let (listener, port) = try await Self.echoListener(tls: try leaf.serverOptions(), parameters: try parameters?(leaf))
        defer { listener.cancel() }
        guard let client = try Self.python(["client", "\(port)", authority.certificatePath]) else { return }
        defer { client.stop() }
        try await client.waitForOutput(containing: "echo ping over tls", timeout: 20)
    }

    @Test("against python ssl as the STARTTLS server: our client verifies it and exchanges bytes over TLS")
    func pythonServer() async throws {
        try await againstPythonServer { StartTLSFramer.parameters(role: "client", prepending: try Self.clientTLS(trusting: $0)) }
    }

    @Test("python ssl as the STARTTLS client against our listener: the TLS the listener's framer prepended")
    func pythonClient() async throws {
        try await againstPythonClient()
    }

    @Test("TLS above the framer in the parameters ([TLS, framer]) runs the same, outbound and on a listener")
    func tlsOnTopInParameters() async throws {
        try await againstPythonServer { StartTLSFramer.parameters(role: "client", tlsOnTop: try Self.clientTLS(trusting: $0)) }
        try await againstPythonClient { StartTLSFramer.parameters(role: "server", tlsOnTop: try $0.serverOptions()) }
    }

    @Test("TLS above a framer over UDP is refused (that would be DTLS), never run without it")
    func tlsOnTopOverUDP() async throws {
        let connection = NWConnection(
            host: "127.0.0.1", port: 9, using: StartTLSFramer.parameters(role: "client", tlsOnTop: NWProtocolTLS.Options(), transport: .udp))
        #expect(await TLSInteropTests.settle(connection) == .failed(.posix(.EPROTONOSUPPORT)))
        connection.cancel()
    }

    @Test("default verification stays on: a server the system does not trust fails the handshake, nothing goes in plaintext")
    func untrustedServer() async throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue()
        let (listener, port) = try await Self.echoListener(tls: try leaf.serverOptions())
        defer { listener.cancel() }
        let connection = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: port)!,
            using: StartTLSFramer.parameters(role: "client", prepending: NWProtocolTLS.Options()))
        let state = await TLSInteropTests.settle(connection)
        defer { connection.cancel() }
        guard case .failed(.tls) = state else {
            Issue.record("expected a TLS failure, got \(String(describing: state))")
            return
        }
    }

    @Test("prepending after markReady throws EINVAL; a protocol other than TLS throws EOPNOTSUPP")
    func refusedPrepends() async throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue()
        for (extra, expected) in [(["prependAfterReady": true], NWError.posix(.EINVAL)), (["prependFramer": true], .posix(.EOPNOTSUPP))] {
            let before = StartTLSFramer.errors.all.count
            let (listener, port) = try await Self.echoListener(tls: try leaf.serverOptions(), extra: extra)
            defer { listener.cancel() }
            let connection = NWConnection(
                host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!,
                using: StartTLSFramer.parameters(role: "client", prepending: try Self.clientTLS(trusting: authority), extra: extra))
            let state = await TLSInteropTests.settle(connection)
            connection.cancel()
            let errors = Array(StartTLSFramer.errors.all.dropFirst(before))
            #expect(errors.contains(expected), "\(extra): \(errors)")
            if extra["prependAfterReady"] == true {
                // The TLS prepended in time still runs: the late one changed nothing.
                #expect(state == .ready)
            }
        }
    }
}
