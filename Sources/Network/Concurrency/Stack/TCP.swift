/// TCP in a stack: a reliable byte stream. `TCP()` runs over IP with its defaults;
/// `TCP { IP()... }` changes the IP layer.
public struct TCP: NetworkProtocolOptions, OneToOneProtocol, StreamProtocol, Sendable {
    public typealias BelowProtocol = IP

    /// What a receive on a TCP connection reports besides its bytes.
    public struct Metadata: NetworkMetadataProtocol {
        /// The peer closed its side: no bytes follow these.
        public let endOfStream: Bool
        /// The classic metadata of the layers involved.
        public let other: [NWProtocolMetadata]
    }

    private var ip: IP
    private var edits: [@Sendable (NWProtocolTCP.Options) -> Void] = []

    /// TCP with the system's defaults.
    public init() {
        ip = IP()
    }

    /// TCP over the IP layer `builder` makes.
    public init(@ProtocolStackBuilder<IP> _ builder: () -> IP) {
        ip = builder()
    }

    private func with(_ edit: @escaping @Sendable (NWProtocolTCP.Options) -> Void) -> TCP {
        var copy = self
        copy.edits.append(edit)
        return copy
    }

    /// Sends small writes at once (`TCP_NODELAY`).
    public func noDelay(_ enabled: Bool) -> TCP { with { $0.noDelay = enabled } }
    /// Holds data back until a full segment can be sent (`TCP_CORK`).
    public func noPush(_ enabled: Bool) -> TCP { with { $0.noPush = enabled } }
    /// Sends no TCP options (timestamps, window scaling, SACK).
    public func noOptions(_ enabled: Bool) -> TCP { with { $0.noOptions = enabled } }
    /// Turns keepalive probes on: the first after `idleTimeInSeconds` of silence, then `count`
    /// probes `intervalInSeconds` apart.
    public func keepalive(idleTimeInSeconds: UInt32, count: UInt32, intervalInSeconds: UInt32) -> TCP {
        with {
            $0.enableKeepalive = true
            $0.keepaliveIdle = Int(idleTimeInSeconds)
            $0.keepaliveCount = Int(count)
            $0.keepaliveInterval = Int(intervalInSeconds)
        }
    }
    /// The largest segment to send (`TCP_MAXSEG`).
    public func maximumSegmentSize(_ size: UInt32) -> TCP { with { $0.maximumSegmentSize = Int(size) } }
    /// Seconds to wait for the handshake before giving up.
    public func connectionTimeout(_ seconds: UInt32) -> TCP { with { $0.connectionTimeout = Int(seconds) } }
    /// Seconds a zero-window peer may stall the connection.
    public func persistTimeout(_ seconds: UInt32) -> TCP { with { $0.persistTimeout = Int(seconds) } }
    /// Seconds unacknowledged data may wait before the connection is dropped.
    public func retransmitConnectionDropTime(_ seconds: UInt32) -> TCP { with { $0.connectionDropTime = Int(seconds) } }
    /// Drops the connection when the FIN is not acknowledged.
    public func retransmitFinDrop(_ enabled: Bool) -> TCP { with { $0.retransmitFinDrop = enabled } }
    /// Acknowledges every segment instead of every other one.
    public func ackStretchingDisabled(_ disabled: Bool) -> TCP { with { $0.disableAckStretching = disabled } }
    /// Allows TCP Fast Open (data in the SYN; only idempotent sends ride in it).
    public func fastOpenAllowed(_ allowed: Bool) -> TCP { with { $0.enableFastOpen = allowed } }
    /// Turns explicit congestion notification off for this connection.
    public func ecnDisabled(_ disabled: Bool) -> TCP { with { $0.disableECN = disabled } }

    func makeOptions() -> NWProtocolTCP.Options {
        let options = NWProtocolTCP.Options()
        for edit in edits { edit(options) }
        return options
    }
}

extension TCP: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        plan.transport = makeOptions()
        ip.addLayers(to: &plan)
    }
}
