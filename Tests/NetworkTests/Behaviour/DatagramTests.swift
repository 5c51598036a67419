#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// Data-path rules for datagrams (UDP), against a raw UDP peer.
    @Suite("Behaviour.Datagram")
    struct Datagram {
        /// A ready UDP connection to a raw peer, and the connection's local port as the peer
        /// sees it (learned from a first datagram).
        static func connectedPair() async throws -> (Probe, RawSocket, UInt16) {
            let peer = try RawSocket.udpPeer()
            let probe = Probe(port: peer.localPort, parameters: .udp)
            try await probe.startAndWaitReady()
            #expect(try await probe.send(Array("hello".utf8)) == nil)
            let first = try await offload { try peer.receiveFrom(timeout: 10) }
            let (bytes, port) = try #require(first, "the raw peer got no datagram")
            #expect(bytes == Array("hello".utf8))
            return (probe, peer, port)
        }

        @Test("isComplete is per datagram and the connection keeps working after it")
        func isCompletePerDatagram() async throws {
            let (probe, peer, clientPort) = try await Self.connectedPair()
            let datagrams = [pattern(1, seed: 1), pattern(100, seed: 2), pattern(1000, seed: 3)]
            for datagram in datagrams { try peer.send(to: clientPort, datagram) }
            for (index, expected) in datagrams.enumerated() {
                let message = try await probe.receiveMessage()
                #expect(message.bytes == expected, "datagram \(index): got \(message.bytes.count) bytes, want \(expected.count)")
                #expect(message.isComplete == true, "datagram \(index): \(message)")
                #expect(message.error == nil)
                #expect(message.context?.isFinal != true, "a datagram's context must not be final (it does not end the connection)")
            }
            #expect(probe.connection.state == .ready)

            // More traffic, both ways.
            #expect(try await probe.send(Array("x".utf8)) == nil)
            #expect(try await probe.send(Array("yz".utf8)) == nil)
            let x = try await offload { try peer.receiveFrom(timeout: 10) }
            let yz = try await offload { try peer.receiveFrom(timeout: 10) }
            #expect(x?.bytes == Array("x".utf8))
            #expect(yz?.bytes == Array("yz".utf8))
            try peer.send(to: clientPort, Array("again".utf8))
            let again = try await probe.receive(minimum: 1, maximum: 65_536)
            #expect(again.text == "again")
            #expect(again.isComplete == true)
            #expect(again.error == nil)
            #expect(probe.states.values == [.preparing, .ready])
            try await probe.cancelAndWait()
        }

        @Test("a datagram larger than maximumLength arrives in pieces, isComplete only on the last")
        func oversizeDatagramSplits() async throws {
            let (probe, peer, clientPort) = try await Self.connectedPair()
            let big = pattern(300, seed: 9)
            try peer.send(to: clientPort, big)
            try peer.send(to: clientPort, Array("next".utf8))
            let head = try await probe.receive(minimum: 1, maximum: 100)
            #expect(head.bytes == Array(big[0..<100]))
            #expect(head.isComplete == false)
            #expect(head.error == nil)
            let tail = try await probe.receive(minimum: 1, maximum: 1000)
            #expect(tail.bytes == Array(big[100...]))
            #expect(tail.isComplete == true)
            #expect(tail.error == nil)
            // The following datagram is not merged with the previous one.
            let next = try await probe.receive(minimum: 1, maximum: 1000)
            #expect(next.text == "next")
            #expect(next.isComplete == true)
            try await probe.cancelAndWait()
        }

        @Test("a batch of 1000 datagrams all arrive, in order, and all 1000 send completions fire in order")
        func batchOfThousand() async throws {
            let receiver = try RawSocket.udpPeer()
            // Root may force a buffer past rmem_max; otherwise take what SO_RCVBUF allows.
            if (try? receiver.setOption(SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)) == nil {
                try receiver.setOption(SOL_SOCKET, SO_RCVBUF, 16 << 20)
            }
            let probe = Probe(port: receiver.localPort, parameters: .udp)
            try await probe.startAndWaitReady()

            let count = 1000
            let drained = ThreadTask { () -> [UInt32] in
                var sequence: [UInt32] = []
                while sequence.count < count {
                    guard let datagram = try receiver.receiveFrom(timeout: 10) else { break }
                    guard datagram.bytes.count == 8 else { continue }
                    sequence.append(datagram.bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                }
                return sequence
            }
            let completions = Recorder<Int>()
            let failures = Recorder<NWError>()
            probe.connection.batch {
                for index in 0..<count {
                    let value = UInt32(index)
                    let datagram: [UInt8] = [
                        UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff),
                        0xAB, 0xCD, 0xEF, 0x01,
                    ]
                    probe.connection.send(content: Data(datagram), completion: .contentProcessed { error in
                        if let error { failures.append(error) }
                        completions.append(index)
                    })
                }
            }
            let done = try await completions.wait(count: count, "1000 send completions", timeout: 20)
            #expect(done == Array(0..<count), "send completions out of order")
            #expect(failures.values.isEmpty)
            let sequence = try await drained.value
            #expect(sequence.count == count, "the receiver got \(sequence.count) of \(count) datagrams")
            #expect(sequence == (0..<UInt32(sequence.count)).map { $0 }, "datagrams arrived out of order")
            try await probe.cancelAndWait()
        }

        @Test("maximumDatagramSize is positive once a UDP connection is ready")
        func maximumDatagramSize() async throws {
            let (probe, _, _) = try await Self.connectedPair()
            #expect(probe.connection.maximumDatagramSize > 0)
            #expect(probe.connection.maximumDatagramSize <= 65_535)
            try await probe.cancelAndWait()
        }
    }
}
