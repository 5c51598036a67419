import Foundation

/// Framer: messages through a classic framer.
extension NetworkChannel {
    /// Sends `content` as one message of the framer, with the framer's message `metadata` (its
    /// values reach the framer's `handleOutput`); `lastMessage` closes the sending side after it.
    public nonisolated(nonsending) func send<T>(
        _ content: Data, lastMessage: Bool = false, metadata: NWProtocolFramer.Message? = nil,
        @ProtocolMetadataBuilder other builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws where ApplicationProtocol == Framer<T>, T: FramerProtocol {
        try await core.sendMessage(content, layerMessage: metadata, closesWrite: lastMessage)
    }

    /// Receives the next message the framer delivers, with its framer message.
    public nonisolated(nonsending) func receive<T>() async throws -> ApplicationProtocol.Message<Data>
    where ApplicationProtocol == Framer<T>, T: FramerProtocol {
        try await receiveDecoded()
    }
}
