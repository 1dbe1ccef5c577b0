/// A collection of items of any model type, held as the array itself rather than in a box, so
/// that a memory hit reads the array straight from its entry.
///
/// An array is one reference to its storage whatever its element type (native storage, or on
/// Apple platforms possibly an `NSArray` it was bridged from), and copying or destroying it
/// only retains or releases that reference, whose own type knows its elements: the array is
/// kept with its element type erased and given back with the type it was stored as. It is
/// never read as `[Erased]` (no count, no element: code for such an array may assume native
/// storage); only ``items(as:)`` with the stored type may read it, and the memory layer's key
/// holds the type.
@usableFromInline
struct ErasedItems: @unchecked Sendable {
    /// An element type that is never read: the array's storage still holds the real elements.
    @usableFromInline
    struct Erased {}

    @usableFromInline
    let storage: [Erased]

    /// Keeps `items`; read them back with ``items(as:)`` and the same `Model`.
    init<Model: Sendable>(_ items: [Model]) {
        storage = unsafeBitCast(items, to: [Erased].self)
    }

    /// Whether `other` is this very array (the same storage), not only equal items.
    func isIdentical(to other: ErasedItems) -> Bool {
        unsafeBitCast(storage, to: UnsafeRawPointer.self) == unsafeBitCast(other.storage, to: UnsafeRawPointer.self)
    }

    /// The items, of the model type they were stored with.
    ///
    /// - Precondition: `Model` is the type given to ``init(_:)``.
    @inlinable
    func items<Model: Sendable>(as type: Model.Type) -> [Model] {
        unsafeBitCast(storage, to: [Model].self)
    }
}
