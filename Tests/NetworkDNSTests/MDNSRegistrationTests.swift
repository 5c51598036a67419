import NIOCore
import Testing

@testable import NetworkDNS

/// The registration of a service's name (the host's name has its own tests).
typealias ServiceRegistration = MDNSRegistration<MDNSService>

/// `MDNSRegistration`, the responder's claim of one service name (RFC 6762 §8–§10), driven by
/// hand: the schedule of probes and announcements, conflicts and renaming, simultaneous probes,
/// our own packets looped back, and goodbyes. No socket is opened (these are values), so nothing
/// here needs a network namespace.
@Suite("DNS.ServiceRegistration")
struct MDNSRegistrationTests {
    typealias Action = ServiceRegistration.Action

    static let host = try! DNSName("linux.local.")
    static func service(_ instance: String = "Printer", port: UInt16 = 631) -> MDNSService {
        var txt = DNSSDTXTAttributes()
        txt.set(.bytes(Array("1".utf8)), for: "txtvers")
        return MDNSService(instance: instance, type: "_ipp._tcp", host: host, port: port, txt: txt)
    }

    /// The messages among `actions`.
    static func sent(_ actions: [Action]) -> [DNSMessage] {
        actions.compactMap { if case .send(let message) = $0 { return message } else { return nil } }
    }

    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    /// A registration of `service` that has sent its first probe at `start`.
    static func probing(_ service: MDNSService = service(), noAutoRename: Bool = false) -> ServiceRegistration {
        var registration = ServiceRegistration(service: service, noAutoRename: noAutoRename)
        _ = registration.start(initialDelay: .zero)
        _ = registration.wake(now: start)
        return registration
    }

    /// Another host's response claiming `service`'s name with its own records.
    static func claim(by service: MDNSService) throws -> DNSMessage {
        DNSMessage(
            header: DNSHeader(isResponse: true, isAuthoritative: true, recursionDesired: false),
            answers: try service.records().map(\.responseRecord))
    }

    /// Runs start and wake-ups until the name is registered; returns every action.
    static func register(_ registration: inout ServiceRegistration, clock: inout NIODeadline) -> [Action] {
        var actions = registration.start(initialDelay: .milliseconds(100))
        for _ in 0..<4 {
            clock = clock + .milliseconds(250)
            actions += registration.wake(now: clock)
        }
        return actions
    }

    @Test("three probes 250 ms apart (the first asking for a unicast answer), then announcements with the cache-flush bit on SRV and TXT")
    func schedule() throws {
        var registration = ServiceRegistration(service: Self.service())
        var clock = Self.start
        let actions = Self.register(&registration, clock: &clock)
        let name = try Self.service().instanceName
        #expect(actions.first == .wake(after: .milliseconds(100)))
        let probes = Self.sent(actions).filter { !$0.header.isResponse }
        #expect(probes.count == 3)
        #expect(probes.map { $0.questions.first?.recordClass.rawValue } == [0x8001, 0x0001, 0x0001])
        #expect(probes.allSatisfy { $0.questions.first?.name == name && $0.questions.first?.type == .any })
        #expect(probes[0].authorities.map(\.type) == [.srv, .txt], "the proposed unique records")
        #expect(actions.contains(.registered(Self.service())))
        let announcement = try #require(Self.sent(actions).first { $0.header.isResponse })
        #expect(announcement.header.isAuthoritative && announcement.header.id == 0)
        #expect(announcement.answers.map(\.type) == [.srv, .txt, .ptr, .ptr])
        #expect(announcement.answers.map(\.recordClass.rawValue) == [0x8001, 0x8001, 0x0001, 0x0001])
        #expect(announcement.answers[2].data == .ptr(name))
        // The second announcement a second later, then nothing more.
        #expect(Self.sent(registration.wake(now: clock + .seconds(1))).count == 1)
        #expect(registration.wake(now: clock + .seconds(3)).isEmpty)
        #expect(registration.isRegistered)
        // The messages survive the wire codec.
        for message in Self.sent(actions) {
            #expect(try DNSMessage(decoding: message.encoded()) == message)
        }
    }

