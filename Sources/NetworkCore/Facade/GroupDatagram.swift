import Foundation

/// One datagram a multicast group received, in the `Network` module's terms.
package struct GroupDatagram: Sendable {
    /// The payload.
    package let data: Data
    /// Who sent it.
    package let remote: FlowAddress
    /// The address it was sent to (a group's, or the socket's own for unicast), with the group's
    /// port; nil when the kernel did not say.
    package let local: FlowAddress?
    /// Its ECN codepoint and receive time, when it has any to report.
    package let facts: ReceivedDatagramFacts?
}
