#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network

/// `NWConnectionGroup` with an `NWMultiplexGroup` over QUIC: one QUIC connection to aioquic
/// (`Tests/PeerScripts/quic_peer.py`), its streams as `NWConnection`s.
@Suite("Connection.QUICGroup", .serialized)
struct QUICConnectionGroupTests {
    static func group(to server: AioquicServer) -> NWConnectionGroup {
        let endpoint = NWEndpoint.hostPort(host: "localhost", port: NWEndpoint.Port(rawValue: UInt16(server.port))!)
        return NWConnectionGroup(with: NWMultiplexGroup(to: endpoint), using: QUICConnectionTests.pinned(server.certificate))
    }

    /// Starts `group` and waits for its first state after `setup`.
    static func start(_ group: NWConnectionGroup, states: Recorder<NWConnectionGroup.State>) async throws -> NWConnectionGroup.State? {
        group.stateUpdateHandler = { states.append($0) }
        group.start(queue: DispatchQueue(label: "quic-group"))
        // The group's first state comes after the whole handshake with aioquic, a python
        // process that a parallel run can starve: 10 s once did not suffice (recorded nothing).
        return try await states.wait("a state", timeout: 30) { !$0.isEmpty }.first
    }

    /// A new stream of `group`, started and ready, with the states it went through.
    static func readyStream(of group: NWConnectionGroup) async throws -> (NWConnection, Recorder<NWConnection.State>) {
        let stream = try #require(NWConnection(from: group))
        let states = Recorder<NWConnection.State>()
        stream.stateUpdateHandler = { states.append($0) }
        stream.start(queue: DispatchQueue(label: "stream"))
        _ = try await states.wait("ready") { $0.contains(.ready) }
        return (stream, states)
    }

    /// Waits for a `failed` state among `states`; all of them by then.
    static func failure<State: Sendable>(_ states: Recorder<State>, _ isFailed: @escaping @Sendable (State) -> Bool) async throws -> [State] {
        try await states.wait("failed") { $0.contains(where: isFailed) }
    }

    static func streamID(_ connection: NWConnection) -> UInt64? {
        (connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)?.streamIdentifier
    }

