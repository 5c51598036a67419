import CGnuTLS

/// Small helpers for calling GnuTLS from Swift.
enum GnuTLSCall {
    /// Turns a negative GnuTLS status into a `.tls` error.
    static func check(_ status: Int32) throws(FlowError) {
        if status < 0 { throw GnuTLSErrors.error(forGnuTLSStatus: status, session: nil) }
    }

    /// Lends `bytes` to GnuTLS as a datum for the duration of `body`.
    static func withDatum<T>(_ bytes: [UInt8], _ body: (inout gnutls_datum_t) throws(FlowError) -> T) throws(FlowError) -> T {
        var copy = bytes
        let result: Result<T, FlowError> = copy.withUnsafeMutableBufferPointer { buffer in
            var datum = gnutls_datum_t(data: buffer.baseAddress, size: UInt32(buffer.count))
            do throws(FlowError) {
                return .success(try body(&datum))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The bytes of a datum GnuTLS owns (copied).
    static func bytes(_ datum: gnutls_datum_t) -> [UInt8] {
        guard let data = datum.data, datum.size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(datum.size)))
    }
}
