import NetworkCore
import NetworkSystem
import Testing

/// The TCP counters a data-transfer report takes from one TCP_INFO reading.
@Suite("Core.TCPTransferCounters")
struct TCPTransferCountersTests {
    @Test("each counter comes from its TCP_INFO field")
    func fromTCPInfo() {
        var info = LinuxTCPInfo()
        info.bytesSent = 1
        info.bytesReceived = 2
        info.bytesRetrans = 3
        info.rtt = 4
        info.rttvar = 5
        info.minRTT = 6
        info.segsIn = 7
        info.segsOut = 8
        let counters = TCPTransferCounters(info)
        #expect(
            counters
                == TCPTransferCounters(
                    bytesSent: 1, bytesReceived: 2, bytesRetransmitted: 3, smoothedRTT: 4, rttVariance: 5,
                    minimumRTT: 6, segmentsIn: 7, segmentsOut: 8))
        #expect(TCPTransferCounters(LinuxTCPInfo()) == TCPTransferCounters())
    }
}
