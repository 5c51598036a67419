#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The kernel's cryptographically secure random bytes (`getrandom(2)`, through `getentropy(3)`,
/// which blocks only until the pool has been seeded once after boot).
package enum SystemEntropy {
    /// Fills `count` bytes at `bytes`; false if the kernel refuses (the bytes are then
    /// unspecified).
    package static func fill(_ bytes: UnsafeMutableRawPointer, count: Int) -> Bool {
        var filled = 0
        while filled < count {
            // getentropy(3) hands out at most 256 bytes per call.
            let chunk = min(256, count - filled)
            guard getentropy(bytes + filled, chunk) == 0 else { return false }
            filled += chunk
        }
        return true
    }
}
