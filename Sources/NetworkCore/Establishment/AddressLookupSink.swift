import NIOCore

/// Where an address lookup delivers what it finds: straight into the establishment's racer, one
/// family at a time, so a lookup that gets AAAA and A answers separately lets the race start on
/// the first one. Callable from any thread; the receiver hops onto its own event loop.
package struct AddressLookupSink: Sendable {
    /// One thing a lookup can report.
    package enum Event: Sendable {
        /// The addresses of one family, and where they came from.
        case answer(AddressFamily, [SocketAddress], ResolutionSource)
        case familyFailed(AddressFamily, FlowError)
        case finished
        case failed(FlowError)
    }

    private let deliver: @Sendable (Event) -> Void

    package init(_ deliver: @escaping @Sendable (Event) -> Void) {
        self.deliver = deliver
    }

    /// The addresses of one family (empty: the name has none of that family), fresh from a query
    /// unless `source` says otherwise.
    package func answered(_ family: AddressFamily, _ addresses: [SocketAddress], source: ResolutionSource = .query) {
        deliver(.answer(family, addresses, source))
    }
    /// The query for one family failed.
    package func failed(_ family: AddressFamily, _ error: FlowError) { deliver(.familyFailed(family, error)) }
    /// No more answers will come.
    package func finished() { deliver(.finished) }
    /// The lookup as a whole failed.
    package func failed(_ error: FlowError) { deliver(.failed(error)) }
}
