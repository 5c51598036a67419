import Foundation
import Network
import PeerSupport
import Testing

/// `NWConnectionGroup` with `NWMulticastGroup`: the descriptor's rules here, and real multicast
/// across a veth pair between two namespaces this suite makes (none of it leaves through this
/// machine's interfaces). Python's `socket` module is the other side (`multicast_peer.py`), our
/// side runs in a child process inside namespace A (`NamespacedTestRun`, role "multicast",
/// `MulticastGroupInsideTests`).
@Suite("Group.Multicast", .serialized)
struct MulticastGroupTests {
    /// The port every group of the test uses (the namespaces are the test's own).
    static let port: UInt16 = 47_081

    @Test("NWMulticastGroup takes multicast addresses of one family and one port, and a source of that family; anything else throws EINVAL")
    func descriptorRules() throws {
        let port = NWEndpoint.Port(rawValue: Self.port)!
        let group = try NWMulticastGroup(
            for: [.hostPort(host: "239.81.0.1", port: port), .hostPort(host: "239.81.0.2", port: port)],
            from: .hostPort(host: "10.81.0.2", port: .any), disableUnicast: true)
        #expect(group.members.count == 2)
        #expect(group.sourceFilter == .hostPort(host: "10.81.0.2", port: .any))
        #expect(group.isUnicastDisabled)
        #expect(try NWMulticastGroup(for: [.hostPort(host: "ff15::81", port: port)]).isUnicastDisabled == false)

        let invalid: [([NWEndpoint], NWEndpoint?)] = [
            ([], nil),
            ([.hostPort(host: "10.81.0.1", port: port)], nil),
            ([.hostPort(host: "239.81.0.1", port: port), .hostPort(host: "ff15::81", port: port)], nil),
            ([.hostPort(host: "239.81.0.1", port: port), .hostPort(host: "239.81.0.2", port: 9)], nil),
            ([.hostPort(host: "239.81.0.1", port: port)], .hostPort(host: "2001:db8::1", port: .any)),
            ([.hostPort(host: "example.com", port: port)], nil),
            ([.unix(path: "/tmp/x")], nil),
        ]
        for (members, source) in invalid {
            #expect(throws: NWError.posix(.EINVAL), "\(members) from \(String(describing: source))") {
                try NWMulticastGroup(for: members, from: source)
            }
        }
    }

    @Test("a multicast group over TCP fails with EPROTONOSUPPORT when started, then cancels")
    func notOverTCP() async throws {
        let group = NWConnectionGroup(
            with: try NWMulticastGroup(for: [.hostPort(host: "239.81.0.1", port: NWEndpoint.Port(rawValue: Self.port)!)]), using: .tcp)
        let states = Recorder<NWConnectionGroup.State>()
        group.stateUpdateHandler = { states.append($0) }
        group.start(queue: DispatchQueue(label: "multicast-tcp"))
        try await states.wait("failed", until: { $0.contains(.failed(.posix(.EPROTONOSUPPORT))) })
        group.cancel()
        try await states.wait("cancelled", until: { $0.last == .cancelled })
    }

    @Test("across a veth pair with python's socket as the other side: join, receive with the sender, reply, send to the group, leave on cancel; two groups on one port; disableUnicast; source-specific; IPv6")
    func acrossNamespaces() async throws {
        guard let python = PeerProcess.executable("python3", package: "python3"), let (a, b) = TestNamespace.makePair() else { return }
        defer { a.tearDown(); b.tearDown() }
        let (interfaceA, interfaceB) = try a.link(
            addresses: ["10.81.0.1/24", "2001:db8:81::1/64"], to: b,
            otherAddresses: ["10.81.0.2/24", "10.81.0.3/24", "2001:db8:81::2/64"])
        // IPv4 multicast follows the routing table; IPv6 has ff00::/8 on every interface already.
        try a.run(a.ip, ["route", "add", "224.0.0.0/4", "dev", interfaceA])
        try b.run(b.ip, ["route", "add", "224.0.0.0/4", "dev", interfaceB])

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("multicast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = PythonPeer.scripts.appendingPathComponent("multicast_peer.py").path
        let port = "\(Self.port)"
        func peer(_ name: String, _ arguments: [String]) throws -> PeerProcess {
            try b.start(python, [script, "--log", directory.appendingPathComponent("\(name).log").path] + arguments)
        }
        // One member that joins 239.81.0.1 on the port (to see what the group sends) and sends to both groups,
        // to our unicast address and to the source-specific group; one other sender, from .3, to
        // that source-specific group only; one IPv6 member.
        let member = try peer("member", [
            "--bind", "10.81.0.2", "--port", port, "--join", "239.81.0.1", "--send", "239.81.0.1:\(port)", "--send", "239.81.0.2:\(port)",
            "--send", "10.81.0.1:\(port)", "--send", "232.81.0.1:\(port)",
        ])
        defer { member.stop() }
        let other = try peer("other", ["--bind", "10.81.0.3", "--send", "232.81.0.1:\(port)"])
        defer { other.stop() }
        let member6 = try peer("member6", ["--bind", "2001:db8:81::2", "--join", "ff15::81", "--send", "[ff15::81]:\(port)"])
        defer { member6.stop() }

        let outcome = try await NamespacedTestRun.run(
            filter: "MulticastGroupInsideTests", role: "multicast", in: a, hostname: "nwmulticast",
            values: ["DIR": directory.path, "PORT": port])
        #expect(outcome.passed, "\(outcome)")
        print(outcome.output.split(separator: "\n").filter { $0.hasPrefix("multicast:") }.joined(separator: "\n"))
    }
}
