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
import Synchronization

/// The states of a listener, mirroring `NWListener.State`.
package enum FlowListenerState: Equatable, Hashable, Sendable {
    case setup
    case waiting(FlowError)
    case ready
    case failed(FlowError)
    case cancelled
}

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
    package var backlog: Int32 = 256
    /// Datagram peers handed to the application but not started yet, at most. Beyond it,
    /// datagrams from further new addresses are dropped (UDP semantics) until some are started.
    package var maximumUnstartedPeers = 1024

    package init(transport: FlowTransportKind, port: Int, child: FlowConfiguration) {
        self.transport = transport
        self.port = port
        self.child = child
    }
}

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
    private let shared = Mutex(SharedState())

    private struct SharedState {
        var port: Int?
        var limit = FlowListener.infiniteLimit
    }

    // Touched on `eventLoop` only.
    private var state: FlowListenerState = .setup
    private var channel: Channel?
    private var stateHandler: StateHandler?
    private var newFlowHandler: NewFlowHandler?
    private var peers: [SocketAddress: Flow] = [:]
    /// The TLS server context, made once per listener (loading keys and trust is costly).
    private var tlsContext: NIOSSLContext?
    /// A DTLS listener's cookie secret: new peers must echo a cookie before they get a flow.
    private var dtlsCookies: DTLSCookies?
    private var unstartedPeers: Set<SocketAddress> = []
    private var localNetworks: [SystemInterface] = []
    /// The listener's number in log lines (`L<n>`).
    private let logID = LogIDs.nextListener()

    package init(configuration: FlowListenerConfiguration) {
        self.configuration = configuration
        self.eventLoop = Engine.nextEventLoop()
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

    package func start(stateHandler: @escaping StateHandler, newFlowHandler: @escaping NewFlowHandler) {
        eventLoop.execute {
            guard self.state == .setup else { return }
            NetworkLog.listener.debug(
                "start", metadata: self.logMetadata.merging([
                    "port": "\(self.configuration.port)", "transport": "\(self.configuration.transport == .tcp ? "tcp" : "udp")",
                    "security": "\(self.configuration.child.tls.map { $0.verificationLogText(server: true) } ?? "none")",
                ]) { a, _ in a })
            self.stateHandler = stateHandler
            self.newFlowHandler = newFlowHandler
            self.bind()
        }
    }

    package func cancel() {
        eventLoop.execute {
            guard self.state != .cancelled else { return }
            NetworkLog.listener.debug("state cancelled", metadata: self.logMetadata)
            self.state = .cancelled
            if self.configuration.transport == .tcp || self.peers.isEmpty {
                self.channel?.close(promise: nil)
                self.channel = nil
            }
            // Datagram peers keep the shared socket until they are cancelled themselves.
            self.stateHandler?(.cancelled)
            self.stateHandler = nil
            self.newFlowHandler = nil
        }
    }

    private func report(_ newState: FlowListenerState) {
        NetworkLog.listener.debug("state \(Self.stateText(newState))", metadata: logMetadata)
        state = newState
        stateHandler?(newState)
    }

    private func bindAddress() throws -> SocketAddress {
        if let path = configuration.localUnixPath {
            guard configuration.transport == .tcp else { throw FlowError.posix(EINVAL) }
            return try SocketAddress(unixDomainSocketPath: path)
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

    private func socketOptions(family: SocketFamily) -> [SocketOptionSetting] {
        var options: [SocketOptionSetting] = [.init(level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)]
        if configuration.allowLocalEndpointReuse {
            options.append(.init(level: SOL_SOCKET, name: SO_REUSEPORT, value: 1))
        }
        options += SocketOptionPlan.ip(configuration.child.ip, family: family, datagram: configuration.transport == .udp)
        switch configuration.transport {
        case .tcp:
            options += SocketOptionPlan.tcpListener(configuration.child.tcp)
        case .udp:
            options += SocketOptionPlan.udp(configuration.child.udp)
            options += SocketOptionPlan.trafficClass(configuration.child.trafficClass, family: family)
        }
        return options
    }

    private func bind() {
        if let unsupported = configuration.unsupported {
            report(.failed(unsupported))
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
                if configuration.transport == .udp {
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
        case .udp:
            let bootstrap = DatagramBootstrap(group: eventLoop)
                .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
                .applying(options)
                .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DatagramDemultiplexer(listener: self))
                }
            }
            future = bootstrap.bind(to: address)
        }
        future.whenComplete { result in
            switch result {
            case .success(let channel):
                guard self.state == .setup else {
                    channel.close(promise: nil)
                    return
                }
                self.channel = channel
                NetworkLog.listener.debug("bound \(Self.text(channel.localAddress))", metadata: self.logMetadata)
                let port = channel.localAddress?.port
                self.shared.withLock { $0.port = port }
                self.updateAcceptReadiness()
                self.report(.ready)
            case .failure(let error):
                guard self.state == .setup else { return }
                self.report(.failed(FlowError(error)))
            }
        }
    }

    /// Pauses accepting while the connection budget is used up.
    private func updateAcceptReadiness() {
        guard configuration.transport == .tcp, let channel, state == .ready || state == .setup else { return }
        let limit = connectionLimit
        channel.setOption(ChannelOptions.autoRead, value: limit != 0).whenComplete { _ in }
        if limit != 0 { channel.read() }
    }

    /// Takes one unit of the budget; false when there is none left.
    private func consumeBudget() -> Bool {
        let allowed = shared.withLock { state -> Bool in
            if state.limit == FlowListener.infiniteLimit { return true }
            guard state.limit > 0 else { return false }
            state.limit -= 1
            return true
        }
        if allowed && connectionLimit == 0 { updateAcceptReadiness() }
        return allowed
    }

    private func isLocalPeer(_ address: SocketAddress?) -> Bool {
        guard let address else { return false }
        return LocalNetworkCheck.isLocal(address, interfaces: localNetworks)
    }

    // MARK: - Accepting (listener loop)

    /// Admission on the listener's loop: budget and local-only rule.
    fileprivate func accepted(_ child: Channel) -> Bool {
        guard state == .ready, newFlowHandler != nil else { return false }
        if configuration.acceptLocalOnly && !isLocalPeer(child.remoteAddress) {
            NetworkLog.listener.debug("refused \(Self.text(child.remoteAddress)): not on a local network", metadata: logMetadata)
            return false
        }
        guard consumeBudget() else {
            NetworkLog.listener.debug("refused \(Self.text(child.remoteAddress)): connection limit reached", metadata: logMetadata)
            return false
        }
        return true
    }

    /// Called on the child's loop once it is registered and active: wrap it in a flow and hand
    /// it to the user. (Before that, NIO would silently drop the flow's reads.)
    /// Runs on the child's loop.
    fileprivate func handOver(_ child: Channel) {
        var childConfiguration = configuration.child
        childConfiguration.target = child.remoteAddress.map { .address($0) } ?? .unix(path: "")
        childConfiguration.transport = .tcp
        let flow: Flow
        do {
            flow = try Flow.adopting(
                accepted: child, configuration: childConfiguration,
                tls: tlsContext.flatMap { context in configuration.child.tls.map { (context, $0) } },
                gnuTLS: configuration.child.tls.flatMap { DTLSStack.usesGnuTLSForStream($0) ? $0 : nil })
        } catch {
            NetworkLog.listener.debug(
                "could not set up the connection from \(Self.text(child.remoteAddress)): \(FlowError(error).logDescription)",
                metadata: logMetadata)
            child.close(promise: nil)
            return
        }
        NetworkLog.listener.debug(
            "accepted C\(flow.logID) from \(Self.text(child.remoteAddress))",
            metadata: logMetadata.merging(flow.logMetadata) { a, _ in a })
        eventLoop.execute {
            guard self.state == .ready, let handler = self.newFlowHandler else {
                flow.cancel(force: true)
                return
            }
            handler(flow, child.remoteAddress)
        }
    }

    fileprivate func receivedDatagram(_ envelope: AddressedEnvelope<ByteBuffer>, channel: Channel) {
        let remote = envelope.remoteAddress
        if let flow = peers[remote] {
            flow.deliverSharedDatagram(envelope.data)
            return
        }
        guard state == .ready, let handler = newFlowHandler else { return }
        if configuration.acceptLocalOnly && !isLocalPeer(remote) { return }
        var prestate: gnutls_dtls_prestate_st?
        if let dtlsCookies {
            // Stateless until the peer proves it receives at its address.
            switch dtlsCookies.check(envelope.data, from: remote) {
            case .verified(let state):
                prestate = state
            case .challenge(let reply):
                NetworkLog.listener.trace("DTLS cookie challenge to \(remote.logText)", metadata: logMetadata)
                channel.writeAndFlush(AddressedEnvelope(remoteAddress: remote, data: reply), promise: nil)
                return
            case .ignore:
                return
            }
        }
        // A flood of datagrams from new (possibly spoofed) addresses must not create flows
        // without bound: peers the application has not started yet are capped.
        unstartedPeers = unstartedPeers.filter { address in peers[address].map { !$0.hasStarted } ?? false }
        guard unstartedPeers.count < configuration.maximumUnstartedPeers else {
            NetworkLog.listener.trace("dropped a datagram from \(remote.logText): too many peers not started yet", metadata: logMetadata)
            return
        }
        guard consumeBudget() else {
            NetworkLog.listener.trace("dropped a datagram from \(remote.logText): connection limit reached", metadata: logMetadata)
            return
        }
        unstartedPeers.insert(remote)
        var childConfiguration = configuration.child
        childConfiguration.target = .address(remote)
        childConfiguration.transport = .udp
        var dtls: GnuTLSSession?
        if let settings = configuration.child.tls {
            // Checked at bind time; a failure here (memory) only drops this peer's datagram.
            guard let session = try? DTLSStack.serverSession(on: channel, remote: remote, settings: settings) else { return }
            if let prestate { session.continueAfterCookie(prestate) }
            dtls = session
        }
        let flow = Flow(sharedDatagramChannel: channel, remote: remote, configuration: childConfiguration, dtls: dtls) {
            [weak self] in
            guard let self else { return }
            self.eventLoop.execute { self.releasePeer(remote) }
        }
        peers[remote] = flow
        NetworkLog.listener.debug(
            "new datagram peer C\(flow.logID) from \(remote.logText)", metadata: logMetadata.merging(flow.logMetadata) { a, _ in a })
        flow.deliverSharedDatagram(envelope.data)
        handler(flow, remote)
    }

    private func releasePeer(_ remote: SocketAddress) {
        peers[remote] = nil
        if state == .cancelled && peers.isEmpty {
            channel?.close(promise: nil)
            channel = nil
        }
    }

    fileprivate func datagramSocketClosed() {
        NetworkLog.listener.debug("the shared datagram socket closed", metadata: logMetadata)
        let flows = peers.values
        peers.removeAll()
        for flow in flows { flow.sharedTransportFailed(.posix(ECONNABORTED)) }
        if state == .ready {
            report(.failed(.posix(ECONNABORTED)))
        }
    }

    // MARK: - Logging

    private var logMetadata: Logger.Metadata { ["listener": "L\(logID)"] }

    private static func text(_ address: SocketAddress?) -> String {
        address.map { $0.logText } ?? "unknown peer"
    }

    private static func stateText(_ state: FlowListenerState) -> String {
        switch state {
        case .setup: return "setup"
        case .waiting(let error): return "waiting: \(error.logDescription)"
        case .ready: return "ready"
        case .failed(let error): return "failed: \(error.logDescription)"
        case .cancelled: return "cancelled"
        }
    }

    /// Stops sending a departed peer's datagrams to a cancelled flow.
    package func forget(_ flow: Flow) {
        eventLoop.execute {
            if let key = self.peers.first(where: { $0.value === flow })?.key { self.peers[key] = nil }
        }
    }
}

