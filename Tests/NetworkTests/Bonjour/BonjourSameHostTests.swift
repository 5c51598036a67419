import Dispatch
import Foundation
import Network
import PeerSupport
import Testing

/// Advertising and browsing within one process, over a namespace's loopback with multicast
/// switched on (`BonjourTests` makes the namespace and starts this binary inside it as role
/// `same-host`; in an ordinary run these are disabled: their multicast must never leave through
/// this machine's real interfaces).
@Suite("Bonjour.SameHost", .enabled(if: NamespacedTestRun.role == "same-host", "runs inside a network namespace, started by Bonjour"))
struct BonjourSameHostTests {
    static let type = "_nwtest._tcp"

    @Test("a listener's service is found by a browser with its TXT record; a second listener of the same name becomes \"Name (2)\"; a new TXT record is seen; cancelling removes it")
    func advertiseBrowseRenameGoodbye() async throws {
        let queue = DispatchQueue(label: "bonjour.same-host")
        var txt = NWTXTRecord()
        txt["model"] = "lab"
        txt.setEntry(.none, for: "flag")

        let browser = NWBrowser(for: .bonjourWithTXTRecord(type: Self.type, domain: nil), using: .tcp)
        let browserStates = Recorder<NWBrowser.State>()
        let updates = Recorder<(Set<NWBrowser.Result>, Set<NWBrowser.Result.Change>)>()
        browser.stateUpdateHandler = { browserStates.append($0) }
        browser.browseResultsChangedHandler = { results, changes in updates.append((results, changes)) }
        browser.start(queue: queue)
        try await browserStates.wait("browser ready") { $0.contains(.ready) }

        let (first, firstRegistrations) = try Self.advertise("Lab Service", txt: txt, queue: queue)
        let added = try await firstRegistrations.wait(count: 1, "first registration", timeout: 10)
        guard case .add(let firstEndpoint) = added[0] else {
            Issue.record("expected add, got \(added)")
            return
        }
        #expect(firstEndpoint == .service(name: "Lab Service", type: Self.type, domain: "local.", interface: nil))

        // The browser finds it, with its TXT record and the loopback interface.
        let found = try await updates.wait("browser finds Lab Service") { values in
            values.contains { $0.0.contains { $0.endpoint == firstEndpoint } }
        }
        let result = try #require(found.last?.0.first { $0.endpoint == firstEndpoint })
        #expect(result.metadata == .bonjour(txt))
        #expect(result.endpoint.txtRecord == txt)
        #expect(result.interfaces.map(\.name) == ["lo"])
        #expect(found.contains { $0.1.contains(.added(result)) })

        // Connecting to the result's endpoint resolves the service (SRV, then the host's
        // address) and reaches the listener.
        let reply = try await Self.exchange(to: result.endpoint, using: .tcp, payload: Data("ping".utf8), queue: queue)
        #expect(reply == Data("ping".utf8))

        // Same name again: probing meets the first one's defence, and it renames.
        let (second, secondRegistrations) = try Self.advertise("Lab Service", txt: txt, queue: queue)
        let renamed = try await secondRegistrations.wait(count: 1, "second registration", timeout: 15)
        let secondEndpoint = NWEndpoint.service(name: "Lab Service (2)", type: Self.type, domain: "local.", interface: nil)
        guard case .add(let endpoint) = renamed[0] else {
            Issue.record("expected add, got \(renamed)")
            return
        }
        #expect(endpoint == secondEndpoint)
        try await updates.wait("browser finds both") { values in
            guard let results = values.last?.0 else { return false }
            return Set(results.map(\.endpoint)) == [firstEndpoint, secondEndpoint]
        }

        // A new TXT record for the second: announced under the same name.
        var changedTXT = txt
        changedTXT["model"] = "lab-2"
        let newTXT = changedTXT
        second.service = NWListener.Service(name: "Lab Service", type: Self.type, txtRecord: newTXT)
        try await updates.wait("metadata change") { values in
            values.contains { update in
                update.1.contains { change in
                    if case .changed(let old, let new, let flags) = change {
                        return old.endpoint == secondEndpoint && new.metadata == .bonjour(newTXT) && flags.contains(.metadataChanged)
                    }
                    return false
                }
            }
        }

        // Cancelling the first: its goodbye removes it (RFC 6762 keeps a goodbye one second).
        let cancelled = Date()
        first.cancel()
        try await updates.wait("first removed", timeout: 5) { values in
            values.contains { $0.1.contains { if case .removed(let r) = $0 { return r.endpoint == firstEndpoint } else { return false } } }
        }
        let elapsed = Date().timeIntervalSince(cancelled)
        print("bonjour: goodbye to removal \(String(format: "%.2f", elapsed)) s")
        #expect(elapsed < SanitizerSlowdown.seconds(2.0))
        #expect(browser.browseResults.map(\.endpoint) == [secondEndpoint])

        second.cancel()
        browser.cancel()
        try await browserStates.wait("browser cancelled") { $0.last == .cancelled }
    }

