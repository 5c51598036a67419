import NetworkCore

extension NWProtocolWebSocket.Opcode {
    /// The opcode of a message kind the engine reports.
    init(_ kind: WebSocketMessageKind) {
        self = Self(rawValue: Int32(kind.rawValue)) ?? .binary
    }

    /// The engine's message kind.
    var engineKind: WebSocketMessageKind {
        WebSocketMessageKind(rawValue: UInt8(rawValue)) ?? .binary
    }
}
