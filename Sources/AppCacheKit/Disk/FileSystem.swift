import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls the disk layer makes, all relative to the root or the version directory
/// the layer holds open, none of them following a symbolic link inside it.
///
/// Why so careful: every byte under the cache root is untrusted. A file or link planted there
/// must never make the cache read, write or delete anything outside the root, nor block it. So:
/// - the root and the version directory are opened once; every other path is a ``CachePath``,
///   opened part by part (`openat`, `O_NOFOLLOW`) from the version directory's descriptor, so
///   neither a linked user directory nor a linked file is ever followed;
/// - files are opened non-blocking and checked with `fstat` before a byte is read: a FIFO, a
///   socket, a device or a directory where a file should be is refused (a FIFO would block
///   `open` and `read` forever);
/// - a symbolic link where the cache expects its own file or directory is damage: the link
///   itself is removed (`unlinkat` never follows) and ``onDamage`` hears of it.
///
/// Plain POSIX calls rather than `Data.write(to:)` or `FileManager`: on Linux the former syncs
/// every file and the latter resolves owner names (reading the user database) on every
/// `attributesOfItem`, both measured costs far above the write itself. Archives carry checksums, so a torn write is detected on
/// read and durability does not depend on `fsync`. Directories are created `0700`, files `0600`.
struct FileSystem: Sendable {
    /// A step that tests can make fail with a chosen `errno`.
    enum Operation: Sendable, Hashable {
        case makeDirectory, createFile, write, rename, remove, read
        /// Opening the lock file for writing (a read-only root refuses it).
        case openLockFile
    }

    /// Returns the `errno` to fail an operation with, or `nil` to let it run. Tests only.
    typealias FaultInjector = @Sendable (Operation, String) -> Int32?

    /// The cache root, as the configuration names it (for messages and the root's own files).
    let rootPath: String
    /// The version directory's name in the root.
    let versionName: String
    /// The version directory's path, for messages.
    let versionPath: String
    /// The cache root, held open: trash directories are moved into it.
    let root: DescriptorHandle
    /// The version directory, held open: every ``CachePath`` starts here.
    let version: DescriptorHandle

    var faults: FaultInjector?
    /// Whether this file system only looks (the inspector): links and special files are
    /// reported as such but never removed.
    var isReadOnly = false
    /// The data protection class of every file this writes (Apple platforms with data
    /// protection only); `nil` for the directory's.
    var protection: FileProtection?
    /// Told of every planted link or special file the layer removed: its path and what it was.
    var onDamage: @Sendable (_ path: String, _ what: String) -> Void = { _, _ in }
    /// User directories held open for reads between changes of the disk.
    let directories = DirectoryCache()



    /// The full path of `path`, for messages and the fault injector.
    func displayPath(_ path: CachePath) -> String {
        versionPath + "/" + path.relative
    }

    // MARK: - Opening