/// Sits in the server channel's pipeline in front of NIO's accept handler and sees every accepted
/// child first: it enforces the listener's budget and local-only rule and hands the child over.
private final class AcceptGate: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = Channel

    private weak var listener: FlowListener?

    init(listener: FlowListener) { self.listener = listener }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let child = Self.unwrapInboundIn(data)
        guard let listener, listener.accepted(child) else {
            // Over budget or refused: close it so the peer is not left hanging.
            if let provider = child as? SocketOptionProvider {
                _ = provider.setSoLinger(linger(l_onoff: 1, l_linger: 0))
            }
            child.close(promise: nil)
            return
        }
        // Let NIO register the child on its loop.
        context.fireChannelRead(data)
    }
}

/// Waits in an accepted child's pipeline for it to become active, hands it over, and leaves.
private final class ChildHandover: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny

    private weak var listener: FlowListener?

    init(listener: FlowListener) { self.listener = listener }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { handOver(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        handOver(context: context)
        context.fireChannelActive()
    }

    private func handOver(context: ChannelHandlerContext) {
        guard let listener else {
            context.close(promise: nil)
            return
        }
        let listenerRef = listener
        self.listener = nil
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        listenerRef.handOver(context.channel)
    }
}

/// Sits in a datagram listener's pipeline and routes each datagram to its peer's flow.
private final class DatagramDemultiplexer: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private weak var listener: FlowListener?

    init(listener: FlowListener) { self.listener = listener }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        listener?.receivedDatagram(Self.unwrapInboundIn(data), channel: context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        listener?.datagramSocketClosed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP errors for one peer must not take the shared socket down.
    }
}
