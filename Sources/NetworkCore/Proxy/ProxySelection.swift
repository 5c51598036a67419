/// One way to reach a destination, in the order to try them.
package enum ProxyRoute: Sendable, Equatable, CustomStringConvertible {
    /// Connect to the destination itself.
    case direct
    /// Connect to the proxy and tunnel through it with ``ProxyTunnel``.
    case proxy(ProxyDescription)

    package var description: String {
        switch self {
        case .direct: return "direct"
        case .proxy(let proxy): return proxy.description
        }
    }
}

/// Step 2 of establishment: which proxy, if any, a connection uses.
package enum ProxySelection {
    /// The routes to try, first one first; more than one only when a proxy allows failover or
    /// `preferNoProxies` is set. Fails when the proxy that applies cannot be used and does not
    /// allow failover, so a connection never goes direct behind the user's back.
    ///
    /// - `secure`: whether TLS runs over the connection (it picks `https_proxy` over
    ///   `http_proxy`).
    /// - `configured`: the privacy context's proxies. When there are any, they alone decide:
    ///   the environment is not consulted, even for destinations none of them matches.
    /// - `environment`: consulted only when nothing is configured; nil to ignore it.
    /// - `preferNoProxies`: direct first, the proxies after it as fallbacks.
    ///
    /// UDP and UNIX sockets are never proxied: SOCKS5 UDP ASSOCIATE is not implemented and
    /// HTTP CONNECT carries streams only.
    package static func routes(
        to target: FlowTarget,
        transport: FlowTransportKind,
        secure: Bool,
        configured: [ProxyDescription],
        environment: ProxyEnvironment?,
        preferNoProxies: Bool
    ) -> Result<[ProxyRoute], FlowError> {
        guard transport == .tcp else { return .success([.direct]) }
        let host: String
        let port: Int
        switch target {
        case .unix:
            return .success([.direct])
        case .address(let address):
            guard let text = address.ipAddress, let number = address.port else { return .success([.direct]) }
            (host, port) = (text, number)
        case .hostPort(let name, let number, _):
            (host, port) = (name, number)
        }
        var routes: [ProxyRoute] = []
        if !configured.isEmpty {
            var failover = false
            for proxy in configured where proxy.applies(toHost: host) {
                if case .unsupported(let what) = proxy.kind {
                    if proxy.allowFailover { continue }
                    if routes.isEmpty { return .failure(ProxyError.unsupported(what).flowError) }
                    break
                }
                routes.append(.proxy(proxy))
                failover = failover || proxy.allowFailover
            }
            if routes.isEmpty || failover { routes.append(.direct) }
        } else if let environment {
            switch environment.proxy(forHost: host, port: port, secure: secure) {
            case .success(let proxy?): routes = [.proxy(proxy)]
            case .success(nil): routes = [.direct]
            case .failure(let error): return .failure(error.flowError)
            }
        } else {
            routes = [.direct]
        }
        if preferNoProxies, routes.contains(where: { $0 != .direct }) {
            routes = [.direct] + routes.filter { $0 != .direct }
        }
        return .success(routes)
    }
}
