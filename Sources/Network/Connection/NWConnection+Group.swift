extension NWConnection {
    /// A connection taken from a group: for a QUIC multiplex group, a new stream of its
    /// connection (opened when this connection starts; `to` is ignored, the group has one peer;
    /// `using` replaces the group's QUIC options, for example to change the stream's direction).
    /// Nil for groups that cannot make one (multicast groups are not built yet).
    public convenience init?(from group: NWConnectionGroup, to endpoint: NWEndpoint? = nil, using options: NWProtocolOptions? = nil) {
        guard let flow = group.multiplexFlow, let multiplex = group.descriptor as? NWMultiplexGroup else { return nil }
        self.init(streamOf: flow, endpoint: multiplex.endpoint, parameters: group.parameters, options: options)
    }

    /// A connection back to the sender of a group's message. Multicast groups, whose messages
    /// have senders, are not built yet: nil for now.
    public convenience init?(message: NWConnectionGroup.Message) {
        return nil
    }
}
