#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import NIOPosix
import PeerSupport
import Testing

@testable import NetworkCore

/// The racer over real sockets: a blackholed IPv6 address, a refused one, and the sockets of the
/// attempts that lost.
@Suite("Core.HappyEyeballsEndToEnd", .serialized)
struct HappyEyeballsEndToEndTests {
    /// A flow to a made-up name that `answers` resolves (AAAA first, then A, as a resolver that
    /// hears from both at once would), and what it went through.
    final class Race: Sendable {
        let flow: Flow
        let states = Recorder<FlowConnectionState>()

        init(port: Int, ipv6: [SocketAddress], ipv4: [SocketAddress], attemptDelay: TimeAmount = .milliseconds(250)) {
            var configuration = FlowConfiguration(target: .hostPort(host: "racer.test", port: port, interfaceName: nil))
            configuration.connectionAttemptDelay = attemptDelay
            configuration.addressLookup = { _, _, sink in
                sink.answered(.ipv6, ipv6)
                sink.answered(.ipv4, ipv4)
                sink.finished()
            }
            flow = Flow(configuration: configuration)
            let states = self.states
            flow.observe { states.append($0) }
        }

        /// Starts the flow and waits until it is ready (or gave up); returns the engine's own
        /// start-to-ready time.
        func run() async throws -> TimeAmount {
            flow.start()
            let seen = try await states.wait("ready or a failure", timeout: 10) { states in
                states.contains { state in
                    switch state {
                    case .ready, .failed, .waiting, .cancelled: return true
                    default: return false
                    }
                }
            }
            try #require(seen.contains(.ready), "the race did not produce a connection: \(seen)")
            let report = try await flow.inspect { $0.report }.get()
            return try #require(report.readyTime) - #require(report.startTime)
        }

        var remoteAddress: SocketAddress? {
            get async throws { try await flow.inspect { $0.remoteAddress }.get() }
        }

        func cancel() async throws {
            flow.cancel(force: false)
            try await states.wait("cancelled") { $0.contains(.cancelled) }
        }
    }

    static func milliseconds(_ amount: TimeAmount) -> Double {
        Double(amount.nanoseconds) / 1_000_000
    }

    /// This process's TCP sockets whose peer port is `port`, by kernel state (01 established,
    /// 02 SYN sent, ...).
    static func ourSockets(toPort port: Int) -> [UInt8] {
        let ours = ProcFS.openSocketInodes()
        return ProcFS.sockets().filter { $0.remotePort == UInt16(port) && ours.contains($0.inode) }.map(\.state)
    }

    @Test("a blackholed IPv6 address costs one attempt delay, not a TCP timeout")
    func blackholedIPv6FallsBackToIPv4() async throws {
        guard let namespace = try await BlackholeNamespace.make() else { return }
        defer { namespace.tearDown() }

        for delay in [250, 100] {
            let race = Race(port: namespace.port, ipv6: [namespace.ipv6], ipv4: [namespace.ipv4], attemptDelay: .milliseconds(Int64(delay)))
            let clock = ContinuousClock()
            let started = clock.now
            let engine = try await race.run()
            let observed = clock.now - started
            print("HappyEyeballs blackhole: attempt delay \(delay) ms, time-to-ready \(Self.milliseconds(engine)) ms (engine), \(observed) (observed by the test)")
            #expect(try await race.remoteAddress == namespace.ipv4, "the connection went through IPv4")
            // IPv6 was tried first and held IPv4 back for one attempt delay...
            #expect(Self.milliseconds(engine) >= Double(delay) - 5)
            // ...and no longer: not a TCP timeout (seconds), and within a margin of the delay.
            #expect(Self.milliseconds(engine) < Double(delay) + 50 + 150)
            try await race.cancel()
        }
    }

    @Test("a refused first address moves on to the next at once")
    func refusedFirstAddress() async throws {
        // Only IPv4 listens; the IPv6 loopback answers the SYN with a reset.
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        defer { server.close(promise: nil) }
        let port = try #require(server.localAddress?.port)
        let ipv6 = try SocketAddress(ipAddress: "::1", port: port)
        let ipv4 = try SocketAddress(ipAddress: "127.0.0.1", port: port)

        let race = Race(port: port, ipv6: [ipv6], ipv4: [ipv4])
        let engine = try await race.run()
        print("HappyEyeballs refused: time-to-ready \(Self.milliseconds(engine)) ms with a 250 ms attempt delay")
        #expect(try await race.remoteAddress == ipv4)
        #expect(Self.milliseconds(engine) < 100, "the refusal should start the next attempt at once, not after 250 ms")
        let report = try await race.flow.inspect { $0.report }.get()
        #expect(report.resolution?.preferred == ipv6, "IPv6 was tried first")
        #expect(report.resolution?.successful == ipv4)
        #expect(report.resolution?.endpointCount == 2)
        #expect(report.handshakeDuration != nil)
        try await race.cancel()
    }

    @Test("the sockets of losing attempts are closed once the winner is chosen")
    func losersAreClosed() async throws {
        guard let namespace = try await BlackholeNamespace.make() else { return }
        defer { namespace.tearDown() }

        // Warm up (event loops, thread pools), then count.
        let warmup = Race(port: namespace.port, ipv6: [namespace.ipv6], ipv4: [namespace.ipv4], attemptDelay: .milliseconds(100))
        _ = try await warmup.run()
        try await warmup.cancel()
        await pause(milliseconds: 100)
        let descriptorsBefore = ProcFS.openFileDescriptorCount()

        for round in 0..<5 {
            let race = Race(port: namespace.port, ipv6: [namespace.ipv6], ipv4: [namespace.ipv4], attemptDelay: .milliseconds(100))
            _ = try await race.run()
            // The IPv6 attempt was still sending SYNs into the blackhole when IPv4 won: its
            // socket must be gone, leaving only the winner (established).
            var sockets = Self.ourSockets(toPort: namespace.port)
            let deadline = Date().addingTimeInterval(1)
            while sockets != [0x01] && Date() < deadline {
                await pause(milliseconds: 10)
                sockets = Self.ourSockets(toPort: namespace.port)
            }
            #expect(sockets == [0x01], "round \(round): sockets to the server by state: \(sockets)")
            try await race.cancel()
        }

        var after = ProcFS.openFileDescriptorCount()
        let deadline = Date().addingTimeInterval(2)
        while after > descriptorsBefore && Date() < deadline {
            await pause(milliseconds: 20)
            after = ProcFS.openFileDescriptorCount()
        }
        print("HappyEyeballs losers: descriptors \(descriptorsBefore) before, \(after) after 5 races")
        #expect(after <= descriptorsBefore + 2, "descriptors leaked: \(after - descriptorsBefore)")
        #expect(Self.ourSockets(toPort: namespace.port).isEmpty)
    }
}
