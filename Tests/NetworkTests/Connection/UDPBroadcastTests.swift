import Foundation
import Network
import PeerSupport
import Testing

/// Broadcast through a plain UDP `NWConnection`, with no entitlement: to 255.255.255.255 and to
/// the subnet's broadcast address, across a veth pair between two namespaces this test makes
/// (nothing reaches this machine's interfaces). Python's `socket`, bound to the wildcard address
/// in namespace B, is the receiver (`multicast_peer.py --wildcard`); our side runs inside
/// namespace A (`UDPBroadcastInsideTests`, role "broadcast").
@Suite("Connection.UDPBroadcast")
struct UDPBroadcastTests {
    @Test("a UDP connection to 255.255.255.255 and one to 10.82.0.255 each reach a receiver on the other side of the link, from our address; a UDP listener gets both kinds of broadcast as connections from their senders")
    func broadcastAcrossALink() async throws {
        guard let python = PeerProcess.executable("python3", package: "python3"), let (a, b) = TestNamespace.makePair() else { return }
        defer { a.tearDown(); b.tearDown() }
        let (interfaceA, _) = try a.link(addresses: ["10.82.0.1/24"], to: b, otherAddresses: ["10.82.0.2/24", "10.82.0.3/24"])
        // The limited broadcast goes where the default route does.
        try a.run(a.ip, ["route", "add", "default", "dev", interfaceA])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("broadcast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = "47082"
        let receiver = try b.start(python, [
            PythonPeer.scripts.appendingPathComponent("multicast_peer.py").path, "--log", directory.appendingPathComponent("receiver.log").path,
            "--bind", "10.82.0.2", "--port", port, "--wildcard",
        ])
        defer { receiver.stop() }
        // Two senders in B for our listener: from .2 to 255.255.255.255, from .3 to 10.82.0.255.
        let listenerPort = "47083"
        var senders: [PeerProcess] = []
        defer { for sender in senders { sender.stop() } }
        for (source, target) in [("10.82.0.2", "255.255.255.255"), ("10.82.0.3", "10.82.0.255")] {
            senders.append(try b.start(python, [
                PythonPeer.scripts.appendingPathComponent("multicast_peer.py").path,
                "--log", directory.appendingPathComponent("sender-\(source).log").path,
                "--bind", source, "--broadcast", "--send", "\(target):\(listenerPort)", "--interval", "0.1",
            ]))
        }
        let outcome = try await NamespacedTestRun.run(
            filter: "UDPBroadcastInsideTests", role: "broadcast", in: a, hostname: "nwbroadcast",
            values: ["DIR": directory.path, "PORT": port, "LISTENER_PORT": listenerPort])
        #expect(outcome.passed, "\(outcome)")
    }
}
