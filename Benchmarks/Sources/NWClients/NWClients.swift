// The scenarios written against our `Network` module with Apple's classic API (NWConnection,
// send(content:completion: .contentProcessed), receive(minimumIncompleteLength:maximumLength:),
// batch { }), the way an app written for Apple platforms would use it. Every driver talks to the
// C server (C/server.c). All callbacks run on one serial DispatchQueue.
import BenchSupport
import Dispatch
import Foundation
import Network

public func tcpParameters() -> NWParameters {
    let tcp = NWProtocolTCP.Options()
    tcp.noDelay = true
    return NWParameters(tls: nil, tcp: tcp)
}

func endpoint(_ host: String, _ port: Int) -> (NWEndpoint.Host, NWEndpoint.Port) {
    (NWEndpoint.Host(host), NWEndpoint.Port(rawValue: UInt16(port))!)
}

/// Starts the connections on `queue` and waits until all are `.ready` (fails on `.failed`/`.waiting`).
/// At most `inflight` establishments run at once.
public func startAndWaitReady(_ connections: [NWConnection], queue: DispatchQueue, inflight: Int = 256, timeout: Double = 120) {
    let slots = DispatchSemaphore(value: inflight)
    let latch = Latch(count: connections.count)
    let failures = Locked<[String]>([])
    for connection in connections {
        slots.wait()
        let once = Locked(false)
        connection.stateUpdateHandler = { state in
            switch state {
            case .ready:
                if once.withLock({ let was = $0; $0 = true; return was }) { return }
                slots.signal(); latch.countDown()
            case .failed(let error), .waiting(let error):
                if once.withLock({ let was = $0; $0 = true; return was }) { return }
                failures.withLock { $0.append("\(error)") }
                slots.signal(); latch.countDown()
            default: break
            }
        }
        connection.start(queue: queue)
    }
    if !latch.wait(timeout: timeout) { fail("connections did not become ready within \(timeout) s") }
    let f = failures.value
    if !f.isEmpty { fail("\(f.count) connections failed, first: \(f[0])") }
}

// MARK: - Round trips

/// N connections to the echo server, each with one `size`-byte request in flight: send, then
/// receive(minimumIncompleteLength: size, maximumLength: size), and from its completion the next.
public final class NWRoundTripClient: Sendable {
    public let connections: [NWConnection]
    let queue: DispatchQueue
    let request: Data
    let size: Int

    public init(host: String, port: Int, nports: Int, conns: Int, size: Int) {
        self.queue = DispatchQueue(label: "bench.rr")
        self.size = size
        self.request = Data(repeating: UInt8(ascii: "x"), count: size)
        self.connections = (0..<conns).map { i in
            let (h, p) = endpoint(host, port + i % nports)
            return NWConnection(host: h, port: p, using: tcpParameters())
        }
        startAndWaitReady(self.connections, queue: self.queue)
    }

    public func start(_ control: RunControl) {
        for connection in self.connections {
            let sent: NWConnection.SendCompletion = .contentProcessed { error in
                if error != nil { control.error() }
            }
            self.queue.async { self.roundTrip(connection, control, sent) }
        }
    }

    private func roundTrip(_ connection: NWConnection, _ control: RunControl, _ sent: NWConnection.SendCompletion) {
        connection.send(content: self.request, completion: sent)
        connection.receive(minimumIncompleteLength: self.size, maximumLength: self.size) { data, _, _, error in
            guard error == nil, let data, data.count == self.size else {
                control.error()
                control.connectionStopped()
                return
            }
            if control.completed() {
                self.roundTrip(connection, control, sent)
            } else {
                control.connectionStopped()
            }
        }
    }

    /// Blocking: at least `roundTrips` round trips over all connections.
    public func run(roundTrips: Int) {
        let control = RunControl(activeConnections: self.connections.count, budget: roundTrips)
        self.start(control)
        if !control.waitForAll(timeout: 60) { fail("round trips did not finish") }
    }

    public func close() {
        for connection in self.connections { connection.cancel() }
    }
}

// MARK: - Bulk

public struct NWBulkResult: Sendable {
    public var bytes: UInt64
    public var seconds: Double
    public var cpuUser: Double
    public var cpuSys: Double
}

private final class BulkState: @unchecked Sendable {  // touched only on the connection's queue
    var inflight = 0
    var finished = false
    var sent: UInt64 = 0
    var error: NWError?
}

