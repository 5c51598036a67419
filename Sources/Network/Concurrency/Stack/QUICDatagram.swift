import Foundation

/// A QUIC connection's datagrams (RFC 9221) as a stack's top: unreliable messages, each send
/// one datagram and each receive one datagram, as UDP's are. Reached through a QUIC
/// connection's ``NetworkConnection/datagrams``.
public struct QUICDatagram: NetworkProtocolOptions, OneToOneProtocol, MessageProtocol, DatagramProtocol, Sendable {
    public typealias BelowProtocol = QUIC
    public typealias ContentType = Data
    public typealias LegacyMessage = NWProtocolQUIC.Metadata

    /// What a received datagram reports besides its bytes.
    public struct Metadata: NetworkMetadataProtocol {
        /// The classic metadata of the layers involved.
        public let other: [NWProtocolMetadata]
    }

    /// A datagram layer (only connections over QUIC carry them).
    public init() {}
}

extension QUICDatagram: ChannelMessageDecoding {
    func message(from received: ChannelCore.Received) throws -> Message<Data> {
        (received.data, Metadata(other: []))
    }
}
