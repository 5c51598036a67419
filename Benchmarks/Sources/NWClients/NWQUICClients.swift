// The QUIC scenarios on our Network module: a client over one QUIC stream
// (`NWParameters(quic:)`, ALPN "bench") and the QUIC sink every QUIC client talks to (an
// `NWListener` with QUIC parameters, `nw-bench quic-server`), on PORT+500.
import BenchSupport
import Dispatch
import Foundation
import Network

/// QUIC offering ALPN "bench"; like the TLS clients, the client does not authenticate the
/// throwaway certificate (`sec_protocol_options_set_peer_authentication_required(false)`).
public func quicParameters() -> NWParameters {
    let options = NWProtocolQUIC.Options(alpn: ["bench"])
    sec_protocol_options_set_peer_authentication_required(options.securityProtocolOptions, false)
    return NWParameters(quic: options)
}

/// One QUIC connection to the sink, the same driver as the TCP and TLS bulk clients (`nwBulk`:
/// 64 KiB sends, the next from the `.contentProcessed` completion), ended by the stream's FIN;
/// the sink answers with its count. The clock starts after `.ready`, after the handshake.
public func nwQUICBulk(host: String, port: Int, chunkSize: Int, duration: Double, window: Int) -> NWBulkResult {
    nwBulk(host: host, port: port, chunkSize: chunkSize, duration: duration, window: window, parameters: quicParameters())
}

/// The QUIC sink: every stream a client opens is read to its FIN, then answered with the byte
/// count (8 bytes, little-endian) and its own FIN. Runs until the process is killed.
public func runNWQUICSinkServer(port: Int, certificatePEM: String, keyPEM: String) -> Never {
    guard let identity = sec_identity_create_with_pem(certificateChain: certificatePEM, privateKey: keyPEM) else {
        fail("quic-server: no certificate or key in the PEM files")
    }
    let options = NWProtocolQUIC.Options(alpn: ["bench"])
    sec_protocol_options_set_local_identity(options.securityProtocolOptions, identity)
    let queue = DispatchQueue(label: "bench.quic-server")
    let listener: NWListener
    do {
        listener = try NWListener(using: NWParameters(quic: options), on: NWEndpoint.Port(rawValue: UInt16(port))!)
    } catch {
        fail("quic-server: \(error)")
    }
    listener.newConnectionHandler = { stream in
        stream.start(queue: queue)
        sink(stream, counted: 0)
    }
    listener.stateUpdateHandler = { state in
        switch state {
        case .ready: FileHandle.standardOutput.write(Data("ready\n".utf8))
        case .failed(let error): fail("quic-server: \(error)")
        default: break
        }
    }
    listener.start(queue: queue)
    dispatchMain()
}

private func sink(_ stream: NWConnection, counted: UInt64) {
    stream.receive(minimumIncompleteLength: 1, maximumLength: 1 << 20) { data, _, isComplete, error in
        let total = counted + UInt64(data?.count ?? 0)
        if isComplete {
            let count = withUnsafeBytes(of: total.littleEndian) { Data($0) }
            stream.send(content: count, contentContext: .finalMessage, completion: .contentProcessed { _ in stream.cancel() })
        } else if error == nil {
            sink(stream, counted: total)
        } else {
            stream.cancel()
        }
    }
}
