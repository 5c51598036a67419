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
/// descriptor, when nothing of the flow is buffered in the channel ahead of them; only what the
/// socket does not take is copied, and goes through the channel. (Copying 64 KiB sends cost a
/// bulk sender about a tenth of its CPU. Writing them one by one instead woke a peer on the same
/// CPU once per send; writing them from the sender's thread stalled, unpinned, a sender that
/// waits for each send at every partial write.)
extension Flow {
    /// The most sends gathered into one system call (well under `IOV_MAX`).
    static let uncopiedSendsPerWrite = 64

    /// Whether `send`, still in its caller's `Data`, is held for the flush; otherwise the caller
    /// copies it and writes it to the channel.
    func holdUncopied(_ send: FlowSend, channel: Channel) -> Bool {
        guard !send.closesWrite, !sendPath.writeClosed, directSocketAttached else { return false }
        if uncopiedSends.count >= Self.uncopiedSendsPerWrite { writeUncopiedSends(to: channel) }
        // The first held send needs the channel empty; later ones follow it (nothing else goes
        // to the channel while sends are held: `write` writes them first).
        if uncopiedSends.isEmpty {
            guard !needsFlush, Self.holdsNothing(channel) else { return false }
        }
        uncopiedSends.append(send)
        needsFlush = true
        return true
    }

    /// Writes the held sends to the socket; those it took all of are finished, the rest (from
    /// the first one it took only part of) are copied and written to the channel, unflushed.
    func writeUncopiedSends(to channel: Channel) {
        // (The array goes with them: an idle flow keeps no storage for held sends.)
        var sends: [FlowSend] = []
        swap(&sends, &uncopiedSends)
        var written = 0
        if let socket = mailbox.directSocketForLoop {
            // (A failed socket takes nothing: the channel's write then meets the error and
            // reports it as for any send.)
            if case .wrote(let count) = Self.withBytes(of: sends[...], { socket.write($0) }) { written = count }
        }
        if written > 0 {
            NetworkLog.connection.trace("send \(written) bytes (from the callers' buffers)", metadata: logMetadata)
            report.sentBytes += UInt64(written)
            #if DEBUG
            uncopiedBytesWritten += UInt64(written)
            #endif
        }
        // No direct write may be armed before the rest is in the channel.
        batchDepth += 1
        defer { batchDepth -= 1 }
        for var send in sends {
            let count = send.byteCount
            if written >= count {
                written -= count
                finish(send, nil)
                continue
            }
            if written > 0, let bytes = send.uncopied {
                // The written part's share of the budget goes back now, the rest's once written.
                if send.counted { _ = mailbox.settle(bytes: written, counted: true, calledCompletion: false, written: nil) }
                send.uncopied = bytes.dropFirst(written)
                written = 0
            }
            send.copyUncopied()
            writeToChannel(send, channel: channel)
        }
    }

    /// The held sends fail with `error` (no socket is left for them).
    func failUncopiedSends(_ error: FlowError) {
        var sends: [FlowSend] = []
        swap(&sends, &uncopiedSends)
        for send in sends { finish(send, error) }
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
