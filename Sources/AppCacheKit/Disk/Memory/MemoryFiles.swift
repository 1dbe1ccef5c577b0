import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls of the disk layer, carried out on the trees of the process's
/// ``MemoryVolume``s: what ``SystemCalls`` calls for a path under ``MemoryVolume/pathPrefix``
/// or a descriptor from ``firstDescriptor`` on.
///
/// Each function behaves as its POSIX namesake does for what the disk layer asks of it: it
/// returns what the call returns (-1 on failure) and sets `errno` to what the kernel would
/// (`ENOENT`, `EEXIST`, `ENOTDIR`, `EISDIR`, `ENOTEMPTY`, `EBADF`, `EWOULDBLOCK`, ...). Not
/// supported, because the cache never asks for them: symbolic links and special files (none can
/// be planted in memory), `..` in a name, and mapping a lock file again at a fixed address
/// (which only follows a purge of the real directory; it fails with `ENOTSUP`).
///
/// Thread safety: every function may be called from any thread; one lock guards every volume's
/// tree and the descriptor table, and is never held while waiting.
enum MemoryFiles {
    /// The first descriptor number handed out: far above what the kernel gives.
    static let firstDescriptor: Int32 = 1 << 30

    /// A file or directory opened: what `dup` shares.
    final class OpenFile {
        let node: MemoryNode
        let readable: Bool
        let writable: Bool
        var appends: Bool
        var offset = 0
        /// How many descriptors refer to it; its `flock` goes when the last one closes.
        var descriptors = 1

        init(node: MemoryNode, readable: Bool, writable: Bool, appends: Bool) {
            self.node = node
            self.readable = readable
            self.writable = writable
            self.appends = appends
        }
    }

    struct Table {
        var roots: [Substring: MemoryNode] = [:]
        var descriptors: [Int32: OpenFile] = [:]
        var nextDescriptor = MemoryFiles.firstDescriptor
        var mappings: [UnsafeMutableRawPointer: MemoryNode] = [:]
    }

    /// Every volume's tree and every descriptor: the nodes are classes changed only under this
    /// lock.
    private static let table = Locked(Table())

    /// Whether `descriptor` is one of ours.
    @inline(__always)
    static func owns(_ descriptor: Int32) -> Bool {
        descriptor >= firstDescriptor
    }

    static func register(_ volume: MemoryVolume) {
        let root = MemoryNode(kind: .directory, device: volume.device)
        table.withLock { $0.roots[Substring(volume.rootPath)] = root }
    }

    static func unregister(_ rootPath: String) {
        // The nodes go once no descriptor or mapping holds them.
        _ = table.withLock { $0.roots.removeValue(forKey: Substring(rootPath)) }
    }

    // MARK: - Opening and closing

