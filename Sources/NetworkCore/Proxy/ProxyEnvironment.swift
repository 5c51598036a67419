#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Proxy settings from environment variables, the convention curl, wget, Go and Python share.
///
/// Variables, each read in lower case first: a non-empty lower-case value wins over the
/// upper-case one, an empty value counts as unset.
/// - `https_proxy` / `HTTPS_PROXY`: for connections that run TLS over the tunnel;
/// - `http_proxy` / `HTTP_PROXY`: for the others. `HTTP_PROXY` is ignored when
///   `REQUEST_METHOD` is set: under CGI a client can set it with a `Proxy:` header ("httpoxy");
/// - `all_proxy` / `ALL_PROXY`: when the one above is unset;
/// - `no_proxy` / `NO_PROXY`: destinations that go direct (``NoProxyList``).
///
/// Loopback destinations (`localhost`, names under `.localhost`, 127.0.0.0/8, `::1`) always go
/// direct: a proxy elsewhere cannot reach this machine's loopback, and Go and Apple's system
/// proxy settings treat them the same way.
package struct ProxyEnvironment: Sendable, Equatable {
    /// The variables, by name.
    package var variables: [String: String]

    /// The names read, for ``current()``.
    static let names = [
        "https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
        "REQUEST_METHOD",
    ]

    package init(_ variables: [String: String]) {
        self.variables = variables
    }

    /// This process's variables, read now. `getenv` rather than Foundation: NetworkCore does
    /// without Foundation.
    package static func current() -> ProxyEnvironment {
        var variables: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        return ProxyEnvironment(variables)
    }

    /// The value of a variable under its lower-case name, else its upper-case one.
    func value(_ lowercaseName: String) -> String? {
        if let value = variables[lowercaseName], !value.isEmpty { return value }
        let upper = lowercaseName.uppercased()
        if upper == "HTTP_PROXY", let method = variables["REQUEST_METHOD"], !method.isEmpty { return nil }
        if let value = variables[upper], !value.isEmpty { return value }
        return nil
    }

    /// The proxy for a connection to `host` (a name or address literal) on `port`: nil to go
    /// direct, or an error when the variable that applies holds an unusable URL (the connection
    /// then fails rather than quietly bypassing a proxy the user asked for, as curl does).
    /// `secure` says whether the connection runs TLS over the tunnel.
    package func proxy(forHost host: String, port: Int, secure: Bool) -> Result<ProxyDescription?, ProxyError> {
        if Self.isLoopback(host) { return .success(nil) }
        if let noProxy = value("no_proxy"), NoProxyList(noProxy).bypasses(host: host, port: port) {
            return .success(nil)
        }
        guard let url = value(secure ? "https_proxy" : "http_proxy") ?? value("all_proxy") else { return .success(nil) }
        return ProxyURL.parse(url).map { $0 }
    }

    static func isLoopback(_ host: String) -> Bool {
        if let bytes = IPLiteral.bytes(host) {
            if bytes.count == 4 { return bytes[0] == 127 }
            return bytes == [UInt8](repeating: 0, count: 15) + [1]
        }
        return DomainName.isWithin(host, domain: "localhost")
    }
}
