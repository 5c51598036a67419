#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import NetworkCore

extension NWEndpoint {
    /// The endpoint for an address the engine reports (peer or local address).
    init?(_ address: FlowAddress) {
        switch address {
        case .ipv4(let bytes, let port):
            guard let ip = IPv4Address(Data(bytes)) else { return nil }
            self = .hostPort(host: .ipv4(ip), port: NWEndpoint.Port(rawValue: port) ?? .any)
        case .ipv6(let bytes, let port, let scope):
            let interface = scope == 0 ? nil : NWInterface(systemInterfaceIndex: Int(scope))
            guard let ip = IPv6Address(Data(bytes), interface) else { return nil }
            let port = NWEndpoint.Port(rawValue: port) ?? .any
            // A v4-mapped peer on a dual-stack socket is reported as the IPv4 address it is.
            if ip.isIPv4Mapped, let v4 = ip.asIPv4 {
                self = .hostPort(host: .ipv4(v4), port: port)
            } else {
                self = .hostPort(host: .ipv6(ip), port: port)
            }
        case .unix(let path):
            self = .unix(path: path)
        }
    }

    /// The endpoint for an engine target (a proxy the report names, for example).
    init?(flowTarget target: FlowTarget) {
        switch target {
        case .address:
            guard let address = target.flowAddress else { return nil }
            self.init(address)
        case .unix(let path):
            self = .unix(path: path)
        case .hostPort(let host, let port, _):
            guard let portValue = NWEndpoint.Port(rawValue: UInt16(clamping: port)) else { return nil }
            self = .hostPort(host: NWEndpoint.Host(host), port: portValue)
        }
    }

    /// The engine target for this endpoint, or the error a connection to it fails with.
    func flowTarget() -> Result<FlowTarget, FlowError> {
        switch self {
        case .hostPort(let host, let port):
            let portNumber = Int(port.rawValue)
            switch host {
            case .name(let name, let interface):
                return .success(.hostPort(host: name, port: portNumber, interfaceName: interface?.name))
            case .ipv4(let address):
                return .success(.hostPort(host: address.presentation, port: portNumber, interfaceName: nil))
            case .ipv6(let address):
                return .success(
                    .hostPort(host: address.presentation, port: portNumber, interfaceName: address.interface?.name))
            }
        case .unix(let path):
            return .success(.unix(path: path))
        case .url(let url):
            guard let host = url.host, !host.isEmpty else { return .failure(.posix(EINVAL)) }
            let defaultPorts = ["http": 80, "ws": 80, "https": 443, "wss": 443]
            guard let port = url.port ?? defaultPorts[url.scheme?.lowercased() ?? ""] else {
                return .failure(.posix(EINVAL))
            }
            let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            return .success(.hostPort(host: bare, port: port, interfaceName: nil))
        case .service(let name, let type, let domain, let interface):
            // The name is for logs; the connection's address lookup resolves the service
            // (`MDNSServiceLookup`, set by `NWConnection`), port included.
            return .success(.hostPort(host: "\(name).\(type).\(domain)", port: 0, interfaceName: interface?.name))
        case .opaque:
            return .failure(.posix(EINVAL))
        }
    }
}

extension IPv4Address {
    /// Dotted-quad text without the interface suffix.
    var presentation: String {
        rawValue.map(String.init).joined(separator: ".")
    }
}

extension IPv6Address {
    /// RFC 5952 text without the interface suffix.
    var presentation: String {
        var addr = in6_addr()
        let bytes = Array(rawValue)
        withUnsafeMutableBytes(of: &addr) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &addr, &buffer, socklen_t(buffer.count)) != nil else { return "::" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
