/// One entry of the question section.
package struct DNSQuestion: Hashable, Sendable {
    /// The name asked about.
    package var name: DNSName
    /// The QTYPE.
    package var type: DNSRecordType
    /// The QCLASS (IN).
    package var recordClass: DNSClass

    /// A question, class IN unless given.
    package init(name: DNSName, type: DNSRecordType, recordClass: DNSClass = .internet) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
    }

    /// Whether a response's question answers this one: same type and class, name equal up to
    /// ASCII case (a server may echo the case back differently; RFC 4343).
    package func matches(_ other: DNSQuestion) -> Bool {
        type == other.type && recordClass == other.recordClass && name.equalsIgnoringCase(other.name)
    }
}
