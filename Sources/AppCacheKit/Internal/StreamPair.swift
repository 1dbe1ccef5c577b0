/// A stream and its continuation, made the way every SDK back to the package's floor can:
/// `makeStream(of:bufferingPolicy:)` arrived with Swift 5.9's standard library, which the
/// oldest SDKs that build for iOS 16 do not declare.
enum StreamPair {
    static func throwing<Element>(
        of: Element.Type = Element.self
    ) -> (stream: AsyncThrowingStream<Element, any Error>, continuation: AsyncThrowingStream<Element, any Error>.Continuation) {
        var made: AsyncThrowingStream<Element, any Error>.Continuation?
        let stream = AsyncThrowingStream<Element, any Error> { made = $0 }
        return (stream, made!)
    }

    static func nonThrowing<Element>(
        of: Element.Type = Element.self, bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded
    ) -> (stream: AsyncStream<Element>, continuation: AsyncStream<Element>.Continuation) {
        var made: AsyncStream<Element>.Continuation?
        let stream = AsyncStream<Element>(bufferingPolicy: bufferingPolicy) { made = $0 }
        return (stream, made!)
    }
}
