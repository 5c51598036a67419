import Dispatch
import Foundation
import Network
import PeerSupport
import Testing

/// What one receive completion delivered.
struct Received: Sendable, CustomStringConvertible {
    let data: Data?
    let context: NWConnection.ContentContext?
    let isComplete: Bool
    let error: NWError?

    var bytes: [UInt8] { data.map { Array($0) } ?? [] }
    var text: String { String(decoding: bytes, as: UTF8.self) }

    var description: String {
        "Received(\(data.map { "\($0.count) bytes" } ?? "nil"), isComplete: \(isComplete), "
            + "isFinal: \(context.map { "\($0.isFinal)" } ?? "no context"), error: \(error.map { "\($0)" } ?? "nil"))"
    }
}

/// One callback a connection delivered, in delivery order.
enum Event: Equatable, Sendable, CustomStringConvertible {
    case state(NWConnection.State)
    case receive(Int, NWError?)
    case send(Int, NWError?)

    var description: String {
        switch self {
        case .state(let state): return "state(\(state))"
        case .receive(let index, let error): return "receive#\(index)(\(error.map { "\($0)" } ?? "ok"))"
        case .send(let index, let error): return "send#\(index)(\(error.map { "\($0)" } ?? "ok"))"
        }
    }

    var isCancelled: Bool { self == .state(.cancelled) }
    var isSend: Bool { if case .send = self { return true } else { return false } }
}

extension NWConnection.State {
    var isWaiting: Bool { if case .waiting = self { return true } else { return false } }
    var isFailed: Bool { if case .failed = self { return true } else { return false } }
    var isTerminal: Bool { isFailed || self == .cancelled }
}

/// A connection under test together with a record of the states it reported.
final class Probe: Sendable {
    let connection: NWConnection
    let queue: DispatchQueue
    let states = Recorder<NWConnection.State>()

    init(_ connection: NWConnection, label: String = "behaviour.probe") {
        self.connection = connection
        self.queue = DispatchQueue(label: label)
        let states = self.states
        connection.stateUpdateHandler = { states.append($0) }
    }

    convenience init(port: UInt16, parameters: NWParameters = .tcp, host: NWEndpoint.Host = "127.0.0.1") {
        self.init(NWConnection(host: host, port: NWEndpoint.Port(rawValue: port)!, using: parameters))
    }

    func start() { connection.start(queue: queue) }

    /// Waits until `state` has been reported.
    func wait(for state: NWConnection.State, timeout: Double = 10) async throws {
        try await states.wait("state \(state)", timeout: timeout) { $0.contains(state) }
    }

    /// Waits until a state satisfying `predicate` has been reported and returns it.
    @discardableResult
    func wait(
        _ what: String, timeout: Double = 10, where predicate: @escaping @Sendable (NWConnection.State) -> Bool
    ) async throws -> NWConnection.State {
        let seen = try await states.wait(what, timeout: timeout) { $0.contains(where: predicate) }
        return seen.first(where: predicate)!
    }

    /// Starts the connection and waits for `ready`.
    func startAndWaitReady(timeout: Double = 10) async throws {
        start()
        try await wait("ready", timeout: timeout) { $0 == .ready || $0.isTerminal || $0.isWaiting }
        try #require(states.values.contains(.ready), "connection did not become ready: \(states.values)")
    }

    /// Cancels and waits for `cancelled`.
    func cancelAndWait(timeout: Double = 10) async throws {
        connection.cancel()
        try await wait(for: .cancelled, timeout: timeout)
    }

    func receive(minimum: Int, maximum: Int, timeout: Double = 10) async throws -> Received {
        try await NWConnection.receiveOne(on: connection, minimum: minimum, maximum: maximum, timeout: timeout)
    }

    func receiveMessage(timeout: Double = 10) async throws -> Received {
        let recorder = Recorder<Received>()
        connection.receiveMessage { data, context, isComplete, error in
            recorder.append(Received(data: data, context: context, isComplete: isComplete, error: error))
        }
        return try await recorder.wait(count: 1, "receiveMessage", timeout: timeout)[0]
    }

    /// Sends and waits for the send completion; returns its error.
    @discardableResult
    func send(
        _ bytes: [UInt8]?, context: NWConnection.ContentContext = .defaultMessage, isComplete: Bool = true,
        timeout: Double = 10
    ) async throws -> NWError? {
        let recorder = Recorder<NWError?>()
        connection.send(
            content: bytes.map { Data($0) }, contentContext: context, isComplete: isComplete,
            completion: .contentProcessed { recorder.append($0) })
        return try await recorder.wait(count: 1, "send completion", timeout: timeout)[0]
    }
}

