extension NWProtocolWebSocket {
    /// The WebSocket protocol version spoken.
    public enum Version: Equatable, Hashable, Sendable {
        /// Version 13, the one RFC 6455 defines (`Sec-WebSocket-Version: 13`).
        case version13
    }
}
