import Foundation
import Testing

/// A port no UDP or TCP socket uses right now, below the ephemeral range (so the kernel will
/// not hand it to someone's outgoing connection between our check and the server's bind).
/// Random, so parallel tests rarely pick the same; `Dnsmasq.start` retries if one does.
public func freeLoopbackPort() -> UInt16? {
    let ephemeral = ProcFS.ephemeralPortRange()
    let upper = max(20_001, min(ephemeral.lowerBound - 1, 32_000))
    for _ in 0..<50 {
        let port = UInt16(Int.random(in: 20_000...upper))
        let used = (ProcFS.sockets(udp: true) + ProcFS.sockets(udp: false)).contains { $0.localPort == port }
        if !used { return port }
    }
    return nil
}

/// A real dnsmasq on 127.0.0.1 answering for `*.test` from command-line records only.
public final class Dnsmasq: Sendable {
    public let process: PeerProcess
    public let port: UInt16

    /// Nil (with a recorded failure under CI) when dnsmasq is not installed.
    public static func start(
        records: [String], listenAddress: String = "127.0.0.1", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Dnsmasq? {
        guard let executable = PeerProcess.executable("dnsmasq", package: "dnsmasq-base", sourceLocation: sourceLocation)
        else { return nil }
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try #require(freeLoopbackPort())
            let process = try PeerProcess(
                executable,
                [
                    "-k", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--user=root", "--pid-file=",
                    "--listen-address=\(listenAddress)", "--port=\(port)", "--bind-interfaces", "--local=/test/",
                    "--log-facility=/dev/null",
                ] + records)
            let server = Dnsmasq(process: process, port: port, host: listenAddress)
            do {
                // dnsmasq exits at once when the port was taken after all: try another.
                try await waitUntilBound(port: port, udp: true, timeout: 3)
                try await waitUntilBound(port: port, udp: false, timeout: 3)
                return server
            } catch {
                lastError = error
                await server.stop()
            }
        }
        throw lastError ?? CancellationError()
    }

    public let host: String

    private init(process: PeerProcess, port: UInt16, host: String) {
        self.process = process
        self.port = port
        self.host = host
    }

    /// Stops dnsmasq off the cooperative pool (stopping waits, briefly, for the process to go).
    public func stop() async {
        let process = self.process
        _ = try? await offload { process.stop() }
    }
}
