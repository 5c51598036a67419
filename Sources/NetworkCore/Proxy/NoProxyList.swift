/// The `no_proxy` list: destinations that go direct although a proxy is configured.
///
/// Entries are separated by commas or whitespace and compared without regard to case:
/// - `*` alone: nothing uses the proxy;
/// - `example.com`, `.example.com`, `*.example.com`: that domain and every name under it
///   (the three spellings mean the same, as in curl);
/// - `192.0.2.7`, `2001:db8::1`, `[2001:db8::1]`: that address, when the destination is given
///   as an address;
/// - `10.0.0.0/8`, `fd00::/8`: addresses in that network;
/// - any of the above (except CIDR) with `:port` (IPv6 in brackets): only for that port.
///
/// Names are never resolved to match address entries: whether a name goes direct must not
/// depend on a DNS answer (and `socks5h` exists precisely to keep names from local DNS).
/// Entries that cannot be parsed are ignored, as curl and Go ignore them.
package struct NoProxyList: Sendable, Equatable {
    enum Entry: Sendable, Equatable {
        case everything
        case domain(String, port: Int?)
        case address([UInt8], port: Int?)
        case network([UInt8], prefixLength: Int)
    }

    let entries: [Entry]

    package init(_ text: String) {
        let tokens = text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" || $0 == "\n" })
        entries = tokens.compactMap(Self.entry)
    }

    package var isEmpty: Bool { entries.isEmpty }

    private static func entry(_ token: Substring) -> Entry? {
        let text = token.trimmingASCIIWhitespace()
        if text == "*" { return .everything }
        if let slash = text.firstIndex(of: "/") {
            let bits = text[text.index(after: slash)...]
            guard let network = IPLiteral.bytes(text[..<slash]), bits.allSatisfy({ $0.isASCII && $0.isNumber }),
                let prefixLength = Int(bits), prefixLength <= network.count * 8
            else { return nil }
            return .network(network, prefixLength: prefixLength)
        }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), let bytes = IPLiteral.bytes(text[text.index(after: text.startIndex)..<close])
            else { return nil }
            let after = text[text.index(after: close)...]
            if after.isEmpty { return .address(bytes, port: nil) }
            guard after.hasPrefix(":"), let port = port(after.dropFirst()) else { return nil }
            return .address(bytes, port: port)
        }
        if let bytes = IPLiteral.bytes(text) { return .address(bytes, port: nil) }
        var host = text
        var entryPort: Int?
        if let colon = text.lastIndex(of: ":") {
            guard let port = port(text[text.index(after: colon)...]) else { return nil }
            host = text[..<colon]
            entryPort = port
        }
        if let bytes = IPLiteral.bytes(host) { return .address(bytes, port: entryPort) }
        let name = DomainName.normalized(host)
        guard !name.isEmpty, name != "." else { return nil }
        return .domain(name, port: entryPort)
    }

    private static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(text),
            (1...65535).contains(value)
        else { return nil }
        return value
    }

    /// Whether a connection to `host` (a name or an address literal) on `port` goes direct.
    package func bypasses(host: String, port: Int) -> Bool {
        let address = IPLiteral.bytes(host)
        for entry in entries {
            switch entry {
            case .everything:
                return true
            case .domain(let domain, let entryPort):
                if address == nil, entryPort == nil || entryPort == port, DomainName.isWithin(host, domain: domain) {
                    return true
                }
            case .address(let bytes, let entryPort):
                if address == bytes, entryPort == nil || entryPort == port { return true }
            case .network(let network, let prefixLength):
                if let address, IPLiteral.isWithin(address, network: network, prefixLength: prefixLength) { return true }
            }
        }
        return false
    }
}
