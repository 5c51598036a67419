#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkSync

/// A multicast group's connections to one member or sender (`NWConnectionGroup.extract`,
/// `NWConnection(from:to:using:)`): a flow on the group's own socket, as a UDP listener's peers
/// are, so that what it sends leaves from the group's port. While it lasts, the group's datagrams
/// from its remote address go to it instead of to the group's handler.
extension FlowListener {
    /// A flow to `target` (an address literal) on the group's socket, made at once (the caller
    /// does not wait for the loop); nil before the group is ready, after it ended, or for a
    /// target that is not an address.
    package func makeGroupPeer(to target: FlowTarget) -> Flow? {
        let (socket, writer) = shared.withLock { ($0.groupChannel, $0.groupWriter) }
        guard let channel = socket, let address = target.literalAddress else { return nil }
        // (As the socket reports its IPv4 peers when it is a dual-stack one.)
        let remote = Self.groupSocketForm(of: address, on: channel)
        var child = configuration.child
        child.target = .address(remote)
        child.transport = .udp
        child.framers = []
        // (Set once the flow exists: its release must find this flow, not a later one.)
        let made = Lock<ObjectIdentifier?>(nil)
        // (Through the group's writer: its datagrams keep their markings and leave in batches.)
        let flow = Flow(sharedDatagramChannel: channel, remote: remote, configuration: child, writer: writer) { [weak self] in
            guard let self, let made = made.withLock({ $0 }) else { return }
            self.eventLoop.execute { self.removeGroupPeer(at: remote, if: made) }
        }
        made.withLock { $0 = ObjectIdentifier(flow) }
        eventLoop.execute {
            guard self.shared.withLock({ $0.groupChannel }) != nil else {
                flow.sharedTransportFailed(.posix(ECONNABORTED))
                return
            }
            // A newer connection to the same peer takes its datagrams from now on.
            self.groupPeers[remote] = flow
            self.logPeerEvent(.debug, "connection C\(flow.logID) to \(remote.logText) taken from the group")
        }
        return flow
    }

    /// Gives `flow`'s datagrams back to the group's handler (`NWConnectionGroup.reinsert`).
    package func returnGroupPeer(_ flow: Flow) {
        eventLoop.execute {
            guard let remote = self.groupPeers.first(where: { $0.value === flow })?.key else { return }
            self.removeGroupPeer(at: remote, if: ObjectIdentifier(flow))
        }
    }

    /// The connection that takes `remote`'s datagrams, if any (on the loop).
    func groupPeer(for remote: SocketAddress) -> Flow? {
        groupPeers[remote]
    }

    /// Forgets the connection at `remote` if it is still `flow`.
    private func removeGroupPeer(at remote: SocketAddress, if flow: ObjectIdentifier) {
        guard let current = groupPeers[remote], ObjectIdentifier(current) == flow else { return }
        groupPeers[remote] = nil
    }

    /// The group's socket closed: its connections end with `ECONNABORTED`.
    func groupSocketClosed() {
        shared.withLock {
            $0.groupChannel = nil
            $0.groupWriter = nil
        }
        let flows = Array(groupPeers.values)
        groupPeers.removeAll()
        for flow in flows { flow.sharedTransportFailed(.posix(ECONNABORTED)) }
        releaseDatagramWriter()
    }
}
