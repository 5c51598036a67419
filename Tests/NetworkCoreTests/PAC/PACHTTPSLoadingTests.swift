import Foundation
import NetworkPAC
import PeerSupport
import Testing
@testable import NetworkCore

/// `https://` PAC scripts through the engine's TLS stack (`EnginePACTLSClient`, what
/// `PACConfiguration.engine` carries): NetworkPAC has none of its own, so this is tested here.
@Suite struct PACHTTPSLoadingTests {
    static let script = "function FindProxyForURL(url, host) { return 'PROXY proxy.test:3128; DIRECT'; }"

    @Test("https:// scripts: verified (a pinned certificate loads, the system trust store refuses a self-signed one), redirects stay on https")
    func fromAnHTTPSServer() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pac-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.script.write(to: folder.appendingPathComponent("test.pac"), atomically: true, encoding: .utf8)
        guard let (certificate, key) = try ProxyPeers.makeCertificate(in: folder) else { return }
        let pem = try String(contentsOfFile: certificate, encoding: .utf8)
        let base64 = pem.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: base64).map { [UInt8]($0) })
        guard let (server, port) = try await PACScriptServer.start(
            folder, certificate: certificate, key: key, downgrade: "http://127.0.0.1:1/test.pac")
        else { return }
        defer { server.stop() }
        let base = "https://127.0.0.1:\(port)"

        var settings = FlowTLSConfiguration()
        settings.verify = { chain, complete in complete(chain.first == der) }
        var pinned = PACConfiguration.engine
        pinned.tls = EnginePACTLSClient(settings: settings)
        let expected: [PACProxyChoice] = [.httpConnect(host: "proxy.test", port: 3128), .direct]
        for path in ["test.pac", "moved"] {
            let evaluator = try await PACEvaluator.load(from: .url("\(base)/\(path)"), configuration: pinned)
            #expect(try await evaluator.evaluate(url: "http://a.test/", host: "a.test") == expected, "\(path)")
        }
        await #expect(throws: PACError.loadFailed("refused redirect from https to http (http://127.0.0.1:1/test.pac)")) {
            try await PACEvaluator.load(from: .url("\(base)/down"), configuration: pinned)
        }
        do {
            _ = try await PACEvaluator.load(from: .url("\(base)/test.pac"), configuration: .engine)
            Issue.record("a self-signed PAC server was trusted by default")
        } catch {
            guard case .loadFailed(let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(message.contains("TLS with 127.0.0.1:\(port)"), "\(message)")
        }
    }
}
