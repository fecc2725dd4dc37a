/// What a token is. The checker reads identifiers and punctuation, steps over literals, and reads line comments
/// for its directives.
public enum TokenKind: Sendable, Equatable {
    /// A name or a keyword (a backticked name without its backticks).
    case identifier
    /// One byte of punctuation or of an operator: `(`, `.`, `<`, `=`, `#`, ... (`->` is two tokens).
    case punctuation
    /// A string, number or regex literal. A string's interpolated code follows it as tokens of its own.
    case literal
    /// A `//` comment, its text after the slashes.
    case comment
}

/// One token of Swift source.
public struct Token: Sendable, Equatable {
    /// What the token is.
    public var kind: TokenKind
    /// The token's text: a name, a punctuation byte, a number, a comment's text; empty for strings and regexes.
    public var text: String
    /// The line of its first byte, from 1.
    public var line: Int
    /// The column of its first byte, from 1, counted in UTF-8 bytes as the compiler counts.
    public var column: Int
    /// Whether no code comes before it on its line (for a comment: it is alone on its line).
    public var startsLine: Bool
}

/// The tokens of a file: its code, and its `//` comments apart.
public struct SourceTokens: Sendable {
    /// Identifiers, punctuation and literals, in order. Text inside comments and literals is not here.
    public var code: [Token] = []
    /// The `//` comments, in order.
    public var comments: [Token] = []
}

/// Splits Swift source into tokens, as the compiler does for everything the checker reads.
///
/// Block comments nest. Strings may be multi-line or raw with any number of `#`, and the code of an interpolation
/// `\(...)` is tokens of its own. Regex literals (`/.../`, `#/.../#`) are literals. An unterminated block comment or
/// multi-line string runs to the end of the file; an unterminated single-line string ends with its line.
/// - Complexity: O(n) in the number of bytes; any input, valid UTF-8 or not, ends.
public func tokenize(_ bytes: [UInt8]) -> SourceTokens {
    bytes.withUnsafeBufferPointer { buffer in
        var lexer = Lexer(bytes: buffer)
        lexer.code(interpolation: false, singleLine: false)
        return lexer.tokens
    }
}

/// Single-byte punctuation texts, made once.
private let punctuationTexts: [String] = (0..<128).map { String(UnicodeScalar(UInt8($0))) }

private struct Lexer {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0, line = 1, lineStart = 0, lastCodeLine = 0, nesting = 0
    /// Where the last search for a regex's close gave up: no regex opens before it (keeps long lines linear).
    var noRegexBefore = 0
    var tokens = SourceTokens()

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func peek(_ offset: Int) -> UInt8 { at + offset < bytes.count ? bytes[at + offset] : 0 }

    func hashes(_ count: Int, at offset: Int) -> Bool {
        (0..<count).allSatisfy { peek(offset + $0) == UInt8(ascii: "#") }
    }

    /// Whether `count` `#`s start at `index`, which close a regex opened with as many.
    func closesRegex(_ index: Int, hashes count: Int) -> Bool {
        (0..<count).allSatisfy { index + $0 < bytes.count && bytes[index + $0] == UInt8(ascii: "#") }
    }

    mutating func newline() { at += 1; line += 1; lineStart = at }

    mutating func emit(_ kind: TokenKind, _ text: String, line: Int, column: Int) {
        let token = Token(kind: kind, text: text, line: line, column: column, startsLine: lastCodeLine != line)
        if kind == .comment {
            tokens.comments.append(token)
        } else {
            tokens.code.append(token)
            lastCodeLine = self.line
        }
    }

