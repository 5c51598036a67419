import Foundation
import Network
import PeerSupport
import Synchronization
import Testing

/// What the wire sees of a group's messages and what a group makes of hostile input: markings
/// sent per message (reported by python peers in B with `--report-tos`), a sender of every TOS
/// byte (10.81.0.4 to 239.81.0.3) and a flood from 2,000 source ports (10.81.0.5 to 239.81.0.4).
extension MulticastGroupInsideTests {
    /// A message whose IP metadata asks for `ecn` and `serviceClass`.
    static func marked(_ ecn: NWProtocolIP.ECN, _ serviceClass: NWParameters.ServiceClass = .bestEffort) -> NWConnectionGroup.Message {
        let ip = NWProtocolIP.Metadata()
        ip.ecn = ecn
        ip.serviceClass = serviceClass
        return NWConnectionGroup.Message(identifier: "marked", metadata: [ip])
    }

    /// Sends `text` to the whole group as `message`, and waits for the completion.
    static func send(_ text: String, on group: NWConnectionGroup, as message: NWConnectionGroup.Message) async throws {
        let sent = Recorder<NWError?>()
        group.send(content: Data(text.utf8), message: message) { sent.append($0) }
        #expect(try await sent.wait(count: 1, "the completion of \(text)") == [nil], "\(text)")
    }

    /// The TOS byte `peer` reported for the datagram whose payload is `text`.
    static func reportedTOS(_ peer: String, _ text: String) async throws -> Int? {
        try await waitForLog(peer, "\(text) with its TOS byte") { $0.contains { $0.contains(" \(text) tos=") } }
        let line = log(peer).first { $0.contains(" \(text) tos=") }
        return line.flatMap { $0.split(separator: "=").last.flatMap { Int($0) } }
    }

    @Test("per-message metadata reaches the wire: ECN alone, ECN with a message's service class, ECN with the parameters' class (its DSCP kept), over IPv4 and IPv6")
    func markingsOnTheWire() async throws {
        let plain = NWParameters.udp
        plain.allowLocalEndpointReuse = true
        let signaling = NWParameters.udp
        signaling.allowLocalEndpointReuse = true
        signaling.serviceClass = .signaling
        // (DSCP << 2 | ECN: EF 46, CS3 24, AF41 34; ECT(1) 1, ECT(0) 2, CE 3.)
        let cases: [(group: String, parameters: NWParameters, message: NWConnectionGroup.Message, text: String, tos: Int, peer: String)] = [
            ("239.81.0.5", plain, .default, "plain", 0, "reporter"),
            ("239.81.0.5", plain, Self.marked(.ce), "ce alone", 3, "reporter"),
            ("239.81.0.5", plain, Self.marked(.ect1, .interactiveVoice), "ect1 and voice", 46 << 2 | 1, "reporter"),
            ("239.81.0.5", signaling, .default, "the parameters' class", 24 << 2, "reporter"),
            ("239.81.0.5", signaling, Self.marked(.ect0), "ect0 with the parameters' class", 24 << 2 | 2, "reporter"),
            ("239.81.0.5", signaling, Self.marked(.ect0, .interactiveVideo), "ect0 and video over the parameters' class", 34 << 2 | 2, "reporter"),
            ("ff15::85", plain, Self.marked(.ect1, .interactiveVoice), "ipv6 ect1 and voice", 46 << 2 | 1, "reporter6"),
            ("ff15::85", signaling, Self.marked(.ce), "ipv6 ce with the parameters' class", 24 << 2 | 3, "reporter6"),
        ]
        for item in cases {
            let group = NWConnectionGroup(
                with: try NWMulticastGroup(for: [.hostPort(host: NWEndpoint.Host(item.group), port: Self.port)]), using: item.parameters)
            let states = Recorder<NWConnectionGroup.State>()
            group.stateUpdateHandler = { states.append($0) }
            group.start(queue: DispatchQueue(label: "multicast-marked"))
            try await states.wait("ready", until: { $0.contains(.ready) })
            try await Self.send(item.text, on: group, as: item.message)
            let tos = try await Self.reportedTOS(item.peer, item.text)
            #expect(tos == item.tos, "\(item.text): TOS \(String(describing: tos)), expected \(item.tos)")
            try await Self.cancel(group, states)
        }
        print("multicast: \(cases.count) marked sends carried their TOS byte")
    }

