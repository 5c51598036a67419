#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NetworkSystem
import NetworkSync

/// A TCP connect we run ourselves (see `StreamSocketConnect`): the socket is watched for
/// writability (the end of a nonblocking connect) by the `ConnectWatcher`, and the connected
/// descriptor is then handed to NIO (`ClientBootstrap.withConnectedSocket`). Cancelling closes
/// the socket at once, so an abandoned attempt to a silent address holds nothing.
final class PendingConnect: Sendable {
    /// The connected descriptor (ownership passes to whoever takes it), or the connect's error.
    let descriptor: EventLoopFuture<Int32>
    private let promise: EventLoopPromise<Int32>
    /// The socket while its connect is watched; nil once the outcome is decided.
    private let watched = Lock<Int32?>(nil)

    /// Starts connecting to `address`; `settings` must succeed, `bestEffort` may fail.
    init(
        to address: SocketAddress, local: SocketAddress?, multipath: Bool,
        settings: [SocketOptionSetting], bestEffort: [SocketOptionSetting], eventLoop: EventLoop
    ) {
        promise = eventLoop.makePromise(of: Int32.self)
        descriptor = promise.futureResult
        let started: StreamSocketConnect.Started
        do {
            started = try address.withSockAddr { remote, remoteLength in
                try Self.withOptionalSockAddr(local) { local in
                    try StreamSocketConnect.start(
                        family: Int32(remote.pointee.sa_family),
                        protocol: multipath ? LinuxConstants.IPPROTO_MPTCP : 0,
                        settings: settings, bestEffort: bestEffort, local: local,
                        remote: UnsafeRawBufferPointer(start: remote, count: remoteLength))
                }
            }
        } catch let error as SystemError {
            promise.fail(FlowError.posix(error.errno))
            return
        } catch {
            promise.fail(error)
            return
        }
        let fd = started.descriptor
        guard started.inProgress else {
            promise.succeed(fd)
            return
        }
        watched.withLock { $0 = fd }
        let promise = self.promise
        let watchedSocket = ConnectWatcher.shared.watch(fd) { [self] in
            // Ours only if no cancel took the socket first.
            guard watched.withLock({ socket in defer { socket = nil }; return socket }) != nil else { return }
            let outcome = StreamSocketConnect.outcome(descriptor: fd)
            if outcome == 0 {
                promise.succeed(fd)
            } else {
                close(fd)
                promise.fail(FlowError.posix(outcome))
            }
        }
        if !watchedSocket {
            watched.withLock { $0 = nil }
            close(fd)
            promise.fail(FlowError.posix(EMFILE))
        }
    }

    /// Abandons the connect: the socket is closed and the future fails with `ECANCELED` (a
    /// connect that already finished is left to its future's owner).
    func cancel() {
        guard let fd = watched.withLock({ socket in defer { socket = nil }; return socket }) else { return }
        // Unwatched first: the watcher must not take a later socket with this number for it.
        ConnectWatcher.shared.unwatch(fd)
        close(fd)
        promise.fail(FlowError.posix(ECANCELED))
    }

    private static func withOptionalSockAddr<T>(
        _ address: SocketAddress?, _ body: (UnsafeRawBufferPointer?) throws -> T
    ) throws -> T {
        guard let address else { return try body(nil) }
        return try address.withSockAddr { pointer, length in
            try body(UnsafeRawBufferPointer(start: pointer, count: length))
        }
    }
}
