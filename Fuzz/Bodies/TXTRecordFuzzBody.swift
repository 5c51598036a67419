import NetworkDNS

/// The DNS-SD TXT record decoder (`DNSSDTXTAttributes(wire:)`), which reads what any host on the
/// link advertises. Whatever it keeps is a record we could send ourselves: valid keys, no key
/// twice (in any letter case), every string within 255 bytes; and that record encoded and decoded
/// again is the same, attribute for attribute, in the same order.
enum TXTRecordFuzzBody {
    static func run(_ bytes: [UInt8]) {
        let record = DNSSDTXTAttributes(wire: bytes)
        var seen = Set<String>()
        for attribute in record.attributes {
            FuzzFailure.check(DNSSDTXTAttributes.isValidKey(attribute.key), "kept an invalid key \(attribute.key.debugDescription)")
            FuzzFailure.check(seen.insert(attribute.key.lowercased()).inserted, "kept the key \(attribute.key) twice")
            FuzzFailure.check(record.value(for: attribute.key.uppercased()) == attribute.value, "lookup of \(attribute.key) in upper case")
        }
        let again = DNSSDTXTAttributes(wire: record.wire)
        FuzzFailure.check(again.attributes == record.attributes, "re-encoded record reads back differently: \(record.attributes) vs \(again.attributes)")
    }
}
