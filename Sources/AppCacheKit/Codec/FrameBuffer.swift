/// The states of a coder's keyed containers, addressed by number: a plain growable buffer, so
/// that reading or moving a container's state is a load or a store (an array would check its
/// uniqueness on every write, and a class property its exclusivity).
///
/// Containers hold their frame's number, never its address: the buffer moves when it grows.
struct FrameBuffer<Frame> {
    private var base: UnsafeMutablePointer<Frame>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 16) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    /// Adds a frame; returns its number.
    mutating func append(_ frame: Frame) -> Int {
        if count == capacity {
            let grown = UnsafeMutablePointer<Frame>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
            base = grown
            capacity *= 2
        }
        (base + count).initialize(to: frame)
        count += 1
        return count - 1
    }

    /// The frame numbered `number` (which ``append(_:)`` returned).
    @inline(__always)
    subscript(number: Int) -> Frame {
        unsafeAddress { UnsafePointer(base + number) }
        nonmutating unsafeMutableAddress { base + number }
    }

    /// Frees the buffer. Call once, last.
    func deallocate() {
        base.deinitialize(count: count)
        base.deallocate()
    }
}