/// One connection to the sink. Sends `chunkSize`-byte Data, the next one from the `.contentProcessed`
/// completion of the previous (`window` sends outstanding), until the duration is over; then a
/// final message (FIN) and a receive of the sink's 8-byte count. `endMarker` (the TLS sink): end
/// with one 0x00 byte instead of the final message.
public func nwBulk(
    host: String, port: Int, chunkSize: Int, duration: Double, window: Int = 1,
    parameters: NWParameters = tcpParameters(), endMarker: Bool = false
) -> NWBulkResult {
    let queue = DispatchQueue(label: "bench.bulk")
    let (h, p) = endpoint(host, port)
    let connection = NWConnection(host: h, port: p, using: parameters)
    startAndWaitReady([connection], queue: queue)
    let chunk = Data(repeating: UInt8(ascii: "b"), count: chunkSize)
    let state = BulkState()
    let result = Locked<UInt64?>(nil)
    let done = Latch(count: 1)
    let c0 = cpuTimes(), t0 = nowSeconds()
    let deadline = t0 + duration

    @Sendable func finish() {
        // The receive for the sink's count is issued before the final message: issued after it,
        // it can lose the race with the sink's reply + FIN (see README.md, "Known issues").
        connection.receive(minimumIncompleteLength: 8, maximumLength: 8) { data, _, _, error in
            if let data, data.count == 8 {
                let n = data.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                result.withLock { $0 = UInt64(littleEndian: n) }
            } else {
                FileHandle.standardError.write("bulk: no count from sink (\(String(describing: error)))\n".data(using: .utf8)!)
            }
            done.countDown()
        }
        if endMarker {
            connection.send(content: Data([0]), completion: .contentProcessed { _ in })
        } else {
            connection.send(content: nil, contentContext: .finalMessage, isComplete: true, completion: .contentProcessed { _ in })
        }
    }

    @Sendable func sendOne() {
        state.inflight += 1
        state.sent += UInt64(chunk.count)
        connection.send(content: chunk, completion: .contentProcessed { error in
            state.inflight -= 1
            if let error { state.error = error }
            if state.finished { return }
            if error != nil || nowSeconds() >= deadline {
                if state.inflight == 0 { state.finished = true; finish() }
                return
            }
            sendOne()
        })
    }

    queue.async {
        for _ in 0..<max(1, window) { sendOne() }
    }
    if !done.wait(timeout: duration + 60) { fail("bulk did not finish") }
    let t1 = nowSeconds(), c1 = cpuTimes()
    connection.cancel()
    if let error = queue.sync(execute: { state.error }) { fail("bulk send failed: \(error)") }
    return NWBulkResult(bytes: result.value ?? 0, seconds: t1 - t0, cpuUser: c1.user - c0.user, cpuSys: c1.sys - c0.sys)
}

// MARK: - UDP

/// A UDP NWConnection to the sink. Sends groups of `group` datagrams, each with `send(content:
/// completion: .contentProcessed)`; `batched` wraps a group in `connection.batch { }`. The next group
/// starts from the completion of the last send of the previous one.
public final class NWDatagramClient: Sendable {
    public let connection: NWConnection
    let queue = DispatchQueue(label: "bench.udp")
    let datagram: Data
    let group: Int
    let batched: Bool

    public init(host: String, port: Int, size: Int, group: Int, batched: Bool) {
        let (h, p) = endpoint(host, port)
        self.connection = NWConnection(host: h, port: p, using: .udp)
        self.datagram = Data(repeating: UInt8(ascii: "u"), count: size)
        self.group = group
        self.batched = batched
        startAndWaitReady([self.connection], queue: self.queue)
    }

    public func start(_ control: RunControl) {
        let group = self.group
        let ignore: NWConnection.SendCompletion = .contentProcessed { error in
            if error != nil { control.error() }
        }
        let last = Locked<NWConnection.SendCompletion?>(nil)
        let lastCompletion: NWConnection.SendCompletion = .contentProcessed { error in
            if error != nil { control.error() } else { _ = control.completed(group) }
            self.pump(control, ignore, last.value!)
        }
        last.withLock { $0 = lastCompletion }
        self.queue.async { self.pump(control, ignore, lastCompletion) }
    }

    private func pump(_ control: RunControl, _ ignore: NWConnection.SendCompletion, _ last: NWConnection.SendCompletion) {
        if control.shouldStop {
            control.connectionStopped()
            return
        }
        let body = {
            for i in 0..<self.group {
                self.connection.send(content: self.datagram, completion: i == self.group - 1 ? last : ignore)
            }
        }
        if self.batched { self.connection.batch(body) } else { body() }
    }

    /// Blocking: at least `datagrams` datagrams.
    public func run(datagrams: Int) {
        let control = RunControl(activeConnections: 1, budget: datagrams)
        self.start(control)
        if !control.waitForAll(timeout: 60) { fail("datagram pump did not stop") }
    }

    public func close() { self.connection.cancel() }
}

// MARK: - Idle connections

/// Opens `count` connections (at most 256 establishing at once) on one queue, spread over `nports`
/// echo ports; each then has one receive pending, as an app waiting for data would.
public func nwOpenIdleConnections(
    host: String, port: Int, nports: Int, count: Int, queue: DispatchQueue,
    pendingReceive: Bool = true, sharedParameters: Bool = false
) -> [NWConnection] {
    let shared = tcpParameters()
    let connections = (0..<count).map { i in
        let (h, p) = endpoint(host, port + i % nports)
        return NWConnection(host: h, port: p, using: sharedParameters ? shared : tcpParameters())
    }
    startAndWaitReady(connections, queue: queue)
    if pendingReceive {
        for connection in connections {
            connection.receive(minimumIncompleteLength: 1, maximumLength: 65536) { _, _, _, _ in }
        }
    }
    return connections
}
