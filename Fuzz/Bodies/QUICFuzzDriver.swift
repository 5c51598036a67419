import NIOCore
import NetworkCore

/// One `QUICConnectionBinding` under a QUIC fuzz body (client or server side): steps it after
/// each input and checks, besides "no crash", that the connection ends at most once and nothing
/// happens after its end, that every packet it sends fits a UDP datagram, and, once the input
/// stops, that its timers end it.
struct QUICFuzzDriver {
    let binding: QUICConnectionBinding
    /// The clock the binding is given; bodies advance it between datagrams.
    var now: UInt64
    private(set) var ended = false
    /// Packets the binding sent so far.
    private(set) var packetsSent = 0

    /// The bindings' settings: the defaults, with QUIC datagrams accepted, so DATAGRAM frames
    /// in the input reach the code that takes them.
    static let limits: QUICSettings = {
        var limits = QUICSettings()
        limits.maxDatagramFrameSize = 65_535
        return limits
    }()

    init(_ binding: QUICConnectionBinding, now: UInt64) {
        self.binding = binding
        self.now = now
    }

    /// Lets the binding write what it has and takes its events, checking them.
    mutating func step() {
        binding.writePackets(now: now)
        for packet in binding.takePackets() {
            packetsSent += 1
            FuzzFailure.check(packet.readableBytes > 0 && packet.readableBytes <= 65_527, "a packet does not fit a datagram")
        }
        for event in binding.takeEvents() {
            FuzzFailure.check(!ended, "an event after the connection ended: \(event)")
            if case .closed = event { ended = true }
            if case .datagram(let bytes) = event {
                FuzzFailure.check(bytes.readableBytes <= 65_535, "a datagram above the announced frame size")
            }
        }
        FuzzFailure.check(ended == (binding.phase == .closed), "the phase and the end disagree")
    }

    /// Hands the binding a datagram from `source` at `now`, then steps it.
    mutating func receive(_ datagram: [UInt8], from source: SocketAddress) {
        binding.receive(ByteBuffer(bytes: datagram), from: source, now: now)
        step()
    }

    /// Silence from here: the handshake timeout (10 s) or an earlier end must come.
    mutating func runTimersToEnd() {
        var rounds = 0
        while !ended, let expiry = binding.expiry, rounds < 1_000 {
            now = max(now, expiry)
            binding.handleExpiry(now: now)
            step()
            rounds += 1
        }
        FuzzFailure.check(ended, "the connection outlived its timers")
    }

    /// The next length-prefixed field of an input (`lengthBytes` of big-endian length, then the
    /// bytes); nil when the input has no whole field left.
    static func take(_ input: inout ArraySlice<UInt8>, lengthBytes: Int) -> [UInt8]? {
        guard input.count >= lengthBytes else { return nil }
        let length = input.prefix(lengthBytes).reduce(0) { $0 << 8 | Int($1) }
        input = input.dropFirst(lengthBytes)
        guard input.count >= length else { return nil }
        defer { input = input.dropFirst(length) }
        return Array(input.prefix(length))
    }
}
