import Dispatch
import Foundation
import Network
import PeerSupport
import Testing

/// Browsing a domain that a normal DNS server serves (unicast DNS-SD): `BonjourTests` runs
/// dnsmasq with the domain's PTR, SRV, TXT and address records in a namespace whose resolv.conf
/// names it, and this binary there as role `unicast`; disabled in an ordinary run.
@Suite("Bonjour.UnicastDomain", .enabled(if: NamespacedTestRun.role == "unicast", "runs inside a network namespace, started by Bonjour"))
struct BonjourUnicastDomainTests {
    @Test("a browse of example.test. finds the service the DNS server lists (named as it sends it), with its TXT record, and connecting to it reaches the SRV record's host and port")
    func browseAndConnect() async throws {
        let port = try #require(NamespacedTestRun.value("PORT").flatMap { NWEndpoint.Port($0) })
        let queue = DispatchQueue(label: "bonjour.unicast")
        // The service itself: a plain listener on the port the SRV record names.
        let listener = try NWListener(using: .tcp, on: port)
        listener.newConnectionHandler = { connection in BonjourSameHostTests.echo(connection, queue: queue) }
        let listenerStates = Recorder<NWListener.State>()
        listener.stateUpdateHandler = { listenerStates.append($0) }
        listener.start(queue: queue)
        defer { listener.cancel() }
        try await listenerStates.wait("listener ready") { $0.contains(.ready) }

        let (browser, updates, states) = BonjourSameHostTests.browse(.bonjourWithTXTRecord(type: "_nwtest._tcp", domain: "example.test."), queue: queue)
        defer { browser.cancel() }
        let expected = NWEndpoint.service(name: "unicast svc", type: "_nwtest._tcp", domain: "example.test.", interface: nil)
        let found = try await updates.wait("unicast svc", timeout: 10) { $0.last?.contains { $0.endpoint == expected } == true }
        let result = try #require(found.last?.first { $0.endpoint == expected })
        #expect(states.values.first == .ready)
        guard case .bonjour(let record) = result.metadata else {
            Issue.record("no TXT record: \(result)")
            return
        }
        #expect(record.getEntry(for: "k") == .string("v"))
        #expect(record.getEntry(for: "flag") == NWTXTRecord.Entry.none)
        #expect(result.interfaces.isEmpty)

        let reply = try await BonjourSameHostTests.exchange(to: result.endpoint, using: .tcp, payload: Data("unicast".utf8), queue: queue)
        #expect(reply == Data("unicast".utf8))
    }
}
