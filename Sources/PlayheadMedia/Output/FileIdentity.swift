/// Which file system object a name points at: its device and inode, and a stamp that tells it
/// from a later object given the same (reused) inode — for a file its size and modification time,
/// for a folder the token of the owner mark inside it.
package struct FileIdentity: Codable, Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64
    package var stamp: String?

    package init(device: UInt64, inode: UInt64, stamp: String? = nil) {
        self.device = device
        self.inode = inode
        self.stamp = stamp
    }
}
