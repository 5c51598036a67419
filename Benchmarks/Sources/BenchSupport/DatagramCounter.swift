// What the UDP receivers of udp-offload.sh share: a counter the receive callbacks bump, and the
// measurement window the main thread reads it over.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// Datagrams and bytes received so far, and a latch for the first one. Bumped from one thread at
/// a time (a receiver's queue or event loop), read by the main thread.
public final class DatagramCounter: Sendable {
    private let _datagrams = Atomic<Int>(0)
    private let _bytes = Atomic<Int>(0)
    private let _errors = Atomic<Int>(0)
    private let _first = DispatchSemaphore(value: 0)
    private let _seenFirst = Atomic<Bool>(false)

    public init() {}

    public var datagrams: Int { self._datagrams.load(ordering: .relaxed) }
    public var bytes: Int { self._bytes.load(ordering: .relaxed) }
    public var errors: Int { self._errors.load(ordering: .relaxed) }

    @inline(__always)
    public func received(bytes: Int) {
        self._datagrams.add(1, ordering: .relaxed)
        self._bytes.add(bytes, ordering: .relaxed)
        // (One load per datagram; the exchange and the signal happen once.)
        if !self._seenFirst.load(ordering: .relaxed), !self._seenFirst.exchange(true, ordering: .acquiringAndReleasing) {
            self._first.signal()
        }
    }

    public func error() { self._errors.add(1, ordering: .relaxed) }

    /// Waits for the first datagram; false on timeout.
    public func waitForFirst(timeout seconds: Double) -> Bool {
        self._first.wait(timeout: .now() + .milliseconds(Int(seconds * 1000))) == .success
    }
}

public struct ReceiveResult: Sendable {
    public var datagrams: Int
    public var bytes: Int
    public var seconds: Double
    public var cpuUser: Double
    public var cpuSys: Double
    /// Datagrams over the whole run, warm-up included.
    public var totalDatagrams: Int
    public var perSecond: Double { Double(self.datagrams) / self.seconds }
}

/// The receivers' window, the same as the C receiver's: the clock starts at the first datagram
/// (so a sender that starts late costs nothing), then `warmup`, then `duration` measured. Fails
/// when no datagram comes within `firstTimeout` seconds.
public func measureReceiving(_ counter: DatagramCounter, warmup: Double, duration: Double, firstTimeout: Double = 10) -> ReceiveResult {
    if !counter.waitForFirst(timeout: firstTimeout) { fail("no datagram within \(firstTimeout) s") }
    sleepSeconds(warmup)
    let d0 = counter.datagrams, b0 = counter.bytes, t0 = nowSeconds(), c0 = cpuTimes()
    sleepSeconds(duration)
    let d1 = counter.datagrams, b1 = counter.bytes, t1 = nowSeconds(), c1 = cpuTimes()
    return ReceiveResult(
        datagrams: d1 - d0, bytes: b1 - b0, seconds: t1 - t0, cpuUser: c1.user - c0.user, cpuSys: c1.sys - c0.sys,
        totalDatagrams: d1)
}

/// Tells the harness that the receiver is bound (one line on stdout, written at once).
public func announceReady() {
    var line = "ready\n"
    line.withUTF8 { p in _ = write(1, p.baseAddress, p.count) }
}
