import Foundation

extension URL {
    /// The request target of a WebSocket upgrade to this URL: its path ("/" when empty) and query,
    /// percent-encoded as written.
    var webSocketRequestTarget: String {
        let components = URLComponents(url: self, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? ""
        let target = path.isEmpty ? "/" : path
        guard let query = components?.percentEncodedQuery else { return target }
        return "\(target)?\(query)"
    }

    /// The `Host` header for this URL: its host, and its port when the URL names one.
    var webSocketHostHeader: String? {
        guard let components = URLComponents(url: self, resolvingAgainstBaseURL: false),
            let host = components.percentEncodedHost, !host.isEmpty
        else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port = components.port else { return bracketed }
        return "\(bracketed):\(port)"
    }

    /// Whether the scheme asks for TLS (`wss`, `https`).
    var isSecureWebSocket: Bool {
        ["wss", "https"].contains(scheme?.lowercased() ?? "")
    }
}
