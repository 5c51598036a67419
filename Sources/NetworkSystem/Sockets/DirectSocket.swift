#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A duplicate of a connected socket's descriptor, through which a flow writes from the sender's
/// thread (a TCP stream), or a QUIC connection from its loop (`DirectSocket+Datagrams`), while
/// the event loop owns the original.
///
/// A duplicate, not the original number: the loop may close its descriptor at any moment (a reset,
/// a cancel) and the kernel may hand the number to an unrelated file; the duplicate stays ours
/// until released. It also keeps the socket open, so its owner must release it when the
/// connection closes (the socket's FIN or reset waits for the last descriptor). Not thread-safe:
/// the owner serializes its use (the flow's mailbox lock).
package final class DirectSocket: @unchecked Sendable {
    let descriptor: Int32

    /// Duplicates `descriptor` (close-on-exec); nil when the system refuses, or when descriptors
    /// run short: a duplicate whose number lies in the top quarter of the process's limit is
    /// given back (numbers are handed out lowest first, so a high one means the table is
    /// filling up), and the connection goes without, so that duplicates never take the
    /// descriptors an application needs for its connections.
    package init?(duplicating descriptor: Int32) {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        guard UInt64(copy) < Self.duplicateCeiling() else {
            close(copy)
            return nil
        }
        self.descriptor = copy
    }

    /// Three quarters of the soft limit on open descriptors.
    private static func duplicateCeiling() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue)), &limit) == 0,
            limit.rlim_cur != rlim_t.max
        else { return UInt64(Int32.max) }
        return UInt64(limit.rlim_cur) / 4 * 3
    }

    deinit {
        close(descriptor)
    }

    /// What one write did.
    package enum Outcome: Equatable, Sendable {
        /// This many bytes went to the socket (possibly fewer than offered; a datagram goes
        /// whole or not at all).
        case wrote(Int)
        /// The socket's buffer is full: nothing was written.
        case wouldBlock
        /// The socket failed (reset, closed); the event loop learns the details itself.
        case failed(Int32)
    }

    /// Writes as much of `buffers`, in order, as the socket takes now, in one `sendmsg` (at most
    /// `IOV_MAX` of them: the caller gathers fewer), without blocking and without SIGPIPE.
    package func write(_ buffers: [UnsafeRawBufferPointer]) -> Outcome {
        Self.withVectors(buffers) { vectors, _ in
            guard !vectors.isEmpty else { return .wrote(0) }
            var message = msghdr()
            message.msg_iov = vectors.baseAddress
            message.msg_iovlen = vectors.count
            return Self.outcome { sendmsg(descriptor, &message, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
    }

    /// Calls `body` with an `iovec` for each non-empty buffer of `buffers`, in order, and their
    /// total length.
    static func withVectors<Result>(
        _ buffers: [UnsafeRawBufferPointer], _ body: (UnsafeMutableBufferPointer<iovec>, _ total: Int) -> Result
    ) -> Result {
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: max(1, buffers.count)) { vectors in
            var used = 0
            var total = 0
            for buffer in buffers where !buffer.isEmpty {
                guard let base = buffer.baseAddress else { continue }
                vectors[used] = iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: buffer.count)
                used += 1
                total += buffer.count
            }
            return body(UnsafeMutableBufferPointer(rebasing: vectors[..<used]), total)
        }
    }

    /// Writes as much of `bytes` as the socket takes now, without blocking and without SIGPIPE.
    package func write(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .wrote(0) }
        return Self.outcome { send(descriptor, base, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// What a nonblocking send did: `call` answers the bytes written, or -1 with `errno` set,
    /// and runs again when a signal interrupted it.
    static func outcome(of call: () -> Int) -> Outcome {
        while true {
            let written = call()
            if written >= 0 { return .wrote(written) }
            let code = errno
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed(code)
        }
    }
}
