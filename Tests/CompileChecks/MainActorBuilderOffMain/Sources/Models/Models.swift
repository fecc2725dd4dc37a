import Injection

/// A main-actor screen, built from a `MainActorBuilder` model.
@MainActor public protocol DetailView: AnyObject { var itemID: Int { get } }

/// The model: its `build()` is `@MainActor`.
public struct DetailBuilder: MainActorBuilder, Sendable {
    public typealias BuildResult = any DetailView
    public let itemID: Int
    public init(itemID: Int) { self.itemID = itemID }
}

/// The implementation, registered with `register(_:building:)`.
@MainActor public final class DetailController: DetailView, MainActorBuildable {
    public let itemID: Int
    public init(builder: DetailBuilder) { itemID = builder.itemID }
}
