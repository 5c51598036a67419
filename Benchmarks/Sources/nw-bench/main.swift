// One measurement per invocation, one JSON line on stdout (see ../../README.md).
import BenchSupport
import Dispatch
import Foundation
import NWClients

let o = Options.parse(CommandLine.arguments)
let impl = o.api == "async" ? "network-async" : "network"

switch o.scenario {
case "rr" where o.api == "async":
    let client = NWAsyncRoundTripClient(host: o.host, port: o.port, nports: o.nports, conns: o.conns, size: o.size)
    let control = RunControl(activeConnections: o.conns)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    emit(impl: impl, scenario: o.name ?? "rr\(o.conns)", value: r.perSecond, unit: "ops/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys, extra: ["errors": Double(control.errors)])
    client.close()
case "bulk" where o.api == "async":
    let r = nwAsyncBulk(host: o.host, port: o.port + 100, chunkSize: o.size, duration: o.duration)
    if r.bytes == 0 { fail("bulk: the sink's byte count never arrived") }
    emit(impl: impl, scenario: o.name ?? "bulk", value: Double(r.bytes) / r.seconds / 1_048_576, unit: "MiB/s",
         ops: Double(r.bytes), seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys)
case "udp" where o.api == "async":
    let client = NWAsyncDatagramClient(host: o.host, port: o.port + 200, size: o.size)
    let control = RunControl(activeConnections: 1)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    emit(impl: impl, scenario: o.name ?? "udp", value: r.perSecond, unit: "dgrams/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys,
         extra: ["errors": Double(control.errors), "sent_total": Double(r.totalOps)])
    client.close()
case "framed" where o.api == "async", "ws" where o.api == "async":
    let start = o.scenario == "ws"
        ? NWAsyncWebSocketClient(host: o.host, port: o.port, size: o.size, window: o.window).start
        : NWAsyncFramedClient(host: o.host, port: o.port, size: o.size, window: o.window).start
    let control = RunControl(activeConnections: 1)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { start(control) }
    emit(impl: impl, scenario: o.name ?? o.scenario, value: r.perSecond, unit: "msgs/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys, extra: ["errors": Double(control.errors)])
case _ where o.api == "async":
    fail("scenario \(o.scenario) has no async form")
case "rr":
    let client = NWRoundTripClient(host: o.host, port: o.port, nports: o.nports, conns: o.conns, size: o.size)
    let control = RunControl(activeConnections: o.conns)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    emit(impl: impl, scenario: o.name ?? "rr\(o.conns)", value: r.perSecond, unit: "ops/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys, extra: ["errors": Double(control.errors)])
    client.close()
case "framed", "ws":
    let client = o.scenario == "ws"
        ? makeNWWebSocketClient(host: o.host, port: o.port, size: o.size, window: o.window)
        : makeNWFramedClient(host: o.host, port: o.port, size: o.size, window: o.window)
    // (Each pending receive is a chain that stops on its own.)
    let control = RunControl(activeConnections: o.window)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    emit(impl: impl, scenario: o.name ?? o.scenario, value: r.perSecond, unit: "msgs/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys, extra: ["errors": Double(control.errors)])
    client.close()
case "bulk":
    let r = nwBulk(host: o.host, port: o.port + 100, chunkSize: o.size, duration: o.duration, window: o.window)
    if r.bytes == 0 { fail("bulk: the sink's byte count never arrived") }
    emit(impl: impl, scenario: o.name ?? "bulk", value: Double(r.bytes) / r.seconds / 1_048_576, unit: "MiB/s",
         ops: Double(r.bytes), seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys)
case "udp":
    let client = NWDatagramClient(host: o.host, port: o.port + 200, size: o.size, group: o.batch, batched: o.batched)
    let control = RunControl(activeConnections: 1)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    emit(impl: impl, scenario: o.name ?? "udp", value: r.perSecond, unit: "dgrams/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys,
         extra: ["errors": Double(control.errors), "sent_total": Double(r.totalOps)])
    client.close()
case "udp-recv":
    // Receives the flood of C/udp_flood.c (udp-offload.sh): "ready" once bound, then one JSON line.
    guard let mode = NWUDPReceiver.Mode(rawValue: o.mode) else { fail("udp-recv: --mode listener|connection") }
    let counter = DatagramCounter()
    let receiver = NWUDPReceiver(mode: mode, host: o.host, port: o.port, peerPort: o.peerPort ?? o.port + 1,
                                 window: o.window, counter: counter)
    announceReady()
    let r = measureReceiving(counter, warmup: o.warmup, duration: o.duration)
    emit(impl: impl, scenario: o.name ?? "udp-recv-\(mode.rawValue)", value: r.perSecond, unit: "dgrams/s",
         ops: Double(r.datagrams), seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys,
         extra: ["bytes": Double(r.bytes), "received_total": Double(r.totalDatagrams), "errors": Double(counter.errors)])
    receiver.cancel()
    exitProcess(0)  // the flood may still be going: no need to wait for the cancellation
case "mem":
    raiseNoFileLimit()
    let queue = DispatchQueue(label: "bench.idle")
    // Warm-up connection (not counted): event loops, thread stacks and allocator arenas exist before the baseline.
    let warm = nwOpenIdleConnections(host: o.host, port: o.port, nports: 1, count: 1, queue: queue)
    sleepSeconds(0.2)
    let rss0 = residentBytes(), heap0 = heapInUseBytes()
    let t0 = nowSeconds()
    let connections = nwOpenIdleConnections(
        host: o.host, port: o.port, nports: o.nports, count: o.conns, queue: queue,
        pendingReceive: o.pendingReceive, sharedParameters: o.sharedParameters)
    let secs = nowSeconds() - t0
    sleepSeconds(0.5)
    let rss1 = residentBytes(), heap1 = heapInUseBytes()
    emit(impl: impl, scenario: o.name ?? "mem", value: Double(rss1 - rss0) / Double(o.conns), unit: "B/conn",
         ops: Double(connections.count), seconds: secs,
         extra: ["rss_before": Double(rss0), "rss_after": Double(rss1), "connect_seconds": secs,
                "heap_per_conn": Double(heap1 - heap0) / Double(o.conns)])
    _ = warm
    exitProcess(0)  // the kernel closes the sockets
case "tls-bulk":
    let r = nwTLSBulk(host: o.host, port: o.port + 300, chunkSize: o.size, duration: o.duration, window: o.window,
                      verifyBlock: o.verifyBlock)
    if r.bytes == 0 { fail("tls-bulk: the sink's byte count never arrived") }
    emit(impl: impl, scenario: o.name ?? "tls-bulk", value: Double(r.bytes) / r.seconds / 1_048_576, unit: "MiB/s",
         ops: Double(r.bytes), seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys)
case "tls-handshake":
    let client = NWTLSHandshakeClient(host: o.host, port: o.port + 300, verifyBlock: o.verifyBlock,
                                      sharedParameters: o.sharedParameters)
    let control = RunControl(activeConnections: 1)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    if control.errors > 0 { fail("tls-handshake: \(control.errors) handshakes failed") }
    // Sockets of closed (cancelled) connections the process still holds at the end of the run.
    let fds = openFileDescriptorCount()
    emit(impl: impl, scenario: o.name ?? "tls-handshake", value: r.perSecond, unit: "handshakes/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys,
         extra: ["handshakes_total": Double(r.totalOps), "open_fds": Double(fds)])
case "quic-server":
    // The QUIC scenarios' sink (for every QUIC client), until killed.
    guard let cert = o.cert, let key = o.key,
        let chain = try? String(contentsOfFile: cert, encoding: .utf8), let privateKey = try? String(contentsOfFile: key, encoding: .utf8)
    else { fail("quic-server needs --cert PEM --key PEM") }
    runNWQUICSinkServer(port: o.port + 500, certificatePEM: chain, keyPEM: privateKey)
case "quic-bulk":
    let r = nwQUICBulk(host: o.host, port: o.port + 500, chunkSize: o.size, duration: o.duration, window: o.window)
    if r.bytes == 0 { fail("quic-bulk: the sink's byte count never arrived") }
    emit(impl: impl, scenario: o.name ?? "quic-bulk", value: Double(r.bytes) / r.seconds / 1_048_576, unit: "MiB/s",
         ops: Double(r.bytes), seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys)
case "quic-handshake":
    let client = NWTLSHandshakeClient(host: o.host, port: o.port + 500, sharedParameters: o.sharedParameters) { _ in quicParameters() }
    let control = RunControl(activeConnections: 1)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    if control.errors > 0 { fail("quic-handshake: \(control.errors) handshakes failed") }
    emit(impl: impl, scenario: o.name ?? "quic-handshake", value: r.perSecond, unit: "handshakes/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys,
         extra: ["handshakes_total": Double(r.totalOps), "open_fds": Double(openFileDescriptorCount())])
default:
    fail("unknown scenario \(o.scenario)")
}
