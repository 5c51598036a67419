import Foundation

/// Something a connection can be made to or a listener can be bound to: a host and port, a
/// Bonjour service, a Unix-domain socket path, a URL, or an opaque endpoint.
public enum NWEndpoint: CustomDebugStringConvertible, Equatable, Hashable, Sendable {
    /// A host (a name or a literal address) and a port.
    case hostPort(host: NWEndpoint.Host, port: NWEndpoint.Port)
    /// A Bonjour (DNS-SD) service instance: instance name, service type such as `_http._tcp`,
    /// domain such as `local.`, and optionally the interface it was found on. (Boxed: inline,
    /// its three strings would make every endpoint, and so every connection, larger.)
    indirect case service(name: String, type: String, domain: String, interface: NWInterface?)
    /// A Unix-domain socket at a file-system path.
    case unix(path: String)
    /// A URL; the host and port to connect to are derived from it.
    case url(URL)
    /// An endpoint that the other cases cannot express.
    case opaque(nw_endpoint_t)

    // TODO(bonjour issue): `var txtRecord: NWTXTRecord?` belongs here once browse results carry one.

    /// The interface the endpoint is scoped to: the host's scope for ``hostPort(host:port:)``,
    /// the service's interface for ``service(name:type:domain:interface:)``, nil otherwise.
    public var interface: NWInterface? {
        switch self {
        case .hostPort(let host, _): return host.interface
        case .service(_, _, _, let interface): return interface
        case .unix, .url: return nil
        case .opaque(let endpoint): return endpoint.underlyingEndpoint?.interface
        }
    }

    /// The TXT record of a Bonjour service endpoint, as the newest browse result for that
    /// service carried it (from a browse with ``NWBrowser/Descriptor/bonjourWithTXTRecord(type:domain:)``);
    /// nil for other endpoints, and for a service no running browser has a record of.
    public var txtRecord: NWTXTRecord? {
        ServiceTXTRecords.record(for: self)
    }

    /// A readable form of the endpoint.
    ///
    /// - host and port: `host:port`; with an IPv6 address the separator is `.` (as the
    ///   framework prints it, for example `::1.8080`), so the colons of the address stay
    ///   unambiguous;
    /// - service: `name.type.domain`, with a `.` inserted between type and domain when the type
    ///   does not already end with one, and `%ifname` when scoped;
    /// - unix: the path; url: the absolute URL string; opaque: the object's description.
    public var debugDescription: String {
        switch self {
        case .hostPort(let host, let port):
            if case .ipv6 = host {
                return "\(host.debugDescription).\(port.debugDescription)"
            }
            return "\(host.debugDescription):\(port.debugDescription)"
        case .service(let name, let type, let domain, let interface):
            var text = name.isEmpty ? type : "\(name).\(type)"
            if !domain.isEmpty {
                if !text.hasSuffix(".") { text += "." }
                text += domain
            }
            return appendingScope(text, interface)
        case .unix(let path):
            return path
        case .url(let url):
            return url.absoluteString
        case .opaque(let endpoint):
            return endpoint.debugDescription
        }
    }
}
