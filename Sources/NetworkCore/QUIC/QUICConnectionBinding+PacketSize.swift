import CNGTCP2

/// How large a connection's packets are. On a real path ngtcp2 decides: 1,200 bytes, then what
/// its path MTU discovery finds (at most 1,452). Between two sockets of this machine the path is
/// the loopback device, whose MTU (64 KiB) is known and never shrinks, and whose only loss is
/// a full receive buffer; there the cost of QUIC is per packet (a trip through ngtcp2, header
/// protection, an AEAD call and the kernel's UDP path each), so fewer, larger packets carry
/// the same bytes for a fraction of the CPU.
extension QUICConnectionBinding {
    /// Packets to a peer on loopback once the handshake is over. Large enough that the
    /// per-packet costs fade; small enough that a default receive buffer (208 KiB) still holds
    /// a dozen, so that loss recovery (three later packets acknowledged) keeps working when a
    /// slow reader drops some, and that four fit one segmented send.
    static let loopbackPacketSize = 16_000

    /// Settings for a connection whose both ends are loopback addresses: ngtcp2 no longer
    /// shapes packets to its path MTU estimate (nor probes for one); `packetBufferSize` bounds
    /// them instead. `requested` is the application's `maxUDPPayloadSize` (0: none), which
    /// still caps them.
    static func sizeForLoopback(_ settings: inout ngtcp2_settings, requested: Int) {
        settings.no_tx_udp_payload_size_shaping = 1
        settings.no_pmtud = 1
        settings.max_tx_udp_payload_size = requested >= Int(NGTCP2_MAX_UDP_PAYLOAD_SIZE)
            ? min(requested, loopbackPacketSize) : loopbackPacketSize
    }

    /// Whether this side knows the handshake is over for both: a client once the server
    /// confirmed it (HANDSHAKE_DONE), a server once it completed.
    private var handshakeOver: Bool {
        guard let connection else { return false }
        return role.isClient ? handshakeConfirmed : ngtcp2_conn_get_handshake_completed(connection) != 0
    }

    /// The largest packet the connection sends on its path now. On loopback: 1,200 bytes until
    /// the handshake is over (its flights as on any path, before the peer's limits are known),
    /// then the configured size within the peer's `max_udp_payload_size`.
    var pathPacketSize: Int {
        guard let connection else { return 0 }
        guard onLoopback else { return ngtcp2_conn_get_path_max_tx_udp_payload_size(connection) }
        guard handshakeOver else { return Int(NGTCP2_MAX_UDP_PAYLOAD_SIZE) }
        var size = ngtcp2_conn_get_max_tx_udp_payload_size(connection)
        if let remote = ngtcp2_conn_get_remote_transport_params(connection)?.pointee, remote.max_udp_payload_size > 0 {
            size = min(size, Int(clamping: remote.max_udp_payload_size))
        }
        return max(Int(NGTCP2_MAX_UDP_PAYLOAD_SIZE), size)
    }

    /// The buffer each packet is written into: ngtcp2 makes packets up to that size, shaped to
    /// its own path estimate except on loopback, where the buffer is the bound.
    var packetBufferSize: Int {
        guard let connection else { return 0 }
        return onLoopback ? pathPacketSize : ngtcp2_conn_get_max_tx_udp_payload_size(connection)
    }
}
