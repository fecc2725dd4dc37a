import Injection

public protocol Router {}

// injection-check: implements Router
@MainActor public final class AppRouter: Router {
    public init() {}
}

public protocol Feed {}
