import Foundation
import Testing

/// The system calls a write-through of one collection makes, counted with `strace` on the
/// torture program's probe (`appcache-torture --child syscall-probe`): its writes run between
/// two marker calls, and only the probing thread's calls between them are counted.
struct SystemCallTests {
    static let strace = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }
    /// Under ThreadSanitizer (`Scripts/sanitize`) the probe is an instrumented build: its calls
    /// are the sanitizer's as much as the cache's, and tracing it keeps both cores busy for
    /// half a minute, starving the tests that run beside it.
    static let isThreadSanitized = ProcessInfo.processInfo.environment["TSAN_OPTIONS"] != nil

    /// The calls of each write of `items` menu items, by name, over `writes` writes.
    private func calls(items: Int, writes: Int) async throws -> (perWrite: Double, names: [String: Int]) {
        let scratch = try ExampleTests.Scratch()
        let log = scratch.url.appending(path: "trace").path(percentEncoded: false)
        let torture = ExampleProgram.productsDirectory.appending(path: "appcache-torture").path(percentEncoded: false)
        let traced = ExampleProgram(name: "strace", executable: URL(filePath: try #require(Self.strace)))
        let run = try await traced.run(
            ["-f", "-o", log, torture, "--child", "syscall-probe", "--root", scratch.cacheRoot, "--count", String(writes), "--items", String(items)],
            scratch: scratch.url)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(!run.standardOutput.contains("VIOLATION"), "\(run.standardOutput)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let begin = try #require(lines.firstIndex { $0.contains("\"probe-begin\"") })
        let end = try #require(lines.firstIndex { $0.contains("\"probe-end\"") })
        // "12345 write(...)": the thread's id (strace pads it to a width), then the call.
        func split(_ line: Substring) -> (thread: Substring, call: Substring) {
            let trimmed = line.drop { $0 == " " }
            let thread = trimmed.prefix { $0 != " " }
            return (thread, trimmed.dropFirst(thread.count).drop { $0 == " " })
        }
        let thread = split(lines[begin]).thread
        var names: [String: Int] = [:]
        for line in lines[(begin + 1)..<end] where split(line).thread == thread {
            let call = split(line).call
            // "<... futex resumed>" continues a call already counted.
            guard !call.hasPrefix("<..."), let name = call.split(separator: "(").first else { continue }
            names[String(name), default: 0] += 1
        }
        return (Double(names.values.reduce(0, +)) / Double(writes), names)
    }

    @Test(
        .enabled(if: strace != nil, "strace is not installed"), .disabled(if: isThreadSanitized, "the probe is built for ThreadSanitizer"),
        arguments: [1, 100])
    func aWriteThroughMakesAtMostTenSystemCalls(items: Int) async throws {
        let (perWrite, names) = try await calls(items: items, writes: 20)
        #expect(perWrite <= 10, "\(perWrite) calls per write of [\(items)]: \(names)")
        // The calls a write needs and no others: the lock, one look at the lock file, the
        // journal and the pack, the journal's intent and outcome and the pack's record, the
        // change announced (and, now and then, the allocator growing the heap).
        let expected: Set = ["flock", "newfstatat", "fstatat64", "statx", "write", "futex", "brk", "mmap", "munmap"]
        #expect(Set(names.keys).isSubset(of: expected), "\(names)")
        print("[\(items)]: \(perWrite) system calls per write-through: \(names.sorted { $0.key < $1.key })")
        #expect(names["openat"] == nil && names["renameat"] == nil && names["close"] == nil, "no file opened, renamed or closed per write")
    }

    /// The calls on files the in-memory probe makes between its markers, by any thread; `onDisk`:
    /// the same work with a cache on disk.
    ///
    /// Two kinds of call are no cache file and are left out: Foundation's UUIDs read
    /// `/dev/urandom`, and on Linux libdispatch's worker monitor reads `/proc/<thread>/stat` of
    /// its threads, once a second while a global queue has work waiting.
    private func fileCalls(onDisk: Bool) async throws -> [Substring] {
        let scratch = try ExampleTests.Scratch()
        let log = scratch.url.appending(path: "trace").path(percentEncoded: false)
        let torture = ExampleProgram.productsDirectory.appending(path: "appcache-torture").path(percentEncoded: false)
        let traced = ExampleProgram(name: "strace", executable: URL(filePath: try #require(Self.strace)))
        let run = try await traced.run(
            ["-f", "-o", log, torture, "--child", "in-memory-probe", "--root", scratch.cacheRoot, "--items", "200"] + (onDisk ? ["--on-disk", "1"] : []),
            scratch: scratch.url)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(!run.standardOutput.contains("VIOLATION"), "\(run.standardOutput)")
        #expect(FileManager.default.fileExists(atPath: scratch.cacheRoot) == onDisk, "nothing under the root unless on disk")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let begin = try #require(lines.firstIndex { $0.contains("\"probe-begin\"") })
        let end = try #require(lines.firstIndex { $0.contains("\"probe-end\"") })
        // Calls that name, list, lock, size, sync, or read or write a file at an offset.
        let names: Set = [
            "open", "openat", "creat", "mkdir", "mkdirat", "rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir",
            "stat", "lstat", "newfstatat", "fstatat64", "statx", "access", "faccessat", "faccessat2", "getdents64", "flock",
            "ftruncate", "truncate", "pread64", "pwrite64", "fsync", "fdatasync", "utimensat", "fcntl",
        ]
        return lines[(begin + 1)..<end].compactMap { line -> Substring? in
            // "12345 openat(...)": the thread's id, then the call.
            let call: Substring = line.drop(while: { $0 == " " }).drop(while: { $0 != " " }).drop(while: { $0 == " " })
            guard let name = call.split(separator: "(").first, names.contains(String(name)), call.range(of: "\"/dev/urandom\"") == nil,
                call.range(of: "\"/proc/") == nil
            else {
                return nil
            }
            return call
        }
    }

    @Test(
        .enabled(if: strace != nil, "strace is not installed"), .disabled(if: isThreadSanitized, "the probe is built for ThreadSanitizer"))
    func anInMemoryCacheMakesNoFile() async throws {
        let onDisk = try await fileCalls(onDisk: true)
        #expect(onDisk.count > 50, "on disk the same work is seen making its files: \(onDisk.count) calls")
        let inMemory = try await fileCalls(onDisk: false)
        #expect(inMemory.isEmpty, "\(inMemory.prefix(10))")
    }
}
