import NIOCore

/// Where the cache and resolver read the time from; tests pass a clock they move by hand.
package struct DNSClock: Sendable {
    /// The current monotonic time.
    package let now: @Sendable () -> NIODeadline

    /// A clock reading `now`.
    package init(now: @escaping @Sendable () -> NIODeadline) {
        self.now = now
    }

    /// The real monotonic clock.
    package static let system = DNSClock { NIODeadline.now() }
}
