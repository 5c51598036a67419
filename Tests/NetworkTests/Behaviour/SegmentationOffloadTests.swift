#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// UDP segmentation offload, invisible to the API: a `batch { }` of same-size datagrams
    /// leaves in segmented sends, and a peer's segmented burst arrives as its datagrams, each
    /// whole, in order. The independent side is python's `socket` (`udp_offload_peer.py`):
    /// a reader with `UDP_GRO` on gets a segmented send as one coalesced read with its segment
    /// size (on loopback nothing else coalesces datagrams, so that is the proof the batch went
    /// segmented), a reader without it gets the datagrams one by one.
    @Suite("Behaviour.SegmentationOffload")
    struct SegmentationOffload {
        /// Datagram number `index`, as the peer script makes and checks them.
        static func datagram(_ index: Int, length: Int) -> [UInt8] {
            let head = [UInt8(truncatingIfNeeded: index >> 8), UInt8(truncatingIfNeeded: index)]
            return Array((head + [UInt8](repeating: UInt8(index % 251), count: max(0, length - 2))).prefix(length))
        }

        /// Runs of one size (segmented), a shorter one ending a run, sizes too long to be
        /// segmented (1,453 and 3,000, which go alone), and small ones.
        static let sizes: [Int] = Array(repeating: 1_200, count: 120) + [700] + Array(repeating: 1_200, count: 10)
            + [1_452, 1_452, 1_453, 3_000] + Array(repeating: 64, count: 70) + [10, 10, 63, 64, 63]

        static func peer(_ arguments: [String]) throws -> PeerProcess? {
            guard let python = PeerProcess.executable("python3", package: "python3") else { return nil }
            return try PeerProcess(python, [PythonPeer.scripts.appendingPathComponent("udp_offload_peer.py").path] + arguments)
        }

        static func port(of peer: PeerProcess) async throws -> UInt16 {
            let line = try #require(try await peer.waitForLines(startingWith: "port ", count: 1).first)
            return try #require(UInt16(line.dropFirst("port ".count)))
        }

        @Test(
            "a batch of datagrams leaves in segmented sends where they are of one size, and each arrives whole, in order, with its own length (GRO reader and plain reader, IPv4 and IPv6)",
            arguments: [("4", true), ("4", false), ("6", true), ("6", false)])
        func batchLeavesSegmented(family: String, gro: Bool) async throws {
            let sizes = Self.sizes
            guard let peer = try Self.peer(["receive", family, gro ? "1" : "0", "\(sizes.count)"]) else { return }
            defer { peer.stop() }
            let port = try await Self.port(of: peer)
            let probe = Probe(port: port, parameters: .udp, host: family == "6" ? "::1" : "127.0.0.1")
            try await probe.startAndWaitReady()
            try await Self.sendBatch(sizes, on: probe, expectingCoalescedReads: gro, at: peer)
            try await probe.cancelAndWait()
        }

        @Test("a UDP listener's connection sends a batch the same way: segmented, each datagram whole and in order")
        func listenersConnectionBatches() async throws {
            let listener = try ListenerProbe(parameters: .udp)
            let listenerPort = try await listener.startAndWaitReady()
            let sizes = Self.sizes
            guard let peer = try Self.peer(["receive", "4", "1", "\(sizes.count)", "\(listenerPort)"]) else { return }
            defer { peer.stop() }
            let connection = try await listener.connections.wait(count: 1, "the peer's connection")[0]
            let probe = Probe(connection)
            try await probe.startAndWaitReady()
            #expect(try await probe.receiveMessage().text == "hello")
            try await Self.sendBatch(sizes, on: probe, expectingCoalescedReads: true, at: peer)
            try await probe.cancelAndWait()
            try await listener.cancelAndWait()
        }

        /// Sends datagrams of `sizes` in one batch and checks what the `receive` peer read.
        static func sendBatch(_ sizes: [Int], on probe: Probe, expectingCoalescedReads gro: Bool, at peer: PeerProcess) async throws {
            let completions = Recorder<NWError?>()
            probe.connection.batch {
                for (index, size) in sizes.enumerated() {
                    let bytes = Self.datagram(index, length: size)
                    // Every third is a slice of a larger `Data`: its bytes start past its storage's.
                    let content = index % 3 == 0 ? Data([0xEE, 0xEE, 0xEE] + bytes + [0xEE])[3..<(3 + size)] : Data(bytes)
                    probe.connection.send(content: content, completion: .contentProcessed { completions.append($0) })
                }
            }
            #expect(try await completions.wait(count: sizes.count, "send completions").allSatisfy { $0 == nil })
            let arrived = try await peer.waitForLines(startingWith: "dgram ", count: sizes.count)
            let expected = sizes.enumerated().map { "dgram \($0.offset) \($0.element) ok" }
            #expect(arrived == expected)
            let reads = String(decoding: peer.standardOutput, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("read ") }
            let coalesced = reads.filter { line in
                let words = line.split(separator: " ").compactMap { Int($0) }
                return words.count == 2 && words[1] > 0 && words[0] > words[1]
            }
            if gro {
                // 120 + 10 of 1,200 bytes, 70 of 64: a few segmented sends at least.
                #expect(coalesced.count >= 3, "no segmented send reached the reader: \(reads.prefix(8))")
                #expect(reads.count < sizes.count)
            } else {
                #expect(coalesced.isEmpty)
                #expect(reads.count == sizes.count)
            }
        }

        /// Receives `count + 1` messages (`count` of `size` bytes and one of `last`) and checks
        /// each against the peer's datagrams.
        static func expectBurst(on probe: Probe, count: Int, size: Int, last: Int) async throws {
            for index in 0...count {
                let received = try await probe.receiveMessage()
                let length = index == count ? last : size
                #expect(received.error == nil)
                #expect(received.isComplete)
                #expect(received.bytes == Self.datagram(index, length: length), "datagram \(index): \(received.bytes.count) bytes")
            }
        }

        @Test("a peer's segmented burst (50 × 1,200 bytes and 500 in one sendmsg) arrives on a connection as 51 whole messages, in order", arguments: ["4", "6"])
        func burstReachesAConnection(family: String) async throws {
            guard let peer = try Self.peer(["burst", family, "0", "50", "1200", "500"]) else { return }
            defer { peer.stop() }
            let port = try await Self.port(of: peer)
            let probe = Probe(port: port, parameters: .udp, host: family == "6" ? "::1" : "127.0.0.1")
            try await probe.startAndWaitReady()
            #expect(try await probe.send(Array("hello".utf8)) == nil)
            try await Self.expectBurst(on: probe, count: 50, size: 1_200, last: 500)
            try await probe.cancelAndWait()
        }

        @Test("a peer's segmented burst arrives on a UDP listener's connection as whole messages, in order")
        func burstReachesAListenersConnection() async throws {
            let listener = try ListenerProbe(parameters: .udp)
            let listenerPort = try await listener.startAndWaitReady()
            guard let peer = try Self.peer(["burst", "4", "\(listenerPort)", "40", "1200", "77"]) else { return }
            defer { peer.stop() }
            let connection = try await listener.connections.wait(count: 1, "the peer's connection")[0]
            let probe = Probe(connection)
            try await probe.startAndWaitReady()
            let hello = try await probe.receiveMessage()
            #expect(hello.text == "hello")
            // The peer sends its burst once it hears back.
            #expect(try await probe.send(Array("go".utf8)) == nil)
            try await Self.expectBurst(on: probe, count: 40, size: 1_200, last: 77)
            try await probe.cancelAndWait()
            try await listener.cancelAndWait()
        }
    }
}
