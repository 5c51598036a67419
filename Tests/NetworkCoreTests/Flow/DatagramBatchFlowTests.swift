#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import NetworkCore

/// `batch { }`es of datagrams on a ready plain-UDP flow, against a real UDP peer: complete, in
/// order, completions in one block, whatever the socket's buffer or the peer's port does.
@Suite("Core.DatagramBatches")
struct DatagramBatchFlowTests {
    /// A UDP socket on 127.0.0.1 that the flow sends to, with a receive buffer large enough for
    /// the tests' batches.
    final class Peer: @unchecked Sendable {
        let fd: Int32
        let port: Int

        init() throws {
            (fd, port) = try #require(loopbackSocket(stream: false))
            var size: Int32 = 32 << 20
            if setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, 4) != 0 {
                _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, 4)
            }
        }

        deinit { close(fd) }

        /// Datagrams in arrival order, until `count` came or none came for `timeout` seconds.
        func receive(count: Int, timeout: Int32 = 5000) -> [[UInt8]] {
            var received: [[UInt8]] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while received.count < count {
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, timeout) == 1 else { break }
                let size = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard size >= 0 else { break }
                received.append(Array(buffer[0..<size]))
            }
            return received
        }

        /// `receive(count:timeout:)` on a thread of its own: its blocking `poll` must not hold
        /// one of the few threads of Swift's cooperative pool, which the test's own waits need
        /// (with both held, nothing moved until a `poll` gave up).
        func receiveOnThread(count: Int) async -> [[UInt8]] {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume(returning: self.receive(count: count)) }
            }
        }
    }

    /// A datagram completion that hands its batch to a queue, as the facade's does; each
    /// records its index (or, failed, `-2 - index`); the first of a batch also queues `-1`
    /// behind itself, which follows the whole batch only if the batch left in one block.
    final class Completion: FlowDatagramCompletion {
        let index: Int
        let events: Recorder<Int>
        let queue: DispatchQueue

        init(index: Int, events: Recorder<Int>, queue: DispatchQueue) {
            self.index = index
            self.events = events
            self.queue = queue
        }

        func run(_ error: FlowError?) {
            if index == 0 { queue.async { [events] in events.append(-1) } }
            events.append(error == nil ? index : -2 - index)
        }

        func deliver(_ batch: FlowDatagramCompletions) {
            queue.async { batch.runAll() }
        }

    }

    /// A ready plain-UDP flow to `port` on 127.0.0.1.
    static func readyFlow(port: Int) async throws -> (Flow, Recorder<FlowConnectionState>) {
        var configuration = FlowConfiguration(target: .hostPort(host: "127.0.0.1", port: port, interfaceName: nil))
        configuration.transport = .udp
        let flow = Flow(configuration: configuration)
        let states = Recorder<FlowConnectionState>()
        flow.observe { states.append($0) }
        flow.start()
        try await states.wait("ready", timeout: 10) { $0.contains(.ready) }
        return (flow, states)
    }

    /// Datagram `index`: its number, then padding up to `size` bytes.
    static func datagram(_ index: Int, size: Int) -> [UInt8] {
        let value = UInt32(index)
        let head = [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        return head + [UInt8](repeating: UInt8(index & 0xff), count: max(0, size - 4))
    }

    /// Sends `datagrams` in one batch, each with a `Completion`.
    static func sendBatch(_ datagrams: [[UInt8]], on flow: Flow, events: Recorder<Int>, queue: DispatchQueue) {
        flow.beginBatch()
        for (index, datagram) in datagrams.enumerated() {
            flow.send(
                datagram: Data(datagram), isComplete: true, closesWrite: false,
                completion: Completion(index: index, events: events, queue: queue))
        }
        flow.endBatch()
    }

    @Test("a batch of 1,000 datagrams arrives complete and in order, its completions in order and in one block")
    func aBatchArrivesInOrder() async throws {
        let peer = try Peer()
        let (flow, states) = try await Self.readyFlow(port: peer.port)
        let datagrams = (0..<1000).map { Self.datagram($0, size: 4 + $0 % 1200) }
        let arrived = Task { await peer.receiveOnThread(count: datagrams.count) }
        let events = Recorder<Int>()
        Self.sendBatch(datagrams, on: flow, events: events, queue: DispatchQueue(label: "completions"))
        let seen = try await events.wait(count: datagrams.count + 1, "1000 completions and the marker", timeout: 10)
        #expect(seen == Array(datagrams.indices) + [-1])
        #expect(await arrived.value == datagrams)
        flow.cancel(force: false)
        try await states.wait("cancelled", timeout: 10) { $0.contains(.cancelled) }
        #expect(events.count == datagrams.count + 1, "a completion after cancelled, or twice")
    }

    @Test("with a tiny send buffer, batches lose nothing and complete in order")
    func aSmallSendBufferLosesNothing() async throws {
        let peer = try Peer()
        let (flow, states) = try await Self.readyFlow(port: peer.port)
        flow.setSocketOption(level: SOL_SOCKET, name: SO_SNDBUF, value: 1)
        try await Task.sleep(for: .milliseconds(20))
        let batches = 3
        let perBatch = 1000
        let datagrams = (0..<batches * perBatch).map { Self.datagram($0, size: 1200) }
        let arrived = Task { await peer.receiveOnThread(count: datagrams.count) }
        let queue = DispatchQueue(label: "completions")
        let events = Recorder<Int>()
        for batch in 0..<batches {
            let slice = Array(datagrams[batch * perBatch..<(batch + 1) * perBatch])
            let batchEvents = Recorder<Int>()
            Self.sendBatch(slice, on: flow, events: batchEvents, queue: queue)
            let seen = try await batchEvents.wait(count: perBatch + 1, "batch \(batch)", timeout: 10)
            for value in seen where value != -1 { events.append(value < 0 ? value : batch * perBatch + value) }
            #expect(seen.last == -1, "batch \(batch) did not complete in one block")
        }
        #expect(events.values == Array(datagrams.indices))
        #expect(await arrived.value == datagrams)
        flow.cancel(force: false)
        try await states.wait("cancelled", timeout: 10) { $0.contains(.cancelled) }
    }

    @Test("an ICMP port unreachable does not fail the flow; later batches still go out and complete")
    func aRefusedPortIsNotFatal() async throws {
        // (A port that was free a moment ago: the peer closes as it goes.)
        let port = try Peer().port
        let (flow, states) = try await Self.readyFlow(port: port)
        let queue = DispatchQueue(label: "completions")
        var results: [[Int]] = []
        for round in 0..<5 {
            let events = Recorder<Int>()
            Self.sendBatch((0..<10).map { Self.datagram($0, size: 100) }, on: flow, events: events, queue: queue)
            results.append(try await events.wait(count: 11, "round \(round)", timeout: 10))
            // (Time for the ICMP error to come back and be pending on the socket.)
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(!states.values.contains { if case .failed = $0 { return true } else { return false } }, "\(states.values)")
        #expect(states.values.last == .ready)
        // (Every batch completes, in order and in one block; whether with errors depends on a
        // race: when NIO's own send meets the pending error before its poller collected it, NIO
        // closes the channel and later sends fail.)
        for result in results { #expect(result.filter { $0 >= 0 || $0 < -1 }.count == 10 && result.last == -1) }
        flow.cancel(force: false)
        try await states.wait("cancelled", timeout: 10) { $0.contains(.cancelled) }
    }
}
