import Foundation

/// An 8-bit sRGB colour. Encodes as its `hex` string.
public struct RGB: Sendable, Hashable, Codable, CustomStringConvertible {
    public let red: UInt8
    public let green: UInt8
    public let blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// Parses `#rrggbb` (case-insensitive).
    public init?(hex: String) {
        let digits = hex.utf8
        // UInt32(_:radix:) alone would accept a sign: "#+1a2b3".
        guard digits.count == 7, digits.first == UInt8(ascii: "#"),
              hex.dropFirst().allSatisfy(\.isHexDigit),
              let value = UInt32(hex.dropFirst(), radix: 16)
        else { return nil }
        self.init(red: UInt8(value >> 16 & 0xFF), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
    }

    /// Rounds and clamps components given in 0...1.
    init(unit r: Double, _ g: Double, _ b: Double) {
        func byte(_ v: Double) -> UInt8 { UInt8(max(0, min(255, (v * 255).rounded()))) }
        self.init(red: byte(r), green: byte(g), blue: byte(b))
    }

    public static let white = RGB(red: 255, green: 255, blue: 255)
    public static let black = RGB(red: 0, green: 0, blue: 0)

    /// `#1a2b3c`, lowercase, for CSS.
    public var hex: String {
        let digits = Array("0123456789abcdef")
        var text = "#"
        for byte in [red, green, blue] {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return text
    }

    public var description: String { hex }

    /// WCAG 2.x relative luminance: linearised sRGB weighted 0.2126/0.7152/0.0722.
    public var relativeLuminance: Double {
        func linear(_ byte: UInt8) -> Double {
            let c = Double(byte) / 255
            // WCAG 2.x writes 0.03928; the sRGB spec's 0.04045 differs from it
            // only for values no 8-bit channel can take.
            return c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
    }

    /// Hue in degrees, saturation and lightness in 0...1.
    var hsl: (hue: Double, saturation: Double, lightness: Double) {
        let r = Double(red) / 255, g = Double(green) / 255, b = Double(blue) / 255
        let high = max(r, g, b), low = min(r, g, b)
        let lightness = (high + low) / 2
        let delta = high - low
        guard delta > 0 else { return (0, 0, lightness) }
        let saturation = delta / (1 - abs(2 * lightness - 1))
        var hue: Double
        if high == r {
            hue = ((g - b) / delta).truncatingRemainder(dividingBy: 6)
        } else if high == g {
            hue = (b - r) / delta + 2
        } else {
            hue = (r - g) / delta + 4
        }
        hue *= 60
        if hue < 0 { hue += 360 }
        return (hue, min(1, saturation), lightness)
    }

    init(hue: Double, saturation: Double, lightness: Double) {
        let c = (1 - abs(2 * lightness - 1)) * saturation
        let h = (hue.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360) / 60
        let x = c * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1))
        let (r, g, b): (Double, Double, Double) = switch Int(h) {
        case 0: (c, x, 0)
        case 1: (x, c, 0)
        case 2: (0, c, x)
        case 3: (0, x, c)
        case 4: (x, 0, c)
        default: (c, 0, x)
        }
        let m = lightness - c / 2
        self.init(unit: r + m, g + m, b + m)
    }

    /// `self` moved `amount` (0...1) of the way towards `other`, in sRGB.
    func mixed(with other: RGB, amount: Double) -> RGB {
        func mix(_ a: UInt8, _ b: UInt8) -> Double { (Double(a) + (Double(b) - Double(a)) * amount) / 255 }
        return RGB(unit: mix(red, other.red), mix(green, other.green), mix(blue, other.blue))
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let colour = RGB(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a #rrggbb colour: \(text)"))
        }
        self = colour
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

/// The WCAG 2.x contrast ratio between two colours, 1...21, order-independent.
public func contrastRatio(_ a: RGB, _ b: RGB) -> Double {
    let la = a.relativeLuminance, lb = b.relativeLuminance
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}
