extension NWConnection {
    /// A connection taken from a group. For a QUIC multiplex group, a new stream of its
    /// connection (opened when this connection starts; `to` is ignored, the group has one peer;
    /// `using` replaces the group's QUIC options, for example to change the stream's direction).
    /// For a ready multicast group, a connection to `endpoint` (an address) on the group's
    /// socket, sending from the group's port and taking the datagrams `endpoint` sends
    /// (`NWConnectionGroup.extract(connectionTo:using:)`). Nil for groups that cannot make one.
    public convenience init?(from group: NWConnectionGroup, to endpoint: NWEndpoint? = nil, using options: NWProtocolOptions? = nil) {
        if let flow = group.multiplexFlow, let multiplex = group.descriptor as? NWMultiplexGroup {
            self.init(streamOf: flow, endpoint: multiplex.endpoint, parameters: group.parameters, options: options)
            return
        }
        guard let endpoint, let flow = group.makeMulticastPeer(to: endpoint) else { return nil }
        self.init(accepted: flow, endpoint: endpoint, parameters: group.parameters)
    }

    /// A connection back to the sender of a message a multicast group received, on the group's
    /// socket (as `NWConnection(from:to:using:)`); nil for a message that was not received.
    public convenience init?(message: NWConnectionGroup.Message) {
        guard let group = message.group, let sender = message.remoteEndpoint else { return nil }
        self.init(from: group, to: sender)
    }
}
