/// One page of a paged collection, as a `loadNextPage` fetch returns it.
///
/// Thread safety: a value.
public struct Page<Model: Sendable>: Sendable {
    /// The page's items, in order.
    public var items: [Model]
    /// The cursor of the page after this one; `nil` when this is the last.
    public var next: String?

    /// - Parameters:
    ///   - items: the page's items.
    ///   - next: the cursor of the page after; `nil`: the end.
    public init(items: [Model], next: String?) {
        self.items = items
        self.next = next
    }
}
