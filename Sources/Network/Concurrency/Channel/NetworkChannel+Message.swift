import Foundation

/// Message protocols (TLV, Coder, WebSocket, Framer, UDP): whole messages, one per receive.
extension NetworkChannel where ApplicationProtocol: MessageProtocol {
    /// The messages that arrive, in order; ends when the peer ends the connection, throws the
    /// connection's error. Iterating starts the connection. Cancelling the iterating task
    /// cancels the connection.
    public var messages: AsyncThrowingStream<ApplicationProtocol.Message<ApplicationProtocol.ContentType>, any Error> {
        let core = self.core
        let decoding = applicationProtocol as? any ChannelMessageDecoding
        return AsyncThrowingStream {
            let received = try await core.receive(minimum: 1, maximum: Int.max)
            if received.isEndOfStream { return nil }
            return try Self.decode(received, with: decoding)
        }
    }

    /// Receives one message and decodes it with the stack's top protocol.
    nonisolated(nonsending) func receiveMessage() async throws -> ApplicationProtocol.Message<ApplicationProtocol.ContentType> {
        let received = try await core.receive(minimum: 1, maximum: Int.max)
        if received.isEndOfStream { throw NWError.posix(.ENODATA) }
        return try Self.decode(received, with: applicationProtocol as? any ChannelMessageDecoding)
    }

    private static func decode(
        _ received: ChannelCore.Received, with decoding: (any ChannelMessageDecoding)?
    ) throws -> ApplicationProtocol.Message<ApplicationProtocol.ContentType> {
        guard let decoding else { throw NWError.posix(.EPROTONOSUPPORT) }
        return try decodeOpened(decoding, received)
    }

    private static func decodeOpened<Decoding: ChannelMessageDecoding>(
        _ decoding: Decoding, _ received: ChannelCore.Received
    ) throws -> ApplicationProtocol.Message<ApplicationProtocol.ContentType> {
        // (`Decoding` is `ApplicationProtocol`: the casts only restore what the existential hid.)
        let message = try decoding.message(from: received)
        guard let content = message.content as? ApplicationProtocol.ContentType,
            let metadata = message.metadata as? ApplicationProtocol.Metadata
        else {
            throw NWError.posix(.EPROTONOSUPPORT)
        }
        return (content, metadata)
    }
}

/// Protocols whose decoding is known where the channel's type is (Framer, TLV, WebSocket).
extension NetworkChannel where ApplicationProtocol: ChannelMessageDecoding {
    /// Receives one message and decodes it with the top protocol, called directly: no casts
    /// to and from an existential per message (they showed in a framed message's profile).
    nonisolated(nonsending) func receiveDecoded() async throws -> ApplicationProtocol.Message<ApplicationProtocol.ContentType> {
        let received = try await core.receive(minimum: 1, maximum: Int.max)
        if received.isEndOfStream { throw NWError.posix(.ENODATA) }
        return try applicationProtocol.message(from: received)
    }
}
