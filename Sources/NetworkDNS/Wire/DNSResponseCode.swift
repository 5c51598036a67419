/// The 4-bit RCODE of a header (EDNS extended codes are not combined in; nothing here needs them).
package struct DNSResponseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 4-bit value.
    package var rawValue: UInt8
    /// Keeps the low four bits.
    package init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }

    /// Success (possibly NODATA).
    package static let noError = DNSResponseCode(rawValue: 0)
    /// The server could not parse the query (old servers say this to EDNS).
    package static let formatError = DNSResponseCode(rawValue: 1)
    /// The server could not get an answer.
    package static let serverFailure = DNSResponseCode(rawValue: 2)
    /// NXDOMAIN: the name does not exist.
    package static let nameError = DNSResponseCode(rawValue: 3)
    /// The server does not do this kind of query.
    package static let notImplemented = DNSResponseCode(rawValue: 4)
    /// The server will not answer us.
    package static let refused = DNSResponseCode(rawValue: 5)

    /// The mnemonic used in logs.
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
