#if canImport(Darwin)
import Darwin
#if canImport(notify)
import notify
#endif
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
///   ``FileVersion``) before it is served. This is the shape of SQLite's shared-memory WAL
///   index and of MMKV's multi-process mode, reduced to the one number a cache needs.
///
/// - **The crash flag.** The next 8 bytes say whether a batch is under way: the lock holder
///   sets them when its batch starts and clears them when it ends. Finding them set when taking
///   the lock means the last holder died mid-batch (the kernel released its lock), so the new
///   holder settles what that batch left: the intents it had written to the journal, its
///   temporary files (see ``JournalLedger``). Without a crash, a batch reads nothing it did not write.
/// - **The journal's compacted size.** The next 8 bytes hold the journal's size right after its
///   last compaction, so that whichever process sees it grown well past that compacts it.
/// - **The layout version.** The next 8 bytes say which naming of archive files the directory
///   holds; an older one is migrated once, under the lock, when a cache opens.
/// - **The root's disk budget.** The next 8 bytes hold the `diskByteLimit` of the last app
///   process to open the version directory, the one budget every instance enforces
///   (``recordBudget(_:asExtension:again:)``).
/// - **Who sends.** The next 8 bytes hold the ``SenderLease``: the one process that sends the
///   outbox's queued changes now, and until when.
/// - **Who is present.** Bytes 64 to 127 hold eight slots of ``PeerPresence``: which processes
///   read the root lately or watch it, so that a writer knows when to write back promptly.
///
/// - **Purges.** iOS empties `Library/Caches` under storage pressure and people run "clear
///   cache" tools, so the lock file may vanish, or be replaced, with the directories around it,
///   while caches have it open. After taking the lock, a batch checks that the file at the lock
///   file's path is still the one it locked (``lock(fileSystem:)``); when it is not, it lets go,
///   has the file system recreate the root and version directory, opens the lock file there
///   (creating it) and locks that one. Every process does the same, so they all end up on the
///   one file at the path. The descriptor number and the mapping's address never change: the
///   new file is duplicated onto the old descriptor (`dup2`) and mapped over the old mapping
///   (`MAP_FIXED`), so a reader in another thread sees the old file or the new, never a closed
///   descriptor or an unmapped page.
///
/// Every access to the words is an atomic operation (``SharedWords``): other processes and
/// threads write them while this one reads. Only the lock holder writes them, but for the
/// presence slots (``PeerPresence``), the sender lease (``SenderLease``), removals being
/// recorded (``PendingRemovals``) and the change count a recorded removal moves on. Their values are
/// untrusted like any file's bytes: a wrong one costs a needless check or compaction, never
/// wrong data. A process that truncated the file while another has it mapped would make that
/// one fault: the file is the cache's own, created owner-only, and never truncated by the cache.
///
/// **Read-only roots.** Where the lock file cannot be opened for writing (a read-only volume, a
/// root this process may read but not write), the coordinator maps it read-only if it exists
/// (so changes of processes that may write are still seen) or keeps private words, and never
/// takes the lock or writes a word: the cache makes no disk changes then.
///
/// Thread safety: ``changeCount`` may be read from any thread at any time. Everything else is
/// called by the holder of the cache's disk-write lock only.
final class ProcessCoordinator: @unchecked Sendable {
    /// The lock file's name in the version directory.
    static let fileName = ".lock"

    /// The bytes the file is grown to, so that the mapped words are always inside it.
    private static let fileSize = LockFileWord.fileSize
    /// The size of the files of the first releases, which had words 0 to 3 only: read-only,
    /// such a file is still mapped (the words past its end read as zero, in its one page).
    private static let firstFileSize = 64

    /// The lock file, open; the same number for the coordinator's life (see "Purges").
    private let descriptor: Int32
    private let mapping: UnsafeMutableRawPointer
    /// The file's shared words, as ``LockFileWord`` maps them.
    private let words: SharedWords
    /// Which processes use the root now.
    let presence: PeerPresence
    /// Which process sends the queued changes of the root's outbox.
    let senderLease: SenderLease
    /// The user directories removed but not yet off the disk.
    let removals: PendingRemovals
    /// Whether the cache may not change the disk (see "Read-only roots").
    let isReadOnly: Bool
    /// Which file `descriptor` is now; changed only by the lock holder.
    private var number: FileID?
    /// The Darwin notification this root's changes are announced with (Apple platforms):
    /// derived from the lock file's identity, so unrelated caches never wake each other.
    let notificationName: String

