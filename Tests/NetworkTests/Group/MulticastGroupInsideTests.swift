import Foundation
import Network
import PeerSupport
import Testing

/// Our side of `MulticastGroupTests.acrossNamespaces`, inside namespace A (10.81.0.1,
/// 2001:db8:81::1): python peers in B send from 10.81.0.2 to 239.81.0.1, 239.81.0.2, 232.81.0.1
/// and to 10.81.0.1 itself, from 10.81.0.3 to 232.81.0.1, and from 2001:db8:81::2 to ff15::81,
/// every 50 ms, all to one port; each peer logs what it receives to `DIR/<name>.log`.
@Suite(
    "Group.MulticastInside", .serialized,
    .enabled(if: NamespacedTestRun.role == "multicast", "runs inside a network namespace, started by Group.Multicast"))
struct MulticastGroupInsideTests {
    /// One received message: its sender, where it was sent, its content.
    struct Received: Sendable, CustomStringConvertible {
        let from: String
        let fromPort: UInt16
        let to: String
        let text: String
        var description: String { "\(text) from \(from):\(fromPort) to \(to)" }
    }

    static var port: NWEndpoint.Port { NWEndpoint.Port(NamespacedTestRun.value("PORT") ?? "") ?? .any }

    static func host(_ endpoint: NWEndpoint?) -> String {
        guard case .hostPort(let host, _)? = endpoint else { return "" }
        switch host {
        case .ipv4(let address): return "\(address)"
        case .ipv6(let address): return "\(address)"
        case .name(let name, _): return name
        }
    }

    /// A started group of `addresses` with a recorder of what it receives; ready when returned.
    static func join(
        _ addresses: [String], from source: String? = nil, disableUnicast: Bool = false,
        onMessage: (@Sendable (NWConnectionGroup.Message) -> Void)? = nil
    ) async throws -> (NWConnectionGroup, Recorder<Received>, Recorder<NWConnectionGroup.State>) {
        let descriptor = try NWMulticastGroup(
            for: addresses.map { .hostPort(host: NWEndpoint.Host($0), port: port) },
            from: source.map { .hostPort(host: NWEndpoint.Host($0), port: .any) }, disableUnicast: disableUnicast)
        let parameters = NWParameters.udp
        parameters.allowLocalEndpointReuse = true
        let group = NWConnectionGroup(with: descriptor, using: parameters)
        let received = Recorder<Received>()
        let states = Recorder<NWConnectionGroup.State>()
        group.setReceiveHandler(maximumMessageSize: 1500, rejectOversizedMessages: true) { message, content, isComplete in
            guard isComplete, let content, case .hostPort(_, let port)? = message.remoteEndpoint else { return }
            received.append(Received(
                from: host(message.remoteEndpoint), fromPort: port.rawValue, to: host(message.localEndpoint),
                text: String(decoding: content, as: UTF8.self)))
            onMessage?(message)
        }
        group.stateUpdateHandler = { states.append($0) }
        group.start(queue: DispatchQueue(label: "multicast-group"))
        try await states.wait("ready", until: { $0.contains(.ready) })
        return (group, received, states)
    }

    static func cancel(_ group: NWConnectionGroup, _ states: Recorder<NWConnectionGroup.State>) async throws {
        group.cancel()
        try await states.wait("cancelled", until: { $0.last == .cancelled })
    }

