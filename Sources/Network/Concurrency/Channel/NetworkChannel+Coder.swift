import Foundation

/// Coder: Codable values as messages.
extension NetworkChannel {
    /// Encodes `content` and sends it as one message; returns once the stack has taken it.
    /// An encoding failure is thrown as the encoder's error, and nothing is sent.
    public nonisolated(nonsending) func send<Sending, Receiving, CoderType>(
        _ content: Sending, @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws where ApplicationProtocol == Coder<Sending, Receiving, CoderType> {
        let data = try applicationProtocol.coder.makeEncoder().encode(content)
        try await core.sendMessage(data, layerMessage: nil)
    }

    /// Receives the next message and decodes it; bytes that do not decode are thrown as the
    /// decoder's error (the connection stays usable: the next message is whole).
    public nonisolated(nonsending) func receive<Sending, Receiving, CoderType>() async throws -> ApplicationProtocol.Message<Receiving>
    where ApplicationProtocol == Coder<Sending, Receiving, CoderType> {
        let message = try await receiveMessage()
        return (message.content, message.metadata)
    }
}
