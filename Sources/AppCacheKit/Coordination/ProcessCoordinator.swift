#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How the processes (an app and its extensions) and cache instances that share one version
/// directory take turns changing it, and learn that another one has.
///
/// One file, `version-<schema>/.lock`, serves both ends:
///
/// - **The write lock.** Every batch of disk changes (archive writes and removals, journal
///   appends and compactions, sweeps of temporary files) runs while holding an exclusive
///   `flock` on the file. `flock` locks belong to an open file, so two instances in one process
///   exclude each other as two processes do, and the kernel releases the lock of a process that
///   dies holding it: a process killed mid-write never blocks the others. Reads take no lock:
///   archives are replaced by `rename`, so a reader sees a whole old file or a whole new one.
///   While the lock is held, no temporary file of a live writer exists anywhere else, so the
///   holder may remove every temporary file it finds: they are leftovers of a crash.
/// - **The change counter.** The first 8 bytes of the file, mapped shared into every process
///   (`mmap`), count the batches that changed the disk. A writer adds one at the end of each such
///   batch, after its journal lines are written, while still holding the lock (so increments
///   never race). A memory hit compares the counter with the value its entry was last checked
///   against: equal means no process changed anything since, and the hit stands, at the cost of
///   one load. Different means the entry is checked against its archive file once (see
///   ``FileIdentity``) before it is served. This is the shape of SQLite's shared-memory WAL
///   index and of MMKV's multi-process mode, reduced to the one number a cache needs.
///
/// - **The crash flag.** The next 8 bytes say whether a batch is under way: the lock holder
///   sets them when its batch starts and clears them when it ends. Finding them set when taking
///   the lock means the last holder died mid-batch (the kernel released its lock), so the new
///   holder settles what that batch left: the intents it had written to the journal, its
///   temporary files (see ``DiskBook``). Without a crash, a batch reads nothing it did not write.
/// - **The journal's compacted size.** The next 8 bytes hold the journal's size right after its
///   last compaction, so that whichever process sees it grown well past that compacts it.
/// - **The layout version.** The next 8 bytes say which naming of archive files the directory
///   holds; an older one is migrated once, under the lock, when a cache opens.
///
/// The words are read and written with plain aligned 8-byte loads and stores, which every
/// supported processor performs as single accesses; only the lock holder writes them, so writes
/// never race. Their values are untrusted like any file's bytes: a wrong one costs a needless
/// check or compaction, never wrong data. A process that truncated the file while another has it
/// mapped would make that one fault: the file is the cache's own, created owner-only, and never
/// truncated by the cache.
final class ProcessCoordinator: @unchecked Sendable {
    /// The lock file's name in the version directory.
    static let fileName = ".lock"

    /// The bytes the file is grown to, so that the mapped counter is always inside it.
    private static let fileSize = 64

    private let descriptor: Int32
    private let mapping: UnsafeMutableRawPointer
    /// Word 0: the change count; 1: the crash flag; 2: the compacted journal size; 3: the
    /// layout version.
    private let words: UnsafeMutablePointer<UInt64>

    /// Opens (creating it if needed) the lock file of the version directory `fileSystem` holds.
    init(fileSystem: FileSystem) throws(SystemError) {
        let path = CachePath(directory: nil, name: Self.fileName)
        let display = fileSystem.displayPath(path)
        descriptor = try fileSystem.openForUpdate(path)
        var info = stat()
        if fstat(descriptor, &info) != 0 || (Int(info.st_size) < Self.fileSize && ftruncate(descriptor, off_t(Self.fileSize)) != 0) {
            let failure = SystemError.last("ftruncate", display)
            close(descriptor)
            throw failure
        }
        guard let mapped = mmap(nil, Self.fileSize, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
            let failure = SystemError.last("mmap", display)
            close(descriptor)
            throw failure
        }
        mapping = mapped
        words = mapped.bindMemory(to: UInt64.self, capacity: 4)
    }

    deinit {
        munmap(mapping, Self.fileSize)
        close(descriptor)
    }

    /// How many batches have changed the disk, as far as this process can see now.
    ///
    /// - Complexity: one load.
    @inline(__always)
    var changeCount: UInt64 {
        words[0]
    }

    /// Waits for, then takes, the write lock.
    func lock() {
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
    }

    /// Releases the write lock.
    func unlock() {
        flock(descriptor, LOCK_UN)
    }

    /// Counts one more batch that changed the disk. Call while holding the lock.
    ///
    /// - Returns: the new count.
    @discardableResult
    func didChange() -> UInt64 {
        let next = words[0] &+ 1
        words[0] = next
        return next
    }

    /// Marks a batch as under way. Call right after taking the lock.
    ///
    /// - Returns: whether the previous holder died with its batch unfinished.
    func beginBatch() -> Bool {
        let crashed = words[1] != 0
        words[1] = 1
        return crashed
    }

    /// Marks the batch as finished. Call before releasing the lock.
    func endBatch() {
        words[1] = 0
    }

    /// Which naming of archive files the version directory holds (0: the first release's).
    var layoutVersion: UInt64 {
        get { words[3] }
        set { words[3] = newValue }
    }

    /// The journal's size right after its last compaction (0: not known).
    var compactedJournalSize: Int {
        get { Int(clamping: words[2]) }
        set { words[2] = UInt64(max(newValue, 0)) }
    }
}
