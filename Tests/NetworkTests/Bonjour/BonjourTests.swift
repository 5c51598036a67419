import Foundation
import PeerSupport
import Testing

/// Bonjour over real multicast, always inside network namespaces this suite makes (no mDNS
/// may leave through this machine's real interfaces): each test starts this test binary again
/// inside a namespace (`NamespacedTestRun`) to run the tests of one role there. One at a time:
/// each child is a whole test process with its peers, and seven of them starting together with
/// the rest of the run stalled the machine for seconds (timing tests elsewhere failed in CI).
@Suite("Bonjour", .serialized)
struct BonjourTests {
    /// A namespace whose loopback carries multicast (IPv4: avahi and python-zeroconf do the
    /// same; IPv6 multicast over loopback does not work on Linux).
    static func loopbackNamespace() throws -> TestNamespace? {
        guard let namespace = TestNamespace.make() else { return nil }
        try namespace.run(namespace.ip, ["link", "set", "lo", "multicast", "on"])
        // With the source given: lo's only address has host scope, which the kernel does not pick
        // as the source of a multicast on its own (it would send from 0.0.0.0).
        try namespace.run(namespace.ip, ["route", "add", "224.0.0.0/4", "dev", "lo", "src", "127.0.0.1"])
        return namespace
    }

    /// A python with zeroconf and two new namespaces (the caller tears them down); nil when a
    /// peer or root is missing (failing under CI).
    static func twoNamespacesWithZeroconf() async throws -> (String, TestNamespace, TestNamespace)? {
        guard let python = try await PythonPeer.interpreter(package: "zeroconf", version: "0.154.0"),
            let a = TestNamespace.make()
        else { return nil }
        guard let b = TestNamespace.make() else {
            a.tearDown()
            return nil
        }
        return (python, a, b)
    }

    /// `zeroconf_peer.py` with `arguments` in `namespace`; the caller stops it.
    static func zeroconf(_ python: String, in namespace: TestNamespace, _ arguments: [String]) throws -> PeerProcess {
        try PeerProcess(namespace.ip, ["netns", "exec", namespace.name, python,
                                       PythonPeer.scripts.appendingPathComponent("zeroconf_peer.py").path] + arguments)
    }

    @Test("one process advertises, browses, renames on a conflict and says goodbye, over a namespace's loopback")
    func sameHost() async throws {
        guard let namespace = try Self.loopbackNamespace() else { return }
        defer { namespace.tearDown() }
        let outcome = try await NamespacedTestRun.run(
            filter: "BonjourSameHostTests", role: "same-host", in: namespace, hostname: "nwhost-a")
        #expect(outcome.passed, "\(outcome)")
        print(outcome.output.split(separator: "\n").filter { $0.hasPrefix("bonjour:") }.joined(separator: "\n"))
    }

    @Test("the 2025 API over a namespace's loopback: NetworkListener advertised with .bonjour, NetworkBrowser.run finishing with its endpoint, Coder over TLS to it")
    func concurrencyAPI() async throws {
        guard let namespace = try Self.loopbackNamespace() else { return }
        defer { namespace.tearDown() }
        let outcome = try await NamespacedTestRun.run(
            filter: "ConcurrencyBonjourTests", role: "concurrency-bonjour", in: namespace, hostname: "nwhost-c")
        #expect(outcome.passed, "\(outcome)")
        print(outcome.output.split(separator: "\n").filter { $0.hasPrefix("bonjour (2025 API):") }.joined(separator: "\n"))
    }

