import Dispatch
import Foundation
import Network
import PeerSupport
import Testing

/// The WWDC 2018 demo across two "machines" (namespaces joined by a veth pair, each with its
/// own host name): one advertises a UDP camera service from a listener under the default name,
/// the other finds it by browsing, connects to it by service name and exchanges datagrams.
/// `BonjourTests` runs this binary as role `camera-listener` in one namespace and
/// `camera-browser` in the other; disabled in an ordinary run.
@Suite("Bonjour.CameraDemo", .enabled(if: NamespacedTestRun.role?.hasPrefix("camera-") == true, "runs inside network namespaces, started by Bonjour"))
struct BonjourCameraDemoTests {
    @Test("camera side: a UDP listener advertises _camera._udp under the host's name and echoes datagrams", .enabled(if: NamespacedTestRun.role == "camera-listener"))
    func camera() async throws {
        let doneFile = try #require(NamespacedTestRun.value("DONE_FILE"))
        let queue = DispatchQueue(label: "bonjour.camera")
        let listener = try NWListener(using: .udp)
        // No name: the system's (this namespace's host name).
        listener.service = NWListener.Service(type: "_camera._udp")
        let registrations = Recorder<NWListener.ServiceRegistrationChange>()
        listener.serviceRegistrationUpdateHandler = { registrations.append($0) }
        listener.newConnectionHandler = { connection in BonjourSameHostTests.echo(connection, queue: queue) }
        listener.start(queue: queue)
        let added = try await registrations.wait(count: 1, "registration")
        let hostname = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init)
        #expect(added.first.map { "\($0)" }?.contains(hostname ?? "?") == true, "registered as \(added) on \(hostname ?? "?")")
        print("camera: ready")
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: doneFile), Date() < deadline {
            await pause(milliseconds: 50)
        }
        listener.cancel()
    }

    @Test("viewer side: browse for _camera._udp, connect to the result by service name, exchange datagrams", .enabled(if: NamespacedTestRun.role == "camera-browser"))
    func viewer() async throws {
        let cameraHost = try #require(NamespacedTestRun.value("CAMERA_HOST"))
        let queue = DispatchQueue(label: "bonjour.viewer")
        let browser = NWBrowser(for: .bonjour(type: "_camera._udp", domain: nil), using: .udp)
        let updates = Recorder<Set<NWBrowser.Result>>()
        browser.browseResultsChangedHandler = { results, _ in updates.append(results) }
        browser.start(queue: queue)
        defer { browser.cancel() }
        let found = try await updates.wait("the camera", timeout: 15) { $0.last?.isEmpty == false }
        let camera = try #require(found.last?.first)
        #expect(camera.endpoint == .service(name: cameraHost, type: "_camera._udp", domain: "local.", interface: nil))
        #expect(camera.metadata == .none)
        for frame in ["frame-1", "frame-2"] {
            let reply = try await BonjourSameHostTests.exchange(to: camera.endpoint, using: .udp, payload: Data(frame.utf8), queue: queue)
            #expect(reply == Data(frame.utf8))
        }
    }
}
