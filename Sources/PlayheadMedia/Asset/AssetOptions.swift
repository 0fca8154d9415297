/// How an ``Asset`` opens its source.
public struct AssetOptions: Sendable, Hashable {
    /// Give up opening a source (connecting, the first bytes, reading its stream parameters)
    /// after this long, with `io.timedOut`: every open of the source — the asset's probe, and any
    /// reopen by a session or an image request — is bounded by it. Nil waits as long as it takes.
    public var openTimeout: Duration?
    /// For network sources: give up when no byte has arrived for this long (`io.timedOut`), at
    /// any point of reading. Nil waits as long as it takes.
    public var stallTimeout: Duration?
    /// For HTTP(S): reconnect (resuming at the byte where the connection broke) when a
    /// connection drops, waiting up to this long between tries before giving up. Zero turns
    /// reconnecting off.
    public var reconnectDelayLimit: Duration
    /// Which tracks play (the sound, when the file holds several): every reader of the asset
    /// plays the same ones.
    public var selection = MediaSelection()

    /// 15 s to open, 15 s without a byte, reconnects up to 4 s apart.
    /// - Parameters:
    ///   - openTimeout: how long opening the source may take (``openTimeout``); nil: no limit.
    ///   - stallTimeout: how long a network source may send nothing (``stallTimeout``); nil: no limit.
    ///   - reconnectDelayLimit: the longest wait between two HTTP reconnection tries; zero: no reconnection.
    ///   - selection: which tracks play (``selection``); default: the file's default ones.
    public init(
        openTimeout: Duration? = .seconds(15), stallTimeout: Duration? = .seconds(15), reconnectDelayLimit: Duration = .seconds(4),
        selection: MediaSelection = MediaSelection()
    ) {
        self.openTimeout = openTimeout
        self.stallTimeout = stallTimeout
        self.reconnectDelayLimit = reconnectDelayLimit
        self.selection = selection
    }
}
