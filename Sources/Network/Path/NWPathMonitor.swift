import Dispatch
import NetworkCore
import NetworkSync

/// Watches the network configuration (links, addresses, routes, through rtnetlink) and reports
/// the path that connections could use: once right after ``start(queue:)``, then whenever it
/// changes. Optionally restricted to one interface type, or excluding some.
public final class NWPathMonitor: CustomDebugStringConvertible, Sendable {
    private let requirements: PathRequirements
    private let state: Lock<State>

    private struct State {
        var queue: DispatchQueue?
        var handler: (@Sendable (NWPath) -> Void)?
        var current = NWPath(status: .unsatisfied)
        /// Paths already delivered at least once (the first delivery always happens).
        var delivered = false
        var subscription: PathSubscription?
        var cancelled = false
        var iterators: [Int: AsyncStream<NWPath>.Continuation] = [:]
        var nextIterator = 0
    }

    /// A monitor of every interface.
    public init() {
        self.requirements = PathRequirements()
        self.state = Lock(State())
    }

    /// A monitor of the interfaces of one type only: its path is satisfied when one of them can
    /// carry traffic.
    public init(requiredInterfaceType: NWInterface.InterfaceType) {
        self.requirements = PathRequirements(requiredType: requiredInterfaceType.systemType)
        self.state = Lock(State())
    }

    /// A monitor that leaves interfaces of the given types out.
    public init(prohibitedInterfaceTypes: [NWInterface.InterfaceType]) {
        self.requirements = PathRequirements(prohibitedTypes: Set(prohibitedInterfaceTypes.map(\.systemType)))
        self.state = Lock(State())
    }

    /// A monitor of the interfaces an Ethernet channel can use (wired Ethernet).
    public static var ethernetChannel: NWPathMonitor {
        NWPathMonitor(requiredInterfaceType: .wiredEthernet)
    }

    /// Starts monitoring; ``pathUpdateHandler`` runs on `queue` with the current path at once,
    /// then on every change. Starting twice, or after ``cancel()``, does nothing. A started
    /// monitor keeps running until ``cancel()``, whether or not anything else references it.
    public final func start(queue: DispatchQueue) {
        let begin = state.withLock { state -> Bool in
            guard state.queue == nil, !state.cancelled else { return false }
            state.queue = queue
            return true
        }
        guard begin else { return }
        // The subscription holds the monitor strongly, as Apple's framework does: a started
        // monitor runs until `cancel()` even when the app keeps no reference (the common
        // "monitor inside an AsyncStream" pattern relies on it). `cancel()` releases it.
        let subscription = PathSubscription { inputs in
            self.update(PathEvaluator.evaluate(inputs, self.requirements))
        }
        // Cancelled meanwhile: the subscription is not kept, and dropping it ends it.
        state.withLock { state in
            if !state.cancelled { state.subscription = subscription }
        }
    }

    /// Stops monitoring for good: no update is delivered after this returns (one already on
    /// the queue may still run), and iterations over the monitor end. The monitor is released
    /// once nothing else references it.
    public final func cancel() {
        let (subscription, iterators) = state.withLock {
            state -> (PathSubscription?, [AsyncStream<NWPath>.Continuation]) in
            state.cancelled = true
            state.handler = nil
            defer {
                state.iterators = [:]
                state.subscription = nil
            }
            return (state.subscription, Array(state.iterators.values))
        }
        subscription?.cancel()
        for iterator in iterators { iterator.finish() }
    }

    /// The queue given to ``start(queue:)``.
    public final var queue: DispatchQueue? { state.withLock { $0.queue } }

    /// The latest path (unsatisfied before the first update). Setting it replaces the value
    /// this property returns until the next update.
    public final var currentPath: NWPath {
        get { state.withLock { $0.current } }
        set { state.withLock { $0.current = newValue } }
    }

    /// Receives the path on the monitor's queue: once after ``start(queue:)``, then on changes.
    @preconcurrency public final var pathUpdateHandler: (@Sendable (NWPath) -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    /// The requirements and the current path.
    public var debugDescription: String {
        "NWPathMonitor(\(requirements.requiredType.map { "required: \($0)" } ?? "all interfaces")"
            + (requirements.prohibitedTypes.isEmpty ? "" : ", prohibited: \(requirements.prohibitedTypes.map(\.rawValue).sorted())")
            + "): \(currentPath.debugDescription)"
    }

    /// A new snapshot arrived (on the engine's loop): keep it, and deliver it if it differs.
    private func update(_ facts: PathFacts) {
        let path = NWPath(monitorFacts: facts)
        let delivery = state.withLock { state -> (DispatchQueue, (@Sendable (NWPath) -> Void)?, [AsyncStream<NWPath>.Continuation])? in
            guard !state.cancelled, let queue = state.queue else { return nil }
            guard !state.delivered || state.current != path else { return nil }
            state.delivered = true
            state.current = path
            return (queue, state.handler, Array(state.iterators.values))
        }
        guard let (queue, handler, iterators) = delivery else { return }
        for iterator in iterators { iterator.yield(path) }
        if let handler {
            queue.async { [weak self] in
                // Not after cancel.
                guard self?.state.withLock({ $0.cancelled }) == false else { return }
                handler(path)
            }
        }
    }

    fileprivate func addIterator(_ continuation: AsyncStream<NWPath>.Continuation) {
        let (id, current, cancelled) = state.withLock { state -> (Int, NWPath?, Bool) in
            let id = state.nextIterator
            state.nextIterator += 1
            guard !state.cancelled else { return (id, nil, true) }
            state.iterators[id] = continuation
            return (id, state.delivered ? state.current : nil, false)
        }
        if cancelled {
            continuation.finish()
            return
        }
        if let current { continuation.yield(current) }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.iterators.removeValue(forKey: id) }
        }
    }
}

extension NWPathMonitor: AsyncSequence {
    /// Iterating a monitor yields paths.
    public typealias Element = NWPath

    /// Yields the current path (once the monitor has one) and every change after it; ends when
    /// the monitor is cancelled. Iterating starts the monitor on a private queue if it was not
    /// started.
    public struct Iterator: AsyncIteratorProtocol {
        private var inner: AsyncStream<NWPath>.Iterator

        fileprivate init(_ monitor: NWPathMonitor) {
            let (stream, continuation) = AsyncStream<NWPath>.makeStream(bufferingPolicy: .bufferingNewest(16))
            monitor.addIterator(continuation)
            if monitor.queue == nil { monitor.start(queue: DispatchQueue(label: "NWPathMonitor.iterator")) }
            inner = stream.makeAsyncIterator()
        }

        /// The next path, or nil once the monitor is cancelled.
        public mutating func next() async -> NWPath? {
            await inner.next()
        }
    }

    /// An iterator over the monitor's paths.
    public func makeAsyncIterator() -> Iterator {
        Iterator(self)
    }
}
