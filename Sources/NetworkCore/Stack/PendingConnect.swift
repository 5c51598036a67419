#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import NIOCore
import NetworkSystem
import Synchronization

/// A TCP connect we run ourselves (see `StreamSocketConnect`): the socket is watched for
/// writability (the end of a nonblocking connect) by a dispatch source, and the connected
/// descriptor is then handed to NIO (`ClientBootstrap.withConnectedSocket`). Cancelling closes
/// the socket at once, so an abandoned attempt to a silent address holds nothing.
final class PendingConnect: @unchecked Sendable {
    /// The connected descriptor (ownership passes to whoever takes it), or the connect's error.
    let descriptor: EventLoopFuture<Int32>
    private let promise: EventLoopPromise<Int32>
    /// Set once, in `init`, before the source is activated; read by `cancel`.
    private var source: (any DispatchSourceWrite)?
    private let cancelled = Atomic<Bool>(false)

    /// One queue watches every connect in progress; its handlers only read `SO_ERROR` and hand on.
    private static let queue = DispatchQueue(label: "network.connect")

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
        guard started.inProgress else {
            promise.succeed(started.descriptor)
            return
        }
        let fd = started.descriptor
        let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: Self.queue)
        let promise = self.promise
        source.setEventHandler { source.cancel() }
        // The descriptor is closed or handed on only once the source let go of it.
        source.setCancelHandler { [self] in
            if cancelled.load(ordering: .acquiring) {
                close(fd)
                promise.fail(FlowError.posix(ECANCELED))
                return
            }
            let outcome = StreamSocketConnect.outcome(descriptor: fd)
            if outcome == 0 {
                promise.succeed(fd)
            } else {
                close(fd)
                promise.fail(FlowError.posix(outcome))
            }
        }
        self.source = source
        source.activate()
    }

    /// Abandons the connect: the socket is closed and the future fails with `ECANCELED` (a
    /// connect that already finished is left to its future's owner).
    func cancel() {
        cancelled.store(true, ordering: .releasing)
        source?.cancel()
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
