import NIOCore
import NetworkDNS
import PeerSupport
import Testing

@testable import NetworkCore

/// An establishment that stops while its name is being looked up cancels the queries: their
/// sockets close and their timers stop, instead of running on until the resolver's timeout.
@Suite("Core.EstablishmentDNSCancellation", .serialized)
struct EstablishmentDNSCancellationTests {
    /// A resolver whose only nameserver never answers (nothing listens on its port), with a
    /// timeout far longer than any test waits.
    static func silentResolver() throws -> DNSResolver {
        let port = try #require(freeLoopbackPort())
        return DNSResolver(
            configuration: DNSResolverConfiguration(
                nameservers: [try SocketAddress(ipAddress: "127.0.0.1", port: Int(port))], timeout: .seconds(30),
                attempts: 1),
            cache: DNSCache())
    }

    /// Waits up to 2 s for `resolver` to have `count` queries on the wire.
    static func outstandingQueries(of resolver: DNSResolver, become count: Int) async -> Bool {
        for _ in 0..<200 {
            if resolver.outstandingQueries == count { return true }
            await pause(milliseconds: 10)
        }
        return resolver.outstandingQueries == count
    }

    /// A flow to a name only `resolver` could answer, started and waiting on its queries.
    static func flowWaitingOnDNS(_ resolver: DNSResolver, connectionTimeout: Int = 0) async throws -> Flow {
        var configuration = FlowConfiguration(target: .hostPort(host: "silent.test", port: 443, interfaceName: nil))
        configuration.addressLookup = DNSResolverAddressLookup(resolver: resolver)
        configuration.tcp.connectionTimeout = connectionTimeout
        let flow = Flow(configuration: configuration)
        flow.start()
        #expect(await outstandingQueries(of: resolver, become: 2), "AAAA and A are on the wire")
        return flow
    }

    @Test("cancelling the flow cancels the lookup's queries")
    func cancelClosesQueries() async throws {
        let resolver = try Self.silentResolver()
        let flow = try await Self.flowWaitingOnDNS(resolver)
        flow.cancel(force: false)
        #expect(await Self.outstandingQueries(of: resolver, become: 0))
    }

    @Test("the connection timeout cancels the lookup's queries")
    func timeoutClosesQueries() async throws {
        let resolver = try Self.silentResolver()
        let flow = try await Self.flowWaitingOnDNS(resolver, connectionTimeout: 1)
        let states = Recorder<FlowConnectionState>()
        flow.observe { states.append($0) }
        // (The bound is generous: what is tested is that the timeout ends the attempt and its
        // queries, not how soon; a parallel run's start has stalled this process for ~9 s.)
        _ = try await states.wait("failed or waiting", timeout: 30) { states in
            states.contains { state in
                switch state {
                case .failed, .waiting: return true
                default: return false
                }
            }
        }
        #expect(await Self.outstandingQueries(of: resolver, become: 0))
        flow.cancel(force: false)
    }
}
