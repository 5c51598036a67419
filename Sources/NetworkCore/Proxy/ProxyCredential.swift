/// A user name and password for a proxy (SOCKS5 RFC 1929 or HTTP Basic).
///
/// Every textual form of this value hides the password, and the user name too: both are secrets
/// that end up in logs far too easily through string interpolation, `dump` or a debugger's
/// `print`. Code that needs the values reads the properties explicitly.
package struct ProxyCredential: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The user name, sent as is (UTF-8).
    package var username: String
    /// The password, sent as is (UTF-8).
    package var password: String

    package init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// Never the secrets themselves.
    package var description: String { "<credential redacted>" }

    /// Never the secrets themselves.
    package var debugDescription: String { description }

    /// Keeps `dump()` and reflection-based loggers from printing the stored properties.
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    /// The value of a `Proxy-Authorization` header for HTTP Basic authentication (RFC 7617),
    /// i.e. `Basic ` followed by base64 of `user:password`.
    package var basicAuthorization: String {
        "Basic " + Base64.encode(Array("\(username):\(password)".utf8))
    }
}

/// Standard base64 (RFC 4648, with padding). NetworkCore does not import Foundation, and the
/// one header value that needs it is not worth a dependency.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            output.append(remaining > 1 ? alphabet[Int(group >> 6 & 0x3F)] : UInt8(ascii: "="))
            output.append(remaining > 2 ? alphabet[Int(group & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
