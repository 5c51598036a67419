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
        let word = block.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: next, as: UInt32.self) }
        next += 4
        // (Four bytes always make a key.)
        return WebSocketMaskingKey(FourBytes(word)) ?? .random()
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

/// A key's four bytes as a collection NIO's key initializer takes without an array.
private struct FourBytes: RandomAccessCollection {
    let word: UInt32

    init(_ word: UInt32) {
        self.word = word
    }

    var startIndex: Int { 0 }
    var endIndex: Int { 4 }

    subscript(position: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: word >> (8 * UInt32(position)))
    }
}
