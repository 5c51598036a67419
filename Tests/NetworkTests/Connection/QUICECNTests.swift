import Foundation
import PeerSupport
import Testing

@testable import Network

/// ECN on QUIC (RFC 9000, 13.4): our client and our listener (`nwcat listen --quic --echo`, in a
/// network namespace behind a veth pair) mark their packets ECT(0) once ngtcp2's validation
/// sees the peer count them, which needs each side to read the codepoints it received. The
/// namespace's nftables rules count the UDP packets by codepoint, both ways.
@Suite("Connection.QUICECN", .serialized)
struct QUICECNTests {
    @Test("1 MiB echoed between our client and our listener: the packets each way are ECT(0) but for a few of the handshake's and the close's, none is CE")
    func packetsAreMarked() async throws {
        guard let nft = PeerProcess.executable("nft", package: "nftables"), let nwcat = builtNWCat(),
            let namespace = TestNamespace.make()
        else { return }
        defer { namespace.tearDown() }
        let taken = try ShortTool.check(namespace.ip, ["-o", "addr", "show"])
        let subnet = (1...250).shuffled().first { !taken.contains("10.81.\($0).") } ?? 1
        let server = "10.81.\(subnet).2"
        try namespace.link(addresses: ["\(server)/24"], to: nil, otherAddresses: ["10.81.\(subnet).1/24"])
        try namespace.applyRuleset("""
            table inet marks {
              chain input {
                type filter hook input priority 0; policy accept;
                meta l4proto udp ip ecn ect0 counter
                meta l4proto udp ip ecn not-ect counter
                meta l4proto udp ip ecn ce counter
              }
              chain dscp {
                type filter hook input priority 1; policy accept;
                meta l4proto udp ip dscp af41 ip ecn ect0 counter
              }
              chain output {
                type filter hook output priority 0; policy accept;
                meta l4proto udp ip ecn ect0 counter
                meta l4proto udp ip ecn not-ect counter
                meta l4proto udp ip ecn ce counter
              }
            }
            """)
        let identity = try TLSInteropTests.Identity.make()
        defer { try? FileManager.default.removeItem(at: identity.directory) }
        let listener = try namespace.start(nwcat, [
            "listen", "--quic", "--alpn", "echo", "--echo", "--cert", identity.certificatePath, "--key", identity.keyPath, "4433",
        ])
        defer { listener.stop() }
        try await namespace.waitUntilBound(port: 4433, udp: true)

        // A service class too: its DSCP (AF41) must stay beside the ECN codepoint of each packet.
        let parameters = QUICConnectionTests.pinned(Array(try identity.certificateDER))
        parameters.serviceClass = .interactiveVideo
        let connection = NWConnection(host: NWEndpoint.Host(server), port: 4433, using: parameters)
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        let payload = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        connection.send(content: payload, contentContext: .finalMessage, completion: .contentProcessed { _ in })
        let (echoed, ended) = await QUICConnectionTests.receiveToEnd(connection)
        #expect(echoed == payload)
        #expect(ended)

        let counters = try namespace.run(nft, ["list", "table", "inet", "marks"])
        let all = counters.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "counter packets ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        // Input (client to server): ect0, not-ect, ce; AF41 with ECT(0); then output (server to
        // client). nft counts what the stack hands it: a segmented batch of packets is one.
        try #require(all.count == 7, "\(counters)")
        print("QUICECN: to the server ECT(0) \(all[0]) (AF41 and ECT(0) \(all[3])), not-ECT \(all[1]), CE \(all[2]); to the client ECT(0) \(all[4]), not-ECT \(all[5]), CE \(all[6])")
        #expect(all[3] == all[0], "every ECT(0) packet of the client keeps its class's DSCP")
        let counts = [all[0], all[1], all[2], all[4], all[5], all[6]]
        #expect(counts[0] >= 8 * counts[1] && counts[1] <= 4, "the client's packets are marked")
        #expect(counts[3] >= 8 * counts[4] && counts[4] <= 4, "the server's packets are marked")
        #expect(counts[2] == 0 && counts[5] == 0)
    }
}
