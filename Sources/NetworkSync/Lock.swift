import Synchronization

#if NETWORK_TSAN
import CThreadSanitizer
#endif

/// A lock around a value, as `Synchronization.Mutex` is, and one that ThreadSanitizer understands.
///
/// On Linux, `Mutex` hands a contended lock to the next thread inside the kernel (a
/// priority-inheriting futex), where ThreadSanitizer cannot see it: every access made under such
/// a lock then looks like a data race, and real races drown among them. In a thread-sanitized
/// build this lock also tells the sanitizer, at each hand-over, that the next holder sees what the
/// last one wrote. That build is the one compiled with `-DNETWORK_TSAN` (scripts/sanitizers.sh);
/// in any other the annotations are not compiled at all: the lock is a `Mutex` and nothing more,
/// with the same size and, once inlined, the same code.
///
/// Store it in a `let`, as a `Mutex`: the sanitizer knows the lock by its address.
///
/// Public, though only this package uses it: Swift 6.3 does not specialize a `package`
/// `@inlinable` generic in other modules, so with `package` every `withLock` call was a generic
/// call that looked up type metadata at run time (measured: about 10 % of a framed-message
/// client's time, in every flow operation). Nothing in the `Network` module exposes it.
public struct Lock<Value: ~Copyable>: ~Copyable {
    @usableFromInline
    let mutex: Mutex<Value>

    /// A lock around `initialValue`.
    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value, and returns what it returns.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if NETWORK_TSAN
        // The mutex is address-only (its storage is raw memory), so a borrow of it is its real,
        // stable address: used as the sanitizer's name for this lock, never dereferenced.
        let address = withUnsafePointer(to: mutex) { UnsafeMutableRawPointer(mutating: $0) }
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            __tsan_acquire(address)
            defer { __tsan_release(address) }
            return try body(&value)
        }
        #else
        return try mutex.withLock(body)
        #endif
    }
}

extension Lock: Sendable where Value: ~Copyable {}
