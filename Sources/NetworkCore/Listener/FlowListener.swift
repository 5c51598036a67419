#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CGnuTLS
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NetworkDNS
import NetworkSystem
import NetworkSync

/// A listening socket: a TCP server channel whose accepted children become flows, or one UDP
/// socket demultiplexed by remote address into one flow per peer (replies leave from the
/// listener's port). `newConnectionLimit` is enforced on the listener's event loop.
package final class FlowListener: @unchecked Sendable {
    package typealias StateHandler = @Sendable (FlowListenerState) -> Void
    /// Gets each new inbound flow and its peer's address (read here, where it is known, so the
    /// flow need not keep it).
    package typealias NewFlowHandler = @Sendable (Flow, SocketAddress?) -> Void

    /// The value of `NWListener.InfiniteConnectionLimit`.
    package static let infiniteLimit = -1

    package let configuration: FlowListenerConfiguration
    package let eventLoop: EventLoop
    let shared = Lock(SharedState())

    struct SharedState {
        var port: Int?
        var limit = FlowListener.infiniteLimit
        /// A multicast group's socket while the group is ready (its connections are made on it
        /// from any thread).
        var groupChannel: Channel?
        /// The group socket's writer, which its connections write through too (on the loop).
        var groupWriter: DatagramWriter?
    }

    // Touched on `eventLoop` only.
    var state: FlowListenerState = .setup
    var channel: Channel?
    var stateHandler: StateHandler?
    var newFlowHandler: NewFlowHandler?
    /// A QUIC listener's taker of whole connections (as group flows), when the user takes them.
    var newQUICGroupHandler: NewFlowHandler?
    /// A multicast group's taker of every datagram (`MulticastMembership`), instead of flows.
    var groupDatagramHandler: GroupDatagramHandler?
    /// A multicast group's addresses, resolved when it binds.
    var multicastGroups: [SocketAddress] = []
    /// The same addresses as bytes (IPv4-mapped ones unmapped), to compare with a datagram's
    /// destination (`disableUnicast`).
    var multicastGroupBytes: [[UInt8]] = []
    /// A UDP listener's (or multicast group's) sends, straight to its socket while it is open.
    var datagramWriter: DatagramWriter?
    /// A multicast group's connections to one peer each, by the peer's address.
    var groupPeers: [SocketAddress: Flow] = [:]
    /// Peers that took datagrams during the read under way (`delivered(to:)`).
    var peersWithNewDatagrams: [Flow] = []
    /// A datagram listener's peers (`DatagramPeerTable` bounds them). Stored, not `lazy`: a lazy
    /// property's getter returns a copy of the table, and every datagram looks its peer up here
    /// (the copy, with its retains and releases, cost more than the lookup).
    var peers: DatagramPeerTable<Flow>
    /// A QUIC listener's connections by client address, from the client's first Initial until
    /// their own socket closes.
    var quicConnections: [SocketAddress: QUICServerConnection] = [:]
    /// The same connections by the connection IDs they issued (while their socket is up): a
    /// client that moves or is rebound reaches the listening socket from a new address.
    var quicConnectionIDs: [[UInt8]: QUICServerConnection] = [:]
    /// The TLS server context, made once per listener (loading keys and trust is costly).
    var tlsContext: NIOSSLContext?
    /// A DTLS listener's cookie secret: new peers must echo a cookie before they get a flow.
    var dtlsCookies: DTLSCookies?
    /// A QUIC listener's Retry token secret (made when it binds).
    var quicRetry: QUICRetry?
    /// A QUIC listener's session tickets and 0-RTT anti-replay (made when it binds; nil when
    /// its TLS settings turn tickets off).
    var quicTickets: QUICServerTickets?
    var localNetworks: [SystemInterface] = []
    /// Bounds the lines about new, refused and dropped peers (touched on `eventLoop` only).
    var peerEventLog = LogRateLimiter()
    /// The listener's number in log lines (`L<n>`).
    let logID = LogIDs.nextListener()

    package init(configuration: FlowListenerConfiguration) {
        self.configuration = configuration
        self.eventLoop = Engine.nextEventLoop()
        self.peers = DatagramPeerTable<Flow>(
            limits: configuration.datagramPeerLimits, isStarted: { $0.hasStarted },
            activity: { $0.report.sentBytes &+ $0.report.receivedBytes })
    }

    /// The bound port, once ready.
    package var port: Int? { shared.withLock { $0.port } }

    /// Remaining accept budget (`infiniteLimit` for none).
    package var connectionLimit: Int {
        get { shared.withLock { $0.limit } }
        set {
            shared.withLock { $0.limit = newValue }
            eventLoop.execute { self.updateAcceptReadiness() }
        }
    }

    package func start(
        stateHandler: @escaping StateHandler, newFlowHandler: @escaping NewFlowHandler, newQUICGroupHandler: NewFlowHandler? = nil
    ) {
        eventLoop.execute {
            guard self.state == .setup else { return }
            NetworkLog.listener.debug(
                "start", metadata: self.logMetadata.merging([
                    "port": "\(self.configuration.port)", "transport": "\(self.configuration.transport == .tcp ? "tcp" : "udp")",
                    "security": "\(self.configuration.child.tls.map { $0.verificationLogText(server: true) } ?? "none")",
                ]) { a, _ in a })
            self.stateHandler = stateHandler
            self.newFlowHandler = newFlowHandler
            self.newQUICGroupHandler = newQUICGroupHandler
            self.bind()
        }
    }

    package func cancel() {
        eventLoop.execute {
            guard self.state != .cancelled else { return }
            NetworkLog.listener.debug("state cancelled", metadata: self.logMetadata)
            self.state = .cancelled
            if self.configuration.transport == .tcp || self.peers.isEmpty {
                self.closeChannel()
            }
            // Datagram peers keep the shared socket until they are cancelled themselves.
            self.stateHandler?(.cancelled)
            self.stateHandler = nil
            self.newFlowHandler = nil
            self.groupDatagramHandler = nil
        }
    }

    /// Ends the listener with `error` (something beside its socket failed, such as advertising
    /// its service); nothing happens after a cancel or an earlier failure.
    package func fail(_ error: FlowError) {
        eventLoop.execute {
            switch self.state {
            case .cancelled, .failed: return
            default: break
            }
            self.closeChannel()
            self.report(.failed(error))
        }
    }

    /// Closes the listening socket, and lets go of the writer's duplicate of it now rather than
    /// once NIO reports the close (a later turn of the loop): until then the socket, and a
    /// group's memberships, would stay. A group's connections end with it.
    func closeChannel() {
        channel?.close(promise: nil)
        channel = nil
        letGoOfSocket()
    }

    /// Drops what holds on to the socket once it is closed (or closing): the writer's duplicate,
    /// and a group's connections.
    func letGoOfSocket() {
        if configuration.multicast != nil { groupSocketClosed() } else { releaseDatagramWriter() }
    }

    /// Lets go of the writer's duplicate of the socket (the channel closed, or is closing).
    func releaseDatagramWriter() {
        datagramWriter?.release()
        datagramWriter = nil
    }

    func report(_ newState: FlowListenerState) {
        NetworkLog.listener.debug("state \(Self.stateText(newState))", metadata: logMetadata)
        state = newState
        stateHandler?(newState)
    }

    func bindAddress() throws -> SocketAddress {
        if let path = configuration.localUnixPath {
            guard configuration.transport == .tcp else { throw FlowError.posix(EINVAL) }
            return try SocketAddress(unixDomainSocketPath: path)
        }
        if let membership = configuration.multicast {
            return try multicastBindAddress(membership)
        }
        if let host = configuration.localHost {
            guard let address = SocketAddress(
                literal: host, port: configuration.port, interfaceName: configuration.localInterfaceName)
            else { throw FlowError.posix(EADDRNOTAVAIL) }
            return address
        }
        switch configuration.child.ip.version {
        case .v4: return try SocketAddress(ipAddress: "0.0.0.0", port: configuration.port)
        case .v6: return try SocketAddress(ipAddress: "::", port: configuration.port)
        case .any:
            // The dual-stack wildcard, unless this host has no IPv6 at all.
            let probe = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
            if probe < 0 { return try SocketAddress(ipAddress: "0.0.0.0", port: configuration.port) }
            close(probe)
            return try SocketAddress(ipAddress: "::", port: configuration.port)
        }
    }

    func socketOptions(family: SocketFamily) -> [SocketOptionSetting] {
        var options: [SocketOptionSetting] = [.init(level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)]
        if configuration.allowLocalEndpointReuse {
            options.append(.init(level: SOL_SOCKET, name: SO_REUSEPORT, value: 1))
        }
        var ip = configuration.child.ip
        if configuration.multicast != nil && family == .inet6 {
            if multicastIsDualStack {
                // IPv4 groups too: a dual-stack socket, with the IPv4 counterparts of its options.
                options.append(.init(level: Int32(IPPROTO_IPV6), name: Int32(IPV6_V6ONLY), value: 0))
                ip.version = .any
            } else {
                // A group of IPv6 addresses takes IPv6 only: no IPv4 unicast through a dual-stack socket.
                options.append(.init(level: Int32(IPPROTO_IPV6), name: Int32(IPV6_V6ONLY), value: 1))
            }
        }
        options += SocketOptionPlan.ip(ip, family: family, datagram: configuration.transport.usesDatagramSocket)
        switch configuration.transport {
        case .tcp:
            options += SocketOptionPlan.tcpListener(configuration.child.tcp)
        case .udp, .quic, .quicDatagram:
            options += SocketOptionPlan.udp(configuration.child.udp)
            options += SocketOptionPlan.trafficClass(configuration.child.trafficClass, family: family)
        }
        return options
    }

    func bind() {
        if let unsupported = configuration.unsupported {
            report(.failed(unsupported))
            return
        }
        // QUIC without its TLS settings would be plain UDP: never (the facade always sets them).
        if configuration.transport == .quic && configuration.child.tls == nil {
            report(.failed(.posix(EPROTONOSUPPORT)))
            return
        }
        let address: SocketAddress
        do {
            address = try bindAddress()
        } catch {
            report(.failed(FlowError(error)))
            return
        }
        if configuration.acceptLocalOnly { localNetworks = InterfaceTable.current() }
        if let tls = configuration.child.tls {
            do {
                if configuration.transport == .quic {
                    // QUIC: a GnuTLS session per connection; check the settings can make one now.
                    _ = try GnuTLSCredentials.shared(tls, server: true, stream: true)
                    quicRetry = try QUICRetry()
                    // 0-RTT data can be replayed: a listener takes it only when its parameters
                    // allow Fast Open (idempotent data during the handshake).
                    if tls.tickets { quicTickets = try QUICServerTickets(acceptsEarlyData: configuration.child.allowFastOpen) }
                } else if configuration.transport == .udp {
                    // DTLS: sessions are made per peer; check the settings can make one now.
                    _ = try GnuTLSCredentials.shared(tls, server: true)
                    dtlsCookies = try DTLSCookies()
                } else if DTLSStack.usesGnuTLSForStream(tls) {
                    // Pre-shared keys over TCP run on GnuTLS, per accepted connection.
                    _ = try GnuTLSCredentials.shared(tls, server: true, stream: true)
                } else {
                    tlsContext = try TLSStack.serverContext(tls)
                }
            } catch {
                report(.failed(FlowError(tls: error, verifyBlock: false)))
                return
            }
        }
        let family: SocketFamily = address.protocol == .inet6 ? .inet6 : .inet
        let isUnix = address.protocol == .unix
        // IP and TCP options mean nothing on a UNIX-domain socket (the kernel refuses them).
        let options = isUnix ? [] : socketOptions(family: family)
        let future: EventLoopFuture<Channel>
        switch configuration.transport {
        case .tcp:
            // Connect-time knobs (Fast Open connect, SYN retries) mean nothing on an accepted
            // socket, and the kernel rejects some of them there.
            let connectOnly: Set<Int32> = [TCP_FASTOPEN_CONNECT, TCP_SYNCNT]
            let childOptions = isUnix ? [] : SocketOptionPlan.tcp(configuration.child.tcp).filter {
                !($0.level == Int32(IPPROTO_TCP) && connectOnly.contains($0.name))
            } + SocketOptionPlan.trafficClass(configuration.child.trafficClass, family: family)
                // NIO turns Nagle off by default; Apple leaves it on unless `noDelay` is set.
                + [.init(level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: configuration.child.tcp.noDelay ? 1 : 0)]
            let bootstrap = ServerBootstrap(group: eventLoop, childGroup: Engine.group)
                .enableMPTCP(configuration.child.multipath && MPTCPSupport.available && !isUnix)
                .serverChannelOption(ChannelOptions.backlog, value: configuration.backlog)
                .childChannelOption(ChannelOptions.autoRead, value: false)
                .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
                .applying(server: options, child: childOptions)
                .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptGate(listener: self))
                }
            }
            .childChannelInitializer { child in
                // The flow is created once the child is registered and active (see ChildHandover).
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(ChildHandover(listener: self))
                }
            }
            if let path = configuration.localUnixPath {
                // A socket file left by an earlier listener is replaced; any other file is not.
                future = bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
            } else {
                future = bootstrap.bind(to: address)
            }
        case .udp, .quic, .quicDatagram:
            let isQUIC = configuration.transport == .quic
            let bootstrap = DatagramBootstrap(group: eventLoop)
                .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
                // QUIC: the address each client wrote to, which its connection's socket takes
                // (see `receivedQUICDatagram`).
                .channelOption(ChannelOptions.receivePacketInfo, value: isQUIC || configuration.multicast != nil)
                // (A UDP socket opened here has its options from before its bind: some, such as
                // IPV6_V6ONLY, cannot be set again once it is bound.)
                .applying(configuration.transport == .udp ? [] : options)
                .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // And each datagram's ECN codepoint: ngtcp2 counts them from the first, and
                    // a plain datagram reports it in its IP metadata.
                    ECNCodepoint.enableReading(on: channel)
                    // Bursts from one peer in one read (`DatagramDemultiplexer` cuts them up).
                    if !isQUIC { DatagramReceiveOffload.enable(on: channel) }
                    try channel.pipeline.syncOperations.addHandler(DatagramDemultiplexer(listener: self, quic: isQUIC))
                }
            }
            if configuration.transport == .udp {
                // A UDP socket is opened here, so that its sends can go straight to it with
                // their whole TOS byte (`DatagramWriter`): ECN beside the service class's DSCP,
                // and to IPv4 peers of the dual-stack socket too.
                do {
                    let descriptor = try DatagramSocketOpen.bound(to: address, reuseAddress: false, options: options)
                    let writer = DatagramWriter()
                    writer.reportsLostDatagrams = true
                    // (Before NIO owns the descriptor: the number is still this socket's.)
                    writer.writeDirectly(to: descriptor, addressed: true)
                    datagramWriter = writer
                    future = bootstrap.withBoundSocket(descriptor)
                } catch {
                    report(.failed(error))
                    return
                }
            } else {
                future = bootstrap.bind(to: address)
            }
        }
        future.whenComplete { result in
            switch result {
            case .success(let channel):
                guard self.state == .setup else {
                    channel.close(promise: nil)
                    self.releaseDatagramWriter()
                    return
                }
                self.channel = channel
                NetworkLog.listener.debug("bound \(Self.text(channel.localAddress))", metadata: self.logMetadata)
                let port = channel.localAddress?.port
                self.shared.withLock { $0.port = port }
                // However it closes, the writer's duplicate must not keep the socket open.
                if self.configuration.transport == .udp {
                    channel.closeFuture.whenComplete { _ in self.letGoOfSocket() }
                }
                if let membership = self.configuration.multicast {
                    self.joinGroups(membership, on: channel)
                    return
                }
                self.updateAcceptReadiness()
                self.report(.ready)
            case .failure(let error):
                self.releaseDatagramWriter()
                guard self.state == .setup else { return }
                self.report(.failed(FlowError(error)))
            }
        }
    }

    /// Pauses accepting while the connection budget is used up.
    func updateAcceptReadiness() {
        guard configuration.transport == .tcp, let channel, state == .ready || state == .setup else { return }
        let limit = connectionLimit
        channel.setOption(ChannelOptions.autoRead, value: limit != 0).whenComplete { _ in }
        if limit != 0 { channel.read() }
    }

    /// Takes one unit of the budget; false when there is none left.
    func consumeBudget() -> Bool {
        let allowed = shared.withLock { state -> Bool in
            if state.limit == FlowListener.infiniteLimit { return true }
            guard state.limit > 0 else { return false }
            state.limit -= 1
            return true
        }
        if allowed && connectionLimit == 0 { updateAcceptReadiness() }
        return allowed
    }

    func isLocalPeer(_ address: SocketAddress?) -> Bool {
        guard let address else { return false }
        return LocalNetworkCheck.isLocal(address, interfaces: localNetworks)
    }

    // MARK: - Accepting (listener loop)

    /// Admission on the listener's loop: budget and local-only rule.
    func accepted(_ child: Channel) -> Bool {
        guard state == .ready, newFlowHandler != nil else { return false }
        if child.remoteAddress == nil && configuration.localUnixPath == nil {
            // NIO reads the peer's address right after accept; a peer that reset before that has
            // none to give. Such a connection is already dead: it is closed here rather than
            // handed over as one from nowhere (it costs none of the connection budget).
            logPeerEvent(.debug, "dropped a connection reset before it was accepted")
            return false
        }
        if configuration.acceptLocalOnly && !isLocalPeer(child.remoteAddress) {
            logPeerEvent(.debug, "refused \(Self.text(child.remoteAddress)): not on a local network")
            return false
        }
        guard consumeBudget() else {
            logPeerEvent(.debug, "refused \(Self.text(child.remoteAddress)): connection limit reached")
            return false
        }
        return true
    }

    /// Called on the child's loop once it is registered and active: wrap it in a flow and hand
    /// it to the user. (Before that, NIO would silently drop the flow's reads.)
    /// Runs on the child's loop.
    func handOver(_ child: Channel) {
        // Read once, while the child is active: NIO forgets a channel's addresses when it closes,
        // and a peer that resets at once closes it before the listener's loop hands it on.
        let remote = child.remoteAddress
        var childConfiguration = configuration.child
        childConfiguration.target = remote.map { .address($0) } ?? .unix(path: "")
        childConfiguration.transport = .tcp
        let flow: Flow
        do {
            flow = try Flow.adopting(
                accepted: child, configuration: childConfiguration,
                tls: tlsContext.flatMap { context in configuration.child.tls.map { (context, $0) } },
                gnuTLS: configuration.child.tls.flatMap { DTLSStack.usesGnuTLSForStream($0) ? $0 : nil })
        } catch {
            NetworkLog.listener.debug(
                "could not set up the connection from \(Self.text(remote)): \(FlowError(error).logDescription)",
                metadata: logMetadata)
            child.close(promise: nil)
            return
        }
        NetworkLog.listener.debug(
            "accepted C\(flow.logID) from \(Self.text(remote))",
            metadata: logMetadata.merging(flow.logMetadata) { a, _ in a })
        eventLoop.execute {
            guard self.state == .ready, let handler = self.newFlowHandler else {
                flow.cancel(force: true)
                return
            }
            handler(flow, remote)
        }
    }
}
