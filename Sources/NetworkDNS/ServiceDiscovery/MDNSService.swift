/// One DNS-SD service instance as an mDNS responder advertises it (RFC 6763 §4–§7): an instance
/// name of any UTF-8 (one label), a service type (`_ipp._tcp`), a domain (`local.`), the host that
/// runs it, its port and its TXT record.
package struct MDNSService: Equatable, Sendable {
    /// The instance label ("Living Room Printer"): at most 63 bytes of UTF-8.
    package var instance: String
    /// The service type, `_name._tcp` or `_name._udp`.
    package var type: String
    package var domain: String
    /// The host name the SRV record points at (`linux.local.`).
    package var host: DNSName
    package var port: UInt16
    package var txt: DNSSDTXTAttributes

    /// Records whose name is tied to a host's address or service instance: two minutes, as
    /// RFC 6762 §10 recommends.
    package static let hostRecordTTL: UInt32 = 120
    /// Everything else (PTR, TXT): 75 minutes.
    package static let otherRecordTTL: UInt32 = 4500

    package init(instance: String, type: String, domain: String = "local.", host: DNSName, port: UInt16, txt: DNSSDTXTAttributes = DNSSDTXTAttributes()) {
        self.instance = instance
        self.type = type
        self.domain = domain
        self.host = host
        self.port = port
        self.txt = txt
    }

    /// `_type._proto.domain.`
    package var typeName: DNSName {
        get throws(DNSWireError) { try DNSName(type).appending(DNSName(domain)) }
    }

    /// `instance._type._proto.domain.` (the instance is one label, dots and spaces included).
    package var instanceName: DNSName {
        get throws(DNSWireError) { try DNSName(labels: [Array(instance.utf8)]).appending(typeName) }
    }

    /// The records that advertise the service: the shared PTRs that browsing finds
    /// (`_services._dns-sd._udp` → type, type → instance) and the instance's own SRV and TXT,
    /// which are unique to it (the ones probing claims).
    package func records() throws(DNSWireError) -> [MDNSRecord] {
        let instanceName = try instanceName
        let typeName = try typeName
        let enumeration = try DNSName("_services._dns-sd._udp").appending(DNSName(domain))
        return [
            MDNSRecord(DNSResourceRecord(name: instanceName, type: .srv, ttl: Self.hostRecordTTL,
                                         data: .srv(DNSServiceRecord(priority: 0, weight: 0, port: port, target: host))), unique: true),
            MDNSRecord(DNSResourceRecord(name: instanceName, type: .txt, ttl: Self.otherRecordTTL,
                                         data: .txt(txt.strings)), unique: true),
            MDNSRecord(DNSResourceRecord(name: typeName, type: .ptr, ttl: Self.otherRecordTTL, data: .ptr(instanceName)), unique: false),
            MDNSRecord(DNSResourceRecord(name: enumeration, type: .ptr, ttl: Self.otherRecordTTL, data: .ptr(typeName)), unique: false),
        ]
    }

    /// The next name to try after a conflict: "Name" becomes "Name (2)", "Name (2)" becomes
    /// "Name (3)" (the form mDNSResponder and Avahi use), the base shortened at a character
    /// boundary when the label would exceed 63 bytes.
    package static func renamed(_ instance: String) -> String {
        var base = instance
        var number = 2
        if instance.hasSuffix(")"), let open = instance.lastIndex(of: "("),
            open > instance.startIndex, instance[instance.index(before: open)] == " ",
            let current = Int(instance[instance.index(after: open)..<instance.index(before: instance.endIndex)]), current >= 2
        {
            base = String(instance[..<instance.index(before: open)])
            number = current + 1
        }
        let suffix = " (\(number))"
        while base.utf8.count + suffix.utf8.count > DNSName.maximumLabelLength, !base.isEmpty {
            base.removeLast()
        }
        return base + suffix
    }
}

/// A record an mDNS responder owns: unique ones (SRV, TXT, addresses) are claimed by probing and
/// carry the cache-flush bit in responses; shared ones (PTR) may have many owners.
package struct MDNSRecord: Equatable, Sendable {
    package var record: DNSResourceRecord
    package var unique: Bool

    package init(_ record: DNSResourceRecord, unique: Bool) {
        self.record = record
        self.unique = unique
    }

    /// The class with the cache-flush bit (RFC 6762 §10.2), for the answers of a response.
    package var responseRecord: DNSResourceRecord {
        var record = record
        if unique { record.recordClass = record.recordClass.withMDNSBit }
        return record
    }
}
