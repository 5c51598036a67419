import Foundation
import NetworkDNS
import Testing

/// DNS-SD TXT record attributes (RFC 6763 §6) as a value type: the wire format against
/// python-zeroconf's encoding, key rules, limits, and what a hostile record decodes to.
@Suite("DNS.TXTAttributes")
struct DNSSDTXTAttributesTests {
    typealias Attribute = DNSSDTXTAttributes.Attribute

    /// python-zeroconf 0.136.2's TXT data for the properties path=/index.html, flag (no value),
    /// empty="", bin=FF 00 01, Case=1 (`ServiceInfo(...).text`, Fuzz/Corpus/capture_txt.py).
    static let zeroconf: [UInt8] = Array(
        hex: "10706174683d2f696e6465782e68746d6c04666c616706656d7074793d0762696e3dff000106436173653d31")

    @Test("python-zeroconf's record decodes to its five attributes, in order, and encodes back to the same bytes")
    func zeroconfRecord() {
        let record = DNSSDTXTAttributes(wire: Self.zeroconf)
        #expect(record.attributes == [
            Attribute(key: "path", value: .bytes(Array("/index.html".utf8))),
            Attribute(key: "flag", value: .none),
            Attribute(key: "empty", value: .bytes([])),
            Attribute(key: "bin", value: .bytes([0xFF, 0x00, 0x01])),
            Attribute(key: "Case", value: .bytes(Array("1".utf8))),
        ])
        #expect(record.wire == Self.zeroconf)
    }

    @Test("an empty record is one zero byte on the wire; zero bytes and nothing both decode to it")
    func emptyRecord() {
        #expect(DNSSDTXTAttributes().wire == [0])
        #expect(DNSSDTXTAttributes(wire: [0]).attributes.isEmpty)
        #expect(DNSSDTXTAttributes(wire: [UInt8]()).attributes.isEmpty)
        #expect(DNSSDTXTAttributes(wire: [0, 0, 0]).attributes.isEmpty)
    }

    @Test("keys: printable ASCII without '=', at least one character; matched in any letter case, replaced in place")
    func keys() {
        var record = DNSSDTXTAttributes()
        for bad in ["", "a=b", "caf\u{E9}", "tab\t", "\u{7F}"] {
            do {
                let done = record.set(.none, for: bad)
                #expect(!done, "\(bad.debugDescription)")
            }
        }
        do {
            let done = record.set(.bytes([1]), for: "One")
            #expect(done)
        }
        do {
            let done = record.set(.none, for: "two")
            #expect(done)
        }
        do {
            let done = record.set(.bytes([2]), for: "ONE")
            #expect(done)
        }
        #expect(record.attributes.map(\.key) == ["ONE", "two"], "replaced where it was, with the new spelling")
        #expect(record.value(for: "one") == .bytes([2]))
        do {
            let done = record.remove("TWO")
            #expect(done)
        }
        do {
            let done = record.remove("two")
            #expect(!done)
        }
        #expect(record.attributes.map(\.key) == ["ONE"])
    }

    @Test("a key=value string may be 255 bytes, not 256")
    func lengthLimit() {
        var record = DNSSDTXTAttributes()
        do {
            let done = record.set(.bytes(Array(repeating: 0x61, count: 253)), for: "k")
            #expect(done)
        }
        do {
            let done = record.set(.bytes(Array(repeating: 0x61, count: 254)), for: "k")
            #expect(!done)
        }
        #expect(record.wire.count == 256 && record.wire[0] == 255)
        #expect(DNSSDTXTAttributes(wire: record.wire) == record)
    }

    @Test("hostile records: a cut string ends the record, an empty key is skipped, the first of a key given twice wins")
    func hostile() {
        // "a=b=c" (value "b=c"), "dup", "DUP" (dropped), "=bad" (no key), then 9 announced, 3 there.
        let bytes: [UInt8] = [5] + Array("a=b=c".utf8) + [3] + Array("dup".utf8) + [3] + Array("DUP".utf8)
            + [4] + Array("=bad".utf8) + [9] + Array("cut".utf8)
        let record = DNSSDTXTAttributes(wire: bytes)
        #expect(record.attributes == [Attribute(key: "a", value: .bytes(Array("b=c".utf8))), Attribute(key: "dup", value: .none)])
        // Non-ASCII and control bytes in a key: that string is skipped, the next still read.
        let odd: [UInt8] = [3, 0xC3, 0xA9, 0x3D, 2, 0x01, 0x78, 1, 0x7A]
        #expect(DNSSDTXTAttributes(wire: odd).attributes == [Attribute(key: "z", value: .none)])
    }

    @Test("equal with the same attributes in any order and key case; different values are not equal")
    func equality() {
        var a = DNSSDTXTAttributes()
        a.set(.bytes([1]), for: "x")
        a.set(.none, for: "Y")
        var b = DNSSDTXTAttributes()
        b.set(.none, for: "y")
        b.set(.bytes([1]), for: "X")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        b.set(.bytes([]), for: "y")
        #expect(a != b)
    }
}

extension Array where Element == UInt8 {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self = bytes
    }
}
