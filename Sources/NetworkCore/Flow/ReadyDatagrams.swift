import DequeModule

/// Whole datagrams a flow's loop read ahead of the receives and left where a receive on any
/// thread takes one without waking the loop (`FlowInbox.publishReady`, `takeReady`): a reader
/// keeping up with a burst then costs no hop per datagram. Oldest first, and older than
/// anything the loop still holds. Lives in the flow's `DatagramPath`, under the inbox lock.
package struct ReadyDatagrams {
    private var datagrams: Deque<QueuedMessage> = []
    /// The bytes of `datagrams` (they count against the flow's receive buffer).
    package private(set) var bytes = 0
    /// The loop stopped reading because these filled the buffer (`room`): the receive that
    /// takes them below half says so (`take`).
    private var readingWaits = false

    package init() {}

    package var count: Int { datagrams.count }

    package mutating func append(_ more: Deque<QueuedMessage>) {
        for datagram in more { bytes += datagram.bytes.readableBytes }
        // With none left (a reader keeping up), the loop's deque becomes this one: no copy, and
        // no retain and release per datagram.
        if datagrams.isEmpty {
            datagrams = more
        } else {
            datagrams.append(contentsOf: more)
        }
    }

    /// The first datagram when it fits `maximum` bytes (a longer one is the loop's to split);
    /// `resumeReading` when the loop stopped reading for these and they are now below half the
    /// flow's high-water marks.
    package mutating func take(maximum: Int) -> (datagram: QueuedMessage, resumeReading: Bool)? {
        guard let first = datagrams.first, first.bytes.readableBytes <= maximum else { return nil }
        datagrams.removeFirst()
        bytes -= first.bytes.readableBytes
        guard readingWaits, datagrams.count <= Flow.datagramHighWaterCount / 2, bytes <= Flow.datagramHighWaterBytes / 2 else {
            return (first, false)
        }
        readingWaits = false
        return (first, true)
    }

    /// Everything, in order; none are left.
    package mutating func takeAll() -> Deque<QueuedMessage> {
        readingWaits = false
        bytes = 0
        var taken: Deque<QueuedMessage> = []
        swap(&taken, &datagrams)
        return taken
    }

    /// Whether the loop may read more with `count` datagrams and `bytes` of its own buffered,
    /// against the flow's high-water marks with these counted; when not, reading waits for a
    /// receive to make room.
    package mutating func room(count: Int, bytes: Int) -> Bool {
        let room = count + datagrams.count < Flow.datagramHighWaterCount && bytes + self.bytes < Flow.datagramHighWaterBytes
        if !room && !datagrams.isEmpty { readingWaits = true }
        return room
    }
}
