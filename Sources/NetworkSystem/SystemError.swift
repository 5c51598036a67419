#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call, with the `errno` it left.
package struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    package var errno: Int32
    /// The call that failed, e.g. `setsockopt(6, 2, 40)`.
    package var call: String

    package init(errno: Int32, call: String = "") {
        self.errno = errno
        self.call = call
    }

    /// The current thread's `errno`, captured right after a failed call.
    package static func last(_ call: String) -> SystemError {
        SystemError(errno: Glibc.errno, call: call)
    }

    package var description: String {
        let text = String(cString: strerror(errno))
        return call.isEmpty ? "errno \(errno): \(text)" : "\(call): errno \(errno): \(text)"
    }
}
