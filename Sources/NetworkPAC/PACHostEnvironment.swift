import Foundation

/// What a PAC script may learn about the world: name lookups, this machine's addresses and
/// the time. Nothing else crosses from the host into the script.
///
/// Each piece is a closure so tests substitute fixed answers (no DNS traffic, no dependence on
/// the machine's interfaces or on the clock). The closures are called on the evaluator's
/// thread, where blocking is allowed; each should bound its own wait (the default resolver does).
package struct PACHostEnvironment: Sendable {
    /// Resolves a host name to its addresses (IPv4 and IPv6, numeric text, in preference order);
    /// empty when the name does not resolve.
    package var resolve: @Sendable (String) -> [String]
    /// This machine's addresses, most relevant first (the source address of the default route).
    package var localAddresses: @Sendable () -> [String]
    /// The current time; the date and time helpers read it.
    package var now: @Sendable () -> Date

    /// The given services; by default NetworkDNS's resolver and the route's source addresses
    /// (`PACSystemResolver`) and the system clock.
    package init(
        resolve: @escaping @Sendable (String) -> [String] = { PACSystemResolver.resolve($0) },
        localAddresses: @escaping @Sendable () -> [String] = { PACSystemResolver.localAddresses() },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.resolve = resolve
        self.localAddresses = localAddresses
        self.now = now
    }
}
