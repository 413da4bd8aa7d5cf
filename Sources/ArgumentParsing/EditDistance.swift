/// Edit distance for "did you mean" suggestions.
package enum EditDistance {
    /// The restricted Damerau-Levenshtein distance: insertions, deletions, substitutions and
    /// swaps of two neighbours each cost one.
    package static func distance(_ first: String, _ second: String) -> Int {
        let a = Array(first)
        let b = Array(second)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var row = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            row[0] = i
            for j in 1...b.count {
                let substitution = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + substitution)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    best = min(best, previousPrevious[j - 2] + 1)
                }
                row[j] = best
            }
            previousPrevious = previous
            previous = row
        }
        return previous[b.count]
    }

    /// The candidate closest to `word`, if close enough to be a likely typo: one edit when both
    /// are at most four letters long (dashes not counted), two otherwise. Words of one letter
    /// (`-x`) get no suggestion, since every other letter is one edit away.
    package static func nearest(to word: String, among candidates: [String]) -> String? {
        let letters = word.drop { $0 == "-" }.count
        guard letters > 1 else { return nil }
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let longest = max(letters, candidate.drop { $0 == "-" }.count)
            let allowed = longest <= 4 ? 1 : 2
            let distance = distance(word, candidate)
            if distance <= allowed, distance < (best?.distance ?? Int.max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }
}
