#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NIOPosix
import NetworkDNS
import NetworkSystem

/// Builds the whole stack of one outbound connection attempt to one address: the socket with
/// the flow's options, the connect (with TCP Fast Open when it applies), the tunnel when the
/// route goes through a proxy, then the security step (TLS over TCP, DTLS over UDP). The
/// attempt is complete, and may win its race, only when every layer is up. One builder serves
/// every attempt of one route.
struct ClientStackBuilder: Sendable {
    let configuration: FlowConfiguration
    let eventLoop: EventLoop
    /// The flow the channel handler reports to. Strong (a weak reference would cost the flow a
    /// side table for its whole life): the builder lives in the establishment run, which the
    /// flow lets go of when the run ends.
    private let flow: Flow?
    /// The proxy this route goes through, if any.
    let proxy: ProxyDescription?
    /// Idempotent data every TCP attempt writes first (TCP Fast Open puts it in the SYN); never
    /// through a proxy, whose handshake owns the first bytes.
    let initialData: ByteBuffer?
    /// When establishment began, for what is left of the connection timeout.
    private let establishmentStarted: NIODeadline
    /// The interface the socket is bound to (`requiredInterface`), if any.
    let interfaceIndex: Int?
    /// The flow's name, for log lines.
    private let logMetadata: Logger.Metadata

    init(
        configuration: FlowConfiguration, flow: Flow?, eventLoop: EventLoop, proxy: ProxyDescription?,
        fastOpenData: ByteBuffer?, establishmentStarted: NIODeadline, interfaceIndex: Int?, logMetadata: Logger.Metadata
    ) {
        self.configuration = configuration
        self.flow = flow
        self.eventLoop = eventLoop
        self.proxy = proxy
        self.initialData = proxy == nil ? fastOpenData : nil
        self.establishmentStarted = establishmentStarted
        self.interfaceIndex = interfaceIndex
        self.logMetadata = logMetadata
    }

