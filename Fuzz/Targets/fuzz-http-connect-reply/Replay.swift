import NetworkFuzzing

/// libFuzzer's entry point: one input for the `http-connect-reply` target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.httpConnectReply.run(data, size)
    return 0
}

// Built with libFuzzer (NETWORK_LIBFUZZER defined), libFuzzer's main drives the entry point;
// without it, this main replays files (the seed corpus by default).
#if !NETWORK_LIBFUZZER
@main
enum Replay {
    static func main() { FuzzReplay.main(.httpConnectReply) }
}
#endif
