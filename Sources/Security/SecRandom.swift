import NetworkSystem

/// A handle that names a random number generator.
///
/// Linux offers one cryptographically secure generator, the kernel's, so the only handle in use is
/// ``kSecRandomDefault``.
public typealias SecRandomRef = OpaquePointer

/// The system's default cryptographically secure random number generator (the kernel's
/// `getrandom(2)` pool here).
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` cryptographically secure random bytes.
///
/// The bytes come from the kernel's `getrandom(2)` (through `getentropy(3)`), which blocks only
/// until the pool has been seeded once after boot. Any `rnd` value is accepted and means the system generator.
///
/// - Returns: ``errSecSuccess``, ``errSecParam`` for a negative `count`, or
///   ``errSecInternalComponent`` if the kernel refuses (the bytes are then unspecified).
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count >= 0 else { return errSecParam }
    return SystemEntropy.fill(bytes, count: count) ? errSecSuccess : errSecInternalComponent
}
