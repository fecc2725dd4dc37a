import Injection

/// Tells the time; `ClockImpl` is found by `generate-registrations`.
public protocol Clock: Sendable {
    var now: Int { get }
}

public final class ClockImpl: Clock {
    public init() {}
    public var now: Int { 42 }
}

/// Greets; registered by `generate-registrations` too, with its dependency injected at the default argument.
public protocol Greeter: Sendable {
    func greet(_ name: String) -> String
}

public final class GreeterImpl: Greeter {
    let clock: any Clock
    public init(clock: any Clock = Inject()) { self.clock = clock }
    public func greet(_ name: String) -> String { "Hello, \(name), at \(clock.now)" }
}

/// Writes lines; the app registers it by hand.
public final class Logger: Sendable {
    public init() {}
    public func log(_ line: String) { print(line) }
}

/// A screen's model: what the check reads.
public final class WelcomeModel {
    let greeter: any Greeter
    let logger: Logger = Inject()
    public init(greeter: any Greeter = Inject()) { self.greeter = greeter }
    public func show(_ name: String) { logger.log(greeter.greet(name)) }
}
