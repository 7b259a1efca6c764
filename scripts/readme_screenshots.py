"""Takes the README's screenshots from the built-in demo (run by
scripts/readme-screenshots, which installs what it needs first).

Starts `vinylogue serve --demo` on a fresh data directory with no Last.fm
API key and Last.fm pointed at a closed local port (the demo asks it
nothing; if it ever did, the page would show the failure), on a fixed
clock (VINYLOGUE_TEST_NOW), so the pictures change only when the pages do.
Debian's Chromium, driven by Playwright, opens each page, waits for every
cover to load, and takes what the screen shows; Chromium then encodes it
as WebP (a canvas's toDataURL), so nothing else is needed to keep them
small. The pictures go to docs/screenshots/; the script prints each size
and fails when all of them together are not well under 1 MB.

Chromium's raster is not quite the same from one run to the next: a run
may change a few hundred pixels of a picture by a few levels (covers
scaled down) with no change to the page. Commit the pictures when the
pages changed, after looking at them.
"""

from __future__ import annotations

import base64
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "Python"))
from launcher import ServerProcess, binary  # noqa: E402  (shared with the Python test suites)

from playwright.sync_api import Page, sync_playwright  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# The browser tests' instant: Tuesday 24 November 2026, 12:12 UTC.
NOW = "2026-11-24T12:12:00Z"
# "Well under 1 MB" for all of them together.
BUDGET = 800_000
QUALITY = 0.9

DESKTOP = {"viewport": {"width": 960, "height": 860}, "device_scale_factor": 1}
TALL = {"viewport": {"width": 960, "height": 1500}, "device_scale_factor": 1}
WIDE = {"viewport": {"width": 1100, "height": 860}, "device_scale_factor": 1}
PHONE = {"viewport": {"width": 390, "height": 780}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}

# (file name, address, browser, the whole page or the screen, what it shows)
SHOTS = [
    ("chart.webp", "/u/demo?years_ago=3", DESKTOP, False, "a chart: this week three years ago"),
    ("every-year.webp", "/u/mara/history", TALL, False, "this same week in every year"),
    ("album.webp", None, DESKTOP, True, "an album page, coloured by its cover, with its life"),
    ("everyone.webp", "/everyone?years_ago=2", WIDE, True, "everyone on the list, side by side"),
    ("chart-phone.webp", "/u/theo?years_ago=2", PHONE, False, "a chart on a phone"),
]

ALL_IMAGES_LOADED = """() => new Promise((resolve, reject) => {
    const pending = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0));
    let left = pending.length;
    if (left === 0) return resolve();
    const patience = setTimeout(() => reject(new Error(left + " images still loading after 20 s")), 20000);
    for (const i of pending) {
        i.loading = "eager";
        i.addEventListener("load", () => { if (--left === 0) { clearTimeout(patience); resolve(); } }, {once: true});
        i.addEventListener("error", () => { clearTimeout(patience); reject(new Error("an image failed: " + i.src)); }, {once: true});
    }
})"""

# Covers are decoded off the main thread ("decoding=async") and may be
# painted from a rougher decode first: decode each fully, let the fonts
# load, and let two frames pass, so two runs take the same picture.
SETTLED = """() => Promise.all([...document.images].map(i => i.decode()))
    .then(() => document.fonts.ready)
    .then(() => new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)))))"""

TO_WEBP = """async ([png, quality]) => {
    const image = new Image();
    image.src = "data:image/png;base64," + png;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = image.naturalWidth;
    canvas.height = image.naturalHeight;
    canvas.getContext("2d").drawImage(image, 0, 0);
    return canvas.toDataURL("image/webp", quality).split(",")[1];
}"""


def felix_album(page: Page, base: str) -> str:
    """The album felix played for seven years: the first find of his rediscover page."""
    page.goto(base + "/u/felix/rediscover")
    return page.locator("li.row a.row-link").first.get_attribute("href")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vinylogue-screenshots-") as work:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("LASTFM_", "VINYLOGUE_", "DATABASE_URL"))}
        env.update({"LASTFM_API_URL": "http://127.0.0.1:9/2.0/", "VINYLOGUE_TEST_NOW": NOW, "TZ": "UTC"})
        server = ServerProcess([binary("vinylogue"), "serve", "--demo", "--host", "127.0.0.1", "--port", "0",
                                "--data-dir", Path(work) / "data"],
                               "Vinylogue is serving at ", Path(work), env=env, patience=60)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
                encoder = browser.new_page()
                total = 0
                for name, path, device, whole, what in SHOTS:
                    context = browser.new_context(color_scheme="light", **device)
                    page = context.new_page()
                    page.goto(server.url + (path or felix_album(page, server.url)))
                    page.evaluate(ALL_IMAGES_LOADED)
                    page.evaluate(SETTLED)
                    png = base64.b64encode(page.screenshot(type="png", full_page=whole)).decode()
                    webp = base64.b64decode(encoder.evaluate(TO_WEBP, [png, QUALITY]))
                    (OUT / name).write_bytes(webp)
                    total += len(webp)
                    print(f"{name:18} {len(webp) / 1000:6.1f} kB  {what} ({page.url.removeprefix(server.url)})")
                    context.close()
                browser.close()
        finally:
            server.stop()
    print(f"{'together':18} {total / 1000:6.1f} kB in {OUT.relative_to(ROOT)}/")
    if total > BUDGET:
        print(f"readme-screenshots: together they are over {BUDGET / 1000:.0f} kB: lower QUALITY or the viewports", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
