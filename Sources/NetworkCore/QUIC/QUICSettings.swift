import NIOCore

/// The QUIC settings of a flow (`NWProtocolQUIC.Options`), as this side announces them.
package struct QUICSettings: Sendable, Equatable {
    package var idleTimeout: TimeAmount = .seconds(30)
    package var handshakeTimeout: TimeAmount = .seconds(10)
    package var maxData: UInt64 = 4 << 20
    package var maxStreamDataBidirectionalLocal: UInt64 = 1 << 20
    package var maxStreamDataBidirectionalRemote: UInt64 = 1 << 20
    package var maxStreamDataUnidirectional: UInt64 = 1 << 20
    package var maxBidirectionalStreams: UInt64 = 100
    package var maxUnidirectionalStreams: UInt64 = 100
    /// The largest UDP payload this side sends and accepts; 0 for ngtcp2's default.
    package var maxUDPPayloadSize: Int = 0
    /// The connection belongs to a connection group: the flow stands for the connection and
    /// its streams are flows of their own (`QUICStreamMultiplexer`), instead of the flow
    /// carrying one stream.
    package var multiplexed = false

    package init() {}
}
