import Injection

public protocol Clock: Sendable {}
public final class ClockImpl: Clock {
    public init() {}
}

public protocol Network: Sendable {}
public final class NetworkImpl {
    public init(retries: Int = 3, log: @escaping (String) -> Void = { _ in }) {}
}
extension NetworkImpl: Network {}

protocol Secret {}
final class SecretImpl: Secret {
    init() {}
}

public protocol Store {}
public struct StoreImpl: Store {
    public init(path: String) {}
}

public protocol Loader {}
public actor LoaderImpl: Loader {
    public init() async {}
}

public protocol Parser {}
public final class ParserImpl: Parser {
    public init(strict: Bool = true) throws {}
}

public protocol Named {}
public final class NamedImpl {
    public init() {}
}

public protocol Generic {}
public final class GenericImpl<T>: Generic {
    public init() {}
}
