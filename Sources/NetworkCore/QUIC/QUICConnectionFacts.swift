/// What a ready QUIC connection (or stream) knows about its connection, for the QUIC metadata:
/// a reference, so a flow's ready facts grow by one pointer, and only QUIC flows have one.
package final class QUICConnectionFacts: Sendable {
    /// The stream the flow carries (nil for a group's own flow).
    package let stream: Int64?
    /// The peer's idle timeout, in milliseconds (0: none).
    package let remoteIdleTimeout: Int
    /// Streams of each kind this side may open, as the peer allowed at the start.
    package let remoteMaxStreamsBidirectional: Int
    package let remoteMaxStreamsUnidirectional: Int
    /// Streams of each kind the peer may open, as this side announced.
    package let localMaxStreamsBidirectional: Int
    package let localMaxStreamsUnidirectional: Int
    /// The largest DATAGRAM frame the peer accepts (0: it takes none).
    package let maxDatagramFrameSize: Int
    /// The largest datagram payload one send may carry now (0: the peer takes none).
    package var maxDatagramPayload: Int { datagramLimit.current }
    private let datagramLimit: QUICDatagramLimit

    init(
        stream: Int64?, remoteIdleTimeout: Int, remoteMaxStreams: (Int, Int), localMaxStreams: (Int, Int), maxDatagramFrameSize: Int,
        datagramLimit: QUICDatagramLimit
    ) {
        self.stream = stream
        self.remoteIdleTimeout = remoteIdleTimeout
        (remoteMaxStreamsBidirectional, remoteMaxStreamsUnidirectional) = remoteMaxStreams
        (localMaxStreamsBidirectional, localMaxStreamsUnidirectional) = localMaxStreams
        self.maxDatagramFrameSize = maxDatagramFrameSize
        self.datagramLimit = datagramLimit
    }
}
