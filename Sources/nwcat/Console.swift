import Dispatch
import Foundation
import Network

/// Where nwcat writes: data to standard output, diagnostics to standard error.
enum Console {
    /// Writes received bytes to standard output, unbuffered.
    static func output(_ data: Data) {
        FileHandle.standardOutput.write(data)
    }

    /// One diagnostic line on standard error, prefixed with "nwcat: ".
    static func log(_ message: String) {
        FileHandle.standardError.write(Data("nwcat: \(message)\n".utf8))
    }

    static func describe(_ state: NWConnection.State) -> String {
        switch state {
        case .setup: return "setup"
        case .preparing: return "preparing"
        case .ready: return "ready"
        case .waiting(let error): return "waiting (\(error.debugDescription))"
        case .failed(let error): return "failed (\(error.debugDescription))"
        case .cancelled: return "cancelled"
        }
    }

    static func describe(_ state: NWListener.State) -> String {
        switch state {
        case .setup: return "setup"
        case .ready: return "ready"
        case .waiting(let error): return "waiting (\(error.debugDescription))"
        case .failed(let error): return "failed (\(error.debugDescription))"
        case .cancelled: return "cancelled"
        }
    }
}

/// Reads standard input on its own thread and hands each chunk to `deliver`, which must call
/// its completion once the chunk has been taken (so a slow network slows the reading: no
/// unbounded buffering). `deliver(nil, …)` means end of input.
final class StandardInputPump: @unchecked Sendable {
    private let deliver: @Sendable (Data?, _ done: @escaping @Sendable () -> Void) -> Void
    private let chunkSize: Int

    init(chunkSize: Int = 64 * 1024, deliver: @escaping @Sendable (Data?, _ done: @escaping @Sendable () -> Void) -> Void) {
        self.chunkSize = chunkSize
        self.deliver = deliver
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "nwcat-stdin"
        thread.start()
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        let taken = DispatchSemaphore(value: 0)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                deliver(nil) { taken.signal() }
                taken.wait()
                return
            }
            deliver(Data(buffer[0..<n])) { taken.signal() }
            taken.wait()
        }
    }
}

/// Blocks the main thread until `finish(_:)` is called, then yields the exit code.
final class ExitLatch: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var code: Int32?

    /// The first call wins; later calls are ignored.
    func finish(_ code: Int32) {
        lock.lock()
        defer { lock.unlock() }
        guard self.code == nil else { return }
        self.code = code
        semaphore.signal()
    }

    func wait() -> Int32 {
        semaphore.wait()
        lock.lock()
        defer { lock.unlock() }
        return code ?? 0
    }
}

/// Calls `handler` on `queue` at SIGINT/SIGTERM instead of dying.
func onTerminationSignals(queue: DispatchQueue, _ handler: @escaping @Sendable () -> Void) -> [DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { sig in
        signal(sig, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
        source.setEventHandler(handler: handler)
        source.resume()
        return source
    }
}

/// A port given on the command line: a number or a service name ("http").
func parsePort(_ text: String) -> NWEndpoint.Port? {
    NWEndpoint.Port(text)
}
