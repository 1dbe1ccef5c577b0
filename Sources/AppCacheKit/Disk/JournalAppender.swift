/// The disk index's journal (``IndexJournal``), held open for appending between batches, so
/// that a batch's two appends cost one `write` each rather than an open, two `fstat`s and a
/// close around it.
///
/// Held only while the journal's generation (``ProcessCoordinator/journalGeneration``, moved on
/// by every process that replaces or removes it) is the one it was opened at, and while the
/// shared journal length is known: the append's end is that length plus its bytes, under the
/// lock file's lock. (A writer killed between its append and its store of the length leaves
/// the crash flag set, and the next batch sets the length from the journal it reads whole.) A
/// purge (a new lock file) lets it go (``JournalLedger/forgetOpenJournal()``).
struct JournalAppender {
    private let handle: DescriptorHandle
    /// Which file it is.
    let number: FileID
    /// The journal generation it was opened at.
    let generation: UInt64

    /// Takes over `descriptor`: it is closed when the appender goes.
    init(descriptor: Int32, number: FileID, generation: UInt64) {
        handle = DescriptorHandle(descriptor: descriptor)
        self.number = number
        self.generation = generation
    }

    var descriptor: Int32 { handle.descriptor }
}
