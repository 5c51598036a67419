extension NWProtocolWebSocket.CloseCode {
    /// The close codes RFC 6455 defines, with its numbers as raw values.
    public enum Defined: UInt16, Equatable, Hashable, Sendable {
        /// 1000: the purpose of the connection is fulfilled.
        case normalClosure = 1000
        /// 1001: the endpoint is going away (a server shutting down, a page left).
        case goingAway = 1001
        /// 1002: the peer broke the protocol.
        case protocolError = 1002
        /// 1003: a kind of message the endpoint cannot take.
        case unsupportedData = 1003
        /// 1005: the close frame carried no code (never sent).
        case noStatusReceived = 1005
        /// 1006: the connection ended without a close frame (never sent).
        case abnormalClosure = 1006
        /// 1007: a message's content did not match its kind (text that is not UTF-8).
        case invalidFramePayloadData = 1007
        /// 1008: a message broke the endpoint's policy.
        case policyViolation = 1008
        /// 1009: a message too large to take.
        case messageTooBig = 1009
        /// 1010: the client needed an extension the server did not agree to.
        case mandatoryExtension = 1010
        /// 1011: the server met a condition that kept it from serving the request.
        case internalServerError = 1011
        /// 1015: the TLS handshake failed (never sent).
        case tlsHandshake = 1015
    }
}
