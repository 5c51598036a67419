#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// Per-packet IP metadata of received datagrams: the ECN codepoint a peer marked each one
    /// with, and the receive time when the parameters ask for it. The peer is python's `socket`
    /// setting `IP_TOS` / `IPV6_TCLASS` per datagram (`Tests/PeerScripts/udp_marked_peer.py`).
    @Suite("Behaviour.PacketMetadata")
    struct PacketMetadata {
        /// TOS bytes the peer sends with, and the codepoint each must be reported as: the ECN
        /// bits alone count, whatever DSCP the peer put above them (EF is 0xB8).
        static let marks: [(tos: Int, ecn: NWProtocolIP.ECN)] = [
            (0x01, .ect1), (0x03, .ce), (0x02, .ect0), (0x00, .nonECT), (0xB9, .ect1), (0xBB, .ce), (0xB8, .nonECT),
        ]

        static func parameters(receiveTime: Bool) -> NWParameters {
            let parameters = NWParameters.udp
            (parameters.defaultProtocolStack.internetProtocol as? NWProtocolIP.Options)?.shouldCalculateReceiveTime = receiveTime
            return parameters
        }

        static func monotonicRaw() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC_RAW, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }

        static func peer(_ arguments: [String]) throws -> PeerProcess? {
            guard let python = PeerProcess.executable("python3", package: "python3") else { return nil }
            return try PeerProcess(python, [PythonPeer.scripts.appendingPathComponent("udp_marked_peer.py").path] + arguments)
        }

        /// Receives the marked datagrams on `connection` and checks each one's IP metadata.
        static func expectMarked(
            _ receive: () async throws -> (bytes: [UInt8], context: NWConnection.ContentContext?),
            receiveTime: Bool, since start: UInt64
        ) async throws {
            for (tos, ecn) in marks {
                let (bytes, context) = try await receive()
                #expect(String(decoding: bytes, as: UTF8.self) == "tos \(tos)")
                let metadata = context?.protocolMetadata(definition: NWProtocolIP.definition) as? NWProtocolIP.Metadata
                let ip = try #require(metadata, "no IP metadata with the datagram marked \(tos)")
                #expect(ip.ecn == ecn, "TOS \(tos): reported \(ip.ecn)")
                if receiveTime {
                    #expect(ip.receiveTime >= start && ip.receiveTime <= monotonicRaw(), "receive time \(ip.receiveTime), test began \(start)")
                } else {
                    #expect(ip.receiveTime == 0)
                }
            }
        }

        @Test("a UDP connection reports each datagram's ECN codepoint and receive time, over IPv4 and IPv6", arguments: ["4", "6"])
        func connectionReportsMarks(family: String) async throws {
            let marks = Self.marks.map { "\($0.tos)" }
            guard let peer = try Self.peer(["reply", family] + marks) else { return }
            defer { peer.stop() }
            try await peer.waitForOutput(containing: "\n")
            let words = String(decoding: peer.standardOutput, as: UTF8.self).split(whereSeparator: \.isWhitespace)
            let port = try #require(words.count >= 2 ? UInt16(words[1]) : nil, "peer said \(words)")
            let start = Self.monotonicRaw()
            let probe = Probe(port: port, parameters: Self.parameters(receiveTime: true), host: family == "6" ? "::1" : "127.0.0.1")
            try await probe.startAndWaitReady()
            #expect(try await probe.send(Array("go".utf8)) == nil)
            try await Self.expectMarked({
                let message = try await probe.receiveMessage()
                #expect(message.isComplete)
                return (message.bytes, message.context)
            }, receiveTime: true, since: start)
            try await probe.cancelAndWait()
        }

        @Test("without shouldCalculateReceiveTime the marks still come, with no receive time")
        func noReceiveTimeUnlessAsked() async throws {
            guard let peer = try Self.peer(["reply", "4"] + Self.marks.map { "\($0.tos)" }) else { return }
            defer { peer.stop() }
            try await peer.waitForOutput(containing: "\n")
            let words = String(decoding: peer.standardOutput, as: UTF8.self).split(whereSeparator: \.isWhitespace)
            let port = try #require(words.count >= 2 ? UInt16(words[1]) : nil, "peer said \(words)")
            let probe = Probe(port: port, parameters: Self.parameters(receiveTime: false))
            try await probe.startAndWaitReady()
            #expect(try await probe.send(Array("go".utf8)) == nil)
            try await Self.expectMarked({
                let message = try await probe.receiveMessage()
                return (message.bytes, message.context)
            }, receiveTime: false, since: 0)
            try await probe.cancelAndWait()
        }

        @Test("a UDP listener's connections report their peer's marks and receive times")
        func listenerConnectionsReportMarks() async throws {
            let received = Recorder<(bytes: [UInt8], context: NWConnection.ContentContext?)>()
            let queue = DispatchQueue(label: "marked-listener")
            let listener = try ListenerProbe(parameters: Self.parameters(receiveTime: true)) { connection in
                connection.start(queue: queue)
                @Sendable func serve() {
                    connection.receiveMessage { data, context, _, error in
                        guard let data, error == nil else { return }
                        received.append((Array(data), context))
                        serve()
                    }
                }
                serve()
            }
            let port = try await listener.startAndWaitReady()
            let start = Self.monotonicRaw()
            guard let peer = try Self.peer(["send", "4", "\(port)"] + Self.marks.map { "\($0.tos)" }) else { return }
            defer { peer.stop() }
            _ = await peer.waitForExit(timeout: 10)
            let all = try await received.wait(count: Self.marks.count, "marked datagrams")
            var index = 0
            try await Self.expectMarked({
                defer { index += 1 }
                return all[index]
            }, receiveTime: true, since: start)
            for connection in listener.connections.values { connection.cancel() }
            try await listener.cancelAndWait()
        }
    }
}

