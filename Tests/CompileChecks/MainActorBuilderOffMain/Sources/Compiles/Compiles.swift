import Injection
import Models

// The calls of DoesNotCompile, from the main actor: these compile.

@MainActor public func registerDetail() {
    InjectionManager.register(DetailBuilder.self, building: DetailController.self)
    InjectionManager.register(DetailBuilder.self, isolation: MainActor.shared) { DetailController(builder: $0) }
}

@MainActor public func showDetail() -> any DetailView {
    DetailBuilder(itemID: 1).build()
}

@MainActor public final class Prefetcher {
    public func prefetch() { _ = DetailBuilder(itemID: 2).build() }
}
