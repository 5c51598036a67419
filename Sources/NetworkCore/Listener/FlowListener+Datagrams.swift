#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CGnuTLS
import Logging
import NIOCore
import NetworkDNS

/// A datagram listener's peers: one flow per remote address on the shared socket.
extension FlowListener {
    /// Peers' datagrams are stamped with the time they were read (`shouldCalculateReceiveTime`).
    private var stampsReceiveTime: Bool { configuration.child.ip.shouldCalculateReceiveTime }

    /// What a peer's receive reports of a datagram read with `metadata`. (A DTLS record's marking
    /// is not reported: its datagram is not the message.)
    private func receivedFacts(_ metadata: AddressedEnvelope<ByteBuffer>.Metadata?) -> ReceivedDatagramFacts? {
        dtlsCookies == nil ? ReceivedDatagramFacts.of(metadata, stamped: stampsReceiveTime) : nil
    }

    func receivedDatagram(_ envelope: AddressedEnvelope<ByteBuffer>, channel: Channel) {
        if let membership = configuration.multicast {
            receivedGroupDatagram(envelope, membership: membership)
            return
        }
        let remote = envelope.remoteAddress
        let facts = receivedFacts(envelope.metadata)
        if let flow = peers.lookUp(remote) {
            if flow.deliverSharedDatagram(envelope.data, facts: facts) { delivered(to: flow) }
            return
        }
        guard state == .ready, let handler = newFlowHandler else { return }
        if configuration.acceptLocalOnly && !isLocalPeer(remote) { return }
        var prestate: gnutls_dtls_prestate_st?
        if let dtlsCookies {
            // Stateless until the peer proves it receives at its address.
            switch dtlsCookies.check(envelope.data, from: remote) {
            case .verified(let state):
                prestate = state
            case .challenge(let reply):
                logPeerEvent(.trace, "DTLS cookie challenge to \(remote.logText)")
                channel.writeAndFlush(AddressedEnvelope(remoteAddress: remote, data: reply), promise: nil)
                return
            case .ignore:
                return
            }
        }
        // A flood of datagrams from new (possibly spoofed) addresses must not create flows
        // without bound (`DatagramPeerTable`).
        let now = NIODeadline.now()
        switch peers.admit(remote, now: now) {
        case .admit:
            break
        case .admitEvicting(let idle):
            logPeerEvent(.debug, "peer C\(idle.logID) dropped after idling: the listener has as many peers as it keeps")
            idle.sharedTransportFailed(.posix(ECONNABORTED))
        case .tooManyUnstarted:
            logPeerEvent(.trace, "dropped a datagram from \(remote.logText): too many peers not started yet")
            return
        case .full:
            logPeerEvent(.trace, "dropped a datagram from \(remote.logText): every peer slot is in use")
            return
        }
        guard consumeBudget() else {
            logPeerEvent(.trace, "dropped a datagram from \(remote.logText): connection limit reached")
            return
        }
        var childConfiguration = configuration.child
        childConfiguration.target = .address(remote)
        childConfiguration.transport = .udp
        var dtls: GnuTLSSession?
        if let settings = configuration.child.tls {
            // Checked at bind time; a failure here (memory) only drops this peer's datagram.
            guard let session = try? DTLSStack.serverSession(on: channel, remote: remote, settings: settings) else { return }
            if let prestate { session.continueAfterCookie(prestate) }
            dtls = session
        }
        let number = peers.takeNumber()
        let flow = Flow(
            sharedDatagramChannel: channel, remote: remote, configuration: childConfiguration, dtls: dtls, writer: datagramWriter
        ) {
            [weak self] in
            guard let self else { return }
            self.eventLoop.execute { self.releasePeer(remote, number: number) }
        }
        peers.insert(flow, number: number, for: remote, now: now)
        logPeerEvent(.debug, "new datagram peer C\(flow.logID) from \(remote.logText)")
        if flow.deliverSharedDatagram(envelope.data, facts: facts) { delivered(to: flow) }
        handler(flow, remote)
    }

    /// Datagrams the kernel coalesced (`DatagramReceiveOffload`): one sender, one marking, so a
    /// known peer is looked up once for the whole burst; otherwise each goes as its own datagram
    /// (the first makes the peer, the others find it).
    func receivedDatagrams(
        _ burst: DatagramBatch, from remote: SocketAddress, metadata: AddressedEnvelope<ByteBuffer>.Metadata?,
        channel: Channel
    ) {
        if configuration.multicast == nil, let flow = peers.lookUp(remote) {
            let facts = receivedFacts(metadata)
            var took = false
            burst.forEachPacket { datagram in
                if flow.deliverSharedDatagram(datagram, facts: facts) { took = true }
            }
            if took { delivered(to: flow) }
            return
        }
        burst.forEachPacket { datagram in
            receivedDatagram(AddressedEnvelope(remoteAddress: remote, data: datagram, metadata: metadata), channel: channel)
        }
    }

    /// `flow` took a datagram in the read under way; once the read ends, it leaves what no
    /// receive took for receives on other threads (`datagramReadComplete`). Once per read, not
    /// per datagram: leaving them hands what the loop delivered to the queues first.
    func delivered(to flow: Flow) {
        if peersWithNewDatagrams.last !== flow { peersWithNewDatagrams.append(flow) }
    }

    /// The socket's read ended: see `delivered(to:)`.
    func datagramReadComplete() {
        guard !peersWithNewDatagrams.isEmpty else { return }
        let flows = peersWithNewDatagrams
        peersWithNewDatagrams.removeAll(keepingCapacity: true)
        for flow in flows { flow.publishReadyDatagrams() }
    }

    func releasePeer(_ remote: SocketAddress, number: UInt64) {
        peers.remove(remote, number: number)
        if state == .cancelled && peers.isEmpty {
            closeChannel()
        }
    }

    func datagramSocketClosed() {
        NetworkLog.listener.debug("the shared datagram socket closed", metadata: logMetadata)
        let flows = peers.removeAll()
        for flow in flows { flow.sharedTransportFailed(.posix(ECONNABORTED)) }
        if state == .ready {
            report(.failed(.posix(ECONNABORTED)))
        }
    }

    /// Stops sending a departed peer's datagrams to a cancelled flow.
    package func forget(_ flow: Flow) {
        eventLoop.execute {
            self.peers.remove(flow)
        }
    }
}
