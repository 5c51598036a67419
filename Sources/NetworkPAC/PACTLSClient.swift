import NIOCore

/// Starts TLS on the connection that fetches an `https://` script.
///
/// NetworkPAC has no TLS stack of its own: the engine hands in the one every connection of this
/// package uses, so a PAC server is verified exactly like any other TLS peer (and the module
/// stays free of GnuTLS and NIOSSL).
package protocol PACTLSClient: Sendable {
    /// Adds a client TLS handler to `channel` (called on its event loop) and completes once the
    /// handshake, the check of `hostName` included, has succeeded. A failure's description ends
    /// up in the `loadFailed` message.
    func startClient(on channel: any Channel, hostName: String) -> EventLoopFuture<Void>
}
