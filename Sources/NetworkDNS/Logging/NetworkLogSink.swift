#if canImport(Glibc)
import Glibc
#endif

/// A file descriptor log lines are written to, one `write(2)` per line so that lines from
/// several threads (or processes appending to one file) do not interleave.
package final class NetworkLogSink: Sendable {
    private let descriptor: Int32

    /// Standard error (never closed).
    package static let standardError = NetworkLogSink(descriptor: 2)

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Opens `path` for appending (created readable by its owner only: logs name hosts and
    /// addresses); nil when it cannot be opened. Kept open for the life of the process.
    package convenience init?(appendingTo path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        self.init(descriptor: fd)
    }

    /// Writes `line` (a newline is added) in one call, retrying after interruptions.
    package func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
