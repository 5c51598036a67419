import NIOCore

/// What a QUIC connection (`QUICConnectionBinding`) tells its owner, in the order it happened.
package enum QUICEvent {
    /// The handshake is done and the peer verified: streams carry data both ways now.
    case established(TLSSessionFacts)
    /// The handshake is done and the settings' verify block must judge the peer's chain;
    /// answer with `QUICConnectionBinding.verified(_:)`.
    case verificationNeeded(chain: [[UInt8]])
    /// The peer opened a stream.
    case streamOpened(id: Int64)
    /// Bytes of a stream, in order; `isFinal` at the stream's end (FIN).
    case streamData(id: Int64, bytes: ByteBuffer, isFinal: Bool)
    /// The peer reset a stream with an application error code.
    case streamReset(id: Int64, applicationError: UInt64)
    /// A stream is gone on both sides; the code when one was given (a reset or STOP_SENDING).
    case streamClosed(id: Int64, applicationError: UInt64?)
    /// A QUIC datagram (RFC 9221) arrived.
    case datagram(ByteBuffer)
    /// More streams of this kind may be opened (the peer raised the limit).
    case streamsAvailable(bidirectional: Bool)
    /// The connection is over: nil when it ended in order (either side closed without an
    /// error), else why.
    case closed(FlowError?)
}
