import Injection

extension ProfileViewModel {
    /// Builds the view model from the registered services.
    convenience init() {
        self.init(api: Inject(), clock: Inject())
    }
}
