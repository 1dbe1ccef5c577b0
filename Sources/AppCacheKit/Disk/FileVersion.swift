import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which file a path held: device, inode, size and modification time, hashed into one word.
///
/// Every write of an archive creates a new file and renames it into place, so the identity
/// changes with every write, by this process or another; comparing it tells whether what
/// memory holds is still what the disk holds.
struct FileVersion: Hashable, Sendable {
    let value: UInt64

    init(value: UInt64) {
        self.value = value
    }

    init(_ info: stat) {
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for word in [UInt64(truncatingIfNeeded: info.st_dev), UInt64(truncatingIfNeeded: info.st_ino),
                     UInt64(truncatingIfNeeded: info.st_size), UInt64(truncatingIfNeeded: time.tv_sec),
                     UInt64(truncatingIfNeeded: time.tv_nsec)] {
            hash = (hash ^ word) &* 0x0000_0100_0000_01B3
            hash ^= hash >> 29
        }
        value = hash
    }
}

/// Which file a path held, by device and inode: stays the same while the file is appended to
/// or rewritten in place, changes when another file is renamed over it.
struct FileID: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
    }

    /// The file a record on disk names (a pack's checkpoint names its pack).
    init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// Which regular file a path held and when it was last modified: what the memory/disk
/// coherence rule compares.
struct FileFacts: Sendable, Equatable {
    var identity: FileVersion
    var modificationDate: Date
}
