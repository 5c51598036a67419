import NIOCore

/// The transport of a flow for one peer of a datagram listener: the listener's socket, shared
/// with its other peers, seen from this peer (where its datagrams go), with the peer's DTLS
/// session when the listener runs DTLS, and its framers when its stack has some. Everything a
/// listener peer sends, receives and closes goes through here, so the flow treats plain, DTLS and
/// framed peers alike.
final class SharedDatagramPeer: @unchecked Sendable {
    let channel: Channel
    let remote: SocketAddress
    /// The peer's DTLS server session (its handshake starts when the flow does), if any.
    let dtls: GnuTLSSession?
    /// The listener's writer, through which a plain datagram leaves with its whole TOS byte
    /// (on the loop only); without it, through NIO (ECN alone).
    private let writer: DatagramWriter?
    private let release: @Sendable () -> Void
    /// The peer's framers, if its stack has any: set once by the flow as it is made, then used
    /// on the loop only.
    private(set) var framers: PeerFramers?

    /// `release` is called once the flow no longer uses the shared socket (`close`).
    init(
        channel: Channel, remote: SocketAddress, dtls: GnuTLSSession?, writer: DatagramWriter? = nil,
        release: @escaping @Sendable () -> Void
    ) {
        self.channel = channel
        self.remote = remote
        self.dtls = dtls
        self.writer = writer
        self.release = release
    }

    /// The listener's writer when the peer's datagrams go to it as they are (no DTLS, no
    /// framers): a flush's datagrams then leave in batches (`Flow+DatagramWriter`).
    var plainWriter: DatagramWriter? { dtls == nil && framers == nil ? writer : nil }

    /// Gives the peer its own instances of `factories` (see `PeerFramers`).
    func attachFramers(_ factories: [any HostedFramerFactory], flow: Flow) {
        guard !factories.isEmpty else { return }
        framers = PeerFramers(
            factories, flow: flow, remote: remote, local: channel.localAddress,
            writeDatagram: { [unowned self] in self.writeDatagram($0, promise: $1) },
            flush: { [unowned self] in self.channel.flush() })
    }

    /// Sends one message to the peer: through its framers when it has some (what they write
    /// for it leaving as one datagram), else as one datagram, with `ecn` as its ECN codepoint.
    func write(_ message: FramedMessage, ecn: UInt8 = 0, promise: EventLoopPromise<Void>?) {
        guard let framers else { return writeDatagram(message.bytes, ecn: ecn, promise: promise) }
        framers.send(message, promise: promise)
    }

    /// Sends one datagram (sealed into a record under DTLS) to the peer; a plain one with `ecn`
    /// as its ECN codepoint (a control message) when it is not 0.
    func writeDatagram(_ datagram: ByteBuffer, ecn: UInt8 = 0, promise: EventLoopPromise<Void>?) {
        if let dtls {
            dtls.send(datagram, promise: promise)
        } else if let writer {
            // (A refusal fails the promise too; the socket goes on.)
            _ = writer.write(
                [DatagramBatch(bytes: datagram, segmentSize: nil, ecn: ecn)], to: remote, through: ChannelDatagramOutbound(channel: channel),
                written: promise)
        } else {
            channel.write(AddressedEnvelope(remoteAddress: remote, data: datagram, metadata: ECNCodepoint.writeMetadata(ecn)), promise: promise)
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
        framers?.finish()
        dtls?.close()
        release()
    }

    /// Gives the slot back without a goodbye (the flow was dropped without being cancelled,
    /// possibly off its loop: the framers are finished there).
    func abandon() {
        if let framers { channel.eventLoop.execute { framers.finish() } }
        release()
    }
}
