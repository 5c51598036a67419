import NetworkPAC

/// The parser of what a PAC script's `FindProxyForURL` returns (any string the script builds,
/// possibly from network data). The answer is never empty, each choice written back in PAC
/// syntax parses to itself, and for ASCII answers every kind of white space separates alike.
enum PACResultFuzzBody {
    private static let whiteSpace: Set<UInt8> = [UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")]

    static func run(_ bytes: [UInt8]) {
        let choices = PACProxyChoice.parse(String(decoding: bytes, as: UTF8.self))
        if bytes.allSatisfy({ $0 < 0x80 }) {
            let spaced = bytes.map { whiteSpace.contains($0) ? UInt8(ascii: " ") : $0 }
            let again = PACProxyChoice.parse(String(decoding: spaced, as: UTF8.self))
            FuzzFailure.check(again == choices, "tabs, CR or LF separate differently from spaces: \(choices) vs \(again)")
        }
        FuzzFailure.check(!choices.isEmpty, "PAC answer parsed to no choice at all")
        for choice in choices {
            let again = PACProxyChoice.parse(choice.description)
            FuzzFailure.check(again == [choice], "PAC choice \(choice) reads back as \(again)")
        }
    }
}
