extension DNSClass {
    /// What mDNS makes of a class's top bit: in a response's record, "cache flush" (this is the
    /// whole set, drop older copies; RFC 6762 §10.2); in a query's question, "unicast response"
    /// (QU, §5.4).
    package static let mdnsBit: UInt16 = 0x8000

    /// The class itself, without mDNS's top bit.
    package var withoutMDNSBit: DNSClass { DNSClass(rawValue: rawValue & ~Self.mdnsBit) }

    /// Whether mDNS's top bit is set.
    package var hasMDNSBit: Bool { rawValue & Self.mdnsBit != 0 }

    /// The class with mDNS's top bit set.
    package var withMDNSBit: DNSClass { DNSClass(rawValue: rawValue | Self.mdnsBit) }
}
