import NIOCore

/// Puts DTLS into a datagram flow: a handler on a connected client channel, or a session per
/// peer on a listener's shared socket.
enum DTLSStack {
    /// Adds a GnuTLS client handler in front of the flow's handler (`AddressedEnvelope`: DTLS on
    /// a connected datagram channel; `ByteBuffer`: TLS over TCP, for pre-shared keys) and
    /// completes once the handshake and the server's verification are done.
    /// `before`: right below that handler (TLS a framer prepended) instead of where the stack's
    /// handlers go.
    static func startClient<Message: GnuTLSFraming>(
        _: Message.Type, on channel: Channel, settings: FlowTLSConfiguration, hostName: String?,
        before: (any ChannelHandler)? = nil
    ) -> EventLoopFuture<TLSSessionFacts> {
        channel.eventLoop.assertInEventLoop()
        let promise = channel.eventLoop.makePromise(of: TLSSessionFacts.self)
        do {
            let handler = GnuTLSHandler<Message>(role: .client(serverName: hostName), settings: settings, handshake: promise)
            if let before {
                try channel.pipeline.syncOperations.addHandler(handler, position: .before(before))
            } else {
                try channel.pipeline.syncOperations.addStackHandler(handler)
            }
        } catch {
            promise.fail(error)
        }
        return promise.futureResult
    }

    /// A server session for one peer of a DTLS listener; its ciphertext leaves from the
    /// listener's socket to `remote`.
    static func serverSession(
        on channel: Channel, remote: SocketAddress, settings: FlowTLSConfiguration
    ) throws(FlowError) -> GnuTLSSession {
        let bound = NIOLoopBound(channel, eventLoop: channel.eventLoop)
        return try GnuTLSSession(
            role: .server, settings: settings, eventLoop: channel.eventLoop,
            write: { datagram, promise in
                bound.value.write(AddressedEnvelope(remoteAddress: remote, data: datagram), promise: promise)
            },
            flush: { bound.value.flush() })
    }

    /// Whether TLS over TCP with these settings runs on GnuTLS (pre-shared keys) rather than
    /// swift-nio-ssl.
    static func usesGnuTLSForStream(_ settings: FlowTLSConfiguration) -> Bool {
        !settings.preSharedKeys.isEmpty
    }
}
