import NIOCore

/// Buffers a stream flow's sends were copied into, kept for the next sends once the socket
/// wrote them.
///
/// Every `send(content:)` copies the caller's `Data` into a `ByteBuffer` the socket writes from.
/// A bulk sender has a send budget's worth of them in flight; freeing each one as it is written
/// and allocating the next lets glibc hand the top of its heap back to the kernel and fault it in
/// again (measured: one `madvise` per few sends and half the CPU of a bulk transfer spent in page
/// faults, in about half the runs, depending on the heap's layout). Reusing them avoids that
/// churn. The pool holds at most what the send budget lets a flow hold anyway, and lets its
/// buffers go once a check (`check()`, every `checkInterval` while it holds any) finds that no
/// send took one since the previous check, so a connection that went quiet keeps none.
///
/// A buffer comes back once the loop's write of it completed, when NIO no longer holds it; if it
/// somehow still did, `ByteBuffer`'s copy-on-write gives the next send fresh storage, so a
/// returned buffer can never be overwritten under a reader.
package struct SendBufferPool {
    /// Buffers larger than this are not kept (one such send would hold its size for the flow's
    /// next sends).
    package static var largestKept: Int { 256 * 1024 }

    /// How often a pool that holds buffers is checked for use.
    package static var checkInterval: Duration { .seconds(1) }

    // Ten bytes, so that the flow's inbox, with it, stays as small as before the pool (every
    // connection has one): the kept bytes are summed when needed (a few buffers at most).
    private var buffers: [ByteBuffer] = []
    /// A send took a buffer since the last check.
    private var usedSinceCheck = false
    /// A check is scheduled (the loop schedules one when `give` asks for it).
    private var checkScheduled = false
    #if DEBUG
    /// Buffers handed out for reuse so far (wrapping; tests only: debug builds).
    package private(set) var reuses: UInt32 = 0
    #endif

    package init() {}

    /// Buffers waiting to be reused.
    package var count: Int { buffers.count }

    /// A buffer to copy the next send into, if one is kept.
    package mutating func take() -> ByteBuffer? {
        guard let buffer = buffers.popLast() else { return nil }
        usedSinceCheck = true
        #if DEBUG
        reuses &+= 1
        #endif
        return buffer
    }

    /// Keeps `buffer` for a later send when it fits under `limit` bytes in all. True when the
    /// caller must schedule a `check()`.
    package mutating func give(_ buffer: ByteBuffer, limit: Int) -> Bool {
        let capacity = buffer.capacity
        guard capacity <= Self.largestKept, keptBytes + capacity <= limit else { return false }
        buffers.append(buffer)
        guard !checkScheduled else { return false }
        checkScheduled = true
        usedSinceCheck = true
        return true
    }

    /// Lets every buffer go unless a send took one since the previous check. True while the
    /// pool still holds buffers: the caller schedules the next check.
    package mutating func check() -> Bool {
        if !usedSinceCheck { empty() }
        usedSinceCheck = false
        checkScheduled = !buffers.isEmpty
        return checkScheduled
    }

    /// Lets every kept buffer go.
    package mutating func empty() {
        buffers = []
    }

    private var keptBytes: Int {
        buffers.reduce(0) { $0 + $1.capacity }
    }
}
