import Features

final class FeedImpl: Feed {
    let page: Int
    init(page: Int = 1) { self.page = page }
    init?(cursor: String) { return nil }
}
