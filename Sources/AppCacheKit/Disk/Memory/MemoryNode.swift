import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One file or directory of a ``MemoryVolume``.
///
/// Thread safety: changed and read only under ``MemoryFiles``' lock, except the bytes of a file
/// mapped into memory (the lock file's shared words), which their users reach atomically.
final class MemoryNode: @unchecked Sendable {
    enum Kind { case file, directory }

    let kind: Kind
    /// The inode number `stat` gives.
    let number: UInt64
    /// The device number of the volume.
    let device: UInt64
    /// A directory's entries.
    var children: [String: MemoryNode] = [:]
    /// A file's bytes: `count` of them at `bytes`, which holds `capacity`.
    private(set) var bytes: UnsafeMutableRawPointer?
    private(set) var capacity = 0
    private(set) var count = 0
    /// How many mappings of the file are live: its bytes must not move meanwhile.
    var mappings = 0
    var modified: timespec
    var changed: timespec
    /// Who holds the `flock`: one exclusive open file, or shared ones.
    var exclusiveHolder: ObjectIdentifier?
    var sharedHolders: Set<ObjectIdentifier> = []

    init(kind: Kind, device: UInt64) {
        self.kind = kind
        self.device = device
        number = UniqueNumbers.next()
        modified = MemoryNode.now()
        changed = modified
    }

    deinit {
        bytes?.deallocate()
    }

    /// Sets the file's length to `length`, zero-filling what grows.
    ///
    /// - Returns: `false` when the bytes would have to move while mapped.
    func resize(to length: Int) -> Bool {
        if length > capacity {
            guard mappings == 0 else { return false }
            let grown = max(length, capacity * 2, 64)
            let fresh = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
            if let bytes {
                fresh.copyMemory(from: bytes, byteCount: count)
                bytes.deallocate()
            }
            bytes = fresh
            capacity = grown
        }
        if length > count { (bytes! + count).initializeMemory(as: UInt8.self, repeating: 0, count: length - count) }
        count = length
        touch()
        return true
    }

    /// Copies `length` bytes from `source` to `offset`, growing the file as needed.
    func write(_ source: UnsafeRawPointer, length: Int, at offset: Int) -> Bool {
        guard resize(to: max(count, offset + length)) else { return false }
        if length > 0 { (bytes! + offset).copyMemory(from: source, byteCount: length) }
        return true
    }

    /// Copies up to `length` bytes from `offset` to `target`; returns how many.
    func read(into target: UnsafeMutableRawPointer, length: Int, at offset: Int) -> Int {
        guard offset < count, let bytes else { return 0 }
        let taken = min(length, count - offset)
        target.copyMemory(from: bytes + offset, byteCount: taken)
        return taken
    }

    /// Marks the node changed now.
    func touch() {
        modified = Self.now()
        changed = modified
    }

    /// Fills `info` as `stat` would.
    func describe(into info: inout stat) {
        info = stat()
        info.st_dev = .init(truncatingIfNeeded: device)
        info.st_ino = .init(truncatingIfNeeded: number)
        info.st_mode = kind == .file ? (S_IFREG | 0o600) : (S_IFDIR | 0o700)
        info.st_nlink = 1
        info.st_size = off_t(count)
        info.st_blksize = 4096
        info.st_blocks = .init((count + 511) / 512)
        #if canImport(Darwin)
        info.st_mtimespec = modified
        info.st_ctimespec = changed
        #else
        info.st_mtim = modified
        info.st_ctim = changed
        #endif
    }

    static func now() -> timespec {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return time
    }
}
