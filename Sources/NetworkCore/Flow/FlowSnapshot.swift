import NIOCore

/// Facts about a flow at one moment, taken on its event loop (`Flow.inspect`, for tests and
/// diagnostics; the facade reads `FlowReadyFacts` instead).
package struct FlowSnapshot: @unchecked Sendable {
    package var state: FlowConnectionState
    package var localAddress: SocketAddress?
    package var remoteAddress: SocketAddress?
    /// The transport channel, for reading socket options.
    package var channel: Channel?
    package var report: FlowReport
}
