import NIOCore
import PeerSupport
import Testing
@testable import NetworkDNS

extension MisbehavingDNSServer {
    /// A resolver that asks only this server: one attempt, a short timeout.
    func resolver(timeout: TimeAmount = .milliseconds(700)) throws -> DNSResolver {
        DNSResolver(
            configuration: DNSResolverConfiguration(
                nameservers: [try SocketAddress(ipAddress: "127.0.0.1", port: Int(port))], timeout: timeout, attempts: 1),
            cache: DNSCache())
    }
}

/// Each way a real server's reply can fail, against a server on loopback that fails on demand:
/// the resolver's error says which one it was.
@Suite("Resolver failure replies", .serialized)
struct FailureReplyTests {
    /// The timeout of queries the server answers: their bound is not what they test, and a
    /// python server's first reply in the parallel run's start-up storm once took over 700 ms
    /// (a fresh-clone CI run, 2026-11-30). Queries that must time out keep the short one.
    static let answered = TimeAmount.seconds(5)

    private func withServer(_ body: (MisbehavingDNSServer) async throws -> Void) async throws {
        guard let server = try await MisbehavingDNSServer.start() else { return }
        defer { server.stop() }
        try await body(server)
    }

    @Test(arguments: [
        ("servfail", DNSResponseCode.serverFailure), ("refused", .refused), ("notimp", .notImplemented),
    ])
    func failureCodeIsKept(label: String, code: DNSResponseCode) async throws {
        try await withServer { server in
            await #expect(throws: DNSResolverError.serverFailure(code)) {
                try await server.resolver(timeout: Self.answered).query("\(label).example", type: .a)
            }
        }
    }

    @Test func nxdomainIsAnAnswer() async throws {
        try await withServer { server in
            let answer = try await server.resolver(timeout: Self.answered).query("nxdomain.example", type: .a)
            #expect(answer.outcome == .nameDoesNotExist)
        }
    }

    /// A reply whose opcode is UPDATE answers nothing we asked: it is dropped, so with no
    /// other reply the query times out…
    @Test func unexpectedOpcodeIsDropped() async throws {
        try await withServer { server in
            await #expect(throws: DNSResolverError.timedOut) { try await server.resolver().query("update.example", type: .a) }
        }
    }

    /// …and the real reply that follows it is the answer.
    @Test func realReplyAfterUnexpectedOpcodeWins() async throws {
        try await withServer { server in
            let answer = try await server.resolver(timeout: Self.answered).query("updatefirst.example", type: .a)
            #expect(answer.addresses.map(\.description) == ["192.0.2.1"])
        }
    }

    /// A reply with our ID and question whose record is cut off: after the timeout (a valid
    /// reply could still have come) the error says the reply was malformed, not that nothing came.
    @Test func malformedReplyIsReported() async throws {
        try await withServer { server in
            await #expect(throws: DNSResolverError.malformedReply) {
                try await server.resolver().query("malformed.example", type: .a)
            }
        }
    }
}
