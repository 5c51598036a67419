extension NWProtocolWebSocket {
    /// A listener's answer to a client's upgrade request, returned by the handler given to
    /// ``NWProtocolWebSocket/Options/setClientRequestHandler(_:handler:)``.
    public struct Response: Sendable {
        /// Whether the upgrade is accepted.
        public let status: NWProtocolWebSocket.Response.Status
        /// The subprotocol chosen among those the client offered (nil: none).
        public let subprotocol: String?
        /// Headers to add to the response.
        public let additionalHeaders: [(name: String, value: String)]?

        /// An answer with `status`, the chosen `subprotocol`, and extra response headers.
        public init(
            status: NWProtocolWebSocket.Response.Status, subprotocol: String?,
            additionalHeaders: [(name: String, value: String)]? = nil
        ) {
            self.status = status
            self.subprotocol = subprotocol
            self.additionalHeaders = additionalHeaders
        }
    }
}
