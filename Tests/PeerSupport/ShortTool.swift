#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Short programs (ip, nft, useradd, …) run to their end from a test. They exit by themselves
/// within moments, unlike the daemons `PeerProcess` runs.
///
/// Spawned and reaped here (`posix_spawn`, `waitpid`), not with `Process.waitUntilExit`: that
/// spins a run loop until Foundation's child watcher, a job on the same few threads as every
/// test's tasks, notices the exit. With two tests setting up namespaces at once in a parallel
/// run, both threads waited for a watcher that had no thread to run on, and every other test
/// stalled for seconds.
public enum ShortTool {
    /// A program that could not be started.
    public struct SpawnFailed: Error, CustomStringConvertible {
        public let command: [String]
        public let code: Int32
        public var description: String { "could not run \(command.joined(separator: " ")): \(String(cString: strerror(code)))" }
    }

    /// Runs `executable arguments` with `input` on standard input; its exit status (128 plus the
    /// signal's number if a signal ended it) and its standard output and error, interleaved. The
    /// streams go through a temporary file, not a pipe, so this process holds no descriptor of
    /// them while the tool runs (tests elsewhere count this process's descriptors, and namespace
    /// setups run many tools).
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("nwshort-\(UUID().uuidString)")
        let inputFile = base.appendingPathExtension("in")
        let outputFile = base.appendingPathExtension("out")
        defer {
            try? FileManager.default.removeItem(at: inputFile)
            try? FileManager.default.removeItem(at: outputFile)
        }
        try Data((input ?? "").utf8).write(to: inputFile)
        try Data().write(to: outputFile)
        let command = [executable] + arguments
        let pid = try spawn(command, input: inputFile.path, output: outputFile.path)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw SpawnFailed(command: command, code: errno) }
        }
        let output = (try? Data(contentsOf: outputFile)) ?? Data()
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not import.
        let signal = status & 0x7F
        let code = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        return (code, String(decoding: output, as: UTF8.self))
    }

    /// Like `run`, but a non-zero exit status is a `TestNamespace.CommandFailed`.
    @discardableResult
    public static func check(_ executable: String, _ arguments: [String], input: String? = nil) throws -> String {
        let (status, output) = try run(executable, arguments, input: input)
        guard status == 0 else {
            throw TestNamespace.CommandFailed(command: [executable] + arguments, status: status, output: output)
        }
        return output
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Starts `command` with standard input read from `input` and standard output and error
    /// written to `output`; its pid.
    private static func spawn(_ command: [String], input: String, output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process's (sockets, other peers' pipes) goes to the tool, as with
        // `Process`.
        guard let closeFrom = closeFrom else { throw SpawnFailed(command: command, code: ENOSYS) }
        _ = closeFrom(&actions, 3)
        // The test's threads block signals (libdispatch blocks SIGTERM, SIGPIPE is ignored):
        // the tool starts with none blocked and the usual defaults.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, command[0], &actions, &attributes, &argv, environ)
        guard result == 0 else { throw SpawnFailed(command: command, code: result) }
        return pid
    }
}
