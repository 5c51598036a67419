import Dispatch
import NetworkSync

/// Looks for endpoints (Bonjour services) and hands the current list to the handler of
/// `run(_:)` whenever it changes, until the handler finishes or the task running it is
/// cancelled.
public final class NetworkBrowser<Provider: BrowserProvider>: CustomDebugStringConvertible, Sendable {
    /// Called with every state change, in the isolation the handler was written in.
    public typealias StateUpdateHandler = @isolated(any) @Sendable (NetworkBrowser<Provider>, NetworkBrowser<Provider>.State) -> Void

    /// What the handler of `run(_:)` asks for.
    public enum RunResult<T>: Sendable where T: Sendable {
        /// Keep browsing.
        case `continue`
        /// Stop browsing; `run` returns the value.
        case finish(T)
    }

    /// Where a browser is in its life.
    public enum State: Equatable, Sendable {
        /// Made; it browses when `run` starts.
        case setup
        /// Browsing.
        case ready
        /// Cannot browse now; it goes on when the network allows.
        case waiting(NWError)
        /// Browsing failed: `run` throws the error.
        case failed(NWError)
        /// Stopped; always the last state.
        case cancelled

        init(_ state: NWBrowser.State) {
            switch state {
            case .setup: self = .setup
            case .ready: self = .ready
            case .waiting(let error): self = .waiting(error)
            case .failed(let error): self = .failed(error)
            case .cancelled: self = .cancelled
            }
        }
    }

    private let provider: Provider
    private let parameters: NWParameters
    private let shared = Lock(Shared())
    private let pump = LazyEventPump<NetworkBrowser<Provider>>()

    private struct Shared {
        var state: NWBrowser.State = .setup
        var stateHandler: StateUpdateHandler?
        var running = false
    }

    /// A browser for what `provider` describes, with `parameters` (nil: defaults).
    public init(for provider: Provider, using parameters: NWParameters? = nil) {
        self.provider = provider
        self.parameters = parameters?.copy() ?? NWParameters()
    }

    /// The browser's state.
    public var state: State { State(shared.withLock { $0.state }) }

    /// The state.
    public var debugDescription: String { "[NetworkBrowser \(state)]" }

    /// Calls `handler` with every state change.
    @discardableResult
    public final func onStateUpdate(_ handler: @escaping StateUpdateHandler) -> Self {
        shared.withLock { $0.stateHandler = handler }
        return self
    }

    /// Browses for ever, calling `handler` with the whole current list of endpoints whenever it
    /// changes; ends when the task running it is cancelled (`CancellationError`), or throws
    /// when browsing fails.
    public final func run(_ handler: @escaping @isolated(any) @Sendable ([Provider.Endpoint]) async throws -> Void) async throws {
        let _: Never? = try await browse { endpoints in
            try await handler(endpoints)
            return .continue
        }
    }

    /// Browses until `handler`, called with the whole current list of endpoints whenever it
    /// changes, returns `.finish(value)`; then stops browsing and returns the value. Throws
    /// `CancellationError` when the task running it is cancelled, and the error when browsing
    /// fails.
    public final func run<Return>(
        _ handler: @escaping @isolated(any) @Sendable ([Provider.Endpoint]) async throws -> NetworkBrowser<Provider>.RunResult<Return>
    ) async throws -> Return {
        guard let value = try await browse(handler) else { throw CancellationError() }
        return value
    }

    private enum Event: Sendable {
        case results(Set<NWBrowser.Result>)
        case failed(NWError)
    }

    /// Runs a classic browser until `handler` finishes (its value), the task is cancelled
    /// (nil) or browsing fails (thrown).
    private func browse<Return>(
        _ handler: @escaping @isolated(any) @Sendable ([Provider.Endpoint]) async throws -> RunResult<Return>
    ) async throws -> Return? {
        guard let browsing = provider as? any BrowsingProvider else { throw NWError.dns(DNSServiceErrorType(kDNSServiceErr_Unsupported)) }
        let first = shared.withLock { shared -> Bool in
            defer { shared.running = true }
            return !shared.running
        }
        guard first else { throw NWError.posix(.EALREADY) }
        let browser = NWBrowser(for: browsing.descriptor, using: parameters)
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(8))
        let pump = eventPump()
        browser.browseResultsChangedHandler = { results, _ in continuation.yield(.results(results)) }
        browser.stateUpdateHandler = { [weak self] state in
            self?.shared.withLock { $0.state = state }
            pump.enqueue { browser in
                guard let handler = browser.shared.withLock({ $0.stateHandler }) else { return }
                await handler(browser, State(state))
            }
            switch state {
            case .failed(let error): continuation.yield(.failed(error))
            case .cancelled: continuation.finish()
            case .setup, .ready, .waiting: break
            }
        }
        browser.start(queue: ChannelCore.queue)
        defer { browser.cancel() }
        return try await withTaskCancellationHandler {
            for await event in events {
                switch event {
                case .results(let results):
                    guard let endpoints = Self.endpoints(of: browsing, results) else { continue }
                    if case .finish(let value) = try await handler(endpoints) { return value }
                case .failed(let error):
                    throw error
                }
            }
            if Task.isCancelled { throw CancellationError() }
            return nil
        } onCancel: {
            browser.cancel()
        }
    }

    private static func endpoints<Browsing: BrowsingProvider>(of browsing: Browsing, _ results: Set<NWBrowser.Result>) -> [Provider.Endpoint]? {
        browsing.endpoints(results) as? [Provider.Endpoint]
    }

    private func eventPump() -> IsolatedEventPump<NetworkBrowser<Provider>> {
        pump.pump(for: self)
    }
}
