import NIOCore

/// Runs a framer host with no connection around it: what the framer delivers and writes is
/// recorded, and input is fed by hand. For checking framers (the built-in ones, and the host's
/// contracts) as values: whole, byte by byte, in any cuts; the fuzz bodies use it too.
package final class FramerTranscript: FramerHostLink, @unchecked Sendable {
    package let host: FramerHost
    /// Messages delivered, with their framer metadata.
    package private(set) var delivered: [FramedMessage] = []
    /// Bytes written for the layer below, in order, one buffer per write.
    package private(set) var written: [ByteBuffer] = []
    /// The failure the framer ended in, if any.
    package private(set) var failure: FlowError?

    /// A started host for `factory` on `eventLoop` (on which every call must come).
    package init(
        _ factory: any HostedFramerFactory, eventLoop: EventLoop, writesDatagrams: Bool = false,
        maximumMessageLength: Int = FramerHost.defaultMaximumMessageLength
    ) {
        host = FramerHost(
            factory: factory, eventLoop: eventLoop, writesDatagrams: writesDatagrams, maximumMessageLength: maximumMessageLength)
        host.link = self
        _ = host.start()
    }

    deinit {
        host.finish()
    }

    /// Feeds bytes from below.
    package func feed(_ bytes: [UInt8]) {
        host.received(ByteBuffer(bytes: bytes))
    }

    /// Sends one message through the framer; returns what it wrote for it.
    package func send(_ bytes: [UInt8], metadata: (any AnyObject & Sendable)? = nil) -> [ByteBuffer] {
        let before = written.count
        host.send(FramedMessage(bytes: ByteBuffer(bytes: bytes), metadata: metadata), promise: nil)
        return Array(written[before...])
    }

    package func framerHost(_ host: FramerHost, deliver message: FramedMessage) {
        delivered.append(message)
    }

    package func framerHost(_ host: FramerHost, write bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        written.append(bytes)
        promise?.succeed()
    }

    package func framerHostFlush(_ host: FramerHost) {}
    package func framerHostWantsRead(_ host: FramerHost) {}

    package func framerHost(_ host: FramerHost, failed error: FlowError) {
        failure = error
    }
}
