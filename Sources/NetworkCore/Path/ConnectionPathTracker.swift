import NetworkSystem

/// What an established connection's path is, and whether it changed: the interface that owns
/// the connection's local address, whether that interface can still carry it (viability), and
/// whether a preferred interface is usable (a better path). A value type fed with snapshots.
///
/// The first snapshot is the baseline and reports nothing (the connection reported its path
/// when it became ready); later ones report only what changed.
package struct ConnectionPathTracker: Sendable {
    /// One reading of the connection's situation.
    package struct Observation: Sendable, Equatable {
        /// The interface carrying the connection, if it still exists and has the address.
        package var interface: SystemInterface?
        package var viable: Bool
        package var betterPathAvailable: Bool
        /// Default gateways over the connection's interface.
        package var gateways: [SystemRoute]
    }

    /// What to tell the connection's handlers.
    package enum Event: Sendable, Equatable {
        case path(Observation)
        case viability(Bool)
        case betterPath(Bool)
    }

    private var localAddress: [UInt8]
    private let overLoopback: Bool
    private let requirements: PathRequirements
    package private(set) var last: Observation?

    /// `localAddress`: the connection's own address (network-order bytes, IPv4-mapped IPv6
    /// already unmapped); `overLoopback`: its peer is a loopback address.
    package init(localAddress: [UInt8], overLoopback: Bool, requirements: PathRequirements) {
        self.localAddress = localAddress
        self.overLoopback = overLoopback
        self.requirements = requirements
    }

    /// The connection now leaves from `localAddress` (a QUIC connection that migrated): the
    /// next observation is compared with the last one, so it reports the new interface.
    package mutating func move(to localAddress: [UInt8]) {
        self.localAddress = localAddress
    }

    package mutating func observe(_ inputs: PathInputs) -> [Event] {
        let current = observation(inputs)
        defer { last = current }
        guard let previous = last else { return [] }
        var events: [Event] = []
        if current != previous { events.append(.path(current)) }
        if current.viable != previous.viable { events.append(.viability(current.viable)) }
        if current.betterPathAvailable != previous.betterPathAvailable { events.append(.betterPath(current.betterPathAvailable)) }
        return events
    }

    private func observation(_ inputs: PathInputs) -> Observation {
        let owner = inputs.interfaces.first { interface in
            overLoopback ? interface.type == .loopback : interface.addresses.contains { $0.bytes == localAddress }
        }
        let viable = owner.map { $0.isUp && ($0.type == .loopback || $0.isRunning) } ?? false
        var better = false
        if !overLoopback {
            // The interface a new connection with the same rules would take first.
            let best = PathEvaluator.evaluate(inputs, requirements)
            if best.status == .satisfied, let first = best.interfaces.first {
                better = first.name != owner?.name
            }
        }
        let gateways = owner.map { inputs.routes.defaultGateways(over: [$0.name]) } ?? []
        return Observation(interface: owner, viable: viable, betterPathAvailable: better, gateways: gateways)
    }
}
