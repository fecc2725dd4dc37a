import Injection

// MARK: - Process-wide services (singletons)

/// Talks to the backend.
protocol HTTPClient: AnyObject, Sendable {
    func get(_ path: String) -> String
}

final class URLSessionClient: HTTPClient {
    func get(_ path: String) -> String { "200 OK \(path)" }
}

/// Writes log lines.
final class Logger: Sendable {
    func log(_ line: String) {}
}

/// Sends events; needs the network and the logger.
final class Analytics: Sendable {
    private let http: any HTTPClient
    private let logger: Logger
    init(http: any HTTPClient = Inject(), logger: Logger = Inject()) {
        self.http = http
        self.logger = logger
    }
    func track(_ event: String) { logger.log(event) }
}

// MARK: - Session services (scoped: evicted at logout)

/// Who is logged in.
final class UserSession: Sendable {
    let user: String
    init(user: String) { self.user = user }
}

/// Loads the profile of the session's user.
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

/// The session user's feed.
final class FeedService: Sendable {
    let session: UserSession
    init(http: any HTTPClient = Inject(), session: UserSession = Inject()) { self.session = session }
}

// MARK: - Screens (transient: one per screen)

/// A screen's view model: honest constructor, injection only at the default arguments.
final class ProfileViewModel {
    let profile: any ProfileService
    private let analytics: Analytics
    init(profile: any ProfileService = Inject(), analytics: Analytics = Inject()) {
        self.profile = profile
        self.analytics = analytics
    }
    var title: String {
        analytics.track("profile.viewed")
        return profile.headline()
    }
}

/// The model of a post's detail screen: what a caller knows (the post id). `build()` gives the screen,
/// and the caller never names how it is made.
struct PostDetailBuilder: Builder {
    typealias BuildResult = PostDetailViewModel
    let postID: String
}

/// A post's detail screen, built from its builder; it injects the rest.
final class PostDetailViewModel: Buildable {
    let postID: String
    let feed: FeedService
    init(postID: String, feed: FeedService = Inject()) {
        self.postID = postID
        self.feed = feed
    }
    convenience init(builder: PostDetailBuilder) { self.init(postID: builder.postID) }
}