    static func open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        run { table in
            let (parent, name) = try table.parent(ofPath: path)
            return try table.open(name, in: parent, flags)
        }
    }

    static func openat(_ directory: Int32, _ name: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        run { table in
            let (parent, last) = try table.parent(of: name, from: directory)
            return try table.open(last, in: parent, flags)
        }
    }

    static func close(_ descriptor: Int32) -> Int32 {
        run { table in
            guard let file = table.descriptors.removeValue(forKey: descriptor) else { throw Failure(EBADF) }
            file.descriptors -= 1
            if file.descriptors == 0 { release(file) }
            return 0
        }
    }

    static func dup(_ descriptor: Int32) -> Int32 {
        run { table in
            let file = try table.file(descriptor)
            file.descriptors += 1
            return table.add(file)
        }
    }

    static func dup2(_ descriptor: Int32, _ target: Int32) -> Int32 {
        run { table in
            let file = try table.file(descriptor)
            guard owns(target) else { throw Failure(EBADF) }
            if descriptor == target { return target }
            if let replaced = table.descriptors[target] {
                replaced.descriptors -= 1
                if replaced.descriptors == 0 { release(replaced) }
            }
            file.descriptors += 1
            table.descriptors[target] = file
            return target
        }
    }

    // MARK: - Bytes

    static func pread(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: off_t) -> Int {
        run { table in
            let file = try table.file(descriptor)
            guard file.node.kind == .file else { throw Failure(EISDIR) }
            guard file.readable else { throw Failure(EBADF) }
            guard offset >= 0 else { throw Failure(EINVAL) }
            return file.node.read(into: buffer, length: count, at: Int(offset))
        }
    }

    static func pwrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int, _ offset: off_t) -> Int {
        run { table in
            let file = try table.file(descriptor)
            guard file.writable, file.node.kind == .file else { throw Failure(EBADF) }
            guard offset >= 0 else { throw Failure(EINVAL) }
            guard file.node.write(buffer, length: count, at: Int(offset)) else { throw Failure(ENOSPC) }
            return count
        }
    }

    static func write(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        run { table in
            let file = try table.file(descriptor)
            guard file.writable, file.node.kind == .file else { throw Failure(EBADF) }
            let offset = file.appends ? file.node.count : file.offset
            guard file.node.write(buffer, length: count, at: offset) else { throw Failure(ENOSPC) }
            file.offset = offset + count
            return count
        }
    }

    static func ftruncate(_ descriptor: Int32, _ length: off_t) -> Int32 {
        run { table in
            let file = try table.file(descriptor)
            guard file.writable, file.node.kind == .file, length >= 0 else { throw Failure(EINVAL) }
            guard file.node.resize(to: Int(length)) else { throw Failure(ENOSPC) }
            return 0
        }
    }

    // MARK: - Facts

    static func fstat(_ descriptor: Int32, _ info: inout stat) -> Int32 {
        var described = stat()
        let result: Int32 = run { table in
            try table.file(descriptor).node.describe(into: &described)
            return 0
        }
        if result == 0 { info = described }
        return result
    }

    static func fstatat(_ directory: Int32, _ name: String, _ info: inout stat) -> Int32 {
        var described = stat()
        let result: Int32 = run { table in
            try table.node(at: name, from: directory).describe(into: &described)
            return 0
        }
        if result == 0 { info = described }
        return result
    }

    /// `stat` of the absolute `path`.
    static func statPath(_ path: String, _ info: inout stat) -> Int32 {
        var described = stat()
        let result: Int32 = run { table in
            let (parent, name) = try table.parent(ofPath: path)
            try table.child(name, of: parent).describe(into: &described)
            return 0
        }
        if result == 0 { info = described }
        return result
    }

    /// Sets the modification time (the second of `times`) of the file open at `descriptor`.
    static func futimens(_ descriptor: Int32, _ times: UnsafePointer<timespec>) -> Int32 {
        run { table in
            let node = try table.file(descriptor).node
            node.modified = times[1]
            node.changed = MemoryNode.now()
            return 0
        }
    }

    static func utimensat(_ directory: Int32, _ name: String, _ times: UnsafePointer<timespec>) -> Int32 {
        run { table in
            let node = try table.node(at: name, from: directory)
            node.modified = times[1]
            node.changed = MemoryNode.now()
            return 0
        }
    }

    // MARK: - Directories

    static func mkdir(_ path: String, _ mode: mode_t) -> Int32 {
        run { table in
            let (parent, name) = try table.parent(ofPath: path)
            return try table.makeDirectory(name, in: parent)
        }
    }

    static func mkdirat(_ directory: Int32, _ name: String, _ mode: mode_t) -> Int32 {
        run { table in
            let (parent, last) = try table.parent(of: name, from: directory)
            return try table.makeDirectory(last, in: parent)
        }
    }

    static func unlinkat(_ directory: Int32, _ name: String, _ flags: Int32) -> Int32 {
        run { table in
            let (parent, last) = try table.parent(of: name, from: directory)
            let node = try table.child(last, of: parent)
            if flags & AT_REMOVEDIR != 0 {
                guard node.kind == .directory else { throw Failure(ENOTDIR) }
                guard node.children.isEmpty else { throw Failure(ENOTEMPTY) }
            } else if node.kind == .directory {
                throw Failure(EISDIR)
            }
            parent.children[last] = nil
            parent.touch()
            return 0
        }
    }

    static func renameat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) -> Int32 {
        run { table in
            let (source, sourceName) = try table.parent(of: from, from: fromDirectory)
            let (target, targetName) = try table.parent(of: to, from: toDirectory)
            let moved = try table.child(sourceName, of: source)
            if let existing = target.children[targetName] {
                if existing === moved { return 0 }
                switch (moved.kind, existing.kind) {
                case (.file, .directory): throw Failure(EISDIR)
                case (.directory, .file): throw Failure(ENOTDIR)
                case (.directory, .directory) where !existing.children.isEmpty: throw Failure(ENOTEMPTY)
                default: break
                }
            }
            source.children[sourceName] = nil
            target.children[targetName] = moved
            source.touch()
            target.touch()
            return 0
        }
    }

    /// The entries of the directory open at `descriptor`, which is closed.
    static func list(_ descriptor: Int32) -> [FileSystem.DirectoryEntry]? {
        let entries: [FileSystem.DirectoryEntry]? = runOptional { table in
            let node = try table.file(descriptor).node
            guard node.kind == .directory else { throw Failure(ENOTDIR) }
            return node.children.map { FileSystem.DirectoryEntry(name: $0.key, mayBeRegularFile: $0.value.kind == .file) }
        }
        let failure = errno
        _ = close(descriptor)
        errno = failure
        return entries
    }

    // MARK: - Locks, flags and mappings

    static func flock(_ descriptor: Int32, _ operation: Int32) -> Int32 {
        while true {
            let result: Int32 = run { table in
                let file = try table.file(descriptor)
                let node = file.node
                let holder = ObjectIdentifier(file)
                switch operation & ~LOCK_NB {
                case LOCK_UN:
                    if node.exclusiveHolder == holder { node.exclusiveHolder = nil }
                    node.sharedHolders.remove(holder)
                case LOCK_EX:
                    guard node.exclusiveHolder == nil || node.exclusiveHolder == holder,
                        node.sharedHolders.subtracting([holder]).isEmpty
                    else { throw Failure(EWOULDBLOCK) }
                    node.sharedHolders.remove(holder)
                    node.exclusiveHolder = holder
                case LOCK_SH:
                    guard node.exclusiveHolder == nil || node.exclusiveHolder == holder else { throw Failure(EWOULDBLOCK) }
                    if node.exclusiveHolder == holder { node.exclusiveHolder = nil }
                    node.sharedHolders.insert(holder)
                default:
                    throw Failure(EINVAL)
                }
                return 0
            }
            if result == 0 || operation & LOCK_NB != 0 || errno != EWOULDBLOCK { return result }
            usleep(100)
        }
    }

    /// `fcntl` with an integer argument: `F_SETFD` (no effect: nothing is executed) and
    /// `F_SETFL` (`O_APPEND`); anything else fails with `EINVAL`.
    static func fcntl(_ descriptor: Int32, _ command: Int32, _ value: Int32) -> Int32 {
        run { table in
            let file = try table.file(descriptor)
            switch command {
            case F_SETFD: return 0
            case F_SETFL:
                file.appends = value & O_APPEND != 0
                return 0
            default: throw Failure(EINVAL)
            }
        }
    }

    /// Maps `length` bytes of the file open at `descriptor`, shared with every other mapping
    /// and with reads and writes of it: the file's own bytes, which stay put while mapped.
    static func mapShared(_ descriptor: Int32, _ length: Int) -> UnsafeMutableRawPointer? {
        runOptional { table in
            let node = try table.file(descriptor).node
            guard node.kind == .file, length > 0 else { throw Failure(EINVAL) }
            guard node.count >= length || node.resize(to: length), let bytes = node.bytes else { throw Failure(ENOMEM) }
            node.mappings += 1
            table.mappings[bytes] = node
            return bytes
        }
    }

    /// Ends a mapping ``mapShared(_:_:)`` made; `false` when `address` is not one.
    static func unmap(_ address: UnsafeMutableRawPointer) -> Bool {
        table.withLock { table in
            guard let node = table.mappings[address] else { return false }
            node.mappings -= 1
            if node.mappings == 0 { table.mappings[address] = nil }
            return true
        }
    }

    // MARK: - Private

    /// A failed call's `errno`.
    struct Failure: Error {
        let number: Int32
        init(_ number: Int32) { self.number = number }
    }

    private static func release(_ file: OpenFile) {
        let holder = ObjectIdentifier(file)
        if file.node.exclusiveHolder == holder { file.node.exclusiveHolder = nil }
        file.node.sharedHolders.remove(holder)
    }

    /// Runs `body` under the lock; a failure sets `errno` and gives -1.
    private static func run<Result: BinaryInteger>(_ body: (inout Table) throws -> Result) -> Result {
        runOptional(body) ?? -1
    }

    /// Runs `body` under the lock; a failure sets `errno` and gives `nil`.
    private static func runOptional<Result>(_ body: (inout Table) throws -> Result) -> Result? {
        do {
            return try table.withLock { try body(&$0) }
        } catch {
            errno = (error as? Failure)?.number ?? EIO
            return nil
        }
    }
}