    @Test("a group is ready after the handshake; 10 streams opened with NWConnection(from:) at once each echo their own bytes to their FIN on their own stream number; cancelling the group closes the QUIC connection without an error")
    func concurrentStreams() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let group = Self.group(to: server)
        let states = Recorder<NWConnectionGroup.State>()
        #expect(try await Self.start(group, states: states) == .ready)
        #expect((group.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)?.negotiatedALPN == "echo")
        let results = try await withThrowingTaskGroup(of: (UInt64?, String, Bool).self) { tasks in
            for index in 0..<10 {
                tasks.addTask {
                    let stream = try #require(NWConnection(from: group))
                    #expect(await TLSInteropTests.settle(stream) == .ready)
                    let text = String(repeating: "stream \(index) ", count: 100 + index)
                    stream.send(content: Data(text.utf8), contentContext: .finalMessage, completion: .contentProcessed { _ in })
                    let (echoed, ended) = await QUICConnectionTests.receiveToEnd(stream)
                    let id = Self.streamID(stream)
                    stream.cancel()
                    return (id, String(decoding: echoed, as: UTF8.self) == text ? "ok" : "mismatch \(index)", ended)
                }
            }
            var all: [(UInt64?, String, Bool)] = []
            for try await result in tasks { all.append(result) }
            return all
        }
        #expect(results.allSatisfy { $0.1 == "ok" && $0.2 }, "\(results)")
        // Client-opened bidirectional streams: 0, 4, 8, … each once.
        #expect(Set(results.compactMap(\.0)) == Set((0..<10).map { UInt64($0 * 4) }))
        group.cancel()
        _ = try await states.wait("cancelled") { $0.contains(.cancelled) }
        try await server.process.waitForOutput(containing: "closed 0")
    }

    @Test("200 streams started at once against aioquic's limit of 128: exactly 128 become ready, the others wait in preparing; as the first ones finish, the server allows more and all 200 echo")
    func beyondTheStreamLimit() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let group = Self.group(to: server)
        let states = Recorder<NWConnectionGroup.State>()
        #expect(try await Self.start(group, states: states) == .ready)
        let ready = Recorder<Int>()
        let streams = (0..<200).map { index in
            let stream = NWConnection(from: group)!
            stream.stateUpdateHandler = { if $0 == .ready { ready.append(index) } }
            stream.start(queue: DispatchQueue(label: "stream \(index)"))
            return stream
        }
        let first = try await ready.wait(count: 128, "the first 128 streams")
        await pause(milliseconds: 300)
        #expect(ready.values.count == 128, "only the peer's limit of streams opens")
        let echoed = try await withThrowingTaskGroup(of: Bool.self) { tasks in
            for index in 0..<200 {
                tasks.addTask {
                    if !first.contains(index) { _ = try await ready.wait("stream \(index)") { $0.contains(index) } }
                    let stream = streams[index]
                    let text = "stream \(index)"
                    stream.send(content: Data(text.utf8), contentContext: .finalMessage, completion: .contentProcessed { _ in })
                    let (bytes, ended) = await QUICConnectionTests.receiveToEnd(stream)
                    stream.cancel()
                    return ended && bytes == Data(text.utf8)
                }
            }
            var count = 0
            for try await ok in tasks where ok { count += 1 }
            return count
        }
        #expect(echoed == 200)
        group.cancel()
        _ = try await states.wait("cancelled") { $0.contains(.cancelled) }
    }

    @Test("a stream the server opens reaches newConnectionHandler as a connection on stream 1 that receives the server's bytes and FIN")
    func serverOpenedStream() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let group = Self.group(to: server)
        let inbound = Recorder<NWConnection>()
        group.newConnectionHandler = { inbound.append($0) }
        let states = Recorder<NWConnectionGroup.State>()
        #expect(try await Self.start(group, states: states) == .ready)
        let stream = try #require(group.extract())
        #expect(await TLSInteropTests.settle(stream) == .ready)
        stream.send(content: Data("push:3000".utf8), completion: .contentProcessed { _ in })
        let answer = await withCheckedContinuation { continuation in
            stream.receive(minimumIncompleteLength: 6, maximumLength: 64) { data, _, _, _ in continuation.resume(returning: data) }
        }
        #expect(answer == Data("pushed".utf8))
        let pushed = try await inbound.wait("the server's stream") { !$0.isEmpty }[0]
        #expect(await TLSInteropTests.settle(pushed) == .ready)
        #expect(Self.streamID(pushed) == 1)
        let (bytes, ended) = await QUICConnectionTests.receiveToEnd(pushed)
        #expect(bytes == Data(repeating: UInt8(ascii: "p"), count: 3000))
        #expect(ended)
        pushed.cancel()
        stream.cancel()
        group.cancel()
        _ = try await states.wait("cancelled") { $0.contains(.cancelled) }
    }

    @Test("application error codes reach the server: a stream's streamApplicationErrorCode with forceCancel resets that stream with it; the group's applicationError with cancel closes the connection with it")
    func applicationErrors() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let group = Self.group(to: server)
        let states = Recorder<NWConnectionGroup.State>()
        #expect(try await Self.start(group, states: states) == .ready)
        let (first, _) = try await Self.readyStream(of: group)
        let (second, _) = try await Self.readyStream(of: group)
        #expect(await TLSInteropTests.exchange(second, "opened") == "opened")
        let metadata = try #require(second.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)
        metadata.streamApplicationErrorCode = 77
        #expect(metadata.streamApplicationErrorCode == 77)
        second.forceCancel()
        try await server.process.waitForOutput(containing: "reset \(metadata.streamIdentifier) 77\n")
        let connection = try #require(group.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)
        connection.applicationError = NWProtocolQUIC.ApplicationError(code: 42, reason: "done here")
        first.cancel()
        group.cancel()
        _ = try await states.wait("cancelled") { $0.contains(.cancelled) }
        try await server.process.waitForOutput(containing: "closed 42\n")
    }

    @Test("the server resetting one stream fails that connection with ECONNRESET; the group and its other streams go on")
    func resetStreamLeavesOthers() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let group = Self.group(to: server)
        let states = Recorder<NWConnectionGroup.State>()
        #expect(try await Self.start(group, states: states) == .ready)
        let (survivor, _) = try await Self.readyStream(of: group)
        let (doomed, doomedStates) = try await Self.readyStream(of: group)
        doomed.send(content: Data("reset:9".utf8), completion: .contentProcessed { _ in })
        let seen = try await Self.failure(doomedStates) { if case .failed = $0 { true } else { false } }
        #expect(seen.contains(.failed(.posix(.ECONNRESET))), "\(seen)")
        #expect(await TLSInteropTests.exchange(survivor, "still here") == "still here")
        #expect(group.state == .ready)
        doomed.cancel()
        survivor.cancel()
        group.cancel()
        _ = try await states.wait("cancelled") { $0.contains(.cancelled) }
    }

    @Test("the server closing the connection fails the group and its streams")
    func serverClosesGroup() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let group = Self.group(to: server)
        let states = Recorder<NWConnectionGroup.State>()
        #expect(try await Self.start(group, states: states) == .ready)
        let (stream, streamStates) = try await Self.readyStream(of: group)
        stream.send(content: Data("close:5".utf8), completion: .contentProcessed { _ in })
        let groupStates = try await Self.failure(states) { if case .failed = $0 { true } else { false } }
        #expect(groupStates.contains(.failed(.posix(.ECONNABORTED))), "\(groupStates)")
        let seen = try await Self.failure(streamStates) { if case .failed = $0 { true } else { false } }
        #expect(seen.contains(.failed(.posix(.ECONNABORTED))), "\(seen)")
        stream.cancel()
        group.cancel()
    }

    @Test("unidirectional streams: a stream opened with direction .unidirectional is stream 2, its receive side ends at once, its bytes and FIN reach the server; the server's answer on a unidirectional stream of its own (3) reaches newConnectionHandler, where receiving works and a send fails")
    func unidirectionalStreams() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let group = Self.group(to: server)
        let answers = Recorder<NWConnection>()
        group.newConnectionHandler = { answers.append($0) }
        let states = Recorder<NWConnectionGroup.State>()
        #expect(try await Self.start(group, states: states) == .ready)
        let options = NWProtocolQUIC.Options(alpn: ["echo"])
        options.direction = .unidirectional
        let stream = try #require(NWConnection(from: group, using: options))
        #expect(await TLSInteropTests.settle(stream) == .ready)
        #expect(Self.streamID(stream) == 2)
        let (nothing, ended) = await QUICConnectionTests.receiveToEnd(stream)
        #expect(nothing.isEmpty && ended, "nothing ever comes on this side's unidirectional stream")
        stream.send(content: Data("one way".utf8), contentContext: .finalMessage, completion: .contentProcessed { _ in })
        try await server.process.waitForOutput(containing: "uni 2 7\n")
        let answer = try #require(try await answers.wait(count: 1, "the server's stream").first)
        answer.start(queue: DispatchQueue(label: "answer"))
        let (bytes, answerEnded) = await QUICConnectionTests.receiveToEnd(answer)
        #expect(String(decoding: bytes, as: UTF8.self) == "uni:one way" && answerEnded)
        #expect(Self.streamID(answer) == 3)
        let refused = Recorder<NWError?>()
        answer.send(content: Data("back".utf8), completion: .contentProcessed { refused.append($0) })
        let sendError = try await refused.wait("the send's completion") { !$0.isEmpty }.first ?? nil
        #expect(sendError != nil, "the peer's unidirectional stream carries nothing back")
        answer.cancel()
        stream.cancel()
        group.cancel()
    }

    @Test("a group's messages are the connection's datagrams: send is one datagram, the receive handler gets each echo whole from the group's endpoint; oversized ones are dropped, or cut and marked incomplete when not rejected; streams go on beside them")
    func datagrams() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let group = Self.group(to: server)
        let received = Recorder<(String, Bool, Bool)>()
        group.setReceiveHandler(maximumMessageSize: 100) { message, content, isComplete in
            received.append((content.map { String(decoding: $0, as: UTF8.self) } ?? "", isComplete, message.remoteEndpoint == group.descriptor.members.first))
        }
        let states = Recorder<NWConnectionGroup.State>()
        #expect(try await Self.start(group, states: states) == .ready)
        let sent = Recorder<NWError?>()
        group.send(content: Data("hello".utf8)) { sent.append($0) }
        group.send(content: Data(repeating: UInt8(ascii: "x"), count: 200)) { sent.append($0) }
        group.send(content: Data("after".utf8)) { sent.append($0) }
        group.send(content: Data(count: 70_000)) { sent.append($0) }
        let results = try await sent.wait(count: 4, "4 sends")
        #expect(results[0] == nil && results[1] == nil && results[2] == nil)
        #expect(results[3] == .posix(.EMSGSIZE))
        let messages = try await received.wait(count: 2, "the two small echoes")
        #expect(messages.map(\.0) == ["hello", "after"], "the 200-byte echo is rejected")
        #expect(messages.allSatisfy { $0.1 && $0.2 })
        // A stream beside the datagrams.
        let (stream, _) = try await Self.readyStream(of: group)
        #expect(await TLSInteropTests.exchange(stream, "stream too") == "stream too")
        // Not rejecting: the oversized echo comes cut, incomplete.
        group.setReceiveHandler(maximumMessageSize: 100, rejectOversizedMessages: false) { _, content, isComplete in
            received.append((content.map { String(decoding: $0, as: UTF8.self) } ?? "", isComplete, true))
        }
        group.send(content: Data(repeating: UInt8(ascii: "y"), count: 200)) { sent.append($0) }
        let all = try await received.wait(count: 3, "the cut echo")
        #expect(all[2].0 == String(repeating: "y", count: 100) && !all[2].1)
        stream.cancel()
        group.cancel()
    }

    @Test("what a group cannot be yet fails clearly: a multiplex group over TCP fails with EPROTONOSUPPORT and gives no connections")
    func refused() async throws {
        let group = NWConnectionGroup(with: NWMultiplexGroup(to: .hostPort(host: "127.0.0.1", port: 9)), using: .tcp)
        #expect(NWConnection(from: group) == nil)
        let states = Recorder<NWConnectionGroup.State>()
        #expect(try await Self.start(group, states: states) == .failed(.posix(.EPROTONOSUPPORT)))
        let sent = Recorder<NWError?>()
        group.send(content: Data("x".utf8)) { sent.append($0) }
        #expect(try await sent.wait("send") { !$0.isEmpty }.first == .posix(.EPROTONOSUPPORT))
        group.cancel()
    }
}
