#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call: which operation, and the `errno` it left.
struct SystemError: Error, Sendable, CustomStringConvertible {
    /// The call that failed, as in `rename`.
    var operation: String
    /// The `errno` value it set.
    var errorNumber: Int32
    /// The file or directory it was called on.
    var path: String

    /// The last system call's failure, read from `errno`.
    static func last(_ operation: String, _ path: @autoclosure () -> String) -> SystemError {
        // `errno` first: building the path (an allocation) may change it.
        let errorNumber = errno
        return SystemError(operation: operation, errorNumber: errorNumber, path: path())
    }

    var description: String {
        "\(operation) failed: \(String(cString: strerror(errorNumber))) (errno \(errorNumber))"
    }

    /// The AppCache code a user can act on.
    var code: AppCacheError.Code {
        switch errorNumber {
        case EACCES, EPERM, EROFS: return .permissionDenied
        case ENOSPC, EDQUOT: return .noSpace
        case ENOTDIR, EISDIR: return .notADirectory
        case EWOULDBLOCK: return .busy
        case ESTALE: return .versionRemoved
        default: return .ioFailure
        }
    }
}
