#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// How the sends of a `batch { }` complete on UDP: together, in the order they were made,
    /// each error reaching its own send.
    @Suite("Behaviour.DatagramBatch")
    struct DatagramBatch {
        /// A ready UDP connection to a raw peer that can hold a large batch.
        static func connectedPair() async throws -> (Probe, RawSocket) {
            let receiver = try RawSocket.udpPeer()
            if (try? receiver.setOption(SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)) == nil {
                try receiver.setOption(SOL_SOCKET, SO_RCVBUF, 16 << 20)
            }
            let probe = Probe(port: receiver.localPort, parameters: .udp)
            try await probe.startAndWaitReady()
            return (probe, receiver)
        }

        @Test("the completions of a batch of 1000 datagrams run in one block on the queue, in order, each once")
        func completionsLeaveInOneBlock() async throws {
            let (probe, _) = try await Self.connectedPair()
            let count = 1000
            // -1: work the first completion queues behind itself; it runs after every
            // completion of the batch only if they all left in one block.
            let events = Recorder<Int>()
            probe.connection.batch {
                for index in 0..<count {
                    probe.connection.send(content: Data([UInt8(index & 0xff)]), completion: .contentProcessed { error in
                        if index == 0 { probe.queue.async { events.append(-1) } }
                        events.append(error == nil ? index : -2)
                    })
                }
            }
            let seen = try await events.wait(count: count + 1, "1000 completions and the marker", timeout: 20)
            #expect(seen == Array(0..<count) + [-1])
            try await Task.sleep(for: .milliseconds(50))
            #expect(events.count == count + 1, "a completion ran twice")
            try await probe.cancelAndWait()
        }

        @Test("sends that put nothing on the wire complete in their turn, after the datagrams before them")
        func partsAndBareCompletionsKeepTheirTurn() async throws {
            let (probe, receiver) = try await Self.connectedPair()
            let order = Recorder<Int>()
            let sends: [(String?, Bool)] = [("a", false), ("b", true), (nil, true), ("c", false), ("d", true)]
            probe.connection.batch {
                for (index, (text, isComplete)) in sends.enumerated() {
                    probe.connection.send(
                        content: text.map { Data($0.utf8) }, isComplete: isComplete,
                        completion: .contentProcessed { error in order.append(error == nil ? index : -1) })
                }
            }
            #expect(try await order.wait(count: sends.count, "5 completions") == Array(sends.indices))
            let first = try await offload { try receiver.receiveFrom(timeout: 10) }
            let second = try await offload { try receiver.receiveFrom(timeout: 10) }
            #expect(first?.bytes == Array("ab".utf8))
            #expect(second?.bytes == Array("cd".utf8))
            try await probe.cancelAndWait()
        }

        @Test("a datagram too large for UDP fails alone with EMSGSIZE; the rest of its batch succeeds")
        func oversizeDatagramFailsAlone() async throws {
            let (probe, receiver) = try await Self.connectedPair()
            let results = Recorder<NWError?>()
            let sizes = [10, 70_000, 20, 30]
            probe.connection.batch {
                for size in sizes {
                    probe.connection.send(
                        content: Data(repeating: 7, count: size), completion: .contentProcessed { results.append($0) })
                }
            }
            let seen = try await results.wait(count: sizes.count, "4 completions")
            #expect(seen == [nil, .posix(.EMSGSIZE), nil, nil])
            var received: [Int] = []
            for _ in 0..<3 {
                guard let datagram = try await offload({ try receiver.receiveFrom(timeout: 10) }) else { break }
                received.append(datagram.bytes.count)
            }
            #expect(received == [10, 20, 30])
            try await probe.cancelAndWait()
        }
    }
}
