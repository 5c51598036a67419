#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PeerSupport
import Testing

/// A command-line program run by a test with both output streams captured (PeerProcess passes
/// standard error through, but these tests read what nwcat prints there: its pin, its errors).
///
/// The streams go to temporary files, not pipes: once the program has started this process
/// holds none of its descriptors, so tests elsewhere that count this process's open
/// descriptors (and run in parallel with these) see no difference.
final class ToolProcess: @unchecked Sendable {
    /// The child process (its pid, whether it still runs, its status).
    let process = Process()
    private let files: (input: URL, output: URL, error: URL)

    /// Starts `executable arguments` with `input` (by default nothing) as its standard input,
    /// in `environment` (by default this process's).
    init(_ executable: String, _ arguments: [String], input: Data = Data(), environment: [String: String]? = nil) throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("nwtool-\(UUID().uuidString)")
        files = (base.appendingPathExtension("in"), base.appendingPathExtension("out"), base.appendingPathExtension("err"))
        try input.write(to: files.input)
        for file in [files.output, files.error] { try Data().write(to: file) }
        let stdin = try FileHandle(forReadingFrom: files.input)
        let stdout = try FileHandle(forWritingTo: files.output)
        let stderr = try FileHandle(forWritingTo: files.error)
        // The child has its own copies once it runs; ours are closed right away.
        defer { for handle in [stdin, stdout, stderr] { try? handle.close() } }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
    }

    /// Everything the program wrote to standard output so far.
    var standardOutput: String { String(decoding: (try? Data(contentsOf: files.output)) ?? Data(), as: UTF8.self) }
    /// Everything the program wrote to standard error so far.
    var standardError: String { String(decoding: (try? Data(contentsOf: files.error)) ?? Data(), as: UTF8.self) }

    /// Waits until standard error has a match for `pattern` and returns the match's first
    /// capture group (or the whole match when the pattern has none).
    func waitForStandardError(matching pattern: String, timeout: Double = 15) async throws -> String {
        let expression = try NSRegularExpression(pattern: pattern)
        var deadline = Date().addingTimeInterval(timeout)
        while true {
            // An exited program prints nothing more: one last look, then give up.
            if !process.isRunning { deadline = min(deadline, Date()) }
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

    /// Waits until standard output contains `text`.
    func waitForStandardOutput(containing text: String, timeout: Double = 15) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !standardOutput.contains(text) {
            guard process.isRunning, Date() < deadline else {
                throw OutputTimeout(
                    description: "no standard output containing \(text.debugDescription) within \(timeout) s (got \(standardOutput.debugDescription), standard error \(standardError.debugDescription))")
            }
            await pause(milliseconds: 20)
        }
    }

    /// Waits for the program to exit by itself; its status, or nil if it still runs.
    func waitForExit(timeout: Double = 15) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { await pause(milliseconds: 20) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Ends the program (SIGKILL by pid: children inherit the test's blocked SIGTERM).
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Runs a program to its end and returns its status and output; a program still running
    /// after `timeout` seconds is killed and reported as status nil.
    static func run(
        _ executable: String, _ arguments: [String], input: Data = Data(), environment: [String: String]? = nil,
        timeout: Double = 30
    ) async throws -> (status: Int32?, output: String, error: String) {
        let tool = try ToolProcess(executable, arguments, input: input, environment: environment)
        defer { tool.stop() }
        let status = await tool.waitForExit(timeout: timeout)
        return (status, tool.standardOutput, tool.standardError)
    }

    deinit {
        stop()
        for file in [files.input, files.output, files.error] { try? FileManager.default.removeItem(at: file) }
    }
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
