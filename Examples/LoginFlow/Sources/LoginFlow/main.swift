import Injection

// At launch: one line per service.
InjectionManager.register((any HTTPClient).self, lifetime: .singleton) { URLSessionClient() }
// Factories that resolve with `try` let a failure deep in the graph reach the caller as an error.
InjectionManager.register((any ProfileService).self) {
    try LiveProfileService(http: InjectionManager.resolve(), session: InjectionManager.resolve())
}

func logIn(_ user: String) {
    // Reset the session scope and register the new user in one atomic step.
    InjectionManager.resetCurrentContainer {
        InjectionManager.register(UserSession.self) { UserSession(user: user) }
    }
    print("→ logged in as \(user)")
}

func show() {
    let screen = ProfileViewModel()
    let profile = screen.profile as AnyObject
    let http = Inject((any HTTPClient).self) as AnyObject
    print("  \(screen.title)")
    print("  profile service #\(ObjectIdentifier(profile).hashValue & 0xffff), http client #\(ObjectIdentifier(http).hashValue & 0xffff)")
}

logIn("alice")
show()
show()  // same session: same profile service
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
