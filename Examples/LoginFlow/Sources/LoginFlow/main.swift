import Foundation
import Injection

// `LoginFlow --graph FILE` writes the dependency graph (DOT, or Mermaid for .mmd) after verifying it.
let graphPath = CommandLine.arguments.firstIndex(of: "--graph").map { CommandLine.arguments[$0 + 1] }

// At launch: one line per service.
InjectionManager.register((any HTTPClient).self, lifetime: .singleton) { URLSessionClient() }
InjectionManager.register(Logger.self, lifetime: .singleton) { Logger() }
InjectionManager.register(Analytics.self, lifetime: .singleton) { Analytics() }
// Factories that resolve with `try` let a failure deep in the graph reach the caller as an error.
InjectionManager.register((any ProfileService).self) {
    try LiveProfileService(http: InjectionManager.resolve(), session: InjectionManager.resolve())
}
InjectionManager.register(FeedService.self) { FeedService() }
InjectionManager.register(ProfileViewModel.self, lifetime: .transient) { ProfileViewModel() }
// A builder: screens that need a runtime argument are built from a model (Docs/Builders.md).
InjectionManager.register(PostDetailBuilder.self, building: PostDetailViewModel.self)

func logIn(_ user: String) {
    // Reset the session scope and register the new user in one atomic step.
    InjectionManager.resetCurrentContainer {
        InjectionManager.register(UserSession.self) { UserSession(user: user) }
    }
    print("→ logged in as \(user)")
}

func show() {
    let screen: ProfileViewModel = Inject()
    let profile = screen.profile as AnyObject
    let http = Inject((any HTTPClient).self) as AnyObject
    print("  \(screen.title)")
    print("  profile service #\(ObjectIdentifier(profile).hashValue & 0xffff), http client #\(ObjectIdentifier(http).hashValue & 0xffff)")
}

logIn("alice")
// Check every registration at once; in an app, do this in a test or at launch in DEBUG.
do {
    try InjectionManager.verify()
    print("  verify(): every registration resolves")
} catch {
    print(error)
}
if let graphPath {
    let graph = InjectionManager.dependencyGraph()
    try (graphPath.hasSuffix(".mmd") ? graph.mermaid : graph.dot).write(toFile: graphPath, atomically: true, encoding: .utf8)
    print("  wrote the dependency graph to \(graphPath)")
}
show()
show()  // same session: same profile service
func showPost(_ postID: String) {
    let detail = PostDetailBuilder(postID: postID).build()   // a new screen per build
    print("  post detail for post \(detail.postID), from the feed of \(detail.feed.session.user)")
}
showPost("42")
weak var aliceSession = Inject(UserSession.self)

logIn("bob")
show()  // new session: new profile service, same (singleton) HTTP client
print("  alice's session freed after logout: \(aliceSession == nil)")

// Logout: end the session and forget the user, atomically.
InjectionManager.resetCurrentContainer {
    InjectionManager.unregister(UserSession.self)
}
print("→ logged out")
do {
    _ = try InjectionManager.resolve((any ProfileService).self)
} catch {
    print("  resolving the profile without a user fails with a readable error:")
    print("  \(error)")
}
