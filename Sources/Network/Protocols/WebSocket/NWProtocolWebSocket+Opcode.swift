extension NWProtocolWebSocket {
    /// The kind of a WebSocket message; the raw values are RFC 6455's frame opcodes.
    public enum Opcode: Int32, Equatable, Hashable, Sendable {
        /// A continuation frame (only inside the protocol; whole messages never carry it).
        case cont = 0
        /// A text message: UTF-8.
        case text = 1
        /// A binary message.
        case binary = 2
        /// The close handshake: a close code, and an optional UTF-8 reason as the content.
        case close = 8
        /// A ping; the peer answers with a pong carrying the same content.
        case ping = 9
        /// A pong, the answer to a ping.
        case pong = 10
    }
}
