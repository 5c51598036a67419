// Helpers shared by every Swift client: options, JSON result line, clocks, RSS, rlimit, run control.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CBenchShims
import Dispatch
import Synchronization

/// `--key value` options, the same spelling as the C clients use.
public struct Options: Sendable {
    public var scenario: String
    public var host = "127.0.0.1"
    public var port = 19000
    public var nports = 1
    public var conns = 1
    public var duration = 3.0
    public var warmup = 0.5
    public var size = 64
    public var batch = 64
    public var batched = false  // udp: batch { } / write x N + flush; NIO framed: flush once per read
    public var threads = 0  // NIO only: 0 = MultiThreadedEventLoopGroup.singleton
    public var window = 1  // Network bulk: sends outstanding; framed (both): messages in flight
    public var pendingReceive = true  // Network mem only: one receive pending per idle connection
    public var sharedParameters = false  // Network mem and tls-handshake: one NWParameters object for all connections
    public var verifyBlock = false  // Network TLS only: accept the certificate in a verify block instead of peer_authentication_required = false
    public var name: String?
    public var api = "classic"  // "async": Network's 2025 API (NetworkConnection); NIO's NIOAsyncChannel; "loop-task" (NIO, rr): a task per connection on a bare continuation
    public var cert: String?  // Network quic-server: PEM certificate chain
    public var key: String?  // Network quic-server: PEM private key
    public var mode = "listener"  // Network udp-recv: "listener" (NWListener) or "connection" (one NWConnection to the sender)
    public var peerPort: Int?  // Network udp-recv --mode connection: the sender's port (default: port + 1)

    public init(scenario: String) { self.scenario = scenario }

    public static func parse(_ args: [String]) -> Options {
        guard args.count >= 2 else {
            fail("usage: \(args.first ?? "bench") rr|bulk|udp|udp-recv|framed|ws|ws-server|mem|tls-bulk|tls-handshake|quic-server|quic-bulk|quic-handshake [--cert PEM --key PEM --mode listener|connection --peer-port Q --host H --port P --nports K --conns N --duration S --warmup S --size B --batch G --batched 0|1 --threads T --window W --name NAME]")
        }
        var o = Options(scenario: args[1])
        var i = 2
        while i + 1 < args.count {
            let k = args[i], v = args[i + 1]
            switch k {
            case "--host": o.host = v
            case "--port": o.port = Int(v)!
            case "--nports": o.nports = max(1, Int(v)!)
            case "--conns": o.conns = Int(v)!
            case "--duration": o.duration = Double(v)!
            case "--warmup": o.warmup = Double(v)!
            case "--size": o.size = Int(v)!
            case "--batch": o.batch = Int(v)!
            case "--batched": o.batched = v == "1" || v == "true"
            case "--threads": o.threads = Int(v)!
            case "--window": o.window = max(1, Int(v)!)
            case "--pending-receive": o.pendingReceive = v == "1" || v == "true"
            case "--shared-parameters": o.sharedParameters = v == "1" || v == "true"
            case "--verify-block": o.verifyBlock = v == "1" || v == "true"
            case "--name": o.name = v
            case "--api": o.api = v
            case "--cert": o.cert = v
            case "--key": o.key = v
            case "--mode": o.mode = v
            case "--peer-port":
                guard let p = Int(v), (1...65535).contains(p) else { fail("bad --peer-port \(v)") }
                o.peerPort = p
            default: fail("unknown option \(k)")
            }
            i += 2
        }
        return o
    }
}

public func fail(_ message: String) -> Never {
    var line = message + "\n"
    line.withUTF8 { p in _ = write(2, p.baseAddress, p.count) }
    exit(1)
}

/// Writes `message` to stderr as is.
public func fputsStderr(_ message: String) {
    var line = message
    line.withUTF8 { p in _ = write(2, p.baseAddress, p.count) }
}

/// Monotonic seconds.
@inline(__always)
public func nowSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

public func cpuTimes() -> (user: Double, sys: Double) {
    var ru = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &ru)
    return (
        Double(ru.ru_utime.tv_sec) + Double(ru.ru_utime.tv_usec) * 1e-6,
        Double(ru.ru_stime.tv_sec) + Double(ru.ru_stime.tv_usec) * 1e-6
    )
}

/// Resident set size of this process in bytes (/proc/self/statm).
public func residentBytes() -> Int {
    let fd = open("/proc/self/statm", O_RDONLY)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var buf = [UInt8](repeating: 0, count: 256)
    let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, 256) }
    guard n > 0 else { return 0 }
    let fields = String(decoding: buf[0..<n], as: UTF8.self).split(separator: " ")
    guard fields.count >= 2, let resident = Int(fields[1]) else { return 0 }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// File descriptors this process has open (entries of /proc/self/fd, less the one reading it).
public func openFileDescriptorCount() -> Int {
    guard let dir = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(dir) }
    var n = 0
    while let entry = readdir(dir) {
        let isDot = withUnsafeBytes(of: entry.pointee.d_name) { $0.first == UInt8(ascii: ".") }
        if !isDot { n += 1 }
    }
    return n - 1
}

/// Bytes handed out by malloc (glibc mallinfo2: all arenas + mmapped chunks).
public func heapInUseBytes() -> Int { Int(cbench_heap_in_use()) }

public func raiseNoFileLimit() {
    var rl = rlimit()
    #if os(Linux)
    let res = Int32(RLIMIT_NOFILE.rawValue)
    #else
    let res = RLIMIT_NOFILE
    #endif
    if getrlimit(__rlimit_resource_t(UInt32(res)), &rl) == 0 {
        rl.rlim_cur = rl.rlim_max
        _ = setrlimit(__rlimit_resource_t(UInt32(res)), &rl)
    }
}

