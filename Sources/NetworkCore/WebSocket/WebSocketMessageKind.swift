/// The kind of a WebSocket message, by its RFC 6455 opcode. The engine's own spelling: the facade
/// maps it to `NWProtocolWebSocket.Opcode`, and NIO's `WebSocketOpcode` stays inside the engine.
package enum WebSocketMessageKind: UInt8, Sendable, Hashable, CaseIterable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong: single frames of at most 125 bytes, allowed between the fragments
    /// of a data message.
    package var isControl: Bool { rawValue & 0x8 != 0 }
}
