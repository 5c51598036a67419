#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NetworkCore

extension NWInterface.InterfaceType {
    var systemType: SystemInterfaceType {
        switch self {
        case .other: return .other
        case .wifi: return .wifi
        case .cellular: return .cellular
        case .wiredEthernet: return .wiredEthernet
        case .loopback: return .loopback
        }
    }
}

extension FlowTarget {
    /// The name TLS verifies for this target: the host as written, or the address literal.
    var verifiedName: String? {
        switch self {
        case .hostPort(let host, _, _): return host
        case .address(let address): return address.ipAddress
        case .unix: return nil
        }
    }
}

extension NWParameters {
    /// The transport the protocol stack asks for, or nil when it names none this build runs.
    var flowTransport: FlowTransportKind? {
        switch defaultProtocolStack.transportProtocol {
        case is NWProtocolTCP.Options: return .tcp
        case is NWProtocolUDP.Options: return .udp
        case let quic as NWProtocolQUIC.Options: return quic.isDatagram ? .quicDatagram : .quic
        default: return nil
        }
    }

    /// A snapshot of everything the engine needs, taken when a connection or listener is made
    /// (`listener` true for the configuration of a listener's inbound connections; `endpoint`,
    /// the connection's, gives WebSocket its URL).
    func flowConfiguration(target: FlowTarget, listener: Bool = false, endpoint: NWEndpoint? = nil) -> FlowConfiguration {
        var configuration = FlowConfiguration(target: target)
        let stack = defaultProtocolStack
        switch stack.transportProtocol {
        case let tcp as NWProtocolTCP.Options:
            configuration.transport = .tcp
            configuration.tcp = tcp.socketSettings
        case let udp as NWProtocolUDP.Options:
            configuration.transport = .udp
            configuration.udp = udp.socketSettings
        case let quic as NWProtocolQUIC.Options:
            // A connection made from datagram options carries the connection's QUIC datagrams.
            configuration.transport = quic.isDatagram ? .quicDatagram : .quic
            configuration.quic = quic.quicSettings
            // TLS 1.3 inside QUIC, offering the options' protocols first.
            var tls = quic.securityProtocolOptions.flowConfiguration(peerHostName: target.verifiedName, listener: listener)
            tls.applicationProtocols = quic.alpn + tls.applicationProtocols.filter { !quic.alpn.contains($0) }
            configuration.tls = tls
            // Framers run above QUIC streams; not built yet (docs/quic.md): other protocols above
            // QUIC (TLS, WebSocket), anything above QUIC datagrams, listeners of datagram flows.
            let onlyFramers = stack.applicationProtocols.allSatisfy { $0 is NWProtocolFramer.Options || $0 is BuiltInFramerOptions }
            if (quic.isDatagram && (listener || !stack.applicationProtocols.isEmpty)) || !onlyFramers {
                configuration.unsupported = .posix(EPROTONOSUPPORT)
            }
        default:
            configuration.unsupported = .posix(EPROTONOSUPPORT)
        }
        if let ip = stack.internetProtocol as? NWProtocolIP.Options {
            configuration.ip = ip.socketSettings
        }
        // Application protocols, the top one first: framers, then at most TLS (over TCP) or DTLS
        // (over UDP) at the bottom.
        var application = stack.applicationProtocols[...]
        if let options = application.last as? NWProtocolTLS.Options {
            configuration.tls = options.securityProtocolOptions.flowConfiguration(
                peerHostName: target.verifiedName, listener: listener)
            application = application.dropLast()
        }
        if let webSocket = application.last as? NWProtocolWebSocket.Options {
            application = application.dropLast()
            configuration.webSocket = webSocket.webSocketConfiguration(endpoint: endpoint)
            // Only directly over TCP or TLS; a wss URL never goes out without TLS.
            var plaintextWSS = false
            if case .url(let url) = endpoint, configuration.tls == nil { plaintextWSS = url.isSecureWebSocket }
            if configuration.transport != .tcp || !application.isEmpty || plaintextWSS {
                configuration.unsupported = .posix(EPROTONOSUPPORT)
            }
        }
        // TLS on top of framers (over TCP) runs as if the top framer had prepended it.
        var tlsAbove: FlowTLSConfiguration?
        if let top = application.first as? NWProtocolTLS.Options, application.count > 1, configuration.transport == .tcp {
            tlsAbove = top.securityProtocolOptions.flowConfiguration(peerHostName: target.verifiedName, listener: listener)
            application = application.dropFirst()
        }
        // Application framers, and the built-in ones of the 2025 API (TLV, the Coder's length
        // prefix), which run on the same host.
        let side = FramerConnectionSide(peerHostName: target.verifiedName, listener: listener)
        var framers: [any HostedFramerFactory] = application.compactMap { options in
            if let framer = options as? NWProtocolFramer.Options {
                return FramerStackEntry(options: framer, parameters: self, side: side)
            }
            return (options as? BuiltInFramerOptions)?.factory
        }
        if configuration.webSocket != nil {
            // (Framers above WebSocket are refused above.)
        } else if framers.count == application.count {
            if var top = framers.first as? FramerStackEntry {
                top.tlsAbove = tlsAbove
                framers[0] = top
            } else if tlsAbove != nil {
                // (Only an application framer can carry TLS it prepends.)
                configuration.unsupported = .posix(EPROTONOSUPPORT)
            }
            configuration.framers = framers
        } else {
            // Other orders (TLS between framers, TLS over UDP framers, a framer above
            // WebSocket). Refuse rather than run the connection without a protocol: nothing
            // may silently fall back to plaintext.
            configuration.unsupported = .posix(EPROTONOSUPPORT)
        }
        configuration.trafficClass = serviceClass.trafficClass
        if let local = requiredLocalEndpoint {
            switch local.flowTarget() {
            case .success(let target): configuration.localTarget = target
            case .failure(let error): configuration.unsupported = error
            }
        }
        configuration.allowLocalEndpointReuse = allowLocalEndpointReuse
        configuration.allowFastOpen = allowFastOpen
        configuration.proxies = proxyDescriptions
        configuration.preferNoProxies = preferNoProxies
        // .systemDefault keeps answers fresh (the system default on Linux); .allow and
        // .persistent use an expired answer at once while a fresh query runs.
        configuration.allowExpiredDNS = expiredDNSBehavior == .allow || expiredDNSBehavior == .persistent
        applyInterfaceRules(to: &configuration)
        configuration.multipath = multipathServiceType != .disabled
        return configuration
    }
}

extension NWParameters {
    /// Which interfaces a connection may use: the required and prohibited interfaces and types,
    /// and the expensive/constrained prohibitions.
    func applyInterfaceRules(to configuration: inout FlowConfiguration) {
        configuration.requiredInterfaceIndex = requiredInterface?.index
        if requiredInterfaceType != .other {
            configuration.requiredInterfaceType = requiredInterfaceType.systemType
        }
        configuration.prohibitedInterfaceTypes = (prohibitedInterfaceTypes ?? []).map(\.systemType)
        configuration.prohibitedInterfaceIndexes = (prohibitedInterfaces ?? []).map(\.index)
        configuration.prohibitExpensive = prohibitExpensivePaths
        configuration.prohibitConstrained = prohibitConstrainedPaths
    }

    /// The same rules as path requirements (what the path engine checks interfaces against).
    var pathRequirements: PathRequirements {
        var configuration = FlowConfiguration(target: .unix(path: ""))
        applyInterfaceRules(to: &configuration)
        return configuration.pathRequirements
    }
}
