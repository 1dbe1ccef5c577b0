import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The handful of system calls the disk layer makes, with owner-only permissions.
///
/// Plain POSIX calls rather than `Data.write(to:)` or `FileManager`, because on Linux the former
/// syncs every file and the latter resolves owner names on every `attributesOfItem`
/// (`shared/PERFORMANCE-NOTES.md`). Archives carry checksums, so a torn write is detected on read
/// and durability does not depend on `fsync`.
struct FileSystem: Sendable {
    /// A step that tests can make fail with a chosen `errno`.
    enum Operation: Sendable, Hashable {
        case makeDirectory, createFile, write, rename, remove, read
    }

    /// Returns the `errno` to fail an operation with, or `nil` to let it run. Tests only.
    typealias FaultInjector = @Sendable (Operation, String) -> Int32?

    var faults: FaultInjector?

    /// A whole file and its modification date, read through one descriptor so they match.
    struct Contents {
        var bytes: Data
        var modificationDate: Date
        var fileSize: Int = 0
    }

    /// Reads the file at `path`, or returns `nil` when there is none.
    ///
    /// - Parameter limit: read at most this many bytes from the start (headers only).
    /// - Returns: the bytes, the modification date and, in `fileSize`, the whole file's size.
    func read(_ path: String, limit: Int = .max) throws(SystemError) -> Contents? {
        try inject(.read, path)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw .last("open", path)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .last("fstat", path) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw SystemError(operation: "open", errorNumber: EISDIR, path: path) }
        var bytes = Data(count: min(Int(info.st_size), limit))
        let filled = bytes.withUnsafeMutableBytes { buffer -> Int in
            var filled = 0
            while filled < buffer.count {
                let count = systemRead(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return count < 0 ? -1 : filled }
                filled += count
            }
            return filled
        }
        guard filled >= 0 else { throw .last("read", path) }
        // A file that shrank while being read is returned as read; its checksum will tell.
        if filled < bytes.count { bytes.removeSubrange(filled...) }
        return Contents(bytes: bytes, modificationDate: Self.modificationDate(of: info), fileSize: Int(info.st_size))
    }

    /// Writes `header` then `payload` to a new file beside `path` and renames it into place,
    /// with `modificationDate` as its modification time.
    ///
    /// Readers see the old file or the new one, never a mix. On failure the temporary file is
    /// removed and the old file is untouched. Missing directories up to `directory` are
    /// created owner-only.
    func writeAtomically(
        header: [UInt8], payload: Data, to path: String, in directory: String, modificationDate: Date
    ) throws(SystemError) {
        let temporary = directory + "/" + Self.temporaryPrefix + Self.randomSuffix()
        var descriptor = try createExclusive(temporary)
        if descriptor < 0 {
            try makeDirectories(directory)
            descriptor = try createExclusive(temporary)
            guard descriptor >= 0 else { throw .last("open", temporary) }
        }
        do throws(SystemError) {
            try writeAll(descriptor, header, temporary)
            try writeAll(descriptor, payload, temporary)
            var times = [Self.makeTimespec(modificationDate), Self.makeTimespec(modificationDate)]
            guard futimens(descriptor, &times) == 0 else { throw SystemError.last("futimens", temporary) }
            let closed = close(descriptor)
            descriptor = -1
            guard closed == 0 else { throw SystemError.last("close", temporary) }
            try inject(.rename, path)
            guard rename(temporary, path) == 0 else { throw SystemError.last("rename", path) }
        } catch {
            if descriptor >= 0 { close(descriptor) }
            unlink(temporary)
            throw error
        }
    }

    /// Appends `data` to the file at `path`, creating it owner-only if needed, in one `write`.
    func append(_ data: Data, to path: String) throws(SystemError) {
        try inject(.write, path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .last("open", path) }
        defer { close(descriptor) }
        try writeAll(descriptor, data, path)
    }

    /// Removes the file at `path`; a missing file is not an error.
    func removeFile(_ path: String) throws(SystemError) {
        try inject(.remove, path)
        if unlink(path) != 0 && errno != ENOENT { throw .last("unlink", path) }
    }

    /// Renames `path` to `destination` in one atomic step.
    ///
    /// - Returns: `false` when there is nothing at `path`.
    func move(_ path: String, to destination: String) throws(SystemError) -> Bool {
        try inject(.rename, path)
        if rename(path, destination) == 0 { return true }
        if errno == ENOENT { return false }
        throw .last("rename", path)
    }

    /// Deletes `path` and everything under it, without following links; a missing path is not
    /// an error.
    func removeTree(_ path: String) throws(SystemError) {
        try inject(.remove, path)
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw .last("lstat", path)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            if unlink(path) != 0 && errno != ENOENT { throw .last("unlink", path) }
            return
        }
        for name in try contentsOfDirectory(path) ?? [] {
            try removeTree(path + "/" + name)
        }
        if rmdir(path) != 0 && errno != ENOENT { throw .last("rmdir", path) }
    }

    /// The names in the directory at `path`; `nil` when it does not exist.
    func contentsOfDirectory(_ path: String) throws(SystemError) -> [String]? {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return nil }
            throw .last("opendir", path)
        }
        defer { closedir(directory) }
        var names = [String]()
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Creates `path` and any missing parents, each owner-only (0700).
    func makeDirectories(_ path: String) throws(SystemError) {
        try inject(.makeDirectory, path)
        if mkdir(path, 0o700) == 0 { return }
        switch errno {
        case EEXIST:
            var info = stat()
            guard stat(path, &info) == 0 else { throw .last("stat", path) }
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw SystemError(operation: "mkdir", errorNumber: ENOTDIR, path: path)
            }
        case ENOENT, ENOTDIR:
            // A parent is missing, or is a file: the parent's own attempt says which.
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else { throw .last("mkdir", path) }
            try makeDirectories(parent)
            if mkdir(path, 0o700) != 0 && errno != EEXIST { throw .last("mkdir", path) }
        default:
            throw .last("mkdir", path)
        }
    }

    /// How the names of temporary files begin.
    static let temporaryPrefix = ".tmp-"

    /// A random name part for temporary files and trash directories.
    static func randomSuffix() -> String {
        String(UInt64.random(in: .min ... .max), radix: 16)
    }

    // MARK: - Private

    /// Opens a new file for writing; returns -1 when its directory is missing or a file stands
    /// in its way (for ``makeDirectories(_:)`` to mend or name), and throws for anything else.
    private func createExclusive(_ path: String) throws(SystemError) -> Int32 {
        try inject(.createFile, path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0 && errno != ENOENT && errno != ENOTDIR { throw .last("open", path) }
        return descriptor
    }

    private func writeAll(_ descriptor: Int32, _ bytes: some ContiguousBytes, _ path: String) throws(SystemError) {
        try inject(.write, path)
        let failure: Int32? = bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let count = systemWrite(descriptor, buffer.baseAddress! + written, buffer.count - written)
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

    private func inject(_ operation: Operation, _ path: String) throws(SystemError) {
        if let faults, let errorNumber = faults(operation, path) {
            throw SystemError(operation: "\(operation)", errorNumber: errorNumber, path: path)
        }
    }

    private static func makeTimespec(_ date: Date) -> timespec {
        let interval = date.timeIntervalSince1970
        let seconds = interval.rounded(.down)
        let nanoseconds = min(999_999_999, Int((interval - seconds) * 1_000_000_000))
        return timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds)
    }

    private static func modificationDate(of info: stat) -> Date {
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        return Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000)
    }
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
