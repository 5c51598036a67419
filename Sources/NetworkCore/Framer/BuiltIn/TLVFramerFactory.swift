/// Makes a `TLVFramer` per connection: what a flow's configuration lists (`FlowConfiguration
/// .framers`) to run TLV, or the Coder's framing over a stream (`CoderFraming`).
package struct TLVFramerFactory: HostedFramerFactory {
    package let layout: TLVLayout
    package let label: String

    package init(layout: TLVLayout = .tlv, label: String = "TLV") {
        self.layout = layout
        self.label = label
    }

    package func makeFramer(host: FramerHost) -> any HostedFramer {
        TLVFramer(layout: layout)
    }
}
