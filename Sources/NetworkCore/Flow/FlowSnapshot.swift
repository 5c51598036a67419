import NIOCore

/// Facts about a flow at one moment, taken on its event loop.
package struct FlowSnapshot: @unchecked Sendable {
    package var state: FlowConnectionState
    package var localAddress: SocketAddress?
    package var remoteAddress: SocketAddress?
    /// The transport channel, for reading socket options (tests, metadata).
    package var channel: Channel?
    package var bufferedInboundBytes: Int
    package var isDatagram: Bool
    package var report: FlowReport
    /// The negotiated TLS session, if the stack has TLS and the handshake completed.
    package var tlsSession: TLSSessionFacts?
}
