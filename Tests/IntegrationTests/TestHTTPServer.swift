import Foundation
import Glibc
import Testing

/// A small HTTP/1.1 server on 127.0.0.1, started and stopped by a test, serving files of a folder
/// with range support — and misbehaving on request, by the first part of the path:
///
/// - `/ok/NAME`: the file, honouring `Range: bytes=A-` and `bytes=A-B` (206);
/// - `/silent/NAME`: reads the request and never answers;
/// - `/stall-headers/NAME`: sends the headers, then nothing;
/// - `/stall-body/NAME`: sends the headers and half of the body, then nothing;
/// - `/slow/NAME`: answers every range as `/ok/`, 4 KiB every 100 ms (about 40 KB/s: never a
///   stall, slower than a picture of a few megabits a second);
/// - `/flaky/NAME`: as `/silent/` while ``isBroken``, as `/ok/` after;
/// - `/stall-half/NAME`: answers every range as `/ok/` up to the file's middle byte, then sends
///   nothing (a source that stops sending in the middle of the file, whatever ranges are asked);
/// - `/drop/NAME`: the first request gets half of the body and the connection closed; later
///   (range) requests are answered in full, as `/ok/`;
/// - `/lie/NAME`: promises 100,000 bytes more than the file in `Content-Length`, sends the file
///   and closes; a range request past the end gets 416;
/// - `/loop/NAME`: redirects to itself (302), forever;
/// - `/norange/NAME`: ignores `Range`: every request gets the whole file (200);
/// - `/liar/NAME`: ignores `Range` and promises ten times the file's length in `Content-Length`,
///   sends the file and closes;
/// - `/capped/NAME`: answers every range with at most its first 16 KiB (a true `Content-Range`);
/// - `/nolength/NAME`: answers ranges without telling the size (`Content-Range: bytes A-B/*`, no
///   `Content-Length`), closing the connection after the body;
/// - `/changing/NAME`: a range from past byte 100,000 gets a file 1,000 bytes longer (the file
///   was replaced on the server while a client read it);
/// - `/trickle/NAME`: a range from past byte 100,000 gets its first 20,000 bytes at once, then a
///   byte every 100 ms (earlier ranges are answered as `/ok/`).
///
/// A query string is ignored. Bytes sent and requests are counted (``sent``), with a send
/// buffer of `sendBuffer` bytes (small, so that the count is close to what the client read
/// rather than what the kernel queued; 256 KB is what a loaded server on a real network has in
/// flight).
final class TestHTTPServer: @unchecked Sendable {
    // @unchecked Sendable: `listener` and `port` are set in init and only read after; `drops`
    // and `stopped` are touched only under `lock`; each connection's socket belongs to its thread.
    let port: UInt16
    private let listener: Int32
    private let root: String
    private let lock = NSLock()
    private var drops: Set<String> = []
    private var broken = true
    private var stopped = false
    private var open: [Int32] = []
    private var bodyBytes = 0
    private var rangeRequests = 0
    private var requests = 0
    private var paths: [String] = []
    private let sendBuffer: Int32

    /// The path of each request (its query left out), in the order they came, since the last
    /// ``resetCount()``.
    var requestedPaths: [String] { lock.withLock { paths } }

    /// Bytes sent (headers and bodies), requests with a `Range` from a byte other than 0, and
    /// requests in all, since the last ``resetCount()``.
    var sent: (bytes: Int, rangeRequests: Int, requests: Int) { lock.withLock { (bodyBytes, rangeRequests, requests) } }

    func resetCount() {
        lock.withLock {
            bodyBytes = 0
            rangeRequests = 0
            requests = 0
            paths = []
        }
    }

