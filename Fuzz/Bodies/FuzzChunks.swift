/// Splits a fuzz input into the pieces a stream parser receives it in. The split points come
/// from a hash of the bytes themselves, so a corpus file is exactly what crossed the wire (no
/// control bytes in front) and every mutation also moves the boundaries.
enum FuzzChunks {
    /// `bytes` cut into pieces of 1 to 8 bytes, at places that depend on the content.
    static func split(_ bytes: [UInt8]) -> [[UInt8]] {
        // FNV-1a, then xorshift64 for each cut.
        var state: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { state = (state ^ UInt64(byte)) &* 0x100_0000_01B3 }
        if state == 0 { state = 1 }
        var chunks: [[UInt8]] = []
        var start = 0
        while start < bytes.count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let end = min(bytes.count, start + 1 + Int(state % 8))
            chunks.append(Array(bytes[start..<end]))
            start = end
        }
        return chunks
    }
}
