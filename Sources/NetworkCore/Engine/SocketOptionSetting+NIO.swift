import NIOCore
import NIOPosix
import NetworkSystem

extension SocketOptionSetting {
    /// The NIO channel option for this setting.
    var channelOption: ChannelOptions.Types.SocketOption {
        ChannelOptions.Types.SocketOption(level: SocketOptionLevel(level), name: name)
    }

    /// The value in NIO's type.
    var channelValue: SocketOptionValue { SocketOptionValue(value) }
}

extension ClientBootstrap {
    /// Applies every setting before the socket connects.
    func applying(_ settings: [SocketOptionSetting]) -> ClientBootstrap {
        settings.reduce(self) { $0.channelOption($1.channelOption, value: $1.channelValue) }
    }
}

extension DatagramBootstrap {
    /// Applies every setting before the socket binds.
    func applying(_ settings: [SocketOptionSetting]) -> DatagramBootstrap {
        settings.reduce(self) { $0.channelOption($1.channelOption, value: $1.channelValue) }
    }
}

extension ServerBootstrap {
    /// Applies `server` settings to the listening socket and `child` settings to accepted ones.
    func applying(server: [SocketOptionSetting], child: [SocketOptionSetting]) -> ServerBootstrap {
        let withServer = server.reduce(self) { $0.serverChannelOption($1.channelOption, value: $1.channelValue) }
        return child.reduce(withServer) { $0.childChannelOption($1.channelOption, value: $1.channelValue) }
    }
}
