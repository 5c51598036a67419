import Dispatch
import Foundation
import Network
import PeerSupport
import Testing

/// `NWPathMonitor` in this process (the machine's own configuration) and, through `nwcat
/// monitor`, in a network namespace whose links and routes the test changes.
@Suite("Path.Monitor", .serialized)
struct PathMonitorTests {
    @Test("the current path arrives right after start; currentPath matches it; nothing after cancel")
    func firstUpdateAndCancel() async throws {
        // The machine's own configuration changes while other suites add and remove links, so
        // the strict checks use the loopback path, which they never touch.
        let monitor = NWPathMonitor()
        let paths = Recorder<NWPath>()
        monitor.pathUpdateHandler = { paths.append($0) }
        let queue = DispatchQueue(label: "monitor")
        monitor.start(queue: queue)
        _ = try await paths.wait(count: 1, "the first path", timeout: 5)
        #expect(monitor.queue === queue)

        let loopback = NWPathMonitor(requiredInterfaceType: .loopback)
        let loopPaths = Recorder<NWPath>()
        loopback.pathUpdateHandler = { loopPaths.append($0) }
        loopback.start(queue: queue)
        let loop = try await loopPaths.wait(count: 1, "the loopback path", timeout: 5)
        #expect(loop[0].status == .satisfied)
        #expect(loop[0].availableInterfaces.map(\.type) == [.loopback])
        #expect(loop[0].usesInterfaceType(.loopback))
        #expect(loop[0].localEndpoint == nil && loop[0].remoteEndpoint == nil)
        #expect(loopback.currentPath == loop[0])

        monitor.cancel()
        let delivered = paths.count
        monitor.start(queue: queue)  // a cancelled monitor stays cancelled
        try await Task.sleep(for: .milliseconds(200))
        #expect(paths.count == delivered, "updates after cancel")
        loopback.cancel()
    }

    @Test("for await over a monitor yields the current path first")
    func asyncSequence() async throws {
        let monitor = NWPathMonitor(requiredInterfaceType: .loopback)
        var iterator = monitor.makeAsyncIterator()
        let path = await iterator.next()
        #expect(path?.status == .satisfied)
        monitor.cancel()
        #expect(await iterator.next() == nil, "iteration ends when the monitor is cancelled")
    }

