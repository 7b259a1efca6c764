/// What a generated listener likes: the kind of artist, album and track
/// names their catalogue is made of, and the tag their albums carry.
///
/// `.indie` is the demo user's own (the word lists in `DemoNames`); the
/// others give the demo's friends catalogues that do not look alike.
public enum DemoTaste: String, Sendable, CaseIterable {
    case indie, electronic, folk, jazz, soul

    /// The tag shown on the album page of an album of this taste.
    public var tag: String { rawValue }

    func artist(using rng: inout SplitMix64) -> String {
        switch self {
        case .indie: DemoNames.artist(using: &rng)
        case .electronic: ElectronicNames.artist(using: &rng)
        case .folk: FolkNames.artist(using: &rng)
        case .jazz: JazzNames.artist(using: &rng)
        case .soul: SoulNames.artist(using: &rng)
        }
    }

    func album(using rng: inout SplitMix64) -> String {
        switch self {
        case .indie: DemoNames.album(using: &rng)
        case .electronic: ElectronicNames.album(using: &rng)
        case .folk: FolkNames.album(using: &rng)
        case .jazz: JazzNames.album(using: &rng)
        case .soul: SoulNames.album(using: &rng)
        }
    }

    func track(using rng: inout SplitMix64) -> String {
        switch self {
        case .indie: DemoNames.track(using: &rng)
        case .electronic: ElectronicNames.track(using: &rng)
        case .folk: FolkNames.track(using: &rng)
        case .jazz: JazzNames.track(using: &rng)
        case .soul: SoulNames.track(using: &rng)
        }
    }
}

private func pick(_ list: [String], _ rng: inout SplitMix64) -> String { DemoNames.pick(list, &rng) }

/// Two different words from `list`, joined by `separator` ("Hale & Pryce", never "Hale & Hale").
private func pair(_ list: [String], _ separator: String, _ rng: inout SplitMix64) -> String {
    let first = Int(rng.next() % UInt64(list.count))
    let second = (first + 1 + Int(rng.next() % UInt64(list.count - 1))) % list.count
    return list[first] + separator + list[second]
}

/// Club and headphone music: short project names, EPs, mixes.
private enum ElectronicNames {
    static let adjectives = ["Neon", "Binary", "Analog", "Chrome", "Liquid", "Infinite", "Glass", "Hyper", "Parallel", "Polar", "Sub", "Solar", "Magnetic", "Low", "Night", "Silent", "Deep", "Soft", "Lunar", "Hidden"]
    static let nouns = ["Grid", "Circuit", "Signal", "Cascade", "Vector", "Orbit", "Prism", "Frequency", "Tunnel", "Drift", "Mirage", "Current", "Lattice", "Ritual", "System", "Channel", "Wave", "Arcade", "Pulse", "Bloom"]
    static let plurals = ["Pulses", "Signals", "Circuits", "Waves", "Arcades", "Orbits", "Prisms", "Frequencies", "Tunnels", "Currents", "Systems", "Channels", "Rituals", "Blooms", "Vectors", "Drifts"]
    static let handles = ["Kestrel", "Polaris", "Marlow", "Oxide", "Halcyon", "Vantablue", "Tessera", "Nightjar", "Kinetic", "Ondine", "Sable", "Cirrus"]
    static let rooms = ["Night Drives", "Empty Rooms", "Late Trains", "Rooftops", "Warehouses", "Satellites", "Slow Mornings", "Car Parks", "Ferries", "Harbours"]
    static let mixes = ["Extended Mix", "Dub", "Edit", "Reprise", "Night Version", "Club Mix"]

    static func artist(using rng: inout SplitMix64) -> String {
        switch rng.next() % 5 {
        case 0, 1: "\(pick(adjectives, &rng)) \(pick(nouns, &rng))"
        case 2: pick(handles, &rng)
        case 3: pair(handles, " & ", &rng)
        default: "\(pick(nouns, &rng)) \(2 + rng.next() % 98)"
        }
    }

