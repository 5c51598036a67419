#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// The datagram sends a flow took since its last flush, in order, written together when it
/// flushes. Written then rather than one by one, the flow knows which datagram is the last: that
/// one alone carries a write promise, and its result settles the completions of the others too
/// (NIO completes the writes of a flush in order, so when the last is done, all are). A promise
/// and a callback per flush instead of per datagram is most of what keeps a `batch { }` of
/// datagrams near one allocation per datagram.
///
/// A datagram that can fail on its own (too large: `EMSGSIZE`) carries a promise of its own and
/// ends a segment, so such an error reaches its completion and no other.
package struct DatagramOutbox {
    package struct Entry: Sendable {
        /// What goes on the wire (dropped once written, so that completions waiting for their
        /// queue do not keep the bytes alive).
        package var datagram: ByteBuffer?
        /// False for a send that puts nothing on the wire (part of a datagram, a bare completion,
        /// a refused send), settled with `error`, in its turn.
        package fileprivate(set) var isDatagram: Bool
        package var completion: (any FlowDatagramCompletion)?
        package var error: FlowError?
        /// The datagram's ECN codepoint (`FlowSend.ecn`).
        package let ecn: UInt8
        /// The datagram's own DSCP (`FlowSend.dscp`); nil for the socket's.
        package let dscp: UInt8?

        package init(
            datagram: ByteBuffer?, completion: (any FlowDatagramCompletion)?, error: FlowError? = nil, ecn: UInt8 = 0,
            dscp: UInt8? = nil
        ) {
            self.datagram = datagram
            self.isDatagram = datagram != nil
            self.completion = completion
            self.error = error
            self.ecn = ecn
            self.dscp = dscp
        }
    }

    /// Entries that one write promise settles: the promise of the datagram at `holder`, the last
    /// one in the range. No holder: nothing of it goes on the wire, it is settled at once.
    package struct Segment: Equatable, Sendable {
        package var range: Range<Int>
        package var holder: Int?

        package init(range: Range<Int>, holder: Int?) {
            self.range = range
            self.holder = holder
        }
    }

    package private(set) var entries: [Entry] = []

    package init() {}

    package var isEmpty: Bool { entries.isEmpty }

    /// Room for `count` more entries: one hop's datagrams then grow the storage once.
    package mutating func reserve(_ count: Int) {
        entries.reserveCapacity(entries.count + count)
    }

    package mutating func append(_ entry: Entry) {
        entries.append(entry)
    }

    /// Appends a datagram's entry, made in place: an entry passed in is copied into the
    /// storage (a retain and release of its bytes and its completion).
    package mutating func append(
        datagram: consuming ByteBuffer, completion: consuming (any FlowDatagramCompletion)?, ecn: UInt8, dscp: UInt8?
    ) {
        // (Made empty, then filled where it is stored.)
        entries.append(Entry(datagram: nil, completion: nil, ecn: ecn, dscp: dscp))
        let last = entries.count - 1
        entries[last].isDatagram = true
        entries[last].datagram = consume datagram
        entries[last].completion = consume completion
    }

    /// Everything waiting, in order; the outbox is left empty (and keeps no storage).
    package mutating func take() -> [Entry] {
        defer { entries = [] }
        return entries
    }

    /// How `entries` split into segments: each ends with a datagram that `alone` says can fail
    /// on its own, the last one with the last datagram (what follows it joins that segment).
    package static func segments(of entries: [Entry], alone: (ByteBuffer) -> Bool) -> [Segment] {
        guard let last = entries.lastIndex(where: \.isDatagram) else {
            return entries.isEmpty ? [] : [Segment(range: entries.indices, holder: nil)]
        }
        var segments: [Segment] = []
        var start = 0
        for index in entries.indices[..<last] {
            guard let datagram = entries[index].datagram, alone(datagram) else { continue }
            segments.append(Segment(range: start..<(index + 1), holder: index))
            start = index + 1
        }
        segments.append(Segment(range: start..<entries.count, holder: last))
        return segments
    }

    /// The result for the send at `index` of `segment`, given its holder's: a datagram shares the
    /// holder's error (the socket or the channel failed under them all), except `EMSGSIZE`,
    /// which only the holder's own size can cause; a send with nothing on the wire keeps its own.
    package static func result(
        of index: Int, in segment: Segment, of entries: [Entry], holderError: FlowError?
    ) -> FlowError? {
        if !entries[index].isDatagram { return entries[index].error }
        if index == segment.holder || holderError != .posix(EMSGSIZE) { return holderError }
        return nil
    }
}
