"""The widget for one's own page, in a real browser, on another site.

A tiny page served by Python's http.server on another port (so another
origin than the Vinylogue server) embeds the demo user's widget as the
README says to: the frame of `/u/demo/widget`, and the PNG and SVG forms as
pictures. The frame must show the week's albums (its address alone may be
framed from anywhere); the chart page itself must refuse to be framed there.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from playwright.sync_api import expect

from conftest import SCREENSHOTS, http_get


def serve_page(html: str) -> ThreadingHTTPServer:
    """Serves `html` at every path of a fresh local port, on a thread of its own."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_widget_shows_the_week_in_a_frame_on_another_site(pages, stack, fake):
    app = stack.app(fake, "--demo")
    status, body = http_get(app("/api/u/demo/chart"), timeout=10)
    assert status == 200
    top = [entry["name"] for entry in json.loads(body)["entries"][:5]]
    assert len(top) == 5, top

    host = serve_page(f"""<!doctype html>
<html><head><meta charset="utf-8"><title>My own page</title>
<style>body {{ font-family: sans-serif; background: #f4f1ea; margin: 16px; }} .row {{ display: flex; gap: 16px; align-items: flex-start; }}
figure {{ margin: 0; }} figcaption {{ font-size: 12px; color: #555; }}</style></head>
<body><h1>My own page</h1>
<div class="row">
<figure><iframe id="widget" src="{app('/u/demo/widget')}" width="300" height="420" style="border:0" title="demo: this week, years ago"></iframe>
<figcaption>iframe</figcaption></figure>
<figure><a href="{app('/u/demo')}"><img id="png" src="{app('/u/demo/widget.png')}" width="300" height="400" alt="demo"></a><figcaption>PNG</figcaption></figure>
<figure><img id="svg" src="{app('/u/demo/widget.svg')}" width="300" height="400" alt="demo"><figcaption>SVG</figcaption></figure>
</div>
<iframe id="chart" src="{app('/u/demo')}" width="300" height="120"></iframe>
</body></html>""")
    try:
        origin = f"http://127.0.0.1:{host.server_address[1]}"
        assert origin != app.url.rstrip("/")
        page = pages.new_page(viewport={"width": 1000, "height": 640})
        page.goto(origin + "/")

        widget = page.frame_locator("iframe#widget")
        rows = widget.locator(".widget-rows li")
        expect(rows).to_have_count(5)
        for name in top:
            expect(widget.locator(".widget-name", has_text=name).first).to_be_visible()
        expect(widget.locator(".widget-user")).to_have_text("demo")
        expect(widget.locator(".widget-ago")).to_have_text("This week, 1 year ago")
        # Every cover loaded (from the Vinylogue server, inside the frame).
        covers = widget.locator(".widget-rows img")
        expect(covers).to_have_count(5)
        for i in range(5):
            covers.nth(i).scroll_into_view_if_needed()
            assert covers.nth(i).evaluate("img => img.complete && img.naturalWidth > 0"), f"cover {i} did not load"
        # Every link opens the chart page on the Vinylogue server, in a new tab.
        links = widget.locator("a")
        for i in range(links.count()):
            assert links.nth(i).get_attribute("target") == "_blank"
            assert links.nth(i).get_attribute("rel") == "noopener"
            assert links.nth(i).get_attribute("href") == app("/u/demo")

        # The pictures: both drawn at the sidebar's size.
        for selector in ["#png", "#svg"]:
            size = page.locator(selector).evaluate("img => [img.complete, img.naturalWidth, img.naturalHeight]")
            assert size == [True, 300, 400], (selector, size)

        # The chart page itself may not be framed here: its frame shows none of it.
        chart = page.frame_locator("iframe#chart")
        expect(chart.locator("li.row")).to_have_count(0)

        pages.shot(page)
        page.locator("iframe#widget").screenshot(path=str(SCREENSHOTS / "test_widget--frame.png"))
        page.locator("#svg").screenshot(path=str(SCREENSHOTS / "test_widget--svg.png"))
        status, png = http_get(app("/u/demo/widget.png"), timeout=10)
        assert status == 200
        (SCREENSHOTS / "test_widget--png.png").write_bytes(png)

        # A click in the frame opens the chart page in a new tab.
        with page.context.expect_page() as opened:
            widget.locator(".widget-user").click()
        chart_tab = opened.value
        chart_tab.wait_for_load_state()
        assert chart_tab.url == app("/u/demo")
        expect(chart_tab.locator("li.row").first).to_be_visible()
        assert page.url == origin + "/"
    finally:
        host.shutdown()
        host.server_close()
