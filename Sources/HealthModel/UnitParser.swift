/// Recursive-descent parser for HKUnit strings.
///
/// Grammar (HealthKit's rules: multiplication binds tightest, at most one `/` per level):
/// ```
/// expression := product ( "/" product )?
/// product    := factor ( ("*" | ".") factor )*
/// factor     := ( atom | "(" expression ")" ) ( "^" integer )?
/// atom       := whole atom | prefix prefixable-atom      (whole atoms are tried first, longest wins)
/// ```
/// Untrusted text is bounded: parentheses nest at most `maximumNesting` deep (the parser recurses
/// once per level), every exponent stays within `maximumExponent` (overflow-checked arithmetic),
/// and at most `maximumDistinctFactors` distinct atoms are combined (merging them is quadratic).
struct UnitParser {
    private let source: String
    private let characters: [Character]
    private var position = 0

    init(_ source: String) {
        self.source = source
        self.characters = Array(source)
    }

    mutating func parse() throws(UnitError) -> [UnitFactor] {
        guard !characters.isEmpty else { throw .empty }
        let factors = try expression(depth: 0)
        if position < characters.count {
            if characters[position] == ")" { throw .unbalancedParentheses(in: source) }
            if characters[position] == "/" { throw .moreThanOneDivision(in: source) }
            throw .unexpected(String(characters[position]), at: position, in: source)
        }
        try checkAffine(factors)
        // The merged exponent of each atom must stay in bounds too, so the canonical string
        // (which prints merged exponents) always parses back.
        let source = self.source
        _ = try UnitFactor.merged(factors, adding: { (total, exponent) throws(UnitError) -> Int in
            let (sum, overflow) = total.addingReportingOverflow(exponent)
            guard !overflow, Self.isWithinBounds(sum) else {
                throw .exponentOutOfRange(overflow ? "\(total)+\(exponent)" : String(sum),
                                          limit: Self.maximumExponent, in: source)
            }
            return sum
        }, admittingBase: { (count) throws(UnitError) in
            // Bounded so that merging (here and in `Unit(factors:)`) stays linear in the input.
            guard count < Self.maximumDistinctFactors else {
                throw .tooManyFactors(limit: Self.maximumDistinctFactors, in: source)
            }
        })
        return factors
    }

    private func checkAffine(_ factors: [UnitFactor]) throws(UnitError) {
        let affine = factors.contains { $0.atom.offset != 0 }
        guard affine else { return }
        guard factors.count == 1, factors[0].exponent == 1, factors[0].prefix == nil else {
            throw .affineInCompound(source)
        }
    }

    /// `depth` counts the parentheses around this expression; each level is one recursion.
    private mutating func expression(depth: Int) throws(UnitError) -> [UnitFactor] {
        var factors = try product(depth: depth)
        if peek == "/" {
            let slash = position
            position += 1
            guard let next = peek, next != "/", next != ")", next != "*", next != "." else {
                throw .missingOperand(after: "/", at: slash, in: source)
            }
            let denominator = try product(depth: depth)
            factors += denominator.map { UnitFactor(prefix: $0.prefix, atom: $0.atom, exponent: -$0.exponent) }
            if peek == "/" { throw .moreThanOneDivision(in: source) }
        }
        return factors
    }

    private mutating func product(depth: Int) throws(UnitError) -> [UnitFactor] {
        var factors = try factor(depth: depth)
        while let c = peek, c == "*" || c == "." {
            let at = position
            position += 1
            guard let next = peek, next != "/", next != ")", next != "*", next != "." else {
                throw .missingOperand(after: String(c), at: at, in: source)
            }
            factors += try factor(depth: depth)
        }
        return factors
    }

