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
    /// The stream a connection opens is unidirectional (this side sends, the peer only reads).
    package var unidirectional = false
    /// The largest DATAGRAM frame (RFC 9221) this side accepts; 0: it takes none.
    package var maxDatagramFrameSize: UInt64 = 0
    /// The largest UDP payload this side sends and accepts; 0 for ngtcp2's default.
    package var maxUDPPayloadSize: Int = 0
    /// The connection belongs to a connection group: the flow stands for the connection and
    /// its streams are flows of their own (`QUICStreamMultiplexer`), instead of the flow
    /// carrying one stream.
    package var multiplexed = false

    package init() {}

    /// Makes these the settings of a connection group's connection, whose group sends and
    /// receives the connection's datagrams: it announces them (65,535-byte frames unless
    /// `maxDatagramFrameSize` says otherwise).
    package mutating func carryGroupDatagrams() {
        multiplexed = true
        if maxDatagramFrameSize == 0 { maxDatagramFrameSize = 65_535 }
    }

    /// Whether a connection over `transport` with these settings can send Fast Open's
    /// idempotent data as 0-RTT data: only one carrying a bidirectional stream.
    package func carriesEarlyData(_ transport: FlowTransportKind) -> Bool {
        transport == .quic && !multiplexed && !unidirectional
    }
}
