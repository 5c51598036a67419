import NIOCore

/// The link of a `FramerTranscript`'s host: keeps what the framer delivered and wrote, and how
/// it failed, for the transcript to show.
final class FramerRecorder: FramerHostLink {
    private(set) var delivered: [FramedMessage] = []
    private(set) var written: [ByteBuffer] = []
    private(set) var failure: FlowError?

    func framerHost(_ host: FramerHost, deliver message: FramedMessage) {
        delivered.append(message)
    }

    func framerHost(_ host: FramerHost, write bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        written.append(bytes)
        promise?.succeed()
    }

    func framerHostFlush(_ host: FramerHost) {}
    func framerHostWantsRead(_ host: FramerHost) {}

    func framerHost(_ host: FramerHost, failed error: FlowError) {
        failure = error
    }
}
