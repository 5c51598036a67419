import NIOCore

/// Puts QUIC under a flow: the flow's stream is one bidirectional QUIC stream (or, with
/// `carriesDatagrams`, the connection's datagrams), carried by a `QUICDatagramHandler` in a
/// bridging mode on the connected UDP channel.
enum QUICStack {
    /// Adds the QUIC handler below the flow's handler and completes once the handshake and the
    /// server's verification are done (the stream is then open).
    /// With `quic.multiplexed`, the flow stands for the connection instead: streams are opened
    /// through `QUICStreamMultiplexer`, and each one the peer opens gets a flow from
    /// `adoptPeerStream`.
    /// `descriptor` is the channel's socket, when it was opened outside NIO: packets then go
    /// to it directly (`QUICDatagramHandler.writeDirectly(to:)`).
    /// With `followsPaths` (a socket bound to the wildcard, written to directly), the connection
    /// moves to a new local address when the route to the server changes
    /// (`QUICDatagramHandler.followPaths`).
    /// The connection resumes a session with a ticket from `QUICSessionCache.shared` when one
    /// is kept for the server (and `settings.resumption`), and keeps the tickets its server
    /// issues there. A connection carrying one bidirectional stream sends `earlyData` (Fast
    /// Open's idempotent sends) on it as 0-RTT data when it resumes, and calls `tookEarlyData`.
    static func startClient(
        on channel: Channel, descriptor: Int32?, followsPaths: Bool, settings: FlowTLSConfiguration, hostName: String?, quic: QUICSettings, carriesDatagrams: Bool,
        earlyData: ByteBuffer? = nil, tookEarlyData: (() -> Void)? = nil,
        adoptPeerStream: @escaping QUICStreamMultiplexer.PeerStreamAdopter
    ) -> EventLoopFuture<TLSSessionFacts> {
        channel.eventLoop.assertInEventLoop()
        let promise = channel.eventLoop.makePromise(of: TLSSessionFacts.self)
        let bridgesStream = quic.carriesEarlyData(carriesDatagrams ? .quicDatagram : .quic)
        let binding: QUICDatagramHandler.BindingFactory = { local, remote, now throws(FlowError) in
            let key = settings.resumption
                ? QUICSessionCache.Key(
                    server: hostName ?? remote.ipAddress ?? "", port: remote.port ?? 0, applicationProtocols: settings.applicationProtocols)
                : nil
            let resumption = key.flatMap { QUICSessionCache.shared.take($0) }
            let binding = try QUICConnectionBinding(
                role: .client(serverName: hostName), settings: settings, limits: quic, local: local, remote: remote, now: now,
                resumption: resumption, earlyData: bridgesStream ? earlyData : nil)
            if let key { binding.onTicket = { QUICSessionCache.shared.store($0, for: key) } }
            if binding.earlyStream != nil { tookEarlyData?() }
            return binding
        }
        let handler: QUICDatagramHandler
        if quic.multiplexed {
            handler = QUICStreamMultiplexer(handshake: promise, adoptPeerStream: adoptPeerStream).makeHandler(binding: binding)
            if carriesDatagrams { handler.carryDatagrams() }
        } else if carriesDatagrams {
            handler = QUICDatagramHandler(bridgingDatagrams: binding, handshake: promise)
        } else {
            handler = QUICDatagramHandler(bridgingOneStream: binding, unidirectional: quic.unidirectional, handshake: promise)
        }
        // (Active and on its loop: NIO has not closed the descriptor, so the number is still
        // this socket's.)
        if let descriptor, channel.isActive { handler.writeDirectly(to: descriptor) }
        do {
            try channel.pipeline.syncOperations.addStackHandler(handler)
            if followsPaths { handler.followPaths() }
        } catch {
            promise.fail(error)
        }
        return promise.futureResult
    }
}
