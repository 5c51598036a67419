import Foundation

/// UDP in a stack: datagrams, each send one datagram and each receive one datagram.
public struct UDP: NetworkProtocolOptions, OneToOneProtocol, MessageProtocol, DatagramProtocol, Sendable {
    public typealias BelowProtocol = IP
    public typealias ContentType = Data
    public typealias LegacyMessage = NWProtocolUDP.Metadata

    /// What a received datagram reports besides its bytes.
    public struct Metadata: NetworkMetadataProtocol {
        /// The classic UDP and IP metadata of the datagram.
        public let other: [NWProtocolMetadata]
    }

    private var ip: IP
    private var preferNoChecksum: Bool?

    /// UDP with the system's defaults.
    public init() {
        ip = IP()
    }

    /// UDP over the IP layer `builder` makes.
    public init(@ProtocolStackBuilder<IP> _ builder: () -> IP) {
        ip = builder()
    }

    /// Asks for datagrams without a checksum where the IP version allows it (IPv4).
    public func noChecksumPreferred(_ preferred: Bool) -> UDP {
        var copy = self
        copy.preferNoChecksum = preferred
        return copy
    }
}

extension UDP: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        let options = NWProtocolUDP.Options()
        if let preferNoChecksum { options.preferNoChecksum = preferNoChecksum }
        plan.transport = options
        ip.addLayers(to: &plan)
    }
}
