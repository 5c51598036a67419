/// An address lookup under way, as `AddressLookup.start` returns it: what stops its queries.
package struct RunningAddressLookup: Sendable {
    private let stop: @Sendable () -> Void

    /// A lookup that `stop` cancels.
    package init(cancel stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    /// A lookup that has nothing to cancel (it answered at once, or cannot be stopped).
    package static let finished = RunningAddressLookup {}

    /// Stops the lookup's queries (closing their sockets) and drops what they would report.
    package func cancel() { stop() }
}
