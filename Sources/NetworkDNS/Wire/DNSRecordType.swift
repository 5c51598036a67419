/// A resource record TYPE (or QTYPE). An open set: unknown values pass through untouched.
package struct DNSRecordType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt16
    package init(rawValue: UInt16) { self.rawValue = rawValue }

    package static let a = DNSRecordType(rawValue: 1)
    package static let ns = DNSRecordType(rawValue: 2)
    package static let cname = DNSRecordType(rawValue: 5)
    package static let soa = DNSRecordType(rawValue: 6)
    package static let ptr = DNSRecordType(rawValue: 12)
    package static let mx = DNSRecordType(rawValue: 15)
    package static let txt = DNSRecordType(rawValue: 16)
    package static let aaaa = DNSRecordType(rawValue: 28)
    package static let srv = DNSRecordType(rawValue: 33)
    package static let opt = DNSRecordType(rawValue: 41)
    package static let svcb = DNSRecordType(rawValue: 64)
    package static let https = DNSRecordType(rawValue: 65)
    package static let any = DNSRecordType(rawValue: 255)

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
