extension NWProtocolFramer {
    /// What a framer's `start` says about the connection.
    public enum StartResult: Equatable, Hashable, Sendable {
        /// The framer needs nothing more: the connection may become ready.
        case ready
        /// The framer runs a handshake first and calls ``NWProtocolFramer/Instance/markReady()``
        /// (or ``NWProtocolFramer/Instance/markFailed(error:)``) when it is done.
        case willMarkReady
    }
}
