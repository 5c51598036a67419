#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import NetworkCore

/// Route order and the DIRECT fallback, without sockets.
@Suite("Core.RouteSequence")
struct RouteSequenceTests {
    private let socks = ProxyRoute.proxy(ProxyDescription(
        kind: .socks5(proxyResolvesNames: true), server: .hostPort(host: "127.0.0.1", port: 1080, interfaceName: nil)))
    private let http = ProxyRoute.proxy(ProxyDescription(
        kind: .httpCONNECT(tlsToProxy: false), server: .hostPort(host: "127.0.0.1", port: 3128, interfaceName: nil)))
    private let refused = FlowError.posix(ECONNREFUSED)

    @Test func directOnlyByDefault() {
        let routes = RouteSequence()
        #expect(routes.routes == [.direct])
        #expect(routes.current == .direct)
        #expect(!routes.proxyConfigured)
        #expect(!routes.directMayJoin)
        #expect(RouteSequence([]).routes == [.direct])
    }

    @Test func walksTheListInOrder() {
        var routes = RouteSequence([socks, http])
        #expect(routes.proxyConfigured)
        #expect(routes.position == "1/2")
        #expect(routes.afterFailure(of: refused, directRace: .none) == .tryRoute(1))
        routes.select(1)
        #expect(routes.current == http)
        #expect(routes.position == "2/2")
        #expect(routes.afterFailure(of: refused, directRace: .none) == .fail)
    }

    @Test func directJoinsOnlyAProxyRouteWithDirectBehindIt() {
        var routes = RouteSequence([socks, http, .direct])
        #expect(routes.directMayJoin)
        routes.select(1)
        #expect(routes.directMayJoin)
        routes.select(2)
        #expect(!routes.directMayJoin, "DIRECT does not race itself")
        #expect(!RouteSequence([socks, http]).directMayJoin)
        #expect(!RouteSequence([.direct, socks]).directMayJoin)
    }

    @Test func directIsNotTriedTwice() {
        var routes = RouteSequence([socks, .direct, http])
        // Without a DIRECT race, DIRECT is simply next.
        #expect(routes.afterFailure(of: refused, directRace: .none) == .tryRoute(1))
        // With one scheduled or running, it is skipped.
        #expect(routes.afterFailure(of: refused, directRace: .scheduled) == .tryRoute(2))
        #expect(routes.afterFailure(of: refused, directRace: .running) == .tryRoute(2))
        routes.select(2)
        #expect(routes.afterFailure(of: refused, directRace: .none) == .fail)
    }

    @Test func lastProxyFailingHandsOverToDirect() {
        let routes = RouteSequence([socks, .direct])
        #expect(routes.afterFailure(of: refused, directRace: .scheduled) == .startDirectNow)
        #expect(routes.afterFailure(of: refused, directRace: .running) == .awaitDirect)
        #expect(routes.afterFailure(of: refused, directRace: .none) == .tryRoute(1))
    }

    @Test func tlsFailureEndsItAll() {
        let routes = RouteSequence([socks, http, .direct])
        #expect(routes.afterFailure(of: .tls(-9808), directRace: .none) == .fail)
        #expect(routes.afterFailure(of: .tls(-9808), directRace: .running) == .fail)
    }
}
