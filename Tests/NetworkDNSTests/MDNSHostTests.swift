import NIOCore
import Testing

@testable import NetworkDNS

/// `MDNSHost` claimed through `MDNSRegistration`: the host's name with one interface's
/// addresses, renamed "linux-2" on a conflict; our own addresses heard from another interface
/// are no conflict. Values only (no socket, no namespace needed).
@Suite("DNS.MDNSHost")
struct MDNSHostTests {
    static let here: [DNSRecordData] = [.a(DNSIPv4Address(10, 0, 0, 1)), .aaaa(DNSIPv6Address("fe80::1")!)]
    static let elsewhere: DNSRecordData = .a(DNSIPv4Address(192, 168, 1, 7))

    static func host(_ label: String = "linux") -> MDNSHost {
        MDNSHost(label: label, addresses: here, allAddresses: Set(here + [elsewhere]))
    }

    /// A response from another responder holding `data` for `label.local.`.
    static func response(_ label: String, _ data: DNSRecordData) throws -> DNSMessage {
        let type: DNSRecordType = if case .a = data { .a } else { .aaaa }
        return DNSMessage(
            header: DNSHeader(id: 0, isResponse: true, isAuthoritative: true, recursionDesired: false),
            answers: [DNSResourceRecord(name: try DNSName("\(label).local."), type: type, recordClass: DNSClass.internet.withMDNSBit, ttl: 120, data: data)])
    }

    @Test("records: one unique A or AAAA per address of the interface, TTL 120, under label.local.")
    func records() throws {
        let records = try Self.host().records()
        #expect(records.count == 2)
        #expect(records.allSatisfy { $0.unique && $0.record.ttl == 120 && $0.record.name == (try? DNSName("linux.local.")) })
        #expect(records.map(\.record.type) == [.a, .aaaa])
    }

    @Test("renaming: linux, linux-2, linux-3; a name ending in a dash and a number below 2 gets -2")
    func renaming() {
        #expect(MDNSHost.renamed("linux") == "linux-2")
        #expect(MDNSHost.renamed("linux-2") == "linux-3")
        #expect(MDNSHost.renamed("web-server") == "web-server-2")
        #expect(MDNSHost.renamed("node-1") == "node-1-2")
        #expect(MDNSHost.renamed(String(repeating: "h", count: 63)).utf8.count == 63)
    }

    @Test("another host's address under our name renames us while probing; our address from another interface does not")
    func conflict() throws {
        var now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var registration = MDNSRegistration(claim: Self.host())
        _ = registration.start(initialDelay: .zero)
        _ = registration.wake(now: now)
        // Ours, heard on this link from our other interface: no conflict.
        #expect(registration.received(try Self.response("linux", Self.elsewhere), now: now).isEmpty)
        #expect(registration.claim.label == "linux")
        // Someone else's.
        now = now + .milliseconds(100)
        let actions = registration.received(try Self.response("linux", .a(DNSIPv4Address(10, 0, 0, 99))), now: now)
        #expect(actions == [.wake(after: .zero)])
        #expect(registration.claim.label == "linux-2")
        for _ in 0..<4 {
            now = now + .milliseconds(250)
            let step = registration.wake(now: now)
            if step.contains(.registered(Self.host("linux-2"))) { return }
        }
        Issue.record("linux-2 was never registered")
    }
}