    @Test("across a veth pair: python-zeroconf finds our service (addresses, port, TXT) and its goodbye; we find python-zeroconf's with its TXT record; its host records under our host's name make ours \"nwhost-a-2\"")
    func acrossWithZeroconf() async throws {
        guard let (python, a, b) = try await Self.twoNamespacesWithZeroconf() else { return }
        defer { a.tearDown(); b.tearDown() }
        try a.link(addresses: ["10.77.0.1/24", "2001:db8:77::1/64"], to: b, otherAddresses: ["10.77.0.2/24", "2001:db8:77::2/64"])
        // python-zeroconf's service lives on a host it calls by our host's name: a conflict for
        // our host name, which we must rename (RFC 6762 §9), pointing our SRV records at the new one.
        let peer = try Self.zeroconf(python, in: b, [
            "--register", "Zeroconf Svc", "--type", "_nwtest._tcp", "--port", "4242", "--address", "10.77.0.2", "--host", "nwhost-a",
            "--txt", "k=v", "--txt", "flag", "--browse", "_nwtest._tcp", "--seconds", "60",
        ])
        defer { peer.stop() }
        try await peer.waitForOutput(containing: "registered Zeroconf Svc", timeout: 15)
        let done = FileManager.default.temporaryDirectory.appendingPathComponent("bonjour-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: done) }

        async let child = NamespacedTestRun.run(
            filter: "BonjourAcrossNamespacesTests", role: "across", in: a, hostname: "nwhost-a",
            values: ["TYPE": "_nwtest._tcp", "PEERS": "Zeroconf Svc=k=v;flag", "OUR_NAME": "Swift Svc", "DONE_FILE": done.path])
        var seen = ""
        do {
            try await peer.waitForOutput(containing: "found Swift Svc", timeout: 20)
            seen = String(decoding: peer.standardOutput, as: UTF8.self)
        } catch {
            Issue.record("python-zeroconf did not find our service: \(error); it said: \(String(decoding: peer.standardOutput, as: UTF8.self))")
        }
        // A second python-zeroconf, started once the names have settled, resolves from scratch.
        await pause(milliseconds: 3000)
        let fresh = try Self.zeroconf(python, in: b, ["--browse", "_nwtest._tcp", "--seconds", "20"])
        defer { fresh.stop() }
        try? await fresh.waitForOutput(containing: "found Swift Svc", timeout: 15)
        let freshSaw = String(decoding: fresh.standardOutput, as: UTF8.self)
        _ = FileManager.default.createFile(atPath: done.path, contents: Data())
        let outcome = try await child
        #expect(outcome.passed, "\(outcome)")
        let line = seen.split(separator: "\n").first { $0.hasPrefix("found Swift Svc") }.map(String.init) ?? ""
        #expect(line.contains("port="), "\(line)")
        #expect(line.contains("txt=swift=yes"), "our TXT in \(line)")
        let freshLine = freshSaw.split(separator: "\n").first { $0.hasPrefix("found Swift Svc") }.map(String.init) ?? ""
        print("bonjour: zeroconf resolved: \(freshLine)")
        #expect(freshLine.contains("server=nwhost-a-2.local."), "our renamed host in \(freshSaw)")
        #expect(freshLine.contains("10.77.0.1") && !freshLine.contains("10.77.0.2"), "our address only, in \(freshLine)")
        // Our goodbye: python-zeroconf drops the service.
        try await peer.waitForOutput(containing: "removed Swift Svc", timeout: 5)
    }

    @Test("the WWDC demo across two namespaces: a UDP camera advertised under the host's name is browsed, connected to by name and answers")
    func cameraDemo() async throws {
        guard let a = TestNamespace.make() else { return }
        defer { a.tearDown() }
        guard let b = TestNamespace.make() else { return }
        defer { b.tearDown() }
        try a.link(addresses: ["10.78.0.1/24", "2001:db8:78::1/64"], to: b, otherAddresses: ["10.78.0.2/24", "2001:db8:78::2/64"])
        let done = FileManager.default.temporaryDirectory.appendingPathComponent("bonjour-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: done) }
        async let camera = NamespacedTestRun.run(
            filter: "BonjourCameraDemoTests", role: "camera-listener", in: b, hostname: "nwcamera", values: ["DONE_FILE": done.path])
        let viewer = try await NamespacedTestRun.run(
            filter: "BonjourCameraDemoTests", role: "camera-browser", in: a, hostname: "nwviewer", values: ["CAMERA_HOST": "nwcamera"])
        _ = FileManager.default.createFile(atPath: done.path, contents: Data())
        let cameraOutcome = try await camera
        #expect(viewer.passed, "viewer: \(viewer)")
        #expect(cameraOutcome.passed, "camera: \(cameraOutcome)")
    }

    @Test("beside a running avahi-daemon (same namespace, port 5353 shared): avahi-browse sees our service, we see avahi-publish's, python-zeroconf across the veth sees both")
    func besideAvahi() async throws {
        guard let (python, a, b) = try await Self.twoNamespacesWithZeroconf() else { return }
        defer { a.tearDown(); b.tearDown() }
        try a.link(addresses: ["10.79.0.1/24", "2001:db8:79::1/64"], to: b, otherAddresses: ["10.79.0.2/24", "2001:db8:79::2/64"])
        guard let avahi = try await AvahiDaemon.start(in: a, hostName: "avahi-a") else { return }
        defer { avahi.stop() }
        let published = try avahi.tool("avahi-publish", ["-s", "Avahi Svc", "_nwtest._tcp", "5555", "a=1"])
        defer { published.stop() }
        try await published.waitForOutput(containing: "Established", timeout: 15)
        let zeroconf = try Self.zeroconf(python, in: b, [
            "--browse", "_nwtest._tcp", "--seconds", "60",
        ])
        defer { zeroconf.stop() }
        let done = FileManager.default.temporaryDirectory.appendingPathComponent("bonjour-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: done) }

        async let child = NamespacedTestRun.run(
            filter: "BonjourAcrossNamespacesTests", role: "across", in: a, hostname: "nwhost-a",
            values: ["TYPE": "_nwtest._tcp", "PEERS": "Avahi Svc=a=1", "OUR_NAME": "Swift Svc", "DONE_FILE": done.path])
        // avahi-browse (its cache dump, then resolution) until it lists ours resolved.
        var avahiSaw = ""
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let browse = try avahi.tool("avahi-browse", ["-rpt", "_nwtest._tcp"])
            _ = await browse.waitForExit(timeout: 10)
            avahiSaw = String(decoding: browse.standardOutput, as: UTF8.self)
            if avahiSaw.contains("=;") && avahiSaw.contains("Swift\\032Svc") { break }
            await pause(milliseconds: 200)
        }
        do {
            try await zeroconf.waitForOutput(containing: "found Swift Svc", timeout: 15)
            try await zeroconf.waitForOutput(containing: "found Avahi Svc", timeout: 5)
        } catch {
            Issue.record("python-zeroconf: \(error); it said: \(String(decoding: zeroconf.standardOutput, as: UTF8.self))")
        }
        _ = FileManager.default.createFile(atPath: done.path, contents: Data())
        let outcome = try await child
        #expect(outcome.passed, "\(outcome)")
        // `=;lo|vethX;IPv4;Swift\032Svc;_nwtest._tcp;local;nwhost-a.local;10.79.0.1;PORT;"swift=yes"`
        let ours = avahiSaw.split(separator: "\n").filter { $0.hasPrefix("=;") && $0.contains("Swift\\032Svc") }
        #expect(!ours.isEmpty, "avahi-browse said: \(avahiSaw)")
        print(ours.map { "bonjour: avahi-browse: \($0)" }.joined(separator: "\n"))
        #expect(ours.contains { $0.contains("\"swift=yes\"") && $0.contains("nwhost-a.local") }, "\(ours)")
        // avahi kept its name: no conflict with ours.
        #expect(!avahi.log.contains("conflict"), "avahi log: \(avahi.log)")
    }

    @Test("a browse domain served by dnsmasq (PTR, SRV, TXT, A) is browsed and connected to through the resolver")
    func unicastDomain() async throws {
        guard let dnsmasq = PeerProcess.executable("dnsmasq", package: "dnsmasq-base"), let namespace = TestNamespace.make() else { return }
        defer { namespace.tearDown() }
        try namespace.writeEtc("resolv.conf", "nameserver 127.0.0.1\n")
        // Lower case: dnsmasq lowercases the names it is configured with (we keep what arrives).
        let instance = "unicast svc._nwtest._tcp.example.test"
        let port = 47001
        _ = try namespace.start(dnsmasq, [
            "-k", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--user=root", "--pid-file=",
            "--listen-address=127.0.0.1", "--bind-interfaces", "--local=/example.test/", "--log-facility=/dev/null",
            "--ptr-record=_nwtest._tcp.example.test,\(instance)", "--srv-host=\(instance),server.example.test,\(port)",
            "--txt-record=\(instance),k=v,flag", "--host-record=server.example.test,127.0.0.1",
        ])
        try await namespace.waitUntilBound(port: 53, udp: true)
        let outcome = try await NamespacedTestRun.run(
            filter: "BonjourUnicastDomainTests", role: "unicast", in: namespace, hostname: "nwhost-u", values: ["PORT": "\(port)"])
        #expect(outcome.passed, "\(outcome)")
    }

    @Test("a browser sees an interface come (its services found) and go (their removal); an announcement from an off-link source is ignored while the same one from on-link is listed")
    func linkEventsAndOffLinkSources() async throws {
        guard let (python, a, b) = try await Self.twoNamespacesWithZeroconf() else { return }
        defer { a.tearDown(); b.tearDown() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bonjour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        async let child = NamespacedTestRun.run(
            filter: "BonjourLinkEventsTests", role: "link-events", in: a, hostname: "nwhost-a", values: ["DIR": directory.path])
        func marker(_ name: String) async -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                if FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path) { return true }
                await pause(milliseconds: 50)
            }
            return false
        }
        guard await marker("browsing") else {
            Issue.record("the browser never started: \(try await child)")
            return
        }
        let (mine, theirs) = try a.link(addresses: ["10.81.0.1/24"], to: b, otherAddresses: ["10.81.0.2/24"])
        // An address outside A's subnets, on B's end of the pair.
        try b.run(b.ip, ["addr", "add", "192.0.2.9/32", "dev", theirs])
        let zeroconf = try Self.zeroconf(python, in: b, [
            "--register", "Late Svc", "--type", "_nwtest._tcp", "--port", "4242", "--address", "10.81.0.2", "--seconds", "60",
        ])
        defer { zeroconf.stop() }
        try await zeroconf.waitForOutput(containing: "registered Late Svc", timeout: 15)
        let announce = PythonPeer.scripts.appendingPathComponent("mdns_announce.py").path
        for (source, instance) in [("192.0.2.9", "Offlink Svc"), ("10.81.0.2", "Onlink Svc")] {
            let sender = try PeerProcess(a.ip, ["netns", "exec", b.name, python, announce, source, instance, "_nwtest._tcp"])
            _ = await sender.waitForExit(timeout: 10)
            #expect(String(decoding: sender.standardOutput, as: UTF8.self).contains("sent \(instance)"))
        }
        if await marker("found") {
            try a.run(a.ip, ["link", "del", mine])
        }
        let outcome = try await child
        #expect(outcome.passed, "\(outcome)")
        print(outcome.output.split(separator: "\n").filter { $0.hasPrefix("bonjour:") }.joined(separator: "\n"))
    }

    @Test("a hostile host floods the link with 6000 services: bounded results and memory, and the stack still works")
    func flood() async throws {
        guard let (python, a, b) = try await Self.twoNamespacesWithZeroconf() else { return }
        defer { a.tearDown(); b.tearDown() }
        try a.link(addresses: ["10.82.0.1/24"], to: b, otherAddresses: ["10.82.0.2/24"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bonjour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        async let child = NamespacedTestRun.run(
            filter: "BonjourFloodTests", role: "flood", in: a, hostname: "nwhost-a", values: ["DIR": directory.path])
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("browsing").path), Date() < deadline {
            await pause(milliseconds: 50)
        }
        let flooder = try PeerProcess(a.ip, ["netns", "exec", b.name, python,
                                             PythonPeer.scripts.appendingPathComponent("mdns_flood.py").path, "10.82.0.2", "_nwflood._tcp", "6000"])
        _ = await flooder.waitForExit(timeout: 30)
        #expect(String(decoding: flooder.standardOutput, as: UTF8.self).contains("sent "))
        let outcome = try await child
        #expect(outcome.passed, "\(outcome)")
        print(outcome.output.split(separator: "\n").filter { $0.hasPrefix("bonjour:") }.joined(separator: "\n"))
    }
}
