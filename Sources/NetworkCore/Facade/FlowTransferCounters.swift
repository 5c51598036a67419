/// A flow's cumulative counters at one moment: application bytes and, for TCP, the kernel's.
package struct FlowTransferCounters: Sendable, Equatable {
    /// When they were read, in nanoseconds of the monotonic clock.
    package var uptimeNanoseconds: UInt64
    /// Application bytes handed to the transport / received from it.
    package var sentBytes: UInt64
    package var receivedBytes: UInt64
    /// TCP_INFO's counters; nil for datagram flows or without a socket.
    package var tcp: TCPTransferCounters?

    package init(uptimeNanoseconds: UInt64, sentBytes: UInt64, receivedBytes: UInt64, tcp: TCPTransferCounters?) {
        self.uptimeNanoseconds = uptimeNanoseconds
        self.sentBytes = sentBytes
        self.receivedBytes = receivedBytes
        self.tcp = tcp
    }
}
