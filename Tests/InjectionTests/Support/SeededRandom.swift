import Foundation

/// SplitMix64: a tiny, seedable generator, so a randomized test can be replayed from its seed.
///
/// ```swift
/// var random = SeededRandom(seed: 42)
/// let lifetime = random.pick([InjectionLifetime.scoped, .singleton])
/// ```
/// The same seed gives the same sequence on every platform and every run.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed &>> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed &>> 31)
    }

    /// A number in `range`.
    mutating func int(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// A number in `0..<count`.
    mutating func int(below count: Int) -> Int { Int.random(in: 0..<count, using: &self) }

    /// `true` with probability `probability`.
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }

    /// One element of the non-empty `elements`.
    mutating func pick<Element>(_ elements: [Element]) -> Element { elements[int(below: elements.count)] }

    /// The seed named by the environment variable `name` (decimal or 0x-hex), if it is set.
    static func seed(fromEnvironment name: String) -> UInt64? {
        guard let text = ProcessInfo.processInfo.environment[name]?.trimmingCharacters(in: .whitespaces),
              !text.isEmpty else { return nil }
        if text.lowercased().hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) }
        return UInt64(text)
    }

    /// A fresh seed for a run that was not asked to replay one.
    static func freshSeed() -> UInt64 { UInt64.random(in: 1...UInt64.max) }
}
