import NIOCore
import NetworkSystem

/// Where a flow goes, in engine terms (no NW types).
package enum FlowTarget: Sendable, Equatable, CustomStringConvertible {
    /// A host name or address literal, with an optional interface scope name, and a port.
    case hostPort(host: String, port: Int, interfaceName: String?)
    /// A socket address that needs no resolution.
    case address(SocketAddress)
    /// An AF_UNIX path.
    case unix(path: String)

    /// The host name, when the target is one (for SNI and certificate checks).
    package var hostName: String? {
        if case .hostPort(let host, _, _) = self { return host }
        return nil
    }

    /// The host (name or literal) and port, when the target has them.
    package var hostAndPort: (String, Int)? {
        switch self {
        case .hostPort(let host, let port, _): return (host, port)
        case .address(let address):
            guard let text = address.ipAddress, let port = address.port else { return nil }
            return (text, port)
        case .unix: return nil
        }
    }

    /// The socket address when the target needs no resolution.
    package var literalAddress: SocketAddress? {
        switch self {
        case .address(let address): return address
        case .hostPort(let host, let port, let interfaceName):
            return SocketAddress(literal: host, port: port, interfaceName: interfaceName)
        case .unix: return nil
        }
    }

    package var description: String {
        switch self {
        case .hostPort(let host, let port, _): return "\(host):\(port)"
        case .address(let address): return "\(address)"
        case .unix(let path): return path
        }
    }
}

/// The transport under a flow. QUIC is a stream transport on a UDP socket: the flow carries
/// one bidirectional QUIC stream as a byte stream (`QUICDatagramHandler`'s bridging mode), or,
/// as `quicDatagram`, the connection's QUIC datagrams (RFC 9221) as datagrams.
package enum FlowTransportKind: Sendable, Equatable {
    case tcp, udp, quic, quicDatagram

    /// The flow reads and writes a byte stream (TCP, or a QUIC stream), not datagrams.
    package var isStream: Bool { self == .tcp || self == .quic }

    /// The flow's sends and receives are datagrams (UDP's, or QUIC's).
    package var carriesDatagrams: Bool { !isStream }

    /// A QUIC connection is underneath.
    package var isQUIC: Bool { self == .quic || self == .quicDatagram }

    /// The socket underneath is a UDP socket.
    package var usesDatagramSocket: Bool { self != .tcp }
}

/// Everything the engine needs to know about a connection, copied out of `NWParameters` when the
/// connection is created (later changes to the parameters object do not affect it, as on Apple).
package struct FlowConfiguration: Sendable {
    package var target: FlowTarget
    package var transport: FlowTransportKind = .tcp
    package var tcp = TCPSocketSettings()
    package var udp = UDPSocketSettings()
    /// QUIC's transport parameters (`transport == .quic`).
    package var quic = QUICSettings()
    /// A stream flow of a QUIC connection group: the group's flow, whose connection opens the
    /// stream when this flow starts (instead of an establishment of its own).
    package var quicStreamParent: Flow?
    package var ip = IPSocketSettings()
    package var trafficClass: TrafficClass = .bestEffort
    /// `requiredLocalEndpoint`.
    package var localTarget: FlowTarget? {
        get { localTargetBox?.value }
        set { localTargetBox = newValue.map(Box.init) }
    }
    package var allowLocalEndpointReuse = false
    /// `requiredInterface`, by kernel index.
    package var requiredInterfaceIndex: Int?
    /// `requiredInterfaceType`, resolved to an interface at establishment time.
    package var requiredInterfaceType: SystemInterfaceType?
    package var prohibitedInterfaceTypes: [SystemInterfaceType] = []
    package var prohibitedInterfaceIndexes: [Int] = []
    /// `prohibitExpensivePaths` / `prohibitConstrainedPaths`, checked against the interface a
    /// connected socket actually uses.
    package var prohibitExpensive = false
    /// `multipathServiceType` other than `.disabled`: the TCP socket is Multipath TCP (when the
    /// kernel has it), which falls back to plain TCP by itself when the peer does not speak it.
    package var multipath = false
    package var prohibitConstrained = false
    /// Framers over the transport (and TLS), the top one first; empty for none.
    package var framers: [any HostedFramerFactory] = []
    /// WebSocket over the transport (and TLS), nil for none.
    package var webSocket: WebSocketConfiguration? {
        get { webSocketBox?.value }
        set { webSocketBox = newValue.map(Box.init) }
    }
    /// The flow carries whole messages with per-message metadata over a stream (framers, WebSocket).
    /// Not a QUIC connection's own flow (a group's, which carries the connection's datagrams):
    /// the framers of its parameters run on its streams.
    package var carriesFramedMessages: Bool { (!framers.isEmpty || webSocketBox != nil) && transport != .quicDatagram }
    /// TLS over the transport (TCP only for now), nil for none.
    package var tls: FlowTLSConfiguration? {
        get { tlsBox?.value }
        set { tlsBox = newValue.map(Box.init) }
    }

    // The settings most flows leave unset, boxed (immutable, replaced on change): inline they
    // would add ~170 bytes to every copy of the configuration, including the one each
    // connection keeps until it is ready.
    private var tlsBox: Box<FlowTLSConfiguration>?
    private var webSocketBox: Box<WebSocketConfiguration>?
    private var localTargetBox: Box<FlowTarget>?
    private var addressLookupBox: Box<any AddressLookup>?
    /// Happy Eyeballs' connection attempt delay: how long an attempt runs alone before the next
    /// address is tried alongside it (clamped to 100 ms … 2 s by the racer).
    package var connectionAttemptDelay: TimeAmount = .milliseconds(250)
    /// `NWParameters.allowFastOpen`: idempotent data queued before start may ride in the SYN.
    package var allowFastOpen = false
    /// The privacy context's proxies (`ProxyConfiguration`), in order.
    package var proxies: [ProxyDescription] = []
    /// `NWParameters.preferNoProxies`: direct first, proxies only as fallbacks.
    package var preferNoProxies = false
    /// `expiredDNSBehavior == .allow`: an expired cached answer may be used at once.
    package var allowExpiredDNS = false
    /// How host names are looked up; nil for `DNSResolverAddressLookup` (NetworkDNS's resolver),
    /// honouring `allowExpiredDNS`.
    package var addressLookup: (any AddressLookup)? {
        get { addressLookupBox?.value }
        set { addressLookupBox = newValue.map(Box.init) }
    }
    /// Set when the parameters ask for something this build cannot provide yet (for example TLS
    /// before the TLS issue lands). The flow fails with it instead of silently doing less.
    package var unsupported: FlowError?

    package init(target: FlowTarget) {
        self.target = target
    }

    private final class Box<Value: Sendable>: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }
}
