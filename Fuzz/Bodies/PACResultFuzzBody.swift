import NetworkPAC

/// The parser of what a PAC script's `FindProxyForURL` returns (any string the script builds,
/// possibly from network data). The answer is never empty, and each choice written back in PAC
/// syntax parses to itself.
enum PACResultFuzzBody {
    static func run(_ bytes: [UInt8]) {
        let choices = PACProxyChoice.parse(String(decoding: bytes, as: UTF8.self))
        FuzzFailure.check(!choices.isEmpty, "PAC answer parsed to no choice at all")
        for choice in choices {
            let again = PACProxyChoice.parse(choice.description)
            FuzzFailure.check(again == [choice], "PAC choice \(choice) reads back as \(again)")
        }
    }
}
