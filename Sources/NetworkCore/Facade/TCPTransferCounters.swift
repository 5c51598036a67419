import NetworkSystem

/// The kernel's TCP counters a data-transfer report needs (from TCP_INFO), cumulative since the
/// socket was created.
package struct TCPTransferCounters: Sendable, Equatable {
    package var bytesSent: UInt64
    package var bytesReceived: UInt64
    package var bytesRetransmitted: UInt64
    /// Smoothed round-trip time, microseconds.
    package var smoothedRTT: UInt32
    /// Round-trip time variance, microseconds.
    package var rttVariance: UInt32
    /// Minimum round-trip time seen, microseconds.
    package var minimumRTT: UInt32
    package var segmentsIn: UInt32
    package var segmentsOut: UInt32

    package init(
        bytesSent: UInt64 = 0, bytesReceived: UInt64 = 0, bytesRetransmitted: UInt64 = 0, smoothedRTT: UInt32 = 0,
        rttVariance: UInt32 = 0, minimumRTT: UInt32 = 0, segmentsIn: UInt32 = 0, segmentsOut: UInt32 = 0
    ) {
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.bytesRetransmitted = bytesRetransmitted
        self.smoothedRTT = smoothedRTT
        self.rttVariance = rttVariance
        self.minimumRTT = minimumRTT
        self.segmentsIn = segmentsIn
        self.segmentsOut = segmentsOut
    }

    /// The counters of one TCP_INFO reading.
    package init(_ info: LinuxTCPInfo) {
        self.init(
            bytesSent: info.bytesSent, bytesReceived: info.bytesReceived, bytesRetransmitted: info.bytesRetrans,
            smoothedRTT: info.rtt, rttVariance: info.rttvar, minimumRTT: info.minRTT, segmentsIn: info.segsIn,
            segmentsOut: info.segsOut)
    }
}
