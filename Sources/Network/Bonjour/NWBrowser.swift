import Dispatch
import Foundation
import NetworkCore
import NetworkDNS
import NetworkSync

/// Finds the Bonjour services of one type: each service found is a ``Result`` whose endpoint
/// (`NWEndpoint.service`) a connection can use, with its TXT record when the descriptor asks
/// for it.
///
/// Browsing uses multicast DNS in `local.` on every multicast-capable interface that is up.
/// Start it with a queue; ``browseResultsChangedHandler`` then gets the full set of services
/// and what changed, each time something does.
public final class NWBrowser: CustomDebugStringConvertible, CallbackDelivering, @unchecked Sendable {
    /// What the browser looks for.
    public final let descriptor: Descriptor
    /// The parameters given at creation.
    public final let parameters: NWParameters

    let shared = Lock(Shared())

    struct Shared {
        var state: State = .setup
        var stateUpdateHandler: (@Sendable (State) -> Void)?
        var browseResultsChangedHandler: (@Sendable (Set<Result>, Set<Result.Change>) -> Void)?
        var results: Set<Result> = []
        /// The same results by endpoint: a removal names the result as it was when the engine
        /// had it, and its interfaces may read differently now (an interface that went away).
        var byEndpoint: [NWEndpoint: Result] = [:]
        /// The engine's browse, while it runs.
        var token: Int?
        var started = false
        /// Where callbacks go (see `CallbackDelivering`).
        var delivery = CallbackDelivery.initial
    }

    /// Creates a browser for `descriptor`; nothing happens until ``start(queue:)``.
    public init(for descriptor: Descriptor, using parameters: NWParameters) {
        self.descriptor = descriptor
        self.parameters = parameters.copy()
    }

    /// Starts browsing; callbacks run on `queue`. Later calls are ignored.
    public final func start(queue: DispatchQueue) {
        guard startDelivery(queue: queue) else { return }
        let (type, domain, includeTXT): (String, String?, Bool)
        switch descriptor {
        case .bonjour(let t, let d): (type, domain, includeTXT) = (t, d, false)
        case .bonjourWithTXTRecord(let t, let d): (type, domain, includeTXT) = (t, d, true)
        case .applicationService:
            // Application services are an Apple device-pairing feature; nothing to find here.
            transition(to: .failed(.dns(DNSServiceErrorType(kDNSServiceErr_Unsupported))))
            return
        }
        let token = MDNSEngine.shared.browse(type: type, domain: domain, includeTXT: includeTXT) { [weak self] changes in
            self?.engineReported(changes)
        }
        guard let token else {
            // Not a service type (`_name._tcp` / `_name._udp`), or a domain mDNS does not serve.
            transition(to: .failed(.dns(DNSServiceErrorType(kDNSServiceErr_BadParam))))
            return
        }
        let cancelled = shared.withLock { shared -> Bool in
            guard shared.state != .cancelled else { return true }
            shared.token = token
            return false
        }
        if cancelled { MDNSEngine.shared.stopBrowsing(token) }
    }

    /// The queue given to ``start(queue:)``, nil before.
    public final var queue: DispatchQueue? { deliveryQueue }

    /// Stops browsing; the state becomes `cancelled`.
    public final func cancel() {
        let token = shared.withLock { shared -> Int? in
            defer { shared.token = nil }
            return shared.token
        }
        if let token { MDNSEngine.shared.stopBrowsing(token) }
        transition(to: .cancelled)
    }

    /// The current state.
    public final var state: State { shared.withLock { $0.state } }

    /// Called with every state change.
    @preconcurrency public final var stateUpdateHandler: (@Sendable (State) -> Void)? {
        get { shared.withLock { $0.stateUpdateHandler } }
        set { shared.withLock { $0.stateUpdateHandler = newValue } }
    }

    /// The services found so far.
    public final var browseResults: Set<Result> { shared.withLock { $0.results } }

    /// Called with the full set of services and the changes that led to it, each time the set
    /// changes.
    @preconcurrency public final var browseResultsChangedHandler: (@Sendable (Set<Result>, Set<Result.Change>) -> Void)? {
        get { shared.withLock { $0.browseResultsChangedHandler } }
        set { shared.withLock { $0.browseResultsChangedHandler = newValue } }
    }

    // MARK: - Engine events

    private func engineReported(_ engineChanges: [MDNSBrowseResults.Change]) {
        let changes = Set(engineChanges.map(Result.Change.init))
        let update = shared.withLock { shared -> (results: Set<Result>, first: Bool)? in
            guard shared.state != .cancelled else { return nil }
            for change in changes {
                switch change {
                case .added(let result), .changed(_, let result, _):
                    if let stored = shared.byEndpoint.updateValue(result, forKey: result.endpoint) { shared.results.remove(stored) }
                    shared.results.insert(result)
                case .removed(let result):
                    if let stored = shared.byEndpoint.removeValue(forKey: result.endpoint) { shared.results.remove(stored) }
                case .identical:
                    break
                }
            }
            return (shared.results, shared.state == .setup)
        }
        guard let update else { return }
        ServiceTXTRecords.update(changes)
        // The engine's first report says the browse runs: ready, then any results it already had.
        if update.first { transition(to: .ready) }
        guard !changes.isEmpty else { return }
        deliver { [self] in
            let handler = shared.withLock { $0.state == .cancelled ? nil : $0.browseResultsChangedHandler }
            handler?(update.results, changes)
        }
    }

    private func transition(to newState: State) {
        let changed = shared.withLock { shared -> Bool in
            guard shared.state != newState, shared.state != .cancelled else { return false }
            if case .failed = shared.state, newState != .cancelled { return false }
            shared.state = newState
            return true
        }
        guard changed else { return }
        deliverInOrder { [self] in
            let handler = shared.withLock { $0.stateUpdateHandler }
            handler?(newState)
            if newState == .cancelled {
                shared.withLock {
                    $0.stateUpdateHandler = nil
                    $0.browseResultsChangedHandler = nil
                }
            }
        }
    }

    // MARK: - Delivery

    func withDelivery(_ body: (inout CallbackDelivery) -> Void) {
        shared.withLock { body(&$0.delivery) }
    }

    /// Browse events are few: each goes to the queue on its own.
    var deliveryBatcher: DeliveryBatcher? { nil }

    /// A readable summary: what is browsed and the state.
    public var debugDescription: String {
        "[Browser \(descriptor) \(state)]"
    }
}
