#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NetworkDNS

/// The framers of one peer of a datagram listener. Such a peer has no pipeline of its own (it
/// shares the listener's socket, `SharedDatagramPeer`), so this is the framers' link: each
/// datagram's bytes (decrypted, under DTLS) go into the bottom framer; what the top framer
/// delivers goes to the flow; what the bottom framer writes for one message leaves as one
/// datagram through the peer. Each peer has its own framer instances; they go when the peer
/// closes (`finish`), so an evicted or departed peer keeps no framer memory.
final class PeerFramers: FramerHostLink, @unchecked Sendable {
    /// Bottom first.
    let hosts: [FramerHost]
    /// The peer's flow, which takes the top framer's messages.
    private weak var flow: Flow?
    /// Seals and sends one datagram to the peer (`SharedDatagramPeer.writeDatagram`).
    private let writeDatagram: (ByteBuffer, EventLoopPromise<Void>?) -> Void
    private let flush: () -> Void

    init(
        _ factories: [any HostedFramerFactory], flow: Flow, remote: SocketAddress, local: SocketAddress?,
        writeDatagram: @escaping (ByteBuffer, EventLoopPromise<Void>?) -> Void, flush: @escaping () -> Void
    ) {
        // Listed top first; the last sits right over the transport.
        hosts = factories.reversed().map { FramerHost(factory: $0, eventLoop: flow.eventLoop, writesDatagrams: true) }
        self.flow = flow
        self.writeDatagram = writeDatagram
        self.flush = flush
        for host in hosts {
            host.link = self
            host.remoteAddress = FlowAddress(remote)
            host.localAddress = local.map(FlowAddress.init)
        }
    }

    /// Input and framer state held for the peer, in bytes (counted in its receive bound).
    var heldBytes: Int { hosts.reduce(0) { $0 + $1.heldBytes } }

    /// One datagram's bytes from the peer.
    func received(_ bytes: ByteBuffer) {
        hosts.first?.received(bytes)
    }

    /// The peer ended its session (DTLS close_notify).
    func inputEnded() {
        for host in hosts { host.inputEnded() }
    }

    /// A message from the flow, through the framers, to the peer.
    func send(_ message: FramedMessage, promise: EventLoopPromise<Void>?) {
        guard let top = hosts.last else { return writeDatagram(message.bytes, promise) }
        top.send(message, promise: promise)
    }

    /// The peer is closing: each framer's `stop`, then its `cleanup`; nothing is kept.
    func finish() {
        for host in hosts.reversed() { host.closing() }
        for host in hosts.reversed() { host.finish() }
    }

    private func index(of host: FramerHost) -> Int? {
        hosts.firstIndex { $0 === host }
    }

    // MARK: - FramerHostLink

    func framerHost(_ host: FramerHost, deliver message: FramedMessage) {
        guard let index = index(of: host) else { return }
        if index + 1 < hosts.count {
            hosts[index + 1].received(message.bytes)
        } else {
            flow?.receivedPeerMessage(message)
        }
    }

    func framerHost(_ host: FramerHost, write bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let index = index(of: host) else {
            promise?.fail(FlowError.posix(ENOTCONN))
            return
        }
        if index > 0 {
            hosts[index - 1].send(FramedMessage(bytes: bytes, metadata: nil), promise: promise)
        } else {
            writeDatagram(bytes, promise)
        }
    }

    func framerHostFlush(_ host: FramerHost) {
        flush()
    }

    func framerHostWantsRead(_ host: FramerHost) {
        // The listener's socket is always read.
    }

    func framerHost(_ host: FramerHost, failed error: FlowError) {
        guard let flow else { return }
        // After the framer's call returns: the failure closes the peer, which cleans the
        // framers up, and the framer that failed must not be cleaned up from inside itself.
        flow.eventLoop.execute { flow.sharedTransportFailed(error) }
    }
}
