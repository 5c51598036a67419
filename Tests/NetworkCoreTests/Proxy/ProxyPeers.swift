#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import NIOPosix
import PeerSupport
import Testing

@testable import NetworkCore

/// A failure of the test's own setup or expectations, with what went wrong.
struct ProxyTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Real proxies (dante, tinyproxy) and targets (socat echo, openssl s_server) for the proxy
/// tests, each started in a temporary folder on a free loopback port and stopped by pid.
enum ProxyPeers {
    /// A TCP port on 127.0.0.1 that was free a moment ago.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProxyTestError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
            }
        }
        guard bound else { throw ProxyTestError("could not bind a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A new empty folder, readable by everyone (the peers may drop to `nobody`).
    static func temporaryDirectory(_ prefix: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        return directory
    }

    /// A socat TCP echo server on 127.0.0.1.
    static func startEcho() async throws -> (PeerProcess, Int)? {
        guard let socat = PeerProcess.executable("socat") else { return nil }
        let port = try freePort()
        let server = try PeerProcess(socat, ["TCP-LISTEN:\(port),bind=127.0.0.1,reuseaddr,fork", "EXEC:cat"])
        try await waitUntilBound(port: UInt16(port), udp: false)
        return (server, port)
    }

    /// A socat relay from a free port to `port`, recording every byte in both directions
    /// (`-r`/`-R` raw dumps) so a test can see exactly what crossed the proxy's far side.
    static func startRecordingRelay(to port: Int, in directory: URL) async throws -> (PeerProcess, Int, URL, URL)? {
        guard let socat = PeerProcess.executable("socat") else { return nil }
        let listen = try freePort()
        let forward = directory.appendingPathComponent("to-server.bin")
        let backward = directory.appendingPathComponent("to-client.bin")
        let relay = try PeerProcess(socat, [
            "-r", forward.path, "-R", backward.path,
            "TCP-LISTEN:\(listen),bind=127.0.0.1,reuseaddr", "TCP:127.0.0.1:\(port)",
        ])
        try await waitUntilBound(port: UInt16(listen), udp: false)
        return (relay, listen, forward, backward)
    }

    /// A self-signed certificate for localhost.
    static func makeCertificate(in directory: URL) throws -> (certificate: String, key: String)? {
        guard let openssl = PeerProcess.executable("openssl") else { return nil }
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let (status, output) = try ShortTool.run(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-keyout", key, "-out", certificate,
        ])
        try #require(status == 0, "openssl req failed: \(output)")
        return (certificate, key)
    }

    /// `openssl s_server` with `arguments` added, on a free port; waits until it listens.
    static func startTLSServer(in directory: URL, _ arguments: [String]) async throws -> (PeerProcess, Int)? {
        guard let openssl = PeerProcess.executable("openssl"), let identity = try makeCertificate(in: directory) else {
            return nil
        }
        let port = try freePort()
        let server = try PeerProcess(openssl, [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", identity.certificate, "-key", identity.key,
        ] + arguments)
        try await waitUntilBound(port: UInt16(port), udp: false)
        return (server, port)
    }

    /// dante on 127.0.0.1, with no authentication or with system-account user/password.
    static func startDante(usernameAuthentication: Bool, in directory: URL) async throws -> (PeerProcess, Int)? {
        guard let danted = PeerProcess.executable("danted", package: "dante-server") else { return nil }
        let port = try freePort()
        let configuration = Dante.configuration(
            logFile: "\(directory.path)/danted.log", address: "127.0.0.1", port: port, external: "lo",
            usernameAuthentication: usernameAuthentication)
        let path = directory.appendingPathComponent("danted.conf").path
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        // Through a shell that waits for it: dante closes every inherited descriptor when it
        // starts, including the one Foundation's Process watches to learn that a child ended.
        // Foundation then blocks its process-monitor thread in waitpid() on the still-running
        // danted, and no later child of the test (openssl, curl) is ever reaped. The shell
        // keeps that descriptor open while danted runs.
        let pidFile = directory.appendingPathComponent("danted.pid").path
        let server = try PeerProcess("/bin/sh", ["-c", "\"$0\" -f \"$1\" -p \"$2\"; exit $?", danted, path, pidFile])
        try await waitUntilBound(port: UInt16(port), udp: false)
        return (server, port)
    }

    /// tinyproxy on 127.0.0.1 (CONNECT to any port), with `BasicAuth` when given; logs
    /// connections and request lines to `tinyproxy.log` in `directory`.
    static func startTinyproxy(basicAuth: (String, String)?, in directory: URL) async throws -> (PeerProcess, Int, URL)? {
        try await Tinyproxy.start(basicAuth: basicAuth, in: directory).map { ($0.process, $0.port, $0.log) }
    }

    /// Runs `body` with a throwaway system account (dante checks user/password against the
    /// system's password database), deleted afterwards whatever happens. Needs root.
    static func withSystemAccount(
        password: String, _ body: (String) async throws -> Void
    ) async throws {
        try await PeerSupport.withSystemAccount(password: password, body)
    }

    /// curl's exit status through a proxy URL to `url` (`-k`: the anchors use self-signed
    /// certificates; `-p`: tunnel with CONNECT even for http).
    /// It runs for up to 10 s, so on a thread of its own, not one the tests' tasks share.
    static func curl(proxy: String, _ url: String) async throws -> Int32? {
        guard let curl = PeerProcess.executable("curl") else { return nil }
        return try await offload { try ShortTool.run(curl, ["-sS", "-k", "-p", "--max-time", "10", "-o", "/dev/null", "--proxy", proxy, url]).status }
    }
}