extension MemoryFiles.Table {
    private typealias Failure = MemoryFiles.Failure

    /// Gives `file` the next free descriptor number.
    mutating func add(_ file: MemoryFiles.OpenFile) -> Int32 {
        while descriptors[nextDescriptor] != nil || nextDescriptor < MemoryFiles.firstDescriptor {
            nextDescriptor = nextDescriptor == .max ? MemoryFiles.firstDescriptor : nextDescriptor + 1
        }
        let descriptor = nextDescriptor
        nextDescriptor = nextDescriptor == .max ? MemoryFiles.firstDescriptor : nextDescriptor + 1
        descriptors[descriptor] = file
        return descriptor
    }

    /// What `descriptor` refers to; `EBADF` when nothing.
    func file(_ descriptor: Int32) throws -> MemoryFiles.OpenFile {
        guard let file = descriptors[descriptor] else { throw Failure(EBADF) }
        return file
    }

    /// The directory holding the last part of the absolute `path`, and that part; the root of a
    /// volume is its own parent, with the name ".".
    func parent(ofPath path: String) throws -> (MemoryNode, String) {
        guard let rootPath = MemoryVolume.rootPath(of: path), let root = roots[rootPath] else { throw Failure(ENOENT) }
        let rest = path[rootPath.endIndex...]
        return try parent(of: String(rest), in: root)
    }

