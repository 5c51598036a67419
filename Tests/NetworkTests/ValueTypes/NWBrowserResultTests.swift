import Foundation
import NetworkDNS
import Testing

@testable import Network

/// `NWBrowser.Result`, its `Change`s and flags as values: what a browse result says, how two of
/// them compare, and the change `init(between:_:)` computes.
@Suite("NWBrowser.Result")
struct NWBrowserResultTests {
    static func result(_ name: String, interfaces: [Int] = [1], txt: [String: String]? = nil) -> NWBrowser.Result {
        var attributes: DNSSDTXTAttributes?
        if let txt {
            var record = DNSSDTXTAttributes()
            for (key, value) in txt { _ = record.set(.bytes(Array(value.utf8)), for: key) }
            attributes = record
        }
        return NWBrowser.Result(MDNSBrowseResults.Result(
            instance: MDNSBrowseResults.Instance(name: name, type: "_nwtest._tcp", domain: "local."), interfaces: interfaces, txt: attributes))
    }

    @Test("a result's endpoint is the service with its received domain; its metadata the TXT record or none; interfaces by index")
    func fields() {
        let plain = Self.result("Printer")
        #expect(plain.endpoint == .service(name: "Printer", type: "_nwtest._tcp", domain: "local.", interface: nil))
        #expect(plain.metadata == .none)
        #expect(plain.interfaces.map(\.index) == [1], "loopback, index 1")
        let withTXT = Self.result("Printer", txt: ["k": "v"])
        #expect(withTXT.metadata == .bonjour(NWTXTRecord(["k": "v"])))
        #expect(withTXT.metadata.debugDescription.contains("k"))
        #expect(NWBrowser.Result.Metadata.none.debugDescription == "none")
    }

    @Test("equality compares everything, hashing only the endpoint: a result that changed keeps its place in a set")
    func equalityAndHashing() {
        let before = Self.result("Printer", txt: ["k": "v"])
        let after = Self.result("Printer", txt: ["k": "w"])
        #expect(before != after)
        #expect(before.hashValue == after.hashValue)
        #expect(Set([before, after]).count == 2)
        #expect(Self.result("Printer") == Self.result("Printer"))
    }

    @Test("Change(between:) gives added, removed, identical and changed with the flags that apply")
    func changeBetween() {
        let a = Self.result("Printer", interfaces: [1])
        #expect(NWBrowser.Result.Change(between: nil, nil) == .identical)
        #expect(NWBrowser.Result.Change(between: nil, a) == .added(a))
        #expect(NWBrowser.Result.Change(between: a, nil) == .removed(a))
        #expect(NWBrowser.Result.Change(between: a, a) == .identical)
        let metadata = Self.result("Printer", interfaces: [1], txt: ["k": "v"])
        #expect(NWBrowser.Result.Change(between: a, metadata) == .changed(old: a, new: metadata, flags: .metadataChanged))
        let other = Self.result("Scanner")
        if case .changed(let old, let new, let flags) = NWBrowser.Result.Change(between: a, other) {
            #expect(old == a && new == other && flags == .identical)
        } else {
            Issue.record("another service is a change of endpoint")
        }
    }

    @Test("flags are an option set with distinct bits; identical is empty")
    func flags() {
        let all: NWBrowser.Result.Change.Flags = [.interfaceAdded, .interfaceRemoved, .metadataChanged]
        #expect(NWBrowser.Result.Change.Flags.identical.isEmpty)
        #expect(all.rawValue == 7)
        #expect(all.contains(.interfaceRemoved))
    }
}
