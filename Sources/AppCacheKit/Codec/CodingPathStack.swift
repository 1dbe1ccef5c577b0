/// The coding path of the value a coder is at, kept as a stack, and the paths of its
/// containers, recorded as small marks so that making a container costs no allocation.
///
/// `JSONEncoder` and `JSONDecoder` report where they are (`codingPath`) on the coder and on
/// every container, and put that path into every error. A coder enters a value through a key
/// or an index and leaves it when the value is done; a container made at that point records a
/// ``Mark``: how many components of the stack are its path. A container nested under a key of
/// another (`nestedContainer(keyedBy:forKey:)`) has a path that is not a prefix of the stack,
/// so its mark names a path kept whole in ``extras``.
///
/// Components are plain values (a key of up to eight bytes that holds no references, such as
/// a synthesized `CodingKeys` case, is kept as its bytes and its type; other keys are kept
/// aside and named by their position), so entering and leaving a value copies no existential.
/// A container used after its value was done (kept by a model past `init(from:)`) reports the
/// stack as it is then; only its path can be off, never its values.
struct CodingPathStack {
    /// One step of a path: a key, or the index of an array's element.
    struct Component {
        /// The key's type, for a key kept as its bytes; `nil` for an index or a key kept aside.
        fileprivate let keyType: (any CodingKey.Type)?
        /// The key's bytes; the index; or, with ``keptAside``, the key's position in ``keys``.
        fileprivate let bits: UInt64

        fileprivate static let keptAside: UInt64 = 1 << 63

        /// The element at `index` of an array.
        static func index(_ index: Int) -> Component {
            Component(keyType: nil, bits: UInt64(truncatingIfNeeded: index) & ~keptAside)
        }
    }

    /// A container's path: either the first `n` components of the stack (the high bit clear)
    /// or a path kept in ``extras`` (the high bit set, the rest its index).
    struct Mark: Equatable {
        fileprivate let raw: UInt32

        fileprivate init(stackCount: Int) {
            raw = UInt32(truncatingIfNeeded: stackCount) & 0x7FFF_FFFF
        }

        fileprivate init(extra index: Int) {
            raw = 0x8000_0000 | (UInt32(truncatingIfNeeded: index) & 0x7FFF_FFFF)
        }

        /// The path of the value at the top of the coder, before anything was entered.
        static let root = Mark(stackCount: 0)
    }

    private var components: [Component] = []
    private var extras: [[Component]] = []
    /// Keys that are not kept as their bytes, by position; only added to while a coding runs.
    private var keys: [any CodingKey] = []

    /// The component of `key`.
    @inline(__always)
    mutating func component<Key: CodingKey>(_ key: Key) -> Component {
        if _isPOD(Key.self) && MemoryLayout<Key>.size <= MemoryLayout<UInt64>.size {
            var bits: UInt64 = 0
            withUnsafeMutableBytes(of: &bits) { $0.storeBytes(of: key, as: Key.self) }
            return Component(keyType: Key.self, bits: bits)
        }
        keys.append(key)
        return Component(keyType: nil, bits: Component.keptAside | UInt64(keys.count - 1))
    }

    /// Goes into a value through `component` of the container marked `container`: the path
    /// becomes the container's path and the component. Returns what ``leave(_:)`` needs.
    ///
    /// A container made at the value the coder is at (nearly every one) is the stack as it is,
    /// so the component is pushed; one nested under a key of another, or a super coder's, has
    /// a path of its own, which replaces the stack until the value is left.
    @inline(__always)
    mutating func enter(_ component: Component, from container: Mark) -> [Component]? {
        if container.raw == UInt32(truncatingIfNeeded: components.count) {
            components.append(component)
            return nil
        }
        let saved = components
        components = pathComponents(container) + [component]
        return saved
    }

    /// Leaves the value ``enter(_:from:)`` went into.
    @inline(__always)
    mutating func leave(_ saved: [Component]?) {
        if let saved {
            components = saved
        } else {
            components.removeLast()
        }
    }

    /// The mark of a container made now at the value the coder is at.
    @inline(__always)
    var current: Mark {
        Mark(stackCount: components.count)
    }

    /// The path the coder is at.
    var codingPath: [any CodingKey] {
        components.map(codingKey)
    }

    /// The path a mark stands for.
    func path(_ mark: Mark) -> [any CodingKey] {
        pathComponents(mark).map(codingKey)
    }

    /// The path a mark stands for, with `component` after it: where a container's field is.
    func path(_ mark: Mark, appending component: Component) -> [any CodingKey] {
        (pathComponents(mark) + [component]).map(codingKey)
    }

    /// A mark for the path of `base` followed by `component`: a nested container's path.
    mutating func mark(_ base: Mark, appending component: Component) -> Mark {
        extras.append(pathComponents(base) + [component])
        return Mark(extra: extras.count - 1)
    }

    private func pathComponents(_ mark: Mark) -> [Component] {
        if mark.raw & 0x8000_0000 != 0 {
            let index = Int(mark.raw & 0x7FFF_FFFF)
            return index < extras.count ? extras[index] : []
        }
        return Array(components.prefix(Int(mark.raw)))
    }

    /// The coding key a component stands for.
    private func codingKey(_ component: Component) -> any CodingKey {
        if let type = component.keyType { return Self.key(of: type, bits: component.bits) }
        if component.bits & Component.keptAside != 0 {
            let position = Int(component.bits & ~Component.keptAside)
            return position < keys.count ? keys[position] : AnyKey(stringValue: "?")
        }
        return IndexKey(Int(truncatingIfNeeded: component.bits))
    }

    private static func key<Key: CodingKey>(of type: Key.Type, bits: UInt64) -> any CodingKey {
        withUnsafeBytes(of: bits) { $0.load(as: Key.self) }
    }
}

/// The coding key of an array element, named as `JSONEncoder` and `JSONDecoder` name it
/// (`Index 3`, with 3 as its integer value).
struct IndexKey: CodingKey {
    let intValue: Int?
    let stringValue: String

    init(_ index: Int) {
        intValue = index
        stringValue = "Index \(index)"
    }

    init?(intValue: Int) {
        self.init(intValue)
    }

    init?(stringValue: String) {
        return nil
    }
}

/// A key known only by its name (the `super` key, keys read from a payload).
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }

    /// The key `superEncoder()` and `superDecoder()` use.
    static let `super` = AnyKey(stringValue: "super")
}
