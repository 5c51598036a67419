import NIOCore
import NetworkSystem

/// What a flow knew when it became ready (addresses, the negotiated TLS session), taken on its event loop and then readable from any thread without a hop: the
/// connection keeps it, so `currentPath`, metadata and `maximumDatagramSize` answer the same on
/// the loop and off it. A value of three words, kept inline by the connection (no allocation per
/// ready connection; whether it carries datagrams the connection knows from its transport, and a
/// flag here would take the connection one malloc size class up); the addresses are NIO's own (shared, not copied) until someone asks for
/// them, and the TLS session stays in the flow's box.
package struct FlowReadyFacts: Sendable {
    private let local: SocketAddress?
    private let remote: SocketAddress?
    private let session: StackSessionBox?

    init(local: SocketAddress?, remote: SocketAddress?, tlsSession: TLSSessionFacts?) {
        self.init(local: local, remote: remote, session: tlsSession.map { StackSessionBox(tls: $0) })
    }

    init(local: SocketAddress?, remote: SocketAddress?, session: StackSessionBox?, quic: QUICConnectionFacts? = nil) {
        self.local = local
        self.remote = remote
        self.session = session
        self.quic = quic
    }

    /// A QUIC flow's connection facts (and its stream, when it is one of a group's).
    package let quic: QUICConnectionFacts?

    /// The negotiated TLS session, if the stack has TLS.
    package var tlsSession: TLSSessionFacts? { session?.tls }

    /// What the WebSocket handshake settled, if the stack has WebSocket.
    package var webSocketHandshake: WebSocketHandshakeFacts? { session?.webSocket }

    /// The local address in use.
    package var localAddress: FlowAddress? { movedLocal ?? local.map(FlowAddress.init) }

    /// The local address a QUIC connection moved to (`Flow.onLocalAddressMoveOnLoop`), if it did.
    package var movedLocal: FlowAddress?

    /// The peer's address.
    package var remoteAddress: FlowAddress? { remote.map(FlowAddress.init) }

    /// The largest datagram one send may carry on a flow over `transport`, or the largest single
    /// write for streams.
    package func maximumDatagramSize(transport: FlowTransportKind) -> Int {
        guard transport.carriesDatagrams else { return Int(UInt32.max) }
        // What fits in one QUIC packet and the peer accepts, as the handshake left it.
        if transport == .quicDatagram { return quic?.maxDatagramPayload ?? 0 }
        // 65535 minus the IP and UDP headers.
        return remote?.protocol == .inet6 ? 65_527 : 65_507
    }

    /// The path of the established connection: satisfied, over the interface that owns the local
    /// address (the loopback interface for a loopback peer when none does), with the address
    /// families of the interfaces that are up. Reads the interface table now.
    package func pathFacts() -> PathFacts {
        let interfaces = InterfaceTable.current()
        var used: SystemInterface?
        if let localBytes = localAddress?.unmappedBytes {
            used = interfaces.first { interface in
                interface.addresses.contains { $0.bytes == localBytes }
            }
            if used == nil, remoteAddress?.isLoopback == true {
                used = interfaces.first { $0.type == .loopback }
            }
        }
        let families = Set(interfaces.filter(\.isUp).flatMap { $0.addresses.map(\.family) })
        return PathFacts(
            status: .satisfied,
            interfaces: used.map { [$0] } ?? [],
            gateways: [],
            supportsIPv4: families.contains(.inet),
            supportsIPv6: families.contains(.inet6),
            supportsDNS: true,
            isExpensive: used?.isExpensive ?? false,
            isConstrained: used?.isConstrained ?? false)
    }
}