    @Test("our own probes and announcements looped back are no conflict")
    func ownEcho() {
        var registration = ServiceRegistration(service: Self.service())
        var clock = Self.start
        var actions = registration.start(initialDelay: .zero)
        clock = clock + .milliseconds(1)
        actions = registration.wake(now: clock)
        for message in Self.sent(actions) { #expect(registration.received(message, now: clock).isEmpty) }
        actions = Self.register(&registration, clock: &clock)
        for message in Self.sent(actions) { #expect(registration.received(message, now: clock).isEmpty) }
        #expect(registration.service.instance == "Printer")
    }

    @Test("a response claiming the name while probing renames the instance to \"Printer (2)\" and probes again")
    func conflictWhileProbing() throws {
        var registration = Self.probing()
        let clock = Self.start
        // Same name, another host's port.
        #expect(registration.received(try Self.claim(by: Self.service(port: 9100)), now: clock) == [.wake(after: .zero)])
        #expect(registration.service.instance == "Printer (2)")
        var later = clock
        let actions = Self.register(&registration, clock: &later)
        #expect(actions.contains(.registered(Self.service("Printer (2)"))))
        #expect(try Self.sent(actions).first?.questions.first?.name == Self.service("Printer (2)").instanceName)
    }

    @Test("with noAutoRename a conflict ends the registration instead")
    func noAutoRename() throws {
        var registration = Self.probing(noAutoRename: true)
        let clock = Self.start
        #expect(registration.received(try Self.claim(by: Self.service(port: 1)), now: clock) == [.failed(Self.service())])
        #expect(registration.wake(now: clock + .seconds(1)).isEmpty)
        #expect(registration.cancel().isEmpty, "never announced: no goodbye")
    }

    @Test("simultaneous probes: the lexicographically earlier proposal loses and probes again a second later; the later one carries on")
    func tieBreak() throws {
        let clock = Self.start
        // Same name, ports 631 and 632: the SRV RDATA differs first in the port.
        func probe(of service: MDNSService) throws -> DNSMessage {
            var other = ServiceRegistration(service: service)
            _ = other.start(initialDelay: .zero)
            return try #require(Self.sent(other.wake(now: clock)).first)
        }
        var low = Self.probing(Self.service(port: 631))
        #expect(low.received(try probe(of: Self.service(port: 632)), now: clock) == [.wake(after: .seconds(1))])
        let again = low.wake(now: clock + .seconds(1))
        #expect(Self.sent(again).first?.questions.first?.recordClass.rawValue == 0x8001, "starts over with a first probe")
        #expect(low.service.instance == "Printer", "a lost tie-break keeps the name")

        var high = Self.probing(Self.service(port: 632))
        #expect(high.received(try probe(of: Self.service(port: 631)), now: clock).isEmpty)
    }

    @Test("the record order of §8.2: class, type, then RDATA; a longer set that agrees so far is later")
    func compareOrder() throws {
        let name = try DNSName("x.local.")
        let a = DNSResourceRecord(name: name, type: .a, ttl: 120, data: .a(DNSIPv4Address(rawValue: 0x0A00_0001)))
        let b = DNSResourceRecord(name: name, type: .a, ttl: 120, data: .a(DNSIPv4Address(rawValue: 0x0A00_0002)))
        let txt = DNSResourceRecord(name: name, type: .txt, ttl: 120, data: .txt([[0x61]]))
        #expect(ServiceRegistration.compare([a], [b]) < 0)
        #expect(ServiceRegistration.compare([b], [a]) > 0)
        #expect(ServiceRegistration.compare([a, b], [b, a]) == 0, "each set is sorted first")
        #expect(ServiceRegistration.compare([a], [a, txt]) < 0)
        var flushed = a
        flushed.recordClass = DNSClass(rawValue: 0x8001)
        #expect(ServiceRegistration.compare([flushed], [a]) == 0, "the cache-flush bit is not part of the class")
    }

    @Test("a conflict after the announcements probes the same name again first; a second conflict renames")
    func conflictAfterRegistration() throws {
        var registration = ServiceRegistration(service: Self.service())
        var clock = Self.start
        _ = Self.register(&registration, clock: &clock)
        let theirs = try Self.claim(by: Self.service(port: 1))
        #expect(registration.received(theirs, now: clock) == [.wake(after: .zero)])
        #expect(registration.service.instance == "Printer")
        _ = registration.wake(now: clock)
        _ = registration.received(theirs, now: clock)
        #expect(registration.service.instance == "Printer (2)")
    }

    @Test("15 conflicts within 10 seconds pause probing for 5 seconds")
    func conflictRateLimit() throws {
        var registration = ServiceRegistration(service: Self.service())
        _ = registration.start(initialDelay: .zero)
        var last: [Action] = []
        for index in 0..<15 {
            let now = Self.start + .milliseconds(Int64(index) * 100)
            _ = registration.wake(now: now)
            // Whatever the instance is called by now, another host claims it.
            let theirs = try Self.claim(by: Self.service(registration.service.instance, port: 1))
            last = registration.received(theirs, now: now)
            if index < 14 { #expect(last == [.wake(after: .zero)], "conflict \(index + 1)") }
        }
        #expect(last == [.wake(after: .seconds(5))])
    }

    @Test("cancelling after the announcement sends every record with TTL 0 and no cache-flush bit")
    func goodbye() {
        var registration = ServiceRegistration(service: Self.service())
        var clock = Self.start
        _ = Self.register(&registration, clock: &clock)
        let goodbye = Self.sent(registration.cancel())
        #expect(goodbye.count == 1)
        #expect(goodbye.first?.answers.count == 4)
        #expect(goodbye.first?.answers.allSatisfy { $0.ttl == 0 && $0.recordClass == .internet } == true)
        #expect(registration.wake(now: clock + .seconds(5)).isEmpty)
    }

    @Test("renaming: \"Name\" → \"Name (2)\" → \"Name (3)\", \"(9)\" → \"(10)\", within 63 bytes")
    func renaming() {
        #expect(MDNSService.renamed("Printer") == "Printer (2)")
        #expect(MDNSService.renamed("Printer (2)") == "Printer (3)")
        #expect(MDNSService.renamed("Printer (9)") == "Printer (10)")
        #expect(MDNSService.renamed("Printer (1)") == "Printer (1) (2)", "(1) is part of the name")
        #expect(MDNSService.renamed("(2)") == "(2) (2)")
        let long = String(repeating: "é", count: 31)   // 62 bytes
        let renamed = MDNSService.renamed(long)
        #expect(renamed.utf8.count <= 63 && renamed.hasSuffix(" (2)"))
    }
}
