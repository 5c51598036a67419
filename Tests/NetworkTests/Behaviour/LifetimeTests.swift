import Dispatch
import Foundation
import Network
import NetworkCore
import PeerSupport
import NetworkSync
import Testing

extension BehaviourTests {
    /// Started objects live until they are cancelled, whether or not the application keeps a
    /// reference (as on Apple platforms); once cancelled they are released.
    @Suite("Behaviour.Lifetime")
    struct Lifetime {
        @Test("a started listener, its accepted connection and a client, none referenced, echo; cancelled, all are released")
        func startedObjectsLiveUntilCancelled() async throws {
            let queue = DispatchQueue(label: "lifetime")
            let listenerStates = Recorder<NWListener.State>()
            let clientStates = Recorder<NWConnection.State>()
            let echoed = Recorder<String>()
            weak var weakListener: NWListener?
            weak var weakClient: NWConnection?
            // The client's flow: its channel handler and establishment hold it strongly (no weak
            // reference, no side table), and let go of it when the channel closes.
            weak var weakFlow: Flow?
            let acceptedReference = WeakReference<NWConnection>()
            let accepted = Recorder<Bool>()

            // Every object is made and started in this scope, and only weak references leave it.
            let port: NWEndpoint.Port
            do {
                let listener = try NWListener(using: .tcp)
                weakListener = listener
                listener.stateUpdateHandler = { listenerStates.append($0) }
                listener.newConnectionHandler = { connection in
                    acceptedReference.object = connection
                    accepted.append(true)
                    connection.start(queue: queue)
                    connection.receive(minimumIncompleteLength: 1, maximumLength: 100) { data, _, _, _ in
                        // Captured for this one completion only, then released.
                        connection.send(content: data, completion: .idempotent)
                    }
                }
                listener.start(queue: queue)
                _ = try await listenerStates.wait("listener ready", timeout: 10) { $0.contains(.ready) }
                port = try #require(listener.port)
            }
            do {
                let client = NWConnection(host: "127.0.0.1", port: port, using: .tcp)
                weakClient = client
                weakFlow = client.flow
                client.stateUpdateHandler = { clientStates.append($0) }
                // Queued before start: they go out once ready, with no reference to the client.
                client.send(content: Data("ping".utf8), completion: .idempotent)
                client.receive(minimumIncompleteLength: 4, maximumLength: 4) { data, _, _, _ in
                    echoed.append(String(decoding: data ?? Data(), as: UTF8.self))
                }
                client.start(queue: queue)
            }
            #expect(try await echoed.wait(count: 1, "the echo", timeout: 10) == ["ping"])
            _ = try await accepted.wait(count: 1, "the accepted connection", timeout: 10)
            #expect(weakListener != nil, "a started listener was released without cancel()")
            #expect(weakClient != nil, "a started connection was released without cancel()")
            #expect(acceptedReference.object != nil, "a started accepted connection was released without cancel()")

            weakClient?.cancel()
            acceptedReference.object?.cancel()
            weakListener?.cancel()
            _ = try await clientStates.wait("client cancelled", timeout: 10) { $0.contains(.cancelled) }
            _ = try await listenerStates.wait("listener cancelled", timeout: 10) { $0.contains(.cancelled) }
            let deadline = ContinuousClock.now + .seconds(5)
            while (weakListener != nil || weakClient != nil || weakFlow != nil || acceptedReference.object != nil)
                && ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(weakListener == nil, "a cancelled listener stays alive")
            #expect(weakClient == nil, "a cancelled connection stays alive")
            #expect(weakFlow == nil, "a cancelled connection's flow stays alive")
            #expect(acceptedReference.object == nil, "a cancelled accepted connection stays alive")
        }
    }
}

/// A weak reference that a handler on another thread may set.
final class WeakReference<Object: AnyObject>: Sendable {
    private struct Box: @unchecked Sendable { weak var object: Object? }
    private let box = Lock(Box())

    var object: Object? {
        get { box.withLock { $0.object } }
        set { box.withLock { $0.object = newValue } }
    }
}
