import Dispatch
import Foundation
import Network
import PeerSupport
import Testing

/// A browser that runs while an interface comes and goes, and announcements from on-link and
/// off-link sources (`BonjourTests` starts this binary in namespace A as role `link-events`;
/// disabled in an ordinary run). The parent and this side step through the scenario with
/// marker files in `NW_TEST_DIR`.
@Suite("Bonjour.LinkEvents", .enabled(if: NamespacedTestRun.role == "link-events", "runs inside a network namespace, started by Bonjour"))
struct BonjourLinkEventsTests {
    @Test("services on an interface that appears are found; an off-link source's announcement is ignored; the interface going takes its services away")
    func interfaceComesAndGoes() async throws {
        let directory = URL(fileURLWithPath: try #require(NamespacedTestRun.value("DIR")))
        let queue = DispatchQueue(label: "bonjour.link-events")
        let (browser, updates, states) = BonjourSameHostTests.browse(.bonjour(type: "_nwtest._tcp", domain: nil), queue: queue)
        defer { browser.cancel() }
        try await states.wait("ready") { $0.contains(.ready) }
        // No multicast interface yet: nothing to find until the parent adds the veth.
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("browsing").path, contents: Data())

        @Sendable func names(_ results: Set<NWBrowser.Result>?) -> Set<String> {
            Set((results ?? []).compactMap { if case .service(let name, _, _, _) = $0.endpoint { return name } else { return nil } })
        }
        try await updates.wait("services on the new interface", timeout: 20) { values in
            names(values.last).isSuperset(of: ["Late Svc", "Onlink Svc"])
        }
        // The same announcement from an address outside the interface's subnets: never listed.
        await pause(milliseconds: 1000)
        #expect(!names(updates.last).contains("Offlink Svc"), "results: \(names(updates.last))")
        #expect(!updates.values.contains { names($0).contains("Offlink Svc") })
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("found").path, contents: Data())

        // The parent deletes the veth: what was found on it goes.
        let gone = Date()
        try await updates.wait("services gone with the interface", timeout: 10) { values in
            names(values.last).isEmpty
        }
        print("bonjour: interface removed to results gone \(String(format: "%.2f", Date().timeIntervalSince(gone))) s")
    }
}
