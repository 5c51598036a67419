#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PeerSupport
import Synchronization
import Testing

/// A command-line program run by a test with both output streams captured (PeerProcess passes
/// standard error through, but these tests read what nwcat prints there: its pin, its errors).
final class ToolProcess: @unchecked Sendable {
    /// The child process (its pid, whether it still runs, its status).
    let process = Process()
    /// Bytes read from one stream so far (the pipe readers run on their own threads).
    private final class Sink: Sendable {
        let data = Mutex(Data())
    }

    private let stdoutText = Sink()
    private let stderrText = Sink()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()

    /// Starts `executable arguments`. `input`, if given, is written to standard input, which is
    /// then closed; without it standard input stays open until ``stop()``.
    init(_ executable: String, _ arguments: [String], input: Data? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        for (pipe, sink) in [(stdoutPipe, stdoutText), (stderrPipe, stderrText)] {
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if data.isEmpty {
                    handle.readabilityHandler = nil  // end of file: stop watching
                } else {
                    sink.data.withLock { $0.append(data) }
                }
            }
        }
        try process.run()
        if let input {
            try stdinPipe.fileHandleForWriting.write(contentsOf: input)
            try stdinPipe.fileHandleForWriting.close()
        }
    }

    /// Everything the program wrote to standard output so far.
    var standardOutput: String { String(decoding: stdoutText.data.withLock { $0 }, as: UTF8.self) }
    /// Everything the program wrote to standard error so far.
    var standardError: String { String(decoding: stderrText.data.withLock { $0 }, as: UTF8.self) }

    /// Waits until standard error has a match for `pattern` and returns the match's first
    /// capture group (or the whole match when the pattern has none).
    func waitForStandardError(matching pattern: String, timeout: Double = 15) async throws -> String {
        let expression = try NSRegularExpression(pattern: pattern)
        var deadline = Date().addingTimeInterval(timeout)
        while true {
            // An exited program gets a moment for its last output to be read, then no more.
            if !process.isRunning { deadline = min(deadline, Date().addingTimeInterval(0.3)) }
            let text = standardError
            if let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) {
                let group = match.numberOfRanges > 1 ? match.range(at: 1) : match.range
                if let range = Range(group, in: text) { return String(text[range]) }
            }
            guard Date() < deadline else {
                throw OutputTimeout(description: "no standard error matching \(pattern) within \(timeout) s (got \(text.debugDescription))")
            }
            await pause(milliseconds: 20)
        }
    }

    /// Waits for the program to exit by itself; its status, or nil if it still runs.
    func waitForExit(timeout: Double = 15) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { await pause(milliseconds: 20) }
        guard !process.isRunning else { return nil }
        // Let the readers take the last bytes the program wrote before it exited.
        await pause(milliseconds: 100)
        return process.terminationStatus
    }

    /// Ends the program (SIGKILL by pid: children inherit the test's blocked SIGTERM).
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? stdinPipe.fileHandleForWriting.close()
    }

    /// Runs a program to its end and returns its status and output; a program still running
    /// after `timeout` seconds is killed and reported as status nil.
    static func run(_ executable: String, _ arguments: [String], input: Data = Data(), timeout: Double = 30) async throws
        -> (status: Int32?, output: String, error: String)
    {
        let tool = try ToolProcess(executable, arguments, input: input)
        defer { tool.stop() }
        let status = await tool.waitForExit(timeout: timeout)
        return (status, tool.standardOutput, tool.standardError)
    }

    deinit { stop() }
}

/// A program did not print what a test waited for in time.
struct OutputTimeout: Error, CustomStringConvertible {
    /// What was awaited and what the program had printed instead.
    let description: String
}

/// The nwcat binary built beside the test bundle (`swift build --build-tests` builds both into
/// the same folder); nil, and a failure under CI, when it is not there.
func builtNWCat(sourceLocation: SourceLocation = #_sourceLocation) -> String? {
    var candidates: [URL] = []
    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        candidates.append(URL(fileURLWithPath: executable))
    }
    candidates.append(Bundle.main.bundleURL)
    if let first = CommandLine.arguments.first { candidates.append(URL(fileURLWithPath: first)) }
    for candidate in candidates {
        // The bundle is a file on Linux and a folder on macOS: look beside it, and one level up.
        for folder in [candidate.deletingLastPathComponent(), candidate.deletingLastPathComponent().deletingLastPathComponent()] {
            let path = folder.appendingPathComponent("nwcat").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
    }
    PeerProcess.missingPeer("nwcat is not built beside the tests: run `swift build --build-tests` first", sourceLocation: sourceLocation)
    return nil
}
