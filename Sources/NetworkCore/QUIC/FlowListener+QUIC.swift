#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import NetworkSystem

/// A QUIC listener: one UDP socket that only ever sees clients' first packets. Each accepted
/// connection gets a socket of its own, bound to the listener's port (and the address the client
/// wrote to) and connected to the client (the kernel prefers a connected socket for its client's
/// datagrams), with the same
/// handler a client connection uses; each stream the client opens becomes a flow for the
/// listener's new-connection handler.
extension FlowListener {
    func receivedQUICDatagram(_ envelope: AddressedEnvelope<ByteBuffer>, listening: Channel) {
        let remote = envelope.remoteAddress
        let ecn = ECNCodepoint.codepoint(envelope.metadata?.ecnState)
        if let connection = quicConnections[remote] {
            // Sent before the connection's own socket was connected.
            connection.deliver(envelope.data, ecn: ecn)
            return
        }
        if let connection = movedQUICConnection(envelope.data) {
            // A client that moved to a new address (or a NAT that rebound it): its connection
            // decides (ngtcp2 validates the new path), and its socket follows.
            connection.deliver(envelope.data, ecn: ecn, from: remote)
            return
        }
        guard state == .ready, newFlowHandler != nil, let tls = configuration.child.tls, var local = listening.localAddress else { return }
        if let destination = envelope.metadata?.packetInfo?.destinationAddress, let port = local.port {
            // The connection's socket leaves from the address the client wrote to, not the one
            // a route from a wildcard socket would pick (another, on a host with several): the
            // client accepts packets from its server's address only, also after it moves.
            local = destination
            local.port = port
        }
        if configuration.acceptLocalOnly && !isLocalPeer(remote) { return }
        // Only a client's Initial (of a version ngtcp2 speaks, long enough) starts a connection;
        // anything else from an unknown address is dropped without an answer. When the policy
        // says so, the client first proves its address with a Retry.
        let identifiers: QUICInitial
        switch quicRetry?.check(
            envelope.data, from: remote, requireAddressValidation: configuration.quicRetry.requiresRetry(handshakes: quicHandshakes),
            now: QUICDatagramHandler.now())
        {
        case .accept(let initial):
            identifiers = initial
        case .retry(let packet):
            logPeerEvent(.trace, "QUIC Retry to \(remote.logText)")
            listening.writeAndFlush(AddressedEnvelope(remoteAddress: remote, data: packet), promise: nil)
            return
        case .drop, nil:
            logPeerEvent(.trace, "dropped a datagram from \(remote.logText): not a QUIC Initial (or a bad Retry token)")
            return
        }
        // Bounds: connections in all, and handshakes under way (each holds a socket, ngtcp2's
        // state and a TLS session for up to the handshake timeout, for a client address that
        // may be forged).
        guard quicConnections.count < configuration.datagramPeerLimits.maximumPeers,
            quicHandshakes < configuration.datagramPeerLimits.maximumUnstarted
        else {
            logPeerEvent(.trace, "dropped a QUIC Initial from \(remote.logText): every connection slot is in use")
            return
        }
        guard consumeBudget() else {
            logPeerEvent(.trace, "dropped a QUIC Initial from \(remote.logText): connection limit reached")
            return
        }
        let connection = QUICServerConnection(remote: remote, first: envelope.data, ecn: ecn)
        quicConnections[remote] = connection
        // (Everything below runs on this loop: the connection's socket is on it too.)
        let bound = NIOLoopBound(connection, eventLoop: eventLoop)
        logPeerEvent(.debug, "new QUIC connection from \(remote.logText)")
        var childConfiguration = configuration.child
        childConfiguration.target = .address(remote)
        childConfiguration.transport = .quic
        if newQUICGroupHandler != nil {
            // The group takes the connection's datagrams.
            childConfiguration.quic.carryGroupDatagrams()
        } else {
            childConfiguration.quic.multiplexed = true
        }
        let streamConfiguration = childConfiguration
        let bootstrap = DatagramBootstrap(group: eventLoop)
            .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
        // Opened here, so that its packets can be written to it directly; it shares the
        // listener's port (SO_REUSEADDR), connected to the client.
        let descriptor: Int32
        do {
            descriptor = try DatagramSocketOpen.bound(to: local, reuseAddress: true)
        } catch {
            logPeerEvent(.debug, "no socket for the QUIC connection from \(remote.logText): \(error.logDescription)")
            quicConnections[remote] = nil
            return
        }
        bootstrap.withBoundSocket(descriptor).flatMap { channel in
            channel.connect(to: remote).map { channel }
        }.whenComplete { result in
            switch result {
            case .success(let channel):
                self.serve(
                    bound.value, on: channel, descriptor: descriptor, identifiers: identifiers, tls: tls, configuration: streamConfiguration)
            case .failure(let error):
                self.logPeerEvent(.debug, "no socket for the QUIC connection from \(remote.logText): \(FlowError(error).logDescription)")
                if self.quicConnections[remote] === bound.value { self.quicConnections[remote] = nil }
            }
        }
    }

