import NetworkCore

extension ProxyConfiguration {
    /// The engine's view of this proxy: kind, address, credential (read now, so a later
    /// ``applyCredential(username:password:)`` affects connections created afterwards only),
    /// and the domain rules.
    ///
    /// MASQUE relays and Oblivious HTTP, and proxies whose endpoint is not a host and port (a
    /// Bonjour service, a UNIX path), come out as `.unsupported`: a connection they apply to
    /// fails with `EPROTONOSUPPORT` unless ``allowFailover`` lets it go direct.
    package var proxyDescription: ProxyDescription {
        let kind: ProxyDescription.Kind
        let endpoint: NWEndpoint
        var tls: ProxyTLSSettings?
        switch self.kind {
        case .httpCONNECT(let proxy, let tlsOptions):
            kind = .httpCONNECT(tlsToProxy: tlsOptions != nil)
            endpoint = proxy
            tls = tlsOptions.map { ProxyTLSSettings($0.securityProtocolOptions.flowConfiguration()) }
        case .socksv5(let proxy):
            // Apple's SOCKS proxies are given host names (as with socks5h): the device may not
            // be able to resolve what the proxy can.
            kind = .socks5(proxyResolvesNames: true)
            endpoint = proxy
        case .relay:
            return unsupported("MASQUE relays")
        case .obliviousHTTP:
            return unsupported("Oblivious HTTP")
        }
        let server: FlowTarget
        switch endpoint.flowTarget() {
        case .success(.unix), .failure:
            return unsupported("proxy endpoint \(endpoint.debugDescription)")
        case .success(let target):
            server = target
        }
        var description = ProxyDescription(
            kind: kind, server: server,
            credential: credential.map { ProxyCredential(username: $0.username, password: $0.password) })
        description.allowFailover = allowFailover
        description.matchDomains = matchDomains
        description.excludedDomains = excludedDomains
        description.tls = tls
        return description
    }

    private func unsupported(_ what: String) -> ProxyDescription {
        var description = ProxyDescription(kind: .unsupported(what), server: .unix(path: ""))
        description.allowFailover = allowFailover
        description.matchDomains = matchDomains
        description.excludedDomains = excludedDomains
        return description
    }
}

extension NWParameters {
    /// The proxies of this parameters' privacy context, in order, for
    /// `ProxySelection.routes(to:transport:secure:configured:environment:preferNoProxies:)`.
    /// Empty when none are configured, in which case the environment variables apply.
    package var proxyDescriptions: [ProxyDescription] {
        privacyContext.proxyConfigurations.map(\.proxyDescription)
    }
}
