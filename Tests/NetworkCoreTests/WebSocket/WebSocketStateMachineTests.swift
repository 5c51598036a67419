import NIOCore
import NetworkCore
import Testing

/// The WebSocket layer's value types, without sockets: message assembly, close frames, the close
/// handshake and pong matching.
@Suite("Core.WebSocket")
struct WebSocketStateMachineTests {
    typealias Frame = WebSocketMessageAssembler.Frame

    static func frame(_ opcode: UInt8, _ bytes: [UInt8], fin: Bool = true, masked: Bool = false, reserved: Bool = false) -> Frame {
        Frame(fin: fin, opcode: opcode, reservedBits: reserved, masked: masked, payload: ByteBuffer(bytes: bytes))
    }

    @Test("fragments join into one message; control frames pass between them")
    func assembly() {
        var assembler = WebSocketMessageAssembler(role: .client, maximumMessageSize: 100)
        #expect(assembler.frameReceived(Self.frame(1, Array("he".utf8), fin: false)) == .none)
        #expect(assembler.frameReceived(Self.frame(9, [7])) == .ping(ByteBuffer(bytes: [7])))
        #expect(assembler.frameReceived(Self.frame(0, Array("ll".utf8), fin: false)) == .none)
        #expect(assembler.bufferedBytes == 4)
        #expect(assembler.frameReceived(Self.frame(0, Array("o".utf8))) == .message(.text, ByteBuffer(string: "hello")))
        #expect(assembler.bufferedBytes == 0)
        #expect(assembler.frameReceived(Self.frame(2, [1, 2])) == .message(.binary, ByteBuffer(bytes: [1, 2])))
        #expect(assembler.frameReceived(Self.frame(10, [])) == .pong(ByteBuffer()))
    }

    @Test("framing rules: masking by role, reserved bits and opcodes, stray continuations, interleaved data messages")
    func rules() {
        func first(_ role: WebSocketRole, _ frames: [Frame]) -> WebSocketMessageAssembler.Action {
            var assembler = WebSocketMessageAssembler(role: role, maximumMessageSize: 100)
            var last = WebSocketMessageAssembler.Action.none
            for frame in frames { last = assembler.frameReceived(frame) }
            return last
        }
        #expect(first(.server, [Self.frame(2, [1])]) == .fail(.protocolError), "a client's frame must be masked")
        #expect(first(.server, [Self.frame(2, [1], masked: true)]) == .message(.binary, ByteBuffer(bytes: [1])))
        #expect(first(.client, [Self.frame(2, [1], masked: true)]) == .fail(.protocolError), "a server's frame must not be")
        #expect(first(.client, [Self.frame(2, [1], reserved: true)]) == .fail(.protocolError))
        #expect(first(.client, [Self.frame(3, [1])]) == .fail(.protocolError))
        #expect(first(.client, [Self.frame(0xB, [])]) == .fail(.protocolError))
        #expect(first(.client, [Self.frame(0, [1])]) == .fail(.protocolError))
        #expect(first(.client, [Self.frame(2, [1], fin: false), Self.frame(1, [1])]) == .fail(.protocolError))
        #expect(first(.client, [Self.frame(9, [], fin: false)]) == .fail(.protocolError))
        #expect(first(.client, [Self.frame(9, Array(repeating: 0, count: 126))]) == .fail(.protocolError))
        // After a failure nothing more comes out.
        #expect(first(.client, [Self.frame(3, []), Self.frame(2, [1])]) == .none)
    }

    @Test("size bound: a single frame or the fragments' sum over the maximum is refused with 1009")
    func sizeBound() {
        var assembler = WebSocketMessageAssembler(role: .client, maximumMessageSize: 10)
        #expect(assembler.frameReceived(Self.frame(2, Array(repeating: 0, count: 11))) == .fail(.messageTooBig))
        var fragments = WebSocketMessageAssembler(role: .client, maximumMessageSize: 10)
        #expect(fragments.frameReceived(Self.frame(2, Array(repeating: 0, count: 6), fin: false)) == .none)
        #expect(fragments.frameReceived(Self.frame(0, Array(repeating: 0, count: 5))) == .fail(.messageTooBig))
        #expect(fragments.bufferedBytes == 0)
        var exact = WebSocketMessageAssembler(role: .client, maximumMessageSize: 10)
        #expect(exact.frameReceived(Self.frame(2, Array(repeating: 0, count: 10))) != .fail(.messageTooBig))
        #expect(WebSocketFailure.messageTooBig.closeCode == 1009)
    }

