/// A resource record TYPE (or QTYPE). An open set: unknown values pass through untouched.
package struct DNSRecordType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 16-bit TYPE value.
    package var rawValue: UInt16
    /// Any type value, known or not.
    package init(rawValue: UInt16) { self.rawValue = rawValue }

    /// IPv4 address (RFC 1035).
    package static let a = DNSRecordType(rawValue: 1)
    /// Authoritative name server.
    package static let ns = DNSRecordType(rawValue: 2)
    /// Alias to a canonical name.
    package static let cname = DNSRecordType(rawValue: 5)
    /// Start of authority; gives the negative-caching TTL.
    package static let soa = DNSRecordType(rawValue: 6)
    /// Pointer, used for reverse lookups.
    package static let ptr = DNSRecordType(rawValue: 12)
    /// Mail exchanger (kept raw).
    package static let mx = DNSRecordType(rawValue: 15)
    /// Text strings (DNS-SD metadata among others).
    package static let txt = DNSRecordType(rawValue: 16)
    /// IPv6 address (RFC 3596).
    package static let aaaa = DNSRecordType(rawValue: 28)
    /// Service location (RFC 2782).
    package static let srv = DNSRecordType(rawValue: 33)
    /// EDNS(0) pseudo-record (RFC 6891).
    package static let opt = DNSRecordType(rawValue: 41)
    /// General service binding (RFC 9460).
    package static let svcb = DNSRecordType(rawValue: 64)
    /// Service binding for HTTPS (RFC 9460).
    package static let https = DNSRecordType(rawValue: 65)
    /// QTYPE * (only ever asked, never stored).
    package static let any = DNSRecordType(rawValue: 255)

    /// The mnemonic, or TYPEnnn for unknown types (RFC 3597 style).
    package var description: String {
        switch self {
        case .a: "A"
        case .ns: "NS"
        case .cname: "CNAME"
        case .soa: "SOA"
        case .ptr: "PTR"
        case .mx: "MX"
        case .txt: "TXT"
        case .aaaa: "AAAA"
        case .srv: "SRV"
        case .opt: "OPT"
        case .svcb: "SVCB"
        case .https: "HTTPS"
        case .any: "ANY"
        default: "TYPE\(rawValue)"
        }
    }
}
