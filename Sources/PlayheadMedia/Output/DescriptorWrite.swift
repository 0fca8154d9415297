import Glibc

/// Writes all of a buffer to a descriptor: the one write loop of the output files and streams.
package enum DescriptorWrite {
    /// Writes all of `bytes` to `descriptor`, going on after an interruption and waiting while a
    /// non-blocking descriptor is full. Returns 0, or the `errno` that stopped it.
    package static func all(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(descriptor, base + offset, bytes.count - offset)
            if n >= 0 {
                offset += n
                continue
            }
            switch errno {
            case EINTR:
                continue
            case EAGAIN:
                var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, 1000)
            default:
                return errno
            }
        }
        return 0
    }
}