    @Test("text must be UTF-8 (1007), checked on the whole message so a character may straddle fragments")
    func utf8() {
        var assembler = WebSocketMessageAssembler(role: .client, maximumMessageSize: 100)
        #expect(assembler.frameReceived(Self.frame(1, [0xC3], fin: false)) == .none)
        #expect(assembler.frameReceived(Self.frame(0, [0xA9])) == .message(.text, ByteBuffer(bytes: [0xC3, 0xA9])))
        #expect(assembler.frameReceived(Self.frame(1, [0x62, 0xC3, 0x28])) == .fail(.invalidPayload))
        #expect(WebSocketFailure.invalidPayload.closeCode == 1007)
    }

    @Test("close frames: empty, code and reason, bad length, codes no one may send, a reason that is not UTF-8")
    func closePayload() {
        #expect(WebSocketClosePayload.parse(ByteBuffer()) == .success(WebSocketClosePayload(code: nil)))
        #expect(
            WebSocketClosePayload.parse(ByteBuffer(bytes: [0x0F, 0xA1, 0x62, 0x79, 0x65]))
                == .success(WebSocketClosePayload(code: 4001, reason: ByteBuffer(string: "bye"))))
        #expect(WebSocketClosePayload.parse(ByteBuffer(bytes: [0x03])) == .failure(.protocolError))
        for code: UInt16 in [999, 1004, 1005, 1006, 1015, 1016, 2999, 5000] {
            #expect(WebSocketClosePayload.parse(ByteBuffer(integer: code)) == .failure(.protocolError), "\(code)")
        }
        for code: UInt16 in [1000, 1001, 1003, 1007, 1011, 1014, 3000, 3999, 4000, 4999] {
            #expect(WebSocketClosePayload.parse(ByteBuffer(integer: code)) == .success(WebSocketClosePayload(code: code)), "\(code)")
        }
        #expect(WebSocketClosePayload.parse(ByteBuffer(bytes: [0x03, 0xE8, 0xFF])) == .failure(.invalidPayload))
        // Encoding: no code, no body; a long reason is cut at a character boundary within 125 bytes.
        #expect(WebSocketClosePayload(code: nil, reason: ByteBuffer(string: "x")).encoded().readableBytes == 0)
        let long = WebSocketClosePayload(code: 1000, reason: ByteBuffer(string: String(repeating: "é", count: 100))).encoded()
        #expect(long.readableBytes <= 125)
        #expect(Array(long.readableBytesView.dropFirst(2)).isValidUTF8)
    }

    @Test("close handshake: the peer closes first, we close first, a failure closes with its code once")
    func closeHandshake() {
        var peerFirst = WebSocketCloseHandshake()
        let reply = peerFirst.peerClosed(WebSocketClosePayload(code: 4001, reason: ByteBuffer(string: "bye")))
        #expect(reply == .init(send: WebSocketClosePayload(code: 4001), closeTransport: true))
        #expect(!peerFirst.canSend)
        #expect(peerFirst.closeRequested(WebSocketClosePayload(code: 1000)) == .init())

        var weFirst = WebSocketCloseHandshake()
        #expect(weFirst.closeRequested(WebSocketClosePayload(code: 3000)) == .init(send: WebSocketClosePayload(code: 3000)))
        #expect(weFirst.state == .closeSent)
        #expect(weFirst.closeRequested(WebSocketClosePayload(code: 1000)) == .init(), "one close frame only")
        #expect(weFirst.peerClosed(WebSocketClosePayload(code: 3000)) == .init(closeTransport: true))
        #expect(weFirst.state == .closed)

        var failing = WebSocketCloseHandshake()
        #expect(failing.failed(.protocolError) == .init(send: WebSocketClosePayload(code: 1002), closeTransport: true))
        #expect(failing.failed(.messageTooBig) == .init(closeTransport: true))
    }

    @Test("pongs answer the oldest ping with their payload and every older one; unsolicited pongs answer nothing")
    func pingTracker() {
        var tracker = WebSocketPingTracker<Int>()
        tracker.pingSent(payload: ByteBuffer(string: "a"), handler: 1)
        tracker.pingSent(payload: ByteBuffer(string: "b"), handler: 2)
        tracker.pingSent(payload: ByteBuffer(string: "c"), handler: 3)
        #expect(tracker.pongReceived(payload: ByteBuffer(string: "z")) == [])
        #expect(tracker.pongReceived(payload: ByteBuffer(string: "b")) == [1, 2])
        #expect(tracker.count == 1)
        #expect(tracker.takeAll() == [3])
        #expect(tracker.count == 0)
    }
}
