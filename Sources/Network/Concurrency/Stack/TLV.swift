import Foundation
import NetworkCore

/// Type-length-value messages over a stream (or datagrams): each message goes out behind its
/// type and its length, both unsigned and big-endian. By default both are 4 bytes (UInt32);
/// `TLV(type:length:)` picks other widths. Sends give the type; receives report it in
/// ``Metadata/type``.
public struct TLV: NetworkProtocolOptions, OneToOneProtocol, MessageProtocol, Sendable {
    public typealias BelowProtocol = TLS
    public typealias ContentType = Data
    public typealias LegacyMessage = NWProtocolFramer.Message

    /// What a received TLV message reports besides its bytes.
    public struct Metadata: NetworkMetadataProtocol {
        /// The message's type.
        public let type: Int
        /// The classic metadata of the layers below.
        public let other: [NWProtocolMetadata]
    }

    let layout: TLVLayout?
    let below: any StackLayer

    /// TLV (UInt32 type, UInt32 length) over the stream `builder` makes.
    public init<BelowProtocol: StreamProtocol>(@ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol) {
        layout = .tlv
        below = UnsupportedStackLayer.layer(builder())
    }

    /// TLV (UInt32 type, UInt32 length) over datagrams: each message is one datagram.
    public init<BelowProtocol: DatagramProtocol>(@ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol) {
        layout = .tlv
        below = UnsupportedStackLayer.layer(builder())
    }

    /// TLV with a type field of `T`'s width and a length field of `L`'s, over a stream.
    public init<T: Sendable & UnsignedInteger, L: Sendable & UnsignedInteger, BelowProtocol: StreamProtocol>(
        type: T.Type, length: L.Type, @ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol
    ) {
        layout = TLVLayout(typeWidth: MemoryLayout<T>.size, lengthWidth: MemoryLayout<L>.size)
        below = UnsupportedStackLayer.layer(builder())
    }

    /// TLV with a type field of `T`'s width and a length field of `L`'s, over datagrams.
    public init<T: Sendable & UnsignedInteger, L: Sendable & UnsignedInteger, BelowProtocol: DatagramProtocol>(
        type: T.Type, length: L.Type, @ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol
    ) {
        layout = TLVLayout(typeWidth: MemoryLayout<T>.size, lengthWidth: MemoryLayout<L>.size)
        below = UnsupportedStackLayer.layer(builder())
    }
}

extension TLV: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        guard let layout else {
            // A width no unsigned field of the wire format has (UInt128): refused, not cut.
            return UnsupportedStackLayer().addLayers(to: &plan)
        }
        plan.application.append(BuiltInFramerOptions(layout: layout, label: "TLV"))
        below.addLayers(to: &plan)
    }
}
