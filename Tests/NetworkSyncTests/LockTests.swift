import Glibc
import NetworkSync
import Synchronization
import Testing

/// `Lock`: a `Mutex` that keeps its value and excludes, and whose hand-overs ThreadSanitizer sees
/// (in a thread-sanitized run, `contendedCounter` reports a data race if they are not annotated).
@Suite("NetworkSync.Lock")
struct LockTests {
    /// A value outside the lock that only code holding the lock touches.
    private final class Unguarded: @unchecked Sendable {
        var count = 0
    }

    private struct Failure: Error, Equatable {}

    /// A value that cannot be copied, which the lock takes as `Mutex` does.
    private struct Token: ~Copyable {
        var uses = 0
    }

    @Test("keeps its value across calls and returns what the body returns")
    func keepsValue() {
        let lock = Lock([1, 2])
        let count = lock.withLock { value -> Int in
            value.append(3)
            return value.count
        }
        #expect(count == 3)
        #expect(lock.withLock { $0 } == [1, 2, 3])
    }

    @Test("a body's typed error reaches the caller, and what it changed before throwing stays")
    func rethrowsTypedError() {
        let lock = Lock(0)
        #expect(throws: Failure.self) {
            try lock.withLock { (value: inout Int) throws(Failure) in
                value = 7
                throw Failure()
            }
        }
        #expect(lock.withLock { $0 } == 7)
    }

    @Test("holds a value that cannot be copied")
    func holdsNoncopyableValue() {
        let lock = Lock(Token())
        lock.withLock { $0.uses += 1 }
        #expect(lock.withLock { $0.uses } == 1)
    }

    @Test("takes exactly the room of a Mutex (per-connection memory is measured)")
    func sameLayoutAsMutex() {
        #expect(MemoryLayout<Lock<Int>>.size == MemoryLayout<Mutex<Int>>.size)
        #expect(MemoryLayout<Lock<Int>>.stride == MemoryLayout<Mutex<Int>>.stride)
        #expect(MemoryLayout<Lock<Int>>.alignment == MemoryLayout<Mutex<Int>>.alignment)
        #expect(MemoryLayout<Lock<[UInt8]>>.size == MemoryLayout<Mutex<[UInt8]>>.size)
    }

    @Test("threads that contend for it never lose an update, inside or outside the value")
    func contendedCounter() {
        let lock = Lock(0)
        let unguarded = Unguarded()
        let threads = 4
        let rounds = 20_000
        runOnThreads(threads) {
            for _ in 0..<rounds {
                lock.withLock { value in
                    value += 1
                    unguarded.count += 1
                }
            }
        }
        #expect(lock.withLock { $0 } == threads * rounds)
        #expect(lock.withLock { _ in unguarded.count } == threads * rounds)
    }

    /// Runs `body` on `count` POSIX threads at once and joins them (threads the sanitizer sees
    /// start and end, unlike a dispatch queue's on Linux).
    private func runOnThreads(_ count: Int, _ body: @escaping @Sendable () -> Void) {
        final class Work {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var handles: [pthread_t] = []
        for _ in 0..<count {
            var handle = pthread_t()
            let context = Unmanaged.passRetained(Work(body)).toOpaque()
            let created = pthread_create(&handle, nil, { context in
                let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
                work.body()
                return nil
            }, context)
            #expect(created == 0)
            handles.append(handle)
        }
        for handle in handles {
            pthread_join(handle, nil)
        }
    }
}
