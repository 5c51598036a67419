/// Stops the process when a fuzz body finds a parser breaking one of its promises (not a crash
/// but a wrong answer, such as a decoded message that does not survive re-encoding): libFuzzer
/// then keeps the input like any crash, and the corpus replay test fails on it.
enum FuzzFailure {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("fuzz invariant broken: \(message())") }
    }
}
