#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open file or directory, closed when its last reference goes: a reader holding one never
/// sees its descriptor closed or reused under it.
final class DescriptorHandle: Sendable {
    let descriptor: Int32

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        SystemCalls.close(descriptor)
    }
}
