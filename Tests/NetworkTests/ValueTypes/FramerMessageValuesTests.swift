import Testing

@testable import Network

@Suite("ValueTypes.FramerMessageValues")
struct FramerMessageValuesTests {
    @Test("one key, then more: every value is found by its key, whichever place holds it")
    func valuesByKey() {
        var values = FramerMessageValues()
        #expect(values["type"] == nil)
        values["type"] = UInt32(7)
        values["length"] = 64
        values["name"] = "ping"
        #expect(values["type"] as? UInt32 == 7)
        #expect(values["length"] as? Int == 64)
        #expect(values["name"] as? String == "ping")
        #expect(values["other"] == nil)
        values["type"] = UInt32(8)
        values["length"] = 65
        #expect(values["type"] as? UInt32 == 8)
        #expect(values["length"] as? Int == 65)
    }

    @Test("nil removes a key, and a key set again after a removal is found once, with its last value")
    func removalAndReuse() {
        var values = FramerMessageValues()
        values["a"] = 1
        values["b"] = 2
        values["a"] = nil
        #expect(values["a"] == nil)
        #expect(values["b"] as? Int == 2)
        // "b" already lives among the others: setting it must update it there, not shadow it.
        values["b"] = 3
        #expect(values["b"] as? Int == 3)
        values["b"] = nil
        #expect(values["b"] == nil)
        values["c"] = 4
        values["a"] = 5
        #expect(values["c"] as? Int == 4)
        #expect(values["a"] as? Int == 5)
        values["c"] = nil
        values["a"] = nil
        #expect(values["a"] == nil && values["c"] == nil)
        values["removed-never-set"] = nil
        #expect(values["removed-never-set"] == nil)
    }

    @Test("a message's subscript keeps values per message")
    func messageSubscript() {
        let first = NWProtocolFramer.Message(definition: GameFramer.definition)
        let second = NWProtocolFramer.Message(definition: GameFramer.definition)
        first["type"] = UInt32(1)
        second["type"] = UInt32(2)
        #expect(first["type"] as? UInt32 == 1)
        #expect(second["type"] as? UInt32 == 2)
        first["type"] = nil
        #expect(first["type"] == nil && second["type"] as? UInt32 == 2)
    }
}
