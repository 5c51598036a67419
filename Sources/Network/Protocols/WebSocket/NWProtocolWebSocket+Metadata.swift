import Dispatch
import NetworkCore
import NetworkSync

extension NWProtocolWebSocket {
    /// WebSocket facts about one message (its kind, a close message's code, what to call when a
    /// ping's pong arrives), or, from `NWConnection.metadata(definition:)`, about the connection
    /// (the subprotocol and headers the handshake settled).
    public class Metadata: NWProtocolMetadata, @unchecked Sendable {
        /// The message's kind.
        public final let opcode: NWProtocolWebSocket.Opcode
        private let state: Lock<State>
        private let handshake: WebSocketHandshakeFacts?

        private struct State: @unchecked Sendable {
            var closeCode = NWProtocolWebSocket.CloseCode.protocolCode(.normalClosure)
            var pongHandler: (queue: DispatchQueue, handler: @Sendable (NWError?) -> Void)?
        }

        /// Metadata for a message of kind `opcode`, to attach to a send's context.
        public init(opcode: NWProtocolWebSocket.Opcode) {
            self.opcode = opcode
            self.state = Lock(State())
            self.handshake = nil
            super.init(definition: NWProtocolWebSocket.definition)
        }

        /// A received message's metadata.
        init(received info: WebSocketMessageInfo) {
            self.opcode = Opcode(info.kind)
            var state = State()
            if let code = info.closeCode {
                // (1012–1014 have no case of their own.)
                state.closeCode = CloseCode(rawValue: code) ?? .protocolCode(.protocolError)
            }
            self.state = Lock(state)
            self.handshake = nil
            super.init(definition: NWProtocolWebSocket.definition)
        }

        /// The connection's metadata, after the handshake.
        init(handshake: WebSocketHandshakeFacts) {
            self.opcode = .cont
            self.state = Lock(State())
            self.handshake = handshake
            super.init(definition: NWProtocolWebSocket.definition)
        }

        /// A close message's status code (normal closure unless set).
        public var closeCode: NWProtocolWebSocket.CloseCode {
            get { state.withLock { $0.closeCode } }
            set { state.withLock { $0.closeCode = newValue } }
        }

        /// For a ping sent with this metadata: `handler` runs on `queue` when its pong arrives
        /// (with nil), or with an error when the connection ends first.
        @preconcurrency public func setPongHandler(_ queue: DispatchQueue, handler: @escaping @Sendable (NWError?) -> Void) {
            state.withLock { $0.pongHandler = (queue, handler) }
        }

        /// The subprotocol the handshake settled on (connection metadata), nil for none.
        public var selectedSubprotocol: String? { handshake?.subprotocol }

        /// The other side's handshake headers besides the protocol's own (connection metadata):
        /// a client gets the server's response headers, a listener's connection the client's
        /// request headers.
        public var additionalServerHeaders: [(String, String)]? { handshake.map { $0.headers.map { ($0.name, $0.value) } } }

        /// What the engine needs to send a message with this metadata.
        var engineInfo: WebSocketMessageInfo {
            let (code, pong) = state.withLock { ($0.closeCode, $0.pongHandler) }
            // (Most sends: a data message with no pong handler, shared.)
            guard opcode == .close || pong != nil else { return WebSocketMessageInfo.plain(opcode.engineKind) }
            var sentCode: UInt16? = code.rawValue
            // 1005, 1006 and 1015 are never sent: the close frame then carries no code.
            if case .protocolCode(let defined) = code, [.noStatusReceived, .abnormalClosure, .tlsHandshake].contains(defined) {
                sentCode = nil
            }
            var pongHandler: (@Sendable (FlowError?) -> Void)?
            if let (queue, handler) = pong {
                pongHandler = { error in
                    let nwError: NWError? = error.map { NWError($0) }
                    queue.async { handler(nwError) }
                }
            }
            return WebSocketMessageInfo(kind: opcode.engineKind, closeCode: opcode == .close ? sentCode : nil, pongHandler: pongHandler)
        }
    }
}