    /// Runs an accepted connection on its own socket, connected to the client: the server's
    /// binding under a stream multiplexer, whose streams go to the user (or the whole connection
    /// as a group's flow, when the user takes groups).
    private func serve(
        _ connection: QUICServerConnection, on channel: Channel, descriptor: Int32, identifiers: QUICInitial,
        tls: FlowTLSConfiguration, configuration: FlowConfiguration
    ) {
        let remote = connection.remote
        guard quicConnections[remote] === connection else {
            channel.close(promise: nil)
            return
        }
        let bound = NIOLoopBound(connection, eventLoop: eventLoop)
        channel.closeFuture.whenComplete { _ in
            let connection = bound.value
            self.forgetAddress(of: connection)
            for identifier in connection.connectionIDs where self.quicConnectionIDs[identifier] === connection {
                self.quicConnectionIDs[identifier] = nil
            }
        }
        let handshake = channel.eventLoop.makePromise(of: TLSSessionFacts.self)
        let multiplexer = QUICStreamMultiplexer(handshake: handshake) { stream in
            try Flow.adopting(accepted: stream, configuration: configuration, transport: .quic)
        }
        if let groupHandler = newQUICGroupHandler {
            // The whole connection is the user's once its handshake is done: a group whose flow
            // takes the streams.
            handshake.futureResult.whenSuccess { facts in
                guard self.state == .ready, channel.isActive,
                    let flow = try? Flow.adopting(accepted: channel, configuration: configuration, transport: .quicDatagram)
                else {
                    channel.close(promise: nil)
                    return
                }
                flow.sessionFacts = StackSessionBox(tls: facts)
                groupHandler(flow, remote)
            }
        } else {
            multiplexer.takePeerStreams { [weak self] flow in
                guard let self, self.state == .ready, let handler = self.newFlowHandler else {
                    flow.cancel(force: true)
                    return
                }
                handler(flow, remote)
            }
        }
        handshake.futureResult.whenComplete { result in
            bound.value.handshaking = false
            if case .failure(let error) = result {
                self.logPeerEvent(.debug, "QUIC handshake from \(remote.logText) failed: \(FlowError(error).logDescription)")
            }
        }
        let limits = configuration.quic
        let tickets = quicTickets
        let handler = multiplexer.makeHandler { local, remote, now throws(FlowError) in
            let binding = try QUICConnectionBinding(
                role: .server(identifiers),
                settings: tls, limits: limits, local: local, remote: remote, now: now, tickets: tickets)
            for identifier in binding.connectionIDs() { self.quicConnectionID(identifier, issued: true, by: bound.value) }
            binding.onConnectionID = { identifier, issued in self.quicConnectionID(identifier, issued: issued, by: bound.value) }
            return binding
        }
        handler.onPeerMove = { address in
            let connection = bound.value
            self.forgetAddress(of: connection)
            connection.moved(to: address)
            // (A connection already there keeps its place; this one is found by its IDs.)
            if self.quicConnections[address] == nil { self.quicConnections[address] = connection }
        }
        if newQUICGroupHandler != nil { handler.carryDatagrams() }
        // (Active, on its loop: the number is still this socket's.)
        if channel.isActive { handler.writeDirectly(to: descriptor) }
        do {
            try channel.pipeline.syncOperations.addHandler(handler)
        } catch {
            channel.close(promise: nil)
            return
        }
        connection.attach(handler)
    }

    /// Drops the entry for `connection`'s client address, unless another connection has it now.
    private func forgetAddress(of connection: QUICServerConnection) {
        if quicConnections[connection.remote] === connection { quicConnections[connection.remote] = nil }
    }

    /// Keeps the listener's index of connection IDs up to date (on the loop).
    private func quicConnectionID(_ identifier: [UInt8], issued: Bool, by connection: QUICServerConnection) {
        if issued {
            connection.connectionIDs.insert(identifier)
            quicConnectionIDs[identifier] = connection
        } else {
            connection.connectionIDs.remove(identifier)
            if quicConnectionIDs[identifier] === connection { quicConnectionIDs[identifier] = nil }
        }
    }

    /// The connection a datagram from an unknown address belongs to, by its destination
    /// connection ID: only a short-header packet (RFC 9000, 17.3: a client past its handshake)
    /// long enough to carry one of ours.
    private func movedQUICConnection(_ datagram: ByteBuffer) -> QUICServerConnection? {
        let length = QUICConnectionBinding.connectionIDLength
        guard !quicConnectionIDs.isEmpty, let first = datagram.getInteger(at: datagram.readerIndex, as: UInt8.self),
            first & 0x80 == 0, let identifier = datagram.getBytes(at: datagram.readerIndex + 1, length: length)
        else { return nil }
        return quicConnectionIDs[identifier]
    }

    /// The QUIC handshakes under way (a scan: only acceptable Initials ask).
    private var quicHandshakes: Int {
        quicConnections.values.lazy.filter(\.handshaking).count
    }
}
