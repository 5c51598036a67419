/// What a connection group is made of: the endpoints that belong to it (a multicast group's
/// addresses, or the one peer of a multiplexed connection).
public protocol NWGroupDescriptor: AnyObject, Sendable {
    /// The endpoints of the group.
    var members: [NWEndpoint] { get }
}
