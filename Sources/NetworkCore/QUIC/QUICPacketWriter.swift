#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NetworkDNS
import NetworkSystem

/// Puts one QUIC connection's packets on its socket: straight to the socket where its
/// descriptor is known (one `sendmsg` per batch, the kernel segmenting a batch of full-size
/// packets), through NIO otherwise, and through NIO too while the socket's buffer is full (NIO
/// then waits for it to drain; direct writes resume once NIO has written everything it took, so
/// packets keep their order). Runs on the channel's loop.
///
/// A refused segmentation turns segmentation off for the connection and sends that batch's
/// packets one by one: `EMSGSIZE` when the segments are larger than the path's packets (the
/// kernel would fragment single packets, but not segments), `EIO` where the device or IPsec
/// cannot take segments, `EINVAL` for other limits. Through NIO, batches always go as single
/// packets, since NIO would close the channel on such an error.
final class QUICPacketWriter {
    private var direct: DirectSocket?
    /// Writes handed to NIO and not yet done.
    private var queuedInNIO = 0

    /// Whether batches of several packets can be sent (straight to the socket only).
    private(set) var segments = false
    /// A server's connection: a refused packet (ICMP port unreachable from an address its
    /// client left) is dropped, as a lost one would be, rather than ending the connection.
    var toleratesRefusals = false

    /// Packets go to `descriptor` (duplicated here) from now on; segmentation is on where the
    /// system has it.
    func writeDirectly(to descriptor: Int32) {
        direct = DirectSocket(duplicating: descriptor)
        segments = direct != nil && System.supportsUDPSegmentationOffload
    }

    /// Reconnects the socket to `remote`, so that it leaves from the source address the route
    /// to `remote` now has (`DirectSocket.reconnect(to:)`), and returns its new local address;
    /// nil when packets do not go straight to the socket, or the system refused.
    func reconnect(to remote: SocketAddress) -> SocketAddress? {
        guard let direct else { return nil }
        do {
            let storage = try remote.withSockAddr { address, length in
                try direct.reconnect(to: UnsafeRawBufferPointer(start: address, count: length))
            }
            return SocketAddress(storage: storage)
        } catch {
            NetworkLog.quic.debug("could not move the socket to a new path: \(error)")
            return nil
        }
    }

    /// Lets go of the socket (it stays open while a duplicate exists).
    func release() {
        direct = nil
        segments = false
    }

    /// Writes `batches` in order and flushes. Nil when all went (or were dropped as a lost
    /// datagram would be); the socket's error when the connection cannot go on.
    func write(_ batches: [QUICPacketBatcher.Batch], to remote: SocketAddress, context: ChannelHandlerContext) -> FlowError? {
        var pending = batches[...]
        if let direct, queuedInNIO == 0 {
            while let batch = pending.first {
                let outcome = batch.bytes.withUnsafeReadableBytes {
                    direct.sendDatagram($0, segmentSize: batch.segmentSize, ecn: batch.ecn, overIPv4: Self.isIPv4(remote))
                }
                switch outcome {
                case .wrote:
                    pending.removeFirst()
                    continue
                case .wouldBlock:
                    break
                case .failed(let code) where batch.segmentSize != nil && Self.refusesSegments(code):
                    NetworkLog.quic.debug("the path refused segmented packets (errno \(code)): sending them one by one")
                    segments = false
                    pending.removeFirst()
                    pending = ArraySlice(batch.packets.map { QUICPacketBatcher.Batch(bytes: $0, segmentSize: nil, ecn: batch.ecn) } + pending)
                    continue
                case .failed(let code) where Self.dropsPacket(code) || (code == ECONNREFUSED && toleratesRefusals):
                    // As NIO does: a datagram too large for the path (a path MTU probe), or an
                    // unreachable host for now; QUIC's loss recovery takes it from there.
                    pending.removeFirst()
                    continue
                case .failed(let code):
                    return .posix(code)
                }
                break
            }
        }
        guard !pending.isEmpty else { return nil }
        for batch in pending {
            batch.forEachPacket { packet in
                let promise = direct == nil ? nil : context.eventLoop.makePromise(of: Void.self)
                if let promise {
                    queuedInNIO += 1
                    promise.futureResult.assumeIsolated().whenComplete { [weak self] _ in self?.queuedInNIO -= 1 }
                }
                let metadata = AddressedEnvelope<ByteBuffer>.Metadata(ecnState: ECNCodepoint.state(batch.ecn))
                context.write(NIOAny(AddressedEnvelope(remoteAddress: remote, data: packet, metadata: metadata)), promise: promise)
            }
        }
        context.flush()
        return nil
    }

    /// IPv4 packets (an IPv4-mapped address on an IPv6 socket too) take their ECN codepoint
    /// from `IP_TOS`, IPv6 ones from `IPV6_TCLASS`.
    private static func isIPv4(_ address: SocketAddress) -> Bool {
        guard case .v6(let v6) = address else { return true }
        return withUnsafeBytes(of: v6.address.sin6_addr) { $0.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]) }
    }

    private static func refusesSegments(_ code: Int32) -> Bool {
        code == EMSGSIZE || code == EIO || code == EINVAL
    }

    private static func dropsPacket(_ code: Int32) -> Bool {
        code == EMSGSIZE || code == EHOSTUNREACH || code == ENOBUFS
    }
}
