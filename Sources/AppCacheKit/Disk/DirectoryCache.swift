#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// User directories held open for reads while the disk does not change, so that a disk hit
/// opens one file rather than its directory and then the file (a third of a small archive's
/// system calls).
///
/// A descriptor is kept with the disk's change count (``ProcessCoordinator/changeCount``) it
/// was opened at and is used only by reads at that same count: every change any process makes
/// under the root (a wipe moving a user's directory away among them) bumps the count, after
/// which the directory is opened afresh. A read racing a change sees the disk before or after
/// it, as it would without the cache.
///
/// Descriptors replaced while reads may still use them are closed once no read holds one (a
/// descriptor number is never closed under a reader, so it cannot be reused under it either).
/// Writes never use the cache: they always open the directory they write into. Thread-safe.
final class DirectoryCache: Sendable {
    /// The most directories held open.
    static let capacity = 8

    private struct Entry {
        var name: String
        var descriptor: Int32
        var change: UInt64
    }

    private struct State {
        /// Searched in order, most recently kept first: a handful of directories, and a read's
        /// name is usually the very string kept (the layout's), so `==` answers at once
        /// where a dictionary would hash it.
        var entries: [Entry] = []
        /// Reads holding a descriptor now.
        var readers = 0
        /// Descriptors replaced while readers held them: closed when the last one is done.
        var retired: [Int32] = []
    }

    private let state = Locked(State())

    deinit {
        state.withLock { state in
            for entry in state.entries { SystemCalls.close(entry.descriptor) }
            for descriptor in state.retired { SystemCalls.close(descriptor) }
        }
    }

    /// The descriptor of the directory `name` opened at change count `change`, if one is held;
    /// the caller then holds it until ``release()``.
    func lease(_ name: String, change: UInt64) -> Int32? {
        state.withLock { state in
            guard let entry = state.entries.first(where: { $0.name == name }), entry.change == change else { return nil }
            state.readers += 1
            return entry.descriptor
        }
    }

    /// Keeps `descriptor`, just opened for `name` at change count `change`, replacing what was
    /// held for it; the caller then holds it until ``release()``.
    func keep(_ descriptor: Int32, for name: String, change: UInt64) {
        state.withLock { state in
            if let index = state.entries.firstIndex(where: { $0.name == name }) {
                state.retired.append(state.entries.remove(at: index).descriptor)
            }
            if state.entries.count >= Self.capacity {
                state.retired += state.entries.map(\.descriptor)
                state.entries.removeAll()
            }
            state.entries.insert(Entry(name: name, descriptor: descriptor, change: change), at: 0)
            state.readers += 1
        }
    }

    /// Lets the directory `name` go (it was moved out of view: a read from now on must find it
    /// gone, not read the trash through a held descriptor, even before the change count moves
    /// on); closed once no read holds it.
    func forget(_ name: String) {
        retire { $0 == name }
    }

    /// Lets every held directory go (the directories around them were recreated): replaced
    /// descriptors are closed once no read holds one.
    func forgetAll() {
        retire { _ in true }
    }

    /// Stops holding the directories whose names `shouldRetire` picks; their descriptors are
    /// closed now if no read holds one, else by the last reader out (``release()``).
    private func retire(_ shouldRetire: (String) -> Bool) {
        let closing = state.withLock { state -> [Int32] in
            state.retired += state.entries.filter { shouldRetire($0.name) }.map(\.descriptor)
            state.entries.removeAll { shouldRetire($0.name) }
            guard state.readers == 0 else { return [] }
            defer { state.retired = [] }
            return state.retired
        }
        for descriptor in closing { SystemCalls.close(descriptor) }
    }

    /// Ends a read's hold on a descriptor ``lease(_:change:)`` or ``keep(_:for:change:)``
    /// gave; the last reader out closes the replaced ones.
    func release() {
        let closing = state.withLock { state -> [Int32] in
            state.readers -= 1
            guard state.readers == 0, !state.retired.isEmpty else { return [] }
            defer { state.retired = [] }
            return state.retired
        }
        for descriptor in closing { SystemCalls.close(descriptor) }
    }
}
