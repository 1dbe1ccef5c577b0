import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The baselines' file writing: what an app would do without AppCache.
enum PlainFiles {
    /// Writes `data` to a temporary file beside `path` and renames it into place, with plain
    /// POSIX calls and no `fsync`: the cheapest atomic replacement there is.
    static func writeAndRename(_ data: Data, to path: String) throws {
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXFailure(operation: "open") }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == data.count else { throw POSIXFailure(operation: "write") }
        guard rename(temporary, path) == 0 else { throw POSIXFailure(operation: "rename") }
    }

    /// Writes `data` to a new file at `path` (for filling a directory quickly).
    static func create(_ data: Data, at path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXFailure(operation: "open") }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == data.count else { throw POSIXFailure(operation: "write") }
    }

    /// Reads the whole file at `path` with plain POSIX calls (open, fstat, read, close): the
    /// cheapest read there is.
    static func read(_ path: String) throws -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXFailure(operation: "open") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw POSIXFailure(operation: "fstat") }
        var data = Data(count: Int(info.st_size))
        #if canImport(Glibc)
        let count = data.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        #else
        let count = data.withUnsafeMutableBytes { Darwin.read(descriptor, $0.baseAddress, $0.count) }
        #endif
        guard count == data.count else { throw POSIXFailure(operation: "read") }
        return data
    }

    /// Waits until the system has written out what earlier benchmarks left dirty (the seed's
    /// fsync-heavy saves above all), so a file-writing benchmark starts on a quiet disk.
    static func settleDisk() {
        sync()
    }

    struct POSIXFailure: Error, CustomStringConvertible {
        var operation: String
        var number = errno
        var description: String { "\(operation) failed: \(String(cString: strerror(number)))" }
    }
}

/// The process's resident memory, where the platform tells it cheaply.
enum ResidentMemory {
    /// Resident bytes, from `/proc/self/statm`; `nil` where there is none.
    static func current() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

extension PlainFiles {
    /// The bytes this process has had the device write so far (`/proc/self/io` `write_bytes`,
    /// counted as page-cache pages are dirtied); `nil` where the system does not say.
    static func deviceBytesWritten() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("write_bytes:") })
        else { return nil }
        return Int(line.split(separator: " ").last ?? "")
    }
}
