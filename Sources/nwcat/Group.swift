import ArgumentParser
import Dispatch
import Foundation
import Network

struct Group: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join a multicast group on PORT; print what arrives with its sender, send standard input to the group.",
        discussion: """
            Starts an NWConnectionGroup with an NWMulticastGroup of GROUP (an IPv4 or IPv6 \
            multicast address; repeat --also for more groups on the same port) over UDP. Each \
            message that arrives is printed to standard output as one line: the sender, a colon, \
            the message (a newline is added when it has none). With --verbose, its ECN codepoint \
            and where it was sent go to standard error.

            Each chunk of standard input is sent to every group as one datagram, from PORT, once \
            the group is ready. --ecn and --dscp mark those datagrams (per message: \
            NWProtocolIP.Metadata's ecn and serviceClass). DSCP values are those of the service \
            classes, by name or number: best-effort (0), background (8), responsive-data (18), \
            signaling (24), interactive-video (34), interactive-voice (46).

            Other programs on this host may join the same port (allowLocalEndpointReuse). No \
            entitlement or privilege is needed; the host needs a route for the group (for IPv4, \
            one that covers 224.0.0.0/4, such as the default route).

            nwcat keeps the group until interrupted (SIGINT or SIGTERM), then leaves and exits 0; \
            it exits 1 when the group cannot be joined.
            """
    )

    @Argument(help: "The multicast address to join (239.1.2.3, ff15::1234).")
    var group: String

    @Argument(help: "The group's port number or service name.")
    var port: String

    @Option(help: "Another multicast address to join on the same port (repeatable).")
    var also: [String] = []

    @Option(help: "Source-specific multicast: take only this sender's datagrams.")
    var source: String?

    @Flag(help: "Drop datagrams sent to this host's own address rather than to a group.")
    var disableUnicast = false

    @Option(help: "The ECN codepoint of the datagrams sent: not-ect, ect0, ect1 or ce.")
    var ecn: String?

    @Option(help: "The DSCP of the datagrams sent: a service class's name or number (see above).")
    var dscp: String?

    @Flag(
        name: [.customShort("v"), .customLong("verbose")],
        help: "Print state changes and each message's ECN codepoint and destination to standard error; -v turns on the engine's debug log, -vv its trace.")
    var verbosity: Int

    func validate() throws {
        guard parsePort(port) != nil else { throw ValidationError("'\(port)' is not a port number or known service name") }
        if let ecn, Self.codepoint(named: ecn) == nil { throw ValidationError("--ecn takes not-ect, ect0, ect1 or ce, not '\(ecn)'") }
        if let dscp, Self.serviceClass(named: dscp) == nil {
            throw ValidationError(
                "--dscp takes a service class (best-effort 0, background 8, responsive-data 18, signaling 24, interactive-video 34, interactive-voice 46), not '\(dscp)'")
        }
        _ = try descriptor()
    }

    func run() throws {
        LogSetup.bootstrap(verbosity: verbosity)
        let parameters = NWParameters.udp
        parameters.allowLocalEndpointReuse = true
        let session = GroupSession(
            descriptor: try descriptor(), parameters: parameters, message: message(), verbose: verbosity > 0)
        let code = session.run()
        if code != 0 { throw ExitCode(code) }
    }

    /// The groups to join; a usage error for anything NWMulticastGroup refuses.
    private func descriptor() throws -> NWMulticastGroup {
        guard let port = parsePort(port) else { throw ValidationError("'\(self.port)' is not a port number") }
        do {
            return try NWMulticastGroup(
                for: ([group] + also).map { .hostPort(host: NWEndpoint.Host($0), port: port) },
                from: source.map { .hostPort(host: NWEndpoint.Host($0), port: .any) }, disableUnicast: disableUnicast)
        } catch {
            throw ValidationError("cannot join \(([group] + also).joined(separator: ", ")): give multicast addresses of one family (and a source of that family)")
        }
    }

    /// The message every chunk of standard input goes as: plain, or marked as asked.
    private func message() -> NWConnectionGroup.Message {
        guard ecn != nil || dscp != nil else { return .default }
        let ip = NWProtocolIP.Metadata()
        if let ecn, let codepoint = Self.codepoint(named: ecn) { ip.ecn = codepoint }
        if let dscp, let serviceClass = Self.serviceClass(named: dscp) { ip.serviceClass = serviceClass }
        return NWConnectionGroup.Message(identifier: "nwcat-group", metadata: [ip])
    }

    static func codepoint(named name: String) -> NWProtocolIP.ECN? {
        switch name.lowercased() {
        case "not-ect", "nonect", "0": return .nonECT
        case "ect0", "ect(0)", "2": return .ect0
        case "ect1", "ect(1)", "1": return .ect1
        case "ce", "3": return .ce
        default: return nil
        }
    }

    /// The service class of a name or of its DSCP (docs/socket-options.md): Apple's API marks
    /// by class, so other DSCPs have no way to the wire.
    static func serviceClass(named name: String) -> NWParameters.ServiceClass? {
        switch name.lowercased() {
        case "best-effort", "besteffort", "0": return .bestEffort
        case "background", "cs1", "8": return .background
        case "responsive-data", "responsivedata", "af21", "18": return .responsiveData
        case "signaling", "cs3", "24": return .signaling
        case "interactive-video", "interactivevideo", "af41", "34": return .interactiveVideo
        case "interactive-voice", "interactivevoice", "ef", "46": return .interactiveVoice
        default: return nil
        }
    }
}