    /// Opens (creating it if needed) the lock file of the version directory `fileSystem` holds,
    /// or, when it cannot be written, opens it read-only (``isReadOnly``).
    ///
    /// - Throws: `SystemError` when the file can be neither opened for writing nor found
    ///   unwritable.
    init(fileSystem: FileSystem) throws(SystemError) {
        precondition(SharedWords.areLockFree, "AppCache needs lock-free 64-bit atomics to share a lock file between processes")
        let path = CachePath(directory: nil, name: Self.fileName)
        // Named for errors only: building it cost a tenth of opening's instructions.
        var display: String { fileSystem.displayPath(path) }
        var descriptor: Int32
        var readOnly = fileSystem.isReadOnly
        if readOnly {
            descriptor = fileSystem.openForReadingIfPresent(path)
        } else {
            do throws(SystemError) {
                if let errorNumber = fileSystem.faults?(.openLockFile, display) {
                    throw SystemError(operation: "open", errorNumber: errorNumber, path: display)
                }
                descriptor = try fileSystem.openForUpdate(path)
            } catch {
                guard error.code == .permissionDenied else { throw error }
                readOnly = true
                descriptor = fileSystem.openForReadingIfPresent(path)
            }
        }
        var info = stat()
        if !readOnly {
            do throws(SystemError) {
                info = try Self.grow(descriptor, display)
            } catch {
                SystemCalls.close(descriptor)
                throw error
            }
        } else if descriptor >= 0, SystemCalls.fstat(descriptor, &info) != 0 {
            info.st_size = 0
        }
        let mapped: UnsafeMutableRawPointer?
        if descriptor >= 0, Int(info.st_size) >= Self.firstFileSize {
            mapped = SystemCalls.mapShared(descriptor, Self.fileSize, writable: !readOnly)
            number = FileID(info)
        } else {
            // Read-only, and no lock file to see: private words that nobody changes.
            let anonymous = mmap(nil, Self.fileSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            mapped = anonymous == MAP_FAILED ? nil : anonymous
        }
        guard let mapped else {
            let failure = SystemError.last("mmap", display)
            if descriptor >= 0 { SystemCalls.close(descriptor) }
            throw failure
        }
        self.descriptor = descriptor
        isReadOnly = readOnly
        notificationName = descriptor >= 0
            ? "net.appcache.change.\(UInt64(truncatingIfNeeded: info.st_dev)).\(UInt64(truncatingIfNeeded: info.st_ino))"
            : "net.appcache.change.\(display)"
        mapping = mapped
        words = SharedWords(base: mapped.bindMemory(to: UInt64.self, capacity: Self.fileSize / 8), descriptor: descriptor)
        presence = PeerPresence(words: words, mayWrite: !readOnly)
        senderLease = SenderLease(words: words, mayWrite: !readOnly)
        removals = PendingRemovals(words: words, mayWrite: !readOnly)
    }

    deinit {
        SystemCalls.unmap(mapping, Self.fileSize)
        if descriptor >= 0 { SystemCalls.close(descriptor) }
    }

    /// How many batches have changed the disk, as far as this process can see now.
    ///
    /// - Complexity: one atomic load.
    @inline(__always)
    var changeCount: UInt64 {
        words.load(.changeCount)
    }

    /// Takes the write lock of the lock file now at its path, waiting at most `timeout` for
    /// another holder, recreating the root, the version directory and the lock file first if
    /// they were deleted or replaced.
    ///
    /// - Returns: whether the lock file had to be opened anew (a purge): what memory holds must
    ///   then be checked against the disk.
    /// - Throws: `SystemError` when the directories or the lock file cannot be recreated; the
    ///   lock is not held then. `EWOULDBLOCK` when another holder kept it past `timeout`, or
    ///   when `giveUp` said `true` while waiting. `EROFS` for a read-only coordinator.
    func lock(fileSystem: FileSystem, timeout: Duration = .seconds(1), giveUp: () -> Bool = { false }) throws(SystemError) -> Bool {
        guard !isReadOnly else {
            throw SystemError(operation: "lock", errorNumber: EROFS, path: fileSystem.versionPath)
        }
        var reopened = false
        for _ in 0..<8 {
            try lockWithin(timeout, giveUp: giveUp, display: fileSystem.displayPath(CachePath(directory: nil, name: Self.fileName)))
            // One `stat` when nothing was purged: the lock file at its full path is the one held,
            // so the root and the version directory on the way are the ones held too.
            if lockFileIsAtItsPath(fileSystem) { return reopened }
            if fileSystem.directoriesAreCurrent(), fileSystem.fileNumber(of: CachePath(directory: nil, name: Self.fileName)) == number {
                return reopened
            }
            SystemCalls.flock(descriptor, LOCK_UN)
            try fileSystem.recreateDirectories()
            try reopen(fileSystem)
            reopened = true
        }
        throw SystemError(operation: "lock", errorNumber: EAGAIN, path: fileSystem.displayPath(CachePath(directory: nil, name: Self.fileName)))
    }

    /// Whether the lock file at its full path (through the root's and the version directory's
    /// paths) is the one held: one `stat`.
    private func lockFileIsAtItsPath(_ fileSystem: FileSystem) -> Bool {
        var info = stat()
        let found = SystemCalls.fstatat(AT_FDCWD, fileSystem.versionPath + "/" + Self.fileName, &info)
        return found == 0 && FileID(info) == number
    }

    /// Takes the `flock` without blocking, trying again after pauses that grow from 50 µs to
    /// 10 ms, until `timeout` has passed or `giveUp` says so: a peer suspended or stopped while
    /// holding it costs a bounded wait, never a hang.
    private func lockWithin(_ timeout: Duration, giveUp: () -> Bool, display: String) throws(SystemError) {
        let deadline = ContinuousClock.now + timeout
        var pause: UInt32 = 50
        while true {
            if SystemCalls.flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
            let failure = errno
            guard failure == EWOULDBLOCK || failure == EINTR else { throw SystemError(operation: "flock", errorNumber: failure, path: display) }
            guard ContinuousClock.now < deadline, !giveUp() else {
                throw SystemError(operation: "flock (held by another process past the lock timeout)", errorNumber: EWOULDBLOCK, path: display)
            }
            usleep(pause)
            pause = min(pause * 2, 10_000)
        }
    }

    /// Points the descriptor and the mapping at the lock file now at its path, creating it.
    private func reopen(_ fileSystem: FileSystem) throws(SystemError) {
        let path = CachePath(directory: nil, name: Self.fileName)
        var display: String { fileSystem.displayPath(path) }
        let fresh = try fileSystem.openForUpdate(path)
        defer { SystemCalls.close(fresh) }
        let info = try Self.grow(fresh, display)
        // The old file's lock goes with it; the lock is not held here.
        guard SystemCalls.dup2(fresh, descriptor) >= 0 else { throw .last("dup2", display) }
        guard SystemCalls.mapShared(descriptor, Self.fileSize, replacing: mapping) else { throw .last("mmap", display) }
        number = FileID(info)
    }

    /// Grows the lock file open at `descriptor` to ``fileSize`` if it is shorter, so that the
    /// mapped words are inside it.
    ///
    /// - Returns: the file's facts, its size at least ``fileSize``.
    private static func grow(_ descriptor: Int32, _ display: @autoclosure () -> String) throws(SystemError) -> stat {
        var info = stat()
        guard SystemCalls.fstat(descriptor, &info) == 0 else { throw .last("fstat", display()) }
        if Int(info.st_size) < fileSize {
            guard SystemCalls.ftruncate(descriptor, off_t(fileSize)) == 0 else { throw .last("ftruncate", display()) }
            info.st_size = off_t(fileSize)
        }
        return info
    }

    /// Releases the write lock.
    func unlock() {
        SystemCalls.flock(descriptor, LOCK_UN)
    }

    /// Counts one more batch that changed the disk. Call while holding the lock, or right
    /// after recording a removal (``PendingRemovals``), which changes what reads find.
    ///
    /// - Returns: the new count.
    @discardableResult
    func didChange() -> UInt64 {
        words.increment(.changeCount)
    }

    /// Tells every process watching this root that the disk changed (after ``didChange()``):
    /// wakes the threads waiting in ``waitForChange(from:)`` (Linux) or posts the root's
    /// Darwin notification. One system call; nobody polls.
    func announceChange() {
        #if canImport(Darwin)
        notify_post(notificationName)
        #else
        words.wake(LockFileWord.changeCount.rawValue)
        #endif
    }

    /// Whether ``waitForChange(from:)`` can sleep until another process's change (Linux).
    static var canWaitForChanges: Bool { SharedWords.canWait }

    /// Sleeps until ``changeCount`` may have moved on from `seen`: another process's (or this
    /// one's) ``announceChange()``, or a spurious wake-up.
    ///
    /// - Returns: `false` when it cannot wait here (see ``canWaitForChanges``).
    func waitForChange(from seen: UInt64) -> Bool {
        words.wait(LockFileWord.changeCount.rawValue, whileStill: seen)
    }

    /// Marks a batch as under way. Call right after taking the lock.
    ///
    /// - Returns: whether the previous holder died with its batch unfinished.
    func beginBatch() -> Bool {
        let crashed = words.load(.crashFlag) != 0
        words.store(1, at: .crashFlag)
        return crashed
    }

    /// Marks the batch as finished. Call before releasing the lock.
    func endBatch() {
        words.store(0, at: .crashFlag)
    }

    /// Which naming of archive files the version directory holds (0: the first release's).
    var layoutVersion: UInt64 {
        get { words.load(.layoutVersion) }
        set { words.store(newValue, at: .layoutVersion) }
    }

    /// Records `limit` as the root's disk budget, the one every cache on the version directory
    /// enforces, unless this process is an app extension (or the root is read-only).
    ///
    /// The app's budget holds: the last app process (not an extension) to open the root sets it,
    /// exactly, `nil` included. So an extension configured with a smaller budget never evicts
    /// the collections the app keeps within its own, and an app update that changes the budget
    /// takes effect at its first launch. The budget word holds 0 when nothing was recorded (a new or
    /// purged lock file), 1 for "no budget", `n + 2` for a budget of `n` bytes.
    ///
    /// - Parameter again: record only if nothing is recorded (a batch after a purge).
    /// - Returns: the budget to enforce (see ``budget(own:)``).
    func recordBudget(_ limit: Int?, asExtension: Bool, again: Bool = false) -> Int? {
        if !asExtension, !isReadOnly, !again || words.load(.diskBudget) == 0 {
            words.store(limit.map { UInt64($0) &+ 2 } ?? 1, at: .diskBudget)
        }
        return budget(own: limit)
    }

    /// The budget to enforce now: the root's recorded one (an app's), else `own`.
    func budget(own: Int?) -> Int? {
        switch words.load(.diskBudget) {
        case 0: return own
        case 1: return nil
        case let recorded: return Int(clamping: recorded - 2)
        }
    }

    /// The journal's length after the last append or rewrite by any process (0: not known, as
    /// in a new or purged lock file): a writer holding the journal open knows where its append
    /// ends without asking the file system. Set only under the lock.
    var journalLength: Int {
        get { Int(clamping: words.load(.journalLength)) }
        set { words.store(UInt64(max(newValue, 0)), at: .journalLength) }
    }

    /// Moves on whenever a process replaces or removes the journal (compaction, rebuild,
    /// renaming archives): a journal held open since an earlier generation is another file.
    var journalGeneration: UInt64 {
        get { words.load(.journalGeneration) }
        set { words.store(newValue, at: .journalGeneration) }
    }

    /// The journal's size right after its last compaction (0: not known).
    var compactedJournalSize: Int {
        get { Int(clamping: words.load(.compactedJournalSize)) }
        set { words.store(UInt64(max(newValue, 0)), at: .compactedJournalSize) }
    }
}
