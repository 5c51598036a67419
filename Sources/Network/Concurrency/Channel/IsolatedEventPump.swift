import NetworkSync

/// Delivers events to handlers marked `@isolated(any)` one at a time, in the order they were
/// produced: a task per owner awaits each handler in its own isolation (the main actor's, for
/// a handler written in main-actor code). The task holds the owner weakly and ends when the
/// pump goes away, so neither outlives the object the handlers observe.
final class IsolatedEventPump<Owner: AnyObject & Sendable>: Sendable {
    typealias Work = @Sendable (Owner) async -> Void

    private let continuation: AsyncStream<Work>.Continuation

    init(owner: Owner) {
        let (stream, continuation) = AsyncStream.makeStream(of: Work.self)
        self.continuation = continuation
        let weakOwner = WeakReference(owner)
        Task {
            for await work in stream {
                guard let owner = weakOwner.value else { break }
                await work(owner)
            }
            // (Work left in the stream is dropped with it: its continuations resumed by no one
            // are only those of `drain`, whose callers hold the owner, so the loop reached them.)
        }
    }

    /// Queues `work` behind the events before it.
    func enqueue(_ work: @escaping Work) {
        continuation.yield(work)
    }

    /// Returns once every event queued before the call has been handled (or dropped, when the
    /// owner went away).
    func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let work: Work = { _ in continuation.resume() }
            if case .terminated = self.continuation.yield(work) { continuation.resume() }
        }
    }

    deinit {
        continuation.finish()
    }
}

/// A weak reference that may be read from any thread.
final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private let reference: Lock<Weak>

    private struct Weak: @unchecked Sendable {
        // (`Object` is Sendable; the box only makes the weak storage readable under the lock.)
        weak var object: Object?
    }

    init(_ object: Object) {
        reference = Lock(Weak(object: object))
    }

    var value: Object? { reference.withLock { $0.object } }
}

/// The event pump of one object, made with its first observer (most objects never get one).
final class LazyEventPump<Owner: AnyObject & Sendable>: Sendable {
    private let pump = Lock<IsolatedEventPump<Owner>?>(nil)

    init() {}

    /// The pump if one was made.
    var existing: IsolatedEventPump<Owner>? { pump.withLock { $0 } }

    /// The pump, made now for `owner` if there is none yet.
    func pump(for owner: Owner) -> IsolatedEventPump<Owner> {
        pump.withLock { pump in
            if let pump { return pump }
            let made = IsolatedEventPump(owner: owner)
            pump = made
            return made
        }
    }
}
