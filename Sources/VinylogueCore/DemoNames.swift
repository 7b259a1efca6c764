/// Word lists for believable artist, album and track names.
enum DemoNames {
    static let adjectives = ["Quiet", "Northern", "Velvet", "Paper", "Electric", "Hollow", "Golden", "Silver", "Broken", "Distant", "Wild", "Gentle", "Neon", "Faded", "Bright", "Winter", "Summer", "Lonely", "Secret", "Crimson", "Pale", "Restless", "Tender", "Open", "Slow", "Late", "Early", "Blue", "Amber", "Static", "Little", "Empty", "Hidden", "Lucky", "Sleepless", "Young", "Modern", "Southern", "Western", "Radiant"]
    static let nouns = ["Harbor", "Lantern", "Orchard", "Signal", "River", "Garden", "Engine", "Comet", "Parade", "Mirror", "Satellite", "Canyon", "Island", "Highway", "Window", "Forest", "Machine", "Ocean", "Meadow", "Tower", "Season", "Letter", "Ghost", "Fever", "Horizon", "Atlas", "Echo", "Ember", "Anthem", "Cathedral", "Motel", "Bicycle", "Weather", "Postcard", "Lighthouse", "Telephone", "Pilot", "Compass", "Avenue", "Kingdom"]
    static let pluralNouns = ["Lanterns", "Harbors", "Pilots", "Wolves", "Sparrows", "Engines", "Comets", "Ghosts", "Satellites", "Parades", "Islands", "Mirrors", "Echoes", "Foxes", "Tides", "Rivals", "Saints", "Strangers", "Neighbors", "Brothers"]
    static let firstNames = ["Maya", "Jonah", "Ada", "Theo", "Lena", "Iris", "Owen", "Nora", "Felix", "June", "Elliot", "Mara", "Hugo", "Clara", "Ruben", "Sadie", "Miles", "Vera", "Cass", "Tobias"]
    static let lastNames = ["Ostrander", "Vale", "Hollis", "Marlowe", "Kestrel", "Whitlock", "Amundsen", "Reyes", "Calloway", "Lindqvist", "Okafor", "Brandt", "Moreau", "Sato", "Delaney", "Fairweather", "Novak", "Quinlan", "Hart", "Ibarra"]
    static let verbs = ["Running", "Falling", "Waiting", "Dancing", "Burning", "Drifting", "Singing", "Leaving", "Holding", "Chasing", "Breathing", "Counting", "Dreaming", "Calling", "Coming"]
    static let places = ["Home", "the Sea", "the City", "Tomorrow", "the Light", "the Dark", "the Coast", "the Stars", "Nowhere", "the Sun", "the North", "the Rain"]

    // The names are joined with `+`, not interpolated: interpolation is
    // generic, and in a debug build it was most of the cost of a catalogue
    // (every fake Last.fm and every composition makes one).
    static func pick(_ list: [String], _ rng: inout SplitMix64) -> String {
        list[Int(rng.next() % UInt64(list.count))]
    }

    static func artist(using rng: inout SplitMix64) -> String {
        switch rng.next() % 6 {
        case 0, 1: "The " + pick(adjectives, &rng) + " " + pick(pluralNouns, &rng)
        case 2: pick(firstNames, &rng) + " " + pick(lastNames, &rng)
        case 3: pick(nouns, &rng) + " " + pick(nouns, &rng)
        case 4: pick(adjectives, &rng) + " " + pick(nouns, &rng)
        default: pick(firstNames, &rng) + " & the " + pick(pluralNouns, &rng)
        }
    }

    static func album(using rng: inout SplitMix64) -> String {
        switch rng.next() % 6 {
        case 0, 1: pick(adjectives, &rng) + " " + pick(nouns, &rng)
        case 2: pick(nouns, &rng) + " of " + pick(places, &rng)
        case 3: pick(verbs, &rng) + " Toward " + pick(places, &rng)
        case 4: plural(pick(nouns, &rng))
        default: "The " + pick(adjectives, &rng) + " " + pick(nouns, &rng)
        }
    }

    /// "Atlases", "Echoes", "Comets".
    static func plural(_ noun: String) -> String {
        noun.hasSuffix("s") || noun.hasSuffix("o") ? noun + "es" : noun + "s"
    }

    static func track(using rng: inout SplitMix64) -> String {
        switch rng.next() % 5 {
        case 0: pick(verbs, &rng) + " " + pick(["Away", "Home", "Back", "Out", "Slow"], &rng)
        case 1: pick(adjectives, &rng) + " " + pick(nouns, &rng)
        case 2: pick(nouns, &rng) + " Song"
        case 3: "For " + pick(firstNames, &rng)
        default: pick(verbs, &rng) + " to " + pick(places, &rng)
        }
    }
}
