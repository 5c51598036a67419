import NIOCore
import NIOWebSocket

/// RFC 6455's masking (each byte XORed with the key's byte at its position modulo 4), eight
/// bytes at a time. NIOWebSocket masks and unmasks byte by byte through an enumerated sequence:
/// in a debug build a 16 MiB message then held its event loop for seconds (every other
/// connection on that loop stalled with it), and in a release build it is the slowest part of
/// a large message's path.
enum WebSocketMasking {
    /// Masks (or unmasks: the operation is its own inverse) `buffer`'s readable bytes from
    /// `offset` on, the first of them with the key's first byte.
    static func apply(_ key: WebSocketMaskingKey, to buffer: inout ByteBuffer, from offset: Int = 0) {
        var pattern: UInt64 = 0
        withUnsafeMutableBytes(of: &pattern) { word in
            for index in 0..<8 { word[index] = key[index % 4] }
        }
        buffer.withUnsafeMutableReadableBytes { bytes in
            guard offset < bytes.count, let base = bytes.baseAddress?.advanced(by: offset) else { return }
            let count = bytes.count - offset
            var index = 0
            // Whole words keep the key's phase: they are a multiple of 4 bytes long.
            while index + 8 <= count {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                base.storeBytes(of: word ^ pattern, toByteOffset: index, as: UInt64.self)
                index += 8
            }
            while index < count {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                base.storeBytes(of: byte ^ key[index % 4], toByteOffset: index, as: UInt8.self)
                index += 1
            }
        }
    }

    /// A received frame's application data, unmasked if the sender masked it.
    static func unmaskedData(of frame: WebSocketFrame) -> ByteBuffer {
        var data = frame.data
        guard let key = frame.maskKey else { return data }
        apply(key, to: &data)
        return data
    }
}
