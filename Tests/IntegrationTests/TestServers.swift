import Foundation
import Glibc
import Testing

/// Real servers for the live tests, run from the test: nginx with its RTMP module (Debian's
/// `nginx-light` and `libnginx-mod-rtmp`, installed by scripts/test-servers.sh) serving a
/// folder over HTTP and taking RTMP streams, and the ffmpeg CLI listening for SRT or UDP.
enum TestServers {
    /// A TCP port free now on loopback (the system's choice for port 0).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        try #require(bound == 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// nginx serving `root` over HTTP and taking RTMP streams at `rtmp://127.0.0.1:PORT/live/NAME`.
    final class Nginx: @unchecked Sendable {
        // @unchecked Sendable: used by one test at a time, from its own task.
        let prefix: String
        let rtmpPort: Int
        let httpPort: Int
        private var process: Process?

        init(root: String) throws {
            let module = "/usr/lib/nginx/modules/ngx_rtmp_module.so"
            try #require(
                FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") && FileManager.default.fileExists(atPath: module),
                "nginx with its RTMP module is missing: run scripts/test-servers.sh")
            prefix = try HostileOperationsTests.temporaryFolder()
            rtmpPort = try TestServers.freePort()
            httpPort = try TestServers.freePort()
            try FileManager.default.createDirectory(atPath: prefix + "/logs", withIntermediateDirectories: true)
            let configuration = """
                load_module \(module);
                daemon off;
                pid \(prefix)/nginx.pid;
                error_log \(prefix)/logs/error.log;
                events { worker_connections 64; }
                rtmp { server { listen 127.0.0.1:\(rtmpPort); application live { live on; record off; } } }
                http {
                  access_log off;
                  client_body_temp_path \(prefix)/body; proxy_temp_path \(prefix)/proxy; fastcgi_temp_path \(prefix)/fastcgi;
                  uwsgi_temp_path \(prefix)/uwsgi; scgi_temp_path \(prefix)/scgi;
                  types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; }
                  server { listen 127.0.0.1:\(httpPort); location / { root \(root); } }
                }
                """
            try configuration.write(toFile: prefix + "/nginx.conf", atomically: true, encoding: .utf8)
            try start()
        }

        deinit {
            stop()
            try? FileManager.default.removeItem(atPath: prefix)
        }

        func start() throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            process.arguments = ["-p", prefix, "-c", prefix + "/nginx.conf", "-e", prefix + "/logs/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            self.process = process
            // Listening once both ports answer.
            for _ in 0..<100 where !(TestServers.answers(rtmpPort) && TestServers.answers(httpPort)) { usleep(50_000) }
            try #require(
                TestServers.answers(rtmpPort) && TestServers.answers(httpPort),
                "nginx did not start: \((try? String(contentsOfFile: prefix + "/logs/error.log", encoding: .utf8)) ?? "")")
        }

        func stop() {
            guard let process, process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
            self.process = nil
        }
    }

    /// Whether something listens on loopback `port`.
    static func answers(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A process started in the background (a listener, a player), its output to `log`.
    static func launch(_ executable: String, _ arguments: [String], log: String? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let log {
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardOutput = handle
            process.standardError = handle
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        return process
    }

    /// The body of `GET http://127.0.0.1:port/path` and its status (curl-free: a plain socket).
    static func get(port: Int, path: String) -> (status: Int, body: String)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // A server that never answers fails the request instead of holding the test.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        guard
            withUnsafePointer(
                to: &address, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } })
                == 0
        else { return nil }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { return nil }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            response += chunk[0..<n]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let head = text.range(of: "\r\n\r\n"), let status = Int(text.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return (status, String(text[head.upperBound...]))
    }
}
