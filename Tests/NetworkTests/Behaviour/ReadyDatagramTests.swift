#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// Datagrams read ahead of the receives: the engine leaves them where a receive on any
    /// thread takes one without a hop to the event loop (`FlowInbox.readyDatagrams`). What must
    /// hold whichever way a receive is served: order, whole datagrams, the split of a datagram
    /// longer than the receive, backpressure, and cancel.
    @Suite("Behaviour.ReadyDatagrams")
    struct ReadyDatagrams {
        /// Datagram `index`: its index in two bytes, then as many bytes as `index % 50` says.
        static func datagram(_ index: Int) -> [UInt8] {
            [UInt8(index >> 8), UInt8(index & 0xff)] + [UInt8](repeating: UInt8(index % 251), count: 20 + index % 50)
        }

        /// A connected UDP connection and its raw peer, which knows the connection's port.
        static func pair() async throws -> (Probe, RawSocket, UInt16) {
            let peer = try RawSocket.udpPeer()
            let probe = Probe(port: peer.localPort, parameters: .udp)
            try await probe.startAndWaitReady()
            #expect(try await probe.send(Array("hello".utf8)) == nil)
            let hello = try #require(try peer.receiveFrom(timeout: 10))
            return (probe, peer, hello.port)
        }

        @Test("1,000 datagrams read ahead of the receives reach receives issued in a row from one thread in order and whole, every tenth split by a short receive")
        func readAheadKeepsOrderAndSplits() async throws {
            let (probe, peer, port) = try await Self.pair()
            let count = 1_000
            for index in 0..<count { try peer.send(to: port, Self.datagram(index)) }
            // Let the connection read them all before any receive is issued.
            try await Task.sleep(for: .milliseconds(300))
            let received = Recorder<Received>()
            var expected: [([UInt8], Bool)] = []
            for index in 0..<count {
                let bytes = Self.datagram(index)
                let record: @Sendable (Data?, NWConnection.ContentContext?, Bool, NWError?) -> Void = { data, context, isComplete, error in
                    received.append(Received(data: data, context: context, isComplete: isComplete, error: error))
                }
                if index % 10 == 5 {
                    // The first 8 bytes, then the rest (through the loop: the datagram is longer).
                    probe.connection.receive(minimumIncompleteLength: 1, maximumLength: 8, completion: record)
                    probe.connection.receiveMessage(completion: record)
                    expected.append((Array(bytes.prefix(8)), false))
                    expected.append((Array(bytes.dropFirst(8)), true))
                } else {
                    probe.connection.receiveMessage(completion: record)
                    expected.append((bytes, true))
                }
            }
            let all = try await received.wait(count: expected.count, "every receive", timeout: 20)
            #expect(all.allSatisfy { $0.error == nil })
            let mismatch = zip(all, expected).enumerated().first { $0.element.0.bytes != $0.element.1.0 || $0.element.0.isComplete != $0.element.1.1 }
            #expect(mismatch == nil, "receive \(mismatch?.offset ?? -1) got \(mismatch?.element.0.bytes.prefix(4) ?? [])")
            try await probe.cancelAndWait()
        }

        @Test("a reader that stops: the connection holds at most 1,024 datagrams, and reads again once the reader takes them")
        func backpressureResumes() async throws {
            let (probe, peer, port) = try await Self.pair()
            // More than the connection holds (1,024) and its socket's buffer together.
            for index in 0..<4_000 { try peer.send(to: port, Self.datagram(index % 1_000)) }
            try await Task.sleep(for: .milliseconds(300))
            // The first 1,024 are held, in order.
            for index in 0..<1_024 {
                let received = try await probe.receiveMessage()
                #expect(received.bytes == Self.datagram(index % 1_000), "datagram \(index)")
                if received.bytes != Self.datagram(index % 1_000) { break }
            }
            // Reading resumed (once half were taken, `FlowInbox.takeReady`; at the latest when a
            // receive found none left): what the socket held came in behind them, and a
            // datagram sent now arrives after those.
            try peer.send(to: port, Array("last".utf8))
            var seen = 0
            while true {
                let received = try await probe.receiveMessage(timeout: 10)
                #expect(received.error == nil)
                if received.text == "last" || received.error != nil { break }
                seen += 1
            }
            #expect(seen > 0, "nothing the socket held came after the first 1,024")
            try await probe.cancelAndWait()
        }

        @Test("after a cancel, a receive gets ECANCELED, not a datagram read ahead")
        func cancelWins() async throws {
            let (probe, peer, port) = try await Self.pair()
            for index in 0..<50 { try peer.send(to: port, Self.datagram(index)) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await probe.receiveMessage().bytes == Self.datagram(0))
            probe.connection.cancel()
            let after = try await probe.receiveMessage()
            #expect(after.error == .posix(.ECANCELED), "got \(after.bytes.count) bytes, error \(String(describing: after.error))")
            try await probe.wait(for: .cancelled)
        }
    }
}