    /// The directory holding the last part of `name`, from the directory open at `directory`
    /// (or, for `AT_FDCWD`, of the absolute path `name`).
    func parent(of name: String, from directory: Int32) throws -> (MemoryNode, String) {
        if directory == AT_FDCWD { return try parent(ofPath: name) }
        let start = try file(directory).node
        guard start.kind == .directory else { throw Failure(ENOTDIR) }
        return try parent(of: name, in: start)
    }

    private func parent(of relative: String, in start: MemoryNode) throws -> (MemoryNode, String) {
        var parts = relative.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        guard !parts.contains("..") else { throw Failure(EINVAL) }
        guard let last = parts.popLast() else { return (start, ".") }
        var node = start
        for part in parts {
            node = try child(String(part), of: node)
            guard node.kind == .directory else { throw Failure(ENOTDIR) }
        }
        return (node, String(last))
    }

    /// The entry `name` of `directory` ("." is the directory itself).
    func child(_ name: String, of directory: MemoryNode) throws -> MemoryNode {
        guard directory.kind == .directory else { throw Failure(ENOTDIR) }
        if name == "." { return directory }
        guard let node = directory.children[name] else { throw Failure(ENOENT) }
        return node
    }

    /// The node `name` names from the directory open at `directory`.
    func node(at name: String, from directory: Int32) throws -> MemoryNode {
        let (parent, last) = try parent(of: name, from: directory)
        return try child(last, of: parent)
    }

    /// `open` of `name` in `parent`.
    mutating func open(_ name: String, in parent: MemoryNode, _ flags: Int32) throws -> Int32 {
        let access = flags & O_ACCMODE
        let node: MemoryNode
        if let existing = try? child(name, of: parent) {
            if flags & O_CREAT != 0 && flags & O_EXCL != 0 { throw Failure(EEXIST) }
            node = existing
        } else {
            guard parent.kind == .directory else { throw Failure(ENOTDIR) }
            guard flags & O_CREAT != 0, flags & O_DIRECTORY == 0 else { throw Failure(ENOENT) }
            node = MemoryNode(kind: .file, device: parent.device)
            parent.children[name] = node
            parent.touch()
        }
        if node.kind == .directory {
            guard access == O_RDONLY else { throw Failure(EISDIR) }
        } else {
            guard flags & O_DIRECTORY == 0 else { throw Failure(ENOTDIR) }
            if flags & O_TRUNC != 0 && access != O_RDONLY { _ = node.resize(to: 0) }
        }
        return add(MemoryFiles.OpenFile(
            node: node, readable: access != O_WRONLY, writable: access != O_RDONLY, appends: flags & O_APPEND != 0))
    }

    /// `mkdir` of `name` in `parent`.
    func makeDirectory(_ name: String, in parent: MemoryNode) throws -> Int32 {
        guard parent.kind == .directory else { throw Failure(ENOTDIR) }
        guard name != ".", parent.children[name] == nil else { throw Failure(EEXIST) }
        parent.children[name] = MemoryNode(kind: .directory, device: parent.device)
        parent.touch()
        return 0
    }
}
