import Foundation
import NetworkCore

/// WebSocket: text and binary messages, pings, pongs and the close handshake.
extension NetworkChannel where ApplicationProtocol == WebSocket {
    /// Sends `content` as one binary message.
    public nonisolated(nonsending) func send<Content: DataProtocol>(
        _ content: Content, @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws {
        try await core.sendMessage(Data(messageContent: content), layerMessage: WebSocketMessageInfo.binary)
    }

    /// Sends `content` as one text message (UTF-8).
    public nonisolated(nonsending) func send(
        _ content: String, @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws {
        try await core.sendMessage(Data(content.utf8), layerMessage: WebSocketMessageInfo.text)
    }

    /// Sends a binary message without waiting for the stack to take it.
    public func sendIdempotent<Content: DataProtocol>(
        _ content: Content, @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) {
        core.sendMessageIdempotent(Data(messageContent: content), layerMessage: WebSocketMessageInfo.binary)
    }

    /// Sends a text message without waiting for the stack to take it.
    public func sendIdempotent(
        _ content: String, @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) {
        core.sendMessageIdempotent(Data(content.utf8), layerMessage: WebSocketMessageInfo.text)
    }

    /// Receives the next message (text, binary, or with `autoReplyPing(false)` pings and pongs;
    /// a close message ends the connection, its code in the metadata).
    public nonisolated(nonsending) func receive() async throws -> ApplicationProtocol.Message<Data> {
        try await receiveDecoded()
    }

    /// Sends a ping and returns when its pong arrives (throws if the connection ends first).
    public nonisolated(nonsending) func ping<Content: DataProtocol>(
        _ content: Content? = Data?.none, @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws {
        let pong = OutcomeWaiter()
        try await core.sendMessage(content.map { Data($0) } ?? Data(), layerMessage: WebSocketMessageInfo(kind: .ping) { pong.arrived($0) })
        try await pong.wait(cancelling: core)
    }

    /// Sends an unsolicited pong (a heartbeat the peer does not answer).
    public nonisolated(nonsending) func pong<Content: DataProtocol>(
        _ content: Content? = Data?.none, @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws {
        try await core.sendMessage(content.map { Data($0) } ?? Data(), layerMessage: WebSocketMessageInfo(kind: .pong))
    }

    /// Starts the close handshake with `code` and `reason`; returns once the close message is
    /// sent. The connection ends when the peer answers.
    public nonisolated(nonsending) func close(
        code: NWProtocolWebSocket.CloseCode = .protocolCode(.normalClosure), reason: String? = nil,
        @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws {
        let classic = NWProtocolWebSocket.Metadata(opcode: .close)
        classic.closeCode = code
        let info = classic.engineInfo
        try await core.sendMessage(reason.map { Data($0.utf8) } ?? Data(), layerMessage: info)
    }

    /// Sends one binary message in pieces: `handler` gets a function to call with each piece,
    /// `true` with the last one.
    public nonisolated(nonsending) func startSend<Content: DataProtocol>(
        _ content: Content, @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] },
        handler: ((Content, Bool) async throws -> Void) async throws -> Void
    ) async throws {
        let core = self.core
        try await core.sendMessage(Data(messageContent: content), layerMessage: WebSocketMessageInfo(kind: .binary), isComplete: false)
        try await handler { piece, isComplete in
            try await core.sendMessage(Data(piece), layerMessage: WebSocketMessageInfo(kind: .binary), isComplete: isComplete)
        }
    }

    /// Sends one text message in pieces, as `startSend(_:metadata:handler:)` for bytes.
    public nonisolated(nonsending) func startSend(
        _ content: String, @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] },
        handler: ((String, Bool) async throws -> Void) async throws -> Void
    ) async throws {
        let core = self.core
        try await core.sendMessage(Data(content.utf8), layerMessage: WebSocketMessageInfo(kind: .text), isComplete: false)
        try await handler { piece, isComplete in
            try await core.sendMessage(Data(piece.utf8), layerMessage: WebSocketMessageInfo(kind: .text), isComplete: isComplete)
        }
    }

    /// Receives one message in pieces: `handler` gets a function that receives between
    /// `atLeast` and `atMost` bytes of it (its metadata's `isComplete` marks the last piece).
    public nonisolated(nonsending) func startReceive(
        _ handler: ((Int, Int) async throws -> ApplicationProtocol.Message<Data>) async throws -> Void
    ) async throws {
        let core = self.core
        let webSocket = applicationProtocol
        try await handler { atLeast, atMost in
            let received = try await core.receive(minimum: atLeast, maximum: atMost)
            return try webSocket.message(from: received)
        }
    }
}
