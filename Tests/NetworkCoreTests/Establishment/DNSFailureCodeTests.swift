#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkDNS
import PeerSupport
import NetworkSync
import Testing

@testable import NetworkCore

/// What each DNS failure becomes for the user: the `kDNSServiceErr_*` code of Apple's dns_sd.h
/// that says what happened (docs/dns-resolver.md has the table).
@Suite("Core.DNSFailureCodes", .serialized)
struct DNSFailureCodeTests {
    @Test func valuesAreDNSSDs() {
        #expect(DNSServiceCode.unknown == -65537)
        #expect(DNSServiceCode.noSuchName == -65538)
        #expect(DNSServiceCode.badParam == -65540)
        #expect(DNSServiceCode.unsupported == -65544)
        #expect(DNSServiceCode.invalid == -65549)
        #expect(DNSServiceCode.refused == -65553)
        #expect(DNSServiceCode.noSuchRecord == -65554)
        #expect(DNSServiceCode.transient == -65562)
        #expect(DNSServiceCode.timeout == -65568)
    }

    @Test(arguments: [
        (DNSResolverError.serverFailure(.serverFailure), FlowError.dns(DNSServiceCode.transient)),
        (.serverFailure(.refused), .dns(DNSServiceCode.refused)),
        (.serverFailure(.notImplemented), .dns(DNSServiceCode.unsupported)),
        (.serverFailure(.formatError), .dns(DNSServiceCode.unknown)),
        (.serverFailure(DNSResponseCode(rawValue: 9)), .dns(DNSServiceCode.unknown)),
        (.timedOut, .dns(DNSServiceCode.timeout)),
        (.malformedReply, .dns(DNSServiceCode.invalid)),
        (.invalidName("a..b"), .dns(DNSServiceCode.badParam)),
        (.noNameservers, .dns(DNSServiceCode.unknown)),
        (.transportFailure("x"), .dns(DNSServiceCode.unknown)),
        (.cancelled, .posix(ECANCELED)),
    ])
    func resolverErrorMapping(error: DNSResolverError, expected: FlowError) {
        #expect(DNSResolverAddressLookup.flowError(error) == expected)
    }

    /// Against a real server on loopback: the error each family's lookup reports.
    @Test(arguments: [
        ("servfail", DNSServiceCode.transient), ("refused", DNSServiceCode.refused),
        ("notimp", DNSServiceCode.unsupported), ("nxdomain", DNSServiceCode.noSuchName),
        ("malformed", DNSServiceCode.invalid), ("update", DNSServiceCode.timeout),
    ])
    func familyFailuresFromARealServer(label: String, code: Int32) async throws {
        guard let server = try await MisbehavingDNSServer.start() else { return }
        defer { server.stop() }
        let resolver = DNSResolver(
            configuration: DNSResolverConfiguration(
                nameservers: [try SocketAddress(ipAddress: "127.0.0.1", port: Int(server.port))],
                // Long enough that a loaded machine's late answer is not taken for silence (a
                // CI-like run saw SERVFAIL time out at 700 ms), except where silence is the point.
                timeout: .milliseconds(label == "update" ? 700 : 5_000), attempts: 1),
            cache: DNSCache())
        let events = Lock<[AddressLookupSink.Event]>([])
        let finished = AsyncStream<Void>.makeStream()
        _ = DNSResolverAddressLookup(resolver: resolver).start("\(label).example", port: 443, sink: AddressLookupSink { event in
            events.withLock { $0.append(event) }
            if case .finished = event { finished.continuation.finish() }
        })
        for await _ in finished.stream {}
        let failures = events.withLock { events in
            events.compactMap { event -> FlowError? in
                if case .familyFailed(_, let error) = event { return error }
                return nil
            }
        }
        #expect(failures == [.dns(code), .dns(code)])
    }
}
