/// How a host and port are written together in URLs, HTTP request lines and Host headers, and
/// in `HOST:PORT` proxy strings: an IPv6 literal goes in brackets, or its colons would run into
/// the port's (RFC 3986 §3.2.2).
package enum HostAuthority {
    /// `host`, bracketed when it is an IPv6 literal (the only kind of host with a colon).
    package static func host(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }

    /// `host:port`, the host bracketed when it is an IPv6 literal.
    package static func authority(_ host: String, port: Int) -> String {
        "\(self.host(host)):\(port)"
    }
}