extension BehaviourTests.PacketMetadata {
    /// What a `report` peer saw: the TOS / traffic-class byte of each datagram, by payload.
    static func reported(_ peer: PeerProcess, count: Int) async throws -> [String: Int] {
        var seen: [String: Int] = [:]
        for line in try await peer.waitForLines(startingWith: "got ", count: count) {
            let words = line.split(separator: " ")
            guard words.count == 3, words[0] == "got", let tos = Int(words[1]) else { continue }
            seen[String(words[2])] = tos
        }
        return seen
    }

    static func reportingPeer(family: String, count: Int, hello port: UInt16? = nil) async throws -> (PeerProcess, UInt16)? {
        guard let peer = try peer(["report", family, "\(count)"] + (port.map { ["\($0)"] } ?? [])) else { return nil }
        try await peer.waitForOutput(containing: "\n")
        let words = String(decoding: peer.standardOutput, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard words.count >= 2, let port = UInt16(words[1]) else {
            peer.stop()
            Issue.record("peer said \(words)")
            return nil
        }
        return (peer, port)
    }

    /// Waits for the `report` peer to read every datagram of `sent` and checks the whole TOS
    /// byte of each: the ECN bits asked for, and no DSCP (no service class anywhere).
    static func expectSentMarks(_ peer: PeerProcess) async throws {
        let seen = try await reported(peer, count: sent.count)
        for (name, ecn) in sent {
            #expect(seen[name] == Int((ecn ?? .nonECT).codepointForTest), "\(name): the peer read TOS \(String(describing: seen[name]))")
        }
    }

    static func context(_ name: String, ecn: NWProtocolIP.ECN?) -> NWConnection.ContentContext {
        guard let ecn else { return .defaultMessage }
        let ip = NWProtocolIP.Metadata()
        ip.ecn = ecn
        return NWConnection.ContentContext(identifier: name, metadata: [ip])
    }

    static let sent: [(name: String, ecn: NWProtocolIP.ECN?)] = [
        ("ect0", .ect0), ("ect1", .ect1), ("ce", .ce), ("none", .nonECT), ("plain", nil), ("ect0-again", .ect0),
    ]

    @Test("ecn on a send's IP metadata reaches the wire, one datagram at a time, over IPv4 and IPv6", arguments: ["4", "6"])
    func sendMarksReachTheWire(family: String) async throws {
        guard let (peer, port) = try await Self.reportingPeer(family: family, count: Self.sent.count) else { return }
        defer { peer.stop() }
        let probe = Probe(port: port, parameters: .udp, host: family == "6" ? "::1" : "127.0.0.1")
        try await probe.startAndWaitReady()
        for (name, ecn) in Self.sent {
            #expect(try await probe.send(Array(name.utf8), context: Self.context(name, ecn: ecn)) == nil)
        }
        try await Self.expectSentMarks(peer)
        try await probe.cancelAndWait()
    }

    @Test("a batch of marked and plain datagrams keeps each one's marking")
    func batchKeepsMarks() async throws {
        guard let (peer, port) = try await Self.reportingPeer(family: "4", count: Self.sent.count) else { return }
        defer { peer.stop() }
        let probe = Probe(port: port, parameters: .udp)
        try await probe.startAndWaitReady()
        let done = Recorder<NWError?>()
        probe.connection.batch {
            for (name, ecn) in Self.sent {
                probe.connection.send(content: Data(name.utf8), contentContext: Self.context(name, ecn: ecn), completion: .contentProcessed { done.append($0) })
            }
        }
        #expect(try await done.wait(count: Self.sent.count, "send completions").allSatisfy { $0 == nil })
        try await Self.expectSentMarks(peer)
        try await probe.cancelAndWait()
    }

    @Test("on a connection with a service class, each datagram has the class's DSCP beside its own ECN codepoint")
    func serviceClassAndMarking() async throws {
        guard let (peer, port) = try await Self.reportingPeer(family: "4", count: 2) else { return }
        defer { peer.stop() }
        let parameters = NWParameters.udp
        parameters.serviceClass = .interactiveVoice
        let probe = Probe(port: port, parameters: parameters)
        try await probe.startAndWaitReady()
        #expect(try await probe.send(Array("ce".utf8), context: Self.context("ce", ecn: .ce)) == nil)
        #expect(try await probe.send(Array("plain".utf8)) == nil)
        let seen = try await Self.reported(peer, count: 2)
        // EF (46) << 2, the socket's class, on both; CE (3) on the marked one.
        #expect(seen["ce"] == 0xBB, "the peer read TOS \(String(describing: seen["ce"]))")
        #expect(seen["plain"] == 0xB8, "the peer read TOS \(String(describing: seen["plain"]))")
        try await probe.cancelAndWait()
    }

    @Test("a send's own service class (its IP metadata's) marks that datagram alone, beside its ECN codepoint, in a batch of mixed ones")
    func serviceClassPerDatagram() async throws {
        // name: (service class, codepoint, the TOS byte the peer must read)
        let sent: [(String, NWParameters.ServiceClass, NWProtocolIP.ECN, Int)] = [
            ("voice-ce", .interactiveVoice, .ce, 0xBB), ("plain", .bestEffort, .nonECT, 0x00),
            ("voice", .interactiveVoice, .nonECT, 0xB8), ("ect1", .bestEffort, .ect1, 0x01),
            ("voice-2", .interactiveVoice, .nonECT, 0xB8),
        ]
        guard let (peer, port) = try await Self.reportingPeer(family: "4", count: sent.count) else { return }
        defer { peer.stop() }
        let probe = Probe(port: port, parameters: .udp)
        try await probe.startAndWaitReady()
        let done = Recorder<NWError?>()
        probe.connection.batch {
            for (name, serviceClass, ecn, _) in sent {
                let ip = NWProtocolIP.Metadata()
                ip.ecn = ecn
                ip.serviceClass = serviceClass
                let context = NWConnection.ContentContext(identifier: name, metadata: [ip])
                probe.connection.send(content: Data(name.utf8), contentContext: context, completion: .contentProcessed { done.append($0) })
            }
        }
        #expect(try await done.wait(count: sent.count, "send completions").allSatisfy { $0 == nil })
        let seen = try await Self.reported(peer, count: sent.count)
        for (name, _, _, tos) in sent {
            #expect(seen[name] == tos, "\(name): the peer read TOS \(String(describing: seen[name]))")
        }
        try await probe.cancelAndWait()
    }

    /// A UDP listener whose connections answer their peer's first datagram with every datagram
    /// of `sent`, each marked as it says.
    static func markingListener(parameters: NWParameters) throws -> ListenerProbe {
        let queue = DispatchQueue(label: "marking-listener")
        return try ListenerProbe(parameters: parameters) { connection in
            connection.start(queue: queue)
            connection.receiveMessage { _, _, _, _ in
                for (name, ecn) in Self.sent {
                    connection.send(content: Data(name.utf8), contentContext: Self.context(name, ecn: ecn), completion: .idempotent)
                }
            }
        }
    }

    /// The listener's socket is a dual-stack IPv6 one: its replies to an IPv4 peer carry their
    /// codepoint in `IP_TOS`, to an IPv6 peer in `IPV6_TCLASS` (docs/data-path.md).
    @Test("a UDP listener's connection marks its replies, to an IPv4 and to an IPv6 peer", arguments: ["4", "6"])
    func listenerRepliesMarked(family: String) async throws {
        let listener = try Self.markingListener(parameters: .udp)
        let listenerPort = try await listener.startAndWaitReady()
        guard let (peer, _) = try await Self.reportingPeer(family: family, count: Self.sent.count, hello: listenerPort) else { return }
        defer { peer.stop() }
        try await Self.expectSentMarks(peer)
        for connection in listener.connections.values { connection.cancel() }
        try await listener.cancelAndWait()
    }

    @Test("a UDP listener with a service class: its replies keep the class's DSCP beside each one's ECN codepoint", arguments: ["4", "6"])
    func listenerRepliesKeepTheClass(family: String) async throws {
        let parameters = NWParameters.udp
        parameters.serviceClass = .interactiveVoice
        let listener = try Self.markingListener(parameters: parameters)
        let listenerPort = try await listener.startAndWaitReady()
        guard let (peer, _) = try await Self.reportingPeer(family: family, count: Self.sent.count, hello: listenerPort) else { return }
        defer { peer.stop() }
        let seen = try await Self.reported(peer, count: Self.sent.count)
        for (name, ecn) in Self.sent {
            // EF (46) << 2, with the codepoint in the low bits.
            let expected = 0xB8 | Int((ecn ?? .nonECT).codepointForTest)
            #expect(seen[name] == expected, "\(name): the peer read TOS \(String(describing: seen[name])), expected \(expected)")
        }
        for connection in listener.connections.values { connection.cancel() }
        try await listener.cancelAndWait()
    }
}

extension NWProtocolIP.ECN {
    /// RFC 3168's two bits, written out here rather than taken from the module.
    var codepointForTest: UInt8 {
        switch self {
        case .nonECT: 0
        case .ect1: 1
        case .ect0: 2
        case .ce: 3
        }
    }
}