/// The group and standard input. Everything mutable is touched only on `queue`.
final class GroupSession: @unchecked Sendable {
    private let queue = DispatchQueue(label: "nwcat.group")
    private let group: NWConnectionGroup
    private let message: NWConnectionGroup.Message
    private let verbose: Bool
    private let latch = ExitLatch()
    private var signalSources: [DispatchSourceSignal] = []
    private var readingInput = false
    private var exitCode: Int32 = 0

    init(descriptor: NWMulticastGroup, parameters: NWParameters, message: NWConnectionGroup.Message, verbose: Bool) {
        group = NWConnectionGroup(with: descriptor, using: parameters)
        self.message = message
        self.verbose = verbose
    }

    func run() -> Int32 {
        group.setReceiveHandler(maximumMessageSize: 65_535, rejectOversizedMessages: false) { [self] message, content, _ in
            received(message, content ?? Data())
        }
        group.stateUpdateHandler = { [self] state in handle(state) }
        group.start(queue: queue)
        signalSources = onTerminationSignals(queue: queue) { [self] in group.cancel() }
        return latch.wait()
    }

    private func handle(_ state: NWConnectionGroup.State) {
        switch state {
        case .ready:
            if verbose { Console.log("group state: ready") }
            guard !readingInput else { return }
            // Sends before the group is ready would fail: standard input waits for it.
            readingInput = true
            StandardInputPump { [self] data, done in
                queue.async { self.send(data, done: done) }
            }.start()
        case .waiting(let error), .failed(let error):
            Console.log("cannot join the group: \(error.debugDescription)")
            exitCode = 1
            group.cancel()
        case .cancelled:
            if verbose { Console.log("group state: cancelled") }
            latch.finish(exitCode)
        case .setup:
            if verbose { Console.log("group state: setup") }
        }
    }

    /// One line: "sender: message".
    private func received(_ message: NWConnectionGroup.Message, _ content: Data) {
        let sender = message.remoteEndpoint?.debugDescription ?? "?"
        var line = Data("\(sender): ".utf8)
        line.append(content)
        if content.last != UInt8(ascii: "\n") { line.append(UInt8(ascii: "\n")) }
        Console.output(line)
        if verbose {
            let ecn = (message.metadata(definition: NWProtocolIP.definition) as? NWProtocolIP.Metadata)?.ecn
            Console.log("\(content.count) bytes from \(sender) to \(message.localEndpoint?.debugDescription ?? "?"), ECN \(ecn.map { "\($0)" } ?? "?")")
        }
    }

    /// A chunk of standard input to the group; the end of input changes nothing (the group
    /// stays until interrupted).
    private func send(_ data: Data?, done: @escaping @Sendable () -> Void) {
        guard let data else {
            if verbose { Console.log("end of input") }
            return done()
        }
        group.send(content: data, message: message) { error in
            if let error { Console.log("send failed: \(error.debugDescription)") }
            done()
        }
    }
}
