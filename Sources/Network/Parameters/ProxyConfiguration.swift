import Foundation
import NetworkSync

/// A proxy that connections go through: a chain of MASQUE relays, an Oblivious HTTP relay, an
/// HTTP CONNECT proxy or a SOCKSv5 proxy. Attach it to a privacy context
/// (``NWParameters/PrivacyContext/proxyConfigurations``).
///
/// The settable properties have value semantics. Credentials applied with
/// ``applyCredential(username:password:)`` are shared by all copies of a configuration, since
/// that method does not mutate the value.
public struct ProxyConfiguration: CustomDebugStringConvertible, Sendable {

    /// One relay server in a chain, reached over HTTP/3 (optionally falling back to HTTP/2) or
    /// over HTTP/2 alone.
    public struct RelayHop: CustomDebugStringConvertible, Sendable {
        /// The relay's HTTP/3 endpoint, if it has one.
        package let http3RelayEndpoint: NWEndpoint?
        /// The relay's HTTP/2 endpoint, if it has one.
        package let http2RelayEndpoint: NWEndpoint?
        /// TLS settings for the connection to the relay.
        package let tlsOptions: NWProtocolTLS.Options
        /// Extra header fields sent in requests to the relay.
        package let additionalHTTPHeaderFields: [String: String]

        /// A relay reached over HTTP/3, with an optional HTTP/2 endpoint to fall back to.
        public init(
            http3RelayEndpoint: NWEndpoint,
            http2RelayEndpoint: NWEndpoint? = nil,
            tlsOptions: NWProtocolTLS.Options = .init(),
            additionalHTTPHeaderFields: [String: String] = [:]
        ) {
            self.http3RelayEndpoint = http3RelayEndpoint
            self.http2RelayEndpoint = http2RelayEndpoint
            self.tlsOptions = tlsOptions
            self.additionalHTTPHeaderFields = additionalHTTPHeaderFields
        }

        /// A relay reached over HTTP/2 only.
        public init(
            http2RelayEndpoint: NWEndpoint,
            tlsOptions: NWProtocolTLS.Options = .init(),
            additionalHTTPHeaderFields: [String: String] = [:]
        ) {
            self.http3RelayEndpoint = nil
            self.http2RelayEndpoint = http2RelayEndpoint
            self.tlsOptions = tlsOptions
            self.additionalHTTPHeaderFields = additionalHTTPHeaderFields
        }

        /// The relay's endpoints.
        public var debugDescription: String {
            var parts: [String] = []
            if let http3RelayEndpoint { parts.append("h3 \(http3RelayEndpoint.debugDescription)") }
            if let http2RelayEndpoint { parts.append("h2 \(http2RelayEndpoint.debugDescription)") }
            return "relay(" + parts.joined(separator: ", ") + ")"
        }
    }

    /// What kind of proxy this is, with its kind-specific settings.
    package enum Kind: Sendable {
        /// A chain of relays, first hop first.
        case relay(hops: [RelayHop])
        /// An Oblivious HTTP relay in front of a gateway.
        case obliviousHTTP(relay: RelayHop, relayResourcePath: String, gatewayKeyConfig: Data, matchDomains: [String])
        /// An HTTP/1.1 CONNECT proxy, over TLS when options are given.
        case httpCONNECT(proxy: NWEndpoint, tlsOptions: NWProtocolTLS.Options?)
        /// A SOCKSv5 proxy.
        case socksv5(proxy: NWEndpoint)
    }

    /// A user name and password for the proxy. Its textual and reflected forms show neither,
    /// so interpolating or dumping it cannot leak them into logs.
    package struct Credential: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// The user name.
        package var username: String
        /// The password.
        package var password: String

        /// Never the secrets themselves.
        package var description: String { "<credential redacted>" }
        /// Never the secrets themselves.
        package var debugDescription: String { description }
        /// No children, so `dump()` shows nothing secret.
        package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
    }

    private final class CredentialBox: Sendable {
        let credential = Lock<Credential?>(nil)
    }

    /// The proxy's kind and settings.
    package let kind: Kind

    private let credentialBox = CredentialBox()

    /// Whether connections may go direct when the proxy cannot be used. Defaults to false.
    public var allowFailover: Bool = false

    /// Domains whose connections do not use the proxy.
    public var excludedDomains: [String] = []

    /// When not empty, only connections to these domains use the proxy.
    public var matchDomains: [String] = []

    private init(kind: Kind, matchDomains: [String] = []) {
        self.kind = kind
        self.matchDomains = matchDomains
    }

    /// A proxy made of one or more relays, traversed in order.
    public init(relayHops: [ProxyConfiguration.RelayHop]) {
        self.init(kind: .relay(hops: relayHops))
    }

    /// A classic HTTP CONNECT proxy; with `tlsOptions`, the connection to the proxy uses TLS.
    public init(httpCONNECTProxy: NWEndpoint, tlsOptions: NWProtocolTLS.Options? = nil) {
        self.init(kind: .httpCONNECT(proxy: httpCONNECTProxy, tlsOptions: tlsOptions))
    }

    /// A SOCKSv5 proxy.
    public init(socksv5Proxy: NWEndpoint) {
        self.init(kind: .socksv5(proxy: socksv5Proxy))
    }

    /// An Oblivious HTTP configuration: requests for `matchDomains` are encrypted to the gateway
    /// described by `gatewayKeyConfig` and sent through `obliviousHTTPRelay` at
    /// `relayResourcePath`.
    public init(
        obliviousHTTPRelay: ProxyConfiguration.RelayHop,
        relayResourcePath: String,
        gatewayKeyConfig: Data,
        matchDomains: [String]
    ) {
        self.init(
            kind: .obliviousHTTP(
                relay: obliviousHTTPRelay, relayResourcePath: relayResourcePath,
                gatewayKeyConfig: gatewayKeyConfig, matchDomains: matchDomains),
            matchDomains: matchDomains)
    }

    /// Sets the user name and password used to authenticate to the proxy (shared by every copy
    /// of this configuration).
    public func applyCredential(username: String, password: String) {
        credentialBox.credential.withLock { $0 = Credential(username: username, password: password) }
    }

    /// The credential given to ``applyCredential(username:password:)``, if any.
    package var credential: Credential? {
        credentialBox.credential.withLock { $0 }
    }

    /// The kind of proxy and where it is; never includes credentials.
    public var debugDescription: String {
        var text: String
        switch kind {
        case .relay(let hops):
            text = "relays[" + hops.map(\.debugDescription).joined(separator: ", ") + "]"
        case .obliviousHTTP(let relay, let path, _, _):
            text = "oblivious HTTP via \(relay.debugDescription) at \(path)"
        case .httpCONNECT(let proxy, let tls):
            text = (tls == nil ? "HTTP CONNECT " : "HTTPS CONNECT ") + proxy.debugDescription
        case .socksv5(let proxy):
            text = "SOCKSv5 " + proxy.debugDescription
        }
        if allowFailover { text += ", failover allowed" }
        if !matchDomains.isEmpty { text += ", match: " + matchDomains.joined(separator: " ") }
        if !excludedDomains.isEmpty { text += ", excluded: " + excludedDomains.joined(separator: " ") }
        return text
    }
}
