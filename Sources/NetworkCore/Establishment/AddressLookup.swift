import NIOCore

/// Looks up a host name's addresses for a flow: the one way the engine turns names into
/// addresses. A lookup reports into its sink (answers, then `finished` or `failed`) and can be
/// cancelled, which stops its queries. The engine's is `DNSResolverAddressLookup` (NetworkDNS);
/// tests plug in their own to hand the racer chosen addresses at chosen times.
package protocol AddressLookup: Sendable {
    /// Starts looking up `host` (answers carry `port`) and reports into `sink` from any thread.
    /// Cancelling the returned lookup stops its queries; the sink may still see an event that
    /// was already on its way.
    func start(_ host: String, port: Int, sink: AddressLookupSink) -> RunningAddressLookup
}
