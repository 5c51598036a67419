#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// Data-path rules for stream receives (TCP), against a raw TCP peer.
    @Suite("Behaviour.StreamReceive")
    struct StreamReceive {
        /// A connected client and the raw peer the server accepted.
        static func connectedPair(parameters: NWParameters = .tcp) async throws -> (Probe, RawSocket, RawSocket) {
            let server = try RawSocket.tcpServer()
            let probe = Probe(port: server.localPort, parameters: parameters)
            try await probe.startAndWaitReady()
            let peer = try await offload { try server.accept() }
            return (probe, peer, server)
        }

        @Test("min 10 / max 10 returns exactly 10 bytes from a peer writing one byte at a time")
        func exactTenFromBytewisePeer() async throws {
            let (probe, peer, _) = try await Self.connectedPair()
            try peer.setNoDelay()
            let results = Recorder<Received>()
            for _ in 0..<3 {
                probe.connection.receive(minimumIncompleteLength: 10, maximumLength: 10) { data, context, isComplete, error in
                    results.append(Received(data: data, context: context, isComplete: isComplete, error: error))
                }
            }
            let sent = (0..<25).map { UInt8($0 + 1) }
            try await offload {
                for byte in sent {
                    try peer.sendAll([byte])
                    usleep(2_000)
                }
            }
            let first = try await results.wait(count: 2, "two receives of 10")
            #expect(first[0].bytes == Array(sent[0..<10]))
            #expect(first[0].isComplete == false)
            #expect(first[0].error == nil)
            #expect(first[1].bytes == Array(sent[10..<20]))
            #expect(first[1].isComplete == false)
            #expect(first[1].error == nil)

            // Five bytes are buffered: not enough for the third receive's minimum of 10.
            await pause(milliseconds: 300)
            #expect(results.count == 2, "a receive with min 10 completed with fewer bytes before end of stream: \(results.values)")

            // End of stream completes it with the 5 bytes, isComplete and a final context.
            peer.shutdownWrite()
            let all = try await results.wait(count: 3, "third receive at end of stream")
            #expect(all[2].bytes == Array(sent[20..<25]))
            #expect(all[2].isComplete == true)
            #expect(all[2].context?.isFinal == true)
            #expect(all[2].error == nil)

            // Later receives complete at once: no data, isComplete, no error.
            let after = try await probe.receive(minimum: 10, maximum: 10, timeout: 5)
            #expect(after.bytes.isEmpty)
            #expect(after.isComplete == true)
            #expect(after.error == nil)
            #expect(probe.connection.state == .ready)
            try await probe.cancelAndWait()
        }

        @Test("end of stream completes a pending receive with isComplete and fewer bytes than min; later receives complete at once")
        func endOfStreamCompletesPendingReceive() async throws {
            let (probe, peer, _) = try await Self.connectedPair()
            let results = Recorder<Received>()
            probe.connection.receive(minimumIncompleteLength: 10, maximumLength: 100) { data, context, isComplete, error in
                results.append(Received(data: data, context: context, isComplete: isComplete, error: error))
            }
            try peer.sendAll([7, 8, 9])
            await pause(milliseconds: 300)
            #expect(results.count == 0, "completed with 3 bytes although min is 10 and the stream is open: \(results.values)")
            peer.shutdownWrite()
            let first = try await results.wait(count: 1, "receive completed by end of stream")[0]
            #expect(first.bytes == [7, 8, 9])
            #expect(first.isComplete == true)
            #expect(first.context?.isFinal == true)
            #expect(first.error == nil)

            for index in 0..<3 {
                let later = try await probe.receive(minimum: 1, maximum: 100, timeout: 5)
                #expect(later.bytes.isEmpty, "receive \(index) after end of stream returned data")
                #expect(later.isComplete == true, "receive \(index) after end of stream: \(later)")
                #expect(later.error == nil, "receive \(index) after end of stream: \(later)")
            }
            // A half-closed (read side) connection is still ready: the write side works.
            #expect(try await probe.send(Array("still-writable".utf8)) == nil)
            #expect(try await offload { try peer.receiveExactly(14) } == Array("still-writable".utf8))
            #expect(probe.connection.state == .ready)
            try await probe.cancelAndWait()
        }

        @Test("receives complete in the order they were issued, each within its bounds")
        func receivesCompleteInOrder() async throws {
            let (probe, peer, _) = try await Self.connectedPair()
            struct Completion: Sendable {
                let index: Int
                let received: Received
            }
            let completions = Recorder<Completion>()
            let bounds: [(Int, Int)] = (0..<60).map { $0.isMultiple(of: 2) ? (1, 3) : (7, 7) }
            for (index, bound) in bounds.enumerated() {
                probe.connection.receive(minimumIncompleteLength: bound.0, maximumLength: bound.1) {
                    data, context, isComplete, error in
                    completions.append(
                        Completion(index: index, received: Received(data: data, context: context, isComplete: isComplete, error: error)))
                }
            }
            // 30 × 3 + 30 × 7 = 300 bytes is enough for every receive whatever the chunking.
            let sent = pattern(300)
            try await offload {
                var offset = 0
                var size = 1
                while offset < sent.count {
                    let end = min(sent.count, offset + size)
                    try peer.sendAll(Array(sent[offset..<end]))
                    offset = end
                    size = size % 13 + 1
                    usleep(500)
                }
            }
            let all = try await completions.wait(count: bounds.count, "all 60 receives")
            #expect(all.map(\.index) == Array(0..<bounds.count))
            var joined: [UInt8] = []
            for completion in all {
                let (minimum, maximum) = bounds[completion.index]
                #expect(completion.received.error == nil)
                #expect(completion.received.bytes.count >= minimum && completion.received.bytes.count <= maximum,
                    "receive \(completion.index) (min \(minimum), max \(maximum)) got \(completion.received.bytes.count) bytes")
                joined += completion.received.bytes
            }
            #expect(joined == Array(sent.prefix(joined.count)))
            try await probe.cancelAndWait()
        }

        @Test("invalid receive bounds give EINVAL, not a crash, and the connection keeps working")
        func invalidBounds() async throws {
            let (probe, peer, _) = try await Self.connectedPair()
            for (minimum, maximum) in [(5, 1), (0, 0), (-1, 10), (1, 0), (1, -5)] {
                let result = try await probe.receive(minimum: minimum, maximum: maximum, timeout: 5)
                #expect(result.error == .posix(.EINVAL), "receive(min: \(minimum), max: \(maximum)) gave \(result)")
                #expect(result.data == nil)
            }
            try peer.sendAll(Array("ok".utf8))
            let good = try await probe.receive(minimum: 2, maximum: 2)
            #expect(good.text == "ok")
            #expect(good.error == nil)
            #expect(probe.states.values == [.preparing, .ready])
            try await probe.cancelAndWait()
        }

        @Test("a receive issued before ready completes once data arrives")
        func receiveBeforeReady() async throws {
            let server = try RawSocket.tcpServer()
            let probe = Probe(port: server.localPort)
            let results = Recorder<Received>()
            probe.connection.receive(minimumIncompleteLength: 4, maximumLength: 4) { data, context, isComplete, error in
                results.append(Received(data: data, context: context, isComplete: isComplete, error: error))
            }
            probe.start()
            let peer = try await offload { try server.accept() }
            try peer.sendAll(Array("ping".utf8))
            let received = try await results.wait(count: 1, "early receive")[0]
            #expect(received.text == "ping")
            #expect(received.isComplete == false)
            #expect(received.error == nil)
            try await probe.cancelAndWait()
        }

        @Test("receiveMessage on a stream returns everything up to end of stream")
        func receiveMessageOnStream() async throws {
            let (probe, peer, _) = try await Self.connectedPair()
            let results = Recorder<Received>()
            probe.connection.receiveMessage { data, context, isComplete, error in
                results.append(Received(data: data, context: context, isComplete: isComplete, error: error))
            }
            let sent = pattern(5000)
            try await offload {
                try peer.sendAll(Array(sent[0..<2500]))
                usleep(50_000)
                try peer.sendAll(Array(sent[2500...]))
            }
            await pause(milliseconds: 200)
            #expect(results.count == 0, "receiveMessage completed before end of stream: \(results.values)")
            peer.shutdownWrite()
            let message = try await results.wait(count: 1, "whole message")[0]
            #expect(message.bytes == sent)
            #expect(message.isComplete == true)
            #expect(message.error == nil)
            try await probe.cancelAndWait()
        }
    }
}
