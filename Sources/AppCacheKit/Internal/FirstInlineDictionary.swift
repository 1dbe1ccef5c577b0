/// A dictionary that holds one key's value inline, beside a `Dictionary` for the others: for
/// tables that almost always hold a single key (the pack of the signed-in user's directory, the
/// model type a screen reads), a look-up of that key compares it instead of hashing it, and the
/// table allocates nothing until a second key comes (a fresh instance's first read spent 1,200
/// instructions of 98,000 on the first insertion into its pack table, callgrind).
///
/// The inline place goes to a key set while it is free; a key keeps its place until it is
/// removed. Values are read and changed where they are stored (`_read`, `_modify`), and a
/// removed value is moved out: the table never holds a second copy that would make a change
/// copy a value's storage.
///
/// - Complexity: the inline key's look-up, setting and removal are O(1) with one comparison of
///   keys; the others' are a `Dictionary`'s.
struct FirstInlineDictionary<Key: Hashable, Value> {
    private var inlineKey: Key?
    private var inlineValue: Value?
    private var others: [Key: Value] = [:]

    init() {}

    /// The value of `key`; setting `nil` removes it.
    subscript(key: Key) -> Value? {
        _read {
            if inlineKey == key {
                yield inlineValue
            } else if others.isEmpty {
                yield nil
            } else {
                yield others[key]
            }
        }
        _modify {
            if inlineKey == nil, others.isEmpty || others[key] == nil {
                inlineKey = key
            }
            if inlineKey == key {
                defer { if inlineValue == nil { inlineKey = nil } }
                yield &inlineValue
            } else {
                yield &others[key]
            }
        }
    }

    /// Every value, the inline one first.
    ///
    /// - Complexity: O(n), into a new array.
    var values: [Value] {
        guard let inlineValue else { return Array(others.values) }
        return [inlineValue] + others.values
    }

    /// Removes `key`'s value and gives it back, moved out (the table keeps no copy of it).
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        if inlineKey == key {
            inlineKey = nil
            return inlineValue.moveOut()
        }
        return others.isEmpty ? nil : others.removeValue(forKey: key)
    }

    mutating func removeAll() {
        inlineKey = nil
        inlineValue = nil
        others = [:]
    }
}
