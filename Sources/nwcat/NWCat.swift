import ArgumentParser
import Network

@main
struct NWCat: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nwcat",
        abstract: "A netcat built on Apple's Network framework API (NWConnection, NWListener) for Linux.",
        discussion: """
            nwcat moves bytes between standard input/output and a network connection, like nc, \
            but every socket it touches goes through the `Network` module: NWConnection for \
            `connect`, NWListener for `listen`. It is both a handy tool and a live check that \
            the framework behaves as on Apple platforms.

            Standard output carries only the data received from the network; diagnostics \
            (--verbose state changes, errors) go to standard error, so nwcat can sit in a pipe.

            Examples:
              nwcat listen 7777 --echo --verbose          # an echo server
              echo hello | nwcat connect 127.0.0.1 7777   # prints the echo
              nwcat connect example.com 80 < request.txt  # send a file, print the reply
              nwcat listen 9999 --udp                     # print datagrams to port 9999
              nwcat group 239.1.2.3 5000 --ecn ect0       # join a multicast group, chat on it
              echo hi | nwcat connect --quic --datagram --alpn echo host 4433  # one QUIC datagram

            Exit status: 0 when the connection closed cleanly, 1 when it failed (the NWError is \
            printed to standard error), 64 on a usage error.
            """,
        subcommands: [Connect.self, Listen.self, Group.self, Monitor.self, Demo.self]
    )
}

/// Options every subcommand has.
struct CommonOptions: ParsableArguments {
    @Flag(help: "Use UDP instead of TCP (each chunk read from standard input is one datagram).")
    var udp = false

    @Flag(
        name: [.customShort("v"), .customLong("verbose")],
        help: "Print state changes (preparing, ready, ...) to standard error; connect also prints the establishment report and a `timing key=value ...` line for scripts. Also turns on the engine's log on standard error: -v at debug level (the connection's story), -vv at trace (adds every send and receive, byte counts only).")
    var verbosity: Int

    /// Whether state changes and reports are printed.
    var verbose: Bool { verbosity > 0 }

    @Flag(help: "TCP: use Multipath TCP (multipathServiceType = .handover); it falls back to TCP with a peer that does not speak it.")
    var multipath = false

    /// Applies the options that go into the parameters.
    func apply(to parameters: NWParameters) {
        if multipath { parameters.multipathServiceType = .handover }
    }
}
