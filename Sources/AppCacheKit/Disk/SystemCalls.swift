#if canImport(AppCacheAtomics)
import AppCacheAtomics
#endif
import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Every system call the disk layer makes on the cache's files, each sent to the kernel, or,
/// for a path under an in-memory root or a descriptor of one, to ``MemoryFiles``.
///
/// Each has its POSIX namesake's arguments, result and `errno`. Choosing costs one comparison
/// of the descriptor (or a prefix check of the path) per call, nothing measurable beside the
/// call itself.
enum SystemCalls {
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        if MemoryVolume.claims(path) { return MemoryFiles.open(path, flags, mode) }
        #if canImport(Darwin)
        return Darwin.open(path, flags, mode)
        #else
        return Glibc.open(path, flags, mode)
        #endif
    }

    // The names are passed through `withCString`: Swift's implicit conversion of a String
    // argument to a C string copies a short (inline) one into an array it allocates, which cost
    // an allocation per system call on a path.

    static func openat(_ directory: Int32, _ name: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        if MemoryFiles.owns(directory) { return MemoryFiles.openat(directory, name, flags, mode) }
        return name.withCString { name in
            #if canImport(Darwin)
            Darwin.openat(directory, name, flags, mode)
            #else
            Glibc.openat(directory, name, flags, mode)
            #endif
        }
    }

    /// Opens `directory/name`, a relative path of more than one component, under `parent` in one
    /// call, following no symbolic link in any component and never leaving `parent`
    /// (`appcache_open_beneath`): -1 with `errno` `ELOOP` or `EXDEV` when a link is in the way,
    /// `ENOSYS` where the system cannot open so (and for in-memory files): the caller then opens
    /// one component at a time. The path is joined on the stack (``withJoinedPath(_:_:_:)``).
    static func openBeneath(_ parent: Int32, _ directory: String, _ name: String, _ flags: Int32) -> Int32 {
        if MemoryFiles.owns(parent) {
            errno = ENOSYS
            return -1
        }
        #if canImport(AppCacheAtomics)
        return withJoinedPath(directory, name) { appcache_open_beneath(parent, $0, flags, 0) }
        #else
        errno = ENOSYS
        return -1
        #endif
    }

    /// ``fstatat(_:_:_:)`` of `directory/name` under `parent`, the path joined on the stack.
    static func fstatat(_ parent: Int32, _ directory: String, _ name: String, _ info: inout stat) -> Int32 {
        if parent == AT_FDCWD || MemoryFiles.owns(parent) { return fstatat(parent, directory + "/" + name, &info) }
        return withJoinedPath(directory, name) { path in
            #if canImport(Darwin)
            Darwin.fstatat(parent, path, &info, AT_SYMLINK_NOFOLLOW)
            #else
            Glibc.fstatat(parent, path, &info, AT_SYMLINK_NOFOLLOW)
            #endif
        }
    }

    /// `directory + "/" + name` as a C string, built in a buffer on the stack for `body`: a
    /// String concatenation and its conversion cost more than the system call's own
    /// instructions on the way to a pack (700 of a fresh instance's first read, callgrind).
    private static func withJoinedPath<Result>(_ directory: String, _ name: String, _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        var directory = directory
        var name = name
        let directoryLength = directory.utf8.count
        let length = directoryLength + 1 + name.utf8.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length + 1) { buffer in
            directory.withUTF8 { buffer.baseAddress!.update(from: $0.baseAddress!, count: $0.count) }
            buffer[directoryLength] = UInt8(ascii: "/")
            name.withUTF8 { (buffer.baseAddress! + directoryLength + 1).update(from: $0.baseAddress!, count: $0.count) }
            buffer[length] = 0
            return buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: length + 1) { body($0) }
        }
    }

    @discardableResult
    static func close(_ descriptor: Int32) -> Int32 {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.close(descriptor) }
        #if canImport(Darwin)
        return Darwin.close(descriptor)
        #else
        return Glibc.close(descriptor)
        #endif
    }

    static func dup(_ descriptor: Int32) -> Int32 {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.dup(descriptor) }
        #if canImport(Darwin)
        return Darwin.dup(descriptor)
        #else
        return Glibc.dup(descriptor)
        #endif
    }

    static func dup2(_ descriptor: Int32, _ target: Int32) -> Int32 {
        if MemoryFiles.owns(descriptor) || MemoryFiles.owns(target) { return MemoryFiles.dup2(descriptor, target) }
        #if canImport(Darwin)
        return Darwin.dup2(descriptor, target)
        #else
        return Glibc.dup2(descriptor, target)
        #endif
    }

    static func pread(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: off_t) -> Int {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.pread(descriptor, buffer, count, offset) }
        #if canImport(Darwin)
        return Darwin.pread(descriptor, buffer, count, offset)
        #else
        return Glibc.pread(descriptor, buffer, count, offset)
        #endif
    }

    /// Fills `buffer` from `offset` of `descriptor`, retrying interrupted and short reads.
    ///
    /// - Returns: the bytes read (fewer when the file ends first), or -1 on an error (`errno`
    ///   says which).
    static func preadFully(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < buffer.count {
            let got = pread(descriptor, base + filled, buffer.count - filled, off_t(offset + filled))
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { return got < 0 ? -1 : filled }
            filled += got
        }
        return filled
    }

    static func pwrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int, _ offset: off_t) -> Int {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.pwrite(descriptor, buffer, count, offset) }
        #if canImport(Darwin)
        return Darwin.pwrite(descriptor, buffer, count, offset)
        #else
        return Glibc.pwrite(descriptor, buffer, count, offset)
        #endif
    }

    static func write(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.write(descriptor, buffer, count) }
        #if canImport(Darwin)
        return Darwin.write(descriptor, buffer, count)
        #else
        return Glibc.write(descriptor, buffer, count)
        #endif
    }

    static func ftruncate(_ descriptor: Int32, _ length: off_t) -> Int32 {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.ftruncate(descriptor, length) }
        #if canImport(Darwin)
        return Darwin.ftruncate(descriptor, length)
        #else
        return Glibc.ftruncate(descriptor, length)
        #endif
    }

    static func fsync(_ descriptor: Int32) -> Int32 {
        if MemoryFiles.owns(descriptor) { return 0 }
        #if canImport(Darwin)
        return Darwin.fsync(descriptor)
        #else
        return Glibc.fsync(descriptor)
        #endif
    }

    static func fstat(_ descriptor: Int32, _ info: inout stat) -> Int32 {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.fstat(descriptor, &info) }
        #if canImport(Darwin)
        return Darwin.fstat(descriptor, &info)
        #else
        return Glibc.fstat(descriptor, &info)
        #endif
    }

    /// `fstatat` with `AT_SYMLINK_NOFOLLOW` (in memory there are no links to follow).
    static func fstatat(_ directory: Int32, _ name: String, _ info: inout stat) -> Int32 {
        if MemoryFiles.owns(directory) || (directory == AT_FDCWD && name.utf8.first == UInt8(ascii: "/") && MemoryVolume.claims(name)) {
            return MemoryFiles.fstatat(directory, name, &info)
        }
        return name.withCString { name in
            #if canImport(Darwin)
            Darwin.fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW)
            #else
            Glibc.fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW)
            #endif
        }
    }

    /// `stat` of `path`, following links (the root is the app's path).
    static func statPath(_ path: String, _ info: inout stat) -> Int32 {
        if MemoryVolume.claims(path) { return MemoryFiles.statPath(path, &info) }
        return stat(path, &info)
    }

    static func mkdir(_ path: String, _ mode: mode_t) -> Int32 {
        if MemoryVolume.claims(path) { return MemoryFiles.mkdir(path, mode) }
        #if canImport(Darwin)
        return Darwin.mkdir(path, mode)
        #else
        return Glibc.mkdir(path, mode)
        #endif
    }

    static func mkdirat(_ directory: Int32, _ name: String, _ mode: mode_t) -> Int32 {
        if MemoryFiles.owns(directory) { return MemoryFiles.mkdirat(directory, name, mode) }
        return name.withCString { name in
            #if canImport(Darwin)
            Darwin.mkdirat(directory, name, mode)
            #else
            Glibc.mkdirat(directory, name, mode)
            #endif
        }
    }

    @discardableResult
    static func unlinkat(_ directory: Int32, _ name: String, _ flags: Int32) -> Int32 {
        if MemoryFiles.owns(directory) { return MemoryFiles.unlinkat(directory, name, flags) }
        return name.withCString { name in
            #if canImport(Darwin)
            Darwin.unlinkat(directory, name, flags)
            #else
            Glibc.unlinkat(directory, name, flags)
            #endif
        }
    }

    static func renameat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) -> Int32 {
        let inMemory = (MemoryFiles.owns(fromDirectory), MemoryFiles.owns(toDirectory))
        if inMemory == (true, true) { return MemoryFiles.renameat(fromDirectory, from, toDirectory, to) }
        if inMemory.0 || inMemory.1 {
            errno = EXDEV
            return -1
        }
        #if canImport(Darwin)
        return Darwin.renameat(fromDirectory, from, toDirectory, to)
        #else
        return Glibc.renameat(fromDirectory, from, toDirectory, to)
        #endif
    }

    /// Sets the access and modification times of the file open at `descriptor`.
    static func futimens(_ descriptor: Int32, _ times: UnsafePointer<timespec>) -> Int32 {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.futimens(descriptor, times) }
        #if canImport(Darwin)
        return Darwin.futimens(descriptor, times)
        #else
        return Glibc.futimens(descriptor, times)
        #endif
    }

    /// `utimensat` with `AT_SYMLINK_NOFOLLOW`.
    static func utimensat(_ directory: Int32, _ name: String, _ times: UnsafePointer<timespec>) -> Int32 {
        if MemoryFiles.owns(directory) { return MemoryFiles.utimensat(directory, name, times) }
        return name.withCString { name in
            #if canImport(Darwin)
            Darwin.utimensat(directory, name, times, AT_SYMLINK_NOFOLLOW)
            #else
            Glibc.utimensat(directory, name, times, AT_SYMLINK_NOFOLLOW)
            #endif
        }
    }

    @discardableResult
    static func flock(_ descriptor: Int32, _ operation: Int32) -> Int32 {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.flock(descriptor, operation) }
        return systemFlock(descriptor, operation)
    }

    /// `fcntl` with an integer argument.
    @discardableResult
    static func fcntl(_ descriptor: Int32, _ command: Int32, _ value: Int32) -> Int32 {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.fcntl(descriptor, command, value) }
        #if canImport(Darwin)
        return Darwin.fcntl(descriptor, command, value)
        #else
        return Glibc.fcntl(descriptor, command, value)
        #endif
    }

    /// The entries of the directory open at `descriptor` (without "." and ".."), which is
    /// closed; `nil` when it cannot be read (`errno` says why).
    static func list(_ descriptor: Int32) -> [FileSystem.DirectoryEntry]? {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.list(descriptor) }
        guard let stream = fdopendir(descriptor) else {
            let failure = errno
            close(descriptor)
            errno = failure
            return nil
        }
        defer { closedir(stream) }
        // fdopendir starts where the descriptor is; a duplicated one shares that position.
        rewinddir(stream)
        var entries: [FileSystem.DirectoryEntry] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            guard name != "." && name != ".." else { continue }
            let type = entry.pointee.d_type
            entries.append(FileSystem.DirectoryEntry(name: name, mayBeRegularFile: type == UInt8(DT_REG) || type == UInt8(DT_UNKNOWN)))
        }
        return entries
    }

    /// Maps `length` bytes of the file open at `descriptor`, shared (`MAP_SHARED`); `nil` on a
    /// failure.
    static func mapShared(_ descriptor: Int32, _ length: Int, writable: Bool) -> UnsafeMutableRawPointer? {
        if MemoryFiles.owns(descriptor) { return MemoryFiles.mapShared(descriptor, length) }
        let mapped = mmap(nil, length, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, descriptor, 0)
        guard let mapped, mapped != MAP_FAILED else { return nil }
        return mapped
    }

    /// Maps the file open at `descriptor` at `address`, in place of what was mapped there (a
    /// lock file recreated after a purge); `false` on a failure. In memory this fails with
    /// `ENOTSUP`: nothing purges an in-memory root.
    static func mapShared(_ descriptor: Int32, _ length: Int, replacing address: UnsafeMutableRawPointer) -> Bool {
        if MemoryFiles.owns(descriptor) {
            errno = ENOTSUP
            return false
        }
        let mapped = mmap(address, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, descriptor, 0)
        return mapped == address
    }

    static func unmap(_ address: UnsafeMutableRawPointer, _ length: Int) {
        if MemoryFiles.unmap(address) { return }
        munmap(address, length)
    }
}

/// The kernel's `flock` (inside ``SystemCalls`` its name is the wrapper's, and `Glibc.flock` the
/// structure's).
private func systemFlock(_ descriptor: Int32, _ operation: Int32) -> Int32 {
    flock(descriptor, operation)
}
