import PeerSupport

/// Reads `count` every 300 ms until it stops changing and returns that value: how the send
/// tests tell that a peer reading nothing has filled the socket buffers and the send budget.
func settledCount(_ count: () -> Int) async -> Int {
    var last = -1
    while true {
        await pause(milliseconds: 300)
        let now = count()
        if now == last { return now }
        last = now
    }
}
