/// One resource record of the answer, authority or additional section.
package struct DNSResourceRecord: Hashable, Sendable {
    /// The owner name.
    package var name: DNSName
    /// The record's TYPE (for unknown types `data` is `.raw`).
    package var type: DNSRecordType
    /// For OPT this carries the requestor's UDP payload size instead of a class.
    package var recordClass: DNSClass
    /// For OPT this carries the extended RCODE, version and flags instead of a TTL.
    package var ttl: UInt32
    /// The decoded RDATA.
    package var data: DNSRecordData

    /// A record, class IN unless given.
    package init(name: DNSName, type: DNSRecordType, recordClass: DNSClass = .internet, ttl: UInt32, data: DNSRecordData) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
        self.ttl = ttl
        self.data = data
    }

    /// The record that advertises EDNS(0) support and the largest UDP reply we accept.
    package static func edns(payloadSize: UInt16, options: [DNSEDNSOption] = []) -> DNSResourceRecord {
        DNSResourceRecord(name: .root, type: .opt, recordClass: DNSClass(rawValue: payloadSize), ttl: 0, data: .opt(options))
    }
}