    /// A started browser for `descriptor` and the recorders of its result sets and states.
    static func browse(
        _ descriptor: NWBrowser.Descriptor, queue: DispatchQueue
    ) -> (NWBrowser, Recorder<Set<NWBrowser.Result>>, Recorder<NWBrowser.State>) {
        let browser = NWBrowser(for: descriptor, using: .tcp)
        let updates = Recorder<Set<NWBrowser.Result>>()
        let states = Recorder<NWBrowser.State>()
        browser.stateUpdateHandler = { states.append($0) }
        browser.browseResultsChangedHandler = { results, _ in updates.append(results) }
        browser.start(queue: queue)
        return (browser, updates, states)
    }

    /// A TCP listener advertising `name`, and the recorder of its registration changes.
    static func advertise(
        _ name: String, type: String = type, txt: NWTXTRecord, queue: DispatchQueue
    ) throws -> (NWListener, Recorder<NWListener.ServiceRegistrationChange>) {
        let listener = try NWListener(using: .tcp)
        listener.service = NWListener.Service(name: name, type: type, txtRecord: txt)
        let registrations = Recorder<NWListener.ServiceRegistrationChange>()
        listener.serviceRegistrationUpdateHandler = { registrations.append($0) }
        listener.newConnectionHandler = { connection in Self.echo(connection, queue: queue) }
        listener.start(queue: queue)
        return (listener, registrations)
    }

    /// Sends back each message (UDP) or chunk (TCP) the connection receives.
    static func echo(_ connection: NWConnection, queue: DispatchQueue) {
        connection.start(queue: queue)
        @Sendable func next() {
            connection.receive(minimumIncompleteLength: 1, maximumLength: 65536) { data, _, isComplete, error in
                if let data, !data.isEmpty { connection.send(content: data, completion: .idempotent) }
                if isComplete || error != nil { connection.cancel() } else { next() }
            }
        }
        next()
    }

    /// Connects to `endpoint`, sends `payload` and returns the first reply.
    static func exchange(to endpoint: NWEndpoint, using parameters: NWParameters, payload: Data, queue: DispatchQueue) async throws -> Data? {
        let connection = NWConnection(to: endpoint, using: parameters)
        defer { connection.cancel() }
        let replies = Recorder<Data>()
        let states = Recorder<NWConnection.State>()
        connection.stateUpdateHandler = { states.append($0) }
        connection.start(queue: queue)
        try await states.wait("ready", timeout: 10) { $0.contains(.ready) || $0.contains { if case .failed = $0 { return true } else { return false } } }
        guard connection.state == .ready else {
            Issue.record("connection to \(endpoint): \(states.values)")
            return nil
        }
        connection.send(content: payload, completion: .idempotent)
        connection.receive(minimumIncompleteLength: 1, maximumLength: 65536) { data, _, _, _ in replies.append(data ?? Data()) }
        return try await replies.wait(count: 1, "reply").first
    }

    @Test("a malformed service type fails the browser with kDNSServiceErr_BadParam")
    func badType() async throws {
        let browser = NWBrowser(for: .bonjour(type: "not a type", domain: nil), using: .tcp)
        let states = Recorder<NWBrowser.State>()
        browser.stateUpdateHandler = { states.append($0) }
        browser.start(queue: DispatchQueue(label: "bonjour.bad"))
        try await states.wait("failed") { $0.contains(.failed(.dns(DNSServiceErrorType(kDNSServiceErr_BadParam)))) }
        browser.cancel()
    }
}
