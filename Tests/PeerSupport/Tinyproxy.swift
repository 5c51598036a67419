import Foundation
import Testing

/// tinyproxy, a real HTTP CONNECT proxy, on 127.0.0.1 (open, or with Basic authentication).
public enum Tinyproxy {
    /// Starts it with its configuration and log in `directory`; returns the process, its port
    /// and the log file, or nil (after recording a failure under CI) when it is not installed.
    public static func start(
        basicAuth: (String, String)? = nil, in directory: URL
    ) async throws -> (process: PeerProcess, port: Int, log: URL)? {
        guard let tinyproxy = PeerProcess.executable("tinyproxy") else { return nil }
        guard let port = freeLoopbackPort() else { throw BehaviourTimeout(what: "a free port", seconds: 0) }
        let log = directory.appendingPathComponent("tinyproxy.log")
        var configuration = """
            Port \(port)
            Listen 127.0.0.1
            Timeout 30
            LogLevel Connect
            LogFile "\(log.path)"
            Allow 127.0.0.1
            DisableViaHeader Yes

            """
        if let (user, password) = basicAuth { configuration += "BasicAuth \(user) \(password)\n" }
        let path = directory.appendingPathComponent("tinyproxy.conf").path
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        let server = try PeerProcess(tinyproxy, ["-d", "-c", path])
        try await waitUntilBound(port: port, udp: false)
        return (server, Int(port), log)
    }
}
