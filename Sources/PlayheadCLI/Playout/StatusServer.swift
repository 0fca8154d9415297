import NIOCore
import NIOHTTP1
import NIOPosix

/// The channel's status endpoint, on the host and port `--status` names (no authentication: bind
/// it to loopback or a private network): a small HTTP/1.1 server (swift-nio's HTTP/1 codec
/// parses the requests) answering `GET` for the paths the channel routes (`/status`, `/metrics`,
/// `/health`), 404 for others, 405 for other methods. One event loop thread of its own; the
/// answers are made from snapshots (never while the channel's threads wait on it).
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

    /// Listens on `host:port`; `route` answers each path.
    static func start(host: String, port: Int, route: @escaping Route) async throws -> StatusServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true).flatMap {
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
