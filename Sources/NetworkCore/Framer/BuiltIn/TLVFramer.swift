#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// The built-in type-length-value framer (and, without a type, the Coder's length prefix), run
/// on the framer host like any application framer. Each message is a header (`TLVLayout`) and
/// its body; the type travels up and down as `TLVMetadata`.
///
/// - A received length over the host's bound (64 MiB) fails the connection with `EMSGSIZE` at
///   once, nothing buffered (the host's `deliverInputNoCopy` refuses it).
/// - A message whose type or length does not fit its field fails the connection (`EINVAL` for
///   the type, `EMSGSIZE` for the length) rather than go out cut.
/// - Over datagrams the host makes each message's header and body one datagram.
package final class TLVFramer: HostedFramer {
    private let layout: TLVLayout

    package init(layout: TLVLayout) {
        self.layout = layout
    }

    package func start(_ host: FramerHost) -> Bool { true }

    package func handleInput(_ host: FramerHost) -> Int {
        let headerSize = layout.headerSize
        let layout = self.layout
        while true {
            var header: (type: UInt64, length: UInt64)?
            let parsed = host.parseInput(minimum: headerSize, maximum: headerSize) { buffer, _ in
                guard let buffer, let decoded = layout.decodeHeader(UnsafeRawBufferPointer(buffer)) else { return 0 }
                header = decoded
                return headerSize
            }
            guard parsed, let header else { return headerSize }
            let metadata = layout.hasType ? TLVMetadata(type: header.type) : nil
            // (A length over the bound, up to 2^64 - 1, is refused by the host before any
            // buffering.)
            let length = Int(clamping: header.length)
            if !host.deliverInputNoCopy(length: length, message: metadata, isComplete: true) { return 0 }
        }
    }

    package func handleOutput(_ host: FramerHost, message: (any AnyObject & Sendable)?, length: Int, isComplete: Bool) {
        let type = (message as? TLVMetadata)?.type ?? 0
        guard let header = layout.encodeHeader(type: type, length: UInt64(length)) else {
            let typeFits = layout.encodeHeader(type: type, length: 0) != nil
            host.markFailed(.posix(typeFits ? EMSGSIZE : EINVAL))
            return
        }
        host.writeOutput(header)
        do {
            try host.writeOutputNoCopy(length: length)
        } catch {
            host.markFailed(error)
        }
    }

    package func wakeup(_ host: FramerHost) {}
    package func stop(_ host: FramerHost) -> Bool { true }
    package func cleanup(_ host: FramerHost) {}
}