/// A client channel set up the way the establishment sets one up (reads on demand, remote
/// half-closure allowed, a handler at the tail standing in for the flow's), connected to a
/// proxy, then tunnelled with ``ProxyTunnel``.
final class TunnelClient: Sendable {
    let channel: Channel
    let received: Recorder<[UInt8]>

    private init(channel: Channel, received: Recorder<[UInt8]>) {
        self.channel = channel
        self.received = received
    }

    /// Connects to the proxy on 127.0.0.1:`proxyPort` and runs the tunnel handshake; throws
    /// what the handshake failed with.
    static func open(
        proxyPort: Int, target: FlowTarget, proxy: ProxyDescription, timeout: TimeAmount? = .seconds(10)
    ) async throws -> TunnelClient {
        let received = Recorder<[UInt8]>()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.autoRead, value: false)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(CollectingHandler(received))
                }
            }
            .connect(host: "127.0.0.1", port: proxyPort).get()
        do {
            try await ProxyTunnel.establish(on: channel, to: target, via: proxy, timeout: timeout).get()
        } catch {
            try? await channel.close()
            throw error
        }
        channel.read()
        return TunnelClient(channel: channel, received: received)
    }

    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text)).get()
    }

    /// Waits until the bytes received so far, as text, satisfy `predicate`.
    @discardableResult
    func waitForText(_ what: String, timeout: Double = 10, _ predicate: @escaping @Sendable (String) -> Bool) async throws
        -> String
    {
        let chunks = try await received.wait(what, timeout: timeout) { chunks in
            predicate(String(decoding: chunks.joined(), as: UTF8.self))
        }
        return String(decoding: chunks.joined(), as: UTF8.self)
    }

    func close() async {
        try? await channel.close()
    }
}

/// Records what reaches the top of the pipeline and keeps reads going.
final class CollectingHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let recorder: Recorder<[UInt8]>

    init(_ recorder: Recorder<[UInt8]>) {
        self.recorder = recorder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        recorder.append(Array(Self.unwrapInboundIn(data).readableBytesView))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.read()
    }
}

extension ProxyDescription {
    static func socks5(port: Int, remoteNames: Bool = true, credential: ProxyCredential? = nil) -> ProxyDescription {
        ProxyDescription(
            kind: .socks5(proxyResolvesNames: remoteNames),
            server: .hostPort(host: "127.0.0.1", port: port, interfaceName: nil), credential: credential)
    }

    static func httpCONNECT(port: Int, credential: ProxyCredential? = nil) -> ProxyDescription {
        ProxyDescription(
            kind: .httpCONNECT(tlsToProxy: false),
            server: .hostPort(host: "127.0.0.1", port: port, interfaceName: nil), credential: credential)
    }
}
