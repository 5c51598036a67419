#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import NetworkCore

/// What a QUIC server (`QUICConnectionBinding` in the server role, as a QUIC listener runs it
/// for each client) does with the datagrams a client sends. An input is the client's datagrams,
/// each behind a 2-byte big-endian length; the first must be an Initial the listener would
/// accept (`QUICRetry.check`), as on the listening socket, and it makes the connection.
/// Captured client Initials decrypt (their keys come from the client's own connection ID), so
/// the ClientHello and its transport parameters are parsed; later packets need the
/// handshake's fresh keys. `QUICFuzzDriver` checks the connection's invariants on the way.
package enum QUICServerInputFuzzBody {
    private static let local = try! SocketAddress(ipAddress: "127.0.0.1", port: 4_433)
    private static let remote = try! SocketAddress(ipAddress: "127.0.0.1", port: 40_000)
    private static let retry = try? QUICRetry()

    /// A throwaway self-signed P-256 certificate for "localhost" and its key (DER, base64),
    /// made for this target only.
    private static let settings: FlowTLSConfiguration = {
        var settings = FlowTLSConfiguration()
        settings.applicationProtocols = ["echo"]
        settings.certificateChain = [Array(Data(base64Encoded: certificate) ?? Data())]
        settings.privateKey = Array(Data(base64Encoded: key) ?? Data())
        return settings
    }()
    private static let certificate = [
        "MIIBfjCCASWgAwIBAgIUYu6yffenlRFvb6HstGSXFi984+EwCgYIKoZIzj0EAwIwFDESMBAGA1UEAwwJbG9jYWxob3N0MCAX",
        "DTI2MTEyNzE1MTE0MFoYDzIxMjYxMTAzMTUxMTQwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO",
        "PQMBBwNCAAQ7ofXJPVejXa7LtLs0/TPTeYe6fEKspHcEY8GT1IAQ+cJHTz7Go6+CXQomzmVv6Xh5lLwM344uWPXpytv+IMx3",
        "o1MwUTAdBgNVHQ4EFgQUr7LeR1OSLOLGf4FO++iSEciGAdowHwYDVR0jBBgwFoAUr7LeR1OSLOLGf4FO++iSEciGAdowDwYD",
        "VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiBdawJ9R7CHtxug0nijdNlTLOBwV7Y9eSdU3rjQnRum1AIgaMeRAGhc",
        "7a71ChHwiwMgdm4I2AcoIHVGjU3GvQRfOiw="
    ].joined()
    private static let key = [
        "MHcCAQEEIAF+yquwi4BnCDkArX8JrK/MOqG2CWH2WGEdea2iYoq2oAoGCCqGSM49AwEHoUQDQgAEO6H1yT1Xo12uy7S7NP0z",
        "03mHunxCrKR3BGPBk9SAEPnCR08+xqOvgl0KJs5lb+l4eZS8DN+OLlj16crb/iDMdw=="
    ].joined()

    /// Returns how many packets the server sent (the corpus replay checks captured Initials get
    /// an answer, so the target reaches the handshake).
    @discardableResult
    package static func run(_ bytes: [UInt8]) -> Int {
        var input = bytes[...]
        let now: UInt64 = 1_000_000_000
        // The listening socket's judgement (a token that is not this listener's is dropped).
        guard let first = QUICFuzzDriver.take(&input, lengthBytes: 2),
            case .accept(let initial)? = retry?.check(ByteBuffer(bytes: first), from: remote, requireAddressValidation: false, now: now)
        else { return 0 }
        guard let server = try? QUICConnectionBinding(
            role: .server(initial),
            settings: settings, limits: QUICFuzzDriver.limits, local: local, remote: remote, now: now)
        else { return 0 }
        var driver = QUICFuzzDriver(server, now: now)
        var datagram: [UInt8]? = first
        while let next = datagram {
            driver.receive(next, from: remote)
            driver.now += 1_000_000
            datagram = QUICFuzzDriver.take(&input, lengthBytes: 2)
        }
        driver.runTimersToEnd()
        return driver.packetsSent
    }
}
