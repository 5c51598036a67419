#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Small, allocation-light readers for `/sys` and `/proc` files (no Foundation needed).
package enum SysFS {
    /// The whole file as UTF-8, or nil if it cannot be read. Reads at most `limit` bytes.
    package static func read(_ path: String, limit: Int = 1 << 16) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The file's content as a decimal integer (surrounding whitespace ignored).
    package static func readInt(_ path: String) -> Int? {
        read(path).flatMap { Int($0.trimmingWhitespace) }
    }

    /// Whether something exists at `path` (file, directory or symlink target).
    package static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        let ws: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !ws($0) }), let last = lastIndex(where: { !ws($0) }) else { return "" }
        return String(self[first...last])
    }
}