    @Test("a sender of every TOS byte: each datagram arrives with the ECN codepoint of its low two bits, and nothing else changes")
    func everyTOSByte() async throws {
        let seen = Mutex<[Int: NWProtocolIP.ECN]>([:])
        let mismatches = Mutex<[String]>([])
        let all = Recorder<Bool>()
        let group = NWConnectionGroup(with: try NWMulticastGroup(for: [.hostPort(host: "239.81.0.3", port: Self.port)]), using: .udp)
        let states = Recorder<NWConnectionGroup.State>()
        group.setReceiveHandler(maximumMessageSize: 1500, rejectOversizedMessages: true) { message, content, _ in
            // "tos N SEQ"
            let words = String(decoding: content ?? Data(), as: UTF8.self).split(separator: " ")
            guard words.count == 3, words[0] == "tos", let tos = Int(words[1]) else { return }
            let ecn = (message.metadata(definition: NWProtocolIP.definition) as? NWProtocolIP.Metadata)?.ecn
            let expected: NWProtocolIP.ECN = [.nonECT, .ect1, .ect0, .ce][tos & 3]
            if ecn != expected { mismatches.withLock { $0.append("TOS \(tos): \(String(describing: ecn))") } }
            let count = seen.withLock { seen -> Int in
                seen[tos] = ecn
                return seen.count
            }
            if count == 256 && all.count == 0 { all.append(true) }
        }
        group.stateUpdateHandler = { states.append($0) }
        group.start(queue: DispatchQueue(label: "multicast-every-tos"))
        try await states.wait("ready", until: { $0.contains(.ready) })
        // 256 bytes at one every 5 ms: about 1.3 s.
        try await all.wait(count: 1, "all 256 TOS bytes", timeout: SanitizerSlowdown.seconds(15))
        #expect(mismatches.withLock { $0 }.isEmpty, "\(mismatches.withLock { $0.prefix(10) })")
        #expect(states.values == [.setup, .ready] || states.values == [.ready], "\(states.values)")
        try await Self.cancel(group, states)
        print("multicast: all 256 TOS bytes received, each with its ECN codepoint")
    }

    @Test("a flood of 20,000 datagrams from 2,000 source ports into a slow group: memory stays bounded, what is dropped is dropped quietly, and the group goes on receiving and sending")
    func floodFromThousandsOfSources() async throws {
        let flooded = Mutex(0)
        let afterFlood = Recorder<String>()
        let floodDone = Mutex(false)
        let group = NWConnectionGroup(
            with: try NWMulticastGroup(for: [.hostPort(host: "239.81.0.1", port: Self.port), .hostPort(host: "239.81.0.4", port: Self.port)]),
            using: {
                let parameters = NWParameters.udp
                parameters.allowLocalEndpointReuse = true
                return parameters
            }())
        let states = Recorder<NWConnectionGroup.State>()
        group.setReceiveHandler(maximumMessageSize: 1500, rejectOversizedMessages: true) { message, content, _ in
            let text = String(decoding: content ?? Data(), as: UTF8.self)
            if text.hasPrefix("flood ") {
                flooded.withLock { $0 += 1 }
                // A slow application: the queue falls behind the socket.
                usleep(100)
            } else if floodDone.withLock({ $0 }), text.hasPrefix("from 10.81.0.2 ") {
                afterFlood.append(text)
            }
        }
        group.stateUpdateHandler = { states.append($0) }
        group.start(queue: DispatchQueue(label: "multicast-flood"))
        try await states.wait("ready", until: { $0.contains(.ready) })
        let before = ProcFS.residentBytes()
        let trigger = URL(fileURLWithPath: NamespacedTestRun.value("DIR") ?? "/nonexistent").appendingPathComponent("flood.go")
        #expect(FileManager.default.createFile(atPath: trigger.path, contents: Data()), "the flood's trigger")
        try await Self.waitForLog("flooder", "the flood sent") { $0.contains("flooded 20000") }
        // Let the queue drain what it took.
        try await Task.sleep(for: .seconds(2))
        floodDone.withLock { $0 = true }
        let grown = ProcFS.residentBytes() - before
        let count = flooded.withLock { $0 }
        #expect(count > 0 && count <= 20_000, "\(count) flood datagrams delivered")
        #expect(grown < SanitizerSlowdown.residentBytes(48 << 20), "resident memory grew by \(grown >> 20) MiB during the flood")
        // The member's datagrams (every 50 ms) still arrive, and a send still goes out.
        try await afterFlood.wait(count: 3, "the member's datagrams after the flood")
        try await Self.send("after the flood", on: group, as: .default)
        let port = Self.port.rawValue
        try await Self.waitForLog("member", "our send after the flood") { $0.contains("10.81.0.1 \(port) after the flood") }
        #expect(!states.values.contains { if case .failed = $0 { true } else { false } }, "\(states.values)")
        try await Self.cancel(group, states)
        print("multicast: flood of 20000 from 2000 ports, \(count) delivered, memory +\(grown >> 20) MiB, still receiving and sending")
    }
}

