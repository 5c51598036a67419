/// What the cache is keyed by: the lowercased name, the type and the class, so "Example.COM"
/// and "example.com" share an entry.
package struct DNSCacheKey: Hashable, Sendable {
    /// The name folded to lower case.
    package let name: DNSName
    /// The record type asked for.
    package let type: DNSRecordType
    /// The class asked for (IN in practice).
    package let recordClass: DNSClass

    /// The key a question is cached under.
    package init(_ question: DNSQuestion) {
        name = question.name.lowercased()
        type = question.type
        recordClass = question.recordClass
    }
}
