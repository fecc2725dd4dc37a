import Injection

// MARK: - Services

/// Talks to the backend. One per process.
protocol HTTPClient: AnyObject, Sendable {
    func get(_ path: String) -> String
}

final class URLSessionClient: HTTPClient {
    func get(_ path: String) -> String { "200 OK \(path)" }
}

/// Who is logged in. One per session: evicted at logout.
final class UserSession: Sendable {
    let user: String
    init(user: String) { self.user = user }
}

/// Loads the profile of the session's user. Built fresh in each session.
protocol ProfileService: AnyObject, Sendable {
    func headline() -> String
}

final class LiveProfileService: ProfileService {
    private let http: any HTTPClient
    private let session: UserSession
    init(http: any HTTPClient = Inject(), session: UserSession = Inject()) {
        self.http = http
        self.session = session
    }
    func headline() -> String { "\(session.user): \(http.get("/users/\(session.user)"))" }
}

/// A screen's view model: honest constructor, injection only at the default argument.
final class ProfileViewModel {
    let profile: any ProfileService
    init(profile: any ProfileService = Inject()) { self.profile = profile }
    var title: String { profile.headline() }
}
