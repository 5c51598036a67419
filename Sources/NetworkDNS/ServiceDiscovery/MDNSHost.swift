/// This host's name in `local.` and its addresses on one interface, as the responder claims
/// them (RFC 6762 §8: probed like a service's SRV and TXT; a conflict renames "linux" to
/// "linux-2", "linux-2" to "linux-3", the form Avahi uses). The SRV records of the services
/// this host advertises point at this name.
package struct MDNSHost: Equatable, Sendable {
    /// The name's first label ("linux").
    package var label: String
    /// This interface's addresses: the A and AAAA records announced here.
    package var addresses: [DNSRecordData]
    /// Every address of this host, on any interface: a record with one of them, heard on this
    /// link, came from us (two interfaces on one network hear each other).
    package var allAddresses: Set<DNSRecordData>

    package init(label: String, addresses: [DNSRecordData], allAddresses: Set<DNSRecordData>) {
        self.label = label
        self.addresses = addresses
        self.allAddresses = allAddresses
    }

    /// `label.local.`
    package var name: DNSName {
        get throws(DNSWireError) { try DNSName(labels: [Array(label.utf8)]).appending(DNSName("local.")) }
    }

    /// The next label after a conflict: "linux" → "linux-2", "linux-2" → "linux-3", shortened
    /// at a character boundary to stay within 63 bytes.
    package static func renamed(_ label: String) -> String {
        var base = label
        var number = 2
        if let dash = label.lastIndex(of: "-"), let current = Int(label[label.index(after: dash)...]), current >= 2 {
            base = String(label[..<dash])
            number = current + 1
        }
        let suffix = "-\(number)"
        while base.utf8.count + suffix.utf8.count > DNSName.maximumLabelLength, !base.isEmpty {
            base.removeLast()
        }
        return base + suffix
    }
}

extension MDNSHost: MDNSClaim {
    package func records() throws(DNSWireError) -> [MDNSRecord] {
        let name = try name
        return addresses.compactMap { data -> MDNSRecord? in
            switch data {
            case .a: return MDNSRecord(DNSResourceRecord(name: name, type: .a, ttl: MDNSService.hostRecordTTL, data: data), unique: true)
            case .aaaa: return MDNSRecord(DNSResourceRecord(name: name, type: .aaaa, ttl: MDNSService.hostRecordTTL, data: data), unique: true)
            default: return nil
            }
        }
    }

    package func renamed() -> MDNSHost {
        var host = self
        host.label = Self.renamed(label)
        return host
    }

    package func owns(_ record: DNSResourceRecord) -> Bool {
        allAddresses.contains(record.data)
    }
}
