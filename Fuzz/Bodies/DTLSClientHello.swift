/// Just enough of a DTLS 1.2 ClientHello record (RFC 6347 §4.2.2) to put a cookie in it: the
/// record header, the handshake header (unfragmented), version, random, session id, cookie.
enum DTLSClientHello {
    private static let recordHeader = 13
    private static let handshakeHeader = 12

    /// `datagram` with `cookie` in place of its empty cookie and every length adjusted; nil when
    /// it is not a single unfragmented ClientHello with an empty cookie.
    static func withCookie(_ cookie: [UInt8], in datagram: [UInt8]) -> [UInt8]? {
        let body = recordHeader + handshakeHeader
        guard datagram.count > body + 35, datagram[0] == 22, datagram[recordHeader] == 1 else { return nil }
        let sessionLength = Int(datagram[body + 34])
        let cookieAt = body + 35 + sessionLength
        guard cookieAt < datagram.count, datagram[cookieAt] == 0 else { return nil }
        let recordLength = Int(datagram[11]) << 8 | Int(datagram[12])
        let messageLength = uint24(datagram, at: recordHeader + 1)
        let fragmentOffset = uint24(datagram, at: recordHeader + 6)
        let fragmentLength = uint24(datagram, at: recordHeader + 9)
        guard recordLength == datagram.count - recordHeader, fragmentOffset == 0, messageLength == fragmentLength,
            messageLength == recordLength - handshakeHeader
        else { return nil }
        var result = datagram
        result[cookieAt] = UInt8(cookie.count)
        result.insert(contentsOf: cookie, at: cookieAt + 1)
        let grownRecord = recordLength + cookie.count
        result[11] = UInt8(truncatingIfNeeded: grownRecord >> 8)
        result[12] = UInt8(truncatingIfNeeded: grownRecord)
        setUInt24(&result, at: recordHeader + 1, messageLength + cookie.count)
        setUInt24(&result, at: recordHeader + 9, messageLength + cookie.count)
        return result
    }

    private static func uint24(_ bytes: [UInt8], at index: Int) -> Int {
        Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
    }

    private static func setUInt24(_ bytes: inout [UInt8], at index: Int, _ value: Int) {
        bytes[index] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[index + 1] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[index + 2] = UInt8(truncatingIfNeeded: value)
    }
}