    private mutating func factor(depth: Int) throws(UnitError) -> [UnitFactor] {
        guard let c = peek else {
            throw .missingOperand(after: position > 0 ? String(characters[position - 1]) : "", at: max(position - 1, 0), in: source)
        }
        var factors: [UnitFactor]
        if c == "(" {
            guard depth < Self.maximumNesting else {
                throw .nestedTooDeeply(limit: Self.maximumNesting, at: position, in: source)
            }
            position += 1
            factors = try expression(depth: depth + 1)
            guard peek == ")" else { throw .unbalancedParentheses(in: source) }
            position += 1
        } else if c == ")" {
            throw .unbalancedParentheses(in: source)
        } else if c == "/" || c == "*" || c == "." || c == "^" {
            throw .unexpected(String(c), at: position, in: source)
        } else {
            factors = [try atom()]
        }
        if peek == "^" {
            position += 1
            let start = position
            if peek == "-" || peek == "+" { position += 1 }
            while let d = peek, d.isASCII, d.isNumber { position += 1 }
            let text = String(characters[start..<position])
            // Swallow a non-numeric tail so the error names the whole bad exponent.
            var end = position
            while end < characters.count, !"*./()^".contains(characters[end]) { end += 1 }
            let exponentText = String(characters[start..<end])
            guard end == position, let power = Int(text) else { throw .badExponent(exponentText, in: source) }
            guard Self.isWithinBounds(power) else {
                throw .exponentOutOfRange(exponentText, limit: Self.maximumExponent, in: source)
            }
            // Powers of groups multiply: keep every exponent small so dimensions never overflow.
            for index in factors.indices {
                let (product, overflow) = factors[index].exponent.multipliedReportingOverflow(by: power)
                guard !overflow, Self.isWithinBounds(product) else {
                    throw .exponentOutOfRange(exponentText, limit: Self.maximumExponent, in: source)
                }
                factors[index].exponent = product
            }
        }
        return factors
    }

    /// Reads one atom token: a run of name characters, with `<molar mass>` allowed after `mol`.
    private mutating func atom() throws(UnitError) -> UnitFactor {
        let start = position
        var name = ""
        var molarMassText: String?
        while let c = peek, !"*/()^".contains(c) {
            if c == "." {
                break
            }
            if c == "<" {
                position += 1
                let massStart = position
                while let m = peek, m != ">" { position += 1 }
                guard peek == ">" else { throw .badMolarMass(String(characters[massStart..<position]), in: source) }
                molarMassText = String(characters[massStart..<position])
                position += 1
                break
            }
            if c == " " || c == "\t" {
                throw .unexpected(" ", at: position, in: source)
            }
            name.append(c)
            position += 1
        }
        guard !name.isEmpty else { throw .unexpected(String(characters[start]), at: start, in: source) }
        if let molarMassText {
            guard let mass = Double(molarMassText), mass.isFinite, mass > 0 else {
                throw .badMolarMass(molarMassText, in: source)
            }
            guard let (prefix, atom) = Self.resolve(name), case .mole = atom else {
                throw .unknownAtom("\(name)<\(molarMassText)>", in: source)
            }
            return UnitFactor(prefix: prefix, atom: .mole(molarMass: mass), exponent: 1)
        }
        guard let (prefix, atom) = Self.resolve(name) else { throw .unknownAtom(name, in: source) }
        return UnitFactor(prefix: prefix, atom: atom, exponent: 1)
    }

    /// Whole atoms first (so `min`, `mi`, `mmHg`, `cmAq`, `kcal`, `d`, `hr`, `Cal` are never split),
    /// then the longest prefix in front of a prefixable atom (`mcg`, `dL`, `kPa`, `mmol`).
    static func resolve(_ name: String) -> (MetricPrefix?, UnitAtom)? {
        if let atom = UnitAtom.bySymbol[name] { return (nil, atom) }
        for prefix in prefixesLongestFirst where name.hasPrefix(prefix.symbol) {
            let rest = String(name.dropFirst(prefix.symbol.count))
            if let atom = UnitAtom.bySymbol[rest], atom.isPrefixable { return (prefix, atom) }
        }
        return nil
    }

    /// The largest exponent a unit string may give (no real unit comes near it; the bound keeps
    /// dimension arithmetic far from overflow).
    static let maximumExponent = 64

    /// The deepest nesting of parentheses a unit string may have (no real unit needs more than a
    /// few; the bound keeps the recursive descent's stack small whatever the input).
    static let maximumNesting = 32

    /// The most distinct (prefixed) atoms one unit may combine (`mol<1>*mol<2>*…` are distinct);
    /// real units have a handful.
    static let maximumDistinctFactors = 32

    /// Whether `exponent` lies in `-maximumExponent...maximumExponent` (no `abs`, which traps on `Int.min`).
    private static func isWithinBounds(_ exponent: Int) -> Bool {
        exponent >= -maximumExponent && exponent <= maximumExponent
    }

    private static let prefixesLongestFirst = MetricPrefix.allCases.sorted { $0.symbol.count > $1.symbol.count }

    private var peek: Character? { position < characters.count ? characters[position] : nil }
}
