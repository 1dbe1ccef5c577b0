// Typecheck-only stand-in for the few SwiftUI declarations AppCacheKit uses (CachedItems.swift),
// with the signatures and isolation of the iPhoneOS 16.5 SDK's SwiftUI.swiftinterface. Nothing runs it.
@_exported import Combine
public protocol DynamicProperty {
  mutating func update()
}
extension DynamicProperty {
  public mutating func update() {}
}
@frozen @propertyWrapper public struct StateObject<ObjectType>: DynamicProperty where ObjectType: Combine.ObservableObject {
  @usableFromInline internal var thunk: () -> ObjectType
  @inlinable public init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType) { self.thunk = thunk }
  @preconcurrency @MainActor public var wrappedValue: ObjectType { thunk() }
}
@frozen public struct Animation: Equatable {
  public static func == (a: Animation, b: Animation) -> Bool { true }
  public static var `default`: Animation { Animation() }
}
public func withAnimation<Result>(_ animation: Animation? = .default, _ body: () throws -> Result) rethrows -> Result { try body() }
