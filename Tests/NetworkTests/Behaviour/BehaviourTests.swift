import Testing

/// The behaviour suite: every data-path rule and every state transition of `NWConnection` and
/// `NWListener`, checked over real loopback sockets against raw Glibc peers and `socat`.
///
/// The nested suites run one at a time (`.serialized` applies to everything nested here): some
/// of them count file descriptors or measure resident memory, which other tests running at the
/// same time would disturb, and a loaded two-core machine keeps its timing margins this way.
///
/// Run with `swift test --skip-build --filter Behaviour`.
@Suite("Behaviour", .serialized)
enum BehaviourTests {}
