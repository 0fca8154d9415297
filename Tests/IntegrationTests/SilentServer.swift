import Glibc

/// A loopback TCP server that accepts connections (through the kernel's backlog) and never sends
/// a byte: a source whose opening blocks until interrupted.
final class SilentServer: Sendable {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            _ = Glibc.close(fd)
            throw PlayheadErrorForTests.couldNotListen
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = UInt16(bigEndian: address.sin_port)
    }

    func close() { _ = Glibc.close(fd) }

    /// Accepts the pending connection and waits until the peer closes it. `true` when it closed
    /// within `timeoutMilliseconds`: proof that the client really gave up, not just its caller.
    func peerClosesConnection(timeoutMilliseconds: Int32) -> Bool {
        var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pending, 1, timeoutMilliseconds) == 1 else { return false }
        let connection = accept(fd, nil, nil)
        guard connection >= 0 else { return false }
        defer { _ = Glibc.close(connection) }
        var event = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        guard poll(&event, 1, timeoutMilliseconds) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(connection, &byte, 1, 0) == 0
    }
}

enum PlayheadErrorForTests: Error {
    case couldNotListen
}
