import NetworkCore
import NetworkSystem
import Testing

/// The path rules, on the value type that applies them.
@Suite("Core.PathEvaluator")
struct PathEvaluatorTests {
    static func interface(
        _ name: String, _ index: Int, _ type: SystemInterfaceType, up: Bool = true, running: Bool = true,
        expensive: Bool = false, addresses: [SystemAddress]
    ) -> SystemInterface {
        SystemInterface(
            name: name, index: index, type: type, isUp: up, isRunning: running, supportsMulticast: true,
            isExpensive: expensive, addresses: addresses)
    }

    static let loopback = interface("lo", 1, .loopback, addresses: [v4([127, 0, 0, 1], 8), v6([0, 0, 0, 0, 0, 0, 0, 1], 128)])
    static func v4(_ bytes: [UInt8], _ prefix: Int) -> SystemAddress { SystemAddress(family: .inet, bytes: bytes, prefixLength: prefix) }
    static func v6(_ words: [UInt16], _ prefix: Int) -> SystemAddress {
        SystemAddress(family: .inet6, bytes: words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }, prefixLength: prefix)
    }
    static func defaultRoute(_ name: String, via gateway: [UInt8], metric: UInt32 = 0) -> SystemRoute {
        SystemRoute(family: .inet, interfaceName: name, destination: [0, 0, 0, 0], prefixLength: 0, gateway: gateway, metric: metric)
    }

    @Test func onlyLoopbackIsUnsatisfiedUnlessLoopbackIsRequired() {
        let inputs = PathInputs(interfaces: [Self.loopback], routes: [], hasNameServers: true)
        #expect(PathEvaluator.evaluate(inputs) == .unsatisfied)
        let loop = PathEvaluator.evaluate(inputs, PathRequirements(requiredType: .loopback))
        #expect(loop.status == .satisfied)
        #expect(loop.interfaces.map(\.name) == ["lo"])
    }

    @Test func anEthernetLinkWithADefaultRouteIsSatisfied() {
        let eth = Self.interface("eth0", 2, .wiredEthernet, addresses: [Self.v4([192, 0, 2, 10], 24)])
        let inputs = PathInputs(
            interfaces: [Self.loopback, eth], routes: [Self.defaultRoute("eth0", via: [192, 0, 2, 1])], hasNameServers: true)
        let path = PathEvaluator.evaluate(inputs)
        #expect(path.status == .satisfied)
        #expect(path.interfaces.map(\.name) == ["eth0"])
        #expect(path.supportsIPv4 && !path.supportsIPv6 && path.supportsDNS)
        #expect(path.gateways.map(\.gateway) == [[192, 0, 2, 1]])
    }

    @Test func linkDownOrWithoutCarrierOrOnlyLinkLocalIsUnusable() {
        let linkLocal = [Self.v4([169, 254, 1, 2], 16), Self.v6([0xfe80, 0, 0, 0, 0, 0, 0, 1], 64)]
        for eth in [
            Self.interface("eth0", 2, .wiredEthernet, up: false, addresses: [Self.v4([192, 0, 2, 10], 24)]),
            Self.interface("eth0", 2, .wiredEthernet, running: false, addresses: [Self.v4([192, 0, 2, 10], 24)]),
            Self.interface("eth0", 2, .wiredEthernet, addresses: linkLocal),
        ] {
            let inputs = PathInputs(interfaces: [Self.loopback, eth], routes: [Self.defaultRoute("eth0", via: [192, 0, 2, 1])], hasNameServers: true)
            #expect(PathEvaluator.evaluate(inputs) == .unsatisfied, "\(eth)")
        }
    }

    @Test func aSubnetWithoutRouterStillCarriesConnections() {
        let eth = Self.interface("eth0", 2, .wiredEthernet, addresses: [Self.v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 5], 64)])
        let path = PathEvaluator.evaluate(PathInputs(interfaces: [eth], routes: [], hasNameServers: false))
        #expect(path.status == .satisfied)
        #expect(path.supportsIPv6 && !path.supportsIPv4 && !path.supportsDNS)
        #expect(path.gateways.isEmpty)
    }

    @Test func interfacesAreOrderedByRouteMetricThenType() {
        let wifi = Self.interface("wlan0", 3, .wifi, addresses: [Self.v4([10, 0, 0, 5], 24)])
        let cell = Self.interface("wwan0", 4, .cellular, expensive: true, addresses: [Self.v4([100, 64, 0, 5], 24)])
        let eth = Self.interface("eth0", 2, .wiredEthernet, addresses: [Self.v4([192, 0, 2, 10], 24)])
        let routes = [Self.defaultRoute("wwan0", via: [100, 64, 0, 1], metric: 700), Self.defaultRoute("wlan0", via: [10, 0, 0, 1], metric: 600)]
        let path = PathEvaluator.evaluate(PathInputs(interfaces: [Self.loopback, eth, wifi, cell], routes: routes, hasNameServers: true))
        #expect(path.interfaces.map(\.name) == ["wlan0", "wwan0", "eth0"])
        #expect(path.gateways.map(\.gateway) == [[10, 0, 0, 1], [100, 64, 0, 1]])
        #expect(!path.isExpensive)

        // Only cellular left: the path is expensive.
        let onlyCell = PathEvaluator.evaluate(
            PathInputs(interfaces: [Self.loopback, cell], routes: routes, hasNameServers: true))
        #expect(onlyCell.isExpensive)
        // Prohibiting cellular leaves nothing.
        #expect(PathEvaluator.evaluate(
            PathInputs(interfaces: [Self.loopback, cell], routes: routes, hasNameServers: true),
            PathRequirements(prohibitedTypes: [.cellular])) == .unsatisfied)
        // Requiring wifi keeps only wlan0.
        #expect(PathEvaluator.evaluate(
            PathInputs(interfaces: [Self.loopback, eth, wifi, cell], routes: routes, hasNameServers: true),
            PathRequirements(requiredType: .wifi)).interfaces.map(\.name) == ["wlan0"])
    }
}

/// `/proc/net/route` and `/proc/net/ipv6_route` as the kernel writes them.
@Suite("Core.RouteTable")
struct RouteTableTests {
    @Test func parsesIPv4() {
        let text = """
            Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
            eth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0
            eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
            eth1\t00000000\t0100000A\t0002\t0\t0\t0\t00000000\t0\t0\t0
            """
        let routes = RouteTable.parseIPv4(text)
        #expect(routes.count == 2, "the route that is not up is left out: \(routes)")
        #expect(routes[0] == SystemRoute(family: .inet, interfaceName: "eth0", destination: [0, 0, 0, 0], prefixLength: 0, gateway: [192, 0, 2, 1], metric: 100))
        #expect(routes[1].isDefault == false && routes[1].prefixLength == 24 && routes[1].gateway == nil)
    }

    @Test func parsesIPv6AndSkipsRejectRoutes() {
        let text = """
            20010db8000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
            00000000000000000000000000000000 00 00000000000000000000000000000000 00 20010db8000000000000000000000001 00000400 00000003 00000000 00000003     eth0
            00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
            """
        let routes = RouteTable.parseIPv6(text)
        #expect(routes.count == 2)
        #expect(routes[1].isDefault && routes[1].metric == 0x400)
        #expect(routes[1].gateway == [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])
    }
}
