#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network

/// QUIC over a lossy link: aioquic's echo server in a network namespace behind a veth pair
/// whose nftables rules drop a share of its UDP datagrams at random, both ways (no `tc netem`
/// here: nftables' `numgen random` drops them instead; there is no added delay). It runs alone,
/// after the parallel run, in `scripts/test.sh` (`NW_TEST_STRESS=1`), and in the serial sanitizer
/// runs: in the parallel run, the Python peer can be starved of CPU past the idle timeout.
@Suite(
    "Connection.QUICLossyLink", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["NW_TEST_STRESS"] != nil || SanitizerSlowdown.factor > 1,
        "runs alone: scripts/test.sh runs it after the parallel run (NW_TEST_STRESS=1)"))
struct QUICLossyLinkTests {
    @Test("10 MiB over one stream with 5 % of the datagrams dropped each way: every byte comes back, in order, and the stream ends")
    func tenMebibytesThroughLoss() async throws {
        guard let nft = PeerProcess.executable("nft", package: "nftables"), let namespace = TestNamespace.make() else { return }
        defer { namespace.tearDown() }
        let taken = try ShortTool.check(namespace.ip, ["-o", "addr", "show"])
        let subnet = (1...250).shuffled().first { !taken.contains("10.78.\($0).") } ?? 1
        try namespace.link(addresses: ["10.78.\(subnet).2/24"], to: nil, otherAddresses: ["10.78.\(subnet).1/24"])
        try namespace.applyRuleset("""
            table inet loss {
              chain input {
                type filter hook input priority 0; policy accept;
                meta l4proto udp numgen random mod 100 < 5 counter drop
              }
              chain output {
                type filter hook output priority 0; policy accept;
                meta l4proto udp numgen random mod 100 < 5 counter drop
              }
            }
            """)
        guard let server = try await AioquicServer.start(host: "10.78.\(subnet).2", namespace: namespace) else { return }
        defer { server.stop() }
        let (connection, seconds) = await QUICConnectionTests.echoWhole(
            size: 10 << 20, seed: 9221, host: "10.78.\(subnet).2", server: server)
        print("QUICLossyLink: 10 MiB each way in \(String(format: "%.1f", seconds)) s")
        let counters = try namespace.run(nft, ["list", "table", "inet", "loss"])
        print("QUICLossyLink: nft counters: \(counters.split(separator: "\n").filter { $0.contains("counter") }.joined(separator: " | "))")
        let dropped = counters.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "counter packets ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(dropped.count == 2 && dropped.allSatisfy { $0 > 0 }, "the rules dropped datagrams both ways: \(dropped)")
        connection.cancel()
    }
}
