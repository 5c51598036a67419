#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging
import NIOCore
import NetworkDNS

/// Large stream sends written from their callers' `Data`, without a copy.
///
/// A send too large to write from the sender's thread (`FlowInbox.directWriteLimit`) stays in
/// the caller's `Data` on its way to the loop (`FlowInbox.keepsUncopied`). The loop holds such
/// sends until its flush and writes them together, in one `sendmsg` on the flow's duplicate
/// descriptor, when nothing of the flow is buffered in the channel ahead of them. Of a partial
/// write only the rest of the send the socket stopped in is copied, and goes through the
/// channel; the sends after it (and those that come meanwhile) stay held until the channel has
/// written it, which NIO reports, and then go the same way. (Copying 64 KiB sends cost a bulk
/// sender about a tenth of its CPU. Writing them one by one instead woke a peer on the same CPU
/// once per send; writing them from the sender's thread stalled, unpinned, a sender that waits
/// for each send at every partial write.)
extension Flow {
    /// The most sends gathered into one system call (well under `IOV_MAX`); more held ones go in
    /// several.
    static let uncopiedSendsPerWrite = 64

    /// Whether `send`, still in its caller's `Data`, is held for the flush; otherwise the caller
    /// copies it and writes it to the channel.
    func holdUncopied(_ send: FlowSend, channel: Channel) -> Bool {
        guard !send.closesWrite, !sendPath.writeClosed, directSocketAttached else { return false }
        // The first held send waits behind what the channel still has to write (a partial
        // write's rest, most often) until the socket took it all; later ones follow it (nothing
        // else goes to the channel while sends are held: `write` writes them first).
        if uncopiedSends.isEmpty && (needsFlush || !Self.holdsNothing(channel)) {
            awaitChannelDrain(channel)
        }
        uncopiedSends.append(send)
        needsFlush = true
        return true
    }

    /// Writes an empty buffer behind what `channel` holds: its promise is kept once the socket
    /// took everything before it, and then the held sends go out. (Copying each into the channel
    /// instead cost a pinned bulk sender a fifth of its speed, most of it faulting in fresh
    /// pages for the copies.)
    private func awaitChannelDrain(_ channel: Channel) {
        let drained = eventLoop.makePromise(of: Void.self)
        drained.futureResult.whenComplete { result in
            guard !self.uncopiedSends.isEmpty else { return }
            switch result {
            case .success:
                // (Inside NIO's write loop: what this writes to the channel, it picks up.)
                self.needsFlush = true
                self.flushIfNeeded()
                self.armDirectWritesIfIdle()
            case .failure(let error):
                self.failUncopiedSends(FlowError(error))
            }
        }
        channel.write(ByteBuffer(), promise: drained)
    }

    /// Writes the held sends to the socket, when the channel holds nothing ahead of them; those
    /// the socket took all of are finished. The first one it took only part of (or none of) is
    /// copied and written to the channel, unflushed; so are all after it, unless `holdingRest`:
    /// then they stay held, uncopied, until the channel drains (all of them, when it holds bytes
    /// ahead of them now).
    func writeUncopiedSends(to channel: Channel, holdingRest: Bool = false) {
        let channelEmpty = Self.holdsNothing(channel)
        // (Waiting already: `awaitChannelDrain` wrote its empty buffer behind those bytes.)
        if holdingRest && !channelEmpty { return }
        // (The array goes with them: an idle flow keeps no storage for held sends.)
        var sends: [FlowSend] = []
        swap(&sends, &uncopiedSends)
        // No direct write may be armed before the rest is in the channel.
        batchDepth += 1
        defer { batchDepth -= 1 }
        let socket = channelEmpty ? mailbox.directSocketForLoop : nil
        var start = sends.startIndex
        while start < sends.endIndex {
            let group = sends[start..<min(start + Self.uncopiedSendsPerWrite, sends.endIndex)]
            var written = 0
            // (A failed socket takes nothing: the channel's write then meets the error and
            // reports it as for any send.)
            if let socket, case .wrote(let count) = Self.withBytes(of: group, { socket.write($0) }) { written = count }
            if written > 0 {
                NetworkLog.traceConnection("send \(written) bytes (from the callers' buffers)", metadata: logMetadata)
                report.sentBytes += UInt64(written)
                #if DEBUG
                uncopiedBytesWritten += UInt64(written)
                #endif
            }
            for index in group.indices {
                let count = sends[index].byteCount
                if written >= count {
                    written -= count
                    finish(sends[index], nil)
                    continue
                }
                copyToChannel(sends[index], skipping: written, channel: channel)
                let rest = sends[(index + 1)...]
                if holdingRest, !rest.isEmpty, directSocketAttached, !sendPath.writeClosed {
                    // (Copying a whole turn's sends after a partial write faulted in fresh pages
                    // for each: the socket is full, so they wait for it, as a first held send.)
                    uncopiedSends = Array(rest)
                    awaitChannelDrain(channel)
                } else {
                    for send in rest { copyToChannel(send, skipping: 0, channel: channel) }
                }
                return
            }
            start = group.endIndex
        }
    }

    /// Writes what is left of `send`, past the `written` bytes the socket took, to the channel
    /// (a copy).
    private func copyToChannel(_ send: FlowSend, skipping written: Int, channel: Channel) {
        var send = send
        if written > 0, let bytes = send.uncopied {
            // The written part's share of the budget goes back now, the rest's once written.
            if send.counted { _ = mailbox.settle(bytes: written, counted: true, calledCompletion: false, written: nil) }
            send.uncopied = bytes.dropFirst(written)
        }
        send.copyUncopied()
        writeToChannel(send, channel: channel)
    }

    /// The held sends fail with `error` (no socket is left for them).
    func failUncopiedSends(_ error: FlowError) {
        for send in takeUncopiedSends() { finish(send, error) }
    }

    /// The held sends, no longer held.
    func takeUncopiedSends() -> [FlowSend] {
        var sends: [FlowSend] = []
        swap(&sends, &uncopiedSends)
        return sends
    }

    /// Runs `body` with the bytes of every send in `sends` (each nests in the one before: a
    /// `Data`'s bytes are only lent for the length of a call).
    private static func withBytes<R>(
        of sends: ArraySlice<FlowSend>, _ body: ([UnsafeRawBufferPointer]) -> R
    ) -> R {
        var gathered: [UnsafeRawBufferPointer] = []
        gathered.reserveCapacity(sends.count)
        return withBytes(of: sends, gathered: &gathered, body)
    }

    private static func withBytes<R>(
        of sends: ArraySlice<FlowSend>, gathered: inout [UnsafeRawBufferPointer],
        _ body: ([UnsafeRawBufferPointer]) -> R
    ) -> R {
        guard let first = sends.first, let bytes = first.uncopied else { return body(gathered) }
        return bytes.withUnsafeBytes { pointer in
            gathered.append(pointer)
            return withBytes(of: sends.dropFirst(), gathered: &gathered, body)
        }
    }
}
