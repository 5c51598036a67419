/// The fixed 12-octet header minus the section counts, which `DNSMessage` derives from its
/// arrays so they can never disagree with the content.
package struct DNSHeader: Hashable, Sendable {
    /// Matches a response to its query; random per query (RFC 5452).
    package var id: UInt16
    /// QR: set in responses.
    package var isResponse: Bool
    /// 0 for a standard query; other values are passed through.
    package var opcode: UInt8
    /// AA.
    package var isAuthoritative: Bool
    /// TC: the answer did not fit; ask again over TCP.
    package var isTruncated: Bool
    /// RD.
    package var recursionDesired: Bool
    /// RA.
    package var recursionAvailable: Bool
    /// AD (RFC 4035).
    package var authenticData: Bool
    /// CD (RFC 4035).
    package var checkingDisabled: Bool
    /// RCODE: NOERROR, NXDOMAIN, SERVFAIL, …
    package var responseCode: DNSResponseCode

    /// A header with query defaults (RD set, everything else clear).
    package init(
        id: UInt16 = 0, isResponse: Bool = false, opcode: UInt8 = 0, isAuthoritative: Bool = false,
        isTruncated: Bool = false, recursionDesired: Bool = true, recursionAvailable: Bool = false,
        authenticData: Bool = false, checkingDisabled: Bool = false, responseCode: DNSResponseCode = .noError
    ) {
        self.id = id
        self.isResponse = isResponse
        self.opcode = opcode & 0x0F
        self.isAuthoritative = isAuthoritative
        self.isTruncated = isTruncated
        self.recursionDesired = recursionDesired
        self.recursionAvailable = recursionAvailable
        self.authenticData = authenticData
        self.checkingDisabled = checkingDisabled
        self.responseCode = responseCode
    }

    /// The second 16-bit word of the header.
    package var flags: UInt16 {
        var value: UInt16 = 0
        if isResponse { value |= 0x8000 }
        value |= UInt16(opcode & 0x0F) << 11
        if isAuthoritative { value |= 0x0400 }
        if isTruncated { value |= 0x0200 }
        if recursionDesired { value |= 0x0100 }
        if recursionAvailable { value |= 0x0080 }
        if authenticData { value |= 0x0020 }
        if checkingDisabled { value |= 0x0010 }
        value |= UInt16(responseCode.rawValue)
        return value
    }

    /// Splits a flags word read from the wire (the Z bit is dropped).
    package init(id: UInt16, flags: UInt16) {
        self.init(
            id: id, isResponse: flags & 0x8000 != 0, opcode: UInt8((flags >> 11) & 0x0F),
            isAuthoritative: flags & 0x0400 != 0, isTruncated: flags & 0x0200 != 0,
            recursionDesired: flags & 0x0100 != 0, recursionAvailable: flags & 0x0080 != 0,
            authenticData: flags & 0x0020 != 0, checkingDisabled: flags & 0x0010 != 0,
            responseCode: DNSResponseCode(rawValue: UInt8(flags & 0x0F)))
    }
}
