import NIOCore
import NIOHTTP1
import NIOPosix
import Playhead

/// The channel's status endpoint, on the host and port `--status` names (no authentication: bind
/// it to loopback or a private network): a small HTTP/1.1 server (swift-nio's HTTP/1 codec
/// parses the requests) answering `GET` for the paths the channel routes (`/status`, `/metrics`,
/// `/health`), 404 for others, 405 for other methods. One event loop thread of its own; the
/// answers are made from snapshots (never while the channel's threads wait on it).
///
/// It faces probes on open networks, so it holds little for anyone: at most
/// ``maximumConnections`` at once (a new one past them closes the oldest), and each for at most
/// ``connectionLifetime`` (a client that sends no request, or sends it a byte at a time, is cut
/// off): idle connections by the thousand can never take the process's descriptors, nor keep a
/// probe from its answer.
final class StatusServer: Sendable {
    struct Response: Sendable {
        var status: HTTPResponseStatus
        var contentType: String
        var body: String
    }

    typealias Route = @Sendable (_ path: String) -> Response?

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// The port it listens on (the one asked for, or the one the system gave for port 0).
    let port: Int

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.group = group
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    /// Connections served at once; a new one past them closes the oldest.
    static let maximumConnections = 64
    /// How long a connection may stay open (a request is answered at once: this bounds clients
    /// that send nothing, or a byte at a time).
    static let connectionLifetime: TimeAmount = .seconds(2)

    /// Listens on `host:port`; `route` answers each path.
    static func start(host: String, port: Int, route: @escaping Route) async throws -> StatusServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The connections open now, oldest first.
        let open = Locked<[ObjectIdentifier: (order: Int, channel: any Channel)]>([:])
        let counter = Locked(0)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    // At the cap, the oldest connection makes room (a probe answers in
                    // milliseconds: what has lasted longest is what holds a place for nothing).
                    let order = counter.withLock { value -> Int in
                        value += 1
                        return value
                    }
                    let evicted = open.withLock { connections -> (any Channel)? in
                        var oldest: (key: ObjectIdentifier, order: Int, channel: any Channel)?
                        if connections.count >= Self.maximumConnections {
                            for (key, entry) in connections where oldest.map({ entry.order < $0.order }) ?? true {
                                oldest = (key, entry.order, entry.channel)
                            }
                            if let oldest { connections[oldest.key] = nil }
                        }
                        connections[ObjectIdentifier(channel)] = (order, channel)
                        return oldest?.channel
                    }
                    evicted?.close(promise: nil)
                    channel.closeFuture.whenComplete { _ in open.withLock { $0[ObjectIdentifier(channel)] = nil } }
                    let deadline = channel.eventLoop.scheduleTask(in: Self.connectionLifetime) { channel.close(promise: nil) }
                    channel.closeFuture.whenComplete { _ in deadline.cancel() }
                    return channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true).flatMap {
                        channel.pipeline.addHandler(StatusHandler(route: route))
                    }
                }
                .childChannelOption(.maxMessagesPerRead, value: 1)
                .bind(host: host, port: port).get()
            return StatusServer(group: group, channel: channel)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// Answers one request per connection turn: the head is routed, the body (if any) ignored.
private final class StatusHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let route: StatusServer.Route

    init(route: @escaping StatusServer.Route) { self.route = route }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "")
        var response: StatusServer.Response
        if head.method != .GET && head.method != .HEAD {
            response = .init(status: .methodNotAllowed, contentType: "text/plain", body: "only GET\n")
        } else {
            response = route(path) ?? .init(status: .notFound, contentType: "text/plain", body: "no such path: /status, /metrics or /health\n")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.utf8.count))
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: response.status, headers: headers))), promise: nil)
        if head.method != .HEAD {
            let buffer = context.channel.allocator.buffer(string: response.body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