    static func album(using rng: inout SplitMix64) -> String {
        switch rng.next() % 5 {
        case 0: "\(pick(nouns, &rng)) EP"
        case 1: "Music for \(pick(rooms, &rng))"
        case 2: "\(pick(adjectives, &rng)) \(pick(plurals, &rng))"
        case 3: "\(pick(adjectives, &rng)) Hours"
        default: "\(pick(nouns, &rng)) \(["I", "II", "III", "IV"][Int(rng.next() % 4)])"
        }
    }

    static func track(using rng: inout SplitMix64) -> String {
        switch rng.next() % 4 {
        case 0: "\(pick(nouns, &rng)) (\(pick(mixes, &rng)))"
        case 1: "\(pick(adjectives, &rng)) \(pick(nouns, &rng))"
        case 2: "\(pick(rooms, &rng))"
        default: "\(pick(nouns, &rng)) \(100 + rng.next() % 900)"
        }
    }
}

/// Songs of places and weather, sung by people with names.
private enum FolkNames {
    static let firstNames = ["Agnes", "Rowan", "Elsie", "Callum", "Wren", "Annie", "Silas", "Hazel", "Ewan", "Maud", "Ned", "Bridget", "Tamsin", "Alder"]
    static let lastNames = ["Ashdown", "Fenwick", "Brae", "Hawthorne", "Morrow", "Tennant", "Cairns", "Penrose", "Lowry", "Garland", "Thistlewood", "Rook"]
    static let adjectives = ["Old", "Wild", "Quiet", "Weathered", "Gentle", "Northern", "Low", "Wandering", "Long", "Green", "Salt", "Hollow"]
    static let nouns = ["Meadow", "Orchard", "Willow", "Harvest", "Hearth", "River", "Field", "Stone", "Bramble", "Sparrow", "Hill", "Shore", "Valley", "Lantern", "Ferry", "Rain"]
    static let plurals = ["Ramblers", "Hedgerows", "Shepherds", "Larks", "Ferrymen", "Wanderers", "Drovers", "Magpies"]

    static func artist(using rng: inout SplitMix64) -> String {
        switch rng.next() % 4 {
        case 0, 1: "\(pick(firstNames, &rng)) \(pick(lastNames, &rng))"
        case 2: "The \(pick(adjectives, &rng)) \(pick(plurals, &rng))"
        default: "\(pick(firstNames, &rng)) & the \(pick(plurals, &rng))"
        }
    }

    static func album(using rng: inout SplitMix64) -> String {
        switch rng.next() % 5 {
        case 0: "Songs from the \(pick(nouns, &rng))"
        case 1: "\(pick(adjectives, &rng)) \(pick(nouns, &rng))"
        case 2: "Under the \(pick(nouns, &rng))"
        case 3: pair(nouns, " & ", &rng)
        default: "The \(pick(nouns, &rng)) Road"
        }
    }

    static func track(using rng: inout SplitMix64) -> String {
        switch rng.next() % 5 {
        case 0: "Ballad of \(pick(firstNames, &rng))"
        case 1: "\(pick(adjectives, &rng)) \(pick(nouns, &rng))"
        case 2: "Down to the \(pick(nouns, &rng))"
        case 3: "\(pick(firstNames, &rng))’s Song"
        default: "When the \(pick(nouns, &rng)) Comes"
        }
    }
}

/// Trios and quartets, sessions and live dates.
private enum JazzNames {
    static let firstNames = ["Lionel", "Odette", "Walter", "Imani", "Chester", "Ruth", "Dexter", "Lottie", "Amos", "Celeste", "Horace", "Ines", "Booker", "Esme"]
    static let lastNames = ["Whitaker", "Monroe", "Abernathy", "Pryce", "Delacroix", "Hale", "Okonkwo", "Vance", "Castellano", "Byrd", "Lindgren", "Tate"]
    static let ensembles = ["Trio", "Quartet", "Quintet", "Sextet", "Big Band", "Ensemble"]
    static let adjectives = ["Blue", "Late", "Smoky", "Midnight", "Quiet", "Indigo", "Slow", "Velvet", "Autumn", "Open", "Small", "Golden"]
    static let nouns = ["Hour", "Corner", "Serenade", "Fable", "Journey", "Conversation", "Standard", "Lament", "Breeze", "Avenue", "Circle", "Reverie"]
    static let venues = ["Blue Lantern", "Copper Room", "Harbour Club", "Velvet Door", "Night Owl", "Midtown Hall", "Lighthouse Café"]

