#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import NetworkCore
import PeerSupport
import Testing

@testable import Network

/// `NWListener` over QUIC (`NWParameters.quic(alpn:)` with an identity) against aioquic's client
/// (`Tests/PeerScripts/quic_client.py`) on loopback: each stream the client opens is a
/// connection for `newConnectionHandler`.
@Suite("Listener.QUIC", .serialized)
struct QUICListenerTests {
    /// QUIC listener parameters serving `identity` with ALPN "echo".
    static func parameters(_ identity: TLSInteropTests.Identity) throws -> NWParameters {
        let options = NWProtocolQUIC.Options(alpn: ["echo"])
        sec_protocol_options_set_local_identity(options.securityProtocolOptions, try identity.secIdentity)
        return NWParameters(quic: options)
    }

    /// A listener whose connections echo everything to the stream's end, then end theirs.
    static func echoListener(_ parameters: NWParameters, accepted: Recorder<NWConnection>, queue: DispatchQueue) async throws -> (NWListener, UInt16) {
        let listener = try NWListener(using: parameters, on: .any)
        listener.newConnectionHandler = { connection in
            accepted.append(connection)
            connection.start(queue: queue)
            echo(connection)
        }
        return (listener, try await TLSInteropTests.start(listener, queue: queue))
    }

    static func echo(_ connection: NWConnection) {
        connection.receive(minimumIncompleteLength: 1, maximumLength: 65_536) { data, _, isComplete, error in
            guard error == nil else { return }
            connection.send(content: data, contentContext: isComplete ? .finalMessage : .defaultMessage, isComplete: true,
                            completion: .contentProcessed { _ in })
            if !isComplete { echo(connection) }
        }
    }

    static func client(port: UInt16, identity: TLSInteropTests.Identity, streams: Int, extra: [String] = []) async throws -> PeerProcess? {
        guard let python = try await PythonPeer.interpreter(package: "aioquic", version: "1.7.2") else { return nil }
        let script = PythonPeer.scripts.appendingPathComponent("quic_client.py").path
        return try PeerProcess(
            python, [script, "127.0.0.1", "\(port)", "--cafile", identity.certificatePath, "--streams", "\(streams)"] + extra)
    }

