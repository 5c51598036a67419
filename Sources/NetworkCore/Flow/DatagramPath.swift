/// A UDP flow's ways around its event loop: the datagrams it read ahead for receives on any
/// thread (`ready`, touched under the inbox lock), and the writer that puts a plain
/// connection's datagrams straight on its socket (`writer`, used on the loop only). Kept in
/// the flow's inbox, in the one field a TCP flow uses for its `DirectSocket`, and allocated the
/// first time either is needed: an idle TCP connection pays nothing for it.
package final class DatagramPath: @unchecked Sendable {
    package var ready = ReadyDatagrams()
    var writer: DatagramWriter?

    package init() {}
}
