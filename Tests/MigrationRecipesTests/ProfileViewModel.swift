// Docs/Migrating.md, "From a @Resolved property wrapper": the domain type. It does not import Injection.

final class ProfileViewModel {
    private let api: any WebAPI
    private let clock: any AppClock

    init(api: any WebAPI, clock: any AppClock) {
        self.api = api
        self.clock = clock
    }

    func header() -> String {
        "\(api.get("/me")) at \(clock.now)"
    }
}
