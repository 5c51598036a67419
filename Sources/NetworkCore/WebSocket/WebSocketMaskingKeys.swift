import NIOCore
import NIOWebSocket
import NetworkSystem

/// A client's masking keys (RFC 6455 section 5.3: unpredictable, one per frame), taken from a
/// block of the kernel's random bytes: one `getrandom(2)` per `keysPerBlock` frames instead of
/// one per frame (`WebSocketMaskingKey.random()` asks the kernel every time: 3–4 % of a small
/// message's client CPU). The bytes are the kernel's CSPRNG output, used once each.
struct WebSocketMaskingKeys {
    /// 256 bytes: what one getentropy(3) call gives (`SystemEntropy`).
    static let keysPerBlock = 64

    private var block: [UInt8] = []
    private var next = 0

    /// The next key; refills the block when it is used up.
    mutating func take() -> WebSocketMaskingKey {
        if next + 4 > block.count { refill() }
        var word = BlockWord(word: block.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: next, as: UInt32.self) })
        next += 4
        // (NIO's key from a collection is generic and not inlinable: unspecialized, it cost four
        // allocations per key. Its inlinable `random(using:)` asks a generator for the whole
        // 32-bit range, which takes one value as it is.)
        return .random(using: &word)
    }

    private mutating func refill() {
        var fresh = [UInt8](repeating: 0, count: Self.keysPerBlock * 4)
        let filled = fresh.withUnsafeMutableBytes { bytes -> Bool in
            guard let base = bytes.baseAddress else { return false }
            return SystemEntropy.fill(base, count: bytes.count)
        }
        if !filled {
            // (The kernel refused, which it does not once seeded: the standard generator then.)
            var generator = SystemRandomNumberGenerator()
            for index in fresh.indices { fresh[index] = generator.next() }
        }
        block = fresh
        next = 0
    }
}

/// Four of the block's bytes as a generator, for `WebSocketMaskingKey.random(using:)`.
private struct BlockWord: RandomNumberGenerator {
    let word: UInt32

    mutating func next() -> UInt64 {
        UInt64(word) | UInt64(word) << 32
    }
}
