import Dispatch
import Foundation
import NetworkCore
import NetworkSync

/// The engine side of a ``NetworkChannel``: one classic connection, whose flow the async
/// sends and receives use directly. Their continuations are resumed by the flow's completions
/// themselves, on the flow's event loop (or on the sender's thread for a send the flow took at
/// once), not through a dispatch queue; only state and path events go through the connection's
/// queue, as for ``NWConnection``.
///
/// The core starts the connection on first use and cancels it when it goes away (its channel
/// was released) or when a task waiting on it is cancelled.
final class ChannelCore: Sendable {
    let connection: NWConnection
    /// Thrown by every send and receive instead of starting the connection (made to something
    /// this module cannot reach, `UnexpectedEndpointType`).
    private let refusal: UncheckedError?
    /// A listener accepted the connection (its endpoint is the peer's address).
    let accepted: Bool
    private let shared = Lock(Shared())

    private struct Shared {
        var started = false
        var state: NWConnection.State = .setup
        /// Tasks waiting for `ready` (or a state after which it never comes).
        var readyWaiters: [CheckedContinuation<Void, any Error>] = []
        /// Tasks waiting for `cancelled` (`close()`).
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// Tasks waiting for the connection's end, `failed` or `cancelled` (`waitUntilEnded()`).
        var endWaiters: [CheckedContinuation<NWConnection.State, Never>] = []
        /// Where state changes go besides `state` (the channel's `onStateUpdate`).
        var stateObserver: (@Sendable (NWConnection.State) -> Void)?
        /// The data-transfer measurement `dataTransferReport()` started.
        var transferReport: NWConnection.PendingDataTransferReport?
    }

    /// Where the connections of all async channels deliver their state and path events.
    static let queue = DispatchQueue(label: "network.channel")
    /// Where report requests answer (the answer resumes the waiting task at once).
    static let reportQueue = DispatchQueue(label: "network.channel.reports", attributes: .concurrent)

    /// The measurement `dataTransferReport()` collects, started by its first call.
    func transferMeasurement() -> NWConnection.PendingDataTransferReport {
        shared.withLock { shared in
            if let report = shared.transferReport { return report }
            let report = connection.startDataTransferReport()
            shared.transferReport = report
            return report
        }
    }

    init(connection: NWConnection, refusal: (any Error)? = nil, accepted: Bool = false) {
        self.connection = connection
        self.refusal = refusal.map { UncheckedError($0) }
        self.accepted = accepted
    }

    deinit {
        // The channel is gone: nothing can send or receive on the connection any more.
        connection.cancel()
    }

    var flow: Flow { connection.flow }

    /// The executor of the flow's event loop: tasks that prefer it run next to the flow, and
    /// their sends and receives cross no thread (`EventLoopTaskExecutor`).
    var taskExecutor: any TaskExecutor { flow.taskExecutor }

    /// The connection's state now (the classic connection's, which changes on the flow's loop
    /// before the change is delivered: a send that returned found it ready).
    var state: NWConnection.State { connection.state }

    /// Sets (or clears) the observer of state changes.
    func observeStates(_ observer: (@Sendable (NWConnection.State) -> Void)?) {
        shared.withLock { $0.stateObserver = observer }
    }

    /// Starts the connection unless it was started already (or is refused).
    func startIfNeeded() {
        guard refusal == nil else { return }
        let start = shared.withLock { shared -> Bool in
            guard !shared.started else { return false }
            shared.started = true
            return true
        }
        guard start else { return }
        // Weak: the connection keeps its handler until it is cancelled, which this core's
        // deinit does.
        connection.stateUpdateHandler = { [weak self] state in self?.stateChanged(state) }
        connection.start(queue: Self.queue)
    }

    /// Closes the connection (gracefully: pending sends already taken still go out, pending
    /// receives end with `ECANCELED`).
    func cancel() {
        connection.cancel()
    }

