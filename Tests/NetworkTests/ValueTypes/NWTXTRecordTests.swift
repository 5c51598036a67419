import Foundation
import Network
import Testing

/// `NWTXTRecord` and `NWListener.Service`'s TXT record, used the way code written for Apple
/// platforms uses them (dictionary literals, subscripts, entries, iteration as key/value pairs).
@Suite("NWTXTRecord")
struct NWTXTRecordTests {
    @Test("a dictionary's pairs become string entries, readable by subscript, entry and iteration")
    func fromDictionary() {
        let record = NWTXTRecord(["path": "/", "txtvers": "1", "Model": "Linux"])
        #expect(record.count == 3)
        #expect(record["path"] == "/")
        #expect(record["model"] == "Linux", "keys match in any letter case")
        #expect(record.getEntry(for: "txtvers") == .string("1"))
        #expect(record.getEntry(for: "missing") == nil)
        #expect(record.dictionary == ["path": "/", "txtvers": "1", "Model": "Linux"])
        var seen: [String: NWTXTRecord.Entry] = [:]
        record.forEach { (key: String, value: NWTXTRecord.Entry) in seen[key] = value }
        #expect(seen == ["path": .string("/"), "txtvers": .string("1"), "Model": .string("Linux")])
        #expect(record.map(\.key) == ["Model", "path", "txtvers"], "a dictionary's pairs go in the order of their keys")
        #expect(NWTXTRecord().isEmpty)
    }

    @Test("entries: none, empty, string and data, set and read back, through the wire format too")
    func entries() {
        var record = NWTXTRecord()
        do {
            let done = record.setEntry(.none, for: "flag")
            #expect(done)
        }
        do {
            let done = record.setEntry(.empty, for: "blank")
            #expect(done)
        }
        do {
            let done = record.setEntry(.string("v"), for: "s")
            #expect(done)
        }
        do {
            let done = record.setEntry(.data(Data([0xFF, 0x00])), for: "bin")
            #expect(done)
        }
        do {
            let done = record.setEntry(.string("x"), for: "bad=key")
            #expect(!done)
        }
        do {
            let done = record.setEntry(.data(Data(count: 300)), for: "big")
            #expect(!done)
        }
        let decoded = NWTXTRecord(record.data)
        #expect(decoded == record)
        #expect(decoded.getEntry(for: "flag") == NWTXTRecord.Entry.none)
        #expect(decoded.getEntry(for: "blank") == .empty)
        #expect(decoded.getEntry(for: "s") == .string("v"), "UTF-8 values read back as strings")
        #expect(decoded.getEntry(for: "bin") == .data(Data([0xFF, 0x00])))
        #expect(decoded["flag"] == nil && decoded["blank"] == "" && decoded["bin"] == nil)
        #expect(decoded.dictionary == ["flag": "", "blank": "", "s": "v"])
        #expect(record.data == Data([4] + Array("flag".utf8) + [6] + Array("blank=".utf8) + [3] + Array("s=v".utf8)
            + [6] + Array("bin=".utf8) + [0xFF, 0x00]))
    }

    @Test("Entry(Data?) and .data map nil, empty and bytes both ways")
    func entryData() {
        #expect(NWTXTRecord.Entry(nil) == NWTXTRecord.Entry.none)
        #expect(NWTXTRecord.Entry(Data()) == .empty)
        #expect(NWTXTRecord.Entry(Data([1])) == .data(Data([1])))
        #expect(NWTXTRecord.Entry.none.data == nil)
        #expect(NWTXTRecord.Entry.empty.data == Data())
        #expect(NWTXTRecord.Entry.string("é").data == Data("é".utf8))
    }

    @Test("subscript set replaces in any letter case, nil removes; removeEntry says whether there was one")
    func subscriptAndRemove() {
        var record = NWTXTRecord(["Key": "1"])
        record["KEY"] = "2"
        #expect(record.count == 1 && record["key"] == "2")
        record["key"] = nil
        #expect(record.isEmpty)
        do {
            let done = record.removeEntry(key: "key")
            #expect(!done)
        }
        record["a"] = "1"
        do {
            let done = record.removeEntry(key: "A")
            #expect(done)
        }
    }

    @Test("an empty record's data is one zero byte; equality ignores order and key case")
    func wireAndEquality() {
        #expect(NWTXTRecord().data == Data([0]))
        #expect(NWTXTRecord(Data([0])) == NWTXTRecord())
        var a = NWTXTRecord()
        a["x"] = "1"
        a["y"] = "2"
        var b = NWTXTRecord()
        b["Y"] = "2"
        b["X"] = "1"
        #expect(a == b)
        b["x"] = "3"
        #expect(a != b)
    }

    @Test("a listener's service keeps the TXT record as an object and as wire data")
    func service() {
        let record = NWTXTRecord(["txtvers": "1"])
        var service = NWListener.Service(name: "Printer", type: "_ipp._tcp", txtRecord: record)
        #expect(service.txtRecordObject == record)
        #expect(service.txtRecord == record.data)
        service.txtRecordObject = NWTXTRecord(["txtvers": "2"])
        #expect(service.txtRecordObject?["txtvers"] == "2")
        let fromData = NWListener.Service(type: "_ipp._tcp", txtRecord: record.data)
        #expect(fromData.txtRecordObject == record, "wire data reads as a record")
        #expect(NWListener.Service(type: "_ipp._tcp").txtRecordObject == nil)
    }
}
