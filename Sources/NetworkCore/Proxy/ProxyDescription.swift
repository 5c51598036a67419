import NetworkDNS

/// One proxy, in engine terms: what kind it is, where it listens, how to authenticate, and which
/// destinations it applies to. Built from an explicit `ProxyConfiguration` (the `Network`
/// bridging), from environment variables (``ProxyEnvironment``) or from a PAC result, so
/// the establishment handles all three the same way.
///
/// Its textual forms never contain the credential (see ``ProxyCredential``).
package struct ProxyDescription: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The protocol spoken to the proxy.
    package enum Kind: Sendable, Equatable {
        /// SOCKS version 5 (RFC 1928). With `proxyResolvesNames` (`socks5h://`), host names are
        /// sent to the proxy as they are; without it (`socks5://`) they are resolved here and the
        /// proxy is given an address.
        case socks5(proxyResolvesNames: Bool)
        /// HTTP/1.1 CONNECT (RFC 9110 §9.3.6). `tlsToProxy` means the connection to the proxy
        /// itself is TLS (`https://` proxies, `tlsOptions:`), with ``ProxyDescription/tls``.
        case httpCONNECT(tlsToProxy: Bool)
        /// A proxy this build cannot use (MASQUE relays, Oblivious HTTP). Kept rather than
        /// dropped so a connection that asked for it fails instead of silently going direct.
        case unsupported(String)
    }

    /// The protocol spoken to the proxy.
    package var kind: Kind
    /// Where the proxy listens. The establishment resolves and connects to it like any other
    /// target, then hands the connected channel to ``ProxyTunnel``.
    package var server: FlowTarget
    /// Credentials for the proxy, if any.
    package var credential: ProxyCredential?
    /// When not empty, only destinations in these domains use the proxy.
    package var matchDomains: [String] = []
    /// Destinations in these domains do not use the proxy.
    package var excludedDomains: [String] = []
    /// Whether a connection may go direct when the proxy cannot be used.
    package var allowFailover = false
    /// For an HTTPS proxy: how to set up TLS with the proxy. Nil means the defaults (the
    /// system trust store, and the proxy's host name checked against its certificate).
    package var tls: ProxyTLSSettings?

    package init(kind: Kind, server: FlowTarget, credential: ProxyCredential? = nil) {
        self.kind = kind
        self.server = server
        self.credential = credential
    }

    /// Whether this proxy applies to `host` under ``matchDomains`` and ``excludedDomains``
    /// (a domain covers itself and its subdomains; case and a trailing dot do not matter).
    package func applies(toHost host: String) -> Bool {
        if excludedDomains.contains(where: { DomainName.isWithin(host, domain: $0) }) { return false }
        if matchDomains.isEmpty { return true }
        return matchDomains.contains(where: { DomainName.isWithin(host, domain: $0) })
    }

    /// Kind and address, and whether a credential is set; never the credential.
    package var description: String {
        var text: String
        switch kind {
        case .socks5(let remote): text = (remote ? "socks5h://" : "socks5://")
        case .httpCONNECT(let tls): text = (tls ? "https://" : "http://")
        case .unsupported(let what): return "unsupported proxy (\(what))"
        }
        if credential != nil { text += "<credential>@" }
        switch server {
        case .hostPort(let host, let port, _):
            text += HostAuthority.authority(host, port: Int(port))
        case .address(let address):
            text += "\(address)"
        case .unix(let path):
            text += path
        }
        return text
    }

    /// Same as ``description``.
    package var debugDescription: String { description }
}
