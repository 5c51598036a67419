@testable import NetworkCore

/// An address lookup that runs a script instead of asking DNS: tests hand the racer chosen
/// addresses at chosen times. Nothing to cancel.
struct ScriptedAddressLookup: AddressLookup {
    let script: @Sendable (_ host: String, _ port: Int, _ sink: AddressLookupSink) -> Void

    init(_ script: @escaping @Sendable (_ host: String, _ port: Int, _ sink: AddressLookupSink) -> Void) {
        self.script = script
    }

    func start(_ host: String, port: Int, sink: AddressLookupSink) -> RunningAddressLookup {
        script(host, port, sink)
        return .finished
    }
}
