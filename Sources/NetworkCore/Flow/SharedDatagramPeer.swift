import NIOCore

/// The transport of a flow for one peer of a datagram listener: the listener's socket, shared
/// with its other peers, seen from this peer (where its datagrams go), with the peer's DTLS
/// session when the listener runs DTLS. Everything a listener peer sends, receives and closes goes
/// through here, so the flow treats plain and DTLS peers alike.
final class SharedDatagramPeer: Sendable {
    let channel: Channel
    let remote: SocketAddress
    /// The peer's DTLS server session (its handshake starts when the flow does), if any.
    let dtls: GnuTLSSession?
    private let release: @Sendable () -> Void

    /// `release` is called once the flow no longer uses the shared socket (`close`).
    init(channel: Channel, remote: SocketAddress, dtls: GnuTLSSession?, release: @escaping @Sendable () -> Void) {
        self.channel = channel
        self.remote = remote
        self.dtls = dtls
        self.release = release
    }

    /// Sends one datagram (a message, sealed into a record under DTLS) to the peer.
    func write(_ datagram: ByteBuffer, promise: EventLoopPromise<Void>?) {
        if let dtls {
            dtls.send(datagram, promise: promise)
        } else {
            channel.write(AddressedEnvelope(remoteAddress: remote, data: datagram), promise: promise)
        }
    }

    /// What a datagram from the peer brings: under DTLS, the messages it decrypted to and the
    /// session's end if it ended; otherwise the datagram itself.
    func receive(_ datagram: ByteBuffer) -> (messages: [ByteBuffer], end: GnuTLSSession.End?) {
        guard let dtls else { return ([Self.compacted(datagram)], nil) }
        return dtls.receive(datagram)
    }

    /// `datagram` in storage of its own size: the listener reads every datagram into a 64 KiB
    /// buffer, and a small datagram queued in it would pin all of it.
    static func compacted(_ datagram: ByteBuffer) -> ByteBuffer {
        guard datagram.capacity > 2 * datagram.readableBytes + 64 else { return datagram }
        var copy = ByteBufferAllocator().buffer(capacity: datagram.readableBytes)
        copy.writeImmutableBuffer(datagram)
        return copy
    }

    /// Gives the peer's slot back to the listener; a DTLS session says goodbye (close_notify)
    /// first.
    func close() {
        dtls?.close()
        release()
    }

    /// Gives the slot back without a goodbye (the flow was dropped unstarted).
    func abandon() {
        release()
    }
}
