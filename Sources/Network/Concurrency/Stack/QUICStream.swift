import Foundation

/// One stream of a QUIC connection as a stack's top: a byte stream, as TCP and TLS are. QUIC
/// connections vend streams (``NetworkConnection/openStream(directionality:)``,
/// ``NetworkConnection/inboundStreams(_:)``); it is not written into a stack by hand.
public struct QUICStream: NetworkProtocolOptions, OneToOneProtocol, StreamProtocol, Sendable {
    public typealias BelowProtocol = QUIC

    /// Whether a stream carries bytes both ways or only from the side that opened it.
    public enum Directionality: Equatable, Hashable, Sendable {
        /// Both sides send and receive.
        case bidirectional
        /// Only the side that opened the stream sends; the other only receives.
        case unidirectional
    }

    /// Which side of the QUIC connection opened a stream.
    public enum Initiator: Equatable, Hashable, Sendable {
        /// The side that made the connection.
        case client
        /// The side that accepted it.
        case server
    }

    /// What a receive on a stream reports besides its bytes.
    public struct Metadata: NetworkMetadataProtocol {
        /// The peer ended its side of the stream: no bytes follow these.
        public let endOfStream: Bool
        /// The classic metadata of the layers involved.
        public let other: [NWProtocolMetadata]
    }

    /// A stream layer (only connections over QUIC make streams).
    public init() {}
}

extension QUICStream.Metadata: StreamMetadataMaking {}

extension QUICStream: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        // (The QUIC connection the stream belongs to is the transport.)
    }
}
