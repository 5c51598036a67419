import NetworkCore

/// The HTTP CONNECT client handshake on what a proxy answers: interim heads, the final status
/// line and headers, and tunnel bytes after them. Besides ending the same however the answer is
/// cut, a complete head whose status line says 2xx must open the tunnel, whatever follows the
/// code on that line.
enum HTTPConnectReplyFuzzBody {
    static func run(_ bytes: [UInt8]) {
        let make = {
            try! HTTPConnectClientHandshake(
                authority: "example.com:443", credential: ProxyCredential(username: "user", password: "secret"))
        }
        ProxyHandshakeReplay.compare(make, on: bytes, what: "HTTP CONNECT")
        if opensTunnel(bytes) {
            let outcome = ProxyHandshakeReplay(make(), chunks: [bytes]).outcome
            guard case .established = outcome else {
                FuzzFailure.check(false, "a 2xx status line did not open the tunnel: \(outcome)")
                return
            }
        }
    }

    /// Whether `bytes` start with `HTTP/1.x 2DD` ended by a space or a line end, and the head
    /// (through its first empty line) is complete and within the size limit.
    private static func opensTunnel(_ bytes: [UInt8]) -> Bool {
        let line = Array("HTTP/1.".utf8)
        guard bytes.count > 13, Array(bytes[0..<7]) == line, bytes[7] == UInt8(ascii: "0") || bytes[7] == UInt8(ascii: "1"),
            bytes[8] == UInt8(ascii: " "), bytes[9] == UInt8(ascii: "2"),
            bytes[10...11].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            [UInt8(ascii: " "), UInt8(ascii: "\r"), UInt8(ascii: "\n")].contains(bytes[12])
        else { return false }
        for index in 0..<min(bytes.count, HTTPConnectClientHandshake.maximumResponseHeadBytes) where bytes[index] == UInt8(ascii: "\n") {
            let next = bytes.dropFirst(index + 1).prefix(2)
            if next.first == UInt8(ascii: "\n") || Array(next) == [UInt8(ascii: "\r"), UInt8(ascii: "\n")] {
                return index + 1 + (next.first == UInt8(ascii: "\n") ? 1 : 2) <= HTTPConnectClientHandshake.maximumResponseHeadBytes
            }
        }
        return false
    }
}
