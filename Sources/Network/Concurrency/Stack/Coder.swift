import Foundation
import NetworkCore

/// Codable values as messages: each send encodes one `Sending` value with the coder, each
/// receive decodes one `Receiving` value. Over a stream each value travels behind its length (a
/// big-endian UInt32); over datagrams each value is one datagram.
public struct Coder<Sending: Encodable, Receiving: Decodable, CoderType: NetworkCoder>:
    NetworkProtocolOptions, OneToOneProtocol, MessageProtocol, Sendable
{
    public typealias BelowProtocol = TLS
    public typealias ContentType = Receiving
    public typealias LegacyMessage = NWProtocolFramer.Message

    /// What a received value reports besides itself.
    public struct Metadata: NetworkMetadataProtocol {
        /// The classic metadata of the layers below.
        public let other: [NWProtocolMetadata]
    }

    let coder: CoderType
    let framing: CoderFraming
    let below: any StackLayer

    private init(coder: CoderType, framing: CoderFraming, below: some NetworkProtocolOptions) {
        self.coder = coder
        self.framing = framing
        self.below = UnsupportedStackLayer.layer(below)
    }

    /// One type both ways, over a stream.
    public init<BelowProtocol: StreamProtocol>(
        _ type: Sending.Type, using coder: CoderType, @ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol
    ) where Sending == Receiving {
        self.init(coder: coder, framing: .stream, below: builder())
    }

    /// One type both ways, over datagrams.
    public init<BelowProtocol: DatagramProtocol>(
        _ type: Sending.Type, using coder: CoderType, @ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol
    ) where Sending == Receiving {
        self.init(coder: coder, framing: .datagram, below: builder())
    }

    /// Different types sent and received, over datagrams.
    public init<BelowProtocol: DatagramProtocol>(
        sending: Sending.Type, receiving: Receiving.Type, using coder: CoderType,
        @ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol
    ) {
        self.init(coder: coder, framing: .datagram, below: builder())
    }

    /// Different types sent and received, over a stream.
    public init<BelowProtocol: StreamProtocol>(
        sending: Sending.Type, receiving: Receiving.Type, using coder: CoderType,
        @ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol
    ) {
        self.init(coder: coder, framing: .stream, below: builder())
    }

    /// Different types received and sent, over datagrams.
    public init<BelowProtocol: DatagramProtocol>(
        receiving: Receiving.Type, sending: Sending.Type, using coder: CoderType,
        @ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol
    ) {
        self.init(coder: coder, framing: .datagram, below: builder())
    }

    /// Different types received and sent, over a stream.
    public init<BelowProtocol: StreamProtocol>(
        receiving: Receiving.Type, sending: Sending.Type, using coder: CoderType,
        @ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol
    ) {
        self.init(coder: coder, framing: .stream, below: builder())
    }
}

extension Coder: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        for factory in framing.framers.compactMap({ $0 as? TLVFramerFactory }) {
            plan.application.append(BuiltInFramerOptions(layout: factory.layout, label: factory.label))
        }
        below.addLayers(to: &plan)
    }
}
