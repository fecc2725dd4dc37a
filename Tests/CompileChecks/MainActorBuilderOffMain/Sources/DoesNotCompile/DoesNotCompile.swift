import Injection
import Models

// Building a MainActorBuilder off the main actor: each marked line must be a compile error that names the main
// actor (a plain Builder would compile here, and trap at run time).

public func showDetail() -> any DetailView {
    DetailBuilder(itemID: 1).build()  // expected-error: main actor-isolated instance method 'build(file:line:)'
}

public actor Prefetcher {
    public func prefetch() {
        _ = DetailBuilder(itemID: 2).build()  // expected-error: main actor-isolated instance method 'build(file:line:)'
    }
}
