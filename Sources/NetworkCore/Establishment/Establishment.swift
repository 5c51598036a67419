#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix
import NetworkSystem

/// One establishment run for an outbound flow: resolve the target, then try each address in
/// order until one connects. This is deliberately a separate, replaceable step: the Happy Eyeballs
/// racer of the establishment issue takes its place behind the same two calls (`run`, `skipCurrent`).
/// Lives on the flow's event loop.
final class Establishment: @unchecked Sendable {
    private weak var flow: Flow?
    private let configuration: FlowConfiguration
    private let eventLoop: EventLoop
    private var candidates: [SocketAddress] = []
    private var index = 0
    private var current: Channel?
    private var abandoned = false
    private var lastError: FlowError?
    private var attemptStart: NIODeadline = .now()
    private(set) var resolutionReport: ResolutionReport?
    private(set) var handshakeDuration: TimeAmount?
    private(set) var tlsFacts: TLSSessionFacts?
    private(set) var tlsHandshakeDuration: TimeAmount?

    init(flow: Flow, configuration: FlowConfiguration) {
        self.flow = flow
        self.configuration = configuration
        self.eventLoop = flow.eventLoop
    }

    func run() {
        let interfaceIndex: Int?
        do {
            interfaceIndex = try InterfaceSelection.requiredIndex(for: configuration)
        } catch {
            finish(.failure(FlowError(error)))
            return
        }
        let started = NIODeadline.now()
        AddressResolver.resolve(
            configuration.target, version: configuration.ip.version,
            transport: configuration.transport, on: eventLoop
        ).whenComplete { result in
            guard !self.abandoned else { return }
            switch result {
            case .success(let addresses):
                var literal = false
                if case .hostPort(let host, _, _) = self.configuration.target {
                    literal = AddressResolver.literalAddress(host, port: 0) != nil
                } else {
                    literal = true
                }
                self.candidates = addresses
                // An address literal involves no resolution, and reports none.
                self.resolutionReport = literal ? nil : ResolutionReport(
                    duration: .now() - started, endpointCount: addresses.count,
                    successful: nil, preferred: addresses.first, fromLiteral: false
                )
                if addresses.isEmpty {
                    self.finish(.failure(.dns(DNSServiceCode.noSuchRecord)))
                } else {
                    self.tryNext(interfaceIndex: interfaceIndex)
                }
            case .failure(let error):
                self.finish(.failure(FlowError(error)))
            }
        }
    }

    /// Gives up on the address being tried (its connect fails, and the next one is tried).
    func skipCurrent() {
        current?.close(promise: nil)
    }

    /// Stops for good; a connect that completes later is closed.
    func abandon() {
        abandoned = true
        current?.close(promise: nil)
        current = nil
    }

    private func tryNext(interfaceIndex: Int?) {
        guard !abandoned else { return }
        guard index < candidates.count else {
            finish(.failure(lastError ?? .posix(ECONNREFUSED)))
            return
        }
        let address = candidates[index]
        index += 1
        attemptStart = .now()
        connect(to: address, interfaceIndex: interfaceIndex).whenComplete { result in
            switch result {
            case .success(let channel):
                self.current = nil
                if self.abandoned {
                    channel.close(promise: nil)
                    return
                }
                if InterfaceSelection.violatesRestrictions(local: channel.localAddress, configuration: self.configuration) {
                    // The route goes over an interface the parameters rule out.
                    channel.close(promise: nil)
                    self.lastError = Self.preferred(self.lastError, .posix(ENETUNREACH))
                    self.tryNext(interfaceIndex: interfaceIndex)
                    return
                }
                self.handshakeDuration = .now() - self.attemptStart
                self.resolutionReport?.successful = address
                self.finish(.success(channel))
            case .failure(let error):
                self.current = nil
                let failure = FlowError(error)
                if case .tls = failure {
                    // The server was reached and refused or failed the handshake: another
                    // address of the same name would not do better.
                    self.finish(.failure(failure))
                    return
                }
                self.lastError = Self.preferred(self.lastError, failure)
                self.tryNext(interfaceIndex: interfaceIndex)
            }
        }
    }

    /// When several addresses fail, report the most telling error: a refusal beats a timeout.
    private static func preferred(_ old: FlowError?, _ new: FlowError) -> FlowError {
        guard let old else { return new }
        if case .posix(ECANCELED) = new { return old }
        if case .posix(ECONNREFUSED) = old { return old }
        return new
    }

    private func finish(_ result: Result<Channel, FlowError>) {
        guard !abandoned else {
            if case .success(let channel) = result { channel.close(promise: nil) }
            return
        }
        abandoned = true
        if let flow {
            flow.establishmentFinished(self, result: result)
        } else if case .success(let channel) = result {
            channel.close(promise: nil)
        }
    }

