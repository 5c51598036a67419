import Dispatch
import Foundation
import Network
import PeerSupport
import Testing

/// A hostile host floods the link with thousands of services (`BonjourTests` starts this binary
/// in namespace A as role `flood`, and the flooder in B; disabled in an ordinary run). Marker
/// files in `NW_TEST_DIR` step through it.
@Suite("Bonjour.Flood", .enabled(if: NamespacedTestRun.role == "flood", "runs inside a network namespace, started by Bonjour"))
struct BonjourFloodTests {
    @Test("a flood of distinct services stays within the cache's bound and memory; the browser still finds a real service after it")
    func flood() async throws {
        let directory = URL(fileURLWithPath: try #require(NamespacedTestRun.value("DIR")))
        let queue = DispatchQueue(label: "bonjour.flood")
        let (browser, updates, states) = BonjourSameHostTests.browse(.bonjourWithTXTRecord(type: "_nwflood._tcp", domain: nil), queue: queue)
        defer { browser.cancel() }
        try await states.wait("ready") { $0.contains(.ready) }
        // The link's sockets open right after the browse starts.
        await pause(milliseconds: 500)
        let before = Self.residentBytes()
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("browsing").path, contents: Data())

        // Wait for the flood to be taken in: results grow, then stay still for two seconds.
        let started = Date()
        try await updates.wait("flood results", timeout: 30) { !$0.isEmpty }
        var count = -1
        while count != updates.count {
            count = updates.count
            await pause(milliseconds: 2000)
        }
        let found = browser.browseResults.count
        let grown = Self.residentBytes() - before
        print("bonjour: flood of 6000 services: \(found) results kept, \(updates.count) updates, \(grown / 1024) KiB more resident, \(String(format: "%.1f", Date().timeIntervalSince(started) - 2)) s to take in")
        #expect(found > 0 && found <= 4096, "results: \(found)")
        // Widened under a sanitizer (AddressSanitizer's quarantine alone keeps ~170 MB here).
        #expect(grown < SanitizerSlowdown.residentBytes(64 << 20), "resident memory grew by \(grown) bytes")

        // The stack still works: a real service is found beside what is left of the flood.
        let (listener, registrations) = try BonjourSameHostTests.advertise("Real Svc", type: "_nwflood._tcp", txt: NWTXTRecord(["k": "v"]), queue: queue)
        defer { listener.cancel() }
        try await registrations.wait(count: 1, "registration", timeout: 15)
        let real = NWEndpoint.service(name: "Real Svc", type: "_nwflood._tcp", domain: "local.", interface: nil)
        try await updates.wait("the real service", timeout: 15) { $0.last?.contains { $0.endpoint == real } == true }
    }

    /// This process's resident set, from /proc/self/statm.
    static func residentBytes() -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