    /// Opens (creating them if `create`) the root and the version directory `versionName` in it.
    ///
    /// The root is the app's path and may itself be, or lie under, a symbolic link; the version
    /// directory may not: a link there is removed and a directory made in its place.
    ///
    /// - Returns: `nil` when `create` is false and either does not exist.
    /// - Throws: `SystemError` when the root or the version directory cannot be made or opened
    ///   (`ENOTDIR` when a file stands in the way).
    static func open(
        rootPath: String, versionName: String, create: Bool, readOnly: Bool = false, faults: FaultInjector? = nil,
        onDamage: @escaping @Sendable (String, String) -> Void = { _, _ in }
    ) throws(SystemError) -> FileSystem? {
        if create {
            if let errorNumber = faults?(.makeDirectory, rootPath) {
                throw SystemError(operation: "mkdir", errorNumber: errorNumber, path: rootPath)
            }
            try makeDirectories(rootPath)
        }
        let rootDescriptor = SystemCalls.open(rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard rootDescriptor >= 0 else {
            if !create && errno == ENOENT { return nil }
            throw .last("open", rootPath)
        }
        let root = DescriptorHandle(descriptor: rootDescriptor)
        let versionPath = rootPath + "/" + versionName
        if create, let errorNumber = faults?(.makeDirectory, versionPath) {
            throw SystemError(operation: "mkdir", errorNumber: errorNumber, path: versionPath)
        }
        guard let versionDescriptor = try openDirectory(
            in: rootDescriptor, versionName, displayPath: versionPath, create: create, removesLinks: !readOnly, onDamage: onDamage)
        else { return nil }
        return FileSystem(
            rootPath: rootPath, versionName: versionName, versionPath: versionPath, root: root,
            version: DescriptorHandle(descriptor: versionDescriptor), faults: faults, isReadOnly: readOnly, onDamage: onDamage)
    }

    // MARK: - Purges

    /// Whether the root and the version directory held open are still the ones at their
    /// paths: `false` once either was deleted, renamed (a wipe's trash) or replaced.
    ///
    /// - Complexity: four `stat` calls.
    func directoriesAreCurrent() -> Bool {
        rootIsCurrent() && versionIsCurrent()
    }

    /// Makes the root and the version directory again where they were deleted or replaced, and
    /// points the descriptors held for them at the directories now at their paths.
    ///
    /// The descriptor numbers stay the same (the new directory is duplicated onto the old
    /// number), so a read using one in another thread meanwhile sees the old directory or the
    /// new one, never a closed or reused descriptor. Directories held open for reads are let
    /// go. Call holding the write lock, or before any write (opening).
    ///
    /// - Throws: `SystemError` when a directory cannot be made or opened.
    func recreateDirectories() throws(SystemError) {
        if rootIsCurrent(), !versionIsCurrent(), versionWasSuperseded() {
            // Another app schema version opened the root and wiped this one: making it again
            // would mix versions (and be wiped again at the next open of the newer one).
            throw SystemError(operation: "open (the root now holds another app schema version)", errorNumber: ESTALE, path: versionPath)
        }
        if !rootIsCurrent() {
            if let errorNumber = faults?(.makeDirectory, rootPath) {
                throw SystemError(operation: "mkdir", errorNumber: errorNumber, path: rootPath)
            }
            try Self.makeDirectories(rootPath)
            let fresh = SystemCalls.open(rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
            guard fresh >= 0 else { throw .last("open", rootPath) }
            defer { SystemCalls.close(fresh) }
            try Self.replace(root.descriptor, with: fresh, rootPath)
        }
        if !versionIsCurrent() {
            if let errorNumber = faults?(.makeDirectory, versionPath) {
                throw SystemError(operation: "mkdir", errorNumber: errorNumber, path: versionPath)
            }
            guard let fresh = try Self.openDirectory(
                in: root.descriptor, versionName, displayPath: versionPath, create: true, onDamage: onDamage)
            else { throw SystemError(operation: "open", errorNumber: ENOENT, path: versionPath) }
            defer { SystemCalls.close(fresh) }
            try Self.replace(version.descriptor, with: fresh, versionPath)
        }
        directories.forgetAll()
    }

    /// Whether the root held open is the directory at the root's path (following a link: the
    /// root is the app's path).
    private func rootIsCurrent() -> Bool {
        var held = stat()
        var atPath = stat()
        return SystemCalls.fstat(root.descriptor, &held) == 0 && SystemCalls.statPath(rootPath, &atPath) == 0 && FileID(held) == FileID(atPath)
    }

    /// Whether the version directory held open is the one now in the held root.
    private func versionIsCurrent() -> Bool {
        var held = stat()
        var atPath = stat()
        return SystemCalls.fstat(version.descriptor, &held) == 0
            && SystemCalls.fstatat(root.descriptor, versionName, &atPath) == 0
            && FileID(held) == FileID(atPath)
    }

    /// Makes `descriptor` refer to what `fresh` refers to, keeping its number and close-on-exec.
    static func replace(_ descriptor: Int32, with fresh: Int32, _ display: String) throws(SystemError) {
        while SystemCalls.dup2(fresh, descriptor) < 0 {
            guard errno == EINTR || errno == EBUSY else { throw .last("dup2", display) }
        }
        _ = SystemCalls.fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    /// Which file (device and inode) is at `path` now, not following a link; `nil` when none.
    func fileNumber(of path: CachePath) -> FileID? {
        guard let directory = try? openDirectory(of: path, create: false) else { return nil }
        defer { if directory != version.descriptor { SystemCalls.close(directory) } }
        var info = stat()
        guard SystemCalls.fstatat(directory, path.name, &info) == 0 else { return nil }
        return FileID(info)
    }

    /// Which file (device and inode) `name` in the version directory is, not following a link:
    /// one `fstatat`; `nil` when there is none.
    func fileNumber(inVersionDirectory name: String) -> FileID? {
        var info = stat()
        guard SystemCalls.fstatat(version.descriptor, name, &info) == 0 else { return nil }
        return FileID(info)
    }

    /// Opens the regular file at `path` read-only (a read-only root's lock file); -1 when there
    /// is none, or it is not a regular file.
    func openForReadingIfPresent(_ path: CachePath) -> Int32 {
        guard let directory = try? openDirectory(of: path, create: false) else { return -1 }
        defer { if directory != version.descriptor { SystemCalls.close(directory) } }
        let descriptor = SystemCalls.openat(directory, path.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return -1 }
        var info = stat()
        guard SystemCalls.fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            SystemCalls.close(descriptor)
            return -1
        }
        return descriptor
    }

    // MARK: - Reading

    /// A regular file opened for reading, with the facts `fstat` gave.
    ///
    /// Valid only inside the body of ``withFileForReading(_:change:_:)``, which closes it when
    /// the body returns: a value, so that a read allocates no object to close it.
    struct ReadableFile {
        let descriptor: Int32
        /// The file's size in bytes when it was opened.
        let size: Int
        let modificationDate: Date
        /// Which file this is: changes whenever the file is replaced or rewritten.
        let identity: FileVersion
        /// Which file this is: stays while the file is appended to.
        let number: FileID
        private let versionPath: String
        private let cachePath: CachePath

        /// Which file this is and when it was last modified.
        var facts: FileFacts { FileFacts(identity: identity, modificationDate: modificationDate) }

        /// The file's full path, for messages (made only when one is needed).
        var path: String { versionPath + "/" + cachePath.relative }

        init(
            descriptor: Int32, size: Int, modificationDate: Date, identity: FileVersion, number: FileID,
            versionPath: String, cachePath: CachePath
        ) {
            self.descriptor = descriptor
            self.size = size
            self.modificationDate = modificationDate
            self.identity = identity
            self.number = number
            self.versionPath = versionPath
            self.cachePath = cachePath
        }

        /// Reads `count` bytes at `offset`, or fewer when the file ends first.
        func read(count: Int, at offset: Int) throws(SystemError) -> Data {
            var bytes = Data(count: count)
            let filled = bytes.withUnsafeMutableBytes { fill($0, at: offset) }
            guard filled >= 0 else { throw .last("read", path) }
            if filled < count { bytes.removeSubrange(filled...) }
            return bytes
        }

        /// Calls `body` with the file's bytes from its start, as many as it holds up to
        /// ``size``, read into a buffer that lives for the call only: no `Data` is made, zeroed
        /// or released, which is a good part of reading a small file.
        ///
        /// The buffer is ``size`` bytes: call it only for a file whose size the caller has
        /// bounded (an archive up to ``DiskStore/singleReadLimit``).
        func withContents<Value>(_ body: (UnsafeRawBufferPointer) -> Value) throws(SystemError) -> Value {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
            defer { buffer.deallocate() }
            let filled = fill(buffer, at: 0)
            guard filled >= 0 else { throw .last("read", path) }
            return body(UnsafeRawBufferPointer(rebasing: buffer[..<filled]))
        }

        /// Fills `buffer` from `offset`, retrying interrupted reads.
        ///
        /// - Returns: the bytes read (fewer when the file ends first), or -1 on an error
        ///   (`errno` says which).
        private func fill(_ buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
            SystemCalls.preadFully(descriptor, into: buffer, at: offset)
        }
    }


    /// What opening a file for reading found.
    enum OpenedFile {
        /// No file (or no directory) there.
        case missing
        /// Something that is not a regular file: a symbolic link (removed), a FIFO, a socket,
        /// a device or a directory. Never read.
        case unsafe(String)
        case file(ReadableFile)
    }

    /// Opens the regular file at `path` for reading, without following a link and without
    /// blocking.
    ///
    /// A symbolic link at `path` or at its directory is damage: the link is removed and
    /// reported, and the answer is `.unsafe`. Anything else that is not a regular file is
    /// `.unsafe` and left alone (the caller decides).
    ///
    /// - Throws: `SystemError` when the file exists but cannot be opened or examined, or what
    ///   `body` throws.
    ///
    /// - Parameter change: the disk's change count (``ProcessCoordinator/changeCount``) the read
    ///   started at, when the caller knows it: the user directory may then come from
    ///   ``directories``, held open since an earlier read at the same count.
    /// - Parameter body: reads the file; it is closed when `body` returns.
    func withFileForReading<Result>(
        _ path: CachePath, change: UInt64? = nil, _ body: (OpenedFile) throws(SystemError) -> Result
    ) throws(SystemError) -> Result {
        let opened = try openForReading(path, change: change)
        defer {
            if case .file(let file) = opened { SystemCalls.close(file.descriptor) }
        }
        return try body(opened)
    }

    /// ``withFileForReading(_:change:_:)`` without the body: the caller closes the file.
    private func openForReading(_ path: CachePath, change: UInt64?) throws(SystemError) -> OpenedFile {
        if faults != nil { try inject(.read, displayPath(path)) }
        let directory: Int32
        var leased = false
        if let change, let name = path.directory, let held = directories.lease(name, change: change) {
            directory = held
            leased = true
        } else {
            let opened: Int32?
            do {
                opened = try openDirectory(of: path, create: false)
            } catch where error.errorNumber == ENOTDIR {
                // A file where the user directory belongs: nothing to read (a write will say why).
                return .missing
            }
            guard let opened else { return .missing }
            directory = opened
            if let change, let name = path.directory {
                directories.keep(opened, for: name, change: change)
                leased = true
            }
        }
        defer {
            if leased {
                directories.release()
            } else if directory != version.descriptor {
                SystemCalls.close(directory)
            }
        }
        let descriptor = SystemCalls.openat(directory, path.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = errno
            switch error {
            case ENOENT, ENOTDIR:
                return .missing
            case ELOOP, EMLINK:
                if let what = removeIfLink(in: directory, path.name, displayPath(path)) { return .unsafe(what) }
                throw SystemError(operation: "open", errorNumber: error, path: displayPath(path))
            case ENXIO, EOPNOTSUPP:
                // A socket (or a device without a driver): never a cache file.
                return .unsafe("a special file, not a regular file")
            default:
                throw SystemError(operation: "open", errorNumber: error, path: displayPath(path))
            }
        }
        var info = stat()
        guard SystemCalls.fstat(descriptor, &info) == 0 else {
            let failure = SystemError.last("fstat", displayPath(path))
            SystemCalls.close(descriptor)
            throw failure
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            SystemCalls.close(descriptor)
            return .unsafe(Self.kind(of: info))
        }
        return .file(ReadableFile(
            descriptor: descriptor, size: Int(clamping: info.st_size), modificationDate: Self.modificationDate(of: info),
            identity: FileVersion(info), number: FileID(info), versionPath: versionPath, cachePath: path))
    }

    /// The whole of the small regular file at `path` (a record beside the archives, such as the
    /// signed-in user): `nil` when there is none, it is a link or special file, it cannot be
    /// read, or it is longer than `maximumSize` (nothing is allocated for such a claim).
    func readSmallFile(_ path: CachePath, maximumSize: Int) -> Data? {
        let bytes = try? withFileForReading(path) { (opened) throws(SystemError) -> Data? in
            guard case .file(let file) = opened, file.size <= maximumSize else { return nil }
            return try file.read(count: file.size, at: 0)
        }
        return bytes ?? nil
    }

    /// The identity and modification date of the regular file at `path` (no link followed), or
    /// `nil` when there is none.
    func facts(of path: CachePath) -> FileFacts? {
        guard let directory = try? openDirectory(of: path, create: false) else { return nil }
        defer { if directory != version.descriptor { SystemCalls.close(directory) } }
        var info = stat()
        guard SystemCalls.fstatat(directory, path.name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileFacts(identity: FileVersion(info), modificationDate: Self.modificationDate(of: info))
    }

    /// Sets the modification date of the regular file at `path` (no link followed) to `date`,
    /// if it is still the file `identity`, leaving its bytes untouched.
    ///
    /// - Returns: the file's identity after the change; `nil` when no such file is there (it
    ///   was removed or replaced meanwhile).
    func redate(_ path: CachePath, ifStill identity: FileVersion, to date: Date) throws(SystemError) -> FileVersion? {
        guard let directory = try openDirectory(of: path, create: false) else { return nil }
        defer { if directory != version.descriptor { SystemCalls.close(directory) } }
        var info = stat()
        guard SystemCalls.fstatat(directory, path.name, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
            FileVersion(info) == identity
        else { return nil }
        var times = [Self.makeTimespec(date), Self.makeTimespec(date)]
        guard SystemCalls.utimensat(directory, path.name, &times) == 0 else { throw .last("utimensat", displayPath(path)) }
        guard SystemCalls.fstatat(directory, path.name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileVersion(info)
    }

    /// Whether the volume ignores the case of file names: the version directory's name
    /// upper-cased names it too.
    func isCaseInsensitive() -> Bool {
        let upper = versionName.uppercased()
        guard upper != versionName else { return false }
        var own = stat()
        var other = stat()
        guard SystemCalls.fstatat(root.descriptor, versionName, &own) == 0,
            SystemCalls.fstatat(root.descriptor, upper, &other) == 0
        else { return false }
        return own.st_ino == other.st_ino && own.st_dev == other.st_dev
    }

    // MARK: - Writing

    /// Writes `header` then `payload` to a new file named `temporaryName` beside `path`, dated
    /// `modificationDate`, and renames it into place.
    ///
    /// Readers see the old file or the new one, never a mix. On failure the temporary file is
    /// removed and the old file is untouched. A missing user directory is created owner-only.
    ///
    /// - Parameter synchronize: whether the bytes reach the device (`fsync`) before the rename,
    ///   for records a power loss must not take (the outbox's queued changes).
    /// - Returns: the identity of the file now at `path`.
    func writeAtomically(
        header: [UInt8], payload: Data, to path: CachePath, temporaryName: String, modificationDate: Date, synchronize: Bool = false
    ) throws(SystemError) -> FileVersion {
        let display = displayPath(path)
        guard let directory = try openDirectory(of: path, create: true) else {
            throw SystemError(operation: "open", errorNumber: ENOENT, path: display)
        }
        defer { if directory != version.descriptor { SystemCalls.close(directory) } }
        let temporaryDisplay = (path.directory.map { versionPath + "/" + $0 } ?? versionPath) + "/" + temporaryName
        try inject(.createFile, temporaryDisplay)
        var descriptor = SystemCalls.openat(directory, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .last("open", temporaryDisplay) }
        protection?.apply(toDescriptor: descriptor)
        do throws(SystemError) {
            try writeAll(descriptor, header, temporaryDisplay)
            try writeAll(descriptor, payload, temporaryDisplay)
            var times = [Self.makeTimespec(modificationDate), Self.makeTimespec(modificationDate)]
            guard SystemCalls.futimens(descriptor, &times) == 0 else { throw SystemError.last("futimens", temporaryDisplay) }
            if synchronize, SystemCalls.fsync(descriptor) != 0 { throw SystemError.last("fsync", temporaryDisplay) }
            var info = stat()
            guard SystemCalls.fstat(descriptor, &info) == 0 else { throw SystemError.last("fstat", temporaryDisplay) }
            let closed = SystemCalls.close(descriptor)
            descriptor = -1
            guard closed == 0 else { throw SystemError.last("close", temporaryDisplay) }
            try inject(.rename, display)
            if SystemCalls.renameat(directory, temporaryName, directory, path.name) != 0 {
                // A directory planted where the file goes: it is ours to clear, without
                // following anything inside it.
                guard errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST else { throw SystemError.last("rename", display) }
                try removeTree(in: directory, path.name, display)
                onDamage(display, "a directory where an archive belongs")
                guard SystemCalls.renameat(directory, temporaryName, directory, path.name) == 0 else { throw SystemError.last("rename", display) }
            }
            return FileVersion(info)
        } catch {
            if descriptor >= 0 { SystemCalls.close(descriptor) }
            SystemCalls.unlinkat(directory, temporaryName, 0)
            throw error
        }
    }

    /// Appends `data` to the regular file at `path` in one `write`.
    ///
    /// A link or special file there is removed (and reported).
    ///
    /// - Parameter synchronize: whether the bytes reach the device (`fsync`) before it returns.
    /// - Returns: which file it is and its size after the append; `nil` when there is no file
    ///   (or there was only a link or special file) to append to.
    func append(_ data: Data, to path: CachePath, synchronize: Bool = false) throws(SystemError) -> (number: FileID, size: Int)? {
        let display = displayPath(path)
        try inject(.write, display)
        guard let (descriptor, number, _) = try openForAppending(path) else { return nil }
        defer { SystemCalls.close(descriptor) }
        try writeAll(descriptor, data, display)
        if synchronize, SystemCalls.fsync(descriptor) != 0 { throw .last("fsync", display) }
        var info = stat()
        guard SystemCalls.fstat(descriptor, &info) == 0 else { throw .last("fstat", display) }
        return (number, Int(clamping: info.st_size))
    }

    /// Opens the regular file at `path` for appending (`O_APPEND`), without following a link
    /// or blocking; a link or special file there is removed (and reported). The caller closes
    /// it.
    ///
    /// - Returns: the descriptor, which file it is and its size; `nil` when there is no file
    ///   (or there was only a link or special file).
    func openForAppending(_ path: CachePath) throws(SystemError) -> (descriptor: Int32, number: FileID, size: Int)? {
        let display = displayPath(path)
        guard let directory = try openDirectory(of: path, create: true) else {
            throw SystemError(operation: "open", errorNumber: ENOENT, path: display)
        }
        defer { if directory != version.descriptor { SystemCalls.close(directory) } }
        for attempt in 0..<2 {
            let descriptor = SystemCalls.openat(directory, path.name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            if descriptor < 0 {
                let error = errno
                if error == ENOENT { return nil }
                if attempt == 0, error == ELOOP || error == EMLINK || error == ENXIO, removeIfUnsafe(in: directory, path.name, display) {
                    continue
                }
                throw SystemError(operation: "open", errorNumber: error, path: display)
            }
            var info = stat()
            guard SystemCalls.fstat(descriptor, &info) == 0 else {
                let failure = SystemError.last("fstat", display)
                SystemCalls.close(descriptor)
                throw failure
            }
            guard info.st_mode & S_IFMT == S_IFREG else {
                SystemCalls.close(descriptor)
                if attempt == 0, removeIfUnsafe(in: directory, path.name, display) { continue }
                throw SystemError(operation: "open", errorNumber: EINVAL, path: display)
            }
            protection?.apply(toDescriptor: descriptor)
            return (descriptor, FileID(info), Int(clamping: info.st_size))
        }
        throw SystemError(operation: "open", errorNumber: EINVAL, path: display)
    }

    /// Opens (creating it owner-only, and replacing a link or special file) the regular file at
    /// `path` for reading and writing, for a lock or a shared memory map. The caller closes it.
    func openForUpdate(_ path: CachePath) throws(SystemError) -> Int32 {
        let display = displayPath(path)
        guard let directory = try openDirectory(of: path, create: true) else {
            throw SystemError(operation: "open", errorNumber: ENOENT, path: display)
        }
        defer { if directory != version.descriptor { SystemCalls.close(directory) } }
        for attempt in 0..<2 {
            let descriptor = SystemCalls.openat(directory, path.name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            if descriptor < 0 {
                let error = errno
                if attempt == 0, error == ELOOP || error == EMLINK || error == ENXIO, removeIfUnsafe(in: directory, path.name, display) {
                    continue
                }
                throw SystemError(operation: "open", errorNumber: error, path: display)
            }
            var info = stat()
            if SystemCalls.fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                // Explicitly, not by inheritance: the lock file is read by extensions that
                // may run while the device is locked.
                protection?.apply(toDescriptor: descriptor)
                return descriptor
            }
            SystemCalls.close(descriptor)
            if attempt == 0, removeIfUnsafe(in: directory, path.name, display) { continue }
            break
        }
        throw SystemError(operation: "open", errorNumber: EINVAL, path: display)
    }

    /// Cuts the regular file at `path` (never a link) back to `length` bytes.
    func truncate(_ path: CachePath, to length: Int) throws(SystemError) {
        let display = displayPath(path)
        try inject(.write, display)
        guard let directory = try openDirectory(of: path, create: false) else { return }
        defer { if directory != version.descriptor { SystemCalls.close(directory) } }
        let descriptor = SystemCalls.openat(directory, path.name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .last("open", display) }
        defer { SystemCalls.close(descriptor) }
        var info = stat()
        guard SystemCalls.fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw .last("fstat", display) }
        guard SystemCalls.ftruncate(descriptor, off_t(length)) == 0 else { throw .last("ftruncate", display) }
    }

    // MARK: - Removing and moving

    /// Renames the file `path` to `target` in the same directory, replacing what is there.
    func rename(_ path: CachePath, to target: CachePath) throws(SystemError) {
        let display = displayPath(target)
        try inject(.rename, display)
        guard path.directory == target.directory else { throw SystemError(operation: "rename", errorNumber: EXDEV, path: display) }
        guard let directory = try openDirectory(of: path, create: false) else { return }
        defer { if directory != version.descriptor { SystemCalls.close(directory) } }
        guard SystemCalls.renameat(directory, path.name, directory, target.name) == 0 else { throw .last("rename", display) }
    }

    /// Removes the file at `path` (a link itself, never its target); a missing file is not an
    /// error. A directory planted there is removed with everything in it, no link followed.
    func removeFile(_ path: CachePath) throws(SystemError) {
        let display = displayPath(path)
        try inject(.remove, display)
        guard let directory = try openDirectory(of: path, create: false) else { return }
        defer { if directory != version.descriptor { SystemCalls.close(directory) } }
        if SystemCalls.unlinkat(directory, path.name, 0) == 0 || errno == ENOENT { return }
        guard errno == EISDIR || errno == EPERM else { throw .last("unlink", display) }
        try removeTree(in: directory, path.name, display)
    }

    /// Moves the user directory `name` of the version directory out of view, into a new trash
    /// directory name in the root, in one `rename` (a link is moved as the link it is).
    ///
    /// - Returns: the trash name, or `nil` when there was nothing to move.
    func moveOutOfView(userDirectory name: String) throws(SystemError) -> String? {
        let trash = try moveOutOfView(name, in: version.descriptor, display: versionPath + "/" + name)
        // Reads after this one must not find the directory through a held descriptor.
        directories.forget(name)
        return trash
    }

    /// Moves another version's directory `name` of the root out of view, as
    /// ``moveOutOfView(userDirectory:)`` does, once that version's batch under way (if any) has
    /// finished: its lock file's lock is taken for the rename, so a writer of that version never
    /// has the directory moved under it mid-batch. A writer that does not let go within about a
    /// second (a stopped process) does not stop the move.
    func moveOutOfView(versionDirectory name: String) throws(SystemError) -> String? {
        var lock: Int32 = -1
        let directory = SystemCalls.openat(root.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if directory >= 0 {
            lock = SystemCalls.openat(directory, ProcessCoordinator.fileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            SystemCalls.close(directory)
        }
        defer { if lock >= 0 { SystemCalls.close(lock) } }
        if lock >= 0 {
            for _ in 0..<100 {
                if SystemCalls.flock(lock, LOCK_EX | LOCK_NB) == 0 || (errno != EWOULDBLOCK && errno != EINTR) { break }
                usleep(10_000)
            }
        }
        return try moveOutOfView(name, in: root.descriptor, display: rootPath + "/" + name)
    }

    /// Renames `name` of the directory `directory` to a new trash name in the root.
    private func moveOutOfView(_ name: String, in directory: Int32, display: String) throws(SystemError) -> String? {
        try inject(.rename, display)
        let trash = CacheLayout.trashPrefix + Self.randomSuffix()
        if SystemCalls.renameat(directory, name, root.descriptor, trash) == 0 { return trash }
        if errno == ENOENT { return nil }
        throw .last("rename", display)
    }

    /// Deletes the root entry `name` and everything under it, following no link; a missing
    /// entry is not an error.
    func removeTree(rootEntry name: String) throws(SystemError) {
        let display = rootPath + "/" + name
        try inject(.remove, display)
        try removeTree(in: root.descriptor, name, display)
    }

    // MARK: - Listing

    /// One entry of a directory listing.
    struct DirectoryEntry {
        var name: String
        /// Whether it is a regular file, as far as the listing tells (`DT_UNKNOWN` counts as
        /// yes: opening it checks).
        var mayBeRegularFile: Bool
    }

    /// The names in the version directory (`directory == nil`) or one of its user directories;
    /// `nil` when that does not exist (or is a link, which is removed and reported).
    func contentsOfDirectory(_ directory: String?) throws(SystemError) -> [DirectoryEntry]? {
        let descriptor: Int32
        if let directory {
            guard let opened = try Self.openDirectory(
                in: version.descriptor, directory, displayPath: versionPath + "/" + directory, create: false,
                removesLinks: !isReadOnly, onDamage: onDamage)
            else { return nil }
            descriptor = opened
        } else {
            descriptor = SystemCalls.dup(version.descriptor)
            guard descriptor >= 0 else { throw .last("dup", versionPath) }
        }
        return try Self.list(descriptor, directory.map { versionPath + "/" + $0 } ?? versionPath)
    }

    /// The names in the root.
    /// Whether the root holds the directory of another app schema version (and not this
    /// one's): a newer (or older) app opened it and wiped this version.
    func versionWasSuperseded() -> Bool {
        let names = (try? contentsOfRoot()) ?? []
        return !names.contains(versionName) && names.contains { $0.hasPrefix(CacheLayout.versionPrefix) && $0 != versionName }
    }

    func contentsOfRoot() throws(SystemError) -> [String] {
        let descriptor = SystemCalls.dup(root.descriptor)
        guard descriptor >= 0 else { throw .last("dup", rootPath) }
        return try Self.list(descriptor, rootPath).map(\.name)
    }

    /// Lists the directory open at `descriptor` (and closes it).
    static func list(_ descriptor: Int32, _ display: String) throws(SystemError) -> [DirectoryEntry] {
        guard let entries = SystemCalls.list(descriptor) else { throw .last("opendir", display) }
        return entries
    }

    // MARK: - Helpers shared with the read-only listing

    /// Creates `path` and any missing parents, each owner-only (0700). Follows links: this is
    /// for the root, the app's own path.
    static func makeDirectories(_ path: String) throws(SystemError) {
        if SystemCalls.mkdir(path, 0o700) == 0 { return }
        switch errno {
        case EEXIST:
            var info = stat()
            guard SystemCalls.statPath(path, &info) == 0 else { throw .last("stat", path) }
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw SystemError(operation: "mkdir", errorNumber: ENOTDIR, path: path)
            }
        case ENOENT, ENOTDIR:
            // A parent is missing, or is a file: the parent's own attempt says which.
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else { throw .last("mkdir", path) }
            try makeDirectories(parent)
            if SystemCalls.mkdir(path, 0o700) != 0 && errno != EEXIST { throw .last("mkdir", path) }
        default:
            throw .last("mkdir", path)
        }
    }

    /// Opens the directory `name` in `parent` without following a link.
    ///
    /// A link there is removed and reported; with `create`, a missing directory is made
    /// owner-only.
    ///
    /// - Returns: its descriptor, or `nil` when it is missing (or was a link) and not `create`.
    /// - Throws: `ENOTDIR` when a file stands there, or what the system calls report.
    static func openDirectory(
        in parent: Int32, _ name: String, displayPath display: @autoclosure () -> String, create: Bool, removesLinks: Bool = true,
        onDamage: @Sendable (String, String) -> Void
    ) throws(SystemError) -> Int32? {
        // Named for errors and reports only: not built on the way to an open directory.
        var displayPath: String { display() }
        for _ in 0..<3 {
            let descriptor = SystemCalls.openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if descriptor >= 0 { return descriptor }
            let error = errno
            switch error {
            case ENOENT:
                guard create else { return nil }
                if SystemCalls.mkdirat(parent, name, 0o700) != 0 && errno != EEXIST { throw .last("mkdir", displayPath) }
            case ELOOP, EMLINK, ENOTDIR:
                var info = stat()
                guard SystemCalls.fstatat(parent, name, &info) == 0 else {
                    if errno == ENOENT { continue }
                    throw .last("lstat", displayPath)
                }
                guard info.st_mode & S_IFMT == S_IFLNK else {
                    // A file (or FIFO, socket) where a directory belongs: said plainly, not
                    // removed: it may be someone's data.
                    throw SystemError(operation: "open", errorNumber: ENOTDIR, path: displayPath)
                }
                guard removesLinks else { return nil }
                guard SystemCalls.unlinkat(parent, name, 0) == 0 || errno == ENOENT else { throw .last("unlink", displayPath) }
                onDamage(displayPath, "a symbolic link where a directory belongs; the link was removed")
                if !create { return nil }
            default:
                throw SystemError(operation: "open", errorNumber: error, path: displayPath)
            }
        }
        throw SystemError(operation: "open", errorNumber: ELOOP, path: displayPath)
    }

    /// A description of a file that is not a regular file.
    static func kind(of info: stat) -> String {
        switch info.st_mode & S_IFMT {
        case S_IFIFO: "a FIFO, not a regular file"
        case S_IFSOCK: "a socket, not a regular file"
        case S_IFCHR, S_IFBLK: "a device, not a regular file"
        case S_IFDIR: "a directory, not a regular file"
        case S_IFLNK: "a symbolic link, not a regular file"
        default: "not a regular file"
        }
    }

    /// How the names of temporary files begin.
    static let temporaryPrefix = ".tmp-"

    /// A random name part for temporary files and trash directories.
    static func randomSuffix() -> String {
        String(UniqueNumbers.next(), radix: 16)
    }

    /// A fresh temporary file name.
    static func temporaryName() -> String {
        temporaryPrefix + randomSuffix()
    }

    static func modificationDate(of info: stat) -> Date {
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        return Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000)
    }

    // MARK: - Private

    /// The descriptor of `path`'s directory: the version directory's own, or a user directory
    /// opened (created, with `create`) for the call. Close it unless it is the version's.
    func openDirectory(of path: CachePath, create: Bool) throws(SystemError) -> Int32? {
        guard let directory = path.directory else { return version.descriptor }
        // Named for faults, errors and reports only: not built on the way to an open directory.
        var display: String { versionPath + "/" + directory }
        if create {
            try inject(.makeDirectory, display)
        }
        return try Self.openDirectory(
            in: version.descriptor, directory, displayPath: display, create: create, removesLinks: !isReadOnly, onDamage: onDamage)
    }

    /// Removes `name` in `directory` if it is a symbolic link; returns what it was.
    private func removeIfLink(in directory: Int32, _ name: String, _ display: String) -> String? {
        var info = stat()
        guard SystemCalls.fstatat(directory, name, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
        guard !isReadOnly else { return "a symbolic link" }
        guard SystemCalls.unlinkat(directory, name, 0) == 0 else { return nil }
        onDamage(display, "a symbolic link where a file belongs; the link was removed")
        return "a symbolic link (removed)"
    }

    /// Removes `name` in `directory` if it is a link or a special file (never a regular file
    /// or a directory), reporting it; returns whether it did.
    func removeIfUnsafe(in directory: Int32, _ name: String, _ display: String) -> Bool {
        var info = stat()
        guard SystemCalls.fstatat(directory, name, &info) == 0 else { return false }
        let type = info.st_mode & S_IFMT
        guard type != S_IFREG && type != S_IFDIR, SystemCalls.unlinkat(directory, name, 0) == 0 else { return false }
        onDamage(display, "\(Self.kind(of: info)); it was removed")
        return true
    }

    /// Deletes `name` in `parent` and everything under it, following no link.
    func removeTree(in parent: Int32, _ name: String, _ display: String) throws(SystemError) {
        try Self.removeTree(in: parent, name, display)
    }

    private static func removeTree(in parent: Int32, _ name: String, _ display: String) throws(SystemError) {
        if SystemCalls.unlinkat(parent, name, 0) == 0 { return }
        switch errno {
        case ENOENT: return
        case EISDIR, EPERM: break
        default: throw .last("unlink", display)
        }
        let descriptor = SystemCalls.openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return }
            throw .last("open", display)
        }
        let children = try list(SystemCalls.dup(descriptor), display)
        defer { SystemCalls.close(descriptor) }
        for child in children {
            try removeTree(in: descriptor, child.name, display + "/" + child.name)
        }
        if SystemCalls.unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT { throw .last("rmdir", display) }
    }

    func writeAll(_ descriptor: Int32, _ bytes: some ContiguousBytes, _ path: String) throws(SystemError) {
        try inject(.write, path)
        let failure: Int32? = bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var written = 0
            while written < buffer.count {
                let count = SystemCalls.write(descriptor, base + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += count
            }
            return nil
        }
        if let failure { throw SystemError(operation: "write", errorNumber: failure, path: path) }
    }

    func inject(_ operation: Operation, _ path: String) throws(SystemError) {
        if let faults, let errorNumber = faults(operation, path) {
            throw SystemError(operation: "\(operation)", errorNumber: errorNumber, path: path)
        }
    }

    /// A `timespec` for `date`, clamped to what the system can hold.
    static func makeTimespec(_ date: Date) -> timespec {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite else { return timespec(tv_sec: 0, tv_nsec: 0) }
        let seconds = min(max(interval.rounded(.down), -9.0e15), 9.0e15)
        let nanoseconds = min(999_999_999, max(0, Int((interval - seconds) * 1_000_000_000)))
        return timespec(tv_sec: time_t(seconds), tv_nsec: nanoseconds)
    }
}

/// System call failures to simulate, as a configuration carries them (tests only): given an
/// operation and the path it is for, the `errno` to fail with, or `nil` to let it run.
typealias DiskFaults = FileSystem.FaultInjector