    /// Connects `attempt` and builds the stack on it; the future fails (and the socket is
    /// closed) when any layer fails.
    func connect(_ attempt: ConnectionAttempt) -> EventLoopFuture<Channel> {
        let address = attempt.address
        let options = ClientSocketOptions.settings(for: address, configuration: configuration, interfaceIndex: interfaceIndex)
        let local: SocketAddress?
        do {
            local = try localAddress(toward: address)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        switch configuration.transport {
        case .tcp: return connectTCP(attempt, options: options, local: local)
        case .udp: return connectUDP(attempt, options: options, local: local)
        case .quic, .quicDatagram: return connectQUIC(attempt, options: options, local: local)
        }
    }

    private func connectTCP(
        _ attempt: ConnectionAttempt, options: [SocketOptionSetting], local: SocketAddress?
    ) -> EventLoopFuture<Channel> {
        let flow = self.flow
        var bootstrap = ClientBootstrap(group: eventLoop)
            .channelOption(ChannelOptions.autoRead, value: false)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            // Apple has no per-attempt timeout of its own; keep NIO's out of the way and
            // let the kernel (or `connectionTimeout`) decide.
            .connectTimeout(.seconds(130))
        if configuration.multipath && MPTCPSupport.available {
            bootstrap = bootstrap.enableMPTCP(true)
        }
        // Fast Open is best effort: the kernel refuses it when net.ipv4.tcp_fastopen has
        // client support off, and the connection must then go ahead without it. With it, the
        // kernel sends the SYN only with the first write, so it is used only when a first
        // write is certain (a TLS ClientHello, or idempotent data): a server-speaks-first
        // protocol would otherwise never see a SYN.
        // NIO learns no peer address for a deferred connect, and swift-nio-ssl needs one to
        // check a certificate against an IP-literal target: TLS to a literal goes without.
        let initialData = self.initialData
        let tlsToName = configuration.tls != nil
            && (configuration.tls?.serverName ?? configuration.target.hostName)
                .map { SocketAddress(literal: $0, port: 0) == nil } == true
        let usesFastOpen = configuration.tcp.enableFastOpen && (tlsToName || initialData != nil)
            || (configuration.allowFastOpen && initialData != nil)
        let fastOpenOption = SocketOptionSetting(level: Int32(IPPROTO_TCP), name: TCP_FASTOPEN_CONNECT, value: 1)
        let bestEffort = usesFastOpen ? [fastOpenOption] : []
        let settings = options.filter { !($0.level == Int32(IPPROTO_TCP) && $0.name == TCP_FASTOPEN_CONNECT) }
        // Plain TCP connects its own socket, so the flow learns the descriptor and may write to
        // it from the sender's thread (`DirectSocket`); TLS and proxied stacks write through
        // their handlers on the loop, and UNIX-domain sockets keep NIO's connect.
        let ownsConnect = configuration.tls == nil && proxy == nil && !configuration.carriesFramedMessages
            && attempt.address.protocol != .unix
        if ownsConnect {
            // NIO's bootstrap turns Nagle off by default: carry the flow's choice over.
            bootstrap = bootstrap.applying(settings.filter { $0.level == Int32(IPPROTO_TCP) && $0.name == TCP_NODELAY })
        } else {
            bootstrap = bootstrap.applying(settings)
            if let local { bootstrap = bootstrap.bind(to: local) }
        }
        let framed = configuration.carriesFramedMessages
        bootstrap = bootstrap.channelInitializer { channel in
            attempt.channel = channel
            guard let flow, !attempt.cancelled else { return channel.eventLoop.makeFailedFuture(FlowError.posix(ECANCELED)) }
            if !ownsConnect {
                for option in bestEffort {
                    try? channel.syncOptions?.setOption(option.channelOption, value: option.channelValue)
                }
            }
            return channel.eventLoop.makeCompletedFuture {
                if framed {
                    // Messages from the framers, with their metadata, need a handler of that type.
                    try channel.pipeline.syncOperations.addHandler(FlowChannelHandler<FramedMessage, OwningFlowLink>(flow: flow))
                } else {
                    try channel.pipeline.syncOperations.addHandler(flow)
                }
            }
        }
        var connected: EventLoopFuture<Channel>
        if ownsConnect {
            let pending = PendingConnect(
                to: attempt.address, local: local, multipath: configuration.multipath && MPTCPSupport.available,
                settings: settings, bestEffort: bestEffort, eventLoop: eventLoop)
            attempt.pendingConnect = pending
            // (Connect and hand-over both run on the attempt's loop.)
            let handover = NIOLoopBound(bootstrap, eventLoop: eventLoop)
            let loop = eventLoop
            connected = pending.descriptor.flatMap { descriptor in
                attempt.pendingConnect = nil
                guard !attempt.cancelled else {
                    close(descriptor)
                    return loop.makeFailedFuture(FlowError.posix(ECANCELED))
                }
                attempt.descriptor = descriptor
                return handover.value.withConnectedSocket(descriptor)
            }
        } else {
            connected = bootstrap.connect(to: attempt.address)
        }
        if let initialData {
            // Written before anything else; with Fast Open it leaves in the SYN, and the
            // connect NIO reported is only then really under way.
            connected = connected.flatMap { channel in
                attempt.wroteInitialData = true
                return channel.writeAndFlush(initialData).flatMap {
                    FastOpenHandshake.established(channel)
                }.map { channel }.flatMapErrorThrowing { error in
                    channel.close(promise: nil)
                    throw error
                }
            }
        }
        // (TLS over Fast Open: the ClientHello is the first write, and the TLS handshake
        // proves the connect.)
        connected = connected.map { channel in
            attempt.connected = .now()
            return channel
        }
        if let proxy {
            connected = tunnel(connected, via: proxy)
        }
        // Certificates name the target, not the proxy.
        let peer = proxy == nil ? attempt.address : configuration.target.literalAddress
        let secure = secured(connected, attempt: attempt) { channel, settings, hostName in
            DTLSStack.usesGnuTLSForStream(settings)
                ? DTLSStack.startClient(ByteBuffer.self, on: channel, settings: settings, hostName: hostName)
                : TLSStack.startClient(on: channel, settings: settings, hostName: hostName, peer: peer)
        }
        if let webSocket = configuration.webSocket { return withWebSocket(secure, webSocket, attempt: attempt) }
        return framed ? withFramers(secure, attempt: attempt, peer: peer) : secure
    }

    /// The WebSocket layer over everything below it: the attempt is up when the server accepted
    /// the upgrade. A refused or invalid upgrade fails the connection for good (the peer was
    /// reached, and its protocol said no), as a framer's `markFailed` does.
    private func withWebSocket(
        _ connected: EventLoopFuture<Channel>, _ webSocket: WebSocketConfiguration, attempt: ConnectionAttempt
    ) -> EventLoopFuture<Channel> {
        let host = webSocket.hostHeader ?? configuration.target.hostHeader
        return withLayer(connected) { channel, _, flowHandler in
            WebSocketStack.startClient(on: channel, before: flowHandler, configuration: webSocket, host: host)
                .map { facts in attempt.webSocketFacts = facts }
        }
    }

    /// The framers of the stack, over everything below them (TCP or UDP, a proxy's tunnel, TLS): each
    /// goes in above the ones below it, right under the flow's handler, and starts at once; the
    /// attempt is up when every framer is ready, and the TLS the top one prepended (if any) has
    /// finished its handshake above it (`TLSAboveFramer`). A framer that fails closes the socket.
    func withFramers(
        _ connected: EventLoopFuture<Channel>, datagrams: Bool = false, attempt: ConnectionAttempt, peer: SocketAddress?
    ) -> EventLoopFuture<Channel> {
        let framers = configuration.framers
        let targetName = configuration.target.hostName
        return withLayer(connected) { channel, pipeline, flowHandler in
            // Over UDP and DTLS, each datagram's (decrypted) bytes are the framer's input.
            if datagrams { try pipeline.addHandler(DatagramPayloads(), position: .before(flowHandler)) }
            // Bottom first: the last framer listed sits right over the transport.
            let hosts = framers.reversed().map {
                FramerHost(factory: $0, eventLoop: channel.eventLoop, writesDatagrams: datagrams)
            }
            let handlers = FramerHandler.stack(hosts)
            for handler in handlers {
                try pipeline.addHandler(handler, position: .before(flowHandler))
            }
            if let top = handlers.last { flowHandler.join(top, channel: channel) }
            return EventLoopFuture.andAllSucceed(hosts.map(\.readyFuture), on: channel.eventLoop).flatMap {
                do {
                    guard let tls = try TLSAboveFramer.prepended(by: hosts) else {
                        return channel.eventLoop.makeSucceededVoidFuture()
                    }
                    // (TLS asked for and no framer to run it above: never plaintext instead.)
                    guard let top = handlers.last else { throw FlowError.posix(EOPNOTSUPP) }
                    let hostName = tls.serverName ?? targetName
                    return self.handshake(tls, hostName: hostName, on: channel, attempt: attempt) { channel, settings, hostName in
                        TLSAboveFramer.startClient(
                            on: channel, top: top, flowHandler: flowHandler, settings: settings, hostName: hostName, peer: peer)
                    }
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        }
    }

    /// A message layer over everything below it (framers, WebSocket), put in right under the
    /// flow's handler by `start`; the attempt is up when `start`'s future succeeds. A layer that
    /// fails closes the socket and fails the connection for good (`FlowSetup.framerFailure`: the
    /// peer was reached, and its protocol said no).
    private func withLayer(
        _ connected: EventLoopFuture<Channel>,
        _ start: @escaping @Sendable (
            Channel, ChannelPipeline.SynchronousOperations, FlowChannelHandler<FramedMessage, OwningFlowLink>
        ) throws -> EventLoopFuture<Void>
    ) -> EventLoopFuture<Channel> {
        let flow = self.flow
        return connected.flatMap { channel in
            let pipeline = channel.pipeline.syncOperations
            do {
                let flowHandler = try pipeline.handler(type: FlowChannelHandler<FramedMessage, OwningFlowLink>.self)
                return try start(channel, pipeline, flowHandler)
                    .map { channel }
                    .flatMapErrorThrowing { error in
                        channel.close(promise: nil)
                        // (Noted on the flow's loop, before the race hears of this attempt.)
                        if let flow, flow.eventLoop.inEventLoop { flow.setup?.framerFailure = FlowError(error) }
                        throw error
                    }
            } catch {
                channel.close(promise: nil)
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
    }

    /// The tunnel through `proxy` is part of the attempt: an attempt wins once the whole stack
    /// is up.
    private func tunnel(_ connected: EventLoopFuture<Channel>, via proxy: ProxyDescription) -> EventLoopFuture<Channel> {
        let target = configuration.target
        let timeout = remainingConnectionTimeout()
        let version = configuration.ip.version
        let metadata = logMetadata
        return connected.flatMap { channel in
            NetworkLog.proxy.debug("tunnel to \(target) via \(proxy)", metadata: metadata)
            return ProxyTunnel.establish(on: channel, to: target, via: proxy, timeout: timeout, ipVersion: version)
                .map {
                    NetworkLog.proxy.debug("tunnel to \(target) via \(proxy) is up", metadata: metadata)
                    return channel
                }.flatMapErrorThrowing { error in
                    // ProxyError's text never carries the credential.
                    NetworkLog.proxy.debug("tunnel via \(proxy) failed: \(Self.logText(for: error))", metadata: metadata)
                    throw error
                }
        }
    }

    private func connectUDP(
        _ attempt: ConnectionAttempt, options: [SocketOptionSetting], local: SocketAddress?
    ) -> EventLoopFuture<Channel> {
        let framed = !configuration.framers.isEmpty
        // Plain datagrams report their ECN codepoint (and, when asked, their receive time) in
        // their IP metadata.
        let plain = !framed && configuration.tls == nil
        let stamped = configuration.ip.shouldCalculateReceiveTime
        let bootstrap = datagramBootstrap(attempt, options: options) { channel, flow in
            if framed {
                try channel.pipeline.syncOperations.addHandler(FlowChannelHandler<FramedMessage, OwningFlowLink>(flow: flow))
            } else {
                if plain {
                    ECNCodepoint.enableReading(on: channel)
                    DatagramReceiveOffload.enable(on: channel)
                }
                try channel.pipeline.syncOperations.addHandler(
                    FlowChannelHandler<AddressedEnvelope<ByteBuffer>, OwningFlowLink>(flow: flow, stampsReceiveTime: plain && stamped))
            }
        }
        // Plain datagrams go straight to the socket (`DatagramWriter`: batches leave segmented),
        // so the socket is opened here and its descriptor kept; DTLS and framers write through
        // their handlers.
        let connected = bindAndConnect(
            bootstrap, attempt: attempt, local: local, options: options, ownSocket: plain && EngineTuning.directIO)
        let secure = secured(connected, attempt: attempt) { channel, settings, hostName in
            DTLSStack.startClient(AddressedEnvelope<ByteBuffer>.self, on: channel, settings: settings, hostName: hostName)
        }
        return framed ? withFramers(secure, datagrams: true, attempt: attempt, peer: nil) : secure
    }

    /// A UDP socket for `attempt` with the flow's options, read on demand into 64 KiB buffers;
    /// `addHandlers` puts the flow's handler on it (not called when the attempt was cancelled).
    func datagramBootstrap(
        _ attempt: ConnectionAttempt, options: [SocketOptionSetting],
        addHandlers: @escaping @Sendable (Channel, Flow) throws -> Void
    ) -> DatagramBootstrap {
        let flow = self.flow
        return DatagramBootstrap(group: eventLoop)
            .channelOption(ChannelOptions.autoRead, value: false)
            .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
            .applying(options)
            .channelInitializer { channel in
                attempt.channel = channel
                guard let flow, !attempt.cancelled else { return channel.eventLoop.makeFailedFuture(FlowError.posix(ECANCELED)) }
                return channel.eventLoop.makeCompletedFuture { try addHandlers(channel, flow) }
            }
    }

    /// Binds a datagram socket (to `local`, or the wildcard of the remote's family) and
    /// connects it to the attempt's address. With `ownSocket`, the socket is opened here rather
    /// than by NIO, with `options` set before the bind, and its descriptor kept in
    /// `attempt.descriptor` (the flow's or QUIC's `DatagramWriter` writes to it).
    func bindAndConnect(
        _ bootstrap: DatagramBootstrap, attempt: ConnectionAttempt, local: SocketAddress?,
        options: [SocketOptionSetting] = [], ownSocket: Bool = false
    ) -> EventLoopFuture<Channel> {
        let address = attempt.address
        let bindAddress: SocketAddress
        do {
            bindAddress = try local ?? SocketAddress(ipAddress: address.protocol == .inet6 ? "::" : "0.0.0.0", port: 0)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        let bound: EventLoopFuture<Channel>
        if ownSocket {
            do {
                let descriptor = try DatagramSocketOpen.bound(to: bindAddress, reuseAddress: false, options: options)
                attempt.descriptor = descriptor
                bound = bootstrap.withBoundSocket(descriptor)
            } catch {
                return eventLoop.makeFailedFuture(error)
            }
        } else {
            bound = bootstrap.bind(to: bindAddress)
        }
        return bound.flatMap { channel in
            channel.connect(to: address).map {
                attempt.connected = .now()
                return channel
            }.flatMapErrorThrowing { error in
                channel.close(promise: nil)
                throw error
            }
        }
    }

    /// The security step of an attempt (TLS over TCP, DTLS over UDP, QUIC's handshake), when the
    /// flow has one: the challenge block is asked for a client identity, `start` runs the
    /// handshake on the connected channel, and its facts go to the attempt. A failed handshake
    /// closes the socket.
    func secured(
        _ connected: EventLoopFuture<Channel>, attempt: ConnectionAttempt,
        start: @escaping @Sendable (Channel, FlowTLSConfiguration, String?) -> EventLoopFuture<TLSSessionFacts>
    ) -> EventLoopFuture<Channel> {
        guard let tls = configuration.tls else { return connected }
        let hostName = tls.serverName ?? configuration.target.hostName
        return connected.flatMap { channel in
            handshake(tls, hostName: hostName, on: channel, attempt: attempt, start: start).map { channel }
        }
    }

    /// One TLS handshake of an attempt (over TCP, or above a framer that prepended it): the
    /// challenge block first, then `start`; its facts go to the attempt, and a failure closes the
    /// socket.
    private func handshake(
        _ tls: FlowTLSConfiguration, hostName: String?, on channel: Channel, attempt: ConnectionAttempt,
        start: @escaping @Sendable (Channel, FlowTLSConfiguration, String?) -> EventLoopFuture<TLSSessionFacts>
    ) -> EventLoopFuture<Void> {
        var metadata = logMetadata
        metadata["verification"] = "\(tls.verificationLogText(server: false))"
        if let hostName { metadata["server_name"] = "\(hostName)" }
        let started = NIODeadline.now()
        NetworkLog.tls.debug("handshake with \(attempt.address.logText)", metadata: metadata)
        return Self.resolveChallenge(tls, on: channel.eventLoop).flatMap { settings in
            start(channel, settings, hostName)
        }.map { [metadata] facts in
            NetworkLog.tls.debug(
                "handshake complete, peer trusted", metadata: metadata.merging(facts.logMetadata) { a, _ in a })
            attempt.tlsFacts = facts
            attempt.tlsHandshakeDuration = .now() - started
        }.flatMapErrorThrowing { [metadata] error in
            NetworkLog.tls.debug("handshake failed: \(Self.logText(for: error))", metadata: metadata)
            channel.close(promise: nil)
            throw error
        }
    }

    /// Asks the challenge block (if any) for the client identity before the handshake.
    private static func resolveChallenge(_ tls: FlowTLSConfiguration, on eventLoop: EventLoop) -> EventLoopFuture<FlowTLSConfiguration> {
        guard let challenge = tls.challenge else { return eventLoop.makeSucceededFuture(tls) }
        let promise = eventLoop.makePromise(of: FlowTLSConfiguration.self)
        challenge { identity in
            var settings = tls
            if let identity {
                settings.certificateChain = identity.certificates
                settings.privateKey = identity.key
            }
            promise.succeed(settings)
        }
        return promise.futureResult
    }

    /// The local endpoint the parameters require, if any (an address, not a name). A wildcard
    /// address only asks for a port (`localPort(_:)` of the 2025 API): it takes the family of
    /// `remote`, so that one setting serves IPv4 and IPv6 attempts alike.
    private func localAddress(toward remote: SocketAddress) throws -> SocketAddress? {
        guard let local = configuration.localTarget else { return nil }
        switch local {
        case .address(let address):
            return address
        case .hostPort(let host, let port, let interfaceName):
            if let address = SocketAddress(literal: host, port: port, interfaceName: interfaceName) {
                return Self.wildcard(address, matching: remote) ?? address
            }
            throw FlowError.posix(EINVAL)
        case .unix(let path):
            return try SocketAddress(unixDomainSocketPath: path)
        }
    }

    /// The wildcard address of `remote`'s family with `local`'s port, when `local` is the
    /// wildcard of the other family; nil otherwise.
    static func wildcard(_ local: SocketAddress, matching remote: SocketAddress) -> SocketAddress? {
        guard let port = local.port else { return nil }
        switch (local, remote) {
        case (.v6(let v6), .v4) where withUnsafeBytes(of: v6.address.sin6_addr, { $0.allSatisfy { $0 == 0 } }):
            return try? SocketAddress(ipAddress: "0.0.0.0", port: port)
        case (.v4(let v4), .v6) where v4.address.sin_addr.s_addr == 0:
            return try? SocketAddress(ipAddress: "::", port: port)
        default:
            return nil
        }
    }

    /// What is left of the connection timeout (nil without one), for the proxy handshake.
    private func remainingConnectionTimeout() -> TimeAmount? {
        guard configuration.tcp.connectionTimeout > 0 else { return nil }
        let left = TimeAmount.seconds(Int64(configuration.tcp.connectionTimeout)) - (.now() - establishmentStarted)
        return max(left, .milliseconds(1))
    }

    /// An error from a layer of an attempt, for a log line: proxy errors keep their detail.
    static func logText(for error: any Error) -> String {
        if let proxy = error as? ProxyError { return "\(proxy) (\(proxy.flowError.logDescription))" }
        return FlowError(error).logDescription
    }
}
