import Foundation
import PeerSupport
import Testing

/// Bonjour over real multicast, always inside network namespaces this suite makes (no mDNS
/// may leave through this machine's real interfaces): each test starts this test binary again
/// inside a namespace (`NamespacedTestRun`) to run the tests of one role there.
@Suite("Bonjour")
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

    @Test("one process advertises, browses, renames on a conflict and says goodbye, over a namespace's loopback")
    func sameHost() async throws {
        guard let namespace = try Self.loopbackNamespace() else { return }
        defer { namespace.tearDown() }
        let outcome = try await NamespacedTestRun.run(
            filter: "BonjourSameHostTests", role: "same-host", in: namespace, hostname: "nwhost-a")
        #expect(outcome.passed, "\(outcome)")
        print(outcome.output.split(separator: "\n").filter { $0.hasPrefix("bonjour:") }.joined(separator: "\n"))
    }

    @Test("across a veth pair: python-zeroconf finds our service (addresses, port, TXT) and its goodbye; we find python-zeroconf's with its TXT record")
    func acrossWithZeroconf() async throws {
        guard let python = try await PythonPeer.interpreter(package: "zeroconf", version: "0.154.0"),
            let a = TestNamespace.make()
        else { return }
        defer { a.tearDown() }
        guard let b = TestNamespace.make() else { return }
        defer { b.tearDown() }
        try a.link(addresses: ["10.77.0.1/24", "2001:db8:77::1/64"], to: b, otherAddresses: ["10.77.0.2/24", "2001:db8:77::2/64"])
        let peer = try PeerProcess(a.ip, [
            "netns", "exec", b.name, python, PythonPeer.scripts.appendingPathComponent("zeroconf_peer.py").path,
            "--register", "Zeroconf Svc", "--type", "_nwtest._tcp", "--port", "4242", "--address", "10.77.0.2",
            "--txt", "k=v", "--txt", "flag", "--browse", "_nwtest._tcp", "--seconds", "60",
        ])
        defer { peer.stop() }
        try await peer.waitForOutput(containing: "registered Zeroconf Svc", timeout: 15)
        let done = FileManager.default.temporaryDirectory.appendingPathComponent("bonjour-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: done) }

        async let child = NamespacedTestRun.run(
            filter: "BonjourAcrossNamespacesTests", role: "across", in: a, hostname: "nwhost-a",
            values: ["TYPE": "_nwtest._tcp", "PEER_NAME": "Zeroconf Svc", "PEER_TXT": "k=v;flag", "OUR_NAME": "Swift Svc",
                     "DONE_FILE": done.path])
        var seen = ""
        do {
            try await peer.waitForOutput(containing: "found Swift Svc", timeout: 20)
            seen = String(decoding: peer.standardOutput, as: UTF8.self)
        } catch {
            Issue.record("python-zeroconf did not find our service: \(error); it said: \(String(decoding: peer.standardOutput, as: UTF8.self))")
        }
        _ = FileManager.default.createFile(atPath: done.path, contents: Data())
        let outcome = try await child
        #expect(outcome.passed, "\(outcome)")
        let line = seen.split(separator: "\n").first { $0.hasPrefix("found Swift Svc") }.map(String.init) ?? ""
        #expect(line.contains("port="), "\(line)")
        #expect(line.contains("10.77.0.1"), "our IPv4 address in \(line)")
        #expect(line.contains("txt=swift=yes"), "our TXT in \(line)")
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
}