extension NWConnection {
    /// Issues one receive and waits for its completion.
    static func receiveOne(
        on connection: NWConnection, minimum: Int, maximum: Int, timeout: Double = 10
    ) async throws -> Received {
        let recorder = Recorder<Received>()
        connection.receive(minimumIncompleteLength: minimum, maximumLength: maximum) { data, context, isComplete, error in
            recorder.append(Received(data: data, context: context, isComplete: isComplete, error: error))
        }
        return try await recorder.wait(count: 1, "receive(min: \(minimum), max: \(maximum))", timeout: timeout)[0]
    }
}

/// A started `NWListener` with its state and the connections it handed over.
final class ListenerProbe: Sendable {
    let listener: NWListener
    let queue = DispatchQueue(label: "behaviour.listener")
    let states = Recorder<NWListener.State>()
    let connections = Recorder<NWConnection>()

    init(_ listener: NWListener, onConnection: (@Sendable (NWConnection) -> Void)? = nil) {
        self.listener = listener
        let states = self.states
        let connections = self.connections
        listener.stateUpdateHandler = { states.append($0) }
        listener.newConnectionHandler = { connection in
            connections.append(connection)
            onConnection?(connection)
        }
    }

    convenience init(
        parameters: NWParameters = .tcp, port: NWEndpoint.Port = .any,
        onConnection: (@Sendable (NWConnection) -> Void)? = nil
    ) throws {
        self.init(try NWListener(using: parameters, on: port), onConnection: onConnection)
    }

    /// Starts the listener, waits for `ready` and returns its port.
    @discardableResult
    func startAndWaitReady(timeout: Double = 10) async throws -> UInt16 {
        listener.start(queue: queue)
        let seen = try await states.wait("listener ready", timeout: timeout) { states in
            states.contains { if case .ready = $0 { return true }; if case .failed = $0 { return true }; return $0 == .cancelled }
        }
        try #require(seen.contains(.ready), "listener did not become ready: \(seen)")
        return try #require(listener.port?.rawValue)
    }

    func cancelAndWait(timeout: Double = 10) async throws {
        listener.cancel()
        try await states.wait("listener cancelled", timeout: timeout) { $0.contains(.cancelled) }
    }
}

/// A deterministic byte pattern, so reordering or loss shows up in comparisons.
func pattern(_ count: Int, seed: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) &+ seed &+ ($0 >> 8)) }
}

/// Patterned sends made on a connection, each with a completion that records its index (and
/// its error, if any), in the order the completions came.
struct SentChunks {
    let expected: [UInt8]
    let order = Recorder<Int>()
    let errors = Recorder<NWError>()

    /// Sends `count` chunks of `size` bytes on `connection`: one byte pattern, each chunk stamped
    /// with its index in its first four bytes, so loss or reordering shows (and megabytes of it
    /// stay cheap to build in a debug build).
    init(on connection: NWConnection, count: Int, size: Int) {
        let base = pattern(size)
        var expected = [UInt8](repeating: 0, count: count * size)
        let (order, errors) = (self.order, self.errors)
        for index in 0..<count {
            var bytes = base
            for shift in 0..<min(4, size) { bytes[shift] = UInt8(truncatingIfNeeded: index >> (8 * shift)) }
            expected.withUnsafeMutableBytes { all in
                bytes.withUnsafeBytes { all.baseAddress!.advanced(by: index * size).copyMemory(from: $0.baseAddress!, byteCount: size) }
            }
            connection.send(content: Data(bytes), completion: .contentProcessed { error in
                if let error { errors.append(error) }
                order.append(index)
            })
        }
        self.expected = expected
    }

    /// Whether `received` is exactly what was sent (compared with memcmp: fast in debug builds).
    func matches(_ received: some ContiguousBytes) -> Bool {
        received.withUnsafeBytes { a in
            expected.withUnsafeBytes { b in a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) }
        }
    }
}

/// `events` with the extra rounds of a wait folded away: a waiting connection tries again when
/// its path changes, and other suites add and remove links on this machine meanwhile, so
/// `waiting(e), preparing, waiting(e)` may show up where one `waiting(e)` is meant.
func foldingWaitingRetries(_ events: [Event]) -> [Event] {
    var folded: [Event] = []
    for event in events {
        if case .state(.waiting) = event, folded.count >= 2, folded[folded.count - 1] == .state(.preparing),
            folded[folded.count - 2] == event
        {
            folded.removeLast()
            continue
        }
        folded.append(event)
    }
    return folded
}

/// The same for a list of states.
func foldingWaitingRetries(_ states: [NWConnection.State]) -> [NWConnection.State] {
    foldingWaitingRetries(states.map(Event.state)).compactMap { if case .state(let state) = $0 { return state } else { return nil } }
}