    /// Closes the connection and returns once it is closed (its socket too). Returns at once
    /// for a connection that never started.
    func close() async {
        let started = shared.withLock { $0.started }
        guard started else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let closed = shared.withLock { shared -> Bool in
                if shared.state == .cancelled { return true }
                shared.closeWaiters.append(continuation)
                return false
            }
            if closed { continuation.resume() }
        }
    }

    private func stateChanged(_ state: NWConnection.State) {
        let (waiters, closeWaiters, endWaiters, observer) = shared.withLock { shared in
            shared.state = state
            var waiters: [CheckedContinuation<Void, any Error>] = []
            var closeWaiters: [CheckedContinuation<Void, Never>] = []
            var endWaiters: [CheckedContinuation<NWConnection.State, Never>] = []
            switch state {
            case .ready:
                swap(&waiters, &shared.readyWaiters)
            case .failed:
                swap(&waiters, &shared.readyWaiters)
                swap(&endWaiters, &shared.endWaiters)
            case .cancelled:
                swap(&waiters, &shared.readyWaiters)
                swap(&closeWaiters, &shared.closeWaiters)
                swap(&endWaiters, &shared.endWaiters)
            case .setup, .waiting, .preparing:
                break
            }
            return (waiters, closeWaiters, endWaiters, shared.stateObserver)
        }
        // The observer first: who waits for the close may then wait for its observers too.
        observer?(state)
        for waiter in waiters { Self.settle(waiter, with: state) }
        for waiter in closeWaiters { waiter.resume() }
        for waiter in endWaiters { waiter.resume(returning: state) }
    }

    private static func settle(_ continuation: CheckedContinuation<Void, any Error>, with state: NWConnection.State) {
        switch state {
        case .ready: continuation.resume()
        case .failed(let error): continuation.resume(throwing: error)
        default: continuation.resume(throwing: NWError.posix(.ECANCELED))
        }
    }

    /// Starts the connection if needed and waits until it is ready; throws its error if it
    /// fails, `ECANCELED` if it is cancelled (a cancelled task cancels it). A connection that is
    /// waiting keeps this waiting, as it keeps a classic connection's sends.
    func waitUntilReady() async throws {
        if let refusal { throw refusal.error }
        startIfNeeded()
        try await cancellable { (continuation: CheckedContinuation<Void, any Error>) in
            let settled = shared.withLock { shared -> NWConnection.State? in
                switch shared.state {
                case .ready, .failed, .cancelled:
                    return shared.state
                case .setup, .waiting, .preparing:
                    shared.readyWaiters.append(continuation)
                    return nil
                }
            }
            if let settled { Self.settle(continuation, with: settled) }
        }
    }

    /// Waits until the connection has ended (`failed` or `cancelled`) and returns that state;
    /// at once for one that already has. Does not start the connection.
    func waitUntilEnded() async -> NWConnection.State {
        await withCheckedContinuation { (continuation: CheckedContinuation<NWConnection.State, Never>) in
            let ended = shared.withLock { shared -> NWConnection.State? in
                switch shared.state {
                case .failed, .cancelled: return shared.state
                case .setup, .waiting, .preparing, .ready:
                    shared.endWaiters.append(continuation)
                    return nil
                }
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    // MARK: - Receiving

    /// What one receive gave: bytes (empty at the end of a stream), whether the message (or
    /// the stream) is complete, whether the stream ended, and the layer's message metadata.
    struct Received: Sendable {
        let data: Data
        let isComplete: Bool
        let isFinal: Bool
        let message: (any AnyObject & Sendable)?

        /// The end of the stream below a message protocol: no message, just the end.
        var isEndOfStream: Bool { isFinal && data.isEmpty && message == nil }
    }

    /// Receives between `minimum` and `maximum` bytes (streams) or one message; the connection
    /// starts if it has not. Throws the connection's error as an `NWError`.
    func receive(minimum: Int, maximum: Int) async throws -> Received {
        if let refusal { throw refusal.error }
        startIfNeeded()
        let flow = self.flow
        return try await cancellable { (continuation: CheckedContinuation<Received, any Error>) in
            flow.receive(minimum: minimum, maximum: maximum) { outcome in
                switch outcome {
                case .data(let data, let isComplete, let isFinal, let message):
                    continuation.resume(returning: Received(
                        data: data ?? Data(), isComplete: isComplete, isFinal: isFinal, message: message))
                case .failure(let error):
                    continuation.resume(throwing: NWError(error))
                }
            }
        }
    }

    // MARK: - Sending

    /// Sends bytes on a stream; returns once the flow has taken them (as `.contentProcessed`).
    func sendStream<Content: DataProtocol>(_ content: Content, closesWrite: Bool) async throws {
        if let refusal { throw refusal.error }
        startIfNeeded()
        // (Not through the ticket: a send the flow takes at once completes inside `send`, and
        // the task then goes on without suspending.)
        let taken = OutcomeWaiter()
        flow.send(bytes: content, isComplete: true, closesWrite: closesWrite) { error, _ in taken.arrived(error) }
        try await taken.wait(cancelling: self)
    }

    /// Sends bytes on a stream without waiting (idempotent data: it may ride in a Fast Open SYN).
    func sendStreamIdempotent<Content: DataProtocol>(_ content: Content, closesWrite: Bool) {
        guard refusal == nil else { return }
        startIfNeeded()
        flow.send(bytes: content, isComplete: true, closesWrite: closesWrite, completion: nil)
    }

    /// Sends one message (a datagram, marked as `marking` says, or a message of the stack's
    /// framer or WebSocket, with its metadata `layerMessage`); returns once the flow has taken it.
    func sendMessage(
        _ content: Data?, layerMessage: (any AnyObject & Sendable)?, isComplete: Bool = true, closesWrite: Bool = false,
        marking: DatagramMarking = .unmarked
    ) async throws {
        if let refusal { throw refusal.error }
        startIfNeeded()
        let flow = self.flow
        try await cancellable { (continuation: CheckedContinuation<Void, any Error>) in
            let completion = ChannelSendCompletion(continuation: continuation, framerMessage: layerMessage)
            flow.send(
                datagram: content, isComplete: isComplete, closesWrite: closesWrite, completion: completion,
                ecn: marking.ecn, trafficClass: marking.trafficClass)
        }
    }

    /// Waits for what `start` sets off to resume the continuation. If the waiting task is
    /// cancelled the connection is cancelled, which ends the wait at once (the flow fails its
    /// pending operations), and `alsoOnCancel` runs; the task then sees `CancellationError`.
    func cancellable<T>(
        _ start: (CheckedContinuation<T, any Error>) -> Void, alsoOnCancel: @Sendable () -> Void = {}
    ) async throws -> T {
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation(start)
            } onCancel: {
                self.cancel()
                alsoOnCancel()
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
    }

    /// Sends one message without waiting for it to be taken.
    func sendMessageIdempotent(_ content: Data?, layerMessage: (any AnyObject & Sendable)?, closesWrite: Bool = false) {
        guard refusal == nil else { return }
        startIfNeeded()
        // Framed flows need the metadata to reach the framer even without a completion.
        let completion = flow.isFramed ? ChannelSendCompletion(continuation: nil, framerMessage: layerMessage) : nil
        flow.send(datagram: content, isComplete: true, closesWrite: closesWrite, completion: completion)
    }
}

/// An error kept to be thrown later from any thread (errors this module makes are values).
struct UncheckedError: @unchecked Sendable {
    let error: any Error
    init(_ error: any Error) { self.error = error }
}
