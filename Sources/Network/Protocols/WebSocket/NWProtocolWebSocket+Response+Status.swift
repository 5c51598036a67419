extension NWProtocolWebSocket.Response {
    /// Accept or reject an upgrade request.
    public enum Status: Equatable, Hashable, Sendable {
        /// Answer `101 Switching Protocols`: the connection becomes a WebSocket.
        case accept
        /// Answer with an HTTP error (403 here) and close.
        case reject
    }
}
