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
