import Foundation

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
        "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
    }
}

