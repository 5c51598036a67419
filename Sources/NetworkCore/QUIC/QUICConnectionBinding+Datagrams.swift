#if canImport(Glibc)
import Glibc
#endif
import CNGTCP2
import NIOCore

/// QUIC datagrams (RFC 9221) of a connection: what may be sent, the queue, and the frame that
/// carries one (`writePackets` puts them before stream data).
extension QUICConnectionBinding {
    /// The largest datagram payload that fits both the peer's DATAGRAM frame limit and one
    /// packet on the path; 0 while the peer takes no datagrams (or before the handshake).
    package var maxDatagramPayload: Int {
        guard let connection, phase == .established,
            let remote = ngtcp2_conn_get_remote_transport_params(connection)?.pointee, remote.max_datagram_frame_size > 0
        else { return 0 }
        // A frame is its type (1 byte), its length (a varint: 2 bytes up to 16,383) and the
        // payload; a packet adds a short header (1 byte, the peer's connection ID of up to 20,
        // a packet number of up to 4) and the AEAD tag (16).
        let frameLimit = Int(clamping: remote.max_datagram_frame_size) - 1 - 2
        let packetLimit = pathPacketSize - (1 + 20 + 4 + 16) - 1 - 2
        let limit = min(frameLimit, packetLimit)
        // (Above 16,383 bytes the length takes 4 bytes.)
        return max(0, limit > 16_383 ? limit - 2 : limit)
    }

    /// Queues one datagram for the next packets; the error when it cannot go at all
    /// (`EMSGSIZE` above `maxDatagramPayload`, which is 0 when the peer takes none). Each
    /// queued datagram gets one result in `takeDatagramResults()`.
    package func queueDatagram(_ bytes: ByteBuffer) -> FlowError? {
        guard phase == .established else { return .posix(phase == .closed ? ECONNABORTED : ENOTCONN) }
        guard bytes.readableBytes <= maxDatagramPayload else { return .posix(EMSGSIZE) }
        datagrams.append(bytes)
        return nil
    }

    /// What became of the datagrams that left the queue since the last call, in queue order
    /// (nil: put in a packet; QUIC does not resend a lost one).
    package func takeDatagramResults() -> [FlowError?] {
        datagrams.takeResults()
    }

    /// One packet into `base` with `datagram` in a DATAGRAM frame if it fits (`accepted`).
    func writeDatagram(
        _ datagram: ByteBuffer, into base: UnsafeMutablePointer<UInt8>, size: Int, ecn: inout UInt8, accepted: inout Int32, now: UInt64
    ) -> Int {
        guard let connection else { return 0 }
        return datagram.withUnsafeReadableBytes { bytes in
            var vector = ngtcp2_vec(
                base: UnsafeMutablePointer(mutating: bytes.bindMemory(to: UInt8.self).baseAddress), len: bytes.count)
            return cngtcp2_conn_writev_datagram(
                connection, &ecn, base, size, &accepted, UInt32(NGTCP2_WRITE_DATAGRAM_FLAG_NONE), 0, &vector, 1, now)
        }
    }

}
