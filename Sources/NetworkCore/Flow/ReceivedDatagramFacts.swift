#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// What one received datagram says beyond its bytes: the ECN codepoint of its IP header and,
/// when the connection asked for it (`shouldCalculateReceiveTime`), when the engine read it. It
/// travels with the datagram to the facade, which reports it as the datagram's IP metadata. Made
/// only for datagrams that have something to say, so plain datagrams cost nothing more.
package final class ReceivedDatagramFacts: Sendable {
    /// The codepoint (RFC 3168: 0 not ECN-capable, 1 ECT(1), 2 ECT(0), 3 CE).
    package let ecn: UInt8
    /// `CLOCK_MONOTONIC_RAW` in nanoseconds when the datagram was read; 0 when not asked for.
    package let receiveTime: UInt64

    init(ecn: UInt8, receiveTime: UInt64) {
        self.ecn = ecn
        self.receiveTime = receiveTime
    }

    /// The facts of a datagram NIO read with `metadata`, or nil when there are none to report:
    /// not ECN-capable, and no receive time asked for.
    static func of(_ metadata: AddressedEnvelope<ByteBuffer>.Metadata?, stamped: Bool) -> ReceivedDatagramFacts? {
        let ecn = ECNCodepoint.codepoint(metadata?.ecnState)
        guard ecn != 0 || stamped else { return nil }
        return ReceivedDatagramFacts(ecn: ecn, receiveTime: stamped ? now() : 0)
    }

    /// The clock receive times are read from. (The kernel's own stamps, `SO_TIMESTAMPNS`, do
    /// not come through NIO's reads; the stamp is taken as the loop hands the datagram over, in
    /// the same turn as the system call that read it.)
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_RAW, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
