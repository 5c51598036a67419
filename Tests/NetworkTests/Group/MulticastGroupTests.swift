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

    @Test("NWMulticastGroup takes multicast addresses of one port (either family or both), and a source of every group's family; anything else throws EINVAL")
    func descriptorRules() throws {
        let port = NWEndpoint.Port(rawValue: Self.port)!
        let group = try NWMulticastGroup(
            for: [.hostPort(host: "239.81.0.1", port: port), .hostPort(host: "239.81.0.2", port: port)],
            from: .hostPort(host: "10.81.0.2", port: .any), disableUnicast: true)
        #expect(group.members.count == 2)
        #expect(group.sourceFilter == .hostPort(host: "10.81.0.2", port: .any))
        #expect(group.isUnicastDisabled)
        #expect(try NWMulticastGroup(for: [.hostPort(host: "ff15::81", port: port)]).isUnicastDisabled == false)
        #expect(try NWMulticastGroup(for: [.hostPort(host: "239.81.0.1", port: port), .hostPort(host: "ff15::81", port: port)]).members.count == 2)

        let invalid: [([NWEndpoint], NWEndpoint?)] = [
            ([], nil),
            ([.hostPort(host: "10.81.0.1", port: port)], nil),
            ([.hostPort(host: "239.81.0.1", port: port), .hostPort(host: "ff15::81", port: port)], .hostPort(host: "10.81.0.2", port: .any)),
            ([.hostPort(host: "239.81.0.1", port: port), .hostPort(host: "ff15::81", port: port)], .hostPort(host: "2001:db8::1", port: .any)),
            ([.hostPort(host: "239.81.0.1", port: port), .hostPort(host: "ff15::81", port: 9)], nil),
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

    @Test("across a veth pair with python's socket as the other side: join, receive with the sender, reply, send to the group, leave on cancel; two groups on one port; disableUnicast; source-specific; IPv6; per-message ECN and service class on the wire; a sender of every TOS byte; a flood from 2,000 sources; nwcat group")
    func acrossNamespaces() async throws {
        guard let python = PeerProcess.executable("python3", package: "python3"), let (a, b) = TestNamespace.makePair() else { return }
        defer { a.tearDown(); b.tearDown() }
        let (interfaceA, interfaceB) = try a.link(
            addresses: ["10.81.0.1/24", "2001:db8:81::1/64"], to: b,
            otherAddresses: ["10.81.0.2/24", "10.81.0.3/24", "10.81.0.4/24", "10.81.0.5/24", "10.81.0.6/24", "2001:db8:81::2/64"])
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
        // A hostile sender that sets every TOS byte in turn, to 239.81.0.3; one that floods
        // 239.81.0.4 from 2,000 source ports once the inside test says so; one that joins
        // 239.81.0.5 and reports the TOS byte of what it gets (our marked sends); one that
        // reports the traffic class of what reaches ff15::85.
        let tosser = try peer("tosser", ["--bind", "10.81.0.4", "--send", "239.81.0.3:\(port)", "--every-tos", "--interval", "0.005"])
        defer { tosser.stop() }
        let flooder = try peer("flooder", [
            "--bind", "10.81.0.5", "--send", "239.81.0.4:\(port)", "--interval", "3600", "--flood", "20000", "--sources", "2000",
            "--start-when", directory.appendingPathComponent("flood.go").path,
        ])
        defer { flooder.stop() }
        let reporter = try peer("reporter", [
            "--bind", "10.81.0.6", "--port", port, "--join", "239.81.0.5", "--bind-group", "--report-tos", "--send", "239.81.0.5:\(port)",
        ])
        defer { reporter.stop() }
        let reporter6 = try peer("reporter6", ["--bind", "2001:db8:81::2", "--port", port, "--join", "ff15::85", "--bind-group", "--report-tos"])
        defer { reporter6.stop() }
        // Every peer up before our side starts (seven pythons take a while on two cores); the
        // member and the reporter joined once their own multicast comes back to them.
        @Sendable func peerLog(_ name: String) -> String {
            (try? String(contentsOfFile: directory.appendingPathComponent("\(name).log").path, encoding: .utf8)) ?? ""
        }
        let awaited: [(String, String)] = [
            ("member", "10.81.0.2 \(port) from 10.81.0.2 "), ("reporter", "10.81.0.6 \(port) from 10.81.0.6 "), ("other", "ready "),
            ("member6", "ready "), ("tosser", "ready "), ("flooder", "ready "), ("reporter6", "ready "),
        ]
        try await withTimeout(seconds: 20, "the python peers ready") {
            while !awaited.allSatisfy({ peerLog($0.0).contains($0.1) }) { try await Task.sleep(for: .milliseconds(50)) }
        }

        let outcome = try await NamespacedTestRun.run(
            filter: "MulticastGroupInsideTests", role: "multicast", in: a, hostname: "nwmulticast",
            values: ["DIR": directory.path, "PORT": port])
        #expect(outcome.passed, "\(outcome)")
        print(outcome.output.split(separator: "\n").filter { $0.hasPrefix("multicast:") }.joined(separator: "\n"))

        // nwcat group in A: prints the reporter's datagrams with their sender, and sends its
        // standard input to the group marked CE and EF (46 << 2 | 3 = 187).
        guard let nwcat = builtNWCat() else { return }
        let tool = try ToolProcess(
            a.ip, ["netns", "exec", a.name, nwcat, "group", "239.81.0.5", port, "--ecn", "ce", "--dscp", "interactive-voice"],
            input: Data("hello from nwcat".utf8))
        defer { tool.stop() }
        try await tool.waitForStandardOutput(containing: "10.81.0.6:\(port): from 10.81.0.6 ")
        let reporterLog = directory.appendingPathComponent("reporter.log").path
        try await withTimeout(seconds: 10, "nwcat's datagram in the reporter's log, marked") {
            while !((try? String(contentsOfFile: reporterLog, encoding: .utf8)) ?? "").contains("10.81.0.1 \(port) hello from nwcat tos=187") {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
