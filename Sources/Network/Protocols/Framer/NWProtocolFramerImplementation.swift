/// A framer: the class you write to parse and write your protocol's messages. The connection
/// makes one for itself with `init(framer:)` and calls it on its internal context, never on two
/// threads at once.
public protocol NWProtocolFramerImplementation: AnyObject {
    /// The protocol's name, used in logs and as its definition's name.
    static var label: String { get }

    /// Creates the framer of one connection.
    init(framer: NWProtocolFramer.Instance)

    /// The protocols below are up. Return `.ready`, or `.willMarkReady` to run a handshake of
    /// your own first (writing with `writeOutput` and reading in `handleInput`).
    func start(framer: NWProtocolFramer.Instance) -> NWProtocolFramer.StartResult

    /// Input arrived: parse it with `parseInput` and hand messages up with `deliverInput` or
    /// `deliverInputNoCopy`. Return how many bytes you need before you are asked again.
    func handleInput(framer: NWProtocolFramer.Instance) -> Int

    /// The application sent a message of `messageLength` bytes: write your header and its
    /// bytes (`writeOutput`, `writeOutputNoCopy`).
    func handleOutput(framer: NWProtocolFramer.Instance, message: NWProtocolFramer.Message, messageLength: Int, isComplete: Bool)

    /// A wake-up you asked for with `scheduleWakeup` is due.
    func wakeup(framer: NWProtocolFramer.Instance)

    /// The connection is closing. Return true to stop at once.
    func stop(framer: NWProtocolFramer.Instance) -> Bool

    /// The framer is done for good; release what it holds.
    func cleanup(framer: NWProtocolFramer.Instance)
}