    func text(_ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// Code to the end; in an interpolation, to its closing `)` (or a newline, in a single-line string's).
    mutating func code(interpolation: Bool, singleLine: Bool) {
        var parens = 0
        while at < bytes.count {
            let byte = bytes[at], start = at, column = at - lineStart + 1
            switch byte {
            case 0x0A:
                if interpolation && singleLine { return }
                newline()
            case 0x20, 0x09, 0x0D, 0x0B, 0x0C: at += 1
            case UInt8(ascii: "/") where peek(1) == UInt8(ascii: "/"):
                while at < bytes.count && bytes[at] != 0x0A { at += 1 }
                emit(.comment, text(start + 2, at), line: line, column: column)
            case UInt8(ascii: "/") where peek(1) == UInt8(ascii: "*"): blockComment()
            case UInt8(ascii: "/") where regexMayStart() && regex(hashes: 0):
                emit(.literal, "", line: line, column: column)
            case UInt8(ascii: "#"):
                var count = 1
                while peek(count) == UInt8(ascii: "#") { count += 1 }
                let (startLine, after) = (line, peek(count))
                if after == UInt8(ascii: "\"") {
                    at += count
                    string(hashes: count, line: startLine, column: column)
                } else if after == UInt8(ascii: "/") && regex(hashes: count) {
                    emit(.literal, "", line: startLine, column: column)
                } else {
                    at += 1
                    emit(.punctuation, "#", line: line, column: column)
                }
            case UInt8(ascii: "\""): string(hashes: 0, line: line, column: column)
            case UInt8(ascii: "`"):
                at += 1
                while at < bytes.count && bytes[at] != UInt8(ascii: "`") && bytes[at] != 0x0A { at += 1 }
                emit(.identifier, text(start + 1, at), line: line, column: column)
                if peek(0) == UInt8(ascii: "`") { at += 1 }
            case UInt8(ascii: ")") where interpolation && parens == 0:
                at += 1
                return
            case _ where isIdentifierByte(byte) && !isDigit(byte):
                while at < bytes.count && isIdentifierByte(bytes[at]) { at += 1 }
                emit(.identifier, text(start, at), line: line, column: column)
            case _ where isDigit(byte):
                while at < bytes.count
                    && (isIdentifierByte(bytes[at]) || bytes[at] == UInt8(ascii: ".") && isDigit(peek(1))) {
                    at += 1
                }
                emit(.literal, text(start, at), line: line, column: column)
            default:
                if byte == UInt8(ascii: "(") { parens += 1 } else if byte == UInt8(ascii: ")") { parens -= 1 }
                at += 1
                emit(.punctuation, punctuationTexts[Int(byte)], line: line, column: column)
            }
        }
    }

    mutating func blockComment() {
        at += 2
        var depth = 1
        while at < bytes.count && depth > 0 {
            if bytes[at] == UInt8(ascii: "/") && peek(1) == UInt8(ascii: "*") {
                depth += 1
                at += 2
            } else if bytes[at] == UInt8(ascii: "*") && peek(1) == UInt8(ascii: "/") {
                depth -= 1
                at += 2
            } else if bytes[at] == 0x0A { newline() } else { at += 1 }
        }
    }

    /// A string literal from its opening quote, `at` past the `#`s. Emits the literal, then any interpolated code.
    mutating func string(hashes: Int, line startLine: Int, column: Int) {
        let multiLine = peek(1) == UInt8(ascii: "\"") && peek(2) == UInt8(ascii: "\"")
        at += multiLine ? 3 : 1
        emit(.literal, "", line: startLine, column: column)
        defer { lastCodeLine = line }
        while at < bytes.count {
            let byte = bytes[at]
            if byte == 0x0A {
                if !multiLine { return }
                newline()
            } else if byte == UInt8(ascii: "\\") && self.hashes(hashes, at: 1) {
                at += 1 + hashes
                if peek(0) == UInt8(ascii: "(") && nesting < 16 {
                    at += 1
                    nesting += 1
                    code(interpolation: true, singleLine: !multiLine)
                    nesting -= 1
                } else if at < bytes.count && bytes[at] != 0x0A {
                    at += 1
                }
            } else if byte == UInt8(ascii: "\"") && !multiLine && self.hashes(hashes, at: 1) {
                at += 1 + hashes
                return
            } else if byte == UInt8(ascii: "\"") && multiLine && peek(1) == byte && peek(2) == byte
                && self.hashes(hashes, at: 3) {
                at += 3 + hashes
                return
            } else {
                at += 1
            }
        }
    }

    /// Whether a `/` here can open a regex literal: where an expression starts, not after an operand.
    func regexMayStart() -> Bool {
        guard at >= noRegexBefore, at + 1 < bytes.count, ![0x20, 0x09, 0x0A].contains(bytes[at + 1]) else {
            return false
        }
        guard let last = tokens.code.last else { return true }
        switch last.kind {
        case .identifier:
            return ["return", "case", "in", "where", "if", "guard", "try", "await", "else"].contains(last.text)
        case .literal, .comment: return false
        case .punctuation: return ![")", "]", "}", ">", "!", "?"].contains(last.text)
        }
    }

    /// A regex literal from `at` (its `#`s, then `/`): consumes it and returns `true`, or returns `false` if no close
    /// follows on its line within 4 KiB (then the `/` is an operator). A `#/` that ends its line opens a multi-line
    /// regex.
    mutating func regex(hashes: Int) -> Bool {
        var scan = at + hashes + 1, inClass = false
        let multiLine = hashes > 0 && scan < bytes.count && bytes[scan] == 0x0A
        var (lines, lastNewline) = (0, lineStart)
        while scan < bytes.count {
            let byte = bytes[scan]
            if byte == 0x0A || !multiLine && scan > at + 4096 {
                guard multiLine else {
                    noRegexBefore = scan
                    return false
                }
                (lines, lastNewline) = (lines + 1, scan + 1)
            } else if byte == UInt8(ascii: "\\") {
                scan += 1
            } else if byte == UInt8(ascii: "[") {
                inClass = true
            } else if byte == UInt8(ascii: "]") {
                inClass = false
            } else if byte == UInt8(ascii: "/") && !inClass && closesRegex(scan + 1, hashes: hashes) {
                if hashes == 0 && [0x20, 0x09].contains(bytes[scan - 1]) { return false }
                at = scan + 1 + hashes
                line += lines
                lineStart = lastNewline
                return true
            }
            scan += 1
        }
        guard multiLine else { return false }
        at = bytes.count
        line += lines
        lineStart = lastNewline
        return true
    }
}

private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

private func isIdentifierByte(_ byte: UInt8) -> Bool {
    (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || isDigit(byte) || byte == 0x5F || byte == 0x24
        || byte >= 0x80
}
