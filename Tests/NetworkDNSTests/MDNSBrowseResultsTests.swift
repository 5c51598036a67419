import NIOCore
import Testing

@testable import NetworkDNS

/// `MDNSBrowseResults`: browse results across interfaces from cache changes, and the whole value
/// pipeline (a registration's announcement → a cache → a browse, then its goodbye). Messages pass
/// as values, never through a socket, so nothing here needs a network namespace.
@Suite("DNS.MDNSBrowseResults")
struct MDNSBrowseResultsTests {
    typealias Change = MDNSBrowseResults.Change
    static let type = try! DNSName("_ipp._tcp.local.")

    static func ptr(_ instance: String) -> DNSResourceRecord {
        DNSResourceRecord(name: type, type: .ptr, ttl: 4500, data: .ptr(try! DNSName(labels: [Array(instance.utf8)]).appending(type)))
    }

    static func txt(_ instance: String, _ pairs: [String]) -> DNSResourceRecord {
        DNSResourceRecord(
            name: try! DNSName(labels: [Array(instance.utf8)]).appending(type), type: .txt, ttl: 4500,
            data: .txt(pairs.map { Array($0.utf8) }))
    }

    static func attributes(_ pairs: [String]) -> DNSSDTXTAttributes {
        DNSSDTXTAttributes(wire: pairs.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) })
    }

    static let printer = MDNSBrowseResults.Instance(name: "My.Printer", type: "_ipp._tcp", domain: "local.")

    @Test("an instance found on one interface, then another, then its TXT record; lost on one, then on all")
    func acrossInterfaces() {
        var browse = MDNSBrowseResults(typeName: Self.type, includesTXT: true)
        let one = MDNSBrowseResults.Result(instance: Self.printer, interfaces: [2], txt: nil)
        #expect(browse.apply([.added(Self.ptr("My.Printer"))], interface: 2) == [.added(one)])
        let two = MDNSBrowseResults.Result(instance: Self.printer, interfaces: [2, 3], txt: nil)
        #expect(browse.apply([.added(Self.ptr("My.Printer"))], interface: 3)
            == [.changed(old: one, new: two, interfacesAdded: true, interfacesRemoved: false, metadataChanged: false)])
        var withTXT = two
        withTXT.txt = Self.attributes(["rp=ipp/print"])
        #expect(browse.apply([.added(Self.txt("My.Printer", ["rp=ipp/print"]))], interface: 3)
            == [.changed(old: two, new: withTXT, interfacesAdded: false, interfacesRemoved: false, metadataChanged: true)])
        var onThree = withTXT
        onThree.interfaces = [3]
        #expect(browse.apply([.removed(Self.ptr("My.Printer"))], interface: 2)
            == [.changed(old: withTXT, new: onThree, interfacesAdded: false, interfacesRemoved: true, metadataChanged: false)])
        #expect(browse.apply([.removed(Self.ptr("My.Printer"))], interface: 3) == [.removed(onThree)])
        #expect(browse.results.isEmpty)
    }

    @Test("a TXT record that came before the PTR is the result's metadata; without includesTXT records carry none")
    func txtFirst() {
        var browse = MDNSBrowseResults(typeName: Self.type, includesTXT: true)
        #expect(browse.apply([.added(Self.txt("A", ["v=1"]))], interface: 1).isEmpty)
        #expect(browse.apply([.added(Self.ptr("A"))], interface: 1).first
            == .added(MDNSBrowseResults.Result(instance: .init(name: "A", type: "_ipp._tcp", domain: "local."), interfaces: [1], txt: Self.attributes(["v=1"]))))
        var plain = MDNSBrowseResults(typeName: Self.type, includesTXT: false)
        _ = plain.apply([.added(Self.ptr("A"))], interface: 1)
        #expect(plain.apply([.added(Self.txt("A", ["v=1"]))], interface: 1).isEmpty)
        #expect(plain.results.first?.txt == nil)
    }

    @Test("PTRs of other types, or to names not directly under the type, are not results")
    func unrelated() throws {
        var browse = MDNSBrowseResults(typeName: Self.type, includesTXT: false)
        let other = DNSResourceRecord(
            name: try DNSName("_http._tcp.local."), type: .ptr, ttl: 4500, data: .ptr(try DNSName("x._http._tcp.local.")))
        let deeper = DNSResourceRecord(name: Self.type, type: .ptr, ttl: 4500, data: .ptr(try DNSName("a.b._ipp._tcp.local.")))
        let elsewhere = DNSResourceRecord(name: Self.type, type: .ptr, ttl: 4500, data: .ptr(try DNSName("a._ipp._udp.local.")))
        #expect(browse.apply([.added(other), .added(deeper), .added(elsewhere)], interface: 1).isEmpty)
    }

    @Test("end to end in values: a registration's announcement fills a cache the browse reads; its goodbye removes the result a second later")
    func pipeline() throws {
        var txt = DNSSDTXTAttributes()
        txt.set(.bytes(Array("1".utf8)), for: "txtvers")
        var registration = MDNSRegistration(service: MDNSService(instance: "Printer", type: "_ipp._tcp", host: try DNSName("linux.local."), port: 631, txt: txt))
        var clock = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var announcements: [DNSMessage] = []
        var actions = registration.start(initialDelay: .zero)
        for _ in 0..<4 {
            actions = registration.wake(now: clock)
            announcements += actions.compactMap { if case .send(let m) = $0, m.header.isResponse { return m } else { return nil } }
            clock = clock + .milliseconds(250)
        }
        let announcement = try #require(announcements.first)
        var cache = MDNSCache()
        var browse = MDNSBrowseResults(typeName: Self.type, includesTXT: true)
        let added = browse.apply(cache.insert(announcement.answers + announcement.additionals, now: clock), interface: 4)
        let result = MDNSBrowseResults.Result(instance: .init(name: "Printer", type: "_ipp._tcp", domain: "local."), interfaces: [4], txt: txt)
        #expect(added == [.added(result)])
        let goodbye = try #require(registration.cancel().compactMap { if case .send(let m) = $0 { return m } else { return nil } }.first)
        #expect(browse.apply(cache.insert(goodbye.answers, now: clock + .seconds(2)), interface: 4).isEmpty)
        #expect(browse.apply(cache.expire(now: clock + .seconds(3)), interface: 4) == [.removed(result)])
    }
}
