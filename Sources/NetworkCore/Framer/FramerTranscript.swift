import NIOCore

/// Runs a framer host with no connection around it: what the framer delivers and writes is
/// recorded, and input is fed by hand. For checking framers (the built-in ones, and the host's
/// contracts) as values: whole, byte by byte, in any cuts; the fuzz bodies use it too.
package final class FramerTranscript: @unchecked Sendable {
    package let host: FramerHost
    /// The host's link. (Not the transcript itself: the host holds its link strongly, and the
    /// transcript's `deinit` is what finishes the host.)
    private let recorder = FramerRecorder()
    /// Messages delivered, with their framer metadata.
    package var delivered: [FramedMessage] { recorder.delivered }
    /// Bytes written for the layer below, in order, one buffer per write.
    package var written: [ByteBuffer] { recorder.written }
    /// The failure the framer ended in, if any.
    package var failure: FlowError? { recorder.failure }

    /// A started host for `factory` on `eventLoop` (on which every call must come).
    package init(
        _ factory: any HostedFramerFactory, eventLoop: EventLoop, writesDatagrams: Bool = false,
        maximumMessageLength: Int = FramerHost.defaultMaximumMessageLength
    ) {
        host = FramerHost(
            factory: factory, eventLoop: eventLoop, writesDatagrams: writesDatagrams, maximumMessageLength: maximumMessageLength)
        host.link = recorder
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
}
