#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Counts the bytes one Duktape heap holds and refuses allocations past its cap.
///
/// Duktape reports a refused allocation as a catchable `RangeError` (after a garbage collection
/// retry), so a script that allocates without bound fails its call instead of taking the process
/// down. The counters are atomics only so other threads (tests, logs) may read them; the engine
/// calls in from one thread at a time.
final class DuktapeMemoryBudget: Sendable {
    /// The most bytes the heap may hold.
    let limit: Int
    private let used = Atomic<Int>(0)
    private let peak = Atomic<Int>(0)
    private let refusals = Atomic<Int>(0)
    // Set once the evaluator gave up on the heap (time limit): every further request for memory
    // fails, so a runaway script that allocates is stopped by Duktape's own error path.
    private let poisoned = Atomic<Bool>(false)

    /// A budget of `limit` bytes, none used yet.
    init(limit: Int) {
        self.limit = limit
    }

    /// Bytes held now, as Duktape asked for them.
    var bytesInUse: Int { used.load(ordering: .relaxed) }
    /// The most bytes held at any time.
    var peakBytes: Int { peak.load(ordering: .relaxed) }
    /// How many allocations were refused so far; a rise during a call means the call hit the cap.
    var refusedAllocations: Int { refusals.load(ordering: .relaxed) }

    /// True once the evaluator gave up on this heap.
    var isPoisoned: Bool { poisoned.load(ordering: .relaxed) }

    /// Makes every later allocation fail.
    func poison() {
        poisoned.store(true, ordering: .relaxed)
    }

    // Each block carries its size in a header just before the pointer Duktape sees, so freeing
    // and resizing can be accounted exactly. 16 bytes keep the block as aligned as malloc's.
    private static let header = 16

    /// A new block of `size` bytes, or nil when the cap (or poisoning) refuses it.
    func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
        guard admits(growth: size), let base = malloc(size + Self.header) else { return nil }
        base.storeBytes(of: size, as: Int.self)
        account(size)
        return base + Self.header
    }

    /// Resizes a block with realloc's contract; nil (old block intact) when growth is refused.
    func reallocate(_ pointer: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer? {
        guard let pointer else { return allocate(size) }
        if size == 0 {
            release(pointer)
            return nil
        }
        let base = pointer - Self.header
        let old = base.load(as: Int.self)
        // Shrinking always succeeds; only growth counts against the cap. On refusal the old block
        // stays valid, as realloc's contract says.
        guard size <= old || admits(growth: size - old) else { return nil }
        guard let moved = realloc(base, size + Self.header) else { return nil }
        moved.storeBytes(of: size, as: Int.self)
        account(size - old)
        return moved + Self.header
    }

    /// Frees a block and returns its bytes to the budget.
    func release(_ pointer: UnsafeMutableRawPointer?) {
        guard let pointer else { return }
        let base = pointer - Self.header
        account(-base.load(as: Int.self))
        free(base)
    }

    /// Whether `growth` more bytes fit; counts a refusal when not.
    private func admits(growth: Int) -> Bool {
        if poisoned.load(ordering: .relaxed) || used.load(ordering: .relaxed) + growth > limit {
            refusals.add(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Adds `delta` to the bytes in use and keeps the peak.
    private func account(_ delta: Int) {
        let now = used.add(delta, ordering: .relaxed).newValue
        if now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
    }
}
