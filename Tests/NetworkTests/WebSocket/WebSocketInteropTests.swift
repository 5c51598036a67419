import Foundation
import Network
import PeerSupport
import Testing

/// `NWConnection` with WebSocket against python websockets 17.4 as the server (`ws_server.py`),
/// over TCP and TLS.
@Suite("WebSocket.PythonServer", .serialized)
struct WebSocketPythonServerTests {
    typealias Peer = WebSocketPeer

    @Test("text and binary echo; the subprotocol and the server's headers are on the connection's metadata")
    func echo() async throws {
        guard let (server, port) = try await PythonWebSockets.server() else { return }
        defer { server.stop() }
        let parameters = Peer.parameters { options in
            options.setSubprotocols(["chat", "echo"])
            options.setAdditionalHeaders([(name: "X-Test", value: "swift")])
        }
        let (connection, state) = try await Peer.connect("ws://127.0.0.1:\(port)/echo", parameters)
        defer { connection.cancel() }
        #expect(state == .ready)
        let metadata = try #require(connection.metadata(definition: NWProtocolWebSocket.definition) as? NWProtocolWebSocket.Metadata)
        #expect(metadata.selectedSubprotocol == "echo")
        #expect(metadata.additionalServerHeaders?.contains { $0.0.lowercased() == "x-reply" && $0.1 == "swift" } == true)

        try await Peer.send(connection, Data("hello text".utf8), context: Peer.context(.text))
        let text = try await Peer.receive(connection)
        #expect(text.opcode == .text)
        #expect(text.text == "hello text")
        #expect(text.isComplete)

        // No WebSocket metadata: binary.
        try await Peer.send(connection, Data([0, 1, 2, 255]))
        let binary = try await Peer.receive(connection)
        #expect(binary.opcode == .binary)
        #expect(binary.data == Data([0, 1, 2, 255]))
    }

    @Test("a message the server sends in fragments arrives whole; our incomplete sends leave as fragments of one message")
    func fragmentation() async throws {
        guard let (server, port) = try await PythonWebSockets.server() else { return }
        defer { server.stop() }
        let (connection, state) = try await Peer.connect("ws://127.0.0.1:\(port)/fragment", Peer.parameters())
        defer { connection.cancel() }
        #expect(state == .ready)
        let payload = Peer.payload(100_000)
        try await Peer.send(connection, payload)
        let whole = try await Peer.receive(connection)
        #expect(whole.data == payload)
        #expect(whole.opcode == .binary)

        // Three sends, the first two incomplete: one text message at the server.
        try await Peer.send(connection, Data("frag".utf8), context: Peer.context(.text), isComplete: false)
        try await Peer.send(connection, Data("mented ".utf8), context: Peer.context(.text), isComplete: false)
        try await Peer.send(connection, Data("text".utf8), context: Peer.context(.text), isComplete: true)
        let joined = try await Peer.receive(connection)
        #expect(joined.text == "fragmented text")
        #expect(joined.opcode == .text)
    }

    @Test("the server's ping: answered by autoReplyPing and not delivered, or delivered for the application to answer")
    func serverPing() async throws {
        guard let (server, port) = try await PythonWebSockets.server() else { return }
        defer { server.stop() }
        let (automatic, state) = try await Peer.connect("ws://127.0.0.1:\(port)/ping", Peer.parameters { $0.autoReplyPing = true })
        defer { automatic.cancel() }
        #expect(state == .ready)
        let first = try await Peer.receive(automatic)
        #expect(first.opcode == .text)
        #expect(first.text == "pong ok")

        let (manual, manualState) = try await Peer.connect("ws://127.0.0.1:\(port)/ping", Peer.parameters())
        defer { manual.cancel() }
        #expect(manualState == .ready)
        let ping = try await Peer.receive(manual)
        #expect(ping.opcode == .ping)
        #expect(ping.text == "ping-from-python")
        try await Peer.send(manual, ping.data, context: Peer.context(.pong))
        #expect(try await Peer.receive(manual).text == "pong ok")
    }

