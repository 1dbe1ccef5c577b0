#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Numbers unique to each call, in this process and (with overwhelming odds) across
/// processes: the sequence numbers of pack records and the names of temporary files.
///
/// SplitMix64 over a counter seeded once from the system's random source and the process id:
/// no system call per number (`UInt64.random` asks the kernel each time on Linux, one of the
/// few system calls a write would otherwise add).
enum UniqueNumbers {
    private static let counter = Locked<UInt64>(UInt64.random(in: .min ... .max) ^ UInt64(UInt32(bitPattern: getpid())) << 32)

    /// The next number.
    static func next() -> UInt64 {
        var value = counter.withLock { counter in
            counter &+= 0x9E37_79B9_7F4A_7C15
            return counter
        }
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
