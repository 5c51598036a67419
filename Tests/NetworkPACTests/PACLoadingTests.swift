import Foundation
import PeerSupport
import Testing
@testable import NetworkPAC

/// Loading scripts from files, `file://` URLs and a real HTTP server (Python's `http.server`),
/// with the size cap and time limit, and the per-source cache. (`https://` needs the engine's
/// TLS stack: NetworkCoreTests' `PACHTTPSLoadingTests`.)
@Suite struct PACLoadingTests {
    static let script = """
        function FindProxyForURL(url, host) {
          return dnsDomainIs(host, '.intranet.test') ? 'DIRECT' : 'PROXY proxy.test:3128; DIRECT';
        }
        """

    /// A fresh folder holding `test.pac` (the script above) and `big.pac` (2 KiB of comment).
    private static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pac-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try script.write(to: folder.appendingPathComponent("test.pac"), atomically: true, encoding: .utf8)
        try (String(repeating: "// padding\n", count: 200) + script)
            .write(to: folder.appendingPathComponent("big.pac"), atomically: true, encoding: .utf8)
        return folder
    }

    private static func expectWorking(_ evaluator: PACEvaluator) async throws {
        #expect(try await evaluator.evaluate(url: "http://a.intranet.test/", host: "a.intranet.test") == [.direct])
        #expect(try await evaluator.evaluate(url: "http://www.example.test/", host: "www.example.test")
            == [.httpConnect(host: "proxy.test", port: 3128), .direct])
    }

    @Test func fromAFileAndAFileURL() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("test.pac").path
        try await Self.expectWorking(try await PACEvaluator.load(from: .file(path: path), configuration: PACTestEnvironment.configuration()))
        try await Self.expectWorking(try await PACEvaluator.load(from: .url("file://\(path)"), configuration: PACTestEnvironment.configuration()))
    }

    @Test func fileErrors() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var small = PACTestEnvironment.configuration()
        small.maximumScriptSize = 1024
        await #expect(throws: PACError.scriptTooLarge(limit: 1024)) {
            try await PACEvaluator.load(from: .file(path: folder.appendingPathComponent("big.pac").path), configuration: small)
        }
        await #expect(throws: PACError.loadFailed("cannot open \(folder.path)/missing.pac")) {
            try await PACEvaluator.load(from: .file(path: folder.appendingPathComponent("missing.pac").path), configuration: small)
        }
        await #expect(throws: PACError.loadFailed("unsupported URL scheme ftp (http, https and file are supported)")) {
            try await PACEvaluator.load(from: .url("ftp://127.0.0.1/test.pac"), configuration: small)
        }
    }

    @Test func fromAnHTTPServer() async throws {
        guard let python = PeerProcess.executable("python3", package: "python3") else { return }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try PeerProcess(python, ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", folder.path])
        defer { server.stop() }
        // The whole line: its number can arrive in a later read than "port ".
        let banner = try await server.waitForLine(containing: "port ").line
        let port = try #require(banner.split(separator: " ").drop(while: { $0 != "port" }).dropFirst().first.flatMap { Int($0) })
        let base = "http://127.0.0.1:\(port)"

        try await Self.expectWorking(try await PACEvaluator.load(from: .url("\(base)/test.pac"), configuration: PACTestEnvironment.configuration()))

        var small = PACTestEnvironment.configuration()
        small.maximumScriptSize = 1024
        await #expect(throws: PACError.scriptTooLarge(limit: 1024)) {
            try await PACEvaluator.load(from: .url("\(base)/big.pac"), configuration: small)
        }
        do {
            _ = try await PACEvaluator.load(from: .url("\(base)/missing.pac"), configuration: small)
            Issue.record("a missing script loaded")
        } catch {
            #expect(error == .loadFailed("HTTP status 404"))
        }
    }

    @Test("redirects are followed (relative ones included), at most five, never from https down to http")
    func redirects() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        guard let (server, port) = try await PACScriptServer.start(folder) else { return }
        defer { server.stop() }
        let base = "http://127.0.0.1:\(port)"
        try await Self.expectWorking(try await PACEvaluator.load(from: .url("\(base)/moved"), configuration: PACTestEnvironment.configuration()))
        await #expect(throws: PACError.loadFailed("more than 5 redirects from \(base)/loop")) {
            try await PACEvaluator.load(from: .url("\(base)/loop"), configuration: PACTestEnvironment.configuration())
        }
        #expect(throws: PACError.loadFailed("refused redirect from https to http (http://a.test/x.pac)")) {
            try PACHTTPFetcher.redirectTarget("http://a.test/x.pac", from: URL(string: "https://b.test/y.pac")!)
        }
        #expect(try PACHTTPFetcher.redirectTarget("../z.pac", from: URL(string: "https://b.test/dir/y.pac")!).absoluteString
            == "https://b.test/z.pac")
        #expect(throws: PACError.self) {
            try PACHTTPFetcher.redirectTarget("file:///etc/passwd", from: URL(string: "http://b.test/y.pac")!)
        }
    }

    /// NetworkPAC has no TLS stack: without the engine's (`PACConfiguration.tls`), an `https://`
    /// script fails at once, before any connection. (The engine's HTTPS fetches are tested in
    /// NetworkCoreTests' `PACHTTPSLoadingTests`.)
    @Test func httpsNeedsATLSClient() async throws {
        await #expect(throws: PACError.loadFailed("no TLS client for https://127.0.0.1:1/test.pac")) {
            try await PACEvaluator.load(from: .url("https://127.0.0.1:1/test.pac"), configuration: PACTestEnvironment.configuration())
        }
    }

    /// A server that accepts the connection and never answers: the fetch gives up on time.
    @Test func silentServerTimesOut() async throws {
        let silent = try SilentLoopbackSocket(udp: false)
        defer { silent.close() }
        let port = silent.port
        var quick = PACTestEnvironment.configuration()
        quick.fetchTimeout = 0.5
        let configuration = quick
        let started = Date()
        do {
            _ = try await withTimeout(seconds: 10, "the fetch time limit") {
                try await PACEvaluator.load(from: .url("http://127.0.0.1:\(port)/test.pac"), configuration: configuration)
            }
            Issue.record("a silent server produced a script")
        } catch {
            guard case .loadFailed(let message) = error as? PACError else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(message.contains("within 0.5 s"), "\(message)")
        }
        // The 0.5 s limit, not the 10 s default (the message above names the limit that fired; the
        // clock leaves room for a machine busy with every other suite: continuations waited over
        // 8 s for a cooperative thread in a loaded run).
        #expect(Date().timeIntervalSince(started) < SanitizerSlowdown.seconds(9.5))
    }

    @Test func theCacheLoadsEachSourceOnce() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = PACEvaluatorCache()
        let source = PACSource.file(path: folder.appendingPathComponent("test.pac").path)
        let first = try await cache.evaluator(for: source, configuration: PACTestEnvironment.configuration())
        let second = try await cache.evaluator(for: source, configuration: PACTestEnvironment.configuration())
        #expect(first === second)
        cache.invalidate(source)
        let third = try await cache.evaluator(for: source, configuration: PACTestEnvironment.configuration())
        #expect(third !== first)
        try await Self.expectWorking(third)

        let missing = PACSource.file(path: folder.appendingPathComponent("missing.pac").path)
        await #expect(throws: PACError.self) { try await cache.evaluator(for: missing) }
        try Self.script.write(to: folder.appendingPathComponent("missing.pac"), atomically: true, encoding: .utf8)
        // A failed load is not remembered: the script is there now, so this load works.
        try await Self.expectWorking(try await cache.evaluator(for: missing, configuration: PACTestEnvironment.configuration()))
    }

    @Test func theCacheReplacesAnEvaluatorThatBecameUnusable() async throws {
        let cache = PACEvaluatorCache()
        let source = PACSource.script("""
            function FindProxyForURL(url, host) {
              while (host === 'spin') { var box = [host]; }
              return 'DIRECT';
            }
            """)
        let configuration = PACTestEnvironment.configuration(timeLimit: 0.3)
        let first = try await cache.evaluator(for: source, configuration: configuration)
        await #expect(throws: PACError.timedOut(seconds: 0.3)) {
            try await first.findProxy(url: "http://spin/", host: "spin")
        }
        let second = try await cache.evaluator(for: source, configuration: configuration)
        #expect(second !== first && second.isUsable)
        #expect(try await second.evaluate(url: "http://a/", host: "a") == [.direct])
        #expect(try await cache.evaluator(for: source, configuration: configuration) === second)
    }
}
