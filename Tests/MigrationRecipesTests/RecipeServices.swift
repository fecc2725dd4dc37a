// The small services every recipe in Docs/Migrating.md builds on.

protocol WebAPI: Sendable {
    func get(_ path: String) -> String
}

final class LiveWebAPI: WebAPI {
    func get(_ path: String) -> String { "200 OK \(path)" }
}

final class MockWebAPI: WebAPI {
    let reply: String
    init(reply: String = "mock") { self.reply = reply }
    func get(_ path: String) -> String { "\(reply) \(path)" }
}

protocol AppClock: Sendable {
    var now: Int { get }
}

struct FixedClock: AppClock {
    let now: Int
}

protocol Storage: AnyObject, Sendable {
    var path: String { get }
}

final class SQLiteStorage: Storage {
    let path: String
    init(path: String) { self.path = path }
}
