/// The kernel's `struct tcp_info` (linux/tcp.h) up to `tcpi_snd_wnd`, field for field. Glibc's
/// Swift import stops at `tcpi_total_retrans`; the byte counters the reports need come after it.
/// The kernel copies `min(optlen, sizeof)` bytes, so older kernels leave the tail zero.
package struct LinuxTCPInfo: Sendable {
    package var state: UInt8 = 0
    package var caState: UInt8 = 0
    package var retransmits: UInt8 = 0
    package var probes: UInt8 = 0
    package var backoff: UInt8 = 0
    package var options: UInt8 = 0
    package var windowScales: UInt8 = 0  // snd_wscale:4, rcv_wscale:4
    package var flags: UInt8 = 0  // delivery_rate_app_limited:1, fastopen_client_fail:2
    package var rto: UInt32 = 0
    package var ato: UInt32 = 0
    package var sndMSS: UInt32 = 0
    package var rcvMSS: UInt32 = 0
    package var unacked: UInt32 = 0
    package var sacked: UInt32 = 0
    package var lost: UInt32 = 0
    package var retrans: UInt32 = 0
    package var fackets: UInt32 = 0
    package var lastDataSent: UInt32 = 0
    package var lastAckSent: UInt32 = 0
    package var lastDataRecv: UInt32 = 0
    package var lastAckRecv: UInt32 = 0
    package var pmtu: UInt32 = 0
    package var rcvSsthresh: UInt32 = 0
    /// Smoothed RTT, microseconds.
    package var rtt: UInt32 = 0
    /// RTT variance, microseconds.
    package var rttvar: UInt32 = 0
    package var sndSsthresh: UInt32 = 0
    package var sndCwnd: UInt32 = 0
    package var advmss: UInt32 = 0
    package var reordering: UInt32 = 0
    package var rcvRTT: UInt32 = 0
    package var rcvSpace: UInt32 = 0
    package var totalRetrans: UInt32 = 0
    package var pacingRate: UInt64 = 0
    package var maxPacingRate: UInt64 = 0
    package var bytesAcked: UInt64 = 0
    package var bytesReceived: UInt64 = 0
    package var segsOut: UInt32 = 0
    package var segsIn: UInt32 = 0
    /// Bytes queued in the socket and not yet sent.
    package var notsentBytes: UInt32 = 0
    /// Minimum RTT seen, microseconds.
    package var minRTT: UInt32 = 0
    package var dataSegsIn: UInt32 = 0
    package var dataSegsOut: UInt32 = 0
    package var deliveryRate: UInt64 = 0
    package var busyTime: UInt64 = 0
    package var rwndLimited: UInt64 = 0
    package var sndbufLimited: UInt64 = 0
    package var delivered: UInt32 = 0
    package var deliveredCE: UInt32 = 0
    /// Bytes sent, retransmissions included.
    package var bytesSent: UInt64 = 0
    package var bytesRetrans: UInt64 = 0
    package var dsackDups: UInt32 = 0
    package var reordSeen: UInt32 = 0
    package var rcvOoopack: UInt32 = 0
    package var sndWnd: UInt32 = 0

    package init() {}

    /// Bytes sent but not yet acknowledged by the peer.
    package var unacknowledgedBytes: UInt64 {
        let sent = bytesSent &- bytesRetrans
        return sent > bytesAcked ? sent - bytesAcked : 0
    }
}