    init(root: String, sendBuffer: Int32 = 65536) throws {
        self.root = root
        self.sendBuffer = sendBuffer
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            _ = Glibc.close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    func url(_ mode: String, _ name: String) -> String { "http://127.0.0.1:\(port)/\(mode)/\(name)" }

    /// Whether `/flaky/` answers nothing (true at first).
    var isBroken: Bool {
        get { lock.withLock { broken } }
        set { lock.withLock { broken = newValue } }
    }

    /// Stops accepting and closes every connection (stalled ones included).
    func stop() {
        let sockets = lock.withLock { () -> [Int32] in
            stopped = true
            return open
        }
        shutdown(listener, Int32(SHUT_RDWR))
        _ = Glibc.close(listener)
        for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            var buffer = sendBuffer
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, socklen_t(MemoryLayout<Int32>.size))
            let keep = lock.withLock { () -> Bool in
                if stopped { return false }
                open.append(fd)
                return true
            }
            guard keep else {
                _ = Glibc.close(fd)
                return
            }
            Thread { [self] in
                serve(fd)
                lock.withLock { open.removeAll { $0 == fd } }
                _ = Glibc.close(fd)
            }.start()
        }
    }

    private func serve(_ fd: Int32) {
        // One request per connection (Connection: close), enough for FFmpeg's HTTP client.
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.containsHeaderEnd {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return }
            request.append(contentsOf: buffer[0..<n])
            if request.count > 65536 { return }
        }
        let text = String(decoding: request, as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2 else { return }
        let path = String(parts[1].prefix(while: { $0 != "?" }))
        lock.withLock {
            requests += 1
            paths.append(path)
        }
        let pieces = path.split(separator: "/", maxSplits: 1).map(String.init)
        guard pieces.count == 2 else { return send(fd, status: "404 Not Found", headers: [], body: []) }
        let (mode, name) = (pieces[0], pieces[1])
        if mode == "loop" { return send(fd, status: "302 Found", headers: ["Location: \(path)"], body: []) }
        if mode == "silent" || mode == "flaky" && lock.withLock({ broken }) { return waitForClose(fd) }
        guard let data = FileManager.default.contents(atPath: root + "/" + name) else {
            return send(fd, status: "404 Not Found", headers: [], body: [])
        }
        var bytes = [UInt8](data)
        if mode == "norange" || mode == "liar" {
            let length = mode == "liar" ? 10 * bytes.count : bytes.count
            writeAll(fd, head("200 OK", ["Content-Type: application/octet-stream", "Content-Length: \(length)"]) + bytes)
            return
        }
        var start = 0, last = bytes.count - 1
        var ranged = false
        if let range = lines.first(where: { $0.lowercased().hasPrefix("range: bytes=") }) {
            let bounds = range.dropFirst("range: bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
            start = Int(bounds.first ?? "0") ?? 0
            if bounds.count > 1, let end = Int(bounds[1]) { last = min(end, bytes.count - 1) }
            ranged = start > 0 || last < bytes.count - 1
        }
        if mode == "changing", start > 100_000 {
            bytes += [UInt8](repeating: 0, count: 1000)
            last = min(last == bytes.count - 1001 ? bytes.count - 1 : last, bytes.count - 1)
        }
        if mode == "capped" { last = min(last, start + (16 << 10) - 1) }
        if start >= bytes.count, start > 0 {
            return send(fd, status: "416 Range Not Satisfiable", headers: ["Content-Range: bytes */\(bytes.count)"], body: [])
        }
        let body = Array(bytes[start...max(start, last)])
        if start > 0 { lock.withLock { rangeRequests += 1 } }
        var headers = ["Accept-Ranges: bytes", "Content-Type: application/octet-stream"]
        let status = ranged ? "206 Partial Content" : "200 OK"
        if ranged { headers.append("Content-Range: bytes \(start)-\(start + body.count - 1)/\(bytes.count)") }
        switch mode {
        case "nolength":
            let range = ranged ? ["Content-Range: bytes \(start)-\(start + body.count - 1)/*"] : []
            writeAll(fd, head(status, ["Content-Type: application/octet-stream"] + range) + body)
        case "trickle" where start > 100_000:
            writeAll(fd, head(status, headers + ["Content-Length: \(body.count)"]) + body.prefix(20_000))
            for byte in body.dropFirst(20_000) {
                usleep(100_000)
                guard lock.withLock({ !stopped }), writeAll(fd, [byte]) else { return }
            }
        case "stall-headers":
            writeAll(fd, head(status, headers + ["Content-Length: \(body.count)"]))
            waitForClose(fd)
        case "stall-body":
            writeAll(fd, head(status, headers + ["Content-Length: \(body.count)"]) + body.prefix(body.count / 2))
            waitForClose(fd)
        case "slow":
            guard writeAll(fd, head(status, headers + ["Content-Length: \(body.count)"])) else { return }
            var sent = 0
            while sent < body.count {
                usleep(100_000)
                let next = min(body.count, sent + 4096)
                guard lock.withLock({ !stopped }), writeAll(fd, Array(body[sent..<next])) else { return }
                sent = next
            }
        case "stall-half":
            writeAll(fd, head(status, headers + ["Content-Length: \(body.count)"]) + body.prefix(max(0, bytes.count / 2 - start)))
            waitForClose(fd)

        case "drop":
            let first = lock.withLock { drops.insert(name).inserted }
            if first {
                writeAll(fd, head(status, headers + ["Content-Length: \(body.count)"]) + body.prefix(body.count / 2))
            } else {
                send(fd, status: status, headers: headers, body: body)
            }
        case "lie":
            writeAll(fd, head(status, headers + ["Content-Length: \(body.count + 100_000)"]) + body)
        default:
            send(fd, status: status, headers: headers, body: body)
        }
    }

    private func head(_ status: String, _ headers: [String]) -> [UInt8] {
        Array(("HTTP/1.1 \(status)\r\n" + (headers + ["Connection: close"]).map { $0 + "\r\n" }.joined() + "\r\n").utf8)
    }

    private func send(_ fd: Int32, status: String, headers: [String], body: [UInt8]) {
        writeAll(fd, head(status, headers + ["Content-Length: \(body.count)"]) + body)
    }

    /// Sends all of `bytes`; false when the client went away.
    @discardableResult
    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            lock.withLock { bodyBytes += n }
            offset += n
        }
        return true
    }

    /// Holds the connection open, sending nothing, until the client or `stop` closes it.
    private func waitForClose(_ fd: Int32) {
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) > 0 {}
    }
}