public func sleepSeconds(_ s: Double) {
    if s > 0 { usleep(UInt32(s * 1_000_000)) }
}

/// One result line, the same shape as the C programs print.
public func emit(
    impl: String, scenario: String, value: Double, unit: String, ops: Double, seconds: Double,
    cpuUser: Double = 0, cpuSys: Double = 0, extra: [String: Double] = [:]
) {
    var line = "{\"impl\":\"\(impl)\",\"scenario\":\"\(scenario)\",\"value\":\(fmt(value)),\"unit\":\"\(unit)\","
    line += "\"ops\":\(fmt(ops, 0)),\"seconds\":\(fmt(seconds, 6)),\"cpu_user\":\(fmt(cpuUser)),\"cpu_sys\":\(fmt(cpuSys))"
    for (k, v) in extra.sorted(by: { $0.key < $1.key }) { line += ",\"\(k)\":\(fmt(v))" }
    line += "}"
    line += "\n"
    line.withUTF8 { p in _ = write(1, p.baseAddress, p.count) }
}

private func fmt(_ v: Double, _ digits: Int = 3) -> String {
    if !v.isFinite { return "0" }
    var p = 1.0
    for _ in 0..<digits { p *= 10 }
    let r = (v * p).rounded() / p
    if digits == 0 { return String(Int64(r)) }
    return String(r)
}

/// Shared by the connections of one measurement: counts completed operations, tells the connections
/// when to stop (a stop flag set by the timer, or an operation budget), and wakes the waiting thread
/// when the last connection has stopped.
public final class RunControl: Sendable {
    private let _ops = Atomic<Int>(0)
    private let _stop = Atomic<Bool>(false)
    private let _budget: Int
    private let _active = Atomic<Int>(0)
    private let _done = DispatchSemaphore(value: 0)
    private let _errors = Atomic<Int>(0)

    public init(activeConnections: Int, budget: Int = .max) {
        self._budget = budget
        self._active.store(activeConnections, ordering: .relaxed)
    }

    public var ops: Int { self._ops.load(ordering: .relaxed) }
    public var errors: Int { self._errors.load(ordering: .relaxed) }
    /// True once `stop()` was called or the operation budget is used up.
    public var shouldStop: Bool { self._stop.load(ordering: .relaxed) || self._ops.load(ordering: .relaxed) >= self._budget }

    /// Count `n` operations; returns whether the caller should go on.
    @inline(__always)
    public func completed(_ n: Int = 1) -> Bool {
        let total = self._ops.add(n, ordering: .relaxed).newValue
        return !self._stop.load(ordering: .relaxed) && total < self._budget
    }

    public func error() { self._errors.add(1, ordering: .relaxed) }

    public func stop() { self._stop.store(true, ordering: .relaxed) }

    /// A connection calls this once, when it has stopped issuing operations.
    public func connectionStopped() {
        if self._active.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { self._done.signal() }
    }

    /// Waits for every connection to stop; false on timeout.
    public func waitForAll(timeout seconds: Double) -> Bool {
        self._done.wait(timeout: .now() + .milliseconds(Int(seconds * 1000))) == .success
    }
}

public struct TimedResult: Sendable {
    public var ops: Int
    public var seconds: Double
    public var cpuUser: Double
    public var cpuSys: Double
    /// Operations over the whole run, warm-up and stop included.
    public var totalOps: Int
    public var perSecond: Double { Double(self.ops) / self.seconds }
}

/// The closed-loop measurement used by the round-trip and UDP scenarios: `start` sets the connections
/// going; after `warmup` the counters are read, after `duration` more they are read again, then the
/// connections are told to stop and are waited for.
public func measureTimed(control: RunControl, warmup: Double, duration: Double, start: () -> Void) -> TimedResult {
    start()
    sleepSeconds(warmup)
    let ops0 = control.ops, t0 = nowSeconds(), c0 = cpuTimes()
    sleepSeconds(duration)
    let ops1 = control.ops, t1 = nowSeconds(), c1 = cpuTimes()
    control.stop()
    if !control.waitForAll(timeout: 10) { fail("connections did not stop within 10 s") }
    return TimedResult(ops: ops1 - ops0, seconds: t1 - t0, cpuUser: c1.user - c0.user, cpuSys: c1.sys - c0.sys, totalOps: control.ops)
}

/// A tiny one-shot latch for waiting on callbacks from other threads.
public final class Latch: Sendable {
    private let sem = DispatchSemaphore(value: 0)
    private let remaining: Atomic<Int>
    public init(count: Int) { self.remaining = Atomic(count) }
    public func countDown() {
        if self.remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { self.sem.signal() }
    }
    public func wait(timeout seconds: Double) -> Bool {
        self.sem.wait(timeout: .now() + .milliseconds(Int(seconds * 1000))) == .success
    }
}

/// A value shared between threads behind a lock.
public final class Locked<Value: Sendable>: Sendable {
    private let m: Mutex<Value>
    public init(_ v: Value) { self.m = Mutex(v) }
    public func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { self.m.withLock { body(&$0) } }
    public var value: Value { self.m.withLock { $0 } }
}

public func exitProcess(_ code: Int32) -> Never { exit(code) }

/// Runs `body` in a task and blocks this (non-async) thread until it is done; exits on an error
/// or after two minutes.
public func blockOn<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = Latch(count: 1)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.countDown()
    }
    if !done.wait(timeout: 120) { fail("an async step did not finish within 120 s") }
    switch result.value! {
    case .success(let value): return value
    case .failure(let error): fail("\(error)")
    }
}
