import Dispatch
import Foundation
import Network
import PeerSupport
import Testing

/// Our side of the tests across two namespaces joined by a veth pair, with another mDNS stack
/// around (another namespace, or beside us) (`BonjourTests` starts this binary inside namespace A as role
/// `across`; disabled in an ordinary run, whose multicast must not leave through this machine's
/// real interfaces). The peers' services come in `NW_TEST_*` variables.
@Suite("Bonjour.AcrossNamespaces", .enabled(if: NamespacedTestRun.role == "across", "runs inside a network namespace, started by Bonjour"))
struct BonjourAcrossNamespacesTests {
    @Test("our listener is advertised until the peers saw it, then says goodbye; each peer's service is found with its TXT record off loopback")
    func advertiseAndFind() async throws {
        let type = try #require(NamespacedTestRun.value("TYPE"))
        // `Name=k=v;flag|Other=a=1`: each service the peers advertise, with its TXT record.
        let peers = try #require(NamespacedTestRun.value("PEERS")).split(separator: "|").map { entry in
            let parts = entry.split(separator: "=", maxSplits: 1)
            return (name: String(parts[0]), txt: parts.count > 1 ? String(parts[1]) : "")
        }
        let ourName = try #require(NamespacedTestRun.value("OUR_NAME"))
        let doneFile = try #require(NamespacedTestRun.value("DONE_FILE"))
        let queue = DispatchQueue(label: "bonjour.across")

        let listener = try NWListener(using: .tcp)
        var txt = NWTXTRecord()
        txt["swift"] = "yes"
        listener.service = NWListener.Service(name: ourName, type: type, txtRecord: txt)
        let registrations = Recorder<NWListener.ServiceRegistrationChange>()
        listener.serviceRegistrationUpdateHandler = { registrations.append($0) }
        listener.newConnectionHandler = { $0.cancel() }
        listener.start(queue: queue)

        let browser = NWBrowser(for: .bonjourWithTXTRecord(type: type, domain: "local."), using: .tcp)
        let updates = Recorder<Set<NWBrowser.Result>>()
        browser.browseResultsChangedHandler = { results, _ in updates.append(results) }
        browser.start(queue: queue)
        for peer in peers {
            let endpoint = NWEndpoint.service(name: peer.name, type: type, domain: "local.", interface: nil)
            let found = try await updates.wait("the service \(peer.name)", timeout: 15) { values in
                values.last?.contains { $0.endpoint == endpoint && $0.metadata != .none } == true
            }
            let result = try #require(found.last?.first { $0.endpoint == endpoint })
            guard case .bonjour(let record) = result.metadata else {
                Issue.record("no TXT record: \(result)")
                return
            }
            // `k=v;flag` as the peer was told.
            for pair in peer.txt.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                let key = String(parts[0])
                let expected: NWTXTRecord.Entry = parts.count == 2 ? .string(String(parts[1])) : .none
                #expect(record.getEntry(for: key) == expected, "TXT \(key) of \(peer.name) in \(record)")
            }
            #expect(result.interfaces.contains { $0.name != "lo" }, "\(peer.name) found on \(result.interfaces)")
        }
        let registered = try await registrations.wait(count: 1, "registration")
        guard case .add(.service(let name, _, _, _)) = registered[0] else {
            Issue.record("registration: \(registered)")
            return
        }
        #expect(name == ourName)

        // The parent says when the peers have seen us; then the goodbye.
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: doneFile), Date() < deadline {
            await pause(milliseconds: 50)
        }
        #expect(FileManager.default.fileExists(atPath: doneFile), "the peers never saw our service")
        listener.cancel()
        browser.cancel()
        // The goodbye leaves at once; give it a moment on the wire before the process ends.
        await pause(milliseconds: 300)
    }
}
