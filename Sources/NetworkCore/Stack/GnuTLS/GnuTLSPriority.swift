/// Builds the GnuTLS priority string for DTLS, QUIC (and TLS-over-TCP PSK) settings: the allowed versions, and when the
/// application names cipher suites (`sec_protocol_options_append_tls_ciphersuite`) or uses
/// pre-shared keys, the key exchanges, ciphers and MACs those suites need.
enum GnuTLSPriority {
    /// What GnuTLS calls the parts of an IANA suite.
    private struct Suite {
        var keyExchange: String
        var cipher: String
        var mac: String
    }

    /// The suites Apple's enumeration names that DTLS 1.2 can use (stream ciphers like RC4 and
    /// TLS 1.3 suites cannot run over DTLS 1.2).
    private static let suites: [UInt16: Suite] = [
        0x008C: Suite(keyExchange: "PSK", cipher: "AES-128-CBC", mac: "SHA1"),
        0x008D: Suite(keyExchange: "PSK", cipher: "AES-256-CBC", mac: "SHA1"),
        0x00A8: Suite(keyExchange: "PSK", cipher: "AES-128-GCM", mac: "AEAD"),
        0x00A9: Suite(keyExchange: "PSK", cipher: "AES-256-GCM", mac: "AEAD"),
        0x00AE: Suite(keyExchange: "PSK", cipher: "AES-128-CBC", mac: "SHA256"),
        0x00AF: Suite(keyExchange: "PSK", cipher: "AES-256-CBC", mac: "SHA384"),
        0xC035: Suite(keyExchange: "ECDHE-PSK", cipher: "AES-128-CBC", mac: "SHA1"),
        0xC036: Suite(keyExchange: "ECDHE-PSK", cipher: "AES-256-CBC", mac: "SHA1"),
        0xCCAB: Suite(keyExchange: "PSK", cipher: "CHACHA20-POLY1305", mac: "AEAD"),
        0xCCAC: Suite(keyExchange: "ECDHE-PSK", cipher: "CHACHA20-POLY1305", mac: "AEAD"),
        0xC009: Suite(keyExchange: "ECDHE-ECDSA", cipher: "AES-128-CBC", mac: "SHA1"),
        0xC00A: Suite(keyExchange: "ECDHE-ECDSA", cipher: "AES-256-CBC", mac: "SHA1"),
        0xC013: Suite(keyExchange: "ECDHE-RSA", cipher: "AES-128-CBC", mac: "SHA1"),
        0xC014: Suite(keyExchange: "ECDHE-RSA", cipher: "AES-256-CBC", mac: "SHA1"),
        0xC02B: Suite(keyExchange: "ECDHE-ECDSA", cipher: "AES-128-GCM", mac: "AEAD"),
        0xC02C: Suite(keyExchange: "ECDHE-ECDSA", cipher: "AES-256-GCM", mac: "AEAD"),
        0xC02F: Suite(keyExchange: "ECDHE-RSA", cipher: "AES-128-GCM", mac: "AEAD"),
        0xC030: Suite(keyExchange: "ECDHE-RSA", cipher: "AES-256-GCM", mac: "AEAD"),
        0xCCA8: Suite(keyExchange: "ECDHE-RSA", cipher: "CHACHA20-POLY1305", mac: "AEAD"),
        0xCCA9: Suite(keyExchange: "ECDHE-ECDSA", cipher: "CHACHA20-POLY1305", mac: "AEAD"),
        0x009C: Suite(keyExchange: "RSA", cipher: "AES-128-GCM", mac: "AEAD"),
        0x009D: Suite(keyExchange: "RSA", cipher: "AES-256-GCM", mac: "AEAD"),
        0x002F: Suite(keyExchange: "RSA", cipher: "AES-128-CBC", mac: "SHA1"),
        0x0035: Suite(keyExchange: "RSA", cipher: "AES-256-CBC", mac: "SHA1"),
    ]

    /// DTLS 1.0 is 0xfeff and DTLS 1.2 0xfefd on the wire; TLS values are accepted too (an
    /// application that sets TLS 1.2 as its minimum on DTLS means DTLS 1.2).
    private static func allowsDTLS10(_ settings: FlowTLSConfiguration) -> Bool {
        guard let minimum = settings.minimumVersion else { return false }  // DTLS 1.2 by default
        return minimum == 0xfeff || (minimum >= 0x0301 && minimum <= 0x0302)
    }

    private static func allowsDTLS12(_ settings: FlowTLSConfiguration) -> Bool {
        guard let maximum = settings.maximumVersion else { return true }
        return !(maximum == 0xfeff || (maximum >= 0x0301 && maximum <= 0x0302))
    }

    /// The priority for DTLS (`stream` false) or TLS over TCP (`stream` true). Over TCP GnuTLS
    /// runs the pre-shared-key sessions, which are TLS 1.2 (external PSKs, as Apple's
    /// peer-to-peer samples use them).
    static func string(for settings: FlowTLSConfiguration, stream: Bool = false) -> String {
        var parts = ["NORMAL", "-VERS-ALL"]
        if stream {
            parts.append("+VERS-TLS1.2")
        } else {
            if allowsDTLS12(settings) { parts.append("+VERS-DTLS1.2") }
            if allowsDTLS10(settings) || !allowsDTLS12(settings) { parts.append("+VERS-DTLS1.0") }
        }
        let requested = settings.cipherSuites.compactMap { suites[$0] }
        let usesPSK = !settings.preSharedKeys.isEmpty
        if !requested.isEmpty {
            // Only the named suites' pieces, in the application's order of preference.
            let exchanges = unique(requested.map(\.keyExchange))
                .filter { !usesPSK || $0.contains("PSK") }
            parts.append("-KX-ALL")
            parts += (exchanges.isEmpty ? ["ECDHE-PSK", "PSK"] : exchanges).map { "+" + $0 }
            parts.append("-CIPHER-ALL")
            parts += unique(requested.map(\.cipher)).map { "+" + $0 }
            parts.append("-MAC-ALL")
            parts += unique(requested.map(\.mac)).map { "+" + $0 }
        } else if usesPSK {
            // A PSK client verifies no certificate: it must never accept a certificate suite.
            parts += ["-KX-ALL", "+ECDHE-PSK", "+PSK"]
        }
        return parts.joined(separator: ":")
    }

    /// TLS 1.3's suites, by what GnuTLS calls their ciphers (QUIC's TLS is 1.3 only).
    private static let tls13Ciphers: [UInt16: String] = [
        0x1301: "AES-128-GCM", 0x1302: "AES-256-GCM", 0x1303: "CHACHA20-POLY1305", 0x1304: "AES-128-CCM",
    ]

    /// The priority for QUIC's TLS 1.3 (RFC 9001: no middlebox compatibility mode). When the
    /// application names TLS 1.3 suites, only their ciphers, in its order; suites of earlier
    /// versions cannot run in QUIC and are left out (named alone, the defaults stay).
    static func quicString(for settings: FlowTLSConfiguration) -> String {
        var parts = ["NORMAL", "-VERS-ALL", "+VERS-TLS1.3", "%DISABLE_TLS13_COMPAT_MODE"]
        let ciphers = unique(settings.cipherSuites.compactMap { tls13Ciphers[$0] })
        if !ciphers.isEmpty { parts += ["-CIPHER-ALL"] + ciphers.map { "+" + $0 } }
        return parts.joined(separator: ":")
    }

    private static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}
