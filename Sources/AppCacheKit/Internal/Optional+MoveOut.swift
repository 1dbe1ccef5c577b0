extension Optional {
    /// The wrapped value, moved out and leaving `nil` behind, without a copy: what the standard
    /// library's `take()` does, which the iOS 16 SDK's standard library does not have.
    ///
    /// The memory layer numbers a new entry in place only when it holds the entry's single
    /// copy; a closure passes it one this way.
    mutating func moveOut() -> Wrapped? {
        var moved: Wrapped? = nil
        swap(&self, &moved)
        return moved
    }
}
