import ArgumentParser
import Foundation
import Network

/// `--proxy` and `--pac` for `connect`: the proxy goes in through the public API (a privacy
/// context's `ProxyConfiguration`), the PAC file through the environment convention the
/// engine reads (`all_proxy=pac+/path/to/file.pac`).
struct ProxyOptions: ParsableArguments {
    @Option(help: "Go through this proxy: socks5://[user:pass@]host[:port] (the proxy resolves names) or http://[user:pass@]host[:port] (HTTP CONNECT).")
    var proxy: String?

    @Option(help: "Choose proxies with this PAC file (path or http:// URL).")
    var pac: String?

    func validate() throws {
        if proxy != nil && pac != nil { throw ValidationError("--proxy and --pac exclude each other") }
        if let proxy { _ = try Self.configuration(from: proxy) }
    }

    /// Applies the options: a privacy context on `parameters`, or the PAC environment.
    func apply(to parameters: NWParameters) throws {
        if let proxy {
            let context = NWParameters.PrivacyContext(description: "nwcat --proxy")
            context.proxyConfigurations = [try Self.configuration(from: proxy)]
            parameters.setPrivacyContext(context)
        }
        if let pac {
            let location = pac.contains("://") ? pac : URL(fileURLWithPath: pac).standardizedFileURL.path
            for name in ["all_proxy", "http_proxy", "https_proxy"] { setenv(name, "pac+" + location, 1) }
        }
    }

    /// A `ProxyConfiguration` for a proxy URL; credentials in the URL are applied, never printed.
    static func configuration(from text: String) throws -> ProxyConfiguration {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw ValidationError("--proxy takes a URL such as socks5://127.0.0.1:1080 or http://proxy:3128")
        }
        let endpointHost = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        // A port the URL parser accepted may still be out of range (70000): refuse it rather
        // than trap in the conversion.
        func port(default value: Int) throws -> NWEndpoint.Port {
            guard let number = UInt16(exactly: url.port ?? value), number != 0, let port = NWEndpoint.Port(rawValue: number) else {
                throw ValidationError("--proxy: the port must be 1...65535")
            }
            return port
        }
        let configuration: ProxyConfiguration
        switch scheme {
        case "socks5", "socks5h", "socks":
            let port = try port(default: 1080)
            configuration = ProxyConfiguration(socksv5Proxy: .hostPort(host: NWEndpoint.Host(endpointHost), port: port))
        case "http":
            let port = try port(default: 80)
            configuration = ProxyConfiguration(httpCONNECTProxy: .hostPort(host: NWEndpoint.Host(endpointHost), port: port))
        default:
            throw ValidationError("--proxy: unsupported scheme \(scheme) (use socks5:// or http://)")
        }
        if let user = url.user {
            configuration.applyCredential(username: user.removingPercentEncoding ?? user, password: (url.password ?? "").removingPercentEncoding ?? "")
        }
        return configuration
    }
}
