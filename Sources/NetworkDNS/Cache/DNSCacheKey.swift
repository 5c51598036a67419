/// What the cache is keyed by: the lowercased name, the type and the class, so "Example.COM"
/// and "example.com" share an entry.
package struct DNSCacheKey: Hashable, Sendable {
    package let name: DNSName
    package let type: DNSRecordType
    package let recordClass: DNSClass

    package init(_ question: DNSQuestion) {
        name = question.name.lowercased()
        type = question.type
        recordClass = question.recordClass
    }
}
