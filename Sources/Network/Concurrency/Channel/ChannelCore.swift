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
    /// The connection's life: started, state, and who waits for what.
    private let lifecycle = ChannelLifecycle()
    /// The task whose scope the channel lives in, if it has one (see `ScopeTask`).
    let scope = ScopeTask()

    /// Where the connections of all async channels deliver their state and path events.
    static let queue = DispatchQueue(label: "network.channel")
    /// Where report requests answer (the answer resumes the waiting task at once).
    static let reportQueue = DispatchQueue(label: "network.channel.reports", attributes: .concurrent)

    /// The measurement `dataTransferReport()` collects, started by its first call.
    func transferMeasurement() -> NWConnection.PendingDataTransferReport {
        lifecycle.transferReport { connection.startDataTransferReport() }
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
        lifecycle.observeStates(observer)
    }

    /// Starts the connection unless it was started already (or is refused).
    func startIfNeeded() {
        guard refusal == nil else { return }
        guard lifecycle.markStarted() else { return }
        connection.stateUpdateHandler = { [lifecycle] state in lifecycle.stateChanged(state) }
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
        guard lifecycle.started else { return }
        await withCheckedContinuation { lifecycle.waitForClose($0) }
    }

    /// Starts the connection if needed and waits until it is ready; throws its error if it
    /// fails, `ECANCELED` if it is cancelled (a cancelled task cancels it). A connection that is
    /// waiting keeps this waiting, as it keeps a classic connection's sends.
    func waitUntilReady() async throws {
        if let refusal { throw refusal.error }
        startIfNeeded()
        try await cancellable { lifecycle.waitForReady($0) }
    }

    /// Waits until the connection has ended (`failed` or `cancelled`) and returns that state;
    /// at once for one that already has. Does not start the connection.
    func waitUntilEnded() async -> NWConnection.State {
        await withCheckedContinuation { lifecycle.waitForEnd($0) }
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
    nonisolated(nonsending) func receive(minimum: Int, maximum: Int) async throws -> Received {
        if let refusal { throw refusal.error }
        startIfNeeded()
        let flow = self.flow
        let outcome: DataReceiveOutcome
        // On the flow's own loop, with a message already there: no waiter, no suspension.
        if let now = flow.receiveNow(minimum: minimum, maximum: maximum, unless: Task.isCancelled) {
            outcome = now
        } else {
            outcome = try await whileCancellable {
                await withUnsafeContinuation { flow.receive(minimum: minimum, maximum: maximum, resuming: $0) }
            }
        }
        switch Self.received(outcome) {
        case .success(let received): return received
        case .failure(let error):
            // (A cancelled task's receive ends as its connection does: cancelled.)
            if Task.isCancelled { throw CancellationError() }
            throw NWError(error)
        }
    }

    private static func received(_ outcome: DataReceiveOutcome) -> Result<Received, FlowError> {
        switch outcome {
        case .data(let data, let isComplete, let isFinal, let message):
            .success(Received(data: data ?? Data(), isComplete: isComplete, isFinal: isFinal, message: message))
        case .failure(let error):
            .failure(error)
        }
    }

    // MARK: - Sending

    /// Sends bytes on a stream; returns once the flow has taken them (as `.contentProcessed`).
    nonisolated(nonsending) func sendStream<Content: DataProtocol>(_ content: Content, closesWrite: Bool) async throws {
        if let refusal { throw refusal.error }
        startIfNeeded()
        // (Not through the ticket: a send the flow takes at once completes inside `send`, and
        // the task then goes on without suspending. So the flow is told the completion runs
        // inline: it must not wait for a handler that never comes before waking its loop.)
        let taken = OutcomeWaiter()
        flow.send(
            bytes: content, isComplete: true, closesWrite: closesWrite, completion: { error, _ in taken.arrived(error) },
            completesInline: true)
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
    nonisolated(nonsending) func sendMessage(
        _ content: Data?, layerMessage: (any AnyObject & Sendable)?, isComplete: Bool = true, closesWrite: Bool = false,
        marking: DatagramMarking = .unmarked
    ) async throws {
        if let refusal { throw refusal.error }
        startIfNeeded()
        // On the flow's own loop, a whole message the layer takes at once: no waiter, no suspension.
        if isComplete, !closesWrite, let content,
            let outcome = flow.sendMessageNow(content, metadata: layerMessage, unless: Task.isCancelled)
        {
            if let error = outcome { throw NWError(error) }
            return
        }
        let flow = self.flow
        try await cancellable { (continuation: ChannelContinuation<Void>) in
            let completion = ChannelSendCompletion(continuation: continuation, framerMessage: layerMessage)
            flow.send(
                datagram: content, isComplete: isComplete, closesWrite: closesWrite, completion: completion,
                ecn: marking.ecn, trafficClass: marking.trafficClass)
        }
    }

    /// Waits for what `start` sets off to resume the continuation (see `whileCancellable`).
    nonisolated(nonsending) func cancellable<T>(
        _ start: (ChannelContinuation<T>) -> Void, alsoOnCancel: (@Sendable () -> Void)? = nil
    ) async throws -> T {
        try await whileCancellable(alsoOnCancel: alsoOnCancel) { try await Self.suspend(start) }
    }

    /// Runs `wait`; if the waiting task is cancelled the connection is cancelled, which ends the
    /// wait at once (the flow fails its pending operations), and `alsoOnCancel` runs; the task
    /// then sees `CancellationError`. In the channel's scope task, whose cancellation handler
    /// cancels the connection for the whole scope, a wait that needs nothing else on cancel
    /// installs no handler of its own.
    nonisolated(nonsending) func whileCancellable<T>(
        alsoOnCancel: (@Sendable () -> Void)? = nil, _ wait: nonisolated(nonsending) () async throws -> T
    ) async throws -> T {
        do {
            if alsoOnCancel == nil, scope.isCurrent { return try await wait() }
            return try await withTaskCancellationHandler {
                try await wait()
            } onCancel: {
                self.cancel()
                alsoOnCancel?()
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
    }

    /// Suspends until what `start` sets off resumes the continuation.
    private nonisolated(nonsending) static func suspend<T>(_ start: (ChannelContinuation<T>) -> Void) async throws -> T {
        #if DEBUG
        try await withCheckedThrowingContinuation(start)
        #else
        try await withUnsafeThrowingContinuation(start)
        #endif
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
