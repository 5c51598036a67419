import Foundation
import NetworkCore
import NetworkSync

extension QUIC {
    /// One stream of a QUIC connection (``NetworkConnection``), opened by this side
    /// (``NetworkConnection/openStream(directionality:)``) or by the peer
    /// (``NetworkConnection/inboundStreams(_:)``). With ``QUICStream`` at its top it sends and
    /// receives bytes as a TCP connection does; its end of stream is the QUIC stream's FIN.
    public final class Stream<ApplicationProtocol: NetworkProtocolOptions>: NetworkChannel<ApplicationProtocol>, @unchecked Sendable {
        /// The QUIC connection the stream belongs to.
        public let parent: NetworkConnection<QUIC>
        /// Whether the stream carries bytes both ways.
        public final let directionality: QUICStream.Directionality
        /// Which side opened the stream.
        public final let initiator: QUICStream.Initiator
        private let errorCode = Lock<UInt64>(0)

        init(
            connection: NWConnection, applicationProtocol: ApplicationProtocol, parent: NetworkConnection<QUIC>,
            directionality: QUICStream.Directionality, initiator: QUICStream.Initiator, accepted: Bool
        ) {
            self.parent = parent
            self.directionality = directionality
            self.initiator = initiator
            super.init(core: ChannelCore(connection: connection, accepted: accepted), applicationProtocol: applicationProtocol)
        }

        private var quicMetadata: NWProtocolQUIC.Metadata? {
            core.connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata
        }

        /// The QUIC stream number (0, 4, 8… for a client's bidirectional streams); 0 until the
        /// stream is open.
        public var streamID: UInt64 { quicMetadata?.streamIdentifier ?? 0 }

        /// The application error code a reset of this stream sends (0 by default), as
        /// ``NWProtocolQUIC/Metadata/streamApplicationErrorCode`` sets it for a classic stream.
        public var streamApplicationErrorCode: UInt64 {
            get { errorCode.withLock { $0 } }
            set {
                errorCode.withLock { $0 = newValue }
                core.flow.setQUICApplicationErrors(stream: newValue, connection: nil)
            }
        }
    }
}
