import Foundation
import NetworkFuzzing
import Testing

/// Every fuzz target's seed corpus (real captured packets, and inputs that once found a bug),
/// replayed through its body: the fuzz targets' regression check in the normal test run.
@Suite("Fuzz corpus replay")
struct CorpusReplayTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: FuzzTarget.allCases)
    func replaysCorpus(_ target: FuzzTarget) throws {
        let files = FuzzReplay.files([FuzzReplay.corpus(of: target, root: Self.root).path])
        #expect(!files.isEmpty, "no seed corpus for \(target.rawValue)")
        for file in files {
            target.run(Array(try Data(contentsOf: file)))
        }
    }

    /// The QUIC server target's captured client Initials get the server's answer (Initial and
    /// Handshake packets): the corpus reaches the TLS handshake, not just the packet parser.
    @Test func quicServerCorpusReachesTheHandshake() throws {
        let files = FuzzReplay.files([FuzzReplay.corpus(of: .quicServerInput, root: Self.root).path])
        for file in files {
            #expect(QUICServerInputFuzzBody.run(Array(try Data(contentsOf: file))) > 0, "\(file.lastPathComponent)")
        }
    }

    /// The inputs libFuzzer starts from when it has nothing else: empty and one byte.
    @Test(arguments: FuzzTarget.allCases)
    func survivesTinyInputs(_ target: FuzzTarget) {
        target.run([])
        for byte in [0x00, 0x05, 0x16, 0xFF] as [UInt8] { target.run([byte]) }
    }
}