    @Test("our ping: its pong handler runs when the pong arrives")
    func clientPing() async throws {
        guard let (server, port) = try await PythonWebSockets.server() else { return }
        defer { server.stop() }
        let (connection, state) = try await Peer.connect("ws://127.0.0.1:\(port)/echo", Peer.parameters())
        defer { connection.cancel() }
        #expect(state == .ready)
        let pong = Recorder<NWError?>()
        let metadata = NWProtocolWebSocket.Metadata(opcode: .ping)
        metadata.setPongHandler(DispatchQueue(label: "pong")) { pong.append($0) }
        try await Peer.send(connection, Data("are you there".utf8), context: NWConnection.ContentContext(identifier: "ping", metadata: [metadata]))
        let answers = try await pong.wait(count: 1, "the pong handler")
        #expect(answers[0] == nil)
    }

    @Test("close codes both ways: the server's 4001 arrives as a close message, then the end; our 3001 reaches the server")
    func closeCodes() async throws {
        guard let (server, port) = try await PythonWebSockets.server() else { return }
        defer { server.stop() }
        let (connection, state) = try await Peer.connect("ws://127.0.0.1:\(port)/close/4001", Peer.parameters())
        defer { connection.cancel() }
        #expect(state == .ready)
        let close = try await Peer.receive(connection)
        #expect(close.opcode == .close)
        #expect(close.closeCode == .privateCode(4001))
        #expect(close.text == "bye")
        let end = try await Peer.receive(connection)
        #expect(end.isComplete)
        #expect(end.data == nil || end.data?.isEmpty == true)
        try await server.waitForOutput(containing: "closed 4001")

        for (code, number) in [(NWProtocolWebSocket.CloseCode.applicationCode(3001), 3001), (.protocolCode(.goingAway), 1001)] {
            let (ours, ourState) = try await Peer.connect("ws://127.0.0.1:\(port)/echo", Peer.parameters())
            defer { ours.cancel() }
            #expect(ourState == .ready)
            try await Peer.send(ours, Data("done here".utf8), context: Peer.context(.close, closeCode: code))
            try await server.waitForOutput(containing: "closed \(number) done here")
            // The server's answer closes the handshake.
            let answer = try await Peer.receive(ours)
            #expect(answer.opcode == .close)
            #expect(answer.closeCode == code)
        }
    }

    @Test("a 16 MiB binary message both ways")
    func sixteenMebibytes() async throws {
        guard let (server, port) = try await PythonWebSockets.server() else { return }
        defer { server.stop() }
        let (connection, state) = try await Peer.connect("ws://127.0.0.1:\(port)/echo", Peer.parameters())
        defer { connection.cancel() }
        #expect(state == .ready)
        let payload = Peer.payload(16 << 20)
        try await Peer.send(connection, payload)
        let echoed = try await Peer.receive(connection, timeout: 60)
        #expect(echoed.data?.count == payload.count)
        #expect(echoed.data == payload)
    }

    @Test("invalid UTF-8 in a text message: we close with 1007 and the connection fails")
    func invalidUTF8() async throws {
        guard let (server, port) = try await PythonWebSockets.server() else { return }
        defer { server.stop() }
        let (connection, state) = try await Peer.connect("ws://127.0.0.1:\(port)/badutf8", Peer.parameters())
        defer { connection.cancel() }
        #expect(state == .ready)
        let received = try await Peer.receive(connection)
        #expect(received.error == .posix(.EBADMSG))
        try await server.waitForOutput(containing: "closed 1007")
    }

    @Test("a message over maximumMessageSize: we close with 1009 and the connection fails with EMSGSIZE")
    func oversized() async throws {
        guard let (server, port) = try await PythonWebSockets.server() else { return }
        defer { server.stop() }
        let (connection, state) = try await Peer.connect(
            "ws://127.0.0.1:\(port)/send/5000", Peer.parameters { $0.maximumMessageSize = 1000 })
        defer { connection.cancel() }
        #expect(state == .ready)
        let received = try await Peer.receive(connection)
        #expect(received.error == .posix(.EMSGSIZE))
        try await server.waitForOutput(containing: "closed 1009")
    }

    @Test("a server that answers the upgrade with 403: the connection fails (not waiting) with ECONNREFUSED")
    func rejected() async throws {
        guard let (server, port) = try await PythonWebSockets.server() else { return }
        defer { server.stop() }
        let (connection, state) = try await Peer.connect("ws://127.0.0.1:\(port)/reject", Peer.parameters())
        defer { connection.cancel() }
        #expect(state == .failed(.posix(.ECONNREFUSED)))
    }

