import Foundation

#if canImport(Darwin)
import Darwin
#endif

/// How the disk layer applies a data protection class to the files it writes.
///
/// On iOS, tvOS, watchOS and visionOS each file is set to its class with one
/// `fcntl(F_SETPROTECTIONCLASS)` on the descriptor the cache already holds, right after
/// creating it and before writing a byte, so the class holds from the first byte on. The class
/// numbers are the kernel's (`PROTECTION_CLASS_A`...`D` in xnu's `sys/content_protection.h`),
/// the ones Foundation's protection types stand for. Elsewhere (macOS, Linux) there are no
/// protection classes and nothing is done.
struct FileProtection: Sendable, Equatable {
    /// The kernel's protection class number.
    let protectionClass: Int32

    /// The class for `type`; `nil` for a type with no class of its own (leave the default).
    init?(_ type: FileProtectionType?) {
        // By raw value: corelibs Foundation's type is not `Equatable`.
        switch type?.rawValue {
        case FileProtectionType.complete.rawValue: protectionClass = 1
        case FileProtectionType.completeUnlessOpen.rawValue: protectionClass = 2
        case FileProtectionType.completeUntilFirstUserAuthentication.rawValue: protectionClass = 3
        case FileProtectionType.none.rawValue: protectionClass = 4
        default: return nil
        }
    }

    /// Sets the class on an open file. A volume without data protection (the simulator, an
    /// external drive) refuses; the file then keeps its directory's class, which is no worse
    /// than not asking.
    func apply(toDescriptor descriptor: Int32) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        _ = SystemCalls.fcntl(descriptor, F_SETPROTECTIONCLASS, protectionClass)
        #endif
    }
}
