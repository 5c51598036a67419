/// The 4-bit RCODE of a header (EDNS extended codes are not combined in; nothing here needs them).
package struct DNSResponseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }

    package static let noError = DNSResponseCode(rawValue: 0)
    package static let formatError = DNSResponseCode(rawValue: 1)
    package static let serverFailure = DNSResponseCode(rawValue: 2)
    package static let nameError = DNSResponseCode(rawValue: 3)
    package static let notImplemented = DNSResponseCode(rawValue: 4)
    package static let refused = DNSResponseCode(rawValue: 5)

    package var description: String {
        switch rawValue {
        case 0: "NOERROR"
        case 1: "FORMERR"
        case 2: "SERVFAIL"
        case 3: "NXDOMAIN"
        case 4: "NOTIMP"
        case 5: "REFUSED"
        default: "RCODE\(rawValue)"
        }
    }
}