    @Test("wss: TLS verified against a test CA, then the upgrade and an echo")
    func secure() async throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue()
        guard let (server, port) = try await PythonWebSockets.server(certificate: leaf.certificatePath, key: leaf.keyPath) else { return }
        defer { server.stop() }
        let anchors = [try authority.certificate]
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, trust, complete in
            let secTrust = sec_trust_copy_ref(trust).takeRetainedValue()
            SecTrustSetAnchorCertificates(secTrust, anchors as CFArray)
            complete(SecTrustEvaluateWithError(secTrust, nil))
        }, DispatchQueue(label: "verify-ws"))
        let (connection, state) = try await Peer.connect(
            "wss://localhost:\(port)/echo", Peer.parameters(NWParameters(tls: tls)) { $0.setSubprotocols(["echo"]) })
        defer { connection.cancel() }
        #expect(state == .ready)
        #expect((connection.metadata(definition: NWProtocolWebSocket.definition) as? NWProtocolWebSocket.Metadata)?.selectedSubprotocol == "echo")
        try await Peer.send(connection, Data("over tls".utf8), context: Peer.context(.text))
        #expect(try await Peer.receive(connection).text == "over tls")
    }

    @Test("a wss URL over parameters without TLS is refused, never sent in plaintext")
    func secureURLWithoutTLS() async throws {
        let (connection, state) = try await Peer.connect("wss://127.0.0.1:9/echo", Peer.parameters())
        defer { connection.cancel() }
        #expect(state == .failed(.posix(.EPROTONOSUPPORT)))
    }
}

/// `NWListener` with WebSocket against python websockets 17.4 as the client (`ws_client.py`),
/// and against our own `NWConnection`.
@Suite("WebSocket.Listener", .serialized)
struct WebSocketListenerTests {
    typealias Peer = WebSocketPeer

    static func run(_ url: String, _ scenario: String, _ arguments: [String] = []) async throws -> String? {
        guard let client = try await PythonWebSockets.client(url, scenario, arguments) else { return nil }
        defer { client.stop() }
        _ = await client.waitForExit(timeout: 60)
        return String(decoding: client.standardOutput, as: UTF8.self)
    }

    @Test("python's text, binary and fragmented messages are echoed; the listener's subprotocol is chosen")
    func echo() async throws {
        let (listener, port) = try await Peer.echoListener(Peer.parameters { $0.setSubprotocols(["echo"]) })
        defer { listener.cancel() }
        guard let output = try await Self.run("ws://127.0.0.1:\(port)/", "echo") else { return }
        #expect(output.contains("subprotocol echo"))
        #expect(output.contains("text hello text"))
        #expect(output.contains("binary 000162696e617279"))
        let fragmented = try await Self.run("ws://127.0.0.1:\(port)/", "fragment")
        #expect(fragmented?.contains("text fragmented text") == true)
    }

    @Test("python's ping is answered (autoReplyPing); a 16 MiB message is echoed")
    func pingAndBig() async throws {
        let (listener, port) = try await Peer.echoListener(Peer.parameters { $0.autoReplyPing = true })
        defer { listener.cancel() }
        guard let output = try await Self.run("ws://127.0.0.1:\(port)/", "ping") else { return }
        #expect(output.contains("pong ok"))
        let big = try await Self.run("ws://127.0.0.1:\(port)/", "big", ["\(16 << 20)"])
        #expect(big?.contains("big \(16 << 20) True") == true)
    }

    @Test("python's close code 3001 reaches the application and is answered; invalid UTF-8 gets 1007; oversize gets 1009")
    func closeCodes() async throws {
        let seen = Recorder<Peer.Received>()
        let (listener, port) = try await Peer.echoListener(Peer.parameters { $0.maximumMessageSize = 1 << 20 }, seen: seen)
        defer { listener.cancel() }
        guard let output = try await Self.run("ws://127.0.0.1:\(port)/", "close", ["3001"]) else { return }
        #expect(output.contains("closed 3001"))
        let close = try await seen.wait(count: 1, "the close message")[0]
        #expect(close.opcode == .close)
        #expect(close.closeCode == .applicationCode(3001))
        #expect(close.text == "client bye")

        let invalid = try await Self.run("ws://127.0.0.1:\(port)/", "badutf8")
        #expect(invalid?.contains("closed 1007") == true)
        let oversized = try await Self.run("ws://127.0.0.1:\(port)/", "big", ["\(2 << 20)"])
        #expect(oversized?.contains("1009") == true, "\(oversized ?? "")")
    }

