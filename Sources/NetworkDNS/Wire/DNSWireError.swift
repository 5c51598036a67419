/// Why a DNS message could not be decoded (or a name built). Every malformed or hostile input
/// ends in one of these; the codec never traps on bytes it did not produce itself.
package enum DNSWireError: Error, Equatable, Sendable {
    /// A read would go past the end of the message (or of the record's RDATA).
    case truncated(offset: Int)
    /// A label longer than 63 octets.
    case labelTooLong
    /// A name longer than 255 octets in wire form.
    case nameTooLong
    /// A compression pointer that points at or after itself (covers loops and forward jumps).
    case invalidCompressionPointer(offset: Int)
    /// Label types 0b01 and 0b10 (RFC 6891 extended labels, obsolete bitstrings).
    case unsupportedLabelType(offset: Int)
    /// An empty label inside a name given as text ("a..b").
    case emptyLabel
    /// Section counts that cannot fit in the bytes that are left.
    case countExceedsMessage
    /// RDATA whose content does not match its declared length or its type's layout.
    case malformedRecordData(type: UInt16)
    /// Bytes left over after the last section.
    case trailingBytes
}
