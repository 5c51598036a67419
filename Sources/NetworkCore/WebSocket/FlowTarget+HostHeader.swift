extension FlowTarget {
    /// The target as an HTTP `Host` header: the host (IPv6 literals in brackets) and the port.
    var hostHeader: String {
        guard let (host, port) = hostAndPort else { return "localhost" }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
