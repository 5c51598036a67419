/// What a listener binds and how its children are configured.
package struct FlowListenerConfiguration: Sendable {
    package var transport: FlowTransportKind
    /// Local address literal to bind (nil: every address, dual stack).
    package var localHost: String?
    package var localInterfaceName: String?
    /// A UNIX-domain socket path to listen on instead of an IP address and port (stream only).
    package var localUnixPath: String?
    package var port: Int
    package var allowLocalEndpointReuse = false
    /// Accept only peers on a directly connected network (loopback, link-local, a local subnet).
    package var acceptLocalOnly = false
    /// Settings for accepted children (their target is filled in per peer).
    package var child: FlowConfiguration
    /// Set when the parameters ask for a protocol this build cannot serve yet.
    package var unsupported: FlowError?
    /// The accept queue's length: the kernel's own bound (`net.core.somaxconn`, 4096 on
    /// current kernels; a larger value is cut to it). With 256, a thousand clients connecting
    /// at once overflowed it and some were reset.
    package var backlog: Int32 = 4096
    /// How many datagram peers the listener keeps, and when one may be evicted
    /// (`DatagramPeerTable`). Datagrams beyond the bounds are dropped (UDP semantics).
    package var datagramPeerLimits = DatagramPeerLimits()
    /// A multicast group's memberships: set, the listener is the group's socket (see
    /// `MulticastMembership`).
    package var multicast: MulticastMembership?
    /// When a QUIC listener makes new clients prove their address first (a Retry).
    package var quicRetry = QUICRetryPolicy.whenBusy(handshakes: 64)

    package init(transport: FlowTransportKind, port: Int, child: FlowConfiguration) {
        self.transport = transport
        self.port = port
        self.child = child
    }
}