    /// The lines of a python peer's log.
    static func log(_ name: String) -> [String] {
        let path = URL(fileURLWithPath: NamespacedTestRun.value("DIR") ?? "/nonexistent").appendingPathComponent("\(name).log").path
        return ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    static func waitForLog(_ name: String, _ what: String, until predicate: @escaping @Sendable ([String]) -> Bool) async throws {
        do {
            try await withTimeout(seconds: 10, "\(name).log: \(what)") {
                while !predicate(log(name)) { try await Task.sleep(for: .milliseconds(50)) }
            }
        } catch {
            Issue.record("\(error); the log's last lines: \(log(name).suffix(8)); lines from 10.81.0.1: \(log(name).filter { $0.hasPrefix("10.81.0.1 ") })")
        }
    }

    /// Whether this namespace's sockets are members of the IPv4 group `address` (/proc/net/igmp
    /// lists each membership as the group's bytes in host order, in hex).
    static func isMember(_ address: String) -> Bool {
        let parts = address.split(separator: ".").compactMap { UInt8($0) }
        let hex = parts.reversed().map { String(format: "%02X", $0) }.joined()
        let table = (try? String(contentsOfFile: "/proc/net/igmp", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(hex) }
    }

    @Test("join 239.81.0.1: each datagram arrives with its sender and where it was sent (the group, or our unicast address); a reply reaches the sender; a send without endpoint reaches the group; cancel leaves it")
    func joinReplySendLeave() async throws {
        let replied = Recorder<Bool>()
        let (group, received, states) = try await Self.join(["239.81.0.1"]) { message in
            guard replied.count == 0, Self.host(message.remoteEndpoint) == "10.81.0.2" else { return }
            replied.append(true)
            message.reply(content: Data("reply to the member".utf8))
        }
        #expect(Self.isMember("239.81.0.1"))
        let seen = try await received.wait("datagrams to the group and to our address") { values in
            values.contains { $0.to == "239.81.0.1" } && values.contains { $0.to == "10.81.0.1" }
        }
        for message in seen {
            #expect(message.from == "10.81.0.2" && message.fromPort != 0, "\(message)")
            #expect(message.text.hasPrefix("from 10.81.0.2 "), "\(message)")
            // Never 239.81.0.2 (not joined) nor 232.81.0.1.
            #expect(["239.81.0.1", "10.81.0.1"].contains(message.to), "\(message)")
        }
        let sent = Recorder<NWError?>()
        group.send(content: Data("to the group".utf8)) { sent.append($0) }
        #expect(try await sent.wait(count: 1, "the send's completion") == [nil])
        let port = Self.port.rawValue
        try await Self.waitForLog("member", "our reply and our group send, from 10.81.0.1:\(port)") { lines in
            lines.contains("10.81.0.1 \(port) reply to the member") && lines.contains("10.81.0.1 \(port) to the group")
        }
        try await Self.cancel(group, states)
        #expect(!Self.isMember("239.81.0.1"), "the socket left the group")
        print("multicast: \(seen.count) datagrams, replied and sent to the group, left on cancel")
    }

    @Test("two groups on one port: datagrams to either arrive, each with its group as the local endpoint")
    func twoGroupsOnOnePort() async throws {
        let (group, received, states) = try await Self.join(["239.81.0.1", "239.81.0.2"])
        try await received.wait("datagrams to both groups") { values in
            values.contains { $0.to == "239.81.0.1" } && values.contains { $0.to == "239.81.0.2" }
        }
        #expect(Self.isMember("239.81.0.1") && Self.isMember("239.81.0.2"))
        try await Self.cancel(group, states)
    }

    @Test("disableUnicast: the datagrams sent to our own address are dropped, those sent to the group arrive")
    func disableUnicast() async throws {
        let (group, received, states) = try await Self.join(["239.81.0.1"], disableUnicast: true)
        // The member sends to the group and to our address every 50 ms: 20 of the first mean
        // about 20 of the second came too.
        let values = try await received.wait("20 datagrams to the group") { $0.filter { $0.to == "239.81.0.1" }.count >= 20 }
        #expect(values.allSatisfy { $0.to == "239.81.0.1" }, "\(values.filter { $0.to != "239.81.0.1" })")
        try await Self.cancel(group, states)
    }

    @Test("source-specific: joined from 10.81.0.2, the group gets only that sender's datagrams; any-source, it gets 10.81.0.3's too")
    func sourceSpecific() async throws {
        // Control: both senders reach 232.81.0.1 when any source may.
        let (open, openReceived, openStates) = try await Self.join(["232.81.0.1"])
        try await openReceived.wait("both senders") { values in
            values.contains { $0.from == "10.81.0.2" } && values.contains { $0.from == "10.81.0.3" }
        }
        try await Self.cancel(open, openStates)

        let (group, received, states) = try await Self.join(["232.81.0.1"], from: "10.81.0.2")
        // (The member's unicast datagrams to our address arrive too: the socket has the port.)
        let values = try await received.wait("20 datagrams to the group") { $0.filter { $0.to == "232.81.0.1" }.count >= 20 }
        #expect(values.allSatisfy { $0.from == "10.81.0.2" }, "\(values.filter { $0.from != "10.81.0.2" })")
        try await Self.cancel(group, states)
    }

    @Test("maximumMessageSize: a larger datagram is cut to it and marked incomplete, or dropped when rejectOversizedMessages")
    func oversizedMessages() async throws {
        // The member's datagrams ("from 10.81.0.2 N") are 16 bytes and more.
        for rejects in [false, true] {
            let group = NWConnectionGroup(
                with: try NWMulticastGroup(for: [.hostPort(host: "239.81.0.1", port: Self.port)]), using: .udp)
            let received = Recorder<(Int, Bool)>()
            let states = Recorder<NWConnectionGroup.State>()
            group.setReceiveHandler(maximumMessageSize: 8, rejectOversizedMessages: rejects) { _, content, isComplete in
                received.append((content?.count ?? 0, isComplete))
            }
            group.stateUpdateHandler = { states.append($0) }
            group.start(queue: DispatchQueue(label: "multicast-oversized"))
            try await states.wait("ready", until: { $0.contains(.ready) })
            if rejects {
                // 20 of the member's datagrams go by in a second: none may arrive.
                try await Task.sleep(for: .seconds(1))
                #expect(received.count == 0, "\(received.values)")
            } else {
                let values = try await received.wait(count: 5, "cut datagrams")
                #expect(values.allSatisfy { $0 == (8, false) }, "\(values)")
            }
            try await Self.cancel(group, states)
        }
    }

    @Test("both families on one socket: joined 239.81.0.1, ff15::81 and ff15::85, each family's datagrams arrive with their sender and group, a reply reaches a sender of each, a send without endpoint reaches a member of each (marked), cancel leaves")
    func bothFamilies() async throws {
        // (The handler runs on the group's serial queue: one reply per family.)
        let repliedTo = Recorder<Bool>()
        let (group, received, states) = try await Self.join(["239.81.0.1", "ff15::81", "ff15::85"]) { message in
            let from = Self.host(message.remoteEndpoint)
            guard from == "10.81.0.2" || from == "2001:db8:81::2" else { return }
            let isIPv6 = from.contains(":")
            guard !repliedTo.values.contains(isIPv6) else { return }
            repliedTo.append(isIPv6)
            message.reply(content: Data("reply to \(isIPv6 ? "IPv6" : "IPv4") on one socket".utf8))
        }
        #expect(Self.isMember("239.81.0.1"))
        let seen = try await received.wait("datagrams to the IPv4 and the IPv6 group") { values in
            values.contains { $0.to == "239.81.0.1" } && values.contains { $0.to == "ff15::81" }
        }
        for message in seen {
            let fromMember = message.from == "10.81.0.2" && ["239.81.0.1", "10.81.0.1"].contains(message.to)
            let fromMember6 = message.from == "2001:db8:81::2" && message.to == "ff15::81"
            #expect(fromMember || fromMember6, "\(message)")
        }
        let port = Self.port.rawValue
        try await Self.waitForLog("member", "our reply over IPv4") { $0.contains("10.81.0.1 \(port) reply to IPv4 on one socket") }
        try await Self.waitForLog("member6", "our reply over IPv6") { $0.contains("2001:db8:81::1 \(port) reply to IPv6 on one socket") }
        try await Self.send("to both families", on: group, as: Self.marked(.ce))
        try await Self.waitForLog("member", "our send to the group") { $0.contains("10.81.0.1 \(port) to both families") }
        let tos = try await Self.reportedTOS("reporter6", "to both families")
        #expect(tos == 3, "TOS \(String(describing: tos)) at ff15::85, expected CE (3)")
        try await Self.cancel(group, states)
        #expect(!Self.isMember("239.81.0.1"), "the socket left the IPv4 group")
        print("multicast: both families on one socket, \(seen.count) datagrams, replied to each, sent to both")
    }

    @Test("IPv6: joined ff15::81, the datagrams of 2001:db8:81::2 arrive and a reply reaches it")
    func ipv6() async throws {
        let replied = Recorder<Bool>()
        let (group, received, states) = try await Self.join(["ff15::81"]) { message in
            guard replied.count == 0 else { return }
            replied.append(true)
            message.reply(content: Data("reply over IPv6".utf8))
        }
        let values = try await received.wait(count: 3, "datagrams to ff15::81")
        #expect(values.allSatisfy { $0.from == "2001:db8:81::2" && $0.to == "ff15::81" }, "\(values)")
        let port = Self.port.rawValue
        try await Self.waitForLog("member6", "our reply") { $0.contains("2001:db8:81::1 \(port) reply over IPv6") }
        try await Self.cancel(group, states)
    }
}
