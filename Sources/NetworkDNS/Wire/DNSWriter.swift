/// Builds a DNS message, remembering where each name suffix was written so later names can
/// point at it (RFC 1035 section 4.1.4).
struct DNSWriter {
    private(set) var bytes: [UInt8] = []
    /// Suffixes already written, with their offsets (only those below 0x4000 are reachable by
    /// a 14-bit pointer). Matching is exact, not case-folded, so every name keeps the case it
    /// was given (a pointer to "EXAMPLE.com" would rename "example.com").
    private var suffixOffsets: [[[UInt8]]: Int] = [:]

    init() {
        bytes.reserveCapacity(512)
    }

    mutating func write(_ value: UInt8) { bytes.append(value) }

    mutating func write(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    mutating func write(_ value: UInt32) {
        bytes.append(UInt8(value >> 24))
        bytes.append(UInt8((value >> 16) & 0xFF))
        bytes.append(UInt8((value >> 8) & 0xFF))
        bytes.append(UInt8(value & 0xFF))
    }

    mutating func write(bytes more: [UInt8]) { bytes.append(contentsOf: more) }

    /// Writes `name`, replacing its longest already-written suffix with a pointer when
    /// `compress` is set. Names in RDATA of types newer than RFC 1035 must not be compressed
    /// (RFC 3597 section 4), so the caller decides.
    mutating func write(name: DNSName, compress: Bool) {
        for index in name.labels.indices {
            let suffix = Array(name.labels[index...])
            if compress, let target = suffixOffsets[suffix] {
                write(UInt16(0xC000) | UInt16(target))
                return
            }
            if bytes.count < 0x4000, suffixOffsets[suffix] == nil {
                suffixOffsets[suffix] = bytes.count
            }
            bytes.append(UInt8(name.labels[index].count))
            bytes.append(contentsOf: name.labels[index])
        }
        bytes.append(0)
    }

    /// Reserves a 16-bit length, runs `body`, then fills the length in (RDATA, TCP framing).
    mutating func withLengthPrefix(_ body: (inout DNSWriter) -> Void) {
        let start = bytes.count
        write(UInt16(0))
        body(&self)
        let length = bytes.count - start - 2
        bytes[start] = UInt8((length >> 8) & 0xFF)
        bytes[start + 1] = UInt8(length & 0xFF)
    }
}
