/// A cursor over a whole DNS message. Every read checks bounds against `limit` (the end of the
/// message, or of the RDATA being decoded) and throws instead of trapping.
struct DNSReader {
    /// The whole message: compression pointers may point anywhere before them.
    let bytes: [UInt8]
    /// Where the next read starts.
    var offset: Int
    /// Reads may not go past this index (exclusive).
    var limit: Int

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
        self.limit = bytes.count
    }

    var remaining: Int { limit - offset }

    mutating func readUInt8() throws(DNSWireError) -> UInt8 {
        guard offset < limit else { throw .truncated(offset: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt16() throws(DNSWireError) -> UInt16 {
        guard limit - offset >= 2 else { throw .truncated(offset: offset) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func readUInt32() throws(DNSWireError) -> UInt32 {
        guard limit - offset >= 4 else { throw .truncated(offset: offset) }
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    mutating func readBytes(_ count: Int) throws(DNSWireError) -> [UInt8] {
        guard count >= 0, limit - offset >= count else { throw .truncated(offset: offset) }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// Reads a possibly compressed name. Each compression pointer must point strictly before
    /// the previous jump origin, so the walk always terminates: loops and forward pointers are
    /// rejected rather than followed.
    mutating func readName() throws(DNSWireError) -> DNSName {
        var labels: [[UInt8]] = []
        var wireLength = 1  // the root label
        var position = offset
        var positionLimit = limit
        var jumped = false
        var pointerCeiling = offset
        while true {
            guard position < positionLimit else { throw .truncated(offset: position) }
            let length = bytes[position]
            switch length & 0xC0 {
            case 0x00:
                if length == 0 {
                    position += 1
                    if !jumped { offset = position }
                    return DNSName(validatedLabels: labels)
                }
                let count = Int(length)
                guard positionLimit - position - 1 >= count else { throw .truncated(offset: position) }
                wireLength += count + 1
                guard wireLength <= DNSName.maximumWireLength else { throw .nameTooLong }
                labels.append(Array(bytes[position + 1..<position + 1 + count]))
                position += 1 + count
            case 0xC0:
                guard positionLimit - position >= 2 else { throw .truncated(offset: position) }
                let target = Int(length & 0x3F) << 8 | Int(bytes[position + 1])
                guard target < pointerCeiling, target < position else {
                    throw .invalidCompressionPointer(offset: position)
                }
                if !jumped { offset = position + 2 }
                jumped = true
                pointerCeiling = target
                position = target
                // A pointer may lead out of the RDATA window into the earlier message.
                positionLimit = bytes.count
            default:
                throw .unsupportedLabelType(offset: position)
            }
        }
    }
}
