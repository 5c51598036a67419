/// What a QUIC server connection needs from the client's Initial that starts it: the
/// connection IDs, and, after a Retry, the ID the Retry gave and the token that proved the
/// client's address (RFC 9000, 7.3: both go back in the transport parameters or settings).
package struct QUICInitial: Sendable, Equatable {
    /// The destination ID of the client's very first Initial (before any Retry).
    package var originalDestination: [UInt8]
    /// The client's own ID.
    package var clientSource: [UInt8]
    /// The source ID of the Retry this client answered, if it answered one.
    package var retrySource: [UInt8]?
    /// The Retry token the client brought back (its address is then proven).
    package var token: [UInt8]?

    package init(originalDestination: [UInt8], clientSource: [UInt8], retrySource: [UInt8]? = nil, token: [UInt8]? = nil) {
        self.originalDestination = originalDestination
        self.clientSource = clientSource
        self.retrySource = retrySource
        self.token = token
    }
}
