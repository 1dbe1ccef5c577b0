/// The map of the lock file's shared words: which 64-bit little-endian word holds what. The
/// file's size is derived from it; every reader and writer of a word names it here.
///
/// | word | holds |
/// |---|---|
/// | 0 | the change count |
/// | 1 | the crash flag (a batch of changes is under way) |
/// | 2 | the journal's size when last compacted |
/// | 3 | the naming of archive files the root uses |
/// | 4 | the root's disk budget (0: none recorded) |
/// | 5 | the sender lease (``SenderLease``, a ``ProcessLease``) |
/// | 6, 7 | the journal's length and generation |
/// | 8 to 15 | the presence slots (``PeerPresence``, ``ProcessLease``s) |
/// | 16, 17 | removals recorded and carried out (``PendingRemovals``) |
/// | 18 to 49 | the ring of pending removals |
enum LockFileWord: Int, CaseIterable {
    case changeCount = 0
    case crashFlag = 1
    case compactedJournalSize = 2
    case layoutVersion = 3
    case diskBudget = 4
    case senderLease = 5
    case journalLength = 6
    case journalGeneration = 7
    case removalsRecorded = 16
    case removalsDone = 17

    /// The words of the processes present on the root, one ``ProcessLease`` each.
    static let presenceSlots = 8..<16
    /// The ring of removals not yet carried out.
    static let removalSlots = 18..<50

    /// How many words the file holds.
    static let count = removalSlots.upperBound
    /// The bytes the file is grown to, so that every mapped word is inside it.
    static let fileSize = count * 8
}

extension SharedWords {
    /// The value of `word` (one atomic load).
    @inline(__always)
    func load(_ word: LockFileWord) -> UInt64 { load(word.rawValue) }

    /// Sets `word` to `value` (one atomic store).
    @inline(__always)
    func store(_ value: UInt64, at word: LockFileWord) { store(value, at: word.rawValue) }

    /// Adds one to `word`, returning the new value.
    @discardableResult
    func increment(_ word: LockFileWord) -> UInt64 { increment(word.rawValue) }

    /// Sets `word` to `desired` if it holds `expected`, atomically.
    func compareExchange(_ word: LockFileWord, expected: UInt64, desired: UInt64) -> Bool {
        compareExchange(word.rawValue, expected: expected, desired: desired)
    }
}
