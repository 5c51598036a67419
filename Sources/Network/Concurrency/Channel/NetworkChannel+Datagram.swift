import Foundation

/// Datagram protocols (UDP): each send one datagram, each receive one datagram.
extension NetworkChannel where ApplicationProtocol: DatagramProtocol {
    /// Receives the next datagram.
    public nonisolated(nonsending) func receive() async throws -> ApplicationProtocol.Message<Data> {
        try await receiveData()
    }

    /// Sends `content` as one datagram; returns once the stack has taken it (`EMSGSIZE` if it
    /// is larger than a datagram can be). An ``NWProtocolIP/Metadata`` among `metadata` marks
    /// this datagram alone: its ECN codepoint, and its service class when it names one.
    public nonisolated(nonsending) func send<Content: DataProtocol>(
        _ content: Content, @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws {
        try await core.sendMessage(Data(messageContent: content), layerMessage: nil, marking: DatagramMarking(builder()))
    }
}

extension NetworkChannel where ApplicationProtocol: MessageProtocol {
    /// Receives one message whose content is bytes.
    nonisolated(nonsending) func receiveData() async throws -> ApplicationProtocol.Message<Data> {
        let message = try await receiveMessage()
        // (Every protocol with this receive has `Data` content.)
        guard let content = message.content as? Data else { throw NWError.posix(.EPROTONOSUPPORT) }
        return (content, message.metadata)
    }
}
