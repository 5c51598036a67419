#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NetworkSync
import Testing

/// A real peer nobody here wrote (socat, openssl, gnutls-serv, dnsmasq, danted, …), run as a
/// child process of the test.
public final class PeerProcess: @unchecked Sendable {
    public let process = Process()
    private final class Output: Sendable {
        let data = Lock(Data())
        /// Set when standard output reached its end (everything written has been collected).
        let ended = Lock(false)
    }

    private let output = Output()
    /// Nil when the output is not captured.
    private let stdinPipe: Pipe?
    private let stdoutPipe: Pipe?

    /// Where the program `name` is (PATH, then /usr/sbin, /usr/bin, …), or nil when it is not
    /// installed. Under `CI` a missing peer is a test failure (never a silent skip); elsewhere
    /// the test says why it did nothing. `package` names the Debian package that provides it.
    public static func executable(
        _ name: String = "socat", package: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") + ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/sbin", "/bin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        missingPeer("\(name) is not installed: run scripts/install-deps.sh (or apt-get install -y \(package ?? name))",
                    sourceLocation: sourceLocation)
        return nil
    }

    /// True when the tests run under CI (`CI` set to anything but empty, 0 or false).
    public static var isCI: Bool {
        ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty && $0 != "0" && $0 != "false" } ?? false
    }

    /// Reports a peer or privilege the test needs and does not have: a failure under CI, a
    /// printed reason elsewhere.
    public static func missingPeer(_ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        if isCI {
            Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
        } else {
            print("SKIPPED (not CI): \(message)")
        }
    }

    /// Starts `executable arguments`; `input`, if given, is written to its standard input, which is
    /// then closed. Without `captureOutput` the peer's standard input and output are
    /// /dev/null: this process then holds no pipe to it while it runs (tests elsewhere count
    /// this process's descriptors), and `standardOutput` stays empty.
    public init(_ executable: String, _ arguments: [String], input: Data? = nil, captureOutput: Bool = true) throws {
        // Through a shell that stays the parent (the command after it rules out an exec):
        // Foundation learns that a child ended when the child's end of a socket it inherited
        // closes, and then waits for it with a blocking waitpid. Daemons such as dnsmasq and
        // danted close every inherited descriptor at start, which would park Foundation's
        // reaper on them until they exit, and with it every other test's waitUntilExit. The
        // shell keeps the socket open until the peer is really gone.
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\"$0\" \"$@\"; status=$?; exit $status", executable] + arguments
        process.standardError = FileHandle.standardError
        guard captureOutput else {
            stdinPipe = nil
            stdoutPipe = nil
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return
        }
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        self.stdinPipe = stdinPipe
        self.stdoutPipe = stdoutPipe
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        let output = self.output
        stdoutPipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                // End of file: stop watching, or the handler fires again and again.
                handle.readabilityHandler = nil
                output.ended.withLock { $0 = true }
            } else {
                output.data.withLock { $0.append(data) }
            }
        }
        try process.run()
        if let input {
            try stdinPipe.fileHandleForWriting.write(contentsOf: input)
            try stdinPipe.fileHandleForWriting.close()
        }
    }

    public var standardOutput: Data { output.data.withLock { $0 } }

    /// Waits until the peer's standard output contains `text`.
    public func waitForOutput(containing text: String, occurrences: Int = 1, timeout: Double = 10) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while String(decoding: standardOutput, as: UTF8.self).components(separatedBy: text).count - 1 < occurrences {
            guard Date() < deadline else {
                throw BehaviourTimeout(
                    what: "peer output containing \(text.debugDescription)\(occurrences > 1 ? " \(occurrences) times" : "") (got \(String(decoding: standardOutput, as: UTF8.self).debugDescription))",
                    seconds: timeout)
            }
            await pause(milliseconds: 20)
        }
    }

    /// The lines the peer has printed so far that are whole, ended by a newline: `python3 -u`
    /// writes a `print`'s arguments one by one, so the pipe can hold the start of a line whose
    /// end has not come yet.
    public var wholeLines: [String] {
        // The piece after the last newline is not a whole line yet.
        String(decoding: standardOutput, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }

    /// Waits until the peer has printed `count` whole lines starting with `prefix`, and returns
    /// them (see `wholeLines`).
    @discardableResult
    public func waitForLines(startingWith prefix: String, count: Int, timeout: Double = 10) async throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let lines = wholeLines.filter { $0.hasPrefix(prefix) }
            if lines.count >= count { return lines }
            guard Date() < deadline else {
                throw BehaviourTimeout(
                    what: "\(count) lines of peer output starting with \(prefix.debugDescription) (got \(String(decoding: standardOutput, as: UTF8.self).debugDescription))",
                    seconds: timeout)
            }
            await pause(milliseconds: 20)
        }
    }

    /// Waits for the first whole line after the first `skipping` ones that contains `text`, and
    /// returns its index and the line: for output whose earlier lines may hold the same text
    /// (each state a monitor prints again in full, say).
    public func waitForLine(
        containing text: String, skipping: Int = 0, timeout: Double = 10
    ) async throws -> (index: Int, line: String) {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let lines = wholeLines
            if let index = lines.indices.dropFirst(skipping).first(where: { lines[$0].contains(text) }) {
                return (index, lines[index])
            }
            guard Date() < deadline else {
                throw BehaviourTimeout(
                    what: "a line of peer output after line \(skipping) containing \(text.debugDescription) (got \(lines))",
                    seconds: timeout)
            }
            await pause(milliseconds: 20)
        }
    }

    /// Waits for the peer to exit by itself; returns its status, or nil if it is still running.
    public func waitForExit(timeout: Double = 10) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { await pause(milliseconds: 20) }
        guard !process.isRunning else { return nil }
        // The exit can be seen before the last output is: wait (briefly) for the pipe's end, so
        // `standardOutput` is complete when this returns.
        while !output.ended.withLock({ $0 }) && Date() < deadline { await pause(milliseconds: 5) }
        return process.terminationStatus
    }

    /// Stops the peer and the processes it forked (found by parent pid, ended by pid). SIGKILL:
    /// children of the test process inherit its signal mask, in which libdispatch blocks
    /// SIGTERM, so `Process.terminate()` alone would leave the peer running.
    public func stop() {
        if process.isRunning {
            let pid = process.processIdentifier
            var descendants: [Int32] = []
            var frontier = [pid]
            while let next = frontier.popLast() {
                let children = ProcFS.children(of: next)
                descendants += children
                frontier += children
            }
            kill(pid, SIGKILL)
            for child in descendants { kill(child, SIGKILL) }
            // The shell wrapper (see init) keeps Foundation's reaper from being parked on a
            // daemon, so once the kill has landed (watched in /proc, at most two seconds) the
            // wait below returns at once. It must still happen: a Process released while
            // Foundation is still watching its child corrupted libdispatch's event loop.
            for _ in 0..<400 where Self.isAlive(pid) { usleep(5_000) }
            process.waitUntilExit()
        }
        stdoutPipe?.fileHandleForReading.readabilityHandler = nil
        try? stdinPipe?.fileHandleForWriting.close()
    }

    deinit { stop() }

    /// Whether `pid` still runs (not gone, not a zombie), from /proc.
    private static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = ProcFS.readAll("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
        return state != "Z" && state != "X"
    }
}

/// Waits until something is bound to `port` (TCP listening, or UDP bound).
public func waitUntilBound(port: UInt16, udp: Bool, timeout: Double = 10) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !ProcFS.isBound(port: port, udp: udp) {
        guard Date() < deadline else { throw BehaviourTimeout(what: "a socket bound to port \(port)", seconds: timeout) }
        await pause(milliseconds: 20)
    }
}
