#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkSync
import Testing

@testable import NetworkCore

/// A UDP listener facing datagrams from many new addresses keeps a bounded number of unstarted
/// peers (starting them makes room for more) and of peers in all (idle ones make room).
@Suite("Core.DatagramListenerFlood")
struct DatagramListenerFloodTests {
    private func udpSocket() -> Int32 {
        socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    }

    private func send(_ fd: Int32, to port: Int) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var byte: UInt8 = 1
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, &byte, 1, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    @Test func unstartedPeersAreCapped() async throws {
        var configuration = FlowListenerConfiguration(transport: .udp, port: 0, child: FlowConfiguration(target: .unix(path: "")))
        configuration.localHost = "127.0.0.1"
        configuration.datagramPeerLimits.maximumUnstarted = 5
        let listener = FlowListener(configuration: configuration)
        let flows = Lock<[Flow]>([])
        let ready = AsyncStream<Void>.makeStream()
        listener.start(stateHandler: { if $0 == .ready { ready.continuation.yield() } }) { flow, _ in
            flows.withLock { $0.append(flow) }
        }
        var iterator = ready.stream.makeAsyncIterator()
        _ = await iterator.next()
        let port = try #require(listener.port)

        let sockets = (0..<8).map { _ in udpSocket() }
        defer { sockets.forEach { close($0) } }
        for fd in sockets { send(fd, to: port) }
        // (Waits for the five under load, then a while longer for any that should not come.)
        for _ in 0..<50 where flows.withLock({ $0.count }) < 5 { try await Task.sleep(for: .milliseconds(100)) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(flows.withLock { $0.count } == 5, "only five unstarted peers are kept")

        // Start them: the three others are accepted on their next datagram.
        // (Under load the starts take a while: the others send again until they are in, for at
        // most five seconds.)
        for flow in flows.withLock({ $0 }) { flow.start() }
        for _ in 0..<50 where flows.withLock({ $0.count }) < 8 {
            try await Task.sleep(for: .milliseconds(100))
            for fd in sockets { send(fd, to: port) }
        }
        #expect(flows.withLock { $0.count } == 8)
        for flow in flows.withLock({ $0 }) { flow.cancel(force: false) }
        listener.cancel()
    }

    @Test("a full table drops new addresses until a peer has idled long enough, then that peer fails with ECONNABORTED and the newcomer takes its slot; a busy peer is never evicted")
    func idlePeersAreEvicted() async throws {
        var configuration = FlowListenerConfiguration(transport: .udp, port: 0, child: FlowConfiguration(target: .unix(path: "")))
        configuration.localHost = "127.0.0.1"
        configuration.datagramPeerLimits.maximumPeers = 3
        configuration.datagramPeerLimits.idleBeforeEviction = .milliseconds(400)
        let listener = FlowListener(configuration: configuration)
        let flows = Lock<[Flow]>([])
        let failures = Lock<[Int: FlowError]>([:])
        let ready = AsyncStream<Void>.makeStream()
        listener.start(stateHandler: { if $0 == .ready { ready.continuation.yield() } }) { flow, _ in
            let index = flows.withLock { flows in
                flows.append(flow)
                return flows.count - 1
            }
            flow.observe { state in
                if case .failed(let error) = state { failures.withLock { $0[index] = error } }
            }
            flow.start()
        }
        var iterator = ready.stream.makeAsyncIterator()
        _ = await iterator.next()
        let port = try #require(listener.port)

        let sockets = (0..<4).map { _ in udpSocket() }
        defer { sockets.forEach { close($0) } }
        for fd in sockets.prefix(3) { send(fd, to: port) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(flows.withLock { $0.count } == 3)
        // Full, and nobody idle long enough: the fourth address is dropped.
        send(sockets[3], to: port)
        try await Task.sleep(for: .milliseconds(100))
        #expect(flows.withLock { $0.count } == 3, "no slot may be taken from a peer active 100 ms ago")
        // Peer 0 keeps talking; 1 and 2 go quiet past the idle time.
        for _ in 0..<6 {
            try await Task.sleep(for: .milliseconds(100))
            send(sockets[0], to: port)
        }
        send(sockets[3], to: port)
        // Until the newcomer is in and the evicted peer has heard of it (a fixed 200 ms was too
        // short for a loaded machine; each check below fails if it never happens).
        let deadline = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline, flows.withLock({ $0.count }) < 4 || failures.withLock({ $0.isEmpty }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(flows.withLock { $0.count } == 4, "the newcomer got a slot")
        let failed = failures.withLock { $0 }
        #expect(failed.count == 1, "exactly one idle peer was evicted: \(failed)")
        #expect(failed[0] == nil, "the busy peer stays")
        #expect(failed.values.allSatisfy { $0 == .posix(ECONNABORTED) }, "\(failed)")
        for flow in flows.withLock({ $0 }) { flow.cancel(force: false) }
        listener.cancel()
    }
}
