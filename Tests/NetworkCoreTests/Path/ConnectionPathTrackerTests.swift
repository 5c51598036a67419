import NetworkCore
import NetworkSystem
import Testing

/// What a ready connection is told about its path, on the value type that decides it.
@Suite("Core.ConnectionPathTracker")
struct ConnectionPathTrackerTests {
    typealias T = PathEvaluatorTests
    static let wlan = T.interface("wlan0", 3, .wifi, addresses: [T.v4([10, 0, 0, 5], 24)])
    static let eth = T.interface("eth0", 2, .wiredEthernet, addresses: [T.v4([192, 0, 2, 10], 24)])

    @Test func theFirstSnapshotIsOnlyTheBaseline() {
        var tracker = ConnectionPathTracker(localAddress: [10, 0, 0, 5], overLoopback: false, requirements: PathRequirements())
        #expect(tracker.observe(PathInputs(interfaces: [T.loopback, Self.wlan], routes: [], hasNameServers: true)).isEmpty)
        #expect(tracker.last?.viable == true)
        #expect(tracker.last?.interface?.name == "wlan0")
    }

    @Test func interfaceDownThenBackIsViabilityAndPath() {
        var tracker = ConnectionPathTracker(localAddress: [10, 0, 0, 5], overLoopback: false, requirements: PathRequirements())
        _ = tracker.observe(PathInputs(interfaces: [Self.wlan], routes: [], hasNameServers: true))
        var down = Self.wlan
        down.isRunning = false
        let lost = tracker.observe(PathInputs(interfaces: [down], routes: [], hasNameServers: true))
        #expect(lost.contains(.viability(false)))
        #expect(lost.contains { if case .path(let o) = $0 { return !o.viable } else { return false } })
        let back = tracker.observe(PathInputs(interfaces: [Self.wlan], routes: [], hasNameServers: true))
        #expect(back.contains(.viability(true)))
        #expect(tracker.observe(PathInputs(interfaces: [Self.wlan], routes: [], hasNameServers: true)).isEmpty, "no change, no event")
    }

    @Test func aPreferredInterfaceIsABetterPath() {
        var tracker = ConnectionPathTracker(localAddress: [10, 0, 0, 5], overLoopback: false, requirements: PathRequirements())
        let wifiRoute = T.defaultRoute("wlan0", via: [10, 0, 0, 1], metric: 600)
        _ = tracker.observe(PathInputs(interfaces: [Self.wlan], routes: [wifiRoute], hasNameServers: true))
        let wired = tracker.observe(PathInputs(
            interfaces: [Self.eth, Self.wlan], routes: [T.defaultRoute("eth0", via: [192, 0, 2, 1], metric: 100), wifiRoute],
            hasNameServers: true))
        #expect(wired.contains(.betterPath(true)))
        #expect(!wired.contains(.viability(false)), "the connection's own interface is still fine")
        // Prohibited by the connection's rules: not better.
        var wiredOut = ConnectionPathTracker(localAddress: [10, 0, 0, 5], overLoopback: false, requirements: PathRequirements(prohibitedTypes: [.wiredEthernet]))
        _ = wiredOut.observe(PathInputs(interfaces: [Self.wlan], routes: [wifiRoute], hasNameServers: true))
        #expect(wiredOut.observe(PathInputs(
            interfaces: [Self.eth, Self.wlan], routes: [T.defaultRoute("eth0", via: [192, 0, 2, 1], metric: 100), wifiRoute],
            hasNameServers: true)).isEmpty)
    }

    @Test func aLoopbackConnectionNeverHasABetterPath() {
        var tracker = ConnectionPathTracker(localAddress: [127, 0, 0, 1], overLoopback: true, requirements: PathRequirements())
        _ = tracker.observe(PathInputs(interfaces: [T.loopback], routes: [], hasNameServers: true))
        #expect(tracker.observe(PathInputs(interfaces: [T.loopback, Self.eth], routes: [T.defaultRoute("eth0", via: [192, 0, 2, 1])], hasNameServers: true)).isEmpty)
    }

    @Test func aMovedConnectionReportsItsNewInterface() {
        var tracker = ConnectionPathTracker(localAddress: [10, 0, 0, 5], overLoopback: false, requirements: PathRequirements())
        var down = Self.wlan
        down.isRunning = false
        _ = tracker.observe(PathInputs(interfaces: [Self.wlan, Self.eth], routes: [], hasNameServers: true))
        let inputs = PathInputs(interfaces: [down, Self.eth], routes: [], hasNameServers: true)
        #expect(tracker.observe(inputs).contains(.viability(false)))
        // A QUIC connection moved to the wired address: the same snapshot now reads differently.
        tracker.move(to: [192, 0, 2, 10])
        let moved = tracker.observe(inputs)
        #expect(moved.contains(.viability(true)))
        #expect(moved.contains { if case .path(let o) = $0 { return o.interface?.name == "eth0" && o.viable } else { return false } })
        #expect(tracker.observe(inputs).isEmpty)
    }
}
