/// Proxy URLs as people put them in `http_proxy` and friends: `[scheme://][user[:password]@]host[:port][/]`.
///
/// Schemes and default ports:
/// - none or `http://`: HTTP CONNECT, port 80;
/// - `https://`: HTTP CONNECT over TLS to the proxy, port 443 (the proxy's certificate is
///   checked against the system trust store and its host name);
/// - `socks5://`: SOCKS5, names resolved here, port 1080;
/// - `socks5h://` and `socks://`: SOCKS5, names resolved by the proxy, port 1080. curl reads
///   `socks://` as SOCKS4, which this engine does not speak; taking it as SOCKS5 with remote
///   resolution is what most other tools do and leaks no DNS queries;
/// - `socks4://`, `socks4a://`: recognised, unsupported.
///
/// The user name and password are percent-decoded. Errors never quote the URL, since it may
/// hold a password.
package enum ProxyURL {
    package static func parse(_ text: String) -> Result<ProxyDescription, ProxyError> {
        var rest = Substring(text.trimmingASCIIWhitespace())
        guard !rest.isEmpty else { return .failure(.invalidProxyURL("empty")) }
        var scheme = "http"
        if let separator = rest.firstRange(of: "://") {
            scheme = rest[..<separator.lowerBound].lowercased()
            rest = rest[separator.upperBound...]
        }
        let kind: ProxyDescription.Kind
        let defaultPort: Int
        switch scheme {
        case "http": (kind, defaultPort) = (.httpCONNECT(tlsToProxy: false), 80)
        case "https": (kind, defaultPort) = (.httpCONNECT(tlsToProxy: true), 443)
        case "socks5": (kind, defaultPort) = (.socks5(proxyResolvesNames: false), 1080)
        case "socks5h", "socks": (kind, defaultPort) = (.socks5(proxyResolvesNames: true), 1080)
        case "socks4", "socks4a": return .failure(.unsupported("SOCKS4 proxies"))
        default: return .failure(.invalidProxyURL("unknown scheme"))
        }
        // The authority ends where a path, query or fragment starts; those mean nothing here.
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            rest = rest[..<end]
        }
        var credential: ProxyCredential?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let user: Substring
            let password: Substring
            if let colon = userInfo.firstIndex(of: ":") {
                user = userInfo[..<colon]
                password = userInfo[userInfo.index(after: colon)...]
            } else {
                user = userInfo
                password = ""
            }
            guard let username = percentDecoded(user), let secret = percentDecoded(password) else {
                return .failure(.invalidProxyURL("bad percent-encoding in the user information"))
            }
            if !username.isEmpty { credential = ProxyCredential(username: username, password: secret) }
        }
        let host: String
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return .failure(.invalidProxyURL("unclosed '['")) }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return .failure(.invalidProxyURL("text after ']'")) }
                portText = after.dropFirst()
            }
            guard let bytes = IPLiteral.bytes(host), bytes.count == 16 else {
                return .failure(.invalidProxyURL("brackets around something other than an IPv6 address"))
            }
        } else {
            let colons = rest.filter { $0 == ":" }.count
            guard colons <= 1 else { return .failure(.invalidProxyURL("IPv6 addresses must be in brackets")) }
            if let colon = rest.firstIndex(of: ":") {
                host = String(rest[..<colon])
                portText = rest[rest.index(after: colon)...]
            } else {
                host = String(rest)
            }
            guard IPLiteral.bytes(host) != nil || ProxyTunnel.Destination.isHostName(host) else {
                return .failure(.invalidProxyURL("bad host"))
            }
        }
        var port = defaultPort
        if let portText, !portText.isEmpty {
            guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), portText.count <= 5, let value = Int(portText),
                (1...65535).contains(value)
            else {
                return .failure(.invalidProxyURL("bad port"))
            }
            port = value
        }
        return .success(ProxyDescription(
            kind: kind, server: .hostPort(host: host, port: port, interfaceName: nil), credential: credential))
    }

    /// `%XX` sequences decoded as UTF-8; nil when a sequence is malformed or the result is not
    /// valid UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and line ends.
    func trimmingASCIIWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        let text = Substring(self)
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return text[first...last]
    }
}
