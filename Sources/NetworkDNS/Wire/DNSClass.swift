/// A resource record CLASS. Only IN matters for the resolver; other values pass through.
package struct DNSClass: RawRepresentable, Hashable, Sendable {
    /// The 16-bit CLASS value.
    package var rawValue: UInt16
    /// Any class value, known or not.
    package init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The Internet class.
    package static let internet = DNSClass(rawValue: 1)
}