    private func socketOptions(for address: SocketAddress, interfaceIndex: Int?) -> [SocketOptionSetting] {
        let family: SocketFamily = address.protocol == .inet6 ? .inet6 : .inet
        var options: [SocketOptionSetting] = []
        let isUnix = address.protocol == .unix
        switch configuration.transport {
        case .tcp:
            if !isUnix {
                options += SocketOptionPlan.tcp(configuration.tcp)
                // NIO turns Nagle off by default; Apple leaves it on unless `noDelay` is set.
                options.append(.init(level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: configuration.tcp.noDelay ? 1 : 0))
            }
        case .udp:
            options += SocketOptionPlan.udp(configuration.udp)
        }
        if !isUnix {
            options += SocketOptionPlan.ip(configuration.ip, family: family, datagram: configuration.transport == .udp)
            options += SocketOptionPlan.trafficClass(configuration.trafficClass, family: family)
        }
        if configuration.allowLocalEndpointReuse {
            options.append(.init(level: SOL_SOCKET, name: SO_REUSEADDR, value: 1))
            options.append(.init(level: SOL_SOCKET, name: SO_REUSEPORT, value: 1))
        }
        if let interfaceIndex {
            options.append(.init(level: SOL_SOCKET, name: InterfaceSelection.soBindToIfindex, value: Int32(interfaceIndex)))
        }
        return options
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

    private func localAddress(for remote: SocketAddress) throws -> SocketAddress? {
        guard let local = configuration.localTarget else { return nil }
        switch local {
        case .address(let address):
            return address
        case .hostPort(let host, let port, let interfaceName):
            if let address = AddressResolver.literalAddress(host, port: port, interfaceName: interfaceName) {
                return address
            }
            throw FlowError.posix(EINVAL)
        case .unix(let path):
            return try SocketAddress(unixDomainSocketPath: path)
        }
    }

    private func connect(to address: SocketAddress, interfaceIndex: Int?) -> EventLoopFuture<Channel> {
        let options = socketOptions(for: address, interfaceIndex: interfaceIndex)
        let local: SocketAddress?
        do {
            local = try localAddress(for: address)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        let flow = self.flow
        switch configuration.transport {
        case .tcp:
            var bootstrap = ClientBootstrap(group: eventLoop)
                .channelOption(ChannelOptions.autoRead, value: false)
                .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
                // Apple has no per-attempt timeout of its own; keep NIO's out of the way and
                // let the kernel (or `connectionTimeout`) decide.
                .connectTimeout(.seconds(130))
            // Fast Open is best effort: the kernel refuses it when net.ipv4.tcp_fastopen has
            // client support off, and the connection must then go ahead without it.
            let bestEffort = options.filter { $0.level == Int32(IPPROTO_TCP) && $0.name == TCP_FASTOPEN_CONNECT }
            bootstrap = bootstrap.applying(options.filter { !bestEffort.contains($0) })
            if let local { bootstrap = bootstrap.bind(to: local) }
            bootstrap = bootstrap.channelInitializer { channel in
                self.current = channel
                guard let flow else { return channel.eventLoop.makeFailedFuture(FlowError.posix(ECANCELED)) }
                for option in bestEffort {
                    try? channel.syncOptions?.setOption(option.channelOption, value: option.channelValue)
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FlowChannelHandler<ByteBuffer>(flow: flow))
                }
            }
            guard let tls = configuration.tls else { return bootstrap.connect(to: address) }
            let hostName = tls.serverName ?? configuration.target.hostName
            return bootstrap.connect(to: address).flatMap { channel in
                let started = NIODeadline.now()
                return Self.resolveChallenge(tls, on: channel.eventLoop).flatMap { settings in
                    TLSStack.startClient(on: channel, settings: settings, hostName: hostName)
                }.map { facts in
                    self.tlsFacts = facts
                    self.tlsHandshakeDuration = .now() - started
                    return channel
                }.flatMapErrorThrowing { error in
                    channel.close(promise: nil)
                    throw error
                }
            }
        case .udp:
            let bootstrap = DatagramBootstrap(group: eventLoop)
                .channelOption(ChannelOptions.autoRead, value: false)
                .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
                .applying(options)
                .channelInitializer { channel in
                self.current = channel
                guard let flow else { return channel.eventLoop.makeFailedFuture(FlowError.posix(ECANCELED)) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        FlowChannelHandler<AddressedEnvelope<ByteBuffer>>(flow: flow)
                    )
                }
            }
            let bindAddress: SocketAddress
            do {
                bindAddress = try local ?? SocketAddress(ipAddress: address.protocol == .inet6 ? "::" : "0.0.0.0", port: 0)
            } catch {
                return eventLoop.makeFailedFuture(error)
            }
            let connected = bootstrap.bind(to: bindAddress).flatMap { channel in
                channel.connect(to: address).map { channel }.flatMapErrorThrowing { error in
                    channel.close(promise: nil)
                    throw error
                }
            }
            guard let tls = configuration.tls else { return connected }
            let hostName = tls.serverName ?? configuration.target.hostName
            return connected.flatMap { channel in
                let started = NIODeadline.now()
                return Self.resolveChallenge(tls, on: channel.eventLoop).flatMap { settings in
                    DTLSStack.startClient(on: channel, settings: settings, hostName: hostName)
                }.map { facts in
                    self.tlsFacts = facts
                    self.tlsHandshakeDuration = .now() - started
                    return channel
                }.flatMapErrorThrowing { error in
                    channel.close(promise: nil)
                    throw error
                }
            }
        }
    }
}