    @Test("setClientRequestHandler sees the offered subprotocols and headers, picks one, adds a header, or rejects with 403")
    func requestHandler() async throws {
        let requests = Recorder<[String]>()
        let parameters = Peer.parameters { options in
            options.setClientRequestHandler(DispatchQueue(label: "ws-requests")) { subprotocols, headers in
                requests.append(subprotocols)
                let reject = headers.contains { $0.name.lowercased() == "x-test" && $0.value == "reject-me" }
                return NWProtocolWebSocket.Response(
                    status: reject ? .reject : .accept, subprotocol: subprotocols.last,
                    additionalHeaders: [(name: "X-Served-By", value: "nwlistener")])
            }
        }
        let (listener, port) = try await Peer.echoListener(parameters)
        defer { listener.cancel() }
        let client = Peer.parameters { options in
            options.setSubprotocols(["one", "two"])
            options.setAdditionalHeaders([(name: "X-Test", value: "swift")])
        }
        let (connection, state) = try await Peer.connect("ws://127.0.0.1:\(port)/", client)
        defer { connection.cancel() }
        #expect(state == .ready)
        #expect(try await requests.wait(count: 1, "the request handler")[0] == ["one", "two"])
        let metadata = connection.metadata(definition: NWProtocolWebSocket.definition) as? NWProtocolWebSocket.Metadata
        #expect(metadata?.selectedSubprotocol == "two")
        #expect(metadata?.additionalServerHeaders?.contains { $0.0 == "X-Served-By" && $0.1 == "nwlistener" } == true)

        let refused = Peer.parameters { $0.setAdditionalHeaders([(name: "X-Test", value: "reject-me")]) }
        let (rejected, rejectedState) = try await Peer.connect("ws://127.0.0.1:\(port)/", refused)
        defer { rejected.cancel() }
        #expect(rejectedState == .failed(.posix(.ECONNREFUSED)))
    }

    @Test("our client and our listener: text, binary, ping with pong handler, close codes 1000, 3999, 4999 round trip")
    func ourClientOurListener() async throws {
        let seen = Recorder<Peer.Received>()
        let (listener, port) = try await Peer.echoListener(Peer.parameters { $0.autoReplyPing = true }, seen: seen)
        defer { listener.cancel() }
        for code in [NWProtocolWebSocket.CloseCode.protocolCode(.normalClosure), .applicationCode(3999), .privateCode(4999)] {
            let (connection, state) = try await Peer.connect("ws://127.0.0.1:\(port)/chat?room=1", Peer.parameters())
            defer { connection.cancel() }
            #expect(state == .ready)
            try await Peer.send(connection, Data("héllo".utf8), context: Peer.context(.text))
            let text = try await Peer.receive(connection)
            #expect(text.text == "héllo")
            #expect(text.opcode == .text)
            try await Peer.send(connection, Peer.payload(70_000))
            #expect(try await Peer.receive(connection).data == Peer.payload(70_000))
            let pong = Recorder<NWError?>()
            let ping = NWProtocolWebSocket.Metadata(opcode: .ping)
            ping.setPongHandler(DispatchQueue(label: "pong")) { pong.append($0) }
            try await Peer.send(connection, Data("p".utf8), context: NWConnection.ContentContext(identifier: "ping", metadata: [ping]))
            #expect(try await pong.wait(count: 1, "the pong")[0] == nil)
            try await Peer.send(connection, nil, context: Peer.context(.close, closeCode: code))
            let answer = try await Peer.receive(connection)
            #expect(answer.opcode == .close)
            #expect(answer.closeCode == code)
        }
        let closes = try await seen.wait(count: 9, "the listener's messages").filter { $0.opcode == .close }
        #expect(closes.map(\.closeCode) == [.protocolCode(.normalClosure), .applicationCode(3999), .privateCode(4999)])
    }
}
