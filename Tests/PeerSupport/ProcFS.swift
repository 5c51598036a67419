#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Facts about this process and the kernel's sockets, read from /proc.
public enum ProcFS {
    /// Number of open file descriptors of this process.
    public static func openFileDescriptorCount() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { count += 1 }
        }
        // The directory stream itself is one of them.
        return count - 1
    }

    /// Descriptions of the open descriptors (their link targets), for failure messages.
    public static func openFileDescriptors() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")).map { "\(name)->\($0)" }
        }.sorted()
    }

    /// Inodes of the sockets this process has open.
    public static func openSocketInodes() -> Set<Int> {
        Set(openFileDescriptors().compactMap { entry -> Int? in
            guard let range = entry.range(of: "socket:[") else { return nil }
            return Int(entry[range.upperBound...].dropLast())
        })
    }

    /// Resident set size (VmRSS) in bytes.
    public static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count >= 2, let kib = Int(fields[1]) { return kib * 1024 }
        }
        return -1
    }

    /// One row of /proc/net/tcp{,6} or /proc/net/udp{,6}.
    public struct SocketRow: CustomStringConvertible {
        public let localPort: UInt16
        public let remotePort: UInt16
        public let state: UInt8
        public let transmitQueue: Int
        public let receiveQueue: Int
        public let inode: Int

        public var description: String {
            "local :\(localPort) remote :\(remotePort) state \(state) tx \(transmitQueue) rx \(receiveQueue)"
        }
    }

    static let tcpListenState: UInt8 = 0x0A
    static let tcpEstablishedState: UInt8 = 0x01

    public static func sockets(udp: Bool = false) -> [SocketRow] {
        let files = udp ? ["/proc/net/udp", "/proc/net/udp6"] : ["/proc/net/tcp", "/proc/net/tcp6"]
        return files.flatMap { file in ProcFS.readAll(file).map(socketRows) ?? [] }
    }

    /// The rows of socket tables in /proc/net/{tcp,udp}{,6} format, header lines skipped
    /// wherever they are, so the text of several tables (as `cat` run inside another network
    /// namespace prints them) can be parsed at once.
    public static func socketRows(_ text: String) -> [SocketRow] {
        var rows: [SocketRow] = []
        for line in text.split(separator: "\n") where !line.contains("local_address") {
            let fields = line.split(separator: " ")
            guard fields.count > 4 else { continue }
            func port(_ field: Substring) -> UInt16? {
                guard let colon = field.lastIndex(of: ":") else { return nil }
                return UInt16(field[field.index(after: colon)...], radix: 16)
            }
            let queues = fields[4].split(separator: ":")
            guard let local = port(fields[1]), let remote = port(fields[2]),
                let state = UInt8(fields[3], radix: 16), queues.count == 2,
                let tx = Int(queues[0], radix: 16), let rx = Int(queues[1], radix: 16)
            else { continue }
            let inode = fields.count > 9 ? Int(fields[9]) ?? 0 : 0
            rows.append(
                SocketRow(localPort: local, remotePort: remote, state: state, transmitQueue: tx, receiveQueue: rx, inode: inode))
        }
        return rows
    }

    /// Whether something listens on TCP `port` (or, with `udp`, has UDP `port` bound).
    public static func isBound(port: UInt16, udp: Bool = false) -> Bool {
        sockets(udp: udp).contains { $0.localPort == port && (udp || $0.state == tcpListenState) }
    }

    /// The kernel's `[min, default, max]` for TCP receive (`tcp_rmem`) or send (`tcp_wmem`) buffers.
    public static func tcpBufferLimits(receive: Bool) -> [Int] {
        let path = receive ? "/proc/sys/net/ipv4/tcp_rmem" : "/proc/sys/net/ipv4/tcp_wmem"
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
    }

    /// The ephemeral port range (`ip_local_port_range`).
    public static func ephemeralPortRange() -> ClosedRange<Int> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let values = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
        guard values.count == 2 else { return 1024...65535 }
        return values[0]...values[1]
    }

    /// The pids whose parent is `pid`.
    public static func children(of pid: Int32) -> [Int32] {
        // Each of its threads lists the children it forked (CONFIG_PROC_CHILDREN): a few small
        // reads, where scanning every process's stat took seconds of a debug build's string
        // splitting in a parallel run with hundreds of peers, on a thread the tests share.
        if let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"),
            FileManager.default.fileExists(atPath: "/proc/\(pid)/task/\(pid)/children")
        {
            return threads.flatMap { thread in
                (readAll("/proc/\(pid)/task/\(thread)/children") ?? "").split(separator: " ").compactMap { Int32($0) }
            }
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { candidate in
            guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid
        }
    }

    /// The whole of a /proc file. procfs reports a size of 0 and hands its text out page by
    /// page, so read until end of file (a one-shot read misses rows when there are many sockets).
    public static func readAll(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var data = Data()
        while let chunk = try? handle.read(upToCount: 65_536), !chunk.isEmpty {
            data.append(chunk)
        }
        return String(decoding: data, as: UTF8.self)
    }
}
