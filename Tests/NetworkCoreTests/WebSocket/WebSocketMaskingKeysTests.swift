import NIOWebSocket
import Testing

@testable import NetworkCore

@Suite("Core.WebSocketMaskingKeys")
struct WebSocketMaskingKeysTests {
    private func bytes(_ key: WebSocketMaskingKey) -> [UInt8] { [key[0], key[1], key[2], key[3]] }

    @Test func everyKeyIsFreshAcrossSeveralBlocks() {
        var keys = WebSocketMaskingKeys()
        let count = WebSocketMaskingKeys.keysPerBlock * 4 + 3
        let taken = (0..<count).map { _ in bytes(keys.take()) }
        // 32-bit keys from the kernel's generator: a repeat among a few hundred is a ~1e-5
        // chance; a block served twice, or a key handed out twice, repeats dozens.
        #expect(Set(taken).count >= count - 1)
        // The blocks differ (not one block refilled with the same bytes).
        let perBlock = WebSocketMaskingKeys.keysPerBlock
        #expect(taken[0..<perBlock] != taken[perBlock..<2 * perBlock])
    }

    @Test func twoSourcesDoNotShareKeys() {
        var a = WebSocketMaskingKeys()
        var b = WebSocketMaskingKeys()
        let fromA = (0..<16).map { _ in bytes(a.take()) }
        let fromB = (0..<16).map { _ in bytes(b.take()) }
        #expect(Set(fromA).isDisjoint(with: Set(fromB)))
    }
}