    @Test("aioquic's client verifies our certificate, opens 20 streams at once and gets each one echoed to its end; each stream was a connection of ours, ready, with ALPN and its stream number")
    func servesStreams() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let queue = DispatchQueue(label: "quic-listener")
        let accepted = Recorder<NWConnection>()
        let (listener, port) = try await Self.echoListener(try Self.parameters(identity), accepted: accepted, queue: queue)
        defer { listener.cancel() }
        guard let client = try await Self.client(port: port, identity: identity, streams: 20) else { return }
        defer { client.stop() }
        try await client.waitForOutput(containing: "done")
        for index in 0..<20 { try await client.waitForOutput(containing: "echo \(index) message \(index)\n") }
        try await client.waitForOutput(containing: "streams " + (0..<20).map { "\($0 * 4)" }.joined(separator: " "))
        let connections = try await accepted.wait(count: 20, "20 stream connections")
        let streams = connections.compactMap {
            ($0.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)?.streamIdentifier
        }
        #expect(Set(streams) == Set((0..<20).map { UInt64($0 * 4) }))
        #expect((connections.first?.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)?.negotiatedALPN == "echo")
        for connection in connections { connection.cancel() }
    }

    @Test("with newConnectionGroupHandler, each client's QUIC connection is a group, ready once started, whose newConnectionHandler gets the client's 5 streams; cancelling the group closes the connection")
    func groupsPerConnection() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let queue = DispatchQueue(label: "quic-listener")
        let listener = try NWListener(using: try Self.parameters(identity), on: .any)
        let groups = Recorder<NWConnectionGroup>()
        let groupStates = Recorder<NWConnectionGroup.State>()
        let streams = Recorder<NWConnection>()
        listener.newConnectionHandler = { _ in Issue.record("a stream reached the listener's connection handler") }
        listener.newConnectionGroupHandler = { group in
            groups.append(group)
            group.stateUpdateHandler = { groupStates.append($0) }
            group.newConnectionHandler = { stream in
                streams.append(stream)
                stream.start(queue: queue)
                Self.echo(stream)
            }
            group.start(queue: queue)
        }
        let port = try await TLSInteropTests.start(listener, queue: queue)
        defer { listener.cancel() }
        guard let client = try await Self.client(port: port, identity: identity, streams: 5) else { return }
        defer { client.stop() }
        try await client.waitForOutput(containing: "done")
        for index in 0..<5 { try await client.waitForOutput(containing: "echo \(index) message \(index)\n") }
        _ = try await streams.wait(count: 5, "5 streams")
        #expect(groups.values.count == 1)
        #expect(groupStates.values.first == .ready)
        let group = try #require(groups.values.first)
        #expect((group.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)?.negotiatedALPN == "echo")
        group.cancel()
        _ = try await groupStates.wait("cancelled") { $0.contains(.cancelled) }
    }

    @Test("with Retry required, aioquic's client first answers a Retry (and checks our transport parameters name the Retry's and its original connection IDs, or it would fail the handshake), then its 3 streams are echoed; without it, no Retry")
    func retry() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let queue = DispatchQueue(label: "quic-listener")
        for (policy, retries) in [(QUICRetryPolicy.always, 1), (.never, 0)] {
            let listener = try NWListener(using: try Self.parameters(identity), on: .any, quicRetry: policy)
            listener.newConnectionHandler = { connection in
                connection.start(queue: queue)
                Self.echo(connection)
            }
            let port = try await TLSInteropTests.start(listener, queue: queue)
            defer { listener.cancel() }
            guard let client = try await Self.client(port: port, identity: identity, streams: 3) else { return }
            defer { client.stop() }
            try await client.waitForOutput(containing: "retries \(retries)\n")
            try await client.waitForOutput(containing: "done")
            for index in 0..<3 { try await client.waitForOutput(containing: "echo \(index) message \(index)\n") }
        }
    }

    @Test(
        "ngtcp2's own example client (gtlssimpleclient, built from Debian's source by scripts/build-ngtcp2-client.sh) completes the handshake, with and without a Retry, over IPv4 and IPv6, and gets its stream echoed to the end",
        arguments: ["127.0.0.1", "::1"])
    func ngtcp2ExampleClient(host: String) async throws {
        guard let client = PeerProcess.executable("ngtcp2-echo-client", package: "libev-dev, then bash scripts/build-ngtcp2-client.sh")
        else { return }
        let identity = try TLSInteropTests.Identity.make()
        let queue = DispatchQueue(label: "quic-listener")
        for policy in [QUICRetryPolicy.always, .never] {
            let accepted = Recorder<NWConnection>()
            let listener = try NWListener(using: try Self.parameters(identity), on: .any, quicRetry: policy)
            listener.newConnectionHandler = { connection in
                accepted.append(connection)
                connection.start(queue: queue)
                Self.echo(connection)
            }
            let port = try await TLSInteropTests.start(listener, queue: queue)
            defer { listener.cancel() }
            let peer = try PeerProcess("/usr/bin/env", ["NGTCP2_HOST=\(host)", "NGTCP2_PORT=\(port)", client])
            defer { peer.stop() }
            // It exits 0 at the echo's FIN, and with 1 if the handshake or the stream failed.
            let status = await peer.waitForExit(timeout: 10)
            #expect(status == 0, "\(policy): exit status \(String(describing: status))")
            #expect(String(decoding: peer.standardOutput, as: UTF8.self).contains("stream 0 echo: hello from ngtcp2"), "\(policy)")
            let connections = try await accepted.wait(count: 1, "the client's stream")
            #expect((connections[0].metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)?.negotiatedALPN == "echo")
            for connection in connections { connection.cancel() }
        }
    }

    @Test("a group a listener accepted carries the client's QUIC datagrams: its receive handler gets each one, whole, from the client's endpoint, and a reply goes back to the client")
    func groupDatagrams() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let queue = DispatchQueue(label: "quic-listener")
        let listener = try NWListener(using: try Self.parameters(identity), on: .any)
        let received = Recorder<String>()
        listener.newConnectionGroupHandler = { group in
            group.setReceiveHandler { message, content, isComplete in
                guard let content, isComplete, message.remoteEndpoint != nil else {
                    received.append("unexpected")
                    return
                }
                received.append(String(decoding: content, as: UTF8.self))
                message.reply(content: content)
            }
            group.newConnectionHandler = { stream in
                stream.start(queue: queue)
                Self.echo(stream)
            }
            group.start(queue: queue)
        }
        let port = try await TLSInteropTests.start(listener, queue: queue)
        defer { listener.cancel() }
        guard let client = try await Self.client(port: port, identity: identity, streams: 1, extra: ["--datagrams", "20"]) else { return }
        defer { client.stop() }
        try await client.waitForOutput(containing: "datagrams 20 ok")
        try await client.waitForOutput(containing: "done")
        let texts = try await received.wait(count: 20, "20 datagrams")
        #expect(Set(texts) == Set((0..<20).map { "datagram \($0)" }))
    }

    @Test("a client opening 150 streams at once gets the 100 this side allows, no more while they stay open; once they finish, the rest come and all 150 are echoed")
    func streamLimitHolds() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let queue = DispatchQueue(label: "quic-listener")
        let accepted = Recorder<NWConnection>()
        let echoing = Recorder<Bool>()
        let listener = try NWListener(using: try Self.parameters(identity), on: .any)
        listener.newConnectionHandler = { connection in
            accepted.append(connection)
            connection.start(queue: queue)
            if !echoing.values.isEmpty { Self.echo(connection) }
        }
        let port = try await TLSInteropTests.start(listener, queue: queue)
        defer { listener.cancel() }
        guard let client = try await Self.client(port: port, identity: identity, streams: 150) else { return }
        defer { client.stop() }
        let first = try await accepted.wait(count: 100, "the first 100 streams")
        await pause(milliseconds: 500)
        #expect(accepted.values.count == 100, "initialMaxStreamsBidirectional (100) bounds the client's open streams")
        queue.sync {
            echoing.append(true)
            for connection in first { Self.echo(connection) }
        }
        try await client.waitForOutput(containing: "done", timeout: 30)
        #expect(accepted.values.count == 150)
    }

    @Test("aioquic's client updates its keys halfway through 4 MiB (RFC 9001 key update): our side follows, both directions change key phase, every byte is echoed")
    func keyUpdate() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let queue = DispatchQueue(label: "quic-listener")
        let accepted = Recorder<NWConnection>()
        let (listener, port) = try await Self.echoListener(try Self.parameters(identity), accepted: accepted, queue: queue)
        defer { listener.cancel() }
        guard let client = try await Self.client(port: port, identity: identity, streams: 1, extra: ["--bulk", "\(4 << 20)", "--key-update"])
        else { return }
        defer { client.stop() }
        try await client.waitForOutput(containing: "done", timeout: 30)
        try await client.waitForOutput(containing: "key phase changed\n")
        try await client.waitForOutput(containing: "bulk \(4 << 20) ok")
    }

    @Test("two clients one after the other, and a datagram that is not a QUIC Initial is ignored without harming the listener")
    func severalClientsAndGarbage() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let queue = DispatchQueue(label: "quic-listener")
        let accepted = Recorder<NWConnection>()
        let (listener, port) = try await Self.echoListener(try Self.parameters(identity), accepted: accepted, queue: queue)
        defer { listener.cancel() }
        let garbage = try RawSocket.udpPeer()
        try garbage.send(to: port, Array("not quic at all".utf8))
        for round in 0..<2 {
            guard let client = try await Self.client(port: port, identity: identity, streams: 3) else { return }
            defer { client.stop() }
            try await client.waitForOutput(containing: "done")
            _ = try await accepted.wait(count: 3 * (round + 1), "stream connections")
        }
        #expect(listener.state == .ready)
    }
}
