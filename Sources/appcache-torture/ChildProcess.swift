import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A copy of this program run as a child, whose output lines are collected as they come.
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    private let lines = Shared<[String]>([])
    private let output = Pipe()
    private let reader: Thread
    private let finished = DispatchSemaphore(value: 0)

    init(arguments: [String]) throws {
        process.executableURL = URL(filePath: CommandLine.arguments[0]).standardizedFileURL
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        let handle = output.fileHandleForReading
        let lines = lines
        let finished = finished
        reader = Thread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    lines.withLock { $0.append(line) }
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            finished.signal()
        }
        try process.run()
        reader.start()
    }

    var pid: Int32 { process.processIdentifier }

    /// The lines printed so far.
    var printed: [String] { lines.withLock { $0 } }

    /// Kills the child at once, as the system kills a process.
    func kill() {
        _ = systemKill(pid, SIGKILL)
    }

    /// Stops the child (`SIGSTOP`), as a debugger or the system's suspension does.
    func stop() {
        _ = systemKill(pid, SIGSTOP)
    }

    /// Lets a stopped child go on (`SIGCONT`).
    func resume() {
        _ = systemKill(pid, SIGCONT)
    }

    /// Waits for the child to end, killing it after `seconds`.
    ///
    /// - Returns: whether it ended on its own in time.
    @discardableResult
    func wait(timeout seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline {
            usleep(10_000)
        }
        let ended = !process.isRunning
        if !ended { kill() }
        process.waitUntilExit()
        finished.wait()
        return ended
    }

    /// How the child ended: `exit N` or `signal N`.
    var termination: String {
        process.terminationReason == .uncaughtSignal ? "signal \(process.terminationStatus)" : "exit \(process.terminationStatus)"
    }

    var exitedCleanly: Bool {
        process.terminationReason == .exit && process.terminationStatus == 0
    }
}

private func systemKill(_ pid: Int32, _ signal: Int32) -> Int32 {
    kill(pid, signal)
}

/// Prints a line at once (children's lines are read by the parent as they come).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The most memory this process has held resident since it started, in bytes, or `nil`
/// where it cannot be read: catches an allocation that came and went between two readings of
/// ``residentBytes()``.
func peakResidentBytes() -> Int? {
    #if os(Linux)
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return nil }
    return kilobytes * 1024
    #else
    return nil
    #endif
}

/// This process's resident memory in bytes, or `nil` where it cannot be read.
func residentBytes() -> Int? {
    #if os(Linux)
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
    return nil
    #endif
}
