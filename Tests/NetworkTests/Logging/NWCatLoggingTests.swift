import Foundation
import PeerSupport
import Testing

/// The engine's swift-log output as a program sees it, through the built `nwcat`: silent unless
/// the application turns it on (`-v`, `-vv`), and then a connection's story without its bytes.
@Suite("Logging.NWCat", .serialized)
struct NWCatLoggingTests {
    /// What every engine log line has: one of the engine's labels.
    static let engineLine = try! NSRegularExpression(
        pattern: "network\\.(connection|listener|establishment|dns|tls|path|proxy|pac)\\b")

    /// A payload no log line may contain.
    static let payload = "logging-payload-5c81e0\n"

    /// This process's environment without the engine's logging switch, so the children's
    /// output depends on their arguments only (the secrets check runs the tests with it set).
    static var cleanEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["NETWORK_LOG"] = nil
        environment["NETWORK_LOG_FILE"] = nil
        return environment
    }

    static func engineLines(in text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter {
            engineLine.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) != nil
        }
    }

    /// Runs `nwcat listen 0 --echo` and `nwcat connect` to it, each with `flags`; returns both
    /// standard errors once the payload came back.
    static func exchange(_ nwcat: String, flags: [String]) async throws -> (listener: String, client: String) {
        let listener = try ToolProcess(nwcat, ["listen", "0", "--echo"] + flags, environment: cleanEnvironment)
        defer { listener.stop() }
        let port = try await listener.waitForStandardError(matching: "ready on port ([0-9]+)")
        let client = try await ToolProcess.run(
            nwcat, ["connect", "127.0.0.1", port] + flags, input: Data(payload.utf8), environment: cleanEnvironment)
        #expect(client.status == 0, "nwcat connect: \(client.error)")
        #expect(client.output == payload, "the echo came back")
        return (listener.standardError, client.error)
    }

    @Test("without -v nothing is bootstrapped and the engine writes no log line")
    func silentByDefault() async throws {
        guard let nwcat = builtNWCat() else { return }
        let (listener, client) = try await Self.exchange(nwcat, flags: [])
        #expect(Self.engineLines(in: client).isEmpty, "client: \(client)")
        #expect(Self.engineLines(in: listener).isEmpty, "listener: \(listener)")
    }

    @Test("-v tells the connection's story at debug: its id, attempt, state changes, the listener's side")
    func debugStory() async throws {
        guard let nwcat = builtNWCat() else { return }
        let (listener, client) = try await Self.exchange(nwcat, flags: ["-v"])
        let lines = Self.engineLines(in: client)
        func has(_ label: String, _ pattern: String) -> Bool {
            lines.contains { $0.contains(label) && $0.range(of: pattern, options: .regularExpression) != nil }
        }
        #expect(has("network.connection", "connection=C[0-9]+ .*start"), "client: \(client)")
        #expect(has("network.connection", "endpoint=127\\.0\\.0\\.1:[0-9]+"), "client: \(client)")
        #expect(has("network.connection", "state preparing"))
        #expect(has("network.connection", "state ready"))
        #expect(has("network.connection", "state cancelled"))
        #expect(has("network.establishment", "routes: direct"))
        #expect(has("network.establishment", "attempt [0-9]+ to 127\\.0\\.0\\.1:[0-9]+ via direct"))
        #expect(has("network.establishment", "attempt [0-9]+ to 127\\.0\\.0\\.1:[0-9]+ won"))
        #expect(!lines.contains { $0.contains(" trace ") }, "-v stops at debug")
        // nwcat's own --verbose output is still there.
        #expect(client.contains("connection state: ready"))
        #expect(client.contains("establishment report:"))

        let listenerLines = Self.engineLines(in: listener)
        #expect(listenerLines.contains { $0.contains("listener=L") && $0.contains("state ready") }, "listener: \(listener)")
        #expect(listenerLines.contains { $0.contains("accepted C") })
        #expect(!(client + listener).contains(Self.payload.dropLast()), "no payload in any output but standard output")
    }

    @Test("-vv adds trace lines: sends and receives as byte counts, never their contents")
    func traceCounts() async throws {
        guard let nwcat = builtNWCat() else { return }
        let (listener, client) = try await Self.exchange(nwcat, flags: ["-vv"])
        let size = Self.payload.utf8.count
        #expect(Self.engineLines(in: client).contains { $0.contains(" trace ") && $0.contains("send \(size) bytes") }, "client: \(client)")
        #expect(Self.engineLines(in: listener).contains { $0.contains(" trace ") && $0.contains("received \(size) bytes") }, "listener: \(listener)")
        #expect(!(client + listener).contains(Self.payload.dropLast()), "no payload in any output but standard output")
    }
}
