import Foundation
import NetworkCore
import NetworkSync

/// The path side of one connection: its path, viability and better-path handlers, and, once it
/// is ready, its subscription to the path engine. Only connections that set one of those
/// handlers have one, so the rest pay nothing for it. Touched under the connection's lock.
final class ConnectionPathWatch: @unchecked Sendable {
    var pathHandler: (@Sendable (NWPath) -> Void)?
    var viabilityHandler: (@Sendable (Bool) -> Void)?
    var betterPathHandler: (@Sendable (Bool) -> Void)?
    /// The engine subscription while ready.
    var subscription: PathSubscription?
    /// A subscription is being made (outside the connection's lock).
    var subscribing = false
    var tracker: ConnectionPathTracker?
    /// The last configuration snapshot, to observe again after the connection moved.
    var lastInputs: PathInputs?
    var localEndpoint: NWEndpoint?
    var remoteEndpoint: NWEndpoint?
    /// The newest path seen by the tracker (after a change), for `currentPath`.
    var latestPath: NWPath?

    var hasHandlers: Bool { pathHandler != nil || viabilityHandler != nil || betterPathHandler != nil }

    /// Path events are made on the path engine's loop and, after a QUIC connection moved, on its
    /// flow's: each runs `body` (reading the state, handing its calls to the queue) alone, so
    /// the handlers hear the events in the order they were made.
    private let order = Lock(())

    func inOrder(_ body: () -> Void) {
        order.withLock { _ in body() }
    }

    /// The connection's path for an observation.
    func path(_ observation: ConnectionPathTracker.Observation) -> NWPath {
        let interface = observation.interface
        let families = Set(interface?.addresses.map(\.family) ?? [])
        return NWPath(
            status: observation.viable ? .satisfied : .unsatisfied,
            availableInterfaces: interface.map { [NWInterface($0)] } ?? [],
            isExpensive: interface?.isExpensive ?? false,
            isConstrained: interface?.isConstrained ?? false,
            supportsIPv4: observation.viable && families.contains(.inet),
            supportsIPv6: observation.viable && families.contains(.inet6),
            supportsDNS: observation.viable,
            gateways: observation.gateways.compactMap { NWEndpoint(gateway: $0) },
            localEndpoint: localEndpoint,
            remoteEndpoint: remoteEndpoint)
    }
}

extension NWEndpoint {
    /// A default route's next hop as an endpoint (port 0).
    init?(gateway route: SystemRoute) {
        guard let bytes = route.gateway else { return nil }
        switch route.family {
        case .inet:
            guard let address = IPv4Address(Data(bytes)) else { return nil }
            self = .hostPort(host: .ipv4(address), port: 0)
        case .inet6:
            guard let address = IPv6Address(Data(bytes)) else { return nil }
            self = .hostPort(host: .ipv6(address), port: 0)
        }
    }
}
