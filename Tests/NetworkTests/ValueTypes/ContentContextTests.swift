import Foundation
import Testing

@testable import Network

@Suite("ValueTypes.ContentContext")
struct ContentContextTests {
    @Test("a received message's context (one protocol's metadata, kept without an array) answers as one made with a list")
    func receivedContextAnswersLikeAListed() {
        let message = NWProtocolWebSocket.Metadata(opcode: .binary)
        let received = NWConnection.ContentContext(identifier: "ws", received: message)
        let listed = NWConnection.ContentContext(identifier: "ws", metadata: [message])
        for context in [received, listed] {
            #expect(context.protocolMetadata.count == 1)
            #expect(context.protocolMetadata.first === message)
            #expect(context.protocolMetadata(definition: NWProtocolWebSocket.definition) === message)
            #expect(context.protocolMetadata(definition: NWProtocolTCP.definition) == nil)
            #expect(!context.isFinal && context.antecedent == nil && context.relativePriority == 0.5)
        }
        let several = NWConnection.ContentContext(identifier: "udp", metadata: [NWProtocolUDP.Metadata(), NWProtocolIP.Metadata()])
        #expect(several.protocolMetadata.count == 2)
        #expect(several.protocolMetadata(definition: NWProtocolIP.definition) is NWProtocolIP.Metadata)
        #expect(NWConnection.ContentContext(identifier: "none", metadata: nil).protocolMetadata.isEmpty)
    }
}