    static func artist(using rng: inout SplitMix64) -> String {
        switch rng.next() % 4 {
        case 0, 1: "\(pick(firstNames, &rng)) \(pick(lastNames, &rng))"
        case 2: "The \(pick(firstNames, &rng)) \(pick(lastNames, &rng)) \(pick(ensembles, &rng))"
        default: pair(lastNames, " & ", &rng)
        }
    }

    static func album(using rng: inout SplitMix64) -> String {
        switch rng.next() % 5 {
        case 0, 1: "\(pick(adjectives, &rng)) \(pick(nouns, &rng))"
        case 2: "Live at the \(pick(venues, &rng))"
        case 3: "The \(pick(venues, &rng)) Sessions"
        default: "Ballads for \(pick(firstNames, &rng))"
        }
    }

    static func track(using rng: inout SplitMix64) -> String {
        switch rng.next() % 5 {
        case 0: "\(pick(adjectives, &rng)) \(pick(nouns, &rng))"
        case 1: "\(pick(nouns, &rng)) Blues"
        case 2: "Waltz for \(pick(firstNames, &rng))"
        case 3: "Theme for \(pick(lastNames, &rng))"
        default: "\(pick(nouns, &rng)) No. \(1 + rng.next() % 9)"
        }
    }
}

/// Soul and old rock ’n’ roll: groups, singers and love songs.
private enum SoulNames {
    static let firstNames = ["Etta", "Marvin", "Loretta", "Clyde", "Aretha", "Otis", "Mavis", "Curtis", "Dolores", "Percy", "Gladys", "Solomon"]
    static let lastNames = ["Bellamy", "Carter", "Sweetwater", "King", "Lovejoy", "Jefferson", "Sterling", "Moss", "Wilder"]
    static let groups = ["Dynamics", "Majestics", "Velvetones", "Tempos", "Embers", "Revelations", "Charmers", "Sunrays", "Vibrations", "Marvels"]
    static let adjectives = ["Sweet", "Golden", "Tender", "Midnight", "Honey", "Stone", "Southern", "Sunday", "True", "Burning"]
    static let nouns = ["Heart", "Street", "Fire", "River", "Groove", "Promise", "Soul", "Sunrise", "Letter", "Morning", "Kiss", "Train"]
    static let verbs = ["Coming", "Holding", "Waiting", "Dancing", "Crying", "Running", "Calling", "Moving"]

    static func artist(using rng: inout SplitMix64) -> String {
        switch rng.next() % 4 {
        case 0: "\(pick(firstNames, &rng)) \(pick(lastNames, &rng))"
        case 1: "The \(pick(groups, &rng))"
        case 2: "\(pick(firstNames, &rng)) \(pick(lastNames, &rng)) & the \(pick(groups, &rng))"
        default: "\(pick(adjectives, &rng)) \(pick(nouns, &rng))"
        }
    }

    static func album(using rng: inout SplitMix64) -> String {
        switch rng.next() % 5 {
        case 0, 1: "\(pick(adjectives, &rng)) \(pick(nouns, &rng))"
        case 2: "\(pick(verbs, &rng)) for You"
        case 3: "Love & \(pick(nouns, &rng))"
        default: "\(pick(nouns, &rng)) Street"
        }
    }

    static func track(using rng: inout SplitMix64) -> String {
        switch rng.next() % 5 {
        case 0: "\(pick(verbs, &rng)) Back to You"
        case 1: "Baby, Keep \(pick(verbs, &rng))"
        case 2: "\(pick(adjectives, &rng)) Love"
        case 3: "Sweet \(pick(firstNames, &rng))"
        default: "\(pick(nouns, &rng)) of Gold"
        }
    }
}
