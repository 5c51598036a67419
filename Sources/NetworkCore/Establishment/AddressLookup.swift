import NIOCore

/// Where a name lookup delivers what it finds: straight into the establishment's racer, one
/// family at a time, so a resolver that gets AAAA and A answers separately lets the race start
/// on the first one. Callable from any thread; every call hops onto the flow's event loop.
package struct ResolutionSink: Sendable {
    /// One thing a lookup can report.
    package enum Event: Sendable {
        case answer(AddressFamily, [SocketAddress])
        case familyFailed(AddressFamily, FlowError)
        case finished
        case failed(FlowError)
    }

    private let deliver: @Sendable (Event) -> Void

    package init(_ deliver: @escaping @Sendable (Event) -> Void) {
        self.deliver = deliver
    }

    /// The addresses of one family (empty: the name has none of that family).
    package func answered(_ family: AddressFamily, _ addresses: [SocketAddress]) { deliver(.answer(family, addresses)) }
    /// The query for one family failed.
    package func failed(_ family: AddressFamily, _ error: FlowError) { deliver(.familyFailed(family, error)) }
    /// No more answers will come.
    package func finished() { deliver(.finished) }
    /// The lookup as a whole failed.
    package func failed(_ error: FlowError) { deliver(.failed(error)) }
}

/// Looks up a host name for a flow and reports into `sink` (answers, then `finished` or
/// `failed`). The default is `AddressResolver.systemLookup` (getaddrinfo); NetworkDNS's resolver
/// plugs in here, and tests use it to hand the racer chosen addresses at chosen times.
package typealias AddressLookup = @Sendable (_ host: String, _ port: Int, _ sink: ResolutionSink) -> Void
