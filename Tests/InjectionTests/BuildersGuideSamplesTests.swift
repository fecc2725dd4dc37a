import Injection
import Testing

// Docs/Builders.md, "Main-actor builders": the API module's model and the `buildAsync` sample compile as the guide
// writes them (a `public struct` model is `Sendable` only if it says so, and `buildAsync` needs it), and build.
// The regions below are the guide's text; a test checks that they still are.

/// The guide's names, in a namespace of their own (the test target has a `ProfileView` of its own).
struct BuildersGuideSamples {
    // BEGIN Builders.md main-actor model
    // API module
    @MainActor public protocol ProfileView: AnyObject { var userID: String { get } }

    public struct ProfileVCBuilder: MainActorBuilder, Sendable {   // Sendable: buildAsync sends it to the main actor
        public typealias BuildResult = any ProfileView
        public let userID: String
        public init(userID: String) { self.userID = userID }
    }
    // END Builders.md main-actor model

    // BEGIN Builders.md buildAsync
    // Any module, from async code off the main actor
    func prefetchProfileScreen() async throws -> any ProfileView {
        try await InjectionManager.buildAsync(ProfileVCBuilder(userID: "42"))   // hops to the main actor to build
    }
    // END Builders.md buildAsync

    @MainActor final class ProfileViewController: ProfileView, MainActorBuildable {
        let userID: String
        init(builder: ProfileVCBuilder) { userID = builder.userID }
    }
}

@Suite("Builders.md's samples")
struct BuildersGuideSamplesTests {
    @Test("the main-actor model and the buildAsync sample are the guide's text, and compile here")
    func samplesAreTheGuides() throws {
        let guide = try Guides.text("Builders.md")
        for region in ["Builders.md main-actor model", "Builders.md buildAsync"] {
            let text = try Guides.region(region, of: #filePath)
            #expect(!text.isEmpty && guide.contains(text), "\(region) is not in Builders.md as written here:\n\(text)")
        }
    }

    @Test("buildAsync with the guide's Sendable model builds on the main actor, from off it")
    func buildAsyncBuilds() async throws {
        let container = InjectionContainer()
        container.register(BuildersGuideSamples.ProfileVCBuilder.self, building: BuildersGuideSamples.ProfileViewController.self)
        let built = try await InjectionManager.withContainer(container) {
            try await BuildersGuideSamples().prefetchProfileScreen() is BuildersGuideSamples.ProfileViewController
        }
        #expect(built)
    }
}
