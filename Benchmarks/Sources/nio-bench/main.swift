// One measurement per invocation, one JSON line on stdout (see ../../README.md).
import BenchSupport
import NIOClients
import NIOCore
import NIOPosix

let o = Options.parse(CommandLine.arguments)
let impl = o.api == "async" ? "nio-async" : o.api == "loop-task" ? "nio-loop-task" : "nio"
let group = makeEventLoopGroup(threads: o.threads)

switch o.scenario {
case "rr" where o.api == "async" || o.api == "loop-task":
    let client = NIOAsyncRoundTripClient(group: group, host: o.host, port: o.port, nports: o.nports, conns: o.conns, size: o.size)
    let control = RunControl(activeConnections: o.conns)
    let start = o.api == "async" ? client.start : client.startOnLoopTasks
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { start(control) }
    emit(impl: impl, scenario: o.name ?? "rr\(o.conns)", value: r.perSecond, unit: "ops/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys, extra: ["errors": Double(control.errors)])
case "bulk" where o.api == "async":
    let r = nioAsyncBulk(group: group, host: o.host, port: o.port + 100, chunkSize: o.size, duration: o.duration)
    if r.bytes == 0 { fail("bulk: the sink's byte count never arrived") }
    emit(impl: impl, scenario: o.name ?? "bulk", value: Double(r.bytes) / r.seconds / 1_048_576, unit: "MiB/s",
         ops: Double(r.bytes), seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys)
case "udp" where o.api == "async":
    let client = NIOAsyncDatagramClient(group: group, host: o.host, port: o.port + 200, size: o.size, batch: o.batch)
    let control = RunControl(activeConnections: 1)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    emit(impl: impl, scenario: o.name ?? "udp", value: r.perSecond, unit: "dgrams/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys,
         extra: ["errors": Double(control.errors), "sent_total": Double(r.totalOps)])
case _ where o.api == "async":
    fail("scenario \(o.scenario) has no async form")
case "rr":
    let client = try NIORoundTripClient(group: group, host: o.host, port: o.port, nports: o.nports, conns: o.conns, size: o.size)
    let control = RunControl(activeConnections: o.conns)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    emit(impl: impl, scenario: o.name ?? "rr\(o.conns)", value: r.perSecond, unit: "ops/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys, extra: ["errors": Double(control.errors)])
    client.close()
case "framed", "ws":
    let start: (RunControl) -> Void
    let close: () -> Void
    if o.scenario == "ws" {
        let client = try NIOWebSocketClient(group: group, host: o.host, port: o.port, size: o.size, window: o.window)
        (start, close) = (client.start, client.close)
    } else {
        let client = try NIOFramedClient(
            group: group, host: o.host, port: o.port, size: o.size, window: o.window, flushesPerRead: o.batched)
        (start, close) = (client.start, client.close)
    }
    let control = RunControl(activeConnections: 1)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { start(control) }
    emit(impl: impl, scenario: o.name ?? o.scenario, value: r.perSecond, unit: "msgs/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys, extra: ["errors": Double(control.errors)])
    close()
case "ws-server":
    // The WebSocket scenario's echo server (for every client), until killed.
    try runWebSocketEchoServer(group: group, host: o.host, port: o.port)
case "hop":
    let pingPong = QueueHopPingPong(group: group)
    let control = RunControl(activeConnections: 1)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { pingPong.start(control) }
    emit(impl: impl, scenario: o.name ?? "hop", value: r.perSecond, unit: "rounds/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys)
case "bulk":
    let r = try nioBulk(group: group, host: o.host, port: o.port + 100, chunkSize: o.size, duration: o.duration)
    emit(impl: impl, scenario: o.name ?? "bulk", value: Double(r.bytes) / r.seconds / 1_048_576, unit: "MiB/s",
         ops: Double(r.bytes), seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys)
case "udp":
    let client = try NIODatagramClient(group: group, host: o.host, port: o.port + 200, size: o.size, group: o.batch, batched: o.batched)
    let control = RunControl(activeConnections: 1)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    emit(impl: impl, scenario: o.name ?? "udp", value: r.perSecond, unit: "dgrams/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys,
         extra: ["errors": Double(control.errors), "sent_total": Double(r.totalOps)])
    client.close()
case "udp-recv":
    // Receives the flood of C/udp_flood.c (udp-offload.sh): "ready" once bound, then one JSON line.
    let counter = DatagramCounter()
    let channel = try nioStartUDPReceiver(group: group, host: o.host, port: o.port, counter: counter)
    announceReady()
    let r = measureReceiving(counter, warmup: o.warmup, duration: o.duration)
    emit(impl: impl, scenario: o.name ?? "udp-recv", value: r.perSecond, unit: "dgrams/s",
         ops: Double(r.datagrams), seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys,
         extra: ["bytes": Double(r.bytes), "received_total": Double(r.totalDatagrams), "errors": Double(counter.errors)])
    _ = channel
    exitProcess(0)  // the flood may still be going: no need to wait for the close
case "mem":
    raiseNoFileLimit()
    // Warm-up connection (not counted): event loops, thread stacks and allocator arenas exist before the baseline.
    let warm = try nioOpenIdleConnections(group: group, host: o.host, port: o.port, nports: 1, count: 1)
    sleepSeconds(0.2)
    let rss0 = residentBytes(), heap0 = heapInUseBytes()
    let t0 = nowSeconds()
    let channels = try nioOpenIdleConnections(group: group, host: o.host, port: o.port, nports: o.nports, count: o.conns)
    let secs = nowSeconds() - t0
    sleepSeconds(0.5)
    let rss1 = residentBytes(), heap1 = heapInUseBytes()
    emit(impl: impl, scenario: o.name ?? "mem", value: Double(rss1 - rss0) / Double(o.conns), unit: "B/conn",
         ops: Double(channels.count), seconds: secs,
         extra: ["rss_before": Double(rss0), "rss_after": Double(rss1), "connect_seconds": secs,
                "heap_per_conn": Double(heap1 - heap0) / Double(o.conns)])
    _ = warm
    exitProcess(0)  // the kernel closes the sockets
case "tls-bulk":
    let context = try makeNIOSSLClientContext()
    let r = try nioTLSBulk(group: group, context: context, host: o.host, port: o.port + 300, chunkSize: o.size, duration: o.duration)
    emit(impl: impl, scenario: o.name ?? "tls-bulk", value: Double(r.bytes) / r.seconds / 1_048_576, unit: "MiB/s",
         ops: Double(r.bytes), seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys)
case "tls-handshake":
    let context = try makeNIOSSLClientContext()
    let client = NIOTLSHandshakeClient(group: group, context: context, host: o.host, port: o.port + 300)
    let control = RunControl(activeConnections: 1)
    let r = measureTimed(control: control, warmup: o.warmup, duration: o.duration) { client.start(control) }
    if control.errors > 0 { fail("tls-handshake: \(control.errors) handshakes failed") }
    // Sockets of closed (cancelled) connections the process still holds at the end of the run.
    let fds = openFileDescriptorCount()
    emit(impl: impl, scenario: o.name ?? "tls-handshake", value: r.perSecond, unit: "handshakes/s", ops: Double(r.ops),
         seconds: r.seconds, cpuUser: r.cpuUser, cpuSys: r.cpuSys,
         extra: ["handshakes_total": Double(r.totalOps), "open_fds": Double(fds)])
default:
    fail("unknown scenario \(o.scenario)")
}
