import Foundation
import NetworkCore

/// TLV: messages with a type.
extension NetworkChannel where ApplicationProtocol == TLV {
    /// Sends `content` as one message of `type`; returns once the stack has taken it.
    /// `lastMessage` closes the sending side after it. A type that does not fit the type field
    /// (or is negative) fails with `EINVAL`.
    public nonisolated(nonsending) func send<Content: DataProtocol>(
        _ content: Content, type: Int, lastMessage: Bool = false,
        @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws {
        try await core.sendMessage(Data(messageContent: content), layerMessage: try Self.metadata(type), closesWrite: lastMessage)
    }

    /// Sends a message of `type` without waiting for the stack to take it.
    public func sendIdempotent<Content: DataProtocol>(
        _ content: Content, type: Int, lastMessage: Bool = false,
        @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) {
        // (An invalid type still reaches the framer, which then fails the connection with
        // EINVAL: there is nothing to throw it to here.)
        let metadata = (try? Self.metadata(type)) ?? TLVMetadata(type: UInt64.max)
        core.sendMessageIdempotent(Data(messageContent: content), layerMessage: metadata, closesWrite: lastMessage)
    }

    /// Receives the next message; its type is in the metadata.
    public nonisolated(nonsending) func receive() async throws -> ApplicationProtocol.Message<Data> {
        try await receiveDecoded()
    }

    private static func metadata(_ type: Int) throws -> TLVMetadata {
        guard type >= 0 else { throw NWError.posix(.EINVAL) }
        return TLVMetadata(type: UInt64(type))
    }
}
