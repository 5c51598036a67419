#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import Synchronization
import PeerSupport
import Testing

/// A flag and a counter shared with a peer thread.
final class PeerControl: Sendable {
    let stop = Atomic<Bool>(false)
    let bytes = Atomic<Int>(0)
}

extension BehaviourTests {
    /// Resources stay bounded: file descriptors across many connections, memory under a fast peer.
    @Suite("Behaviour.Resources")
    struct Resources {
        @Test("1000 connect/cancel cycles leave no file descriptor open")
        func noDescriptorLeak() async throws {
            let server = try RawSocket.tcpServer(backlog: 512)
            let control = PeerControl()
            let acceptor = ThreadTask {
                while !control.stop.load(ordering: .relaxed) {
                    if let peer = try? server.accept(timeout: 0.1) {
                        peer.close()
                        control.bytes.add(1, ordering: .relaxed)
                    }
                }
            }
            defer { control.stop.store(true, ordering: .relaxed) }
            let port = server.localPort

            @Sendable func cycle(_ index: Int) async throws {
                let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: .tcp)
                let states = Recorder<NWConnection.State>()
                connection.stateUpdateHandler = { states.append($0) }
                connection.start(queue: DispatchQueue(label: "cycle"))
                let seen = try await states.wait("cycle \(index) ready") { $0.contains(.ready) || $0.contains { $0.isTerminal || $0.isWaiting } }
                try #require(seen.contains(.ready), "cycle \(index) did not become ready: \(seen)")
                connection.cancel()
                try await states.wait("cycle \(index) cancelled") { $0.contains(.cancelled) }
            }

            // Warm up: event loops, thread pools, the interface table and the like open their
            // descriptors once.
            for index in 0..<10 { try await cycle(index) }
            await pause(milliseconds: 200)
            let before = ProcFS.openFileDescriptorCount()
            let descriptorsBefore = ProcFS.openFileDescriptors()

            for index in 0..<1000 { try await cycle(index) }

            var after = ProcFS.openFileDescriptorCount()
            let deadline = Date().addingTimeInterval(5)
            while after > before + 8 && Date() < deadline {
                await pause(milliseconds: 50)
                after = ProcFS.openFileDescriptorCount()
            }
            print("Behaviour.Resources descriptors: \(before) before, \(after) after 1000 cycles")
            let leaked = Set(ProcFS.openFileDescriptors()).subtracting(descriptorsBefore).sorted()
            #expect(after <= before + 8, "\(after - before) descriptors leaked over 1000 cycles; new: \(leaked.prefix(20))")
            // Precisely: none of this process's sockets is still a client socket to the server
            // (immune to descriptors other suites may open meanwhile).
            let ours = ProcFS.openSocketInodes()
            let stillOpen = ProcFS.sockets().filter { $0.remotePort == port && ours.contains($0.inode) }
            #expect(stillOpen.isEmpty, "\(stillOpen.count) client sockets to the server are still open: \(stillOpen.prefix(5))")
            control.stop.store(true, ordering: .relaxed)
            try await acceptor.value
            #expect(control.bytes.load(ordering: .relaxed) >= 1000)
        }

        @Test("a peer pushing 1 GiB at a slow reader does not grow memory past a bound")
        func memoryBoundedUnderFastPeer() async throws {
            let server = try RawSocket.tcpServer()
            let probe = Probe(port: server.localPort)
            try await probe.startAndWaitReady()
            let peer = try await offload { try server.accept() }
            let control = PeerControl()
            let sender = Thread {
                let chunk = [UInt8](repeating: 0x42, count: 256 * 1024)
                let limit = 1 << 30
                while !control.stop.load(ordering: .relaxed) && control.bytes.load(ordering: .relaxed) < limit {
                    guard peer.waitWritable(timeout: 0.05) else { continue }
                    let n = chunk.withUnsafeBytes {
                        send(peer.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                    }
                    if n > 0 {
                        control.bytes.add(n, ordering: .relaxed)
                    } else if n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                        break
                    }
                }
                control.stop.store(true, ordering: .relaxed)
            }
            sender.start()
            defer { control.stop.store(true, ordering: .relaxed) }

            // Warm up so allocator arenas and NIO's buffers exist before the baseline.
            var consumed = 0
            while consumed < 8 << 20 {
                let chunk = try await probe.receive(minimum: 1, maximum: 1 << 20)
                try #require(chunk.error == nil, "receive failed: \(chunk)")
                consumed += chunk.bytes.count
            }
            let baseline = ProcFS.residentBytes()
            var peak = baseline

            // Phase 1: the application reads as fast as it can until the peer pushed ≥ 256 MiB
            // through the engine (nothing may accumulate on the way).
            let phaseOneEnd = Date().addingTimeInterval(10)
            while control.bytes.load(ordering: .relaxed) < 256 << 20 && Date() < phaseOneEnd {
                let chunk = try await probe.receive(minimum: 1, maximum: 1 << 20)
                try #require(chunk.error == nil, "receive failed: \(chunk)")
                consumed += chunk.bytes.count
                peak = max(peak, ProcFS.residentBytes())
            }
            let pushedFast = control.bytes.load(ordering: .relaxed)
            #expect(pushedFast >= 256 << 20, "the peer pushed only \(pushedFast >> 20) MiB in 10 s through a fast reader")

            // Phase 2: the application reads 64 KiB every 10 ms; the peer keeps pushing as fast
            // as the engine lets it.
            let phaseTwoEnd = Date().addingTimeInterval(4)
            while Date() < phaseTwoEnd {
                let chunk = try await probe.receive(minimum: 1, maximum: 64 * 1024)
                try #require(chunk.error == nil, "receive failed: \(chunk)")
                consumed += chunk.bytes.count
                peak = max(peak, ProcFS.residentBytes())
                await pause(milliseconds: 10)
            }
            let pushed = control.bytes.load(ordering: .relaxed)
            let growth = peak - baseline
            // What may legitimately sit between the peer and the application: both kernel
            // buffers at their autotuning maximum, the engine's 512 KiB high-water mark, one read.
            let kernel = (ProcFS.tcpBufferLimits(receive: true).last ?? 6 << 20) + (ProcFS.tcpBufferLimits(receive: false).last ?? 4 << 20)
            let allowedInFlight = kernel + (8 << 20)
            print(
                "Behaviour.Resources memory: baseline RSS \(baseline >> 20) MiB, peak growth \(growth >> 20) MiB, "
                    + "pushed \(pushed >> 20) MiB (\(pushedFast >> 20) MiB in phase 1), consumed \(consumed >> 20) MiB, "
                    + "in flight \((pushed - consumed) >> 10) KiB (allowed \(allowedInFlight >> 20) MiB)")
            #expect(growth < SanitizerSlowdown.residentBytes(64 << 20), "RSS grew by \(growth >> 20) MiB (baseline \(baseline >> 20) MiB)")
            #expect(pushed - consumed <= allowedInFlight,
                "the engine read ahead without bound: pushed \(pushed >> 20) MiB, application consumed \(consumed >> 20) MiB, allowed in flight \(allowedInFlight >> 20) MiB")

            control.stop.store(true, ordering: .relaxed)
            probe.connection.cancel()
            try await probe.wait(for: .cancelled)
            // Let the sender notice.
            for _ in 0..<100 where !control.stop.load(ordering: .relaxed) { await pause(milliseconds: 10) }
        }
    }
}
