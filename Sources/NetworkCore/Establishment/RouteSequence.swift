/// The ways to a flow's target (direct, or through a proxy) in the order they are tried, which
/// one is current, and the DIRECT fallback: a DIRECT route further down the list joins the race
/// against a proxy route after a delay, and is then not tried a second time.
struct RouteSequence: Sendable, Equatable {
    /// Where the DIRECT race against the current proxy route stands.
    enum DirectRace: Sendable, Equatable {
        /// Not started nor scheduled.
        case none
        /// It joins when `Establishment.directFallbackDelay` has passed.
        case scheduled
        /// It runs.
        case running
    }

    /// What to do after the current route failed.
    enum Step: Sendable, Equatable {
        /// Try the route at this index.
        case tryRoute(Int)
        /// Nothing left but the scheduled DIRECT race: start it now.
        case startDirectNow
        /// Nothing left but the running DIRECT race: its outcome decides.
        case awaitDirect
        /// Nothing left: the establishment fails with the route's error.
        case fail
    }

    /// The routes, in order; never empty.
    let routes: [ProxyRoute]
    /// The index of the route being tried.
    private(set) var index = 0

    /// Routes to try in this order; an empty list means DIRECT only.
    init(_ routes: [ProxyRoute] = [.direct]) {
        self.routes = routes.isEmpty ? [.direct] : routes
    }

    /// The route being tried.
    var current: ProxyRoute { routes[index] }

    /// "2/3": the current route's place in the list, for log lines.
    var position: String { "\(index + 1)/\(routes.count)" }

    /// Whether any route goes through a proxy (the report's `proxyConfigured`).
    var proxyConfigured: Bool { routes.contains { $0 != .direct } }

    /// Whether a DIRECT race may join the current route: it goes through a proxy and a later
    /// route is DIRECT (PAC "PROXY …; DIRECT", or a proxy that allows failover).
    var directMayJoin: Bool {
        guard case .proxy = current else { return false }
        return routes[(index + 1)...].contains(.direct)
    }

    /// Makes the route at `index` the current one.
    mutating func select(_ index: Int) {
        precondition(routes.indices.contains(index), "no route \(index)")
        self.index = index
    }

    /// What follows a failure of the current route with `error`, given where the DIRECT race
    /// stands. A TLS failure ends it all: the server was reached, and another way would not help.
    func afterFailure(of error: FlowError, directRace: DirectRace) -> Step {
        if case .tls = error { return .fail }
        var next = index + 1
        if directRace != .none {
            // DIRECT is (or is about to be) racing already: it is not tried a second time.
            while next < routes.count, routes[next] == .direct { next += 1 }
        }
        if next < routes.count { return .tryRoute(next) }
        switch directRace {
        case .scheduled: return .startDirectNow
        case .running: return .awaitDirect
        case .none: return .fail
        }
    }
}