extension MulticastGroupInsideTests {
    @Test(
        "a connection to one sender, taken from a received message: it gets that sender's datagrams and the group no longer does, it sends from the group's port, reinsert gives them back; extract(connectionTo:) makes another, which fails with ECONNABORTED when the group is cancelled (IPv4 groups, and with an IPv6 group beside them: a dual-stack socket)",
        arguments: [["239.81.0.1", "239.81.0.5"], ["239.81.0.1", "239.81.0.5", "ff15::81"]])
    func connectionToOneSender(groups: [String]) async throws {
        let extracted = Recorder<NWConnection>()
        // The member (10.81.0.2) sends to 239.81.0.1 and to us; the reporter (10.81.0.6) to 239.81.0.5.
        let (group, received, states) = try await Self.join(groups) { message in
            guard extracted.count == 0, Self.host(message.remoteEndpoint) == "10.81.0.2" else { return }
            // (On the group's queue, inside its receive handler, as an application would.)
            if let connection = NWConnection(message: message) { extracted.append(connection) }
        }
        #expect(NWConnection(from: NWConnectionGroup(with: group.descriptor, using: .udp), to: .hostPort(host: "10.81.0.2", port: 9)) == nil,
                "a group that has not started makes no connection")
        let connection = try #require(try await extracted.wait(count: 1, "a connection from a message of the member").first)
        #expect(connection.endpoint == .hostPort(host: "10.81.0.2", port: Self.port))
        let connectionStates = Recorder<NWConnection.State>()
        connection.stateUpdateHandler = { connectionStates.append($0) }
        let queue = DispatchQueue(label: "multicast-member-connection")
        connection.start(queue: queue)
        try await connectionStates.wait("ready", until: { $0.contains(.ready) })
        let onConnection = Recorder<String>()
        @Sendable func receive() {
            connection.receiveMessage { content, _, _, error in
                guard error == nil, let content else { return }
                onConnection.append(String(decoding: content, as: UTF8.self))
                receive()
            }
        }
        receive()
        try await onConnection.wait(count: 6, "the member's datagrams on the connection")
        #expect(onConnection.values.allSatisfy { $0.hasPrefix("from 10.81.0.2 ") }, "\(onConnection.values)")
        // Now none of the member's reach the group, while the reporter's still do.
        let memberCount = received.values.filter { $0.from == "10.81.0.2" }.count
        let reporterCount = received.values.filter { $0.from == "10.81.0.6" }.count
        try await received.wait("the reporter's datagrams after the extraction") { values in
            values.filter { $0.from == "10.81.0.6" }.count >= reporterCount + 6
        }
        #expect(received.values.filter { $0.from == "10.81.0.2" }.count == memberCount, "the member's datagrams went to its connection")

        let sent = Recorder<NWError?>()
        connection.send(content: Data("via the connection".utf8), completion: .contentProcessed { sent.append($0) })
        #expect(try await sent.wait(count: 1, "the connection's send") == [nil])
        let port = Self.port.rawValue
        try await Self.waitForLog("member", "the connection's send, from the group's port") {
            $0.contains("10.81.0.1 \(port) via the connection")
        }

        #expect(group.reinsert(connection: connection))
        try await connectionStates.wait("the reinserted connection cancelled", until: { $0.last == .cancelled })
        #expect(!group.reinsert(connection: connection), "a connection goes back once")
        try await received.wait("the member's datagrams in the group again") { values in
            values.filter { $0.from == "10.81.0.2" }.count >= memberCount + 3
        }

        let other = try #require(group.extract(connectionTo: .hostPort(host: "10.81.0.2", port: Self.port)))
        let otherStates = Recorder<NWConnection.State>()
        other.stateUpdateHandler = { otherStates.append($0) }
        other.start(queue: queue)
        try await otherStates.wait("ready", until: { $0.contains(.ready) })
        try await Self.cancel(group, states)
        try await otherStates.wait("failed with ECONNABORTED", until: { $0.contains(.failed(.posix(.ECONNABORTED))) })
        other.cancel()
        print("multicast: a connection to the member took its datagrams (\(onConnection.count)), sent from the group's port, went back with reinsert (groups \(groups.joined(separator: ", ")))")
    }
}
