import NIOCore

/// UDP generic receive offload (`UDP_GRO`): the kernel hands a burst of same-size datagrams from
/// one peer over as one buffer, with the size each was, so that one read takes up to 64 KiB of
/// them. Whoever reads such a channel cuts each buffer back into its datagrams
/// (`DatagramBatch.forEachPacket` with the envelope's `segmentSize`), so message boundaries are
/// as they were on the wire. Where the system has no `UDP_GRO` (probed once, by NIO), datagrams
/// come one by one as before.
enum DatagramReceiveOffload {
    /// Turns receive offload on for `channel` where the system has it. Without the segment
    /// sizes a coalesced read could not be cut back, so it is all or nothing.
    static func enable(on channel: Channel) {
        guard System.supportsUDPReceiveOffload, let options = channel.syncOptions else { return }
        do {
            try options.setOption(ChannelOptions.datagramReceiveOffload, value: true)
            try options.setOption(ChannelOptions.datagramReceiveSegmentSize, value: true)
        } catch {
            try? options.setOption(ChannelOptions.datagramReceiveOffload, value: false)
        }
    }
}
