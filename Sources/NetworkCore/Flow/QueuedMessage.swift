import NIOCore

/// A datagram or framed message waiting for a receive, with the framer's metadata (or the
/// datagram's facts) if any: in a flow's `ReceiveQueue`, or left in its inbox for receives on
/// any thread (`FlowInbox.readyDatagrams`).
package struct QueuedMessage: Sendable {
    package var bytes: ByteBuffer
    package var metadata: (any AnyObject & Sendable)?

    package init(bytes: ByteBuffer, metadata: (any AnyObject & Sendable)?) {
        self.bytes = bytes
        self.metadata = metadata
    }
}
