@testable import HTTPServing
import Testing

/// A form's origin against the host that served it, port included: another
/// app on the same host at another port is another site (a probe showed a
/// form from 127.0.0.1:1 accepted by the app at 127.0.0.1:8080).
@Suite struct SameOriginTests {
    @Test func theSameHostAtAnotherPortIsAnotherSite() {
        #expect(!CSRFProtection.isSameOrigin("http://127.0.0.1:1", authority: "127.0.0.1:8080"))
        #expect(CSRFProtection.isSameOrigin("http://127.0.0.1:8080", authority: "127.0.0.1:8080"))
        #expect(CSRFProtection.isSameOrigin("https://example.org", authority: "example.org:443"))
        #expect(!CSRFProtection.isSameOrigin("http://example.org", authority: "example.org:443"))
        #expect(CSRFProtection.isSameOrigin("http://[::1]:8080", authority: "[::1]:8080"))
        #expect(!CSRFProtection.isSameOrigin("http://[::1]:9", authority: "[::1]:8080"))
    }

    @Test func otherHostsAndAProxysPortlessHost() {
        #expect(!CSRFProtection.isSameOrigin("https://evil.example", authority: "example.org"))
        #expect(!CSRFProtection.isSameOrigin("https://example.org.evil.example", authority: "example.org"))
        #expect(CSRFProtection.isSameOrigin("https://EXAMPLE.org:8443", authority: "example.org"))
        #expect(!CSRFProtection.isSameOrigin("not a url", authority: "example.org"))
    }
}
