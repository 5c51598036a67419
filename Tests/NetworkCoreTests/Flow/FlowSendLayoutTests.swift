import Testing

@testable import NetworkCore

/// The size of what every send, operation and outbox entry carries. A send is moved several
/// times on its way to the socket and an idle connection's pending receive waits in an array of
/// operations as large as a send, so the size counts; and a field of an opaque existential type
/// (a completion stored inline, say) makes them all address-only, copied through value
/// witnesses at every hand-on (28 retains of one UDP send's completion, counted).
@Suite("Core.FlowSendLayout")
struct FlowSendLayoutTests {
    @Test("a send, an operation and an outbox entry stay small")
    func sizes() {
        print("FlowSendLayout: FlowSend \(MemoryLayout<FlowSend>.size) B, FlowOperation \(MemoryLayout<FlowOperation>.size) B, DatagramOutbox.Entry \(MemoryLayout<DatagramOutbox.Entry>.size) B")
        #expect(MemoryLayout<FlowSend>.size <= 48)
        #expect(MemoryLayout<FlowOperation>.size <= 48)
        #expect(MemoryLayout<DatagramOutbox.Entry>.size <= 56)
    }
}