    @Test("a started monitor lives until cancel, without any reference kept")
    func startedMonitorOutlivesItsReferences() async throws {
        // As in the pattern real code uses (a monitor created inside an AsyncStream's closure),
        // nothing keeps a reference to the monitor once it has started.
        let paths = Recorder<NWPath>()
        weak var weakMonitor: NWPathMonitor?
        do {
            let monitor = NWPathMonitor(requiredInterfaceType: .loopback)
            weakMonitor = monitor
            monitor.pathUpdateHandler = { paths.append($0) }
            monitor.start(queue: DispatchQueue(label: "dropped-monitor"))
        }
        let first = try await paths.wait(count: 1, "the dropped monitor's first path", timeout: 5)
        #expect(first[0].status == .satisfied)
        // Cancelled, it is released once the last delivery on its queue has run.
        do {
            let monitor = try #require(weakMonitor, "a started monitor was released without cancel()")
            monitor.cancel()
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while weakMonitor != nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(weakMonitor == nil, "a cancelled monitor stays alive")
    }

    @Test("in a namespace: routes and links going away and coming back are reported as they happen")
    func namespaceChanges() async throws {
        guard let namespace = TestNamespace.make(), let nwcat = builtNWCat() else { return }
        defer { namespace.tearDown() }
        let (inside, _) = try namespace.link(
            addresses: ["10.77.0.1/24", "2001:db8:77::1/64"], to: nil, otherAddresses: ["10.77.0.2/24", "2001:db8:77::2/64"])
        let ip = namespace.ip
        func change(_ arguments: [String]) throws { try ShortTool.check(ip, ["-n", namespace.name] + arguments) }
        try change(["route", "add", "default", "via", "10.77.0.2"])
        try change(["-6", "route", "add", "default", "via", "2001:db8:77::2"])

        let monitor = try PeerProcess(ip, ["netns", "exec", namespace.name, nwcat, "monitor"])
        defer { monitor.stop() }
        // Only lines printed after the previous wait count: the first line already names every
        // gateway, so a search of the whole output would find a later state's text in it.
        var seen = 0
        func waitForLine(containing text: String) async throws -> String {
            let (index, line) = try await monitor.waitForLine(containing: text, skipping: seen)
            seen = index + 1
            return line
        }

        let first = try await waitForLine(containing: "satisfied")
        #expect(first.hasPrefix("satisfied interfaces=\(inside):wiredEthernet "), "\(first)")
        #expect(first.contains("ipv4=yes ipv6=yes"), "\(first)")
        #expect(first.contains("gateways=10.77.0.2,2001:db8:77::2"), "\(first)")

        try change(["route", "del", "default"])
        let noIPv4Router = try await waitForLine(containing: "gateways=2001:db8:77::2 ")
        #expect(noIPv4Router.hasPrefix("satisfied"), "a subnet without a router still carries connections: \(noIPv4Router)")

        try change(["link", "set", inside, "down"])
        let down = try await waitForLine(containing: "unsatisfied")
        #expect(down == "unsatisfied interfaces=- ipv4=no ipv6=no dns=no gateways=- expensive=no constrained=no")

        try change(["link", "set", inside, "up"])
        try change(["route", "add", "default", "via", "10.77.0.2"])
        let back = try await waitForLine(containing: "gateways=10.77.0.2")
        #expect(back.hasPrefix("satisfied interfaces=\(inside):wiredEthernet"), "\(back)")
        // One line per change, no repeats of an unchanged path.
        let all = monitor.wholeLines
        #expect(zip(all, all.dropFirst()).allSatisfy { $0 != $1 }, "\(all)")
    }

    @Test("a waiting connection tries again when the network comes back (link up), without restart()")
    func waitingRetriesOnPathChange() async throws {
        guard let namespace = TestNamespace.make(), let nwcat = builtNWCat() else { return }
        defer { namespace.tearDown() }
        let (inside, _) = try namespace.link(addresses: ["10.76.0.1/24"], to: nil, otherAddresses: ["10.76.0.2/24"])
        let server = try RawSocket()
        try server.bind(port: 0, anyAddress: true)
        try server.listen()
        defer { server.close() }
        try ShortTool.check(namespace.ip, ["-n", namespace.name, "link", "set", inside, "down"])

        // nwcat's diagnostics (-v) on the captured output too.
        let client = try PeerProcess(
            namespace.ip,
            ["netns", "exec", namespace.name, "/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", nwcat, "connect", "-v", "--wait-for-network",
             "10.76.0.2", "\(server.localPort)"],
            input: Data("after the link came back\n".utf8))
        defer { client.stop() }
        try await client.waitForOutput(containing: "waiting")
        try await Task.sleep(for: .milliseconds(300))
        let before = String(decoding: client.standardOutput, as: UTF8.self)
        #expect(!before.contains("ready"), "no network, yet: \(before)")

        try ShortTool.check(namespace.ip, ["-n", namespace.name, "link", "set", inside, "up"])
        try await client.waitForOutput(containing: "ready", timeout: 10)
        let peer = try await offload { try server.accept(timeout: 5) }
        let (bytes, _) = try await offload { peer.receiveUntilEnd(timeout: 5) }
        #expect(String(decoding: bytes, as: UTF8.self) == "after the link came back\n")
    }

    @Test("a ready connection hears when its interface goes down and back (viability, path) and when a preferred one appears (better path)")
    func viabilityAndBetterPath() async throws {
        guard let namespace = TestNamespace.make(), let nwcat = builtNWCat() else { return }
        defer { namespace.tearDown() }
        let ip = namespace.ip
        let (inside, _) = try namespace.link(addresses: ["10.74.0.1/24"], to: nil, otherAddresses: ["10.74.0.2/24"])
        let server = try RawSocket()
        try server.bind(port: 0, anyAddress: true)
        try server.listen()
        defer { server.close() }

        let client = try PeerProcess(
            ip,
            ["netns", "exec", namespace.name, "/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", nwcat, "connect", "-v",
             "10.74.0.2", "\(server.localPort)"],
            input: Data())
        defer { client.stop() }
        let peer = try await offload { try server.accept(timeout: 10) }
        defer { peer.close() }
        try await client.waitForOutput(containing: "path: satisfied interfaces=\(inside):wiredEthernet")
        // Viable once ready, as on Apple platforms.
        try await client.waitForOutput(containing: "viability: true")
        func output() -> String { String(decoding: client.standardOutput, as: UTF8.self) }

        // The connection's interface goes down: not viable; back up: viable again.
        try ShortTool.check(ip, ["-n", namespace.name, "link", "set", inside, "down"])
        try await client.waitForOutput(containing: "viability: false")
        #expect(output().contains("path: unsatisfied"), "\(output())")
        try ShortTool.check(ip, ["-n", namespace.name, "link", "set", inside, "up"])
        try await client.waitForOutput(containing: "viability: true", occurrences: 2)

        // A second link with a default route: a new connection would prefer it.
        let (second, _) = try namespace.link(addresses: ["10.73.0.1/24"], to: nil, otherAddresses: ["10.73.0.2/24"], second: true)
        try ShortTool.check(ip, ["-n", namespace.name, "route", "add", "default", "via", "10.73.0.2", "dev", second])
        try await client.waitForOutput(containing: "better path: true")
        try ShortTool.check(ip, ["-n", namespace.name, "route", "del", "default"])
        try await client.waitForOutput(containing: "better path: false")
        #expect(!output().contains("failed"), "\(output())")
    }
}
