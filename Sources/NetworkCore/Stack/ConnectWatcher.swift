#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import NetworkSync

/// Waits for our own nonblocking TCP connects to finish (`PendingConnect`) on one thread of its
/// own, so that how fast a connect is noticed does not depend on how busy the application keeps
/// Dispatch's or the event loops' threads. The thread sleeps in `poll` over the sockets being
/// connected (a few hundred at most: connects in flight) and a wake-up pipe, and only hands
/// each outcome on.
final class ConnectWatcher: Sendable {
    static let shared = ConnectWatcher()

    private struct Registry {
        var nextTag: UInt64 = 1
        /// Descriptor → its registration's tag and what to call.
        var watched: [Int32: (tag: UInt64, done: @Sendable () -> Void)] = [:]
    }

    private let registry = Lock(Registry())
    /// Read end and write end of the pipe that makes the thread look at the registry again.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        }
        (wakeRead, wakeWrite) = (ends[0], ends[1])
        guard wakeRead >= 0 else { return }
        let thread = Thread { [self] in
            while true { self.pollOnce() }
        }
        thread.name = "network.connect"
        thread.start()
    }

    /// Calls `done` once, on the watcher's thread, when `fd` becomes writable (its connect
    /// finished, one way or the other). False when nothing can be watched (no thread).
    func watch(_ fd: Int32, done: @escaping @Sendable () -> Void) -> Bool {
        guard wakeRead >= 0 else { return false }
        registry.withLock { registry in
            registry.watched[fd] = (registry.nextTag, done)
            registry.nextTag += 1
        }
        wake()
        return true
    }

    /// Stops watching `fd`; true when `done` was not called and now never will be.
    @discardableResult
    func unwatch(_ fd: Int32) -> Bool {
        let removed = registry.withLock { $0.watched.removeValue(forKey: fd) != nil }
        // (So the thread stops polling a descriptor that is about to be closed.)
        if removed { wake() }
        return removed
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func pollOnce() {
        let snapshot = registry.withLock { $0.watched.map { (fd: $0.key, tag: $0.value.tag) } }
        var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        fds += snapshot.map { pollfd(fd: $0.fd, events: Int16(POLLOUT), revents: 0) }
        guard poll(&fds, nfds_t(fds.count), -1) > 0 else { return }
        if fds[0].revents != 0 {
            var sink = [UInt8](repeating: 0, count: 256)
            while read(wakeRead, &sink, sink.count) > 0 {}
        }
        for (index, entry) in snapshot.enumerated() where fds[index + 1].revents != 0 {
            let done = registry.withLock { registry -> (@Sendable () -> Void)? in
                // Only the registration polled: a number closed and reused since is not its.
                guard let current = registry.watched[entry.fd], current.tag == entry.tag else { return nil }
                registry.watched[entry.fd] = nil
                return current.done
            }
            done?()
        }
    }
}
