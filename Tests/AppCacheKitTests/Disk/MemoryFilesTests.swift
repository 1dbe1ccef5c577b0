import Foundation
import Testing

@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#endif

/// The in-memory files answer the disk layer's system calls as the kernel does: results, `errno`
/// values, shared offsets and locks of duplicated descriptors, mappings that see writes.
@Suite struct MemoryFilesTests {
    let volume = MemoryVolume()

    func openRoot() throws -> Int32 {
        let root = SystemCalls.open(volume.rootPath, O_RDONLY | O_DIRECTORY)
        try #require(root >= 0)
        return root
    }

    @Test func filesAreMadeWrittenAndReadAsOnDisk() throws {
        let root = try openRoot()
        defer { SystemCalls.close(root) }
        let file = SystemCalls.openat(root, "a", O_RDWR | O_CREAT | O_EXCL, 0o600)
        #expect(file >= 0)
        #expect(SystemCalls.openat(root, "a", O_RDWR | O_CREAT | O_EXCL, 0o600) == -1 && errno == EEXIST)
        #expect(SystemCalls.openat(root, "missing", O_RDONLY) == -1 && errno == ENOENT)
        #expect(SystemCalls.openat(root, "a", O_RDONLY | O_DIRECTORY) == -1 && errno == ENOTDIR)
        let bytes: [UInt8] = [1, 2, 3, 4, 5]
        #expect(SystemCalls.write(file, bytes, 5) == 5)
        #expect(SystemCalls.pwrite(file, [9], 1, 7) == 1)
        var info = stat()
        #expect(SystemCalls.fstat(file, &info) == 0 && info.st_size == 8 && info.st_mode & S_IFMT == S_IFREG)
        var read = [UInt8](repeating: 0xFF, count: 10)
        #expect(SystemCalls.pread(file, &read, 10, 0) == 8)
        #expect(read.prefix(8) == [1, 2, 3, 4, 5, 0, 0, 9], "a gap reads as zeros")
        #expect(SystemCalls.ftruncate(file, 2) == 0)
        #expect(SystemCalls.pread(file, &read, 10, 0) == 2)
        #expect(SystemCalls.close(file) == 0)
        #expect(SystemCalls.close(file) == -1 && errno == EBADF)

        let appending = SystemCalls.openat(root, "a", O_WRONLY | O_APPEND)
        #expect(SystemCalls.write(appending, [7], 1) == 1)
        #expect(SystemCalls.fstat(appending, &info) == 0 && info.st_size == 3)
        #expect(SystemCalls.pread(appending, &read, 1, 0) == -1 && errno == EBADF, "write-only")
        SystemCalls.close(appending)
    }

    @Test func directoriesRenamesAndRemovalsFollowPOSIX() throws {
        let root = try openRoot()
        defer { SystemCalls.close(root) }
        #expect(SystemCalls.mkdirat(root, "d", 0o700) == 0)
        #expect(SystemCalls.mkdirat(root, "d", 0o700) == -1 && errno == EEXIST)
        #expect(SystemCalls.mkdir(volume.rootPath, 0o700) == -1 && errno == EEXIST, "the root exists")
        let directory = SystemCalls.openat(root, "d", O_RDONLY | O_DIRECTORY)
        #expect(directory >= 0)
        SystemCalls.close(SystemCalls.openat(directory, "f", O_WRONLY | O_CREAT, 0o600))
        SystemCalls.close(SystemCalls.openat(root, "g", O_WRONLY | O_CREAT, 0o600))
        var info = stat()
        #expect(SystemCalls.fstatat(AT_FDCWD, volume.rootPath + "/d/f", &info) == 0, "an absolute path")
        #expect(SystemCalls.unlinkat(root, "d", 0) == -1 && errno == EISDIR)
        #expect(SystemCalls.unlinkat(root, "d", AT_REMOVEDIR) == -1 && errno == ENOTEMPTY)
        #expect(SystemCalls.renameat(root, "g", root, "d") == -1 && errno == EISDIR)
        #expect(SystemCalls.mkdirat(root, "e", 0o700) == 0)
        #expect(SystemCalls.renameat(root, "e", root, "d") == -1 && errno == ENOTEMPTY)
        #expect(SystemCalls.renameat(root, "d", root, "e") == 0, "onto an empty directory")
        #expect(SystemCalls.fstatat(root, "d", &info) == -1 && errno == ENOENT)
        #expect(SystemCalls.fstatat(root, "e/f", &info) == 0)
        #expect(SystemCalls.fstatat(directory, "f", &info) == 0, "an open directory moves with its name")
        #expect(Set(try FileSystem.list(SystemCalls.dup(root), "root").map(\.name)) == ["e", "g"])
        #expect(SystemCalls.unlinkat(directory, "f", 0) == 0)
        #expect(SystemCalls.unlinkat(root, "e", AT_REMOVEDIR) == 0)
        SystemCalls.close(directory)
        #expect(SystemCalls.renameat(root, "g", AT_FDCWD, "/tmp/elsewhere") == -1 && errno == EXDEV, "nothing leaves the volume")
    }

    @Test func locksBelongToOpenFilesAndGoWithTheirLastDescriptor() throws {
        let root = try openRoot()
        defer { SystemCalls.close(root) }
        let first = SystemCalls.openat(root, "lock", O_RDWR | O_CREAT, 0o600)
        let second = SystemCalls.openat(root, "lock", O_RDWR)
        #expect(SystemCalls.flock(first, LOCK_EX | LOCK_NB) == 0)
        #expect(SystemCalls.flock(second, LOCK_EX | LOCK_NB) == -1 && errno == EWOULDBLOCK)
        let duplicate = SystemCalls.dup(first)
        #expect(SystemCalls.flock(duplicate, LOCK_EX | LOCK_NB) == 0, "a duplicate shares the lock")
        SystemCalls.close(first)
        #expect(SystemCalls.flock(second, LOCK_EX | LOCK_NB) == -1, "the duplicate still holds it")
        SystemCalls.close(duplicate)
        #expect(SystemCalls.flock(second, LOCK_EX | LOCK_NB) == 0, "released with the last descriptor")
        #expect(SystemCalls.flock(second, LOCK_UN) == 0)
        SystemCalls.close(second)
    }

    @Test func aSharedMappingIsTheFilesBytes() throws {
        let root = try openRoot()
        defer { SystemCalls.close(root) }
        let file = SystemCalls.openat(root, "words", O_RDWR | O_CREAT, 0o600)
        defer { SystemCalls.close(file) }
        #expect(SystemCalls.ftruncate(file, 64) == 0)
        let mapped = try #require(SystemCalls.mapShared(file, 64, writable: true))
        mapped.storeBytes(of: 0x0102_0304_0506_0708 as UInt64, toByteOffset: 8, as: UInt64.self)
        var word: UInt64 = 0
        #expect(SystemCalls.pread(file, &word, 8, 8) == 8 && word == 0x0102_0304_0506_0708)
        #expect(SystemCalls.ftruncate(file, 1 << 20) == -1 && errno == ENOSPC, "the mapped bytes never move")
        #expect(!SystemCalls.mapShared(file, 64, replacing: mapped))
        SystemCalls.unmap(mapped, 64)
        #expect(SystemCalls.ftruncate(file, 1 << 20) == 0)
    }
}
