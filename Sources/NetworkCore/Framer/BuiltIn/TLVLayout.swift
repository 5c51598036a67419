import NIOCore

/// The header the built-in framers put before each message: a type of `typeWidth` bytes, then
/// the body's length in `lengthWidth` bytes, both unsigned and big-endian (network byte order).
///
/// - TLV: a 4-byte type and a 4-byte length by default (`tlv`); the 2025 API's
///   `TLV(type:length:)` chooses other unsigned widths.
/// - Coder over a stream: no type, a 4-byte length (`lengthPrefixed`).
package struct TLVLayout: Sendable, Hashable {
    /// Bytes of the type field: 0 (none), 1, 2, 4 or 8.
    package let typeWidth: Int
    /// Bytes of the length field: 1, 2, 4 or 8.
    package let lengthWidth: Int

    /// A layout with these widths, or nil when one is not a width an unsigned integer has.
    package init?(typeWidth: Int, lengthWidth: Int) {
        guard [0, 1, 2, 4, 8].contains(typeWidth), [1, 2, 4, 8].contains(lengthWidth) else { return nil }
        self.typeWidth = typeWidth
        self.lengthWidth = lengthWidth
    }

    private init(checkedTypeWidth typeWidth: Int, lengthWidth: Int) {
        self.typeWidth = typeWidth
        self.lengthWidth = lengthWidth
    }

    /// TLV's default: UInt32 type, UInt32 length.
    package static let tlv = TLVLayout(checkedTypeWidth: 4, lengthWidth: 4)
    /// The Coder's stream framing: a UInt32 length before each encoded value.
    package static let lengthPrefixed = TLVLayout(checkedTypeWidth: 0, lengthWidth: 4)

    /// Bytes before each body.
    package var headerSize: Int { typeWidth + lengthWidth }

    /// Whether messages carry a type.
    package var hasType: Bool { typeWidth > 0 }

    /// Reads a header from the first `headerSize` bytes of `bytes` (nil when there are fewer).
    package func decodeHeader(_ bytes: UnsafeRawBufferPointer) -> (type: UInt64, length: UInt64)? {
        guard bytes.count >= headerSize else { return nil }
        return (Self.integer(bytes, from: 0, width: typeWidth), Self.integer(bytes, from: typeWidth, width: lengthWidth))
    }

    /// The header of a message of `type` and `length`; nil when either does not fit its field.
    package func encodeHeader(type: UInt64, length: UInt64) -> ByteBuffer? {
        guard Self.fits(type, width: typeWidth), Self.fits(length, width: lengthWidth) else { return nil }
        var header = ByteBufferAllocator().buffer(capacity: headerSize)
        Self.write(type, width: typeWidth, to: &header)
        Self.write(length, width: lengthWidth, to: &header)
        return header
    }

    private static func fits(_ value: UInt64, width: Int) -> Bool {
        width >= 8 || value < (1 << (8 * width))
    }

    private static func integer(_ bytes: UnsafeRawBufferPointer, from start: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in start..<(start + width) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    private static func write(_ value: UInt64, width: Int, to buffer: inout ByteBuffer) {
        for shift in stride(from: 8 * (width - 1), through: 0, by: -8) {
            buffer.writeInteger(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