private extension [UInt8] {
    var containsHeaderEnd: Bool {
        guard count >= 4 else { return false }
        for i in 0...(count - 4) where self[i] == 13 && self[i + 1] == 10 && self[i + 2] == 13 && self[i + 3] == 10 { return true }
        return false
    }
}

/// The server the source tests lean on does what it says: whole files, ranges, the lie about
/// the length, the redirect — checked byte for byte against the file, over a raw socket.
@Suite struct TestHTTPServerTests {
    /// One request; the whole response (the server closes every connection), split at the headers.
    static func get(_ server: TestHTTPServer, _ path: String, range: String? = nil) throws -> (head: String, body: [UInt8]) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { _ = Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = server.port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0, "cannot connect to the test server")
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(range.map { "Range: bytes=\($0)\r\n" } ?? "")\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            response.append(contentsOf: buffer[0..<n])
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        let end = try #require(
            (0...(max(0, response.count - 4))).first { Array(response[$0..<min($0 + 4, response.count)]) == separator }, "no header end")
        return (String(decoding: response[..<end], as: UTF8.self), Array(response[(end + 4)...]))
    }

    @Test func servesFilesRangesAndTheAgreedMisbehaviours() async throws {
        let server = try TestHTTPServer(root: Fixtures.sampleMedia.path)
        defer { server.stop() }
        let file = try #require(FileManager.default.contents(atPath: try Fixtures.clip("h264-aac.mp4"))).map { $0 }
        let whole = try await offPool { try Self.get(server, "/ok/h264-aac.mp4") }
        #expect(whole.head.hasPrefix("HTTP/1.1 200") && whole.head.contains("Content-Length: \(file.count)"))
        #expect(whole.body == file)
        let tail = try await offPool { try Self.get(server, "/ok/h264-aac.mp4", range: "1000-") }
        #expect(tail.head.hasPrefix("HTTP/1.1 206") && tail.head.contains("Content-Range: bytes 1000-\(file.count - 1)/\(file.count)"))
        #expect(tail.body == Array(file[1000...]))
        let past = try await offPool { try Self.get(server, "/ok/h264-aac.mp4", range: "\(file.count)-") }
        #expect(past.head.hasPrefix("HTTP/1.1 416"))
        let bounded = try await offPool { try Self.get(server, "/ok/h264-aac.mp4", range: "1000-1999") }
        #expect(bounded.head.hasPrefix("HTTP/1.1 206") && bounded.head.contains("Content-Range: bytes 1000-1999/\(file.count)"))
        #expect(bounded.body == Array(file[1000..<2000]))
        let ignored = try await offPool { try Self.get(server, "/norange/h264-aac.mp4", range: "1000-1999") }
        #expect(ignored.head.hasPrefix("HTTP/1.1 200") && ignored.body == file)
        let liar = try await offPool { try Self.get(server, "/liar/h264-aac.mp4", range: "1000-") }
        #expect(liar.head.hasPrefix("HTTP/1.1 200") && liar.head.contains("Content-Length: \(10 * file.count)") && liar.body == file)
        let lie = try await offPool { try Self.get(server, "/lie/h264-aac.mp4") }
        #expect(lie.head.contains("Content-Length: \(file.count + 100_000)") && lie.body == file)
        let loop = try await offPool { try Self.get(server, "/loop/h264-aac.mp4") }
        #expect(loop.head.hasPrefix("HTTP/1.1 302") && loop.head.contains("Location: /loop/h264-aac.mp4"))
        let dropped = try await offPool { try Self.get(server, "/drop/h264-aac.mp4") }
        #expect(dropped.body == Array(file.prefix(file.count / 2)), "the first request of /drop/ gets half and a closed connection")
        let missing = try await offPool { try Self.get(server, "/ok/no-such-file.mp4") }
        #expect(missing.head.hasPrefix("HTTP/1.1 404"))
    }
}
