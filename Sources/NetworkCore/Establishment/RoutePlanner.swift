import Logging
import NIOCore
import NetworkDNS
import NetworkPAC

/// Step 2 of establishment: the routes to try (direct, or through a proxy), from the privacy
/// context's proxies, the environment, or a PAC file. The environment names a PAC file the way
/// libproxy does, with a `pac+` prefix on a proxy variable: `all_proxy=pac+file:///etc/x.pac`,
/// `https_proxy=pac+http://wpad/wpad.dat` (a plain path after `pac+` works too).
enum RoutePlanner {
    static func routes(
        for configuration: FlowConfiguration, on eventLoop: EventLoop, environment: ProxyEnvironment = .current()
    ) -> EventLoopFuture<[ProxyRoute]> {
        guard configuration.transport == .tcp else {
            return eventLoop.makeSucceededFuture([.direct])
        }
        var environment = environment
        if configuration.proxies.isEmpty, let source = pacSource(in: &environment, secure: configuration.tls != nil) {
            return pacRoutes(source, for: configuration, on: eventLoop)
        }
        let selected = ProxySelection.routes(
            to: configuration.target, transport: configuration.transport, secure: configuration.tls != nil,
            configured: configuration.proxies, environment: environment, preferNoProxies: configuration.preferNoProxies)
        return eventLoop.makeCompletedFuture(selected.mapError { $0 as any Error })
    }

    /// The PAC file a proxy variable names, if any; the variable is then left out of the
    /// environment the other rules see.
    static func pacSource(in environment: inout ProxyEnvironment, secure: Bool) -> PACSource? {
        let names = (secure ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy", "HTTP_PROXY"]) + ["all_proxy", "ALL_PROXY"]
        for name in names {
            guard let value = environment.variables[name], value.hasPrefix("pac+") else { continue }
            environment.variables[name] = nil
            let location = String(value.dropFirst(4))
            if location.hasPrefix("/") { return .file(path: location) }
            return .url(location)
        }
        return nil
    }

    /// Asks the PAC file about the target and turns its answer into routes, in its order.
    /// Choices this build cannot use (SOCKS4 proxies) are skipped; a script that
    /// fails, or leaves nothing usable, means direct (as browsers do).
    private static func pacRoutes(
        _ source: PACSource, for configuration: FlowConfiguration, on eventLoop: EventLoop
    ) -> EventLoopFuture<[ProxyRoute]> {
        guard let (host, port) = configuration.target.hostAndPort else { return eventLoop.makeSucceededFuture([.direct]) }
        // Only scheme, host and port: the path stays private (as Chrome does for https).
        let scheme = configuration.tls != nil ? "https" : "http"
        let authority = HostAuthority.authority(host, port: Int(port))
        let promise = eventLoop.makePromise(of: [ProxyRoute].self)
        Task {
            var routes: [ProxyRoute] = []
            do {
                let evaluator = try await PACEvaluatorCache.shared.evaluator(for: source, configuration: .engine)
                let choices = try await evaluator.evaluate(url: "\(scheme)://\(authority)/", host: host)
                for choice in choices {
                    switch choice {
                    case .direct:
                        routes.append(.direct)
                    case .httpConnect(let proxyHost, let proxyPort), .httpsConnect(let proxyHost, let proxyPort):
                        let overTLS: Bool
                        if case .httpsConnect = choice { overTLS = true } else { overTLS = false }
                        routes.append(.proxy(ProxyDescription(
                            kind: .httpCONNECT(tlsToProxy: overTLS), server: .hostPort(host: proxyHost, port: proxyPort, interfaceName: nil))))
                    case .socks5(let proxyHost, let proxyPort):
                        routes.append(.proxy(ProxyDescription(
                            kind: .socks5(proxyResolvesNames: true), server: .hostPort(host: proxyHost, port: proxyPort, interfaceName: nil))))
                    case .socks4:
                        continue
                    }
                }
            } catch {
                let reason = (error as? PACError)?.logDescription ?? "\(FlowError(error).logDescription)"
                NetworkLog.pac.debug("\(source.logDescription) for \(host): \(reason); going direct")
                routes = []
            }
            if routes.isEmpty { routes = [.direct] }
            if configuration.preferNoProxies, routes.contains(where: { $0 != .direct }) {
                routes = [.direct] + routes.filter { $0 != .direct }
            }
            promise.succeed(routes)
        }
        return promise.futureResult
    }
}
