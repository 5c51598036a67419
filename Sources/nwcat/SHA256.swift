import CGnuTLS

/// SHA-256 of a certificate, for pins. GnuTLS computes it: nwcat links GnuTLS anyway (it makes
/// the self-signed identities), and a vetted hash beats a hand-written one.
enum SHA256 {
    /// The 32-byte digest of `input`, or no bytes if GnuTLS cannot hash.
    static func hash<Bytes: Collection>(_ input: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        let message = Array(input)
        var digest = [UInt8](repeating: 0, count: 32)
        let code = message.withUnsafeBytes { bytes in
            digest.withUnsafeMutableBytes { gnutls_hash_fast(GNUTLS_DIG_SHA256, bytes.baseAddress, bytes.count, $0.baseAddress) }
        }
        // GnuTLS fails only if SHA-256 is missing from the library. No bytes then: their hex
        // is empty, which matches no pin, so a pinned connection fails closed.
        return code == 0 ? digest : []
    }

    /// Lower-case hex of the digest: the form `--pin` takes and `listen --tls` prints.
    static func hex<Bytes: Collection>(_ input: Bytes) -> String where Bytes.Element == UInt8 {
        hash(input).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
    }
}
