import NIOCore

/// A layer a listener puts into an accepted connection's pipeline that starts when the
/// application starts the connection, after the TLS handshake: a framer, or the WebSocket
/// upgrade. The connection is ready when every such layer is.
package protocol InboundStackLayer: AnyObject {
    /// Starts the layer; the future succeeds when it is ready, with what it settled.
    func startLayer() -> EventLoopFuture<StackLayerFacts>
}
